#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/conv_accuracy.sh — does another convolution algorithm train to the
# same accuracy as im2col? Each model trained for its documented epochs
# (docs/benchmarks.md, "CPU: the model zoo next to PyTorch": ResNet-8 8 epochs
# with a cosine schedule, VGG-8 3 at a constant rate) once with
# EMBER_CONV_ALGO=im2col and once with EMBER_CONV_ALGO=$ALGO (auto:
# Winograd where the table gives it; direct: conv_direct on every layer;
# winograd4: Winograd's 4x4 tiles on every 3x3 layer), for each seed, one
# thread each. Accuracy does not depend on
# timing, so a shared machine changes only how long it takes (ResNet-8: some
# 10 minutes a run on one idle core of the 2026 development VM).
# Prints Markdown tables for docs/benchmarks.md: each run's final test
# accuracy and loss, then per model the mean over the seeds each way and
# the difference, which issue 25 bounds at 0.3 points.
#
#   bench/conv_accuracy.sh [build]
#
# MODELS   default "resnet8 vgg8";  SEEDS  default "0 1 2";  ALGO  default auto
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
BUILD=${1:-build}
EMBER=$BUILD/ember
HERE=$(dirname "$0")
# shellcheck source=bench/common.sh
. "$HERE/common.sh"
MODELS=${MODELS:-resnet8 vgg8} SEEDS=${SEEDS:-0 1 2} ALGO=${ALGO:-auto}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# the documented training of each model (docs/benchmarks.md)
schedule() {
    case "$1" in
    resnet8) echo "--epochs 8 --schedule cosine" ;;
    *) echo "--epochs 3" ;;
    esac
}

echo "bench/conv_accuracy.sh on $(uname -m), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git -C "$HERE" describe --always --dirty 2>/dev/null || echo '?'): $(command_line "bench/conv_accuracy.sh $BUILD" MODELS SEEDS ALGO)"
echo
echo "| model | training | seed | im2col: test acc, test loss | $ALGO: test acc, test loss | $ALGO - im2col, points |"
echo "|---|---|---|---|---|---|"
for model in $MODELS; do
    for seed in $SEEDS; do
        for algo in im2col "$ALGO"; do
            # shellcheck disable=SC2046 # the schedule's words are separate arguments
            EMBER_CONV_ALGO=$algo "$EMBER" train --model "$model" --data fashion-mnist $(schedule "$model") \
                --batch 64 --lr 0.001 --seed "$seed" --threads 1 --quiet \
                --metrics "$TMP/$model-$seed-$algo.jsonl" >"$TMP/$model-$seed-$algo.log" 2>&1 ||
                echo "($model seed $seed $algo failed: $(tail -n 1 "$TMP/$model-$seed-$algo.log"))" >&2
        done
        i_acc=$(field test_acc "$TMP/$model-$seed-im2col.jsonl") a_acc=$(field test_acc "$TMP/$model-$seed-$ALGO.jsonl")
        i_loss=$(field test_loss "$TMP/$model-$seed-im2col.jsonl") a_loss=$(field test_loss "$TMP/$model-$seed-$ALGO.jsonl")
        diff=$(awk -v a="$a_acc" -v i="$i_acc" 'BEGIN { if (a == "" || i == "") print "-"; else printf "%+.2f", 100 * (a - i) }')
        echo "| $model | $(schedule "$model") | $seed | $(fmt "$i_acc" %.4f), $(fmt "$i_loss" %.4f) | $(fmt "$a_acc" %.4f), $(fmt "$a_loss" %.4f) | $diff |"
        echo "$model $i_acc $a_acc" >>"$TMP/summary"
    done
done
echo
echo "| model | seeds | im2col mean test acc | $ALGO mean test acc | $ALGO - im2col, points | within 0.3 points |"
echo "|---|---|---|---|---|---|"
for model in $MODELS; do
    awk -v m="$model" '$1 == m && $2 != "" && $3 != "" { n++; i += $2; a += $3 }
        END { if (n == 0) { printf "| %s | 0 | - | - | - | - |\n", m; exit }
              d = 100 * (a - i) / n
              printf "| %s | %d | %.4f | %.4f | %+.2f | %s |\n", m, n, i / n, a / n, d, (d >= -0.3 ? "yes" : "**no**") }' \
        "$TMP/summary"
done
