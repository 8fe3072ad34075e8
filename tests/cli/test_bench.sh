#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_bench.sh EMBER — bench/targets.sh, the one command that judges
# ember's speed targets, runs from a build and prints a verdict for every
# target: tiny settings, no peers (their Pythons are the benchmark's own
# business), so the test checks the plumbing, never a speed.
set -eu
EMBER=$1
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() {
    echo "test_bench: $*" >&2
    exit 1
}
[ -d /usr/share/datasets/fashion-mnist ] || [ -n "${EMBER_DATA_DIR:-}" ] || {
    echo "test_bench: no Fashion-MNIST (dataset-fashion-mnist): skipped"
    exit 77
}
command -v cc >/dev/null || {
    echo "test_bench: no C compiler for bench/limits.c: skipped"
    exit 77
}
PEERS=none ROUNDS=1 STEPS=5 CONTENTION_STEPS=20 POCL_STEPS=3 PROFILE_STEPS=3 MODELS=simplecnn THREADS="1 2" SIZE=256 LIMIT_SECONDS=0.05 \
    BENCH_BUILD="$TMP/build" "$HERE/../../bench/targets.sh" "$EMBER" >"$TMP/out.md" 2>"$TMP/err" ||
    fail "bench/targets.sh failed: $(tail -n 3 "$TMP/err")"
grep -q '^## The targets' "$TMP/out.md" || fail "no targets table"
targets=$(sed -n '/^## The targets/,$p' "$TMP/out.md")
# row TEXT: the targets' row that starts with TEXT has a verdict and figures
row() {
    line=$(echo "$targets" | grep -F "| $1" | head -n 1)
    [ -n "$line" ] || fail "no row for '$1'"
    echo "$line" | grep -Eq '\| (met|\*\*missed\*\*[^|]*|not run) \|' || fail "no verdict: $line"
    echo "$line" | grep -Eq '[0-9]' || fail "no figures: $line"
}
row "beside a busy process"
row "idle, default threads"
row "twice PyTorch | simplecnn | 1"
row "twice Keras | simplecnn | 2"
row "fraction of the compute bound >= 0.3 | simplecnn | 2"
row "README command's first step"
row "its peak memory"
# a missed peer row says why; peers were not run here, so they say that
echo "$targets" | grep -F "| twice PyTorch | simplecnn | 1" | grep -q "not run" || fail "PEERS=none: the peer rows say 'not run'"
# a missed target names where the time goes, from the profile
if echo "$targets" | grep -F "fraction of the compute bound" | grep -q missed; then
    # (an op's name may carry its algorithm: "conv2d forward [im2col]")
    echo "$targets" | grep -F "fraction of the compute bound" | grep -Eq 'its time: [][a-z_0-9 ]+ [0-9.]+%' ||
        fail "a missed bound without the profile's largest ops"
fi
echo "test_bench: ok"
