#!/bin/sh
# tests/test_kernels_clang.sh — the shared kernel sources are clean in the
# dialects no driver here compiles, checked with Debian's clang 14:
#
#   1. clang's NVPTX dialect, no CUDA installation used: the program must
#      compile without a warning to PTX that says `.target sm_30` and a
#      `.version` of at most 6.4 (so the R418 drivers of Kepler laptops load
#      it), with an entry point per kernel and none of what old GPUs or old
#      drivers lack: warp shuffles, ld.global.nc, doubles, halves, float
#      atomics, calls to functions outside the program. ptxas, when a CUDA
#      toolkit has one, must then assemble it (for sm_75: CUDA 13's lowest).
#   2. OpenCL C 1.2 with every extension switched off, warnings as errors:
#      no double (not even an unsuffixed constant), nothing from cl_khr_*.
#
#   test_kernels_clang.sh path/to/kernel-source [clang]
#
# Without clang the test says so and reports skipped (77).
set -u
SOURCE=$1
CLANG=${2:-${CLANG:-clang}}
if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "skipped: $CLANG not found (Debian's clang compiles the baseline PTX: apt-get install clang)"
    exit 77
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
fail() {
    echo "FAILED: $*" >&2
    status=1
}
DEFINES=$("$SOURCE" --defines) || exit 1

# 1. NVPTX for sm_30
"$SOURCE" nvptx >"$TMP/kernels.cu" || exit 1
# shellcheck disable=SC2086 # DEFINES is a list of options
if ! "$CLANG" -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_30 -O3 -S \
    -Wall -Wextra -Wdouble-promotion -Wfloat-conversion -Wno-unknown-cuda-version -Werror \
    $DEFINES "$TMP/kernels.cu" -o "$TMP/kernels.ptx"; then
    fail "clang could not compile the NVPTX dialect"
else
    grep -q '^\.target sm_30$' "$TMP/kernels.ptx" || fail "the PTX is not for sm_30: $(grep '^\.target' "$TMP/kernels.ptx")"
    version=$(sed -n 's/^\.version \([0-9.]*\)$/\1/p' "$TMP/kernels.ptx")
    if [ -z "$version" ] || ! awk -v v="$version" 'BEGIN { split(v, p, "."); exit !(p[1] * 10 + p[2] <= 64) }'; then
        fail "the PTX says .version ${version:-(none)}: drivers of CUDA 10.1 (R418) load at most 6.4"
    fi
    for kernel in $("$SOURCE" --list); do
        grep -q "\.entry $kernel(" "$TMP/kernels.ptx" || fail "no entry point $kernel in the PTX"
    done
    if grep -nE 'shfl|ld\.global\.nc|\.f64|\.f16|atom\.[a-z.]*\.f32|red\.[a-z.]*\.f32|\.extern|vprintf' \
        "$TMP/kernels.ptx" >"$TMP/bad"; then
        fail "the PTX uses what old GPUs or drivers lack: $(head -n 3 "$TMP/bad")"
    fi
    PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
    if [ -n "$PTXAS" ]; then
        "$PTXAS" -arch=sm_75 "$TMP/kernels.ptx" -o "$TMP/kernels.cubin" || fail "ptxas rejected the sm_30 PTX"
    else
        echo "note: no ptxas found; the PTX was not assembled"
    fi
    echo "nvptx: $(grep -c '\.entry' "$TMP/kernels.ptx") entry points, .version $version .target sm_30"
fi

# 2. OpenCL C 1.2, no extensions
"$SOURCE" opencl >"$TMP/kernels.cl" || exit 1
# shellcheck disable=SC2086
if ! "$CLANG" -x cl -cl-std=CL1.2 -Xclang -cl-ext=-all -Xclang -finclude-default-header -fsyntax-only \
    -Werror $DEFINES "$TMP/kernels.cl"; then
    fail "the OpenCL dialect needs an extension, or has warnings"
else
    echo "opencl: OpenCL C 1.2 with no extension"
fi
[ $status -eq 0 ] && echo "test_kernels_clang: ok"
exit $status
