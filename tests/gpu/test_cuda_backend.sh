#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_cuda_backend.sh — what the CUDA backend does when a GPU says
# no, through the test double of libcuda that runs ember's kernels
# (tests/gpu/fakes), as a user of `ember` sees it:
#
#   - the driver refuses the best path (a cubin): ember takes the next one
#     (NVRTC's PTX), says why, and remembers the refusal in its cache, so
#     that the next start neither compiles nor offers it again;
#   - a driver older than an NVRTC's toolkit takes none of its cubins;
#   - EMBER_CUDA_MAX_PTX ranks the paths as for an old driver: the built-in
#     PTX as on a Kepler laptop (R418), CUDA 11.8's cubin as on R470;
#   - a kernel allowed fewer threads a block than its launches use (its
#     registers): that module is refused, the next path taken;
#   - a kernel that faults: exit 4, the GPU lost, the last kernel named and
#     EMBER_CUDA_SYNC offered; with EMBER_CUDA_SYNC=1 the kernel at fault
#     named; the display watchdog with its own advice;
#   - out of GPU memory: exit 4, with the free and total memory.
#
#   test_cuda_backend.sh EMBER FAKE_CUDA [CU11_NVRTC_DIR]
set -u
EMBER=$1 FAKE_CUDA=$2 CU11=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

H100="EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=90:H100-double EMBER_FAKE_CUDA_DRIVER=13000"
TRAIN="train --device cuda:0 --data random --steps 4 --no-eval --quiet"

# --- the NVRTCs this machine has (CUDA 13's, for the H100)
run "$H100 EMBER_CACHE_DIR=$TMP/cache-probe" -- devices --json
has_nvrtc13=$("$PYTHON" -c "import json; d = json.load(open('$TMP/out')); print(any(n['version'].startswith('13.') for n in d['backends']['cuda']['nvrtc']))" 2>/dev/null)

if [ "$has_nvrtc13" = True ]; then
    # --- the driver refuses the cubin: NVRTC's PTX instead, and the refusal remembered
    REFUSING="$H100 EMBER_FAKE_CUDA_REFUSE=cubin EMBER_CACHE_DIR=$TMP/cache-refuse"
    run "$REFUSING" -- devices --json
    expect_status 0 "a refused cubin"
    jcheck "a refused cubin: the next path" "cuda['gpus'][0]['kernel_path'] == 'nvrtc-ptx' and cuda['gpus'][0]['kernels_loaded'].startswith('NVRTC 13') and 'cubin for sm_90: the driver refused the kernels: CUDA_ERROR_INVALID_IMAGE' in cuda['gpus'][0]['failed_paths']"
    run "$REFUSING" -- devices --json
    jcheck "a refused cubin, the next start" "cuda['gpus'][0]['kernel_path'] == 'nvrtc-ptx' and 'refused by this driver before (remembered in the cache)' in cuda['gpus'][0]['failed_paths']"
    run "$REFUSING" -- $TRAIN --verbose
    expect_status 0 "training after a refused cubin"
    expect_text "kernels: NVRTC 13" "training after a refused cubin"

    # --- a CUDA 12.2 driver takes none of CUDA 13's cubins (nor its PTX 9.0)
    run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=90:H100-double EMBER_FAKE_CUDA_DRIVER=12020 EMBER_CACHE_DIR=$TMP/cache" -- devices --json
    jcheck "NVRTC 13 and a CUDA 12 driver" "cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and \"NVRTC 13.0's cubins need a CUDA 13 driver, this one is CUDA 12.2\" in cuda['gpus'][0]['passed_over']"

    # --- sgemm's registers allow 128 threads a block: NVRTC's kernels (256) are refused
    run "$H100 EMBER_FAKE_CUDA_MAX_THREADS=sgemm=128 EMBER_CACHE_DIR=$TMP/cache-threads" -- devices --json
    jcheck "a kernel allowed fewer threads" "cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and 'kernel sgemm runs at most 128 threads a block on this GPU' in cuda['gpus'][0]['failed_paths']"
else
    echo "note: no CUDA 13 NVRTC here: the refused-cubin, driver-major and thread-limit cases were not run"
fi

# --- a Kepler laptop's driver (R418, PTX 6.4) on the H100: the built-in PTX
run "$H100 EMBER_CUDA_MAX_PTX=6.4 EMBER_CACHE_DIR=$TMP/cache" -- devices --json
jcheck "EMBER_CUDA_MAX_PTX=6.4" "cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and cuda['gpus'][0]['kernel_paths'] == 'builtin-ptx' and cuda['driver']['paths_chosen_as'] == 'a CUDA 10.1 driver (EMBER_CUDA_MAX_PTX=6.4)'"
run "$H100 EMBER_CUDA_MAX_PTX=6.4 EMBER_CACHE_DIR=$TMP/cache" -- $TRAIN
expect_status 0 "training as on R418"

# --- a K40m server's driver (R470, PTX 7.4) with CUDA 11.8's NVRTC only: its cubin
if [ -n "$CU11" ] && [ -d "$CU11" ]; then
    run "$H100 EMBER_CUDA_MAX_PTX=7.4 EMBER_NVRTC=only:$CU11 EMBER_CACHE_DIR=$TMP/cache" -- devices --json
    jcheck "EMBER_CUDA_MAX_PTX=7.4 with CUDA 11.8" "cuda['gpus'][0]['kernel_path'] == 'nvrtc-cubin' and cuda['gpus'][0]['kernels_loaded'] == 'NVRTC 11.8 cubin for sm_90' and 'NVRTC 11.8 emits PTX 7.8 but the driver loads at most PTX 7.4' in cuda['gpus'][0]['passed_over']"
else
    echo "note: no CUDA 11.8 NVRTC (${CU11:-not given}): the R470 case was not run"
fi

# --- a kernel that faults: the GPU is lost, the message says where to look
FAULTY="$H100 EMBER_CUDA_KERNELS=baseline EMBER_CACHE_DIR=$TMP/cache EMBER_FAKE_CUDA_FAULT=adam_step:2:700"
run "$FAULTY" -- $TRAIN
expect_status 4 "a faulting kernel"
expect_text "CUDA_ERROR_ILLEGAL_ADDRESS" "a faulting kernel"
expect_text "a kernel launched before it failed; the last one was" "a faulting kernel"
expect_text "EMBER_CUDA_SYNC=1" "a faulting kernel"
expect_text "restart the program" "a faulting kernel"
run "$FAULTY EMBER_CUDA_SYNC=1" -- $TRAIN
expect_status 4 "a faulting kernel, EMBER_CUDA_SYNC=1"
expect_text "kernel adam_step on " "a faulting kernel, EMBER_CUDA_SYNC=1"
expect_text "CUDA_ERROR_ILLEGAL_ADDRESS" "a faulting kernel, EMBER_CUDA_SYNC=1"

# --- the display's watchdog
run "$H100 EMBER_CUDA_KERNELS=baseline EMBER_CACHE_DIR=$TMP/cache EMBER_FAKE_CUDA_FAULT=conv_direct_forward:1:702" -- $TRAIN
expect_status 4 "the watchdog"
expect_text "CUDA_ERROR_LAUNCH_TIMEOUT" "the watchdog"
expect_text "smaller batches" "the watchdog"

# --- out of GPU memory: a batch that does not fit in 16 MiB
run "$H100 EMBER_CUDA_KERNELS=baseline EMBER_CACHE_DIR=$TMP/cache EMBER_FAKE_CUDA_MEMORY=16" -- $TRAIN --batch 4096
expect_status 4 "out of GPU memory"
expect_text "out of memory" "out of GPU memory"
expect_text "of 16.0 MiB" "out of GPU memory"

finish test_cuda_backend
