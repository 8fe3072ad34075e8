#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/conv_algo.sh — ember's two convolution algorithms side by side,
# and what they make of whole models next to PyTorch, in one run:
#   1. bench/conv_shapes.c: each convolution of ResNet-8 and VGG-8
#      (Fashion-MNIST, batch 64; stride 2 and 1x1 included), the zoo's first
#      layers and two larger ones, forward and backward, im2col, Winograd in
#      2x2 and 4x4 tiles and direct alternated, on 1 and 2 threads (median
#      ms; im2col's time over each other's)
#   2. ResNet-8 and VGG-8 trained for STEPS steps at batch 64 by ember with
#      EMBER_CONV_ALGO=im2col, by ember with auto's table (conv_direct on
#      these models' layers; Winograd only from 128 channels) and by PyTorch
#      (bench/torch_zoo_train.py), one after the other, ROUNDS times, on 1
#      and 2 threads: images/s and the ratios.
# The machine may be shared: the ratios within a round are what to read.
# Prints Markdown tables for docs/benchmarks.md.
#
#   bench/conv_algo.sh [build]
#
# PEER_PYTHON   a Python with torch (default: build/pyenv/bin/python)
# MODELS        default "resnet8 vgg8";  THREADS  default "1 2"
# STEPS         default 120;  ROUNDS  default 2;  REPS  conv_shapes's repetitions, default 15
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
BUILD=${1:-build}
EMBER=$BUILD/ember
PY=${PEER_PYTHON:-$BUILD/pyenv/bin/python}
HERE=$(dirname "$0")
. "$HERE/common.sh"
MODELS=${MODELS:-resnet8 vgg8} THREADS=${THREADS:-1 2} STEPS=${STEPS:-120} ROUNDS=${ROUNDS:-2} REPS=${REPS:-15}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "bench/conv_algo.sh on $(uname -m), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'): $(command_line "bench/conv_algo.sh $BUILD" MODELS THREADS STEPS ROUNDS REPS)"
echo
${CC:-cc} -O2 -Wall -Wextra "$HERE/conv_shapes.c" -I"$HERE/../include" "$BUILD/libember.so" \
    -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lm -o "$TMP/conv_shapes"
first=1
for t in $THREADS; do
    if [ "$first" = 1 ]; then "$TMP/conv_shapes" "$t" "$REPS"; first=0; else "$TMP/conv_shapes" "$t" "$REPS" | tail -n +3; fi
done
echo
echo "| model | threads | round | ember im2col images/s | ember auto images/s | PyTorch images/s | auto / im2col | auto / PyTorch |"
echo "|---|---|---|---|---|---|---|---|"
for model in $MODELS; do
    for t in $THREADS; do
        for round in $(seq 1 "$ROUNDS"); do
            for algo in im2col auto; do
                rm -f "$TMP/$algo.jsonl"
                EMBER_CONV_ALGO=$algo "$EMBER" train --model "$model" --data fashion-mnist --epochs 1 --batch 64 \
                    --lr 0.001 --seed 0 --threads "$t" --quiet --steps "$STEPS" --metrics "$TMP/$algo.jsonl" \
                    >/dev/null 2>&1 || true
            done
            "$PY" "$HERE/torch_zoo_train.py" --model "$model" --epochs 1 --threads "$t" --steps "$STEPS" \
                >"$TMP/torch.jsonl" 2>/dev/null || true
            i2c=$(field images_per_s "$TMP/im2col.jsonl") auto=$(field images_per_s "$TMP/auto.jsonl")
            torch=$(field images_per_s "$TMP/torch.jsonl")
            echo "| $model | $t | $round | $(fmt "$i2c" %.0f) | $(fmt "$auto" %.0f) | $(fmt "$torch" %.0f) | $(ratio "$auto" "$i2c") | $(ratio "$auto" "$torch") |"
        done
    done
done
