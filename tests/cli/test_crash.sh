#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_crash.sh — training killed (SIGKILL) at random moments, saves
# included: every checkpoint left behind is whole (the previous one or the
# new one, never a torn file), every resume goes on (the model and its
# optimizer state are a pair that a kill cannot split: a kill between the
# two files leaves the old model's state kept aside, and resuming takes it),
# and the next run to the same path leaves no temporary file of the killed
# saves.
#
#   test_crash.sh EMBER [KILLS]
set -u
EMBER=$1 KILLS=${2:-12}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
ck=$TMP/run.safetensors
# a save every step of a small model: kills land inside saves often
train="train --data random --model mlp --device cpu --threads 1 --epochs 1000 --save-every 1 --quiet --save $ck"

i=0
survived=0
mid_save=0 # kills that landed inside a save: its temporary file is left
between=0  # kills between the state's save and the model's: resumed with the old state, kept aside
while [ $i -lt "$KILLS" ]; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # train is a list of arguments
    "$EMBER" $train >/dev/null 2>&1 &
    pid=$!
    # 0.15 to 0.9 s: past start-up, into the saves
    sleep "0.$(awk -v s="$i" 'BEGIN { srand(s * 7919); printf "%02d", 15 + int(rand() * 75) }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    ls "$TMP" | grep -q '\.tmp\.' && mid_save=$((mid_save + 1))
    [ -e "$ck" ] || continue
    survived=$((survived + 1))
    "$EMBER" eval --load "$ck" --data random --device cpu >"$TMP/out" 2>&1 ||
        fail "kill $i: the checkpoint left does not load: $(head -c 300 "$TMP/out")"
    "$EMBER" train --resume "$ck" --steps 1 --quiet --device cpu --save "$TMP/next.safetensors" >"$TMP/out" 2>&1 ||
        fail "kill $i: resume exited $?: $(head -c 300 "$TMP/out")"
    grep -q "the state saved with the model" "$TMP/out" && between=$((between + 1))
done
[ $survived -ge 3 ] || fail "only $survived of $KILLS runs lived long enough to save"

# a run to the same path that finishes cleans up after the killed ones
"$EMBER" train --data random --model mlp --device cpu --steps 2 --quiet --save "$ck" >/dev/null 2>&1 ||
    fail "the clean run"
left=$(ls "$TMP" | grep -c '\.tmp\.\|previous' || true)
[ "$left" -eq 0 ] || fail "files of the killed saves left after a clean run: $(ls "$TMP" | grep '\.tmp\.\|previous')"

if [ "$failures" -ne 0 ]; then
    echo "test_crash: $failures failures ($survived of $KILLS kills left a checkpoint)" >&2
    exit 1
fi
echo "test_crash: ok: $KILLS kills, $survived left a checkpoint, $mid_save inside a save, $between between the" \
    "state's save and the model's (each resumed)"
