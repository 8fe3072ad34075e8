#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/spdx.sh — the licence line of every source file: ember is MIT
# (LICENSE), and each file says so on its first line (after a #! line), in
# its own comment syntax:
#
#   /* SPDX-License-Identifier: MIT */     C, its headers, the kernel sources (.kc, .kh)
#   # SPDX-License-Identifier: MIT         shell, Python, awk, CMake, the .in templates
#
#   scripts/spdx.sh           adds the line where it is missing
#   scripts/spdx.sh --check   lists the files without it and exits 1 if there are any
#
# The files are git's (git ls-files), or every file under the tree outside a
# git checkout. Not source, so left alone: documents (.md), pictures, data
# (tests/fuzz/regressions, examples/images and shapes), dot-files, LICENSE,
# the generated built-in PTX (scripts/baseline-ptx.sh writes it), and model
# files (.model), whose first line is the model's summary and whose text
# checkpoints keep.
set -eu
cd "$(dirname "$0")/.."
mode=add
case "${1:-}" in
--check) mode=check ;;
"") ;;
-h | --help)
    sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
*)
    echo "usage: scripts/spdx.sh [--check] (--help says more)" >&2
    exit 2
    ;;
esac
LINE="SPDX-License-Identifier: MIT"

files() {
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        git ls-files
    else
        find . -type f ! -path './build*' ! -path './.git/*' | sed 's|^\./||'
    fi
}

# the comment syntax of a source file, or nothing for a file that is not source
syntax() {
    case $1 in
    *.c | *.h | *.kc | *.kh | *.rc) echo c ;;
    *.sh | *.bash | *.py | *.awk | *.cmake | *.in | CMakeLists.txt | */CMakeLists.txt) echo hash ;;
    *.md | *.txt | *.manifest | *.png | *.jpg | *.bmp | *.svg | *.ptx | *.model | LICENSE | .* | */.*) ;;
    tests/fuzz/regressions/* | examples/images/* | examples/shapes/*) ;;
    *) if head -c 2 "$1" 2>/dev/null | grep -q '^#!'; then echo hash; fi ;;
    esac
}

missing=0
for f in $(files); do
    [ -f "$f" ] || continue
    kind=$(syntax "$f")
    [ -n "$kind" ] || continue
    # the line: first, or second after a #! line
    if head -n 1 "$f" | grep -q '^#!'; then at=2; else at=1; fi
    sed -n "${at}p" "$f" | grep -qF "$LINE" && continue
    missing=$((missing + 1))
    if [ $mode = check ]; then
        echo "$f"
        continue
    fi
    if [ $kind = c ]; then text="/* $LINE */"; else text="# $LINE"; fi
    if [ $at = 2 ]; then
        { head -n 1 "$f"; echo "$text"; tail -n +2 "$f"; } >"$f.spdx"
    else
        { echo "$text"; cat "$f"; } >"$f.spdx"
    fi
    chmod --reference="$f" "$f.spdx"
    mv "$f.spdx" "$f"
done
if [ $mode = check ] && [ $missing -gt 0 ]; then
    echo "spdx: $missing source files lack \"$LINE\" on their first line (after #!): scripts/spdx.sh adds it" >&2
    exit 1
fi
[ $mode = check ] && echo "spdx: every source file carries \"$LINE\""
[ $mode = add ] && echo "spdx: added the line to $missing files"
exit 0
