#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/project/test_comment_names.py — the comments name what exists.

    test_comment_names.py [SOURCE_DIR]

Reads every comment of the tree's C, kernel, shell, Python and CMake
files (not build/) and fails on a name in one that names nothing:
  - a file, by path (core/ops-elementwise.c, fakes/fake_cuda_exec.c: a
    path some file's path ends with) or by name (elementwise.kc: a file
    of that name somewhere), except the files the build generates
    (GENERATED below);
  - a function or macro of ember's (ember_..., EMBER_...) that no code
    outside comments spells;
  - a section of a document, written as docs/NAME.md, "Heading" or
    NAME.md#anchor, that the document has no heading for.
A comment that names a thing to come, or one that is gone, says so in
words rather than by a name this would check. It prints each offence with
its file and line.
"""
import os
import re
import sys

SOURCE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP_DIRS = {".git", "build", "build-asan", "__pycache__"}
C_LIKE = (".c", ".h", ".kc", ".kh", ".cu")
HASH_LIKE = (".sh", ".py", ".cmake", ".awk")
# what the build writes (CMake's generated/ folder) and what a tool writes at run time
GENERATED = {"kernels-embedded.c", "backend-registry.c", "cuda-baseline-embedded.c", "kernels-sm30.ptx",
             "models-embedded.c", "ember.pc", "emberConfig.cmake", "emberConfigVersion.cmake",
             "program.ptx", "program.cu", "kernels.cu", "kernels.ptx", "fresh.ptx", "out.ptx"}
# headers of the system and of other projects, and files of other projects a comment credits
EXTERNAL = {"CL/cl.h", "windows.h", "sys/stat.h", "mpi.h", "stb_image.h", "stb_image_write.h", "stb_easy_font.h",
            "zlib.h", "png.h", "jpeglib.h", "cblas.h", "e_logf.c", "stdbool.h", "stddef.h", "cuda.h",
            "cuda_occupancy.h"}
# placeholders in usage lines: `cmake -DFILES="a.kc;b.kc"`, TMP/out.md, SRC/include/ember.h, ember_x
PLACEHOLDER = re.compile(r"(^|/|-)(TMP|SRC|OUT_DIR|OUT|FILE|NAME|DIR|BUILD_DIR|SOURCE_DIR)(/|\.|$)|(^|/)(file|[a-z])\.[a-z]+$")
EXEMPT_SYMBOLS = {"ember_x"}
EXTENSIONS = "c|h|kc|kh|md|sh|py|cmake|ptx|txt|awk|model|safetensors"
PATH = re.compile(r"(?<![\w/.<*-])((?:[\w.-]+/)+[\w.-]+\.(?:" + EXTENSIONS + r"))(?![\w/-])")
BARE = re.compile(r"(?<![\w/.<*$-])([A-Za-z][\w-]*\.(?:c|h|kc|kh|md|sh|py|cmake))(?![\w/(-]|\.\w)")
SYMBOL = re.compile(r"(?<![\w<])((?:ember|EMBER)_[A-Za-z0-9_]*[A-Za-z0-9])(?![\w<*])")
SECTION = re.compile(r"([\w/-]+\.md),? \"([^\"]+)\"")
ANCHOR = re.compile(r"([\w/-]+\.md)#([\w-]+)")


def walk():
    for folder, dirs, files in os.walk(SOURCE):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            yield os.path.relpath(os.path.join(folder, name), SOURCE)


def comments_and_code(path, text):
    """(comments as (line, text), the code with comments and strings blanked)"""
    found, code = [], []
    if path.endswith(C_LIKE):
        pattern = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
        last = 0
        for m in pattern.finditer(text):
            code.append(text[last:m.start()])
            token = m.group(0)
            if token.startswith(("/*", "//")):
                found.append((text.count("\n", 0, m.start()) + 1, token))
                code.append("\n" * token.count("\n"))
            else:
                code.append(token)  # strings name things too (kernel names, messages)
            last = m.end()
        code.append(text[last:])
    elif path.endswith(HASH_LIKE) or os.path.basename(path) == "CMakeLists.txt":
        for number, line in enumerate(text.split("\n"), 1):
            at = line.find("#")
            if at >= 0 and not line[:at].rstrip().endswith(("$", "{")) and line[at:at + 2] != "#!":
                found.append((number, line[at:]))
                code.append(line[:at] + "\n")
            else:
                code.append(line + "\n")
    return found, "".join(code)


def headings(doc):
    try:
        with open(os.path.join(SOURCE, doc), encoding="utf-8") as f:
            # headings, their numbers left out ("## 9. Attention"), and the bold names that open a
            # paragraph (**The model's forward pass** runs ...)
            return [re.sub(r"^[\d.]+ ", "", line.lstrip("#").strip()) if line.startswith("#")
                    else line[2:line.index("**", 2)] for line in f
                    if line.startswith("#") or (line.startswith("**") and "**" in line[2:])]
    except OSError:
        return None


def anchor(heading):
    return re.sub(r"[^\w -]", "", heading.lower()).replace(" ", "-")


def main():
    files = sorted(walk())
    names = {os.path.basename(f) for f in files} | GENERATED
    texts, comments, spelled = {}, {}, set()
    for path in files:
        if not path.endswith(C_LIKE + HASH_LIKE) and os.path.basename(path) != "CMakeLists.txt":
            continue
        try:
            with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        found, code = comments_and_code(path, text)
        comments[path] = found
        spelled.update(SYMBOL.findall(code))
    for path in files:  # the documents spell macros and functions too (ember.h's names, CLI flags aside)
        if path.endswith(".md"):
            with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
                spelled.update(SYMBOL.findall(f.read()))
    failures = []
    for path, found in sorted(comments.items()):
        for number, text in found:
            where = f"{path}:{number}"
            text = re.sub(r"\s*\n\s*(\*|//|#)?\s*", " ", text)  # a name may run over lines
            for token in PATH.findall(text):
                token = token.rstrip(".")
                if token.startswith(("http", "www.", "build/")) or "/" not in token:
                    continue
                if os.path.basename(token) in GENERATED or token in EXTERNAL or PLACEHOLDER.search(token):
                    continue
                relative = os.path.normpath(os.path.join(os.path.dirname(path), token))
                if not any(f == token or f.endswith("/" + token) or f == relative for f in files):
                    failures.append(f"{where}: names {token}, which is no file here")
            for token in BARE.findall(text):
                if token not in names and token not in EXTERNAL and not PLACEHOLDER.search(token):
                    failures.append(f"{where}: names {token}, which is no file here")
            for token in SYMBOL.findall(text):
                if token not in spelled and token not in EXEMPT_SYMBOLS and not re.search("[A-Z]", token[6:]) \
                        or token.startswith("EMBER_") and token not in spelled:
                    failures.append(f"{where}: names {token}, which no code spells")
            for doc, section in SECTION.findall(text):
                doc_path = next((f for f in files if f == doc or f.endswith("/" + doc)), None)
                heads = headings(doc_path) if doc_path else None
                if heads is not None and not any(h.lower().startswith(section.lower()) for h in heads):
                    failures.append(f"{where}: names the section \"{section}\" of {doc}, which it lacks")
            for doc, tag in ANCHOR.findall(text):
                doc_path = next((f for f in files if f == doc or f.endswith("/" + doc)), None)
                heads = headings(doc_path) if doc_path else None
                if heads is not None and tag not in {anchor(h) for h in heads}:
                    failures.append(f"{where}: names {doc}#{tag}, a section it lacks")
    for failure in failures:
        print(failure)
    print(f"test_comment_names: {sum(len(c) for c in comments.values())} comments in {len(comments)} files, "
          + (f"{len(failures)} names of nothing" if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
