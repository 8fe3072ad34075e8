#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/llamacpp-build.sh — builds llama.cpp, the peer ember's language
# models are measured against, from the sources PyPI's llama-cpp-python
# source package carries (vendor/llama.cpp), into build/peers/llama.cpp:
# llama-bench and llama-simple, CPU only, for the instruction sets named
# (GGML_NATIVE=ON stops with SIGILL on some VMs: docs/benchmarks.md).
#
#   bench/llamacpp-build.sh             then build/peers/llama.cpp/bin/llama-bench
#   LLAMACPP_FLAGS="-DGGML_AVX512=ON" bench/llamacpp-build.sh   more instruction sets
#
# Nothing of llama.cpp is committed or linked into ember: it is a peer to
# measure, built beside the project. Needs PyPI (once; the sources are kept).
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
out=build/peers/llama.cpp
[ -x "$out/bin/llama-bench" ] && { echo "llamacpp-build: $out/bin/llama-bench is there"; exit 0; }
python=build/pyenv/bin/python
[ -x "$python" ] || python=python3
mkdir -p build/peers
if [ ! -f build/peers/llama_cpp_python-0.3.36.tar.gz ]; then
    echo "llamacpp-build: the llama-cpp-python 0.3.36 source package from PyPI"
    "$python" -m pip download -q --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d build/peers
fi
rm -rf build/peers/src && mkdir -p build/peers/src
tar -xzf build/peers/llama_cpp_python-0.3.36.tar.gz -C build/peers/src
src=build/peers/src/llama_cpp_python-0.3.36/vendor/llama.cpp
# shellcheck disable=SC2086 # a list of options
cmake -S "$src" -B build/peers/llama.cpp-build -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX=ON \
    -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DBUILD_SHARED_LIBS=OFF ${LLAMACPP_FLAGS:-} >/dev/null
cmake --build build/peers/llama.cpp-build -j "$(nproc)" --target llama-bench llama-simple >/dev/null
mkdir -p "$out/bin"
cp build/peers/llama.cpp-build/bin/llama-bench build/peers/llama.cpp-build/bin/llama-simple "$out/bin/"
echo "llamacpp-build: $out/bin/llama-bench and llama-simple"
