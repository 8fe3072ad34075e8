#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_spdx.sh — every source file carries its licence line
# (scripts/spdx.sh --check on the tree), and scripts/spdx.sh puts it where
# it belongs: first, or after a #! line, in the file's own comment syntax,
# and leaves documents, data and the rest alone.
#
#   test_spdx.sh SOURCE-DIR
set -u
SRC=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

"$SRC/scripts/spdx.sh" --check >"$TMP/check" 2>&1 || fail "source files without the licence line: $(cat "$TMP/check")"

# the script on a small tree of its own (no git: every file)
mkdir -p "$TMP/tree/scripts" "$TMP/tree/docs"
cp "$SRC/scripts/spdx.sh" "$TMP/tree/scripts/"
printf '/* a.c — a file */\nint a;\n' >"$TMP/tree/a.c"
printf '#!/bin/sh\n# b.sh — a script\necho b\n' >"$TMP/tree/b.sh"
chmod +x "$TMP/tree/b.sh"
printf 'cmake_minimum_required(VERSION 3.18)\n' >"$TMP/tree/CMakeLists.txt"
printf '# a page\n' >"$TMP/tree/docs/page.md"
"$TMP/tree/scripts/spdx.sh" >"$TMP/add" 2>&1 || fail "scripts/spdx.sh: $(cat "$TMP/add")"
[ "$(head -n 1 "$TMP/tree/a.c")" = "/* SPDX-License-Identifier: MIT */" ] || fail "a.c begins: $(head -n 2 "$TMP/tree/a.c")"
[ "$(sed -n 2p "$TMP/tree/a.c")" = "/* a.c — a file */" ] || fail "a.c lost its first line: $(cat "$TMP/tree/a.c")"
[ "$(head -n 2 "$TMP/tree/b.sh" | tr '\n' '|')" = "#!/bin/sh|# SPDX-License-Identifier: MIT|" ] ||
    fail "b.sh begins: $(head -n 3 "$TMP/tree/b.sh")"
[ -x "$TMP/tree/b.sh" ] || fail "b.sh is no longer executable"
[ "$(head -n 1 "$TMP/tree/CMakeLists.txt")" = "# SPDX-License-Identifier: MIT" ] || fail "CMakeLists.txt: $(head -n 1 "$TMP/tree/CMakeLists.txt")"
[ "$(cat "$TMP/tree/docs/page.md")" = "# a page" ] || fail "a document was changed: $(cat "$TMP/tree/docs/page.md")"
"$TMP/tree/scripts/spdx.sh" >/dev/null 2>&1
[ "$(grep -c SPDX "$TMP/tree/a.c")" = 1 ] || fail "a second run added the line again"
"$TMP/tree/scripts/spdx.sh" --check >/dev/null 2>&1 || fail "--check fails on the tree the script just swept"
printf 'int c;\n' >"$TMP/tree/c.h"
"$TMP/tree/scripts/spdx.sh" --check >"$TMP/check2" 2>&1 && fail "--check passed a header without the line"
grep -q "c.h" "$TMP/check2" || fail "--check did not name c.h: $(cat "$TMP/check2")"

[ $failures -eq 0 ] || exit 1
echo "test_spdx: every source file carries SPDX-License-Identifier: MIT; the sweep adds it where it belongs"
