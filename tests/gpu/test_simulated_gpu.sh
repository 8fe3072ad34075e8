#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_simulated_gpu.sh — the GPU code ember ships, executed: one suite on
# one simulated GPU. The CUDA test double (tests/gpu/fakes) is configured as a real
# card with its real driver, ember chooses its kernel path as it would there,
# and the double runs the PTX of that path in ember's PTX simulator (ptxsim/),
# instruction by instruction, with its checks on (bounds at each buffer's exact
# size, alignment, shared-memory races, barriers, registers and shared words read
# before written):
#
#   k2100m    Quadro K2100M, sm_30, R418 (CUDA 10.1, PTX 6.4): the built-in PTX
#   k40m      Tesla K40m, sm_35, R470 (CUDA 11.4): NVRTC 11.8's cubin, run as its PTX
#   gtx1080   GeForce GTX 1080, sm_61, R580 (CUDA 13.0): NVRTC 12.x's cubin, as its PTX
#   h100      H100, sm_90, CUDA 13.0: NVRTC 13's cubin, as its PTX
#   nano      Jetson Nano, sm_53, L4T R32.7 (CUDA 10.2, PTX 6.5), no NVRTC: the
#             built-in PTX; integrated (its memory is the host's): ember maps, and
#             the double refuses copies and plain allocations; one multiprocessor
#   tx2       Jetson TX2, sm_62, L4T R32.7, integrated as the Nano, two multiprocessors
#
# A cubin is machine code; the double runs the PTX ptxas made it from, which
# tests/gpu/fakes/fake_nvrtc_keep.c (an NVRTC that forwards to the real one) kept.
#
# EMBER_SIMULATED_EXEC=host runs the kernels compiled for the host instead of the
# PTX (the double's other mode): the ARM build under emulation does, where the
# simulator would take hours; the native build's run executes the PTX.
#
# Every buffer is exactly its tensor's size (EMBER_EXACT_BUFFERS=1), so a kernel
# running one element past a tensor leaves its allocation and the simulator's
# memcheck names it. The K2100M, whose built-in PTX computes what the kernels' C
# does, adds two more: the numerics check (EMBER_FAKE_CUDA_NUMERICS=1: each launch's
# results bit for bit those of the same kernel compiled for the host, at
# round-to-nearest), and a grid lowered along x (EMBER_FAKE_CUDA_GRID_X), so that
# ember launches its work in chunks, each told its first element, row or plane;
# the double says which kernels never filled the lowered grid.
#
#   test_simulated_gpu.sh GPU SUITE BUILD_DIR [CU11_DIR] [CU12_DIR]
#
# SUITE: parity (every primitive against the reference), gradcheck (every op's
# gradients), train (3 simplecnn steps against the CPU, each loss within 1e-3),
# lm (tiny GGUF language models against their PyTorch twin, LoRA's steps on one).
# Skipped (77) only when the GPU's NVRTC is not on this machine (scripts/setup.sh
# --tests puts CUDA 11.8's and 12.x's in the build tree); a suite that cannot
# open the simulated GPU fails.
set -u
gpu=$1 suite=$2 build=$3
cu11=${4:-$build/cu11} cu12=${5:-$build/cu12}
tests=$build/tests

nvrtc="" # the real NVRTC ember compiles with on this GPU
case $gpu in
k2100m) seed=0 cc=30 name="Quadro K2100M" driver=10010 kernels=baseline path="built-in sm_30 PTX" ;;
k40m) seed=1 cc=35 name="Tesla K40m" driver=11040 kernels=nvrtc-cubin path="NVRTC 11.8 cubin for sm_35"
    nvrtc=$cu11/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2 ;;
gtx1080) seed=2 cc=61 name="GeForce GTX 1080" driver=13000 kernels=nvrtc-cubin path="NVRTC 12.[0-9]* cubin for sm_61"
    nvrtc=$cu12/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 ;;
h100) seed=3 cc=90 name="H100" driver=13000 kernels=nvrtc-cubin path="NVRTC 13.[0-9]* cubin for sm_90"
    nvrtc=$(ls /usr/local/cuda/lib64/libnvrtc.so.13 /usr/local/cuda*/lib64/libnvrtc.so.13 2>/dev/null | head -n 1) ;;
nano) seed=4 cc=53 name="Jetson Nano" driver=10020 kernels=baseline path="built-in sm_30 PTX"
    export EMBER_FAKE_CUDA_INTEGRATED=1 EMBER_FAKE_CUDA_SMS=1 EMBER_FAKE_CUDA_MEMORY=4096 ;;
tx2) seed=5 cc=62 name="Jetson TX2" driver=10020 kernels=baseline path="built-in sm_30 PTX"
    export EMBER_FAKE_CUDA_INTEGRATED=1 EMBER_FAKE_CUDA_SMS=2 EMBER_FAKE_CUDA_MEMORY=8192 ;;
*) echo "usage: test_simulated_gpu.sh k2100m|k40m|gtx1080|h100|nano|tx2 parity|gradcheck|train|lm BUILD_DIR" >&2; exit 2 ;;
esac
# what runs the build's programs: nothing, or a cross build's emulator (tests/CMakeLists.txt)
run=${EMBER_TEST_RUN:-}
mode=${EMBER_SIMULATED_EXEC:-ptx}
if [ "$kernels" != baseline ] && [ ! -f "$nvrtc" ]; then
    echo "skipped: the NVRTC of the simulated $name is not here (${nvrtc:-no CUDA 13 toolkit}); scripts/setup.sh --tests installs CUDA 11.8's and 12.x's"
    exit 77
fi

export EMBER_TEST_DEVICE=cuda:0 EMBER_CUDA_LIBRARY="$tests/libfake-cuda.so" EMBER_FAKE_CUDA_EXEC=$mode
# each GPU runs its blocks' warps in another order (0: as numbered), the seed of ptxsim.h
export EMBER_FAKE_CUDA_SEED=$seed
export EMBER_FAKE_CUDA_GPUS="$cc:$name (simulated)" EMBER_FAKE_CUDA_DRIVER=$driver EMBER_CUDA_KERNELS=$kernels
export EMBER_EXACT_BUFFERS=1
if [ "$gpu" = k2100m ] && [ "$mode" = ptx ]; then
    # the most the suite's shapes allow: rows of up to grid x 64 positions per launch
    # (ember_gpu_plane_launches), SimpleCNN's 784 in the training steps
    case $suite in parity) grid=8 ;; gradcheck) grid=4 ;; *) grid=13 ;; esac
    export EMBER_FAKE_CUDA_NUMERICS=1 EMBER_FAKE_CUDA_GRID_X=$grid
fi
# a cache of its own: ember's cubins and the PTX kept for them stay together
export EMBER_CACHE_DIR="$build/test-cache-simulated/$gpu"
export EMBER_FAKE_NVRTC_PTX_DIR="$EMBER_CACHE_DIR/kept-ptx"
if [ -n "$nvrtc" ]; then
    export EMBER_NVRTC="only:$tests/libfake-nvrtc-keep.so" EMBER_FAKE_NVRTC_REAL="$nvrtc"
else
    export EMBER_NVRTC=none
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
case $suite in
parity) $run "$tests/test_parity" -b cuda >"$out" 2>&1 ;;
gradcheck) $run "$tests/test_gradcheck" >"$out" 2>&1 ;;
train) $run "$tests/test_backend_e2e" cuda:0 --steps 3 --no-eval >"$out" 2>&1 ;;
lm) # tiny GGUF language models against their PyTorch twin (tests/interop/test_lm_vs_torch.py)
    python=$build/pyenv/bin/python
    [ -x "$python" ] || python=python3
    if ! "$python" -c "import torch, gguf, numpy" 2>/dev/null; then
        echo "skipped: no PyTorch, gguf or NumPy for the language models' twin (scripts/setup.sh --tests)"
        exit 77
    fi
    # The K2100M's built-in PTX, the path ember ships for the oldest cards, runs every tiny
    # model and LoRA's steps; the NVRTC paths share the models out (each weight type on
    # two paths), and two of them run LoRA's steps as well
    case $gpu in
    k2100m) only=Q4_0,Q4_K,Q6_K,qwen2 lora=yes ;;
    k40m) only=Q4_0,qwen2 lora=yes ;;
    gtx1080) only=Q4_K lora=no ;;
    h100) only=Q6_K lora=yes ;;
    *) only=Q4_0 lora=no ;;
    esac
    "$python" "$(dirname "$0")/../interop/test_lm_vs_torch.py" "$tests/lm-run" none --tiny-only --quick --only "$only" \
        >"$out" 2>&1 &&
        if [ "$lora" = yes ]; then # LoRA's training steps on them (tests/interop/test_lora_vs_torch.py)
            "$python" "$(dirname "$0")/../interop/test_lora_vs_torch.py" "$tests/lora-run" --steps 2 --quick >>"$out" 2>&1
        fi ;;
*) echo "unknown suite $suite" >&2; exit 2 ;;
esac
status=$?
cat "$out"
if [ $status -eq 77 ]; then
    echo "FAILED: the simulated $name did not open (a skip here hides a failure)"
    exit 1
fi
[ $status -eq 0 ] || exit $status
# on the lowered grid, some launches must have come in chunks (the double's count)
if [ "$gpu" = k2100m ] && [ "$mode" = ptx ] && ! grep -q "the grid's x limit, lowered to $grid blocks, was filled by launches of [1-9]" "$out"; then
    echo "FAILED: no launch filled the grid lowered to $grid blocks: nothing ran in chunks"
    exit 1
fi
# the suites that name their device must have run on the expected kernel path
if [ "$suite" != gradcheck ] && ! grep -q "kernels: $path)" "$out"; then
    echo "FAILED: the simulated $name did not load its kernels from the $path"
    exit 1
fi
# an integrated GPU's memory was mapped (the double refused every copy, so the suite passing says
# so too)
if [ -n "${EMBER_FAKE_CUDA_INTEGRATED:-}" ] && [ "$suite" != gradcheck ] && ! grep -q "shared with the CPU, mapped" "$out"; then
    echo "FAILED: the simulated $name is integrated, but ember did not say it maps its memory"
    exit 1
fi
if [ "$mode" = ptx ]; then
    echo "$suite on the simulated $name ($path, executed as PTX): ok"
else
    echo "$suite on the simulated $name ($path, its kernels compiled for this CPU): ok"
fi
