#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_compile_notice.sh — a compile the user waits for says so, and
# --verbose tells the truth about the cache (README, "Devices"):
#
#   - OpenCL (PoCL, opencl:0): the first run with an empty ember cache says
#     "compiling kernels for opencl:0 (...) (once; kept in DIR/opencl)" and
#     how long it took; on a terminal a line counts the seconds; the next
#     run says nothing of compiling, and with --verbose names the cache file
#     it read and that PoCL compiles each kernel once more at its first
#     launch (it does, into a cache of its own: POCL_CACHE_DIR, emptied here
#     so that the compile lasts long enough to be counted);
#   - CUDA, through the test double with CUDA 11.8's NVRTC: the same for
#     cuda:0's NVRTC path, and nothing for the built-in PTX, which the
#     driver's own cache may answer at once.
#
#   test_compile_notice.sh EMBER [FAKE_CUDA CU11_NVRTC_DIR]
set -u
EMBER=$1 FAKE_CUDA=${2:-} CU11=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"
checked=""

TRAIN="train --data random --steps 2 --no-eval --quiet"
# Under LeakSanitizer (the ASan build), PoCL's compiler, LLVM, leaves what it
# allocated while compiling to the process's end: theirs, not ember's, and
# only these runs make PoCL compile in the process (its cache emptied).
printf 'leak:libpocl.so\nleak:libLLVM\n' >"$TMP/lsan.supp"
export LSAN_OPTIONS="suppressions=$TMP/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
if "$EMBER" devices | grep -q "^ *opencl:0 .*usable\|opencl:0.*opens when named"; then
    CL="EMBER_CACHE_DIR=$TMP/cache POCL_CACHE_DIR=$TMP/pocl"
    # The first run compiles (15 s of PoCL, twice that under ASan: done once). Where
    # script(1) is, it runs on a terminal, whose line counts the seconds as well.
    if command -v script >/dev/null 2>&1; then
        # shellcheck disable=SC2086 # CL is a list of assignments
        env $CL script -qec "$EMBER $TRAIN --device opencl:0" "$TMP/tty" </dev/null >/dev/null 2>&1
        status=$?
        tr '\r' '\n' <"$TMP/tty" >"$TMP/err"
        : >"$TMP/out"
        grep -q "compiling kernels for opencl:0: 1 s" "$TMP/err" ||
            fail "on a terminal, no count of the seconds while compiling: $(head -5 "$TMP/err")"
    else
        echo "note: no script(1): the terminal's count of seconds not checked"
        # shellcheck disable=SC2086 # TRAIN is a list of arguments
        run "$CL" -- $TRAIN --device opencl:0
    fi
    expect_status 0 "the first OpenCL run"
    expect_text "compiling kernels for opencl:0 (" "the first OpenCL run"
    expect_text "(once; kept in $TMP/cache/opencl)" "the first OpenCL run"
    expect_text "compiling kernels for opencl:0: done in " "the first OpenCL run"
    # shellcheck disable=SC2086
    run "$CL" -- $TRAIN --device opencl:0 --verbose
    grep -q "compiling" "$TMP/err" && fail "the second OpenCL run compiled again: $(cat "$TMP/err")"
    expect_text "kernels read from the cache: $TMP/cache/opencl/" "the second OpenCL run, --verbose"
    if grep -q "Portable Computing Language" "$TMP/err"; then
        expect_text "PoCL then compiles each kernel once more at its first launch" "the second run on PoCL, --verbose"
    fi
    checked="$checked opencl"
else
    echo "note: no OpenCL device (PoCL): its compile not checked"
fi

if [ -n "$FAKE_CUDA" ] && [ -n "$CU11" ] && [ -d "$CU11" ]; then
    K40="EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=35:K40m-double EMBER_FAKE_CUDA_DRIVER=11040 EMBER_NVRTC=only:$CU11 EMBER_CACHE_DIR=$TMP/cuda-cache"
    # shellcheck disable=SC2086
    run "$K40 EMBER_CUDA_KERNELS=nvrtc-cubin" -- $TRAIN --device cuda:0
    expect_status 0 "the first CUDA run"
    expect_text "compiling kernels for cuda:0 (K40m-double, NVRTC 11.8 cubin for sm_35) (once; kept in $TMP/cuda-cache/cuda)" "the first CUDA run"
    expect_text "compiling kernels for cuda:0: done in " "the first CUDA run"
    # shellcheck disable=SC2086
    run "$K40 EMBER_CUDA_KERNELS=nvrtc-cubin" -- $TRAIN --device cuda:0 --verbose
    grep -q "compiling" "$TMP/err" && fail "the second CUDA run compiled again: $(cat "$TMP/err")"
    expect_text "kernels read from the cache: $TMP/cuda-cache/cuda/" "the second CUDA run, --verbose"
    # shellcheck disable=SC2086
    run "$K40 EMBER_CUDA_KERNELS=baseline" -- $TRAIN --device cuda:0
    expect_status 0 "the built-in PTX"
    grep -q "compiling" "$TMP/err" && fail "the built-in PTX, JITted at once, was announced: $(cat "$TMP/err")"
    checked="$checked cuda"
else
    echo "note: no CUDA test double or CUDA 11.8 NVRTC (scripts/setup.sh --tests): the CUDA compile not checked"
fi
[ -n "$checked" ] || { echo "skipped: neither an OpenCL device nor the CUDA test double with an NVRTC"; exit 77; }
finish "compile notices:$checked"
