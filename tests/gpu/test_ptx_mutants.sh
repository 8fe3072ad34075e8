#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_ptx_mutants.sh — a wrong built-in PTX fails through execution,
# whatever clang is installed. Copies of the built-in PTX (the module the build joins
# from backends/cuda/baseline/<family>-sm30.ptx, BUILD_DIR/generated/kernels-sm30.ptx)
# with one thing changed are run on the simulated Quadro K2100M as its suites run
# it (the CUDA test double in PTX mode, EMBER_FAKE_CUDA_PTX putting the copy in
# place of the PTX ember loads; buffers of exact sizes, the numerics check and a
# lowered grid: test_simulated_gpu.sh):
#
#   unchanged                 the copy itself: fill's parity passes (so what fails
#                             below fails for its change)
#   one operand changed       fill reads its value from the parameter before its own
#                             (`[fill_param_3]` becomes `[fill_param_2]`, the count):
#                             wrong values, which the numerics check stops
#   a bar.sync removed        sgemm's first barrier (between loading the tiles into
#                             shared memory and reading them): the race checker
#                             stops the launch, naming the race
#   a bar.sync moved          reduce's first barrier above the store it waits for:
#                             the race checker
#   a register read before    fill adds its own index register to itself instead of
#   it is written             `first`: the initcheck names the register
#   `first` ignored           fill's index without `first`: right while a launch
#                             covers all the work, wrong from the second chunk of a
#                             lowered grid on
#   an off-by-one             fill writes one element past its count: in a tensor of
#                             gradcheck (no guard words there), the memcheck at the
#                             buffer's exact size
#   an .rz                    reduce's partial sums rounded toward zero, and sgemm's
#                             multiply-adds: the numerics check
#   a changed constant        softmath's ln 2 (its upper part) one ulp off in
#                             unary_dense_math: the numerics check
#
# Each row finds its target by kernel name and instruction pattern, not by line.
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
export EMBER_EXACT_BUFFERS=1 EMBER_FAKE_CUDA_NUMERICS=1 EMBER_FAKE_CUDA_GRID_X=8

# parity of one primitive with the PTX in FILE in place of the built-in one: output in $TMP/out
parity() { # FILE PRIMITIVE
    EMBER_FAKE_CUDA_PTX=$1 "$build/tests/test_parity" -b cuda -o "$2" >"$TMP/out" 2>&1
}

# gradcheck of one op with the PTX in FILE: output in $TMP/out
gradcheck() { # FILE OP
    EMBER_FAKE_CUDA_PTX=$1 "$build/tests/test_gradcheck" -o "$2" >"$TMP/out" 2>&1
}

# the run in $TMP/out failed, with a line matching PATTERN (else a failure of the test)
failed_with() { # WHAT PATTERN
    if ! grep -q "check failed\|FAILED" "$TMP/out"; then
        fail "$1 passes: $(tail -n 5 "$TMP/out")"
    elif ! grep -q "$2" "$TMP/out"; then
        fail "$1 failed, but not as expected ($2): $(head -n 5 "$TMP/out")"
    fi
    grep "fake libcuda: \|check failed" "$TMP/out" | head -n 1
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

# the first line of KERNEL matching PATTERN swapped with the line after it
swap() { # KERNEL PATTERN OUT
    awk -v kernel="$1" -v pattern="$2" '
        /\.entry / { inside = index($0, ".entry " kernel "(") > 0 }
        held != "" { print; print held; held = ""; next }
        inside && !done && $0 ~ pattern { held = $0; done = 1; next }
        { print }' "$ptx" >"$3"
    changed=$(diff "$ptx" "$3" | grep -c '^[<>]')
    [ "$changed" -eq 2 ] || { fail "the swap in $1 changed $changed lines"; return 1; }
    diff "$ptx" "$3" | sed 's/^/  /'
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
        grep -q "check failed: .*cuda fill: .* normalised mean squared error\|kernel fill: the numerics check" "$TMP/out" ||
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

echo "a bar.sync moved:"
if swap reduce 'st\.shared\.f32' "$TMP/moved.ptx"; then
    parity "$TMP/moved.ptx" reduce
    failed_with "reduce with its barrier above its store" "kernel reduce, block .*: a shared-memory race"
fi

echo "a register read before it is written:"
if mutate fill 'add\.s32' '%r5;/%r8;' "$TMP/unwritten.ptx"; then
    parity "$TMP/unwritten.ptx" fill
    failed_with "fill reading a register it never wrote" "kernel fill, block .*, PTX line [0-9]* (add.s32 %r8, %r7, %r8): it reads %r8, which this thread has never written"
fi

echo "first ignored:"
if mutate fill 'add\.s32' 'add\.s32[^,]*, %r7, %r5/mov.u32 \t%r8, %r7' "$TMP/first.ptx"; then
    parity "$TMP/first.ptx" fill
    failed_with "fill ignoring its first element" "kernel fill: the numerics check"
fi

echo "an off-by-one:"
if mutate fill 'setp\.ge\.s32' 'setp\.ge/setp.gt' "$TMP/overrun.ptx"; then
    gradcheck "$TMP/overrun.ptx" relu
    failed_with "fill writing one element past its count" "kernel fill, block .*, PTX line [0-9]* (st.global.f32 .*): a 4-byte access at .*just past the end of an allocation"
fi

echo "an .rz:"
if mutate reduce 'add\.rn\.f32' 'add\.rn/add.rz' "$TMP/add-rz.ptx"; then
    parity "$TMP/add-rz.ptx" reduce
    failed_with "reduce's sums rounded toward zero" "kernel reduce: the numerics check"
fi
if mutate sgemm 'fma\.rn\.f32' 'fma\.rn/fma.rz' "$TMP/fma-rz.ptx"; then
    parity "$TMP/fma-rz.ptx" sgemm
    failed_with "sgemm's multiply-adds rounded toward zero" "kernel sgemm: the numerics check"
fi

echo "a changed constant:"
if mutate unary_dense_math 'mul\.rn\.f32.*0fBF317200' '0fBF317200/0fBF317201' "$TMP/constant.ptx"; then
    parity "$TMP/constant.ptx" unary
    failed_with "unary_dense_math with ln 2 one ulp off" "kernel unary_dense_math: the numerics check"
fi

[ "$failures" -eq 0 ] && echo "test_ptx_mutants: ok" && exit 0
echo "test_ptx_mutants: $failures failure(s)"
exit 1
