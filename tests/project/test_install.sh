#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_install.sh — ember installed, as a program that embeds it sees
# it (docs/embedding.md):
#
#   1. `cmake --install` into a fresh prefix, ember.h's parts (include/ember/)
#      installed beside it, every one of them;
#   2. libember.so exports exactly the functions ember.h and its parts mark
#      EMBER_API, every function they declare is so marked, and the SONAME is the
#      one the header's version gives (libember.so.0.2 for 0.2.x);
#   3. pkg-config finds ember.pc there and its version is the header's;
#   4. examples/ builds against the prefix through find_package (ember::ember
#      and ember::ember_static) and through pkg-config, and the programs run:
#      train_arrays learns its rings, train_mpi learns them as two processes
#      through its own MPI communicator (where MPI is installed), classify
#      names the class `ember predict` names for the same image;
#   5. the Python (ctypes) example of docs/embedding.md, cut out of the page,
#      runs on the installed library and agrees too.
#
#   test_install.sh BUILD-DIR SOURCE-DIR PYTHON [CMAKE] [CC]
#
# Needs Fashion-MNIST (Debian's dataset-fashion-mnist), as test_predict does.
set -u
BUILD=$1 SRC=$2 PY=$3 CMAKE=${4:-cmake} CC=${5:-cc}
DATA=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
die() { echo "FAILED: $*" >&2; exit 1; }

"$CMAKE" --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1 ||
    die "cmake --install: $(tail -c 1500 "$TMP/install.log")"
HEADER=$PREFIX/include/ember.h
SO=$(find "$PREFIX" -name libember.so | head -1)
[ -f "$HEADER" ] && [ -n "$SO" ] || die "the prefix lacks ember.h or libember.so: $(find "$PREFIX" -type f)"
# ember.h includes its parts from include/ember/: each of the source tree's must be installed
for part in "$SRC"/include/ember/*.h; do
    [ -f "$PREFIX/include/ember/${part##*/}" ] || fail "ember.h's part ember/${part##*/} is not installed"
done
HEADERS="$HEADER $(ls "$PREFIX"/include/ember/*.h 2>/dev/null | tr '\n' ' ')"
LIBDIR=$(dirname "$SO")
[ -f "$LIBDIR/libember.a" ] || fail "no libember.a beside libember.so"

# --- 2. the exported symbols and the SONAME
# each EMBER_API declaration names its function on the same line: "EMBER_API const char *ember_x("
# shellcheck disable=SC2086 # HEADERS is a list of paths without spaces (mktemp's)
grep -ho 'EMBER_API[^(]*(' $HEADERS | sed -n 's/.*[^A-Za-z0-9_]\(ember_[a-z0-9_]*\) *($/\1/p' | sort -u >"$TMP/api"
[ "$(wc -l <"$TMP/api")" -gt 100 ] || die "found only $(wc -l <"$TMP/api") EMBER_API functions in ember.h and its parts"
# a declaration at the left margin without EMBER_API would be a public function left hidden
# shellcheck disable=SC2086
unmarked=$(grep -hE '^[A-Za-z_].*[^A-Za-z0-9_]ember_[a-z0-9_]+ *\(' $HEADERS | grep -vE '^(EMBER_API|typedef|#)')
[ -z "$unmarked" ] || fail "ember.h declares functions without EMBER_API: $unmarked"
nm -D --defined-only "$SO" | awk '{print $NF}' | sort -u >"$TMP/exported"
not_api=$(comm -23 "$TMP/exported" "$TMP/api" | tr '\n' ' ')
[ -z "$not_api" ] || fail "libember.so exports symbols that ember.h does not mark EMBER_API: $not_api"
not_exported=$(comm -13 "$TMP/exported" "$TMP/api" | tr '\n' ' ')
[ -z "$not_exported" ] || fail "ember.h marks EMBER_API functions that libember.so does not export: $not_exported"
major=$(sed -n 's/^#define EMBER_VERSION_MAJOR \([0-9]*\).*/\1/p' "$HEADER")
minor=$(sed -n 's/^#define EMBER_VERSION_MINOR \([0-9]*\).*/\1/p' "$HEADER")
patch=$(sed -n 's/^#define EMBER_VERSION_PATCH \([0-9]*\).*/\1/p' "$HEADER")
if [ "$major" = 0 ]; then soname=libember.so.$major.$minor; else soname=libember.so.$major; fi
got=$(readelf -d "$SO" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$got" = "$soname" ] || fail "the SONAME is \"$got\"; ember.h's version $major.$minor.$patch makes it $soname"
[ -e "$LIBDIR/$soname" ] || fail "no $soname in $LIBDIR: $(ls "$LIBDIR")"

# --- the program as a Unix program is installed: no MPI in bin/ember (ember-mpi has it, where
# MPI was found), a man page for every command the program lists, bash completion, the documents
readelf -d "$PREFIX/bin/ember" | grep -q "NEEDED.*libmpi" && fail "bin/ember links libmpi: $(readelf -d "$PREFIX/bin/ember" | grep NEEDED)"
if [ -x "$BUILD/ember-mpi" ]; then
    readelf -d "$PREFIX/bin/ember-mpi" 2>/dev/null | grep -q "NEEDED.*libmpi" || fail "bin/ember-mpi is missing or links no libmpi"
fi
for command in "" $("$PREFIX/bin/ember" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p'); do
    page=ember${command:+-$command}.1
    [ -s "$PREFIX/share/man/man1/$page" ] || fail "no man page $page for \"ember $command\""
done
[ -s "$PREFIX/share/bash-completion/completions/ember" ] || fail "no bash completion installed"
for doc in README.md LICENSE docs/models.md docs/how-it-works.md examples/classify.c; do
    [ -s "$PREFIX/share/doc/ember/$doc" ] || fail "no share/doc/ember/$doc"
done
# the help and the man pages say where this prefix has the documents, not where the build was
# configured to install them
docs=$(cd "$PREFIX/share/doc/ember" && pwd -P)
"$PREFIX/bin/ember" --help | grep -qF "are installed in $docs." ||
    fail "ember --help does not say the documents are in $docs: $("$PREFIX/bin/ember" --help | tail -2)"
for page in ember.1 ember-train.1; do
    sed 's/\\-/-/g' "$PREFIX/share/man/man1/$page" | grep -qF "are installed in $PREFIX/share/doc/ember." ||
        fail "$page does not say the documents are in $PREFIX/share/doc/ember: $(grep "installed in" "$PREFIX/share/man/man1/$page")"
done

# --- 3. pkg-config
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
pc_flags=$(pkg-config --cflags --libs ember 2>&1) || fail "pkg-config --cflags --libs ember: $pc_flags"
case "$pc_flags" in *-lember*) ;; *) fail "pkg-config --libs ember lacks -lember: $pc_flags" ;; esac
pc_version=$(pkg-config --modversion ember)
[ "$pc_version" = "$major.$minor.$patch" ] || fail "ember.pc says version $pc_version, ember.h $major.$minor.$patch"
pc_static=$(pkg-config --static --libs ember 2>&1) || fail "pkg-config --static --libs ember: $pc_static"
case "$pc_static" in *-lz*) ;; *) fail "pkg-config --static --libs ember lacks zlib: $pc_static" ;; esac

# --- 4. the examples, through find_package and through pkg-config
start=$(date +%s)
"$CMAKE" -S "$SRC/examples" -B "$TMP/examples" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$TMP/examples.log" 2>&1 &&
    "$CMAKE" --build "$TMP/examples" >>"$TMP/examples.log" 2>&1 || die "examples/ with find_package: $(tail -c 3000 "$TMP/examples.log")"
echo "examples/ configured and built with find_package in $(($(date +%s) - start)) s"
[ -x "$TMP/examples/classify_static" ] || fail "find_package(ember) defined no ember::ember_static: $(cat "$TMP/examples.log")"
# the package takes 0.MINOR.x only: another minor is another ABI (the version file decides alone)
cat >"$TMP/version.cmake" <<'EOF'
string(REPLACE "." ";" parts "${PACKAGE_FIND_VERSION}.0.0")
list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
list(GET parts 2 PACKAGE_FIND_VERSION_PATCH)
include("${VERSION_FILE}")
message("${PACKAGE_FIND_VERSION} ${PACKAGE_VERSION_COMPATIBLE}")
EOF
version_file=$(find "$PREFIX" -name emberConfigVersion.cmake)
versions="$major.$minor $major.$minor.$patch $major.$((minor + 1)) $((major + 1)).$minor"
[ "$minor" -gt 0 ] && versions="$versions $major.$((minor - 1))"
for want in $versions; do
    "$CMAKE" -DPACKAGE_FIND_VERSION="$want" -DVERSION_FILE="$version_file" -P "$TMP/version.cmake" 2>&1
    case $want in "$major.$minor" | "$major.$minor".*) echo "$want TRUE" >>"$TMP/versions.want" ;; *) echo "$want FALSE" >>"$TMP/versions.want" ;; esac
done >"$TMP/versions"
cmp -s "$TMP/versions" "$TMP/versions.want" ||
    fail "emberConfigVersion.cmake should take $major.$minor.x alone; it says: $(cat "$TMP/versions")"

# pkg-config: libember.so, and libember.a (by file name; --as-needed drops the -lember that --libs also gives)
for ex in classify train_arrays; do
    # shellcheck disable=SC2046 # pkg-config's flags are words
    "$CC" -Wall -Wextra -Werror -o "$TMP/${ex}_pc" "$SRC/examples/$ex.c" $(pkg-config --cflags --libs ember) -lm \
        2>"$TMP/cc.log" || fail "cc $ex.c \$(pkg-config --cflags --libs ember): $(cat "$TMP/cc.log")"
done
# shellcheck disable=SC2046
"$CC" -Wall -Wextra -Werror -o "$TMP/classify_pc_static" "$SRC/examples/classify.c" -Wl,--as-needed -l:libember.a \
    $(pkg-config --static --cflags --libs ember) 2>"$TMP/cc.log" ||
    fail "cc classify.c -l:libember.a \$(pkg-config --static --cflags --libs ember): $(cat "$TMP/cc.log")"
for static in "$TMP/examples/classify_static" "$TMP/classify_pc_static"; do
    [ -x "$static" ] && readelf -d "$static" | grep -q "NEEDED.*libember" && fail "$static needs libember.so"
done

# train_arrays learns the rings (its exit status says so) and saves a model
LD_LIBRARY_PATH=$LIBDIR "$TMP/examples/train_arrays" "$TMP/rings.safetensors" >"$TMP/out" 2>&1 ||
    fail "train_arrays (find_package): $(cat "$TMP/out")"
ldd "$TMP/examples/train_arrays" | grep -q "$LIBDIR/$soname" ||
    fail "train_arrays does not load the installed $soname: $(ldd "$TMP/examples/train_arrays")"
LD_LIBRARY_PATH=$LIBDIR "$TMP/train_arrays_pc" >"$TMP/out" 2>&1 || fail "train_arrays (pkg-config): $(cat "$TMP/out")"
grep -q "test accuracy" "$TMP/out" || fail "train_arrays printed no accuracy: $(cat "$TMP/out")"

# train_mpi: two processes through the program's own MPI communicator (ember-mpi.h), one of them
# with two cpu devices; built where MPI is installed
if [ -x "$TMP/examples/train_mpi" ] && command -v mpirun >/dev/null; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none \
        LD_LIBRARY_PATH=$LIBDIR mpirun --oversubscribe -np 2 "$TMP/examples/train_mpi" cpu,cpu >"$TMP/out" 2>&1 ||
        fail "mpirun -np 2 train_mpi: $(cat "$TMP/out")"
    grep -q "trained by 2 processes" "$TMP/out" || fail "train_mpi said nothing of its two processes: $(cat "$TMP/out")"
else
    echo "note: no MPI here: examples/train_mpi was not built or run"
fi

# classify: a simplecnn of 30 steps, and a Fashion-MNIST test image as PNG
[ -f "$DATA/t10k-images-idx3-ubyte.gz" ] || die "no Fashion-MNIST in $DATA (apt-get install dataset-fashion-mnist)"
"$PREFIX/bin/ember" train --model simplecnn --steps 30 --device cpu --no-eval --quiet \
    --save "$TMP/fm.safetensors" >"$TMP/out" 2>&1 || die "ember train: $(cat "$TMP/out")"
"$PY" - "$DATA" "$TMP" "$SRC/tests/common" <<'EOF' || die "cannot write the PNG files"
import os, struct, sys, zlib
data, tmp, here = sys.argv[1:4]
sys.path.insert(0, here)
from fashion_subset import read_idx

def png(path, rows):
    h, w = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

_, pixels = read_idx(os.path.join(data, "t10k-images-idx3-ubyte.gz"))
for i in (0, 1):  # an ankle boot, a pullover
    png(f"{tmp}/image{i}.png", [pixels[i * 784 + y * 28:i * 784 + y * 28 + 28] for y in range(28)])
EOF
for image in "$TMP/image0.png" "$TMP/image1.png"; do
    "$PREFIX/bin/ember" predict --load "$TMP/fm.safetensors" --device cpu --top 1 --json "$image" >"$TMP/want" 2>&1 ||
        fail "ember predict: $(cat "$TMP/want")"
    # "Ankle boot 0.973": the class and its probability, as classify prints them
    want=$("$PY" -c 'import json, sys; t = json.load(open(sys.argv[1]))["top"][0]
print(t["class"], "%.3f" % t["probability"], t["index"])' "$TMP/want") || fail "ember predict's JSON: $(cat "$TMP/want")"
    want_index=${want##* } want=${want% *}
    for ex in "$TMP/examples/classify" "$TMP/examples/classify_static" "$TMP/classify_pc" "$TMP/classify_pc_static"; do
        LD_LIBRARY_PATH=$LIBDIR "$ex" "$TMP/fm.safetensors" "$image" cpu >"$TMP/out" 2>&1 || fail "$ex: $(cat "$TMP/out")"
        # the same class, and the same probability but for the last digit's rounding
        awk -v want="$want" '{ got = $0 } END {
            gp = got; sub(/.* /, "", gp); gn = got; sub(/ [^ ]*$/, "", gn)
            wp = want; sub(/.* /, "", wp); wn = want; sub(/ [^ ]*$/, "", wn)
            exit !(gn == wn && (gp - wp) ^ 2 < 0.0015 ^ 2) }' "$TMP/out" ||
            fail "$(basename "$ex") says \"$(cat "$TMP/out")\" of $(basename "$image"); ember predict says \"$want\""
    done
    echo "$(basename "$image"): $want"

    # --- 5. the ctypes example of docs/embedding.md, on the installed library
    awk '/^```python$/ { on = 1; next } /^```$/ { if (on) exit } on' "$SRC/docs/embedding.md" >"$TMP/doc.py"
    [ -s "$TMP/doc.py" ] || die "docs/embedding.md has no \`\`\`python block"
    LD_LIBRARY_PATH=$LIBDIR "$PY" "$TMP/doc.py" "$TMP/fm.safetensors" "$image" >"$TMP/out" 2>&1 ||
        fail "the Python example of docs/embedding.md: $(cat "$TMP/out")"
    grep -q "^class $want_index: " "$TMP/out" ||
        fail "the Python example says \"$(cat "$TMP/out")\"; ember predict says class $want_index ($want)"
done

if [ "$failures" -ne 0 ]; then
    echo "test_install: $failures failures" >&2
    exit 1
fi
echo "test_install: ok"
