#!/bin/sh
# scripts/train.sh — the main job: set up, build, and train the PyTorch
# document's SimpleCNN on Fashion-MNIST for one epoch on the best device.
# Extra arguments go to `ember train` (e.g. --epochs 3, --device cpu).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/ember train --model simplecnn --data fashion-mnist --epochs 1 --batch 64 --lr 0.001 --seed 0 \
    --device "${EMBER_DEVICE:-auto}" --save simplecnn.safetensors --metrics simplecnn.jsonl "$@"
