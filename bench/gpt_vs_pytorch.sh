#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gpt_vs_pytorch.sh — gpt-tiny trained by ember and its PyTorch twin
# on this CPU, side by side in one run: training tokens per second at 1
# and 2 threads (batch 32, context 128, AdamW, clipping), peak memory, and
# generation bytes per second (ember with its key/value cache and without;
# PyTorch's twin, as nanoGPT's generate(), without). The two run in turns,
# ROUNDS times each, so that a machine shared with other work slows both
# alike; each figure is the best of its rounds. Tokens per CPU second (the
# steps' tokens over the process's CPU time) say what the steps cost on a
# machine so busy that wall-clock rates measure the neighbours. Prints a
# Markdown section for docs/benchmarks.md.
#
#   bench/gpt_vs_pytorch.sh [build/ember]
#
# PEER_PYTHON   a Python with torch (default: build/pyenv/bin/python, Debian's PyTorch)
# TEXT          the corpus (default: Debian's fortunes, concatenated by scripts/fortunes.sh)
# STEPS         training steps per run (default 30; the first is left out of the rate)
# THREADS       default "1 2";  ROUNDS  default 2;  GENERATE  bytes to generate (default 200)
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
PY=${PEER_PYTHON:-build/pyenv/bin/python}
HERE=$(dirname "$0")
. "$HERE/common.sh"
STEPS=${STEPS:-30} ROUNDS=${ROUNDS:-2} GENERATE=${GENERATE:-200}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
TEXT=${TEXT:-$TMP/fortunes.txt}
[ -f "$TEXT" ] || "$HERE/../scripts/fortunes.sh" "$TEXT" >/dev/null

# ember's rate per CPU second, from the --log-every 1 lines' cpu_seconds (a step is 32 x 128
# tokens); its wall-clock rate is step_rate (common.sh)
ember_cpu_rate() {
    awk -F'"cpu_seconds": ' 'NR > 1 && /"step"/ { split($2, v, /[,}]/); t += v[1]; n++ }
        END { if (n && t > 0) printf "%.1f", n * 32 * 128 / t }' "$1"
}

header "gpt-tiny against its PyTorch twin" "$(command_line "bench/gpt_vs_pytorch.sh $EMBER" STEPS ROUNDS THREADS TEXT)"
echo
echo "| threads | ember tokens/s | PyTorch tokens/s | ratio | ember tokens/CPU-s | PyTorch tokens/CPU-s | ratio | ember peak MiB | PyTorch peak MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
for threads in ${THREADS:-1 2}; do
    e_best="" p_best="" e_mem="" p_mem="" e_cpu="" p_cpu=""
    round=0
    while [ $round -lt "$ROUNDS" ]; do
        rm -f "$TMP/e.jsonl"
        "$EMBER" train --model gpt-tiny --data text --data-dir "$TEXT" --steps "$STEPS" --batch 32 --optim adamw \
            --lr 1e-3 --weight-decay 0.1 --clip 1 --no-eval --quiet --device cpu --threads "$threads" \
            --log-every 1 --metrics "$TMP/e.jsonl" 2>/dev/null || true
        # PyTorch's OpenBLAS keeps threads of its own, which set_num_threads leaves alone: held to the same count
        OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads "$PY" "$HERE/torch_gpt_train.py" --text "$TEXT" \
            --steps "$STEPS" --threads "$threads" --generate 0 >"$TMP/p.json" 2>/dev/null || true
        e_best=$(best "$(step_rate "$TMP/e.jsonl")" "$e_best")
        p_best=$(best "$(field tokens_per_s "$TMP/p.json")" "$p_best")
        e_cpu=$(best "$(ember_cpu_rate "$TMP/e.jsonl")" "$e_cpu")
        p_cpu=$(best "$(field tokens_per_cpu_s "$TMP/p.json")" "$p_cpu")
        e_mem=$(least "$(field peak_rss_mib "$TMP/e.jsonl")" "$e_mem")
        p_mem=$(least "$(field peak_rss_mib "$TMP/p.json")" "$p_mem")
        round=$((round + 1))
    done
    echo "| $threads | $(fmt "$e_best" %.0f) | $(fmt "$p_best" %.0f) | $(ratio "$e_best" "$p_best") |" \
        "$(fmt "$e_cpu" %.0f) | $(fmt "$p_cpu" %.0f) | $(ratio "$e_cpu" "$p_cpu") |" \
        "$(fmt "$e_mem" %.0f) | $(fmt "$p_mem" %.0f) |"
done

# generation: a model trained a few steps, greedy, GENERATE bytes after a newline, 1 thread
"$EMBER" train --model gpt-tiny --data text --data-dir "$TEXT" --steps 5 --batch 32 --optim adamw --no-eval \
    --quiet --device cpu --save "$TMP/gpt.safetensors" 2>/dev/null
generation_rounds "--device cpu --threads 1" "--threads 1" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
echo
echo "| generation, 1 thread, $GENERATE bytes | bytes/s | against PyTorch's |"
echo "|---|---|---|"
echo "| ember, key/value cache | $(fmt "$g_cache" %.0f) | $(ratio "$g_cache" "$g_torch") |"
echo "| ember, the whole context each byte | $(fmt "$g_whole" %.0f) | $(ratio "$g_whole" "$g_torch") |"
echo "| PyTorch twin (nanoGPT's generate: the whole context each byte) | $(fmt "$g_torch" %.0f) | 1.00 |"
