#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/project/test_file_sizes.py — no C file outside tests/ grows past the
size a reader takes in at once.

    test_file_sizes.py [SOURCE_DIR]

Fails for each .c, .h, .kc or .kh file outside tests/ (and build/) of more
than LIMIT lines, unless PENDING names it with the reason its split waits;
and for a PENDING entry that is back under the limit or gone, so that the
list stays true. STYLE: roughly a thousand lines is the signal to split.
"""
import os
import sys

LIMIT = 1000
# Over the limit, their split waiting on a reason, each removed when it is split:
PENDING = {}
SOURCE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def main():
    sizes = {}
    for folder, dirs, files in os.walk(SOURCE):
        dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
        for name in files:
            path = os.path.relpath(os.path.join(folder, name), SOURCE)
            if name.endswith((".c", ".h", ".kc", ".kh")) and not path.startswith("tests" + os.sep):
                with open(os.path.join(SOURCE, path), encoding="utf-8", errors="replace") as f:
                    sizes[path.replace(os.sep, "/")] = sum(1 for _ in f)
    failures = []
    for path, lines in sorted(sizes.items()):
        if lines > LIMIT and path not in PENDING:
            failures.append(f"{path}: {lines} lines, over {LIMIT}: split it by what its parts do")
    for path, why in sorted(PENDING.items()):
        if sizes.get(path, 0) <= LIMIT:
            failures.append(f"{path} is listed as pending a split ({why}) but has "
                            f"{sizes.get(path, 0)} lines: take it off PENDING")
    for failure in failures:
        print(failure)
    over = [f"{p} ({sizes[p]})" for p in sorted(PENDING) if sizes.get(p, 0) > LIMIT]
    print(f"test_file_sizes: {len(sizes)} files, pending a split: {', '.join(over) or 'none'}; "
          + (f"{len(failures)} failures" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
