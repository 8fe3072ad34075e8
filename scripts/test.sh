#!/bin/sh
# scripts/test.sh — the whole test suite: set up (test packages included),
# build, run every test, then rebuild with AddressSanitizer and
# UndefinedBehaviorSanitizer and run the unit, ops and cli tests again.
# Tests run as many at a time as there are cores: the longest ones (the
# CUDA test double's, which run kernels on one core) start first.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/setup.sh --tests
ctest --test-dir build --output-on-failure -j "$jobs"

echo "test: sanitizer build (ASan + UBSan) in build-asan/"
python=$(sed -n 's/^EMBER_PYTHON:[A-Z]*=//p' build/CMakeCache.txt)
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEMBER_SANITIZE=ON -DEMBER_WERROR=ON \
    -DEMBER_PYTHON="$python" >/dev/null
cmake --build build-asan -j "$(nproc)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -L "unit|ops|cli"
