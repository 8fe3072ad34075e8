#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_header.sh — include/ember.h as the compilers of its users see it:
# C99 and C11 with -pedantic-errors compile it cleanly; C89 stops at one
# #error that names the floor rather than at the first `bool`; a compiler
# that knows no __attribute__ (simulated: GCC's own macros taken away and
# the keyword made a syntax error) still compiles it; C++ too, where g++ is.
# A part of it (include/ember/*.h) included alone stops at one #error that
# says to include <ember.h>.
#
#   test_header.sh INCLUDE-DIR [CC]
set -u
INC=$1 CC=${2:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

printf '#include <ember.h>\nint main(void) { return ember_version() == 0; }\n' >"$TMP/use.c"
for std in c99 c11; do
    "$CC" -std=$std -pedantic-errors -Wall -Wextra -Werror -I"$INC" -c "$TMP/use.c" -o "$TMP/use.o" \
        >"$TMP/$std.log" 2>&1 || fail "-std=$std -pedantic-errors: $(cat "$TMP/$std.log")"
done
if "$CC" -std=c89 -pedantic-errors -I"$INC" -c "$TMP/use.c" -o "$TMP/use.o" >"$TMP/c89.log" 2>&1; then
    fail "-std=c89 compiled ember.h, which needs C99"
else
    grep -q 'ember.h needs C99 or later' "$TMP/c89.log" || fail "-std=c89 failed without saying C99 is needed: $(head -5 "$TMP/c89.log")"
    [ "$(grep -c 'error' "$TMP/c89.log")" -le 2 ] || fail "-std=c89 gives a cascade of errors, not one: $(head -8 "$TMP/c89.log")"
fi
# A compiler without GNU attributes: neither __GNUC__ nor __clang__, and
# __attribute__ a syntax error. glibc's headers would quietly define
# __attribute__ away for such a compiler, so plain stand-ins replace them
# here, as on a platform without glibc.
mkdir "$TMP/stub"
printf '#define bool _Bool\n#define true 1\n#define false 0\n' >"$TMP/stub/stdbool.h"
printf 'typedef unsigned long size_t;\n#define NULL ((void *)0)\n' >"$TMP/stub/stddef.h"
printf 'typedef long long int64_t;\ntypedef unsigned long long uint64_t;\ntypedef int int32_t;\ntypedef unsigned uint32_t;\ntypedef unsigned char uint8_t;\n' >"$TMP/stub/stdint.h"
"$CC" -std=c99 -nostdinc -I"$TMP/stub" -U__GNUC__ -U__clang__ '-D__attribute__(x)=this compiler knows no attributes' \
    -I"$INC" -c "$TMP/use.c" -o "$TMP/use.o" >"$TMP/plain.log" 2>&1 ||
    fail "a compiler without __attribute__ cannot compile ember.h: $(head -5 "$TMP/plain.log")"
for part in "$INC"/ember/*.h; do
    name=ember/${part##*/}
    printf '#include <%s>\nint main(void) { return 0; }\n' "$name" >"$TMP/part.c"
    if "$CC" -std=c99 -I"$INC" -c "$TMP/part.c" -o "$TMP/part.o" >"$TMP/part.log" 2>&1; then
        fail "$name compiled alone; it is a part of ember.h and must say so"
    else
        grep -q "include <ember.h>: $name is a part of it" "$TMP/part.log" ||
            fail "$name alone failed without saying to include <ember.h>: $(head -3 "$TMP/part.log")"
        [ "$(grep -c 'error' "$TMP/part.log")" -le 2 ] || fail "$name alone gives a cascade of errors: $(head -6 "$TMP/part.log")"
    fi
done
if command -v g++ >/dev/null 2>&1; then
    cp "$TMP/use.c" "$TMP/use.cc"
    g++ -std=c++11 -pedantic-errors -Wall -Werror -I"$INC" -c "$TMP/use.cc" -o "$TMP/use.o" >"$TMP/cxx.log" 2>&1 ||
        fail "g++ -std=c++11: $(head -5 "$TMP/cxx.log")"
else
    echo "note: no g++ here; C++ not checked"
fi
[ $failures -eq 0 ] || exit 1
echo "ember.h: C99 and C11 pedantic, C89 refused with one clear error, no attributes needed, its parts only through it"
