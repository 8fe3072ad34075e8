#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/test.sh — the whole test suite: set up (test packages included),
# build, run every test, build twice more with backends left out and run the
# quick tests there, cross-build for Windows and run its tests under Wine
# (scripts/windows-test.sh), fuzz every loader briefly, then rebuild with
# AddressSanitizer and UndefinedBehaviorSanitizer and run the unit, ops and cli tests again.
# Tests run as many at a time as there are cores: the longest ones (the
# CUDA test double's, which run kernels on one core) start first.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/setup.sh --tests
# every test but the long ones (label long: a whole epoch of ResNet-8 on PoCL; ctest -L long)
ctest --test-dir build --output-on-failure -j "$jobs" -LE long

# Every backend but the CPU's can be left out (docs/embedding.md). Each is
# off in one of these two builds, which must build warnings-clean and pass
# the quick tests; only what those need is built.
quick="test_tensor test_gradcheck test_parity test_schedule test_models test_kernel_list"
backends_off() { # DIR CMAKE-OPTIONS...
    dir=$1
    shift
    echo "test: a build with $* in $dir/"
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON "$@" >/dev/null
    # shellcheck disable=SC2086 # lists of targets and of tests
    cmake --build "$dir" -j "$jobs" --target ember ember_cli $quick
    # shellcheck disable=SC2086
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" -R "^($(echo $quick | tr ' ' '|'))\$"
}
backends_off build-nocuda -DEMBER_CUDA=OFF
backends_off build-noopencl-noblas -DEMBER_OPENCL=OFF -DEMBER_OPENBLAS=OFF -DEMBER_MPI=OFF
# a program built without MPI, started by mpirun, says how to get MPI
# rather than train two separate models
echo "test: ember train under mpirun, built without MPI"
if OMPI_COMM_WORLD_SIZE=2 build-noopencl-noblas/ember train --steps 1 >build-noopencl-noblas/nompi.out 2>&1; then
    echo "FAILED: a build without MPI trained as one of two ranks"; exit 1
fi
grep -q "built without MPI.*libopenmpi-dev" build-noopencl-noblas/nompi.out ||
    { echo "FAILED: no advice: $(cat build-noopencl-noblas/nompi.out)"; exit 1; }

# The Windows build (mingw-w64), its zip, and its tests under Wine (docs/windows.md)
echo "test: the Windows build under Wine in build-win/"
scripts/windows-test.sh

# Every loader of untrusted files under libFuzzer for a few seconds each,
# from seeds made of real files (tests/fuzz; docs/reliability.md has the
# long runs). Only the harnesses are built.
echo "test: the fuzz harnesses (clang, libFuzzer, ASan + UBSan) in build-fuzz/"
fuzzers="fuzz_idx fuzz_cifar fuzz_safetensors fuzz_png fuzz_jpeg fuzz_bmp fuzz_model_file fuzz_trace fuzz_onnx fuzz_csv fuzz_npy fuzz_model_checkpoint fuzz_resume fuzz_plot fuzz_predict fuzz_text fuzz_vocab fuzz_output"
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_SANITIZE=ON -DEMBER_FUZZ=ON \
    -DEMBER_WERROR=ON -DEMBER_FUZZ_SECONDS=4 >/dev/null
# shellcheck disable=SC2086 # a list of targets
cmake --build build-fuzz -j "$jobs" --target $fuzzers fuzz_seeds
ctest --test-dir build-fuzz --output-on-failure -j "$jobs" -L fuzz

echo "test: sanitizer build (ASan + UBSan) in build-asan/"
python=$(sed -n 's/^EMBER_PYTHON:[A-Z]*=//p' build/CMakeCache.txt)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEMBER_SANITIZE=ON -DEMBER_WERROR=ON \
    -DEMBER_PYTHON="$python" >/dev/null
cmake --build build-asan -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L "unit|ops|cli"
