#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_lm.sh — a pretrained language model from the command line:
# `ember chat` answers a question and a second turn (its key/value cache
# kept between turns), `ember generate --load MODEL.gguf` continues a
# prompt, the same with --chat, seeded draws are repeatable, --verbose's
# speed comes after the reply in a log of both streams, --profile's table,
# --matmul-precision medium's answer and its note where it changes nothing, `ember
# tokenize` shows the pieces, and each says what is wrong with a file that
# is no model it runs (not GGUF, cut short, another architecture, a missing
# file) with the data status, and with a prompt longer than the context.
#
#   test_lm.sh path/to/ember MODEL.gguf
set -u
EMBER=$1 MODEL=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"
if [ ! -f "$MODEL" ]; then
    echo "skipped: no $MODEL (scripts/fetch-model.sh fetches it)"
    exit 77
fi

# two turns, the second needing the first ("And of Germany?")
printf 'What is the capital of France?\nAnd of Germany?\n' >"$TMP/questions"
"$EMBER" chat --load "$MODEL" --temperature 0 --device cpu <"$TMP/questions" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0 "ember chat"
head -n 1 "$TMP/out" | grep -q "Paris" || fail "the first reply does not name Paris: $(cat "$TMP/out")"
sed -n 2p "$TMP/out" | grep -q "Berlin" || fail "the second reply does not name Berlin: $(cat "$TMP/out")"

run -- generate --load "$MODEL" --prompt "The capital of France is" --tokens 8 --temperature 0 --device cpu
expect_status 0 "generate from a GGUF model"
grep -q "^The capital of France is Paris" "$TMP/out" || fail "generate: $(cat "$TMP/out")"
run -- generate --load "$MODEL" --prompt "Name a primary color." --chat --tokens 20 --temperature 0 --device cpu --verbose
expect_status 0 "generate --chat"
grep -qi "red\|blue\|yellow" "$TMP/out" || fail "generate --chat names no primary color: $(cat "$TMP/out")"
expect_text "tokens/s" "generate --verbose's speed"
expect_text "Q4_1 weights" "generate --verbose's model line"
# a log holding both streams (as scripts/gpu-check.sh keeps them): the speed on a line of its own, after
# the whole reply, not glued to the reply's last line
"$EMBER" generate --load "$MODEL" --prompt "The capital of France is" --tokens 8 --temperature 0 --device cpu \
    --verbose >"$TMP/both" 2>&1
tail -n 1 "$TMP/both" | grep -q "^ember: prompt .* tokens/s" ||
    fail "generate --verbose's speed is not the log's last line, on its own: $(cat "$TMP/both")"
grep -q "^The capital of France is Paris" "$TMP/both" || fail "generate's reply in a shared log: $(cat "$TMP/both")"
run -- generate --load "$MODEL" --prompt "The capital of France is" --tokens 4 --temperature 0 --device cpu --profile
expect_status 0 "generate --profile"
grep -q "^profile of the model's runs$" "$TMP/err" || fail "generate --profile's title: $(head -n 3 "$TMP/err")"
expect_text "quant_matmul" "generate --profile's rows"
# --matmul-precision medium: the quantised products of generation take 8-bit activations (an answer all
# the same, and a note where it changes nothing: EMBER_CPU_SIMD=none); a word it does not know is refused
run -- generate --load "$MODEL" --prompt "The capital of France is" --tokens 8 --temperature 0 --device cpu \
    --matmul-precision medium
expect_status 0 "generate --matmul-precision medium"
grep -q "^The capital of France is Paris" "$TMP/out" || fail "generate at medium: $(cat "$TMP/out")"
grep -q "changes nothing" "$TMP/err" && fail "medium said it changes nothing on this CPU: $(cat "$TMP/err")"
EMBER_CPU_SIMD=none "$EMBER" generate --load "$MODEL" --prompt "Hi" --tokens 1 --device cpu --matmul-precision medium \
    >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0 "generate --matmul-precision medium under EMBER_CPU_SIMD=none"
expect_text "--matmul-precision medium changes nothing on cpu" "medium's note where it changes nothing"
run -- generate --load "$MODEL" --prompt "Hi" --tokens 1 --device cpu --matmul-precision low
expect_status 2 "--matmul-precision low"
expect_text "wants highest (float32), high" "--matmul-precision's words"
run -- generate --load "$MODEL" --prompt "Once upon a time" --tokens 12 --seed 7 --device cpu
cp "$TMP/out" "$TMP/drawn"
run -- generate --load "$MODEL" --prompt "Once upon a time" --tokens 12 --seed 7 --device cpu
cmp -s "$TMP/out" "$TMP/drawn" || fail "the same seed drew other text: $(cat "$TMP/drawn") | $(cat "$TMP/out")"

run -- tokenize --load "$MODEL" "Hello, world!"
expect_status 0 "tokenize"
expect_text "19556  'Hello'" "tokenize's pieces"
run -- tokenize --load "$MODEL" --ids "<|im_start|>user"
[ "$(cat "$TMP/out")" = "1 4093" ] || fail "tokenize --ids of a special token: $(cat "$TMP/out")"

# files that are no model ember runs: the data status and what is wrong
printf 'not a model' >"$TMP/text.gguf"
expect 3 "does not start with \"GGUF\"" -- "$EMBER" chat --load "$TMP/text.gguf" --device cpu
head -c 5000 "$MODEL" >"$TMP/cut.gguf"
expect 3 "is not a GGUF file ember can read" -- "$EMBER" generate --load "$TMP/cut.gguf" --prompt "Hi" --device cpu
expect 3 "cannot open" -- "$EMBER" chat --load "$TMP/missing.gguf" --device cpu
# another architecture: the header's first string value, renamed in a copy
python=${PYTHON:-python3}
if "$python" -c "import gguf" 2>/dev/null; then
    "$python" - "$TMP/other.gguf" <<'PY'
import sys, numpy as np, gguf
w = gguf.GGUFWriter(sys.argv[1], "gemma2")
w.add_tensor("token_embd.weight", np.zeros((4, 32), dtype=np.float32))
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
PY
    expect 4 "architecture \"gemma2\"" -- "$EMBER" chat --load "$TMP/other.gguf" --device cpu
fi
# a prompt longer than the context kept
expect 2 "the model keeps 16" -- "$EMBER" generate --load "$MODEL" --context 16 \
    --prompt "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen" --device cpu
expect 2 "load FILE is required" -- "$EMBER" chat
finish test_lm
