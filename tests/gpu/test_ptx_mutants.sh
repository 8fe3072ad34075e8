#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_ptx_mutants.sh — a wrong built-in PTX fails through execution,
# whatever clang is installed. Copies of the built-in PTX (the module the build joins
# from backends/cuda/baseline/<family>-sm30.ptx, BUILD_DIR/generated/kernels-sm30.ptx)
# with one thing changed are run on the simulated Quadro K2100M (the CUDA test
# double in PTX mode, EMBER_FAKE_CUDA_PTX putting the copy in place of the PTX
# ember loads):
#
#   unchanged                 the copy itself: fill's parity passes (so what fails
#                             below fails for its change)
#   one operand changed       fill reads its value from the parameter before its own
#                             (`[fill_param_3]` becomes `[fill_param_2]`, the count):
#                             fill's parity fails on wrong values
#   a bar.sync removed        sgemm's first barrier (between loading the tiles into
#                             shared memory and reading them): the race checker
#                             stops the launch, naming the race
#
# test_baseline_ptx.sh notices any difference from what clang 14.0.6 makes; these
# need no clang at all, only the simulator.
#
#   test_ptx_mutants.sh SOURCE_DIR BUILD_DIR
set -u
src=$1 build=$2
ptx=$build/generated/kernels-sm30.ptx
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

export EMBER_TEST_DEVICE=cuda:0 EMBER_CUDA_LIBRARY="$build/tests/libfake-cuda.so" EMBER_FAKE_CUDA_EXEC=ptx
export EMBER_FAKE_CUDA_GPUS="30:Quadro K2100M (simulated)" EMBER_FAKE_CUDA_DRIVER=10010
export EMBER_CUDA_KERNELS=baseline EMBER_NVRTC=none EMBER_CACHE_DIR="$TMP/cache"

# parity of one primitive with the PTX in FILE in place of the built-in one: output in $TMP/out
parity() { # FILE PRIMITIVE
    EMBER_FAKE_CUDA_PTX=$1 "$build/tests/test_parity" -b cuda -o "$2" >"$TMP/out" 2>&1
}

# an edit of one line of one kernel, checked to have changed exactly one line
mutate() { # KERNEL PATTERN EDIT-SED OUT
    awk -v kernel="$1" -v pattern="$2" -v edit="$3" '
        /\.entry / { inside = index($0, ".entry " kernel "(") > 0 }
        inside && !done && $0 ~ pattern {
            if (edit == "delete") { done = 1; next }
            n = split(edit, e, "/"); sub(e[1], e[2]); done = 1
        }
        { print }' "$ptx" >"$4"
    changed=$(diff "$ptx" "$4" | grep -c '^[<>]')
    [ "$changed" -ge 1 ] && [ "$changed" -le 2 ] || { fail "the mutation of $1 changed $changed lines"; return 1; }
    diff "$ptx" "$4" | sed 's/^/  /'
}

cp "$ptx" "$TMP/unchanged.ptx"
parity "$TMP/unchanged.ptx" fill
grep -q "kernels: built-in sm_30 PTX" "$TMP/out" && grep -q "test_parity: ok" "$TMP/out" ||
    fail "the unchanged copy does not pass: $(cat "$TMP/out")"

echo "one operand changed:"
if mutate fill 'ld\.param\.f32' 'fill_param_3/fill_param_2' "$TMP/operand.ptx"; then
    if parity "$TMP/operand.ptx" fill; then
        fail "fill with a changed operand passes its parity: $(cat "$TMP/out")"
    else
        grep -q "check failed: .*cuda fill: .* normalised mean squared error" "$TMP/out" ||
            fail "fill with a changed operand failed, but not on wrong values: $(cat "$TMP/out")"
    fi
    grep "check failed" "$TMP/out" | head -n 1
fi

echo "a bar.sync removed:"
if mutate sgemm 'bar\.sync' delete "$TMP/barrier.ptx"; then
    if parity "$TMP/barrier.ptx" sgemm; then
        fail "sgemm without its first barrier passes its parity: $(cat "$TMP/out")"
    else
        grep -q "kernel sgemm, block .*: a shared-memory race" "$TMP/out" ||
            fail "sgemm without its first barrier failed, but not by the race checker: $(cat "$TMP/out")"
    fi
    grep "fake libcuda: kernel sgemm" "$TMP/out" | head -n 1
fi

[ "$failures" -eq 0 ] && echo "test_ptx_mutants: ok" && exit 0
echo "test_ptx_mutants: $failures failure(s)"
exit 1
