#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_kernels_clang.sh — the shared kernel sources are clean in the
# dialects no driver here compiles, checked with Debian's clang 14:
#
#   1. clang's NVPTX dialect, no CUDA installation used: the program must
#      compile for sm_30 without a single warning. (What the PTX itself
#      holds is checked on the built-in copy the CUDA backend ships, by
#      test_baseline_ptx.sh, which also fails when that copy is stale.)
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
if ! "$CLANG" -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_30 -O3 -S -ffp-contract=on \
    -Wall -Wextra -Wdouble-promotion -Wfloat-conversion -Wno-unknown-cuda-version -Werror \
    $DEFINES "$TMP/kernels.cu" -o "$TMP/kernels.ptx"; then
    fail "clang could not compile the NVPTX dialect"
else
    echo "nvptx: compiles for sm_30 with no warning"
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
