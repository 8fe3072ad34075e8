#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpt-demo.sh — the README's GPT: Debian's fortunes as one file
# (scripts/fortunes.sh installs the package if it is missing), gpt-tiny
# trained on it for one epoch (567 steps of 32 windows of 128 bytes: minutes
# on two cores) on the best device, its validation loss, and text from it.
# Builds ember first if there is no build (scripts/setup.sh). Arguments are
# passed on to `ember train` (--epochs 3 for the README's longer run, --device cpu).
#
#   scripts/gpt-demo.sh [ember train options...]
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
[ -x build/ember ] || scripts/setup.sh
scripts/fortunes.sh build/fortunes.txt
build/ember train --model gpt-tiny --data text --data-dir build/fortunes.txt --context 128 --batch 32 \
    --epochs 1 --optim adamw --lr 1e-3 --weight-decay 0.1 --clip 1 --seed 0 --save build/gpt-tiny.safetensors \
    --metrics build/gpt-tiny.jsonl "$@"
build/ember generate --load build/gpt-tiny.safetensors --prompt "The " --tokens 300 --temperature 0.8 --top-k 20
