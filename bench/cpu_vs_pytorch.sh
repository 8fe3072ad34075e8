#!/bin/sh
# bench/cpu_vs_pytorch.sh — training speed of ember and PyTorch on this CPU,
# side by side in one run: Fashion-MNIST, one epoch, batch 64, Adam 0.001,
# for each model and thread count. Prints a Markdown table for
# docs/benchmarks.md.
#
#   bench/cpu_vs_pytorch.sh [build/ember]
#
# PEER_PYTHON   a Python with torch (default: python3)
# PEERS         the folder of the peer scripts (default: ../shared/peers)
# MODELS        default "simplecnn kerascnn";  THREADS  default "1 2"
set -eu
EMBER=${1:-build/ember}
PY=${PEER_PYTHON:-python3}
PEERS=${PEERS:-../shared/peers}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | tail -n 1; }

echo "| model | threads | ember images/s | PyTorch images/s | ratio | ember test acc | PyTorch test acc | ember peak RSS MiB | PyTorch peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for model in ${MODELS:-simplecnn kerascnn}; do
    for threads in ${THREADS:-1 2}; do
        rm -f "$TMP/e.jsonl"
        "$EMBER" train --model "$model" --data fashion-mnist --epochs 1 --batch 64 --lr 0.001 --seed 0 \
            --device cpu --threads "$threads" --quiet --metrics "$TMP/e.jsonl" 2>/dev/null
        if "$PY" "$PEERS/torch_train.py" --model "$model" --data fashion --epochs 1 --batch 64 \
            --threads "$threads" >"$TMP/p.json" 2>/dev/null; then
            p_ips=$(field images_per_s "$TMP/p.json")
            p_acc=$(field test_acc "$TMP/p.json")
            p_rss=$(field peak_rss_mib "$TMP/p.json")
        else
            p_ips=- p_acc=- p_rss=-
        fi
        e_ips=$(field images_per_s "$TMP/e.jsonl")
        ratio=$(awk -v a="$e_ips" -v b="$p_ips" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
        echo "| $model | $threads | $e_ips | $p_ips | $ratio | $(field test_acc "$TMP/e.jsonl") | $p_acc |" \
            "$(field peak_rss_mib "$TMP/e.jsonl") | $p_rss |"
    done
done

# time to the first finished step and peak memory, from process start
echo
echo "| data | ember first step (s) | ember peak RSS MiB |"
echo "|---|---|---|"
for data in fashion-mnist random; do
    rm -f "$TMP/f.jsonl"
    "$EMBER" train --model simplecnn --data "$data" --steps 1 --no-eval --quiet --device cpu \
        --metrics "$TMP/f.jsonl" 2>/dev/null
    echo "| $data | $(field first_step_s "$TMP/f.jsonl") | $(field peak_rss_mib "$TMP/f.jsonl") |"
done
