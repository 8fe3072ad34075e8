#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/train.sh — the main job: set up, build, and train the PyTorch
# document's SimpleCNN on Fashion-MNIST for one epoch on the best device.
#
#   scripts/train.sh [OPTION...]    options of `ember train`, e.g. --epochs 3, --device cpu
#
# It installs the Debian packages it needs (scripts/setup.sh), builds the
# library and the program into build/, and trains, writing the model to
# simplecnn.safetensors and the metrics, every 50 steps and every epoch, to
# simplecnn.jsonl: `build/ember plot simplecnn.jsonl -o curves.png` draws them.
set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
-h | --help)
    sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"
    [ -x build/ember ] && echo && build/ember train --help
    exit 0
    ;;
esac
scripts/setup.sh
exec build/ember train --model simplecnn --data fashion-mnist --epochs 1 --batch 64 --lr 0.001 --seed 0 \
    --device "${EMBER_DEVICE:-auto}" --save simplecnn.safetensors --metrics simplecnn.jsonl --log-every 50 "$@"
