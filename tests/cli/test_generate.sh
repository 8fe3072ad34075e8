#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_generate.sh — a model of text from the command line: `ember
# train --data text` saves gpt-tiny with its vocabulary (and chooses the
# epochs, without --epochs, that writing like the file takes), `ember eval` scores
# it in bits per byte from the checkpoint alone, and `ember generate`
# continues a prompt, the same bytes with and without the key/value cache
# at temperature 0, and says what is wrong with a bad prompt or a model
# that is not of text.
#
#   test_generate.sh path/to/ember
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

# 30 kB of words, a few steps of gpt-tiny on them
i=0
while [ $i -lt 1200 ]; do
    printf 'the cat sat on the mat. a dog ran far; ' >>"$TMP/words.txt"
    i=$((i + 1))
done
run -- train --model gpt-tiny --data text --data-dir "$TMP/words.txt" --context 128 --steps 12 --batch 8 \
    --optim adamw --lr 3e-3 --clip 1 --quiet --device cpu --metrics "$TMP/m.jsonl" --save "$TMP/gpt.safetensors"
expect_status 0 "training gpt-tiny on text"
expect_text "bits per byte" "the epoch line"
grep -q '"test_bits_per_byte"' "$TMP/m.jsonl" || fail "the metrics have no bits per byte: $(cat "$TMP/m.jsonl")"
# text without --epochs or --steps: ember trains as many epochs as writing like the file takes (a
# bigram model here, for speed), says so, and the text it writes is made of the file's words (after
# the one epoch it trained before, about one word in ten was)
printf 'input 32\nembed: embedding 16\nlm_head: linear classes\n' >"$TMP/bigram.model"
run -- train --model "$TMP/bigram.model" --data text --data-dir "$TMP/words.txt" --context 32 --optim adamw --lr 3e-3 \
    --device cpu --save "$TMP/bigram.safetensors"
expect_status 0 "training on text without --epochs"
expect_text "note: an epoch of this text is 21 steps of 64 windows of 32 bytes" "the epochs chosen for text"
expect_text "so this run trains 163 epochs (3423 steps; --epochs or --steps chooses otherwise)" "the epochs chosen for text"
grep -q "^epoch 163/163: " "$TMP/err" || fail "the epochs chosen are not trained: $(tail -3 "$TMP/err")"
run -- generate --load "$TMP/bigram.safetensors" --prompt "the " --tokens 80 --seed 1 --temperature 0.5 --device cpu
expect_status 0 "generate from the bigram model"
known=$(tr -cs 'a-z' '\n' <"$TMP/out" | awk 'BEGIN { split("the cat sat on mat a dog ran far", w, " "); for (i in w) k[w[i]] = 1 }
    NF { n++; if ($1 in k) m++ } END { print (4 * m >= n && n > 5) ? "yes" : m "/" n }')
[ "$known" = yes ] || fail "the text is not made of the file's words ($known of its words are): $(cat "$TMP/out")"
run -- eval --load "$TMP/gpt.safetensors" --device cpu --json
expect_status 0 "ember eval of a text model"
expect_text "\"bits_per_byte\"" "eval's JSON"

# the same bytes with the cache and without; the prompt comes first
run -- generate --load "$TMP/gpt.safetensors" --prompt "the cat" --tokens 80 --temperature 0 --device cpu
expect_status 0 "generate"
cp "$TMP/out" "$TMP/cached"
run -- generate --load "$TMP/gpt.safetensors" --prompt "the cat" --tokens 80 --temperature 0 --no-cache --device cpu
expect_status 0 "generate --no-cache"
cmp -s "$TMP/out" "$TMP/cached" || fail "generation with the cache differs from without: $(cat "$TMP/cached") | $(cat "$TMP/out")"
head -c 7 "$TMP/cached" | grep -q "^the cat" || fail "the output does not start with the prompt: $(cat "$TMP/cached")"
[ "$(wc -c <"$TMP/cached")" -eq 88 ] || fail "80 bytes after a 7-byte prompt and a newline: $(wc -c <"$TMP/cached")"
# seeded draws: the same seed, the same text
run -- generate --load "$TMP/gpt.safetensors" --tokens 60 --temperature 1 --top-k 5 --seed 4 --device cpu
cp "$TMP/out" "$TMP/drawn"
run -- generate --load "$TMP/gpt.safetensors" --tokens 60 --temperature 1 --top-k 5 --seed 4 --device cpu
cmp -s "$TMP/out" "$TMP/drawn" || fail "the same seed drew other text"

# mistakes
expect 2 "never occurs in the text" -- "$EMBER" generate --load "$TMP/gpt.safetensors" --prompt "XYZ" --device cpu
expect 2 "load FILE is required" -- "$EMBER" generate --prompt "the"
expect 2 "prompt is empty" -- "$EMBER" generate --load "$TMP/gpt.safetensors" --prompt ""
run -- train --model simplecnn --data random --steps 1 --no-eval --quiet --device cpu --save "$TMP/cnn.safetensors"
expect_status 0 "a model of images"
expect 3 "no vocabulary" -- "$EMBER" generate --load "$TMP/cnn.safetensors" --device cpu
expect 3 "cannot read" -- "$EMBER" generate --load "$TMP/missing.safetensors" --device cpu
finish test_generate
