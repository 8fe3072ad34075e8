#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/board.sh — what a board's owner runs (a Raspberry Pi, a Jetson, any
# 64-bit ARM machine; an x86 one too) to put it in docs/benchmarks.md:
# training images/s of the model zoo on Fashion-MNIST next to PyTorch where
# PyTorch runs there, in one run, with ember's vector kernels (NEON on ARM)
# and with its plain loops, then on the board's NVIDIA GPU next to PyTorch's
# CUDA where `ember devices` finds one usable (a Jetson's). Prints Markdown.
#
#   bench/board.sh [build/ember]
#
# THREADS       default "1 N" (N: the board's cores);  STEPS  default 200
# MODELS        default "simplecnn kerascnn resnet8"
# PEER_PYTHON   a Python with PyTorch (default python3; on a Jetson Nano,
#               NVIDIA's last wheel is PyTorch 1.10 for Python 3.6)
#
# No board has run it yet: CI builds for ARM and tests under qemu, which
# times nothing (docs/embedded.md).
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
HERE=$(dirname "$0")
THREADS=${THREADS:-"1 $(nproc)"} STEPS=${STEPS:-200} MODELS=${MODELS:-simplecnn kerascnn resnet8}
PEER_PYTHON=${PEER_PYTHON:-python3}
export THREADS STEPS MODELS PEER_PYTHON

echo "# $(uname -m), $(nproc) cores: $(sed -n 's/^Model[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo
echo "## The CPU: ember's vector kernels (the default), PyTorch beside"
PEERS=pytorch "$HERE/cpu_vs_peers.sh" "$EMBER"
echo
echo "## The CPU: ember's plain loops (EMBER_CPU_SIMD=none), what the vector kernels gain"
EMBER_CPU_SIMD=none PEERS=none "$HERE/cpu_vs_peers.sh" "$EMBER"
if [ "$(uname -m)" = aarch64 ]; then
    # on ARM the convolutions go to im2col and OpenBLAS, chosen by instruction counts under
    # qemu (backends/cpu/cpu-conv-direct.c): the board's clock decides whether that holds
    echo
    echo "## The CPU: the NEON direct convolution forced (EMBER_CONV_ALGO=direct), against im2col above"
    EMBER_CONV_ALGO=direct PEERS=none "$HERE/cpu_vs_peers.sh" "$EMBER"
fi
if "$EMBER" devices 2>/dev/null | grep -q '^  cuda:0 '; then
    echo
    echo "## The GPU, PyTorch's CUDA beside"
    MODELS="simplecnn resnet8" BATCHES=64 GPT=no "$HERE/gpu_vs_pytorch.sh" "$EMBER"
fi
