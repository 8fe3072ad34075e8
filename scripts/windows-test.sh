#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/windows-test.sh — the Windows build's tests, under Wine, as
# scripts/test.sh runs them: makes the zip (scripts/windows-package.sh),
# builds the Windows tests (tests/windows/tests.cmake) and runs them with
# ctest, then the zip as a user meets it (tests/windows/test_wine_cli.sh),
# against the Linux build in build/. docs/windows.md says what this covers
# and what it does not.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/windows-package.sh
scripts/windows-deps.sh build-win/deps --tests
# one Wine prefix for every test, made here once (about 10 s), without Wine's
# offer to fetch Mono and Gecko (nothing here uses .NET or HTML)
export WINEPREFIX="$PWD/build-win/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[ -d "$WINEPREFIX" ] || wine wineboot --init >/dev/null 2>&1 || true
cmake --build build-win -j "$jobs"
# A Windows program of our own keeps Wine's server and its services running
# while the tests do, started here with its output to a file: else the
# first test's wine starts them, they keep that test's output open, and ctest
# holds one of its slots for that test to the end (it took the stage 56 s, 26 with this)
: >build-win/keeper.txt
wine build-win/tests/hold_open.exe build-win/keeper.txt 3600 >build-win/keeper.out 2>&1 &
keeper=$!
trap 'kill $keeper 2>/dev/null' EXIT
i=0
until grep -q held build-win/keeper.out || [ $i -ge 60 ]; do sleep 0.5; i=$((i + 1)); done
ctest --test-dir build-win --output-on-failure -j "$jobs"
kill $keeper
trap - EXIT
EMBER_WINEPREFIX=$WINEPREFIX EMBER_HOLD_OPEN="$PWD/build-win/tests/hold_open.exe" \
    EMBER_WINE_DOUBLE="$PWD/build-win/tests/libfake-cuda.dll" sh tests/windows/test_wine_cli.sh "$PWD/build-win/ember-$(sed -n \
    's/^CMAKE_PROJECT_VERSION:STATIC=//p' build-win/CMakeCache.txt)-win64.zip" "$PWD/build/ember" \
    "$PWD/build-win/deps/cu11/nvidia/cuda_nvrtc/bin" "$PWD/build/cu11/nvidia/cuda_nvrtc/lib"
