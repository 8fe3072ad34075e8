#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/lm_vs_llamacpp.sh — a GGUF language model's speed and memory in
# ember next to llama.cpp (its llama-bench, built by bench/llamacpp-build.sh)
# and next to the PyTorch twin, on the same CPU, in one run, alternating:
#
#   bench/lm_vs_llamacpp.sh [MODEL.gguf]     default: build/models/SmolLM2-135M-Instruct.Q4_1.gguf
#
# For 1 and 2 threads, ROUNDS times (default 2): ember (bench/lm_speed.c),
# llama-bench, the twin (bench/lm_torch.py). pp: a PROMPT-token prompt
# (default 128) at once; tg: GEN tokens (default 128) one at a time; each
# tokens/s, the best of the runs, and the peak resident memory (llama-bench
# under /usr/bin/time). The issue's targets (41): generation at least 1.0x
# llama.cpp's, prompt processing at least 0.5x, both at least 3x the twin;
# peak memory at most llama.cpp's plus 20%. PRECISION=medium runs ember at
# EMBER_MATMUL_MEDIUM: generation's quantised products with 8-bit
# activations, as llama.cpp's. Prints Markdown.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/.."
. bench/common.sh
MODEL=${1:-build/models/SmolLM2-135M-Instruct.Q4_1.gguf}
ROUNDS=${ROUNDS:-2} PROMPT=${PROMPT:-128} GEN=${GEN:-128} PRECISION=${PRECISION:-highest}
[ -f "$MODEL" ] || { echo "lm_vs_llamacpp: no $MODEL (scripts/fetch-model.sh)" >&2; exit 1; }
bench/llamacpp-build.sh >&2
bench=build/peers/llama.cpp/bin/llama-bench
python=build/pyenv/bin/python
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
${CC:-cc} -O2 -Wall -Wextra bench/lm_speed.c -Iinclude build/libember.so -Wl,-rpath,"$(cd build && pwd)" -lm \
    -o "$TMP/lm_speed"
header "GGUF language model: ember next to llama.cpp and the PyTorch twin" \
    "$(command_line "bench/lm_vs_llamacpp.sh $MODEL" ROUNDS PROMPT GEN PRECISION)"
echo "Model: $(basename "$MODEL"); ember's matmul precision: $PRECISION; pp = $PROMPT tokens at once, tg = $GEN tokens one at a time (tokens/s, best of $ROUNDS rounds);"
echo "peak = the process's peak resident memory."
echo
for threads in 1 2; do
    for round in $(seq "$ROUNDS"); do
        "$TMP/lm_speed" "$MODEL" "$threads" "$PROMPT" "$GEN" cpu "$PRECISION" >>"$TMP/ember-$threads" 2>>"$TMP/err"
        /usr/bin/time -f "%M" -o "$TMP/peak" "$bench" -m "$MODEL" -t "$threads" -p "$PROMPT" -n "$GEN" -r 2 -o json \
            >"$TMP/llama.json" 2>>"$TMP/err"
        "$python" - "$TMP/llama.json" "$(cat "$TMP/peak")" >>"$TMP/llama-$threads" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
pp = next(r["avg_ts"] for r in rows if r["n_prompt"] > 0)
tg = next(r["avg_ts"] for r in rows if r["n_gen"] > 0)
print(json.dumps({"pp": pp, "tg": tg, "peak_mib": int(sys.argv[2]) / 1024}))
PY
        "$python" bench/lm_torch.py "$MODEL" "$threads" "$PROMPT" "$GEN" >>"$TMP/torch-$threads" 2>>"$TMP/err"
    done
done
best() { # FIELD FILE: the largest value of a field over the rounds
    sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | sort -g | tail -n 1
}
least() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | sort -g | head -n 1; }
echo "| threads | ember pp | llama.cpp pp | twin pp | ember tg | llama.cpp tg | twin tg | ember / llama.cpp pp, tg | ember / twin pp, tg | peak MiB ember, llama.cpp, twin |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for threads in 1 2; do
    e=$TMP/ember-$threads l=$TMP/llama-$threads t=$TMP/torch-$threads
    echo "| $threads | $(best pp "$e") | $(fmt "$(best pp "$l")" %.2f) | $(best pp "$t") | $(best tg "$e") | $(fmt "$(best tg "$l")" %.2f) | $(best tg "$t") | $(ratio "$(best pp "$e")" "$(best pp "$l")"), $(ratio "$(best tg "$e")" "$(best tg "$l")") | $(ratio "$(best pp "$e")" "$(best pp "$t")"), $(ratio "$(best tg "$e")" "$(best tg "$t")") | $(fmt "$(least peak_mib "$e")" %.0f), $(fmt "$(least peak_mib "$l")" %.0f), $(fmt "$(least peak_mib "$t")" %.0f) |"
done
if [ -s "$TMP/err" ]; then
    echo
    echo "(stderr of the runs: $(grep -ci error "$TMP/err" || true) lines with 'error')"
fi
