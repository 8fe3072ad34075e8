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

# the stored vocabulary is read exactly as ember writes it (two lowercase hex
# digits a byte, the bytes distinct and ascending): a damaged one is exit 3,
# never a sscanf's guess (" a", "+a" and "-1" were bytes, a byte twice was
# two tokens). Each is the checkpoint with two characters of ember.vocab
# replaced, so that its header keeps its length.
damage() {
    "$PYTHON" - "$TMP/gpt.safetensors" "$TMP/bad.safetensors" "$1" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", data[:8])[0]
head = data[8:8 + n].decode()
vocab = json.loads(head)["__metadata__"]["ember.vocab"]
how = sys.argv[3]
new = vocab[2:4] + vocab[2:] if how == "twice" else how + vocab[2:]
head = head.replace('"' + vocab + '"', '"' + new + '"')
open(sys.argv[2], "wb").write(data[:8] + head.encode() + data[8 + n:])
PY
}
for bad in " a" "+a" "-1" "0A" "twice"; do
    damage "$bad"
    expect 3 "vocabulary (ember.vocab)" -- "$EMBER" generate --load "$TMP/bad.safetensors" --device cpu --tokens 5
done

# text comes as it is made: the first bytes of a long generation reach the
# reader at once (they came only at the end, after every token was made)
# (a million bytes take minutes; the pipe closes after twenty, which ends it)
timeout 120 "$EMBER" generate --load "$TMP/gpt.safetensors" --prompt "the cat" --tokens 1000000 --device cpu \
    2>/dev/null | head -c 20 >"$TMP/first"
[ "$(wc -c <"$TMP/first")" -eq 20 ] || fail "a reader had $(wc -c <"$TMP/first") bytes of 1,000,000 before the end"

# control bytes reach a terminal escaped, never as commands: a model of a
# text of ESC, NUL, BEL and words, its prompt and its text through a
# pseudo-terminal; into a pipe the bytes are the model's own
"$PYTHON" -c "
import sys
sys.stdout.buffer.write(b'ab\x1b[31mcd\x00\x07ef\x9b\xc2\x9b ' * 400)" >"$TMP/controls.txt"
run -- train --model gpt-tiny --data text --data-dir "$TMP/controls.txt" --context 128 --steps 2 --batch 4 \
    --quiet --device cpu --save "$TMP/controls.safetensors"
expect_status 0 "training on a text of control bytes"
"$PYTHON" - "$EMBER" "$TMP/controls.safetensors" "$TMP/tty" <<'PY'
import os, pty, sys
ember, ck, out = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(ember, [ember, "generate", "--load", ck, "--prompt", "ab\x1b[31m", "--tokens", "400",
                     "--temperature", "1", "--device", "cpu"])
got = b""
while True:
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        break
    if not chunk:
        break
    got += chunk
os.waitpid(pid, 0)
open(out, "wb").write(got)
PY
grep -q 'ab\\x1b\[31m' "$TMP/tty" || fail "the prompt's ESC reached the terminal unescaped: $(head -c 200 "$TMP/tty")"
"$PYTHON" -c "
import sys
t = open('$TMP/tty', 'rb').read()
bad = [b for b in t if (b < 0x20 and b not in (9, 10, 13)) or b == 0x7f]
sys.exit(1 if bad or b'\x9b' in t.replace(b'\xc2\x9b', b'') or b'\xc2\x9b' in t else 0)" ||
    fail "a control byte reached the terminal: $(od -c "$TMP/tty" | head -5)"
grep -q '\\x00\|\\x07\|\\x9b\|\\xc2' "$TMP/tty" || fail "400 bytes drawn from the model printed no escape: $(head -c 300 "$TMP/tty")"
run -- generate --load "$TMP/controls.safetensors" --prompt "ab" --tokens 400 --temperature 1 --device cpu
"$PYTHON" -c "
import sys
sys.exit(0 if b'\x1b' in open('$TMP/out', 'rb').read() or b'\x00' in open('$TMP/out', 'rb').read() else 1)" ||
    fail "into a file the model's bytes were escaped too"
finish test_generate
