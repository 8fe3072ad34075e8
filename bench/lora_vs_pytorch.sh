#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/lora_vs_pytorch.sh — LoRA fine-tuning of SmolLM2-135M-Instruct by
# ember (`ember train --init MODEL.gguf --lora`, the model kept in Q4_1)
# and by its PyTorch twin (bench/lora_torch.py: the same network in
# float32, the same adapters, AdamW), side by side on this CPU: training
# tokens a second at 1 and 2 threads, the same per CPU-second (the twin is
# held to its threads, its OpenBLAS included: bench/blas_threads.py), and
# the peak resident memory of each process, batch 4, context 128, random
# tokens for the twin and the fortunes for ember. The two run in turns, so a machine shared with
# other work slows both alike, ROUNDS times, and each rate is the best of
# its rounds; the first step of each run is left out of its rate. Prints a
# Markdown table for docs/benchmarks.md.
#
#   bench/lora_vs_pytorch.sh [build/ember]
#
# MODEL   the GGUF file (default build/models/SmolLM2-135M-Instruct.Q4_1.gguf)
# PEER_PYTHON  a Python with torch and gguf (default build/pyenv/bin/python)
# STEPS   timed steps per run (default 4);  THREADS  default "1 2";  ROUNDS  default 2
# EMBER_ARGS  more options for ember train (--keep-activations: no recomputation;
#             --recompute-all: the products recomputed too; --matmul-precision high or
#             medium: bfloat16 x 3 or x 1 on a CPU with AMX)
# TWIN_BF16   1: the twin's forward pass under bfloat16 autocast (lora_torch.py bf16),
#             beside --matmul-precision medium
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
PY=${PEER_PYTHON:-build/pyenv/bin/python}
HERE=$(dirname "$0")
MODEL=${MODEL:-build/models/SmolLM2-135M-Instruct.Q4_1.gguf}
STEPS=${STEPS:-4} THREADS=${THREADS:-"1 2"} ROUNDS=${ROUNDS:-2} EMBER_ARGS=${EMBER_ARGS:-}
TWIN_BF16=${TWIN_BF16:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -f "$MODEL" ] || { echo "no $MODEL: scripts/fetch-model.sh fetches it" >&2; exit 1; }
"$HERE/../scripts/fortunes.sh" "$TMP/fortunes.txt" >/dev/null
head -c 400000 "$TMP/fortunes.txt" >"$TMP/text.txt"
echo "| threads | ember tokens/s | PyTorch tokens/s | ember / PyTorch | ember tokens/CPU-s | PyTorch tokens/CPU-s | ember peak MiB | PyTorch peak MiB |"
echo "|---|---|---|---|---|---|---|---|"
best() { [ -z "$1" ] && echo "$2" || "$PY" -c "print(max($1, $2))"; }
for t in $THREADS; do
  ember_best="" torch_best="" ember_cpu="" torch_cpu="" ember_rss=0 torch_rss=0
  for round in $(seq "$ROUNDS"); do
    rm -f "$TMP/m.jsonl"
    /usr/bin/time -f "%M" -o "$TMP/rss" "$EMBER" train --init "$MODEL" --lora r=8,alpha=16 --data text \
        --data-dir "$TMP/text.txt" --context 128 --batch 4 --steps $((STEPS + 1)) --optim adamw --lr 1e-3 \
        --no-eval --quiet --log-every 1 --metrics "$TMP/m.jsonl" --threads "$t" --device cpu $EMBER_ARGS 2>/dev/null
    ember=$("$PY" -c "
import json, sys
lines = [json.loads(l) for l in open('$TMP/m.jsonl') if '\"step\"' in l][1:]
print(round(len(lines) * 512 / sum(512 / l['images_per_s'] for l in lines), 1),
      round(len(lines) * 512 / sum(l['cpu_seconds'] for l in lines), 1))")  # a step: 4 x 128 tokens
    ember_cpu_rate=${ember#* } ember=${ember% *}
    ember_rss=$(($(cat "$TMP/rss") / 1024))
    torch=$("$PY" "$HERE/lora_torch.py" "$MODEL" "$t" "$STEPS" 4 128 ${TWIN_BF16:+bf16})
    torch_rate=$("$PY" -c "import json; print(json.loads('$torch')['tokens_per_s'])")
    torch_cpu_rate=$("$PY" -c "import json; print(json.loads('$torch')['tokens_per_cpu_s'])")
    torch_rss=$("$PY" -c "import json; print(round(json.loads('$torch')['peak_rss_mib']))")
    ember_best=$(best "$ember_best" "$ember") torch_best=$(best "$torch_best" "$torch_rate")
    ember_cpu=$(best "$ember_cpu" "$ember_cpu_rate") torch_cpu=$(best "$torch_cpu" "$torch_cpu_rate")
  done
  "$PY" -c "print(f'| $t | $ember_best | $torch_best | {$ember_best / $torch_best:.2f}x | $ember_cpu | $torch_cpu | $ember_rss | $torch_rss |')"
done
