#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/arm-test.sh — the 64-bit ARM build's tests, under emulation, as
# scripts/windows-test.sh runs the Windows build's under Wine: installs what
# is missing (scripts/setup.sh --arm), cross-builds into build-arm
# (cmake/aarch64-linux-gnu.cmake), runs its unit, ops, models and CLI tests
# under qemu-user with ctest, the CPU's with NEON (the default) and with plain
# loops (EMBER_CPU_SIMD=none), and the CUDA test double as a Jetson Nano and
# a TX2 inside the emulated process; then makes the arm64 .deb, installs it
# into an arm64 root with dpkg, and runs `ember devices`, a few training
# steps and the C API example from it.
# docs/embedded.md says what this covers and what only a board can show.
#
#   scripts/arm-test.sh          all of it (about 15 minutes on two cores)
#
# .ci/run runs it after scripts/test.sh; it is not part of that command's
# 20 minutes. Emulation times nothing: no figure here is a speed.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc)
scripts/setup.sh --arm
cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_WERROR=ON >/dev/null
cmake --build build-arm -j "$jobs"

# The tests: the library's units (the C API's embedding test among them),
# every primitive and gradient on the CPU (NEON, and plain loops), the
# models, every loader's fuzz regressions, the Jetsons, and the program's
# data errors, output paths and completion. Left out, each run by the
# native build: OpenCL (no ARM PoCL here); the simulated desktop GPUs and
# NVRTC (x86 libraries); the interop tests against PyTorch and ONNX
# Runtime (the arithmetic is the same C); the long ones; test_devices (the
# x86 CUDA toolkit's stub); test_memory and test_memory_limits (qemu
# reserves the guest's address space itself, so an address-space limit
# means something else under it); and the CLI tests that train on all of
# Fashion-MNIST or hold the program to seconds of the clock, minutes each
# under qemu (test_cli, _plot, _crash, _generate, _lm, _lora, _predict,
# _profile).
skip='_vs_|interop|onnx_node|_cuda_(double|nvrtc|baseline)|^test_cuda_(backend|nvrtc|path)|compile_notice|ptx_'
skip="$skip|^test_devices\$|^test_memory|^test_(cli|plot|crash|generate|lm|lora|predict|profile)\$"
ctest --test-dir build-arm --output-on-failure -j "$jobs" -L 'unit|ops|models|cli|jetson' \
    -LE 'opencl|long|project|install' -E "$skip"

# The package as a board owner installs it: the arm64 .deb installed by
# dpkg into a root of its own (this machine's dpkg, amd64, so told the
# architecture is meant; the root's database lacks the libraries it depends
# on: they are Debian's arm64 packages beside this machine's, each Depends
# checked against them below), the program and the C API example run from
# there under qemu.
rm -rf build-arm/package build-arm/root
cpack --config build-arm/CPackConfig.cmake -B build-arm/package >/dev/null
deb=$(ls build-arm/package/ember_*_arm64.deb)
root=$PWD/build-arm/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
dpkg --root="$root" --force-depends --force-architecture --force-script-chrootless -i "$deb" >/dev/null 2>&1 ||
    dpkg --root="$root" --force-depends --force-architecture --force-script-chrootless -i "$deb"
dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Architecture} ${Status}\n' ember | grep -qx 'arm64 install ok installed'
dpkg-deb --field "$deb" Depends | tr ',' '\n' | while read -r clause; do
    name=${clause%% *}
    dpkg-query -W -f='${Status}' "${name%%|*}:arm64" 2>/dev/null | grep -q "install ok installed" ||
        { echo "arm-test: the package depends on $clause, which is not an installed arm64 package" >&2; exit 1; }
done
qemu="qemu-aarch64-static -L $root"
$qemu "$root/usr/bin/ember" --version
$qemu "$root/usr/bin/ember" devices
# a model trained by the packaged program for a few steps, for the example
$qemu "$root/usr/bin/ember" train --model simplecnn --steps 40 --batch 32 --seed 0 \
    --save build-arm/arm.safetensors --log-every 20
aarch64-linux-gnu-gcc -O2 -o build-arm/classify examples/classify.c -I"$root/usr/include" \
    -L"$root/usr/lib" -lember
echo "the C API example, built against the package and run under qemu:"
$qemu build-arm/classify build-arm/arm.safetensors examples/images/boot.png
echo "arm-test: the arm64 build passed under emulation"
