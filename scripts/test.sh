#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/test.sh — the test suite: set up (test packages included), build,
# run its tests, build once more with every backend but the CPU's left out
# and run the quick tests there, cross-build for Windows and run its tests
# under Wine (scripts/windows-test.sh; on x86-64), then rebuild with
# AddressSanitizer and UndefinedBehaviorSanitizer and run the unit and ops
# tests and the CLI's hostile-input tests again: under 20 minutes on a
# 2-core laptop. With --full, as CI runs it (.ci/run), it also runs the
# tests labelled full (tests/CMakeLists.txt says which and why: deeper or
# repeated forms of the quick suite's), builds without backends twice (each
# half left out alone), fuzzes every loader briefly, and runs every unit,
# ops and cli test under the sanitizers.
# Every stage runs even when one before it failed; the failed ones are listed
# at the end, and the exit status is 1 if any did (a failed setup stops it).
# Tests run as many at a time as there are cores: the longest ones (the
# CUDA test double's, which run kernels on one core) start first. Each test is
# held to a limit on its CPU time, not on the clock (tests/README.md), so a
# busy machine passes as an idle one does; the heaviest tests' CPU seconds
# are listed at the end. Left out always: the tests labelled long (ctest -L long).
#
#   scripts/test.sh [--full] [--load N]
#
#   --full     the full suite, as CI runs it (about 35 minutes here)
#   --load N   run the main stage beside N CPU-bound processes, as a laptop
#              running other work would (CI: --load 2)
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -u
cd "$(dirname "$0")/.." || exit 1
load=0 full=""
while [ $# -gt 0 ]; do
    case $1 in
    --full) full=1 ;;
    --load)
        load=${2:-}
        case $load in '' | *[!0-9]*) echo "test: --load wants a number of processes" >&2; exit 2 ;; esac
        shift
        ;;
    *) echo "test: unknown option \"$1\" (scripts/test.sh --help)" >&2; exit 2 ;;
    esac
    shift
done
jobs=$(nproc)
began=$(date +%s)
scripts/setup.sh --tests || { echo "test: scripts/setup.sh --tests failed: nothing to test" >&2; exit 1; }

failed="" took="
  $(($(date +%s) - began)) s  the set-up and build/'s build (scripts/setup.sh --tests)"
# stage NAME COMMAND...: runs one stage; a failure is noted and the next stage runs; its time is kept
stage() {
    name=$1
    shift
    echo "test: $name"
    start=$(date +%s)
    "$@" || failed="$failed
  $name"
    took="$took
  $(($(date +%s) - start)) s  $name"
}

# every test but the long ones (and the full suite's, unless --full), each
# one's CPU seconds in build/test-cpu.log
left_out=long
[ -n "$full" ] || left_out="long|full"
cpu_log=$PWD/build/test-cpu.log
burners=""
# shellcheck disable=SC2086 # a list of process ids
trap '[ -z "$burners" ] || kill $burners 2>/dev/null' EXIT
trap 'exit 130' INT TERM
main_tests() {
    rm -f "$cpu_log"
    i=0
    while [ "$i" -lt "$load" ]; do
        sh -c 'while :; do :; done' &
        burners="$burners $!"
        i=$((i + 1))
    done
    EMBER_TEST_CPU_LOG=$cpu_log ctest --test-dir build --output-on-failure -j "$jobs" -LE "$left_out"
    rc=$?
    # shellcheck disable=SC2086 # a list of process ids
    [ -z "$burners" ] || kill $burners
    burners=""
    return $rc
}
stage "every test but the $(echo "$left_out" | sed 's/|/ and the /') ones, in build/$([ "$load" -gt 0 ] && echo ", beside $load CPU-bound processes")" main_tests

# Every backend but the CPU's can be left out (docs/embedding.md): the quick
# suite leaves them all out of one build, --full each out of one of two
# (CUDA alone; OpenCL, OpenBLAS and MPI), so that neither half leans on the
# other. Each must build warnings-clean and pass the quick tests; only what
# those need is built (cpu-limit runs them).
quick="test_tensor test_gradcheck test_parity test_schedule test_models test_kernel_list"
backends_off() { # DIR CMAKE-OPTIONS...
    dir=$1
    shift
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON "$@" >/dev/null || return 1
    # shellcheck disable=SC2086 # lists of targets and of tests
    cmake --build "$dir" -j "$jobs" --target ember ember_cli cpu-limit $quick || return 1
    # shellcheck disable=SC2086
    ctest --test-dir "$dir" --output-on-failure -j "$jobs" -R "^($(echo $quick | tr ' ' '|'))\$"
}
if [ -n "$full" ]; then
    stage "a build without CUDA in build-nocuda/" backends_off build-nocuda -DEMBER_CUDA=OFF
    nompi=build-noopencl-noblas
    stage "a build without OpenCL, OpenBLAS and MPI in $nompi/" \
        backends_off $nompi -DEMBER_OPENCL=OFF -DEMBER_OPENBLAS=OFF -DEMBER_MPI=OFF
else
    nompi=build-cpu-only
    stage "a build without CUDA, OpenCL, OpenBLAS and MPI in $nompi/" \
        backends_off $nompi -DEMBER_CUDA=OFF -DEMBER_OPENCL=OFF -DEMBER_OPENBLAS=OFF -DEMBER_MPI=OFF
fi

# a program built without MPI, started by mpirun, says how to get MPI
# rather than train two separate models
without_mpi() {
    out=$nompi/nompi.out
    if OMPI_COMM_WORLD_SIZE=2 $nompi/ember train --steps 1 >$out 2>&1; then
        echo "FAILED: a build without MPI trained as one of two ranks"
        return 1
    fi
    grep -q "built without MPI.*libopenmpi-dev" $out || { echo "FAILED: no advice: $(cat $out)"; return 1; }
}
stage "ember train under mpirun, built without MPI" without_mpi

# The Windows build (mingw-w64), its zip, and its tests under Wine (docs/windows.md),
# on x86-64 alone: Wine runs a processor's own programs, and the zip is x86-64's
if [ "$(uname -m)" = x86_64 ]; then
    stage "the Windows build under Wine in build-win/" scripts/windows-test.sh
else
    echo "test: the Windows build's tests left out: Wine runs x86-64 Windows programs on x86-64 alone, not on $(uname -m)"
fi

# Every loader of untrusted files under libFuzzer for a few seconds each,
# from seeds made of real files (tests/fuzz; docs/reliability.md has the
# long runs). Only the harnesses are built (and cpu-limit, which runs them).
fuzzers="fuzz_idx fuzz_cifar fuzz_safetensors fuzz_png fuzz_jpeg fuzz_bmp fuzz_model_file fuzz_trace fuzz_onnx fuzz_csv fuzz_npy fuzz_model_checkpoint fuzz_resume fuzz_plot fuzz_predict fuzz_text fuzz_vocab fuzz_output fuzz_gguf fuzz_chat"
fuzz() {
    CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_SANITIZE=ON -DEMBER_FUZZ=ON \
        -DEMBER_WERROR=ON -DEMBER_FUZZ_SECONDS=2 >/dev/null || return 1
    # shellcheck disable=SC2086 # a list of targets
    cmake --build build-fuzz -j "$jobs" --target cpu-limit $fuzzers fuzz_seeds || return 1
    ctest --test-dir build-fuzz --output-on-failure -j "$jobs" -L fuzz
}
[ -z "$full" ] || stage "the fuzz harnesses (clang, libFuzzer, ASan + UBSan) in build-fuzz/" fuzz

# Built at -O1 (-g and frame pointers kept): its tests took 365 s at -O0, 271 s at -O1.
# The quick suite runs the unit and ops tests on the CPU, PoCL and the CUDA
# double's built-in PTX path, and the CLI's tests of hostile input and of what
# it writes; --full runs every unit, ops and cli test (about 380 s more on
# 2026-12-03: the double's other kernel paths, the simulated GPUs and the
# CLI's training runs), as CI does.
sanitized() {
    python=$(sed -n 's/^EMBER_PYTHON:[A-Z]*=//p' build/CMakeCache.txt)
    cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DEMBER_SANITIZE=ON -DEMBER_WERROR=ON \
        -DEMBER_PYTHON="$python" >/dev/null || return 1
    cmake --build build-asan -j "$jobs" || return 1
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    if [ -z "$full" ]; then
        ctest --test-dir build-asan --output-on-failure -j "$jobs" -L "unit|ops" -LE "full|ptxsim" \
            -E 'cuda_double_(nvrtc|k40m)' || return 1
        ctest --test-dir build-asan --output-on-failure -j "$jobs" -R '^(test_data_errors|test_outputs)$'
        return
    fi
    # (of the Jetsons, the Nano's training steps: the mapped copies; their other
    # suites run the built-in PTX as the K2100M's do, which this runs already. Left out
    # too: test_ptx_simulate, whose simulator the simulated_* suites run here, and
    # test_crash and test_compile_notice, which kill and time processes: together 165 s
    # of this stage, measured on 2026-12-03)
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L "unit|ops|cli" \
        -E '^(simulated_(nano_parity|nano_gradcheck|tx2_train)|test_ptx_simulate|test_crash|test_compile_notice)$'
}
stage "the sanitizer build (ASan + UBSan) in build-asan/" sanitized

echo "test: the stages' times (the clock's seconds):$took"
if [ -s "$cpu_log" ]; then
    echo "test: the heaviest tests of build/ (CPU seconds, wall seconds; all in build/test-cpu.log):"
    sort -k2 -n -r "$cpu_log" | head -12 | awk '{ printf "  %-40s %7.1f %7.1f\n", $1, $2, $3 }'
fi
if [ -n "$failed" ]; then
    echo "test: FAILED:$failed"
    exit 1
fi
echo "test: every stage passed"
