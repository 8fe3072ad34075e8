#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gpu_vs_pytorch.sh — ember on an NVIDIA GPU next to PyTorch on the same
# GPU, in one run: the model zoo's training images/s on Fashion-MNIST at each
# batch size (STEPS steps; both read every step's loss back to the host), and
# gpt-tiny's training tokens/s (batch 32, context 128, AdamW, clipping) and
# greedy generation bytes/s. ember and PyTorch run in turns, ROUNDS times
# each; each figure is the best of its rounds. PyTorch runs with its defaults:
# cuDNN picks its convolutions and may use TF32 in them, where ember computes
# in FP32 throughout. Prints a Markdown section for docs/benchmarks.md.
#
#   bench/gpu_vs_pytorch.sh [build/ember]          [needs: an NVIDIA GPU, PyTorch with CUDA]
#
# PEER_PYTHON   a Python with a CUDA PyTorch (default: python3)
# DATA_DIR      Fashion-MNIST (default: /usr/share/datasets/fashion-mnist)
# TEXT          gpt-tiny's corpus (default: docs/*.md, concatenated: speed alone)
# MODELS        default "simplecnn lenet5 resnet8 vgg8";  BATCHES  default "64 256"
# STEPS         training steps per run (default 300; gpt-tiny: STEPS / 6)
# ROUNDS        default 1;  GENERATE  bytes to generate (default 200)
# ALGOS         the convolutions' algorithms to train ember with, a column each
#               (EMBER_CONV_ALGO: "im2col direct"; default: ember's own choice)
# GPT           no: leave gpt-tiny out (default yes)
# EMBER_CUDA_KERNELS and the rest of ember's variables pass through
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
PY=${PEER_PYTHON:-python3}
HERE=$(dirname "$0")
. "$HERE/common.sh"
DATA_DIR=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
MODELS=${MODELS:-simplecnn lenet5 resnet8 vgg8} BATCHES=${BATCHES:-64 256}
STEPS=${STEPS:-300} ROUNDS=${ROUNDS:-1} GENERATE=${GENERATE:-200} ALGOS=${ALGOS:-default} GPT=${GPT:-yes}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TEXT=${TEXT:-$TMP/docs.txt}
[ -f "$TEXT" ] || cat "$HERE"/../docs/*.md >"$TEXT"

header "ember on the GPU against PyTorch on the same GPU" \
    "$(command_line "bench/gpu_vs_pytorch.sh $EMBER" STEPS ROUNDS MODELS BATCHES ALGOS GPT EMBER_CUDA_KERNELS)"
echo "- **GPU**: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo unknown)"
echo "- **ember's kernels**: $("$EMBER" devices 2>/dev/null | sed -n 's/.*kernels: \([^)]*\)).*/\1/p' | head -n 1)"
echo "- **PyTorch**: $("$PY" -c 'import torch; print(torch.__version__, "cuDNN", torch.backends.cudnn.version())' 2>/dev/null)"
echo
# a column of ember's images/s for each algorithm, "ember" alone for its own choice
name_of() { [ "$1" = default ] && echo "ember" || echo "ember $1"; }
head_row="| model | batch |" rule="|---|---|" ratio_cols="" ratio_rule=""
for algo in $ALGOS; do
    head_row="$head_row $(name_of "$algo") images/s |" rule="$rule---|"
    ratio_cols="$ratio_cols $(name_of "$algo") / PyTorch |" ratio_rule="$ratio_rule---|"
done
echo "$head_row PyTorch images/s |$ratio_cols"
echo "$rule---|$ratio_rule"
for model in $MODELS; do
    for batch in $BATCHES; do
        p_best=""
        rm -f "$TMP"/best-* # each algorithm's best images/s so far, a file each
        round=0
        while [ $round -lt "$ROUNDS" ]; do
            for algo in $ALGOS; do
                rm -f "$TMP/e.jsonl"
                conv=$([ "$algo" = default ] && echo "${EMBER_CONV_ALGO:-}" || echo "$algo")
                EMBER_CONV_ALGO=$conv "$EMBER" train --device cuda:0 --model "$model" --data fashion-mnist \
                    --data-dir "$DATA_DIR" --batch "$batch" --steps "$STEPS" --no-eval --quiet \
                    --metrics "$TMP/e.jsonl" 2>"$TMP/e.err" || sed "s/^/  ember $algo: /" "$TMP/e.err" >&2
                so_far=$(cat "$TMP/best-$algo" 2>/dev/null || true)
                best "$(field images_per_s "$TMP/e.jsonl")" "$so_far" >"$TMP/best-$algo"
            done
            "$PY" "$HERE/torch_zoo_train.py" --model "$model" --batch "$batch" --steps "$STEPS" --device cuda \
                --data-dir "$DATA_DIR" >"$TMP/p.json" 2>"$TMP/p.err" || sed 's/^/  pytorch: /' "$TMP/p.err" >&2
            p_best=$(best "$(field images_per_s "$TMP/p.json")" "$p_best")
            round=$((round + 1))
        done
        row="| $model | $batch |" ratios=""
        for algo in $ALGOS; do
            e=$(cat "$TMP/best-$algo")
            row="$row $(fmt "$e" %.0f) |" ratios="$ratios $(ratio "$e" "$p_best") |"
        done
        echo "$row $(fmt "$p_best" %.0f) |$ratios"
    done
done
[ "$GPT" = no ] && exit 0

gsteps=$((STEPS / 6 > 5 ? STEPS / 6 : 5))
e_best="" p_best=""
round=0
while [ $round -lt "$ROUNDS" ]; do
    rm -f "$TMP/e.jsonl"
    "$EMBER" train --model gpt-tiny --data text --data-dir "$TEXT" --steps "$gsteps" --batch 32 --optim adamw \
        --lr 1e-3 --weight-decay 0.1 --clip 1 --no-eval --quiet --device cuda:0 --log-every 1 \
        --metrics "$TMP/e.jsonl" 2>"$TMP/e.err" || sed 's/^/  ember: /' "$TMP/e.err" >&2
    "$PY" "$HERE/torch_gpt_train.py" --text "$TEXT" --steps "$gsteps" --device cuda --generate 0 \
        >"$TMP/p.json" 2>"$TMP/p.err" || sed 's/^/  pytorch: /' "$TMP/p.err" >&2
    e_best=$(best "$(step_rate "$TMP/e.jsonl")" "$e_best")
    p_best=$(best "$(field tokens_per_s "$TMP/p.json")" "$p_best")
    round=$((round + 1))
done
echo
echo "| gpt-tiny, batch 32 x 128 | ember | PyTorch | ember / PyTorch |"
echo "|---|---|---|---|"
echo "| training tokens/s ($gsteps steps, the first left out) | $(fmt "$e_best" %.0f) | $(fmt "$p_best" %.0f) | $(ratio "$e_best" "$p_best") |"

# generation: a model trained a few steps, greedy, GENERATE bytes after a newline
"$EMBER" train --model gpt-tiny --data text --data-dir "$TEXT" --steps 5 --batch 32 --optim adamw --no-eval \
    --quiet --device cuda:0 --save "$TMP/gpt.safetensors" 2>/dev/null || true
generation_rounds "--device cuda:0" "--device cuda"
echo "| generation bytes/s, key/value cache | $(fmt "$g_cache" %.0f) | | |"
echo "| generation bytes/s, the whole context each byte | $(fmt "$g_whole" %.0f) | $(fmt "$g_torch" %.0f) (nanoGPT's generate) | $(ratio "$g_whole" "$g_torch") |"
