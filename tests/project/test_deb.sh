#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_deb.sh — the Debian package as a user gets it (cmake/package.cmake):
#
#   1. CPack makes ember_VERSION_ARCH.deb (and ember-mpi's, where MPI was
#      found) from the build, with the header's version, a Depends that
#      dpkg-shlibdeps read from the binaries, no MPI in ember's;
#   2. every dependency it names is installed here, as `dpkg -i` demands;
#   3. dpkg installs it under /usr, into a fresh root of its own (--root:
#      its own database, so that the suite's other tests, and this
#      machine's own packages, are untouched, and nothing is left behind),
#      running ldconfig for the library;
#   4. it works there: `ember --version`, a bin/ember that links no libmpi,
#      the man pages (man -l renders them), bash completion, the documents
#      and the license; and a program built against it through pkg-config
#      (examples/train_arrays.c) trains;
#   5. dpkg removes it, and the files go with it.
#
#   test_deb.sh BUILD-DIR SOURCE-DIR [CC]
set -u
BUILD=$1 SRC=$2 CC=${3:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAILED: $*" >&2; exit 1; }
for tool in cpack dpkg dpkg-deb dpkg-query pkg-config; do
    command -v $tool >/dev/null 2>&1 || { echo "skipped: no $tool (a Debian machine has it)"; exit 77; }
done

# --- 1. the packages
cpack --config "$BUILD/CPackConfig.cmake" -B "$TMP/out" >"$TMP/cpack.log" 2>&1 ||
    die "cpack: $(tail -c 2000 "$TMP/cpack.log")"
major=$(sed -n 's/^#define EMBER_VERSION_MAJOR \([0-9]*\).*/\1/p' "$SRC/include/ember.h")
minor=$(sed -n 's/^#define EMBER_VERSION_MINOR \([0-9]*\).*/\1/p' "$SRC/include/ember.h")
patch=$(sed -n 's/^#define EMBER_VERSION_PATCH \([0-9]*\).*/\1/p' "$SRC/include/ember.h")
version=$major.$minor.$patch
DEB=$(ls "$TMP/out"/ember_"$version"_*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || die "no ember_${version}_*.deb: $(ls "$TMP/out")"
[ "$(dpkg-deb -f "$DEB" Package)" = ember ] || fail "Package: $(dpkg-deb -f "$DEB" Package)"
[ "$(dpkg-deb -f "$DEB" Version)" = "$version" ] || fail "Version $(dpkg-deb -f "$DEB" Version), not ember.h's $version"
depends=$(dpkg-deb -f "$DEB" Depends)
echo "$depends" | grep -q "libc6" || fail "Depends names no libc6 (were the binaries read?): $depends"
echo "$depends" | grep -qi "mpi" && fail "ember's Depends names MPI: $depends"
MPI_DEB=$(ls "$TMP/out"/ember-mpi_"$version"_*.deb 2>/dev/null | head -1)
if [ -n "$MPI_DEB" ]; then
    dpkg-deb -f "$MPI_DEB" Depends | grep -q "libopenmpi" || fail "ember-mpi's Depends names no MPI: $(dpkg-deb -f "$MPI_DEB" Depends)"
    dpkg-deb -c "$MPI_DEB" | grep -q "/bin/ember-mpi$" || fail "ember-mpi's package lacks bin/ember-mpi"
fi

# --- 2. what it depends on is here: each "a (>= v) | b" needs one alternative installed at that version
echo "$depends" | tr ',' '\n' | while IFS= read -r clause; do
    ok=no
    for alt in $(echo "$clause" | tr '|' '\n' | sed 's/ //g'); do
        name=${alt%%(*}
        want=$(echo "$alt" | sed -n 's/.*(\([<>=]*\)\(.*\))/\1 \2/p')
        # (this machine's architecture: with arm64 beside it, scripts/setup.sh --arm, each has two)
        have=$(dpkg-query -W -f='${Architecture} ${Status} ${Version}\n' "$name" 2>/dev/null |
            awk -v arch="$(dpkg --print-architecture)" '($1 == arch || $1 == "all") && $4 == "installed" { print $5; exit }')
        [ -n "$have" ] || continue
        if [ -z "$want" ] || dpkg --compare-versions "$have" "$(echo "$want" | sed 's/^>=/ge/; s/^<=/le/; s/^>>/gt/; s/^<</lt/; s/^=/eq/' | cut -d' ' -f1)" "${want#* }"; then
            ok=yes
        fi
    done
    [ $ok = yes ] || echo "$clause"
done >"$TMP/missing"
[ -s "$TMP/missing" ] && fail "dependencies not installed here: $(tr '\n' ',' <"$TMP/missing")"

# --- 3. dpkg installs it into a root of its own
ROOT=$TMP/root
mkdir -p "$ROOT/var/lib/dpkg/info" "$ROOT/var/lib/dpkg/updates" "$ROOT/var/lib/dpkg/triggers"
touch "$ROOT/var/lib/dpkg/status" "$ROOT/var/lib/dpkg/available"
# its dependencies are this machine's (checked above), not in the new root's database; its
# maintainer scripts (ldconfig, for the library in /usr/lib) run outside the root, which has no
# shell, with an ldconfig that notes the call rather than rebuild this machine's cache
mkdir "$TMP/bin"
printf '#!/bin/sh\necho "ldconfig $*" >>"%s/ldconfig.calls"\n' "$TMP" >"$TMP/bin/ldconfig"
chmod +x "$TMP/bin/ldconfig"
DPKG="env PATH=$TMP/bin:$PATH dpkg --root=$ROOT --log=$TMP/dpkg.log --force-not-root --force-depends --force-script-chrootless"
$DPKG -i "$DEB" >"$TMP/install.log" 2>&1 || die "dpkg -i: $(tail -c 2000 "$TMP/install.log")"
$DPKG -l ember 2>/dev/null | grep -q "^ii  ember " || fail "dpkg does not list ember as installed: $($DPKG -l 2>&1 | tail -3)"
prefix=$(dpkg-deb -c "$DEB" | sed -n 's|.* \./\(.*\)/bin/ember$|/\1|p')
P=$ROOT$prefix
[ -x "$P/bin/ember" ] || die "no bin/ember under $prefix in the package: $(dpkg-deb -c "$DEB" | head)"
[ "$prefix" = /usr ] || fail "the package installs under $prefix, not /usr as Debian's packages do"
[ -s "$TMP/ldconfig.calls" ] || fail "installing the library in $prefix/lib did not run ldconfig"

# --- 4. it works
[ "$("$P/bin/ember" --version)" = "ember $version" ] || fail "ember --version: $("$P/bin/ember" --version 2>&1)"
readelf -d "$P/bin/ember" | grep -q "NEEDED.*libmpi" && fail "bin/ember links libmpi: $(readelf -d "$P/bin/ember" | grep NEEDED)"
"$P/bin/ember" train --data random --shape 1x8x8 --model linear --steps 3 --quiet >"$TMP/train.log" 2>&1 ||
    fail "the installed ember cannot train: $(cat "$TMP/train.log")"
for page in ember ember-train ember-predict; do
    [ -f "$P/share/man/man1/$page.1" ] || fail "no man page $page.1"
done
if command -v man >/dev/null 2>&1; then
    MANWIDTH=80 man -l "$P/share/man/man1/ember-train.1" 2>&1 | grep -q -- "--lr X" ||
        fail "man -l ember-train.1 does not show --lr: $(MANWIDTH=80 man -l "$P/share/man/man1/ember-train.1" 2>&1 | head -20)"
fi
[ -f "$P/share/bash-completion/completions/ember" ] || fail "no bash completion"
if command -v bash >/dev/null 2>&1; then
    got=$(PATH="$P/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(ember train --mo); COMP_CWORD=2; _ember; echo "${COMPREPLY[*]}"' \
        sh "$P/share/bash-completion/completions/ember" 2>&1)
    [ "$got" = "--model --momentum" ] || fail "completing \"ember train --mo\" gave \"$got\""
fi
for doc in README.md LICENSE docs/models.md docs/embedding.md examples/classify.c; do
    [ -f "$P/share/doc/ember/$doc" ] || fail "no share/doc/ember/$doc"
done
"$P/bin/ember" --help | grep -q "installed in $P/share/doc/ember" ||
    fail "ember --help does not say where the documents are: $("$P/bin/ember" --help | tail -3)"
sed 's/\\-/-/g' "$P/share/man/man1/ember-train.1" | grep -qF "are installed in $prefix/share/doc/ember." ||
    fail "ember-train.1 does not say the documents are in $prefix/share/doc/ember: $(grep "installed in" "$P/share/man/man1/ember-train.1")"
# a program of one's own, through pkg-config
PCDIR=$(dirname "$(find "$P" -name ember.pc | head -1)")
flags=$(PKG_CONFIG_PATH=$PCDIR pkg-config --cflags --libs ember) || fail "pkg-config finds no ember in $PCDIR"
"$CC" -o "$TMP/train_arrays" "$SRC/examples/train_arrays.c" $flags -lm >"$TMP/cc.log" 2>&1 ||
    fail "cc train_arrays.c \$(pkg-config --cflags --libs ember): $(cat "$TMP/cc.log")"
LIBDIR=$(dirname "$(find "$P" -name libember.so | head -1)")
LD_LIBRARY_PATH=$LIBDIR "$TMP/train_arrays" >"$TMP/arrays.log" 2>&1 || fail "train_arrays: $(cat "$TMP/arrays.log")"
grep -q "test accuracy" "$TMP/arrays.log" || fail "train_arrays said: $(cat "$TMP/arrays.log")"
LD_LIBRARY_PATH=$LIBDIR ldd "$TMP/train_arrays" | grep -q "$LIBDIR/libember.so" ||
    fail "train_arrays did not link the package's library: $(LD_LIBRARY_PATH=$LIBDIR ldd "$TMP/train_arrays")"

# --- 5. and it goes
$DPKG -r ember >"$TMP/remove.log" 2>&1 || fail "dpkg -r: $(cat "$TMP/remove.log")"
left=$(find "$ROOT" -type f ! -path "$ROOT/var/*" | head -5)
[ -z "$left" ] || fail "dpkg -r left files behind: $left"

[ $failures -eq 0 ] || exit 1
echo "test_deb: $(basename "$DEB") ($depends) installs, works and goes"
