#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpu-pack.sh — gathers, on a development machine with a network,
# what a lent GPU machine (no network; an image with CUDA, PyTorch, CMake)
# lacks to build ember and run scripts/gpu-check.sh, into one folder of
# under 60 MiB:
#
#   DIR/prefix.tar.xz     headers and libraries from Debian's packages: stb_image.h,
#                         stb_image_write.h and stb_easy_font.h (libstb-dev), zlib.h and libz (zlib1g-dev), png.h
#                         and libpng16 (libpng-dev), jpeglib.h and libjpeg (libjpeg62-turbo-dev), cblas.h
#                         and libopenblas with libgfortran (libopenblas0-pthread), libOpenCL.so.1
#                         (ocl-icd-libopencl1, the loader NVIDIA's OpenCL driver plugs into),
#                         with a pkg-config file for OpenBLAS; unpacked by gpu-check.sh
#   DIR/fashion-mnist/    the four files of Debian's dataset-fashion-mnist
#   DIR/cu11-nvrtc.tar.xz CUDA 11.8's NVRTC (the nvidia-cuda-nvrtc-cu11 wheel), the last that
#                         compiles for Kepler: the old-toolkit path, run for real on the GPU
#   DIR/peers/            the team's PyTorch peer script (../shared/peers, or $PEERS), for the
#                         side-by-side speed on the same GPU
#   DIR/MANIFEST          what is in the folder, and from where
#
#   scripts/gpu-pack.sh DIR           (DIR is best under the repository, in a folder git
#                                      ignores, e.g. .gpu-pack: the device tool carries it)
# Then, on the GPU machine: scripts/gpu-check.sh --pack DIR OUTDIR
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
[ $# -eq 1 ] || { echo "usage: scripts/gpu-pack.sh DIR" >&2; exit 2; }
dir=$1
cd "$(dirname "$0")/.."
root=$(pwd)
case $dir in /*) ;; *) dir=$root/$dir ;; esac
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)

# --- Debian's packages, unpacked (no root needed) and cut down to what the build uses
packages="libstb-dev zlib1g zlib1g-dev libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0 ocl-icd-libopencl1 libpng16-16 libpng-dev libjpeg62-turbo libjpeg62-turbo-dev"
(cd "$tmp" && apt-get download $packages >/dev/null 2>"$tmp/apt.log") || {
    echo "gpu-pack: apt-get download failed (no network, or run apt-get update first):" >&2
    cat "$tmp/apt.log" >&2
    exit 1
}
mkdir -p "$tmp/root"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
p=$tmp/prefix
mkdir -p "$p/include/stb" "$p/lib/pkgconfig"
cp "$tmp/root/usr/include/stb/stb_image.h" "$tmp/root/usr/include/stb/stb_image_write.h" \
    "$tmp/root/usr/include/stb/stb_easy_font.h" "$p/include/stb/"
cp "$tmp/root/usr/include/zlib.h" "$tmp/root/usr/include/zconf.h" "$p/include/"
cp "$tmp/root/usr/include/$arch/openblas-pthread/cblas.h" "$tmp/root/usr/include/$arch/openblas-pthread/openblas_config.h" "$p/include/"
lib=$tmp/root/usr/lib/$arch
cp -L "$lib/openblas-pthread/libopenblas.so.0" "$p/lib/libopenblas.so.0"
ln -s libopenblas.so.0 "$p/lib/libopenblas.so"
cp -L "$tmp/root/lib/$arch/libz.so.1" "$p/lib/libz.so.1"
ln -s libz.so.1 "$p/lib/libz.so"
cp -L "$lib/libgfortran.so.5" "$lib/libquadmath.so.0" "$lib/libOpenCL.so.1" "$p/lib/"
# PNG (libpng) and JPEG (libjpeg-turbo): the image decoders
cp "$tmp/root/usr/include/libpng16/png.h" "$tmp/root/usr/include/libpng16/pngconf.h" \
    "$tmp/root/usr/include/libpng16/pnglibconf.h" "$p/include/"
cp "$tmp/root/usr/include/jpeglib.h" "$tmp/root/usr/include/jmorecfg.h" "$tmp/root/usr/include/jerror.h" \
    "$tmp/root/usr/include/$arch/jconfig.h" "$p/include/"
cp -L "$lib/libpng16.so.16" "$lib/libjpeg.so.62" "$p/lib/"
ln -s libpng16.so.16 "$p/lib/libpng16.so"
ln -s libpng16.so.16 "$p/lib/libpng.so"
ln -s libjpeg.so.62 "$p/lib/libjpeg.so"
version=$(sed -n 's/^version=//p' "$lib/openblas-pthread/pkgconfig/openblas.pc")
cat >"$p/lib/pkgconfig/openblas.pc" <<EOF
prefix=\${pcfiledir}/../..
Name: openblas
Description: OpenBLAS from Debian's libopenblas0-pthread, packed by ember's scripts/gpu-pack.sh
Version: $version
Libs: -L\${prefix}/lib -lopenblas
Cflags: -I\${prefix}/include
EOF
tar -C "$tmp" -cf - prefix | xz -9 -T0 >"$dir/prefix.tar.xz"

# --- Fashion-MNIST: the installed data set, else Debian's package unpacked
data=/usr/share/datasets/fashion-mnist
if [ ! -f "$data/train-images-idx3-ubyte.gz" ]; then
    (cd "$tmp" && apt-get download dataset-fashion-mnist >/dev/null) || {
        echo "gpu-pack: cannot get dataset-fashion-mnist" >&2
        exit 1
    }
    dpkg-deb -x "$tmp"/dataset-fashion-mnist_*.deb "$tmp/data"
    data=$tmp/data/usr/share/datasets/fashion-mnist
fi
mkdir -p "$dir/fashion-mnist"
cp "$data"/*-ubyte.gz "$dir/fashion-mnist/"

# --- CUDA 11.8's NVRTC: the one the test setup installed, else the wheel from PyPI
nvrtc=$root/build/cu11/nvidia/cuda_nvrtc/lib
if [ ! -f "$nvrtc/libnvrtc.so.11.2" ]; then
    python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp/wheel" nvidia-cuda-nvrtc-cu11==11.8.89
    (cd "$tmp/wheel" && python3 -m zipfile -e nvidia_cuda_nvrtc_cu11-*.whl .)
    nvrtc=$tmp/wheel/nvidia/cuda_nvrtc/lib
fi
mkdir -p "$tmp/cu11"
cp "$nvrtc/libnvrtc.so.11.2" "$nvrtc"/libnvrtc-builtins.so.11.* "$tmp/cu11/"
tar -C "$tmp" -cf - cu11 | xz -9 -T0 >"$dir/cu11-nvrtc.tar.xz"

# --- the PyTorch peer, where this checkout has the team's folder beside it
peers=${PEERS:-$root/../shared/peers}
if [ -f "$peers/torch_train.py" ]; then
    mkdir -p "$dir/peers"
    cp "$peers/torch_train.py" "$dir/peers/"
else
    echo "gpu-pack: no $peers/torch_train.py: gpu-check.sh will time ember without PyTorch beside it" >&2
fi

{
    echo "ember GPU pack, made $(date -u +%Y-%m-%d) by scripts/gpu-pack.sh on $(uname -m)"
    echo "prefix.tar.xz: Debian packages $(cd "$tmp" && ls ./*.deb | sed 's|^\./||' | tr '\n' ' ')"
    echo "fashion-mnist/: from $data"
    echo "cu11-nvrtc.tar.xz: $(ls "$tmp/cu11" | tr '\n' ' ')(nvidia-cuda-nvrtc-cu11 11.8.89)"
    [ -d "$dir/peers" ] && echo "peers/: torch_train.py from $peers"
} >"$dir/MANIFEST"
size=$(du -sk "$dir" | cut -f1)
echo "gpu-pack: $dir holds $((size / 1024)) MiB:"
(cd "$dir" && du -sh ./* | sed 's|\./||')
if [ "$size" -ge $((60 * 1024)) ]; then
    echo "gpu-pack: over 60 MiB: the device tool carries at most 64 MiB with the repository" >&2
    exit 1
fi
