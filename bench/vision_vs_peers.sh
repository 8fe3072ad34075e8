#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/vision_vs_peers.sh — torchvision's MobileNetV2 and ResNet-18 in
# ember, ONNX Runtime and PyTorch on this CPU, side by side in one run:
# inference of one image (ember_model_predict against ONNX Runtime) and
# training at batch 32 (Adam; ember against PyTorch), 1 and 2 threads, at
# a small input size; ember on OpenCL too where a device is found (PoCL on
# a machine without a GPU). Each network is exported once by
# bench/vision_peers.py (training mode, BatchNorm kept) and read by ember
# from that file. Prints a Markdown table for docs/benchmarks.md.
#
#   bench/vision_vs_peers.sh [build]
#
# PEER_PYTHON   a Python with torch, torchvision and onnxruntime
#               (default: build/pyenv/bin/python, which scripts/setup.sh makes)
# NETS          default "mobilenet_v2 resnet18";  SIDE  default 64
# BATCH         training batch (default 32);  STEPS  training steps timed (default 5)
# CALLS         inferences timed (default 30);  THREADS  default "1 2"
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
BUILD=${1:-build}
PY=${PEER_PYTHON:-$BUILD/pyenv/bin/python}
SIDE=${SIDE:-64} BATCH=${BATCH:-32} STEPS=${STEPS:-5} CALLS=${CALLS:-30}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
${CC:-cc} -O2 -Wall -Wextra bench/vision_speed.c -Iinclude "$BUILD/libember.so" -Wl,-rpath,"$(cd "$BUILD" && pwd)" \
    -lm -o "$TMP/vision_speed"
# a JSON line's number under `key`
num() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
opencl=$("$BUILD/ember" devices 2>/dev/null | grep -c '^  opencl:0 ' || true)

echo "| network, 3x${SIDE}x${SIDE} | threads | ember 1 image (ms) | ONNX Runtime (ms) | ember / ORT speed | ember train images/s | PyTorch images/s | ember / PyTorch |"
echo "|---|---|---|---|---|---|---|---|"
for net in ${NETS:-mobilenet_v2 resnet18}; do
    for threads in ${THREADS:-1 2}; do
        "$PY" bench/vision_peers.py "$net" "$SIDE" "$threads" "$BATCH" "$STEPS" "$CALLS" "$TMP/$net.onnx" >"$TMP/peer"
        "$TMP/vision_speed" "$TMP/$net.onnx" cpu "$threads" "$BATCH" "$STEPS" "$CALLS" >"$TMP/ember"
        ep=$(num predict_ms "$TMP/ember") op=$(num ort_predict_ms "$TMP/peer")
        et=$(num train_images_per_s "$TMP/ember") pt=$(num torch_train_images_per_s "$TMP/peer")
        echo "| $net | $threads | $ep | $op | $(ratio "$op" "$ep") | $et | $pt | $(ratio "$et" "$pt") |"
    done
    if [ "$opencl" -gt 0 ]; then
        "$TMP/vision_speed" "$TMP/$net.onnx" opencl:0 0 "$BATCH" "$STEPS" "$CALLS" >"$TMP/ember" || continue
        dev=$(sed -n 's/.*"device": "\([^" ]*\)[^"]*Portable Computing Language.*/\1 (PoCL)/p; t; s/.*"device": "\([^" ]*\).*/\1/p' "$TMP/ember")
        echo "| $net on $dev | - | $(num predict_ms "$TMP/ember") | | | $(num train_images_per_s "$TMP/ember") | | |"
    fi
done
