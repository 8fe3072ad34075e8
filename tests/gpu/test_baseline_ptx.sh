#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_baseline_ptx.sh — the CUDA backend's built-in PTX (the
# module the build joins from backends/cuda/baseline/<family>-sm30.ptx) is
# what every driver since 2013 can load, is what the kernel sources give
# today, and assembles for every GPU the installed tools know:
#
#   1. `.target sm_30`, `.version` at most 6.4 (R418 laptop drivers load
#      that), an entry point per kernel, and nothing old GPUs or drivers
#      lack: warp shuffles, ld.global.nc, doubles, halves, float atomics,
#      calls to functions outside the module;
#   2. not stale: scripts/baseline-ptx.sh, run again with the same clang,
#      gives the same files, one per family (skipped without that clang); and its expf and
#      logf are computed without fused multiply-adds, as tests/gpu/test_kernels.c
#      measures them;
#   3. the toolkit's ptxas assembles it for every sm it knows (CUDA 13:
#      sm_75 and up), and CUDA 11.8's ptxas from the PyPI wheel
#      (build/cu11, installed by scripts/setup.sh --tests) for sm_35 and
#      sm_37, the Kepler servers (each skipped, with the reason, when the
#      tool is missing).
#
#   test_baseline_ptx.sh SOURCE_DIR KERNEL_SOURCE_TOOL JOINED_PTX [CU11_DIR]
set -u
SRC=$1 KSRC=$2 PTX=$3 CU11=${4:-}
PARTS=$SRC/backends/cuda/baseline
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0 skipped=""
fail() { echo "FAILED: $*" >&2; status=1; }

# 1. what the file says
grep -q '^\.target sm_30$' "$PTX" || fail "the built-in PTX is not for sm_30: $(grep '^\.target' "$PTX")"
version=$(sed -n 's/^\.version \([0-9.]*\)$/\1/p' "$PTX")
awk -v v="$version" 'BEGIN { split(v, p, "."); exit !(v != "" && p[1] * 10 + p[2] <= 64) }' ||
    fail "the built-in PTX says .version ${version:-(none)}; drivers of CUDA 10.1 (R418) load at most 6.4"
for kernel in $("$KSRC" --list); do
    grep -q "\.entry $kernel(" "$PTX" || fail "the built-in PTX has no entry point $kernel"
done
if grep -nE 'shfl|ld\.global\.nc|\.f64|\.f16|atom\.[a-z.]*\.f32|red\.[a-z.]*\.f32|\.extern|vprintf' "$PTX" >"$TMP/bad"; then
    fail "the built-in PTX uses what old GPUs or drivers lack: $(head -n 3 "$TMP/bad")"
fi
echo "built-in PTX: .version $version .target sm_30, $(grep -c '\.entry' "$PTX") entry points"

# 2. fresh: each file records the clang that made it; made again, they are the same
made_by=$(sed -n '3s/.*do not edit\. //p' "$PARTS/elementwise-sm30.ptx")
CLANG=${CLANG:-clang}
if command -v "$CLANG" >/dev/null 2>&1 && [ "$("$CLANG" --version | head -n 1)" = "$made_by" ]; then
    if ! KERNEL_SOURCE=$KSRC CLANG=$CLANG "$SRC/scripts/baseline-ptx.sh" "$TMP/fresh"; then
        fail "clang could not compile the kernels"
    else
        for name in $( (cd "$TMP/fresh" && ls ./*-sm30.ptx; cd "$PARTS" && ls ./*-sm30.ptx) | sort -u); do
            cmp -s "$TMP/fresh/$name" "$PARTS/$name" ||
                fail "the built-in PTX's ${name#./} is stale or missing: the kernel sources changed since it was made; run scripts/baseline-ptx.sh"
        done
        [ $status = 0 ] && echo "built-in PTX: up to date with the kernel sources, $(ls "$PARTS"/*-sm30.ptx | wc -l) files"
    fi
else
    skipped="$skipped; staleness (needs $made_by)"
fi

# softmath.kh's expf and logf are measured on the host, where nothing is
# fused (tests/gpu/test_kernels.c): the PTX must compute them the same way, no
# fma in the kernel of the math functions (they and the activations that
# call them, all NO_CONTRACT)
math=$(awk '/\.entry unary_dense_math\(/ { on = 1 } on { print } on && /^}/ { exit }' "$PTX")
if [ -z "$math" ]; then
    fail "the built-in PTX has no unary_dense_math to look at"
elif printf '%s\n' "$math" | grep -q 'fma\.'; then
    fail "the built-in PTX fuses multiply-adds in the math functions (unary_dense_math): NO_CONTRACT is not honoured"
else
    echo "built-in PTX: expf and logf unfused, as measured"
fi

# 3. assembled by every ptxas there is
PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
if [ -n "$PTXAS" ]; then
    # the plain sm_XY values its --gpu-name takes (not the a/f variants, not compute_)
    archs=$("$PTXAS" --help | sed -n '/^--gpu-name/,/Default value/p' | tr ",'. " '\n\n\n\n' |
        grep -E '^sm_[0-9]+$' | sort -t_ -k2 -n -u)
    for arch in $archs; do
        "$PTXAS" --gpu-name "$arch" "$PTX" -o "$TMP/$arch.cubin" 2>"$TMP/err" ||
            fail "$PTXAS refused the built-in PTX for $arch: $(head -c 400 "$TMP/err")"
    done
    echo "built-in PTX: ptxas $("$PTXAS" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2) assembles it for" $archs
else
    skipped="$skipped; the toolkit's ptxas (no CUDA toolkit)"
fi
if [ -n "$CU11" ] && [ -x "$CU11/nvidia/cuda_nvcc/bin/ptxas" ]; then
    for arch in sm_35 sm_37; do
        "$CU11/nvidia/cuda_nvcc/bin/ptxas" --gpu-name $arch "$PTX" -o "$TMP/$arch.cubin" 2>"$TMP/err" ||
            fail "ptxas 11.8 refused the built-in PTX for $arch: $(head -c 400 "$TMP/err")"
    done
    echo "built-in PTX: ptxas 11.8 assembles it for sm_35 sm_37"
else
    skipped="$skipped; ptxas 11.8 for sm_35/37 (the nvidia-cuda-nvcc-cu11 wheel is not in ${CU11:-build/cu11}: scripts/setup.sh --tests installs it)"
fi
[ -n "$skipped" ] && echo "not checked here${skipped}"
[ $status -eq 0 ] && echo "test_baseline_ptx: ok"
exit $status
