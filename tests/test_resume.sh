#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/test_resume.sh — stopping and going on: a run interrupted or cut
# short and then resumed ends with the same parameters, bit for bit, as one
# that never stopped (Fashion-MNIST, simplecnn, the CPU with one thread).
#
#   test_resume.sh path/to/ember path/to/checkpoint-compare
#
# checkpoint-compare reads the checkpoints with ember's own reader and
# compares their tensors bit for bit (tests/checkpoint-compare.c).
set -u
EMBER=$1 COMPARE=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/cli-util.sh"
common="--model simplecnn --seed 7 --device cpu --threads 1 --quiet --no-eval"

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
expect_text "resuming $TMP/one.safetensors at epoch 2, step 0 of 938" "resuming after an epoch"
same "$TMP/whole.safetensors" "$TMP/one.safetensors" || fail "one epoch then one more differs from two"

# --- cut inside an epoch (--steps), with --save-every on the way, then resumed
run -- train $common --epochs 2 --steps 700 --save-every 300 --save "$TMP/cut.safetensors"
expect_status 0 "stopping at step 700"
expect_text "saved $TMP/cut.safetensors (--save-every)" "--save-every 300"
run -- train --resume "$TMP/cut.safetensors" --device cpu --threads 1 --quiet
expect_status 0 "resuming inside an epoch"
expect_text "at epoch 1, step 700 of 938" "resuming inside an epoch"
same "$TMP/whole.safetensors" "$TMP/cut.safetensors" || fail "stopped at step 700 and resumed differs from whole"

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

# --- Ctrl-C: the step finishes, the run is saved, the status says so; resuming ends where the whole run did
: >"$TMP/err"
"$EMBER" train $common --epochs 2 --save "$TMP/int.safetensors" >"$TMP/out" 2>"$TMP/err" &
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
same "$TMP/whole.safetensors" "$TMP/int.safetensors" || fail "interrupted and resumed differs from whole"

# --- SIGTERM the same way, with its own status
: >"$TMP/err"
"$EMBER" train $common --epochs 1 --save "$TMP/term.safetensors" >"$TMP/out" 2>"$TMP/err" &
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
run -- train $common --epochs 1 --steps 400 --augment crop:2,flip --save "$TMP/aug-cut.safetensors"
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
run -- train $common --steps 100 --save "$TMP/early.safetensors"
cp "$TMP/early.state.safetensors" "$TMP/one.state.safetensors" # a state from another step
run -- train --resume "$TMP/one.safetensors" --device cpu --quiet
expect_status 3 "a pair from two steps"
expect_text "is from step" "a pair from two steps"
run -- train --save-every 10 --data random --quiet
expect_status 2 "--save-every without --save"
finish test_resume
