#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_resume.sh — stopping and going on: a run interrupted or cut
# short and then resumed ends with the same parameters, bit for bit, as one
# that never stopped (the first 9,600 images of Fashion-MNIST, 150 steps an
# epoch; simplecnn, the CPU with one thread).
#
#   test_resume.sh path/to/ember path/to/checkpoint-compare
#
# checkpoint-compare reads the checkpoints with ember's own reader and
# compares their tensors bit for bit (tests/cli/checkpoint-compare.c).
set -u
EMBER=$1 COMPARE=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"
[ -n "$PYTHON" ] || { echo "skipped: no python3 to make the subset of Fashion-MNIST"; exit 77; }
"$PYTHON" "$(dirname "$0")/../common/fashion_subset.py" "${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}" \
    "$TMP/data" 9600 1000 || { echo "FAILED: no subset of Fashion-MNIST (Debian's dataset-fashion-mnist)"; exit 1; }
common="--model simplecnn --data fashion-mnist --data-dir $TMP/data --seed 7 --device cpu --threads 1 --quiet --no-eval"

# the parameters and buffers of two checkpoints are the same bits (what differs is printed)
same() { "$COMPARE" "$1" "$2" >"$TMP/compare" 2>&1 || { cat "$TMP/compare" >&2; return 1; }; }

# --- the reference: two epochs without a stop
run -- train $common --epochs 2 --save "$TMP/whole.safetensors"
expect_status 0 "two epochs"
[ -s "$TMP/whole.state.safetensors" ] || fail "no training state beside the checkpoint"

# --- one epoch, then one more
run -- train $common --epochs 1 --save "$TMP/one.safetensors"
cp "$TMP/one.safetensors" "$TMP/first-epoch.safetensors"
run -- train --resume "$TMP/one.safetensors" --epochs 2 --device cpu --threads 1 --quiet
expect_status 0 "resuming after an epoch"
expect_text "resuming $TMP/one.safetensors at epoch 2, step 0 of 150" "resuming after an epoch"
same "$TMP/whole.safetensors" "$TMP/one.safetensors" || fail "one epoch then one more differs from two"

# --- cut inside an epoch (--steps), with --save-every on the way, then resumed
run -- train $common --epochs 2 --steps 110 --save-every 50 --save "$TMP/cut.safetensors"
expect_status 0 "stopping at step 110"
expect_text "saved $TMP/cut.safetensors (--save-every)" "--save-every 50"
run -- train --resume "$TMP/cut.safetensors" --device cpu --threads 1 --quiet
expect_status 0 "resuming inside an epoch"
expect_text "at epoch 1, step 110 of 150" "resuming inside an epoch"
same "$TMP/whole.safetensors" "$TMP/cut.safetensors" || fail "stopped at step 110 and resumed differs from whole"

# --- a model of text cut inside an epoch and resumed, as an image run is: its
# state counts tokens, not windows (every such GPT run was refused, "its
# counts do not agree")
i=0
while [ $i -lt 800 ]; do
    printf 'the cat sat on the mat. a dog ran far; ' >>"$TMP/words.txt"
    i=$((i + 1))
done
gpt="--model gpt-tiny --data text --data-dir $TMP/words.txt --context 128 --batch 8 --optim adamw --lr 3e-3 --seed 5"
gpt="$gpt --device cpu --threads 1 --quiet --no-eval"
run -- train $gpt --epochs 2 --save "$TMP/gpt-whole.safetensors"
expect_status 0 "gpt-tiny, two epochs"
run -- train $gpt --epochs 2 --steps 21 --save "$TMP/gpt-cut.safetensors"
expect_status 0 "gpt-tiny stopped at step 21"
run -- train --resume "$TMP/gpt-cut.safetensors" --device cpu --threads 1 --quiet
expect_status 0 "resuming gpt-tiny inside an epoch"
expect_text "at epoch 1, step 21 of" "resuming gpt-tiny inside an epoch"
same "$TMP/gpt-whole.safetensors" "$TMP/gpt-cut.safetensors" || fail "gpt-tiny stopped at step 21 and resumed differs from whole"

# until the run in the background has begun training (its first progress line)
# The caller empties $TMP/err before it starts the run in the background, so
# that a line from the run before cannot be taken for this one's.
started() {
    for _ in $(seq 1 600); do
        grep -q "adam lr" "$TMP/err" 2>/dev/null && break
        sleep 0.05
    done
    sleep 0.3
}

# --- Ctrl-C: the step finishes, the run is saved, the status says so; resuming ends where the whole run did.
# Eight epochs (1,200 steps, seconds): the signal comes about 0.4 s after training begins, and must find it running
run -- train $common --epochs 8 --save "$TMP/whole8.safetensors"
: >"$TMP/err"
"$EMBER" train $common --epochs 8 --save "$TMP/int.safetensors" >"$TMP/out" 2>"$TMP/err" &
pid=$!
started
kill -INT $pid
wait $pid
status=$?
expect_status 130 "Ctrl-C"
expect_text "interrupted (Ctrl-C) at epoch" "Ctrl-C"
expect_text "to go on: $EMBER train --resume $TMP/int.safetensors" "Ctrl-C"
# the very command the hint gives: the threads (1, not every core) come back from the checkpoint
hint=$(sed -n "s|.*to go on: $EMBER ||p" "$TMP/err")
# shellcheck disable=SC2086 # the hint is a list of arguments
run -- $hint --quiet
expect_status 0 "resuming after Ctrl-C as the hint says ($hint)"
same "$TMP/whole8.safetensors" "$TMP/int.safetensors" || fail "interrupted and resumed differs from whole"

# --- SIGTERM the same way, with its own status
: >"$TMP/err"
"$EMBER" train $common --epochs 8 --save "$TMP/term.safetensors" >"$TMP/out" 2>"$TMP/err" &
pid=$!
started
kill -TERM $pid
wait $pid
status=$?
expect_status 143 "SIGTERM"
expect_text "stopped (SIGTERM)" "SIGTERM"

# --- with augmentation (shifted and mirrored images, drawn per epoch and place): the same after a resume
run -- train $common --epochs 1 --augment crop:2,flip --save "$TMP/aug.safetensors"
expect_status 0 "one epoch, augmented"
run -- train $common --epochs 1 --steps 60 --augment crop:2,flip --save "$TMP/aug-cut.safetensors"
run -- train --resume "$TMP/aug-cut.safetensors" --device cpu --threads 1 --quiet
expect_status 0 "resuming an augmented run"
same "$TMP/aug.safetensors" "$TMP/aug-cut.safetensors" || fail "an augmented run stopped and resumed differs"
same "$TMP/aug.safetensors" "$TMP/first-epoch.safetensors" && fail "augmentation changed nothing"

# --- what resuming refuses, and why
run -- train --resume "$TMP/one.safetensors" --lr 0.01 --device cpu --quiet
expect_status 3 "a setting that differs"
expect_text "--lr 0.01, but $TMP/one.safetensors was trained with 0.001" "a setting that differs"
cp "$TMP/one.safetensors" "$TMP/lonely.safetensors"
run -- train --resume "$TMP/lonely.safetensors" --device cpu --quiet
expect_status 3 "no training state"
expect_text "lonely.state.safetensors" "no training state"
run -- train $common --steps 20 --save "$TMP/early.safetensors"
cp "$TMP/early.state.safetensors" "$TMP/one.state.safetensors" # a state from another step
run -- train --resume "$TMP/one.safetensors" --device cpu --quiet
expect_status 3 "a pair from two steps"
expect_text "is from step" "a pair from two steps"
run -- train --save-every 10 --data random --quiet
expect_status 2 "--save-every without --save"

# --- a checkpoint and its state are checked as the command line is: each
# hostile value is refused (exit 3) at once, with its key named and its
# text escaped; none is trusted into arithmetic (UBSan) or a loop.
# retag FILE KEY=VALUE ...: those values into FILE's metadata (plain Python:
# the format is 8 bytes of length, a JSON header, the data; \xNN escapes).
# Python's standard library alone (json, struct): a plain python3.
PY=$(command -v python3 || true)
retag() {
    "$PY" - "$@" <<'EOF'
import json, struct, sys
path, pairs = sys.argv[1], sys.argv[2:]
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
for pair in pairs:
    key, value = pair.split("=", 1)
    head["__metadata__"][key] = value.encode().decode("unicode_escape")
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
open(path, "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
EOF
}
# hostile WHAT model|state KEY=VALUE TEXT: one.safetensors' pair with that value, refused saying TEXT
hostile() {
    cp "$TMP/one.safetensors" "$TMP/h.safetensors"
    cp "$TMP/one.state.safetensors" "$TMP/h.state.safetensors"
    if [ "$2" = model ]; then retag "$TMP/h.safetensors" "$3"; else retag "$TMP/h.state.safetensors" "$3"; fi
    timeout 60 "$EMBER" train --resume "$TMP/h.safetensors" --device cpu --threads 1 --quiet --steps 1 \
        >"$TMP/out" 2>"$TMP/err"
    status=$?
    expect_status 3 "$1"
    expect_text "$4" "$1"
    if grep -q "$(printf '\033')" "$TMP/err"; then fail "$1: an escape sequence reached the terminal"; fi
}
if [ -z "$PY" ]; then
    echo "test_resume: skipped: the hostile checkpoints (no python3 here to write them)"
else
run -- train $common --epochs 1 --save "$TMP/one.safetensors" # the pair the cases start from
hostile "epoch 10^12 in the state" state "ember.epoch=1000000000000" \
    'ember.epoch is "1000000000000", not a whole number from 0 to 1000000'
hostile "a place past the epoch" state "ember.step_in_epoch=151" "ember.step_in_epoch"
hostile "a place that is no step's" state "ember.epoch=0" "is not one of a run of 150 steps an epoch"
hostile "a loss that is not a number" state "ember.loss_sum=nan" "ember.loss_sum"
hostile "more right than seen" state "ember.correct=99" "its counts do not agree"
hostile "epochs of 2^63-1" model "ember.epochs=9223372036854775807" \
    'ember.epochs is "9223372036854775807", not a value of --epochs (a whole number from 1 to 1000000)'
hostile "a warm-up of 1e300" model "ember.warmup=1e300" "not a value of --warmup (a number from 0 to 1e+06)"
hostile "an unknown schedule" model "ember.schedule=linear" \
    'ember.schedule is "linear", not a value of --schedule (constant|step|cosine)'
hostile "an unknown optimizer" model "ember.optim=lbfgs" "not a value of --optim"
hostile "a bad augmentation" model "ember.augment=crop:9999" "not a value of --augment"
hostile "a bad data kind" model "ember.data=nothing" "unknown data set kind"
hostile "an escape in a setting" model 'ember.lr=\x1b[2J0.5' 'ember.lr is "\x1b[2J0.5"'
hostile "an escape in a count" state 'ember.seen=\x1b]0;owned\x07' 'ember.seen is "\x1b]0;owned\x07"'
hostile "2^66 optimizer steps" state "ember.optimizer_steps=99999999999999999999" "ember.optimizer_steps is not a count"
# a negative second moment of Adam's, which no run can have (its square root is NaN)
cp "$TMP/one.safetensors" "$TMP/h.safetensors"
"$PY" - "$TMP/one.state.safetensors" "$TMP/h.state.safetensors" <<'EOF'
import json, struct, sys
raw = bytearray(open(sys.argv[1], "rb").read())
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
begin = head["fc.weight.exp_avg_sq"]["data_offsets"][0] + 8 + n
raw[begin + 4 * 5:begin + 4 * 6] = struct.pack("<f", -0.5)
open(sys.argv[2], "wb").write(raw)
EOF
run -- train --resume "$TMP/h.safetensors" --device cpu --threads 1 --quiet --steps 1
expect_status 3 "a negative second moment"
expect_text "fc.weight.exp_avg_sq holds -0.5 at index 5" "a negative second moment"
fi

# --- a kill between the two files of a save leaves the new state beside the
# old model; the old model's state was kept aside, and resuming takes it
run -- train $common --epochs 2 --steps 50 --save "$TMP/pair.safetensors"
cp "$TMP/pair.state.safetensors" "$TMP/pair.state.previous.safetensors"
run -- train --resume "$TMP/pair.safetensors" --steps 80 --device cpu --threads 1 --quiet --save "$TMP/later.safetensors"
cp "$TMP/later.state.safetensors" "$TMP/pair.state.safetensors" # the newer state, its model never written
run -- train --resume "$TMP/pair.safetensors" --steps 110 --device cpu --threads 1 --quiet
expect_status 0 "a state kept aside"
expect_text "resuming with $TMP/pair.state.previous.safetensors, the state saved with the model" "a state kept aside"
[ -e "$TMP/pair.state.previous.safetensors" ] && fail "the state kept aside stayed after a whole save"
run -- train $common --epochs 2 --steps 110 --save "$TMP/ref110.safetensors"
same "$TMP/ref110.safetensors" "$TMP/pair.safetensors" || fail "resumed with the state kept aside, the run differs"
finish test_resume
