#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_model_devices.sh — a model trained on another device ends where
# the CPU's does: the same model, seed and data order on real Fashion-MNIST
# images, on the cpu and on DEVICE, then the two compared.
#
#   test_model_devices.sh path/to/ember PYTHON MODEL DEVICE TRAIN TEST MAX_POINTS [TRAIN OPTIONS...]
#
# Trains one epoch on the first TRAIN training images and evaluates on the
# first TEST test images (tests/common/fashion_subset.py makes the subset). The
# final training losses must agree within 1% (the devices sum in other
# orders, so they are close, not equal) and the test accuracies within
# MAX_POINTS percentage points. Exits 77 (skipped) when DEVICE cannot be
# opened; a missing data set is a failure.
set -u
EMBER=$1 PYTHON=$2 MODEL=$3 DEVICE=$4 TRAIN=$5 TEST=$6 MAX=$7
shift 7 # the rest: more options for both runs (--schedule cosine)
DATA=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

"$EMBER" train --device "$DEVICE" --data random --steps 1 --no-eval --quiet >/dev/null 2>"$TMP/why" || {
    echo "skipped: $DEVICE cannot be opened: $(cat "$TMP/why")"
    exit 77
}
"$PYTHON" "$(dirname "$0")/../common/fashion_subset.py" "$DATA" "$TMP/data" "$TRAIN" "$TEST" || {
    echo "FAILED: cannot make a subset of $DATA (install Debian's dataset-fashion-mnist)" >&2
    exit 1
}

for device in cpu "$DEVICE"; do
    "$EMBER" train --model "$MODEL" --data fashion-mnist --data-dir "$TMP/data" --epochs 1 --batch 64 --lr 0.001 \
        --seed 0 --device "$device" --quiet --metrics "$TMP/$device.jsonl" "$@" 2>"$TMP/err" || {
        echo "FAILED: ember train on $device exited $?: $(cat "$TMP/err")" >&2
        exit 1
    }
    cat "$TMP/$device.jsonl"
done

field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | tail -n 1; }
awk -v m="$MODEL" -v d="$DEVICE" -v max="$MAX" \
    -v cl="$(field train_loss "$TMP/cpu.jsonl")" -v dl="$(field train_loss "$TMP/$DEVICE.jsonl")" \
    -v ca="$(field test_acc "$TMP/cpu.jsonl")" -v da="$(field test_acc "$TMP/$DEVICE.jsonl")" 'BEGIN {
    loss = (dl - cl) / cl; if (loss < 0) loss = -loss
    points = 100 * (da - ca); if (points < 0) points = -points
    printf "%s: train loss %.4f on cpu, %.4f on %s (%.2f%% apart); test accuracy %.4f on cpu, %.4f on %s " \
           "(%.2f points apart, at most %s)\n", m, cl, dl, d, 100 * loss, ca, da, d, points, max
    if (cl == "" || dl == "" || ca == "" || da == "") { print "FAILED: a run reported no figures"; exit 1 }
    if (loss > 0.01) { print "FAILED: the training losses are more than 1% apart"; exit 1 }
    if (points > max + 1e-9) { print "FAILED: the test accuracies are too far apart"; exit 1 }
}'
