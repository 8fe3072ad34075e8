#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_scripts_help.sh — every script a person runs (scripts/, bench/,
# cmake/, tests/fuzz/run.sh) answers --help: at once, with exit 0, its own
# name and usage, and nothing else done: no file written where it ran, no
# folder named "--help", no build, no install.
#
#   test_scripts_help.sh SOURCE-DIR
set -u
SRC=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
count=0
for script in "$SRC"/scripts/*.sh "$SRC"/bench/*.sh "$SRC"/cmake/*.sh "$SRC"/tests/fuzz/run.sh; do
    head -1 "$script" | grep -q '^#!' || continue # sourced by others, not run
    name=${script#"$SRC"/}
    mkdir "$TMP/cwd"
    (cd "$TMP/cwd" && timeout 20 sh "$script" --help) >"$TMP/out" 2>&1
    status=$?
    [ $status -eq 0 ] || fail "$name --help exited $status: $(head -c 400 "$TMP/out")"
    grep -q "$(basename "$script")" "$TMP/out" || fail "$name --help does not name itself: $(head -c 300 "$TMP/out")"
    [ "$(wc -l <"$TMP/out")" -ge 2 ] || fail "$name --help says next to nothing: $(cat "$TMP/out")"
    grep -q "SPDX-License-Identifier" "$TMP/out" && fail "$name --help prints its licence line, not just its usage"
    left=$(ls -A "$TMP/cwd")
    [ -z "$left" ] || fail "$name --help left files where it ran: $left"
    rm -rf "$TMP/cwd"
    count=$((count + 1))
done
found=$(find "$SRC" -maxdepth 3 -name '[-][-]help' 2>/dev/null)
[ -z "$found" ] || fail "something made a file or folder named --help: $found"
[ $failures -eq 0 ] || exit 1
echo "$count scripts answer --help and do nothing else"
