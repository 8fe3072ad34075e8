#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/windows-deps.sh — fetches what ember's Windows build links that
# Debian does not package for mingw-w64: OpenBLAS, from PyPI's
# scipy-openblas32 wheel for win_amd64 (a DLL built by OpenBLAS's own
# maintainers for NumPy and SciPy, with an import library and cblas.h; its
# symbols carry the prefix scipy_). The wheel is a zip; pip checks it against
# PyPI's hash, nothing is installed into any Python.
#
#   scripts/windows-deps.sh [DIR]    DIR defaults to build-win/deps; it gets
#                                    openblas/{include,lib,bin}
#   scripts/windows-deps.sh DIR --tests   also NVIDIA's NVRTC 11.8 for Windows
#                                    (the nvidia-cuda-nvrtc-cu11 wheel's DLLs)
#                                    and its ptxas.exe (nvidia-cuda-nvcc-cu11's)
#                                    in DIR/cu11, which the tests run under Wine
#
# zlib comes from Debian's libz-mingw-w64-dev, PNG and JPEG from Windows'
# own decoders (io/image-wic.c); docs/windows.md says which versions ship.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-win/deps}
tests=${2:-}
# the versions docs/windows.md names; change both together
openblas_wheel=scipy-openblas32==0.3.34.481.3
nvrtc_wheel=nvidia-cuda-nvrtc-cu11==11.8.89
nvcc_wheel=nvidia-cuda-nvcc-cu11==11.8.89 # its ptxas.exe, for `ember ptx --resources` under Wine
python=$(command -v python3) || { echo "windows-deps: python3 (with pip) is needed to fetch the wheels" >&2; exit 1; }
if [ "$tests" = --tests ] && [ ! -f "$dir/cu11/nvidia/cuda_nvrtc/bin/nvrtc64_112_0.dll" ]; then
    mkdir -p "$dir/download"
    if "$python" -m pip download -q --only-binary=:all: --platform win_amd64 --no-deps -d "$dir/download" \
        "$nvrtc_wheel"; then
        rm -rf "$dir/cu11"
        "$python" -m zipfile -e "$dir"/download/nvidia_cuda_nvrtc_cu11-*-win_amd64.whl "$dir/cu11"
        echo "windows-deps: NVRTC for Windows ($nvrtc_wheel) in $dir/cu11"
    else
        echo "windows-deps: could not download $nvrtc_wheel for win_amd64; its test will say skipped" >&2
    fi
fi
if [ "$tests" = --tests ] && [ ! -f "$dir/cu11/nvidia/cuda_nvcc/bin/ptxas.exe" ]; then
    mkdir -p "$dir/download"
    if "$python" -m pip download -q --only-binary=:all: --platform win_amd64 --no-deps -d "$dir/download" \
        "$nvcc_wheel"; then
        "$python" -m zipfile -e "$dir"/download/nvidia_cuda_nvcc_cu11-*-win_amd64.whl "$dir/cu11"
        echo "windows-deps: ptxas for Windows ($nvcc_wheel) in $dir/cu11"
    else
        echo "windows-deps: could not download $nvcc_wheel for win_amd64; its test will say skipped" >&2
    fi
fi
[ -f "$dir/openblas/bin/libscipy_openblas.dll" ] && exit 0
mkdir -p "$dir/download"
if ! "$python" -m pip download -q --only-binary=:all: --platform win_amd64 --no-deps \
    -d "$dir/download" "$openblas_wheel"; then
    echo "windows-deps: could not download $openblas_wheel for win_amd64 from PyPI" >&2
    exit 1
fi
rm -rf "$dir/openblas" "$dir/unpacked"
"$python" -m zipfile -e "$dir"/download/scipy_openblas32-*-win_amd64.whl "$dir/unpacked"
mkdir -p "$dir/openblas/bin"
mv "$dir/unpacked/scipy_openblas32/include" "$dir/unpacked/scipy_openblas32/lib" "$dir/openblas/"
mv "$dir/openblas/lib/libscipy_openblas.dll" "$dir/openblas/bin/"
rm -rf "$dir/unpacked"
echo "windows-deps: OpenBLAS ($openblas_wheel) in $dir/openblas"
