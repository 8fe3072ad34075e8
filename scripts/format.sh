#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/format.sh — formats ember's C with clang-format and the repository's
# .clang-format, or checks that it is formatted (CI does: test format_check).
#
#   scripts/format.sh                   every .c and .h git tracks, in place
#   scripts/format.sh FILE...           those files, in place
#   scripts/format.sh --check [FILE...] nothing changed: names each file that
#                                       differs, with the first lines of the
#                                       difference, and exits 1 if any does
#
# The tree is formatted by clang-format 14 (Debian bookworm's clang-format-14,
# which `scripts/setup.sh --tests` installs); another version lays a few
# constructs out differently, so the check wants 14 and says so without it
# (exit 77: skipped). Tables laid out by hand sit between /* clang-format off */
# and /* clang-format on */ (docs/extending.md, "Formatting").
#
# CLANG_FORMAT  the program (default: clang-format-14, else clang-format if it is version 14)
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd -P "$(dirname "$0")/.."  # -P: the real tree, also through the docs test's links
check=no
if [ "${1:-}" = --check ]; then
    check=yes
    shift
fi
cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
    if command -v clang-format-14 >/dev/null 2>&1; then
        cf=clang-format-14
    elif command -v clang-format >/dev/null 2>&1 && clang-format --version | grep -q 'version 14\.'; then
        cf=clang-format
    else
        echo "format.sh: no clang-format 14 (Debian's clang-format-14; scripts/setup.sh --tests installs it)" >&2
        exit 77
    fi
fi
if [ $# -eq 0 ]; then
    files=$(git ls-files '*.c' '*.h')
else
    files="$*"
fi
if [ $check = no ]; then
    # shellcheck disable=SC2086 # a list of files, none with spaces (git ls-files, or the caller's)
    "$cf" -i $files
    exit 0
fi
differ=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in $files; do
    if ! "$cf" "$f" | diff -u "$f" - >"$tmp" 2>&1; then
        differ=$((differ + 1))
        echo "format.sh: $f is not formatted; scripts/format.sh $f formats it:"
        sed -n '3,12p' "$tmp"
    fi
done
[ $differ -eq 0 ] || { echo "format.sh: $differ file(s) not formatted" >&2; exit 1; }
echo "format.sh: $(echo "$files" | wc -w) files formatted as .clang-format says"
