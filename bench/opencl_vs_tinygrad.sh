#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/opencl_vs_tinygrad.sh — training speed on the OpenCL device, next to
# ember's own cpu backend and to tinygrad's OpenCL backend on the same
# device, in one run: Fashion-MNIST, batch 64, Adam 0.001, the first STEPS
# steps (after the kernels are compiled and cached).
#
#   bench/opencl_vs_tinygrad.sh [build/ember]
#
# PEER_PYTHON  a Python with tinygrad (default python3); STEPS (default 300)
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
PY=${PEER_PYTHON:-python3}
STEPS=${STEPS:-300}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | tail -n 1; }

echo "| model | ember cpu images/s | ember opencl:0 images/s | tinygrad CL images/s | ember opencl / tinygrad |"
echo "|---|---|---|---|---|"
for model in simplecnn kerascnn; do
    for device in cpu opencl:0; do
        # once to compile and cache the kernels, once to measure
        "$EMBER" train --model "$model" --device "$device" --steps 5 --no-eval --quiet 2>/dev/null
        rm -f "$TMP/$device.jsonl"
        "$EMBER" train --model "$model" --device "$device" --steps "$STEPS" --no-eval --quiet \
            --metrics "$TMP/$device.jsonl" 2>/dev/null
    done
    if "$PY" "$(dirname "$0")/tinygrad_train.py" --model "$model" --steps "$STEPS" >"$TMP/t.json" 2>/dev/null; then
        t=$(field images_per_s "$TMP/t.json")
    else
        t=-
    fi
    c=$(field images_per_s "$TMP/cpu.jsonl")
    o=$(field images_per_s "$TMP/opencl:0.jsonl")
    ratio=$(awk -v a="$o" -v b="$t" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
    echo "| $model | $c | $o | $t | $ratio |"
done
