#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/lora-demo.sh — the README's fine-tuning: SmolLM2-135M-Instruct
# (scripts/fetch-model.sh) taught Debian's fortunes with LoRA on the best
# device. The corpus is the first 400 kB of the fortunes
# (scripts/fortunes.sh), whose last tenth is the validation split; the
# model writes a fortune from the same prompt before and after, and ember
# says the validation loss before the first step and after the last.
# 80 steps of 4 windows of 128 tokens: minutes on two cores.
#
# With --chat, the fortunes as 1,200 conversations instead
# (scripts/fortune-chat.sh: a user asks for a fortune on a subject, the
# assistant answers with one), the loss on the answers alone; the model
# is asked for a fortune about computers before and after. 60 steps.
#
# Builds ember first if there is no build (scripts/setup.sh). Other
# arguments are passed on to `ember train` (--device cpu, --steps 200).
#
#   scripts/lora-demo.sh [--chat] [ember train options...]
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
[ -x build/ember ] || scripts/setup.sh
scripts/fetch-model.sh
model=build/models/SmolLM2-135M-Instruct.Q4_1.gguf
mkdir -p build/fortunes-lora build/fortune-chat-lora
rm -f build/fortunes-lora.jsonl build/fortune-chat-lora.jsonl # --metrics appends
if [ "${1:-}" = --chat ]; then
    shift
    scripts/fortune-chat.sh build/fortune-chat.jsonl 1200
    ask() { # the question, answered greedily, with the adapters when given
        echo "Tell me a fortune about computers." |
            build/ember chat --load "$model" ${1:+--adapter "$1"} --temperature 0 --tokens 60 | sed 's/^> //'
    }
    echo "lora-demo: before fine-tuning, asked \"Tell me a fortune about computers.\":"
    ask
    build/ember train --init "$model" --lora r=8,alpha=16 --data chat build/fortune-chat.jsonl \
        --context 128 --batch 4 --steps 60 --optim adamw --lr 1e-3 --seed 0 \
        --save build/fortune-chat-lora/adapter_model.safetensors --metrics build/fortune-chat-lora.jsonl "$@"
    echo "lora-demo: after, with the adapters:"
    ask build/fortune-chat-lora/adapter_model.safetensors
    exit 0
fi
scripts/fortunes.sh build/fortunes.txt
head -c 400000 build/fortunes.txt >build/fortunes-400k.txt
prompt="%
"
echo "lora-demo: before fine-tuning, the model continues \"%\" (the fortunes' separator):"
build/ember generate --load "$model" --prompt "$prompt" --tokens 60 --temperature 0
echo
build/ember train --init "$model" --lora r=8,alpha=16,dropout=0.05 --data text --data-dir build/fortunes-400k.txt \
    --context 128 --batch 4 --steps 80 --optim adamw --lr 1e-3 --seed 0 \
    --save build/fortunes-lora/adapter_model.safetensors --metrics build/fortunes-lora.jsonl "$@"
echo "lora-demo: after, with the adapters:"
build/ember generate --load "$model" --adapter build/fortunes-lora/adapter_model.safetensors --prompt "$prompt" \
    --tokens 60 --temperature 0
echo
