#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_ptx_simulate.sh — the simulated GPUs as a student uses them
# (docs/how-it-works.md, "The GPU execution model"):
#
#   1. `ember ptx --gpus` lists the six GPUs with where their figures come from;
#   2. `ember ptx KERNEL --simulate` runs a training step on one and reports on
#      the kernel's first launch: every section, numbers in their ranges, the
#      occupancy, roofline and estimated time on that GPU; registers from ptxas
#      where one knows the arch (CUDA 13's for sm_90), an estimate otherwise;
#   3. every kernel a CUDA GPU launches is reported by some model's step (the two
#      2x2 max-pool kernels and quant_matmul_rows run on CPU OpenCL devices only,
#      and say so), each step with its estimated time; the convolutions are
#      conv_direct's, as on a real GPU, and im2col's when EMBER_CONV_ALGO asks, and
#      a MobileNet's depthwise layer conv_grouped's;
#      a language model's (a .gguf file) prompt and next token launch its kernels;
#   4. `ember train --device ptxsim:N` trains on a simulated GPU, and its checks
#      stop a kernel edited to race (EMBER_KERNEL_DIR, through NVRTC 13);
#   5. wrong options are usage errors, a GPU that is not there a device error.
#
#   test_ptx_simulate.sh path/to/ember SOURCE_DIR [PYTHON]
set -u
EMBER=$1 SRC=$2 PYTHON=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
# random data and small batches: the test needs no data set, and each step a second or two
SMALL="--data random --batch 8"

# --- 1. the GPUs
"$EMBER" ptx --gpus >"$TMP/gpus" 2>&1 || fail "ember ptx --gpus: $(cat "$TMP/gpus")"
for gpu in "Quadro K2100M" "Tesla K40m" "GeForce GTX 1080" "H100" "Jetson Nano" "Jetson TX2"; do
    [ "$(grep -c "$gpu" "$TMP/gpus")" -ge 2 ] || fail "--gpus lacks $gpu, or its source: $(cat "$TMP/gpus")"
done

# --- 2. one kernel's report
if "$EMBER" ptx sgemm_wide --simulate $SMALL >"$TMP/report" 2>"$TMP/err"; then
    for text in "one training step of simplecnn at batch 8" "kernel sgemm_wide on ptxsim:0, a simulated Quadro K2100M" \
        "instructions per thread, by class" "floating-point arithmetic" "warp execution efficiency: " \
        "sectors/req" "shared memory: none used" "occupancy on the Quadro K2100M (sm_30, Kepler)" \
        "counted from the PTX" "limited by" "roofline on the Quadro K2100M" \
        "estimated time on the Quadro K2100M: " "threads with work: "; do
        grep -qF "$text" "$TMP/report" || fail "the report lacks \"$text\": $(cat "$TMP/report")"
    done
    efficiency=$(sed -n 's/^warp execution efficiency: \([0-9.]*\)%.*/\1/p' "$TMP/report")
    awk -v e="$efficiency" 'BEGIN { exit !(e > 10 && e <= 100) }' || fail "warp execution efficiency \"$efficiency\""
else
    fail "ember ptx sgemm_wide --simulate: $(cat "$TMP/err")"
fi
# the tiled sgemm and its shared memory: a model whose products are large enough (lenet5's
# convolutions by im2col), on a Kepler, whose 8-byte banks the report says it counts
if EMBER_CONV_ALGO=im2col "$EMBER" ptx sgemm --simulate --model lenet5 $SMALL --gpu k40m >"$TMP/sgemm" 2>"$TMP/err"; then
    grep -q "^shared memory: [0-9]* requests, [0-9]* passes of the 32 banks" "$TMP/sgemm" &&
        grep -q "Kepler banks are 64 bits wide" "$TMP/sgemm" &&
        grep -q "occupancy on the Tesla K40m (sm_35, Kepler)" "$TMP/sgemm" && grep -q "barriers passed" "$TMP/sgemm" ||
        fail "sgemm's report on the K40m: $(cat "$TMP/sgemm")"
else
    fail "ember ptx sgemm --simulate --model lenet5: $(cat "$TMP/err")"
fi
# registers from ptxas where one knows the arch
if [ -x /usr/local/cuda/bin/ptxas ] && ls /usr/local/cuda/lib64/libnvrtc.so.13* >/dev/null 2>&1; then
    "$EMBER" ptx conv_direct_forward --simulate $SMALL --gpu h100 >"$TMP/h100" 2>"$TMP/err" &&
        grep -q "registers a thread (ptxas 13" "$TMP/h100" && grep -q "NVRTC 13" "$TMP/h100" ||
        fail "conv_direct_forward on the H100, registers from CUDA 13's ptxas: $(cat "$TMP/h100" "$TMP/err")"
else
    echo "note: no CUDA 13 toolkit: the H100's registers from ptxas were not checked"
fi

# --- 3. every kernel a CUDA GPU launches, reported by some step
# a text, and two GPTs of one block (gpt-tiny's layers, the last norm Llama's RMSNorm):
# rows of 32 or fewer take softmax's, layer norm's and RMS norm's one-thread-a-row
# kernels, wider ones the others
printf 'input 16\nwte: embedding 32\nwpe: position_embedding\nh.0: residual\n    ln_1: layer_norm\n    attn: attention heads=2\nend\nln_f: rms_norm\nlm_head: linear classes bias=false\n' >"$TMP/narrow-gpt.model"
sed 's/input 16/input 48/; s/embedding 32/embedding 64/' "$TMP/narrow-gpt.model" >"$TMP/wide-gpt.model"
i=0
while [ $i -lt 40 ]; do echo "A small GPT reads every byte of this line, $i times over."; i=$((i + 1)); done >"$TMP/text.txt"
printf 'conv2d 8 kernel=3\ngelu\nmax_pool2d 3 stride=2\nflatten\nlinear classes\n' >"$TMP/gelu.model"
# a MobileNet's block: a depthwise convolution, ReLU6, a pointwise one, a padded max-pool
printf 'conv2d 8 kernel=3\nrelu6\nconv2d 8 kernel=3 stride=2 padding=1 groups=8\nconv2d 16 kernel=1\nmax_pool2d 3 stride=2 padding=1 ceil_mode=true\nflatten\nlinear classes\n' >"$TMP/mobile.model"
: >"$TMP/launched"
# each line: the convolutions' algorithm (EMBER_CONV_ALGO; - for the default), then the options
while read -r algo args; do
    [ "$algo" = - ] && algo=""
    # shellcheck disable=SC2086 # a list of options
    EMBER_CONV_ALGO=$algo "$EMBER" ptx --simulate --batch 4 $args >"$TMP/summary" 2>"$TMP/err" ||
        fail "EMBER_CONV_ALGO=$algo ember ptx --simulate $args: $(cat "$TMP/err")"
    awk 'NF == 7 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 }' "$TMP/summary" >>"$TMP/launched"
    grep -q "^the kernels of the step: an estimated [0-9]* us on a real" "$TMP/summary" ||
        fail "EMBER_CONV_ALGO=$algo ember ptx --simulate $args: no estimate for the step: $(cat "$TMP/summary")"
done <<EOF
- --model simplecnn --data random
- --model vgg8 --data random --optim sgd
- --model lenet5 --data random
- --model resnet8 --data random --shape 1x12x12
im2col --model resnet8 --data random --shape 1x12x12
- --model $TMP/gelu.model --data random --shape 1x9x9 --classes 40
- --model $TMP/mobile.model --data random --shape 3x10x10 --classes 5
- --model linear --data random --shape 4 --classes 3
- --model $TMP/narrow-gpt.model --data text --data-dir $TMP/text.txt --shape 16 --optim adamw
- --model $TMP/wide-gpt.model --data text --data-dir $TMP/text.txt --shape 48 --optim adamw
EOF
# a language model: a prompt of 4 tokens and one after it (the quantised products,
# the embedding's dequantize, RoPE), on a tiny random Q4_K model that the interop
# test's writer makes (tests/interop/test_lm_vs_torch.py; its Python, with gguf)
lm_kernels=yes
if [ -n "$PYTHON" ] && "$PYTHON" - "$SRC/tests/interop" "$TMP/tiny.gguf" >"$TMP/err" 2>&1 <<'PY'; then
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
import test_lm_vs_torch as t
t.write_tiny(sys.argv[2], "llama", t.Q.Q4_K, np.random.default_rng(1))
t.norms_to_one(sys.argv[2])
PY
    "$EMBER" ptx --simulate --model "$TMP/tiny.gguf" --batch 4 >"$TMP/summary" 2>"$TMP/err" &&
        grep -q "^a prompt of 4 tokens, then one more, through .*tiny.gguf on ptxsim:0" "$TMP/summary" ||
        fail "ember ptx --simulate --model tiny.gguf: $(cat "$TMP/summary" "$TMP/err")"
    awk 'NF == 7 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1 }' "$TMP/summary" >>"$TMP/launched"
else
    lm_kernels=no
    echo "note: no Python with numpy, torch and gguf here ($(tail -1 "$TMP/err")): the language-model kernels were not simulated"
fi
for kernel in $("$EMBER" ptx --list | awk '{ print $1 }'); do
    case $kernel in
    quant_matmul | dequantize | rope)
        [ $lm_kernels = no ] || grep -qx "$kernel" "$TMP/launched" || fail "the language model's step launched no $kernel" ;;
    max_pool2d_2x2_* | quant_matmul_rows)
        "$EMBER" ptx "$kernel" --simulate $SMALL >/dev/null 2>"$TMP/err"
        [ $? -eq 2 ] && grep -q "did not launch kernel $kernel" "$TMP/err" ||
            fail "$kernel (CPU devices only) on a simulated GPU: $(cat "$TMP/err")" ;;
    *) grep -qx "$kernel" "$TMP/launched" || fail "no model's step launched $kernel" ;;
    esac
done

# --- 4. training on a simulated GPU, and its checks through ember
"$EMBER" train --device ptxsim:0 --steps 2 $SMALL --no-eval >"$TMP/train" 2>&1 &&
    grep -q "ptxsim:0 Quadro K2100M (simulated by ptxsim" "$TMP/train" ||
    fail "ember train --device ptxsim:0: $(cat "$TMP/train")"
if ls /usr/local/cuda/lib64/libnvrtc.so.13* >/dev/null 2>&1; then
    cp -r "$SRC/backends/kernels" "$TMP/kernels"
    # the tree reduction without its first barrier: threads read partial sums others have not written yet
    sed -i '/^FUNC void local_reduce/,/^}/{0,/    BARRIER();/{/    BARRIER();/d}}' "$TMP/kernels/common.kh"
    cmp -s "$SRC/backends/kernels/common.kh" "$TMP/kernels/common.kh" && fail "the barrier was not removed"
    EMBER_KERNEL_DIR="$TMP/kernels" EMBER_CACHE_DIR="$TMP/cache" "$EMBER" train --device ptxsim:3 --steps 1 $SMALL \
        --no-eval >"$TMP/race" 2>&1
    status=$?
    [ $status -eq 4 ] && grep -q "ptxsim:3: kernel .*a shared-memory race" "$TMP/race" ||
        fail "a reduction without its barrier on the simulated H100 (exit $status): $(cat "$TMP/race")"
else
    echo "note: no NVRTC 13: the race in an edited kernel was not run"
fi

# --- 5. mistakes
"$EMBER" ptx sgemm --simulate --gpu nope >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q 'no simulated GPU "nope": ember ptx --gpus lists them' "$TMP/err" || fail "--gpu nope: $(cat "$TMP/err")"
"$EMBER" ptx sgemm --gpu k40m >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "go with --simulate" "$TMP/err" || fail "--gpu without --simulate: $(cat "$TMP/err")"
"$EMBER" ptx nosuchkernel --simulate >/dev/null 2>"$TMP/err"
[ $? -eq 2 ] || fail "an unknown kernel: $(cat "$TMP/err")"
"$EMBER" train --device ptxsim:9 --steps 1 --data random >/dev/null 2>"$TMP/err"
[ $? -eq 4 ] && grep -q "ptxsim has 6 devices (0 to 5)" "$TMP/err" || fail "ptxsim:9: $(cat "$TMP/err")"

[ "$failures" -eq 0 ] && echo "test_ptx_simulate: ok" && exit 0
echo "test_ptx_simulate: $failures failure(s)"
exit 1
