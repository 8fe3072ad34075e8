#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/zoo_vs_pytorch.sh — the built-in models trained by ember and by
# PyTorch on this CPU, side by side in one run: Fashion-MNIST, batch 64,
# Adam 0.001, seed 0, test accuracy after every epoch. Prints a Markdown
# table for docs/benchmarks.md.
#
#   bench/zoo_vs_pytorch.sh [build/ember]
#
# PEER_PYTHON   a Python with torch and numpy (default: build/pyenv/bin/python,
#               which scripts/test.sh makes with Debian's PyTorch)
# MODELS        default "lenet5 vgg8 resnet8";  EPOCHS  default 5
# THREADS       default 2;  DEVICE  ember's device (default cpu)
# SCHEDULE      constant (default) or cosine: the learning rate over the run, on both sides
# STEPS         stop each run after N steps: speed alone (the accuracy is then of a part-epoch)
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
PY=${PEER_PYTHON:-build/pyenv/bin/python}
HERE=$(dirname "$0")
EPOCHS=${EPOCHS:-5} THREADS=${THREADS:-2} DEVICE=${DEVICE:-cpu} SCHEDULE=${SCHEDULE:-constant} STEPS=${STEPS:-0}
steps_arg=""
[ "$STEPS" -gt 0 ] && steps_arg="--steps $STEPS"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# the field of the line for `epoch` in a JSON-lines file
field() { grep "\"epoch\": $3[,}]" "$2" | sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" | tail -n 1; }

echo "| model | epoch | ember test acc | PyTorch test acc | ember images/s | PyTorch images/s | ratio |"
echo "|---|---|---|---|---|---|---|"
for model in ${MODELS:-lenet5 vgg8 resnet8}; do
    rm -f "$TMP/e.jsonl"
    # shellcheck disable=SC2086  # steps_arg is one option and its value, or nothing
    "$EMBER" train --model "$model" --data fashion-mnist --epochs "$EPOCHS" --batch 64 --lr 0.001 --seed 0 \
        --schedule "$SCHEDULE" --device "$DEVICE" --threads "$THREADS" --quiet --metrics "$TMP/e.jsonl" \
        $steps_arg 2>/dev/null || true
    # shellcheck disable=SC2086
    "$PY" "$HERE/torch_zoo_train.py" --model "$model" --epochs "$EPOCHS" --threads "$THREADS" --schedule "$SCHEDULE" \
        $steps_arg >"$TMP/p.jsonl" 2>/dev/null || true
    for epoch in $(seq 1 "$EPOCHS"); do
        e_ips=$(field images_per_s "$TMP/e.jsonl" "$epoch")
        p_ips=$(field images_per_s "$TMP/p.jsonl" "$epoch")
        ratio=$(awk -v a="$e_ips" -v b="$p_ips" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')
        e_acc=$(field test_acc "$TMP/e.jsonl" "$epoch")
        p_acc=$(field test_acc "$TMP/p.jsonl" "$epoch")
        awk -v m="$model" -v n="$epoch" -v ea="$e_acc" -v pa="$p_acc" -v ei="$e_ips" -v pi="$p_ips" -v r="$ratio" '
            function f(v, fmt) { return v == "" ? "-" : sprintf(fmt, v) }
            BEGIN { printf "| %s | %s | %s | %s | %s | %s | %s |\n", m, n, f(ea, "%.4f"), f(pa, "%.4f"),
                    f(ei, "%.0f"), f(pi, "%.0f"), r }'
    done
done
