#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/project/test_cpu_limit.sh — the wrapper every test runs under
# (tests/common/cpu-limit.c) holds a test to the CPU time of all its
# processes: two spinning processes, one of them orphaned, are stopped
# together once they pass the limit (exit 124, said); a test that waits
# without using the CPU is stopped after the idle limit (125); a test's own
# exit status, a skip's 77 among them, passes through; the CPU log gets the
# test's line; stopped by a signal, it stops the test's processes too.
#
#   test_cpu_limit.sh CPU-LIMIT-PROGRAM
set -u
LIMIT=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

# an orphan (its parent shell exits at once) and a child, each spinning: 2 CPU seconds in all
start=$(date +%s)
spin="while :; do :; done # cpu-limit test $$"
EMBER_TEST_CPU_LIMIT=2 EMBER_TEST_CPU_LOG="$TMP/log" "$LIMIT" spin sh -c \
    "(sh -c '$spin' &) ; sh -c '$spin'" >"$TMP/out" 2>&1
status=$?
[ $status -eq 124 ] || fail "two spinning processes past 2 CPU seconds: exit $status, not 124: $(cat "$TMP/out")"
grep -q "cpu-limit: spin used [0-9.]* s of CPU time, more than its limit of 2 s" "$TMP/out" ||
    fail "the stop is not said: $(cat "$TMP/out")"
sleep 1
pgrep -f "cpu-limit test $$" >/dev/null && fail "a spinning process outlived the test it was part of"
grep -q "^spin [0-9.]* [0-9.]* 124\$" "$TMP/log" || fail "no line for the test in the CPU log: $(cat "$TMP/log")"
cpu=$(awk '{ print $2 }' "$TMP/log")
awk -v c="$cpu" 'BEGIN { exit !(c >= 2 && c < 4) }' || fail "the two processes' CPU time counted as $cpu s"

# waiting on what will not come, stopped by the idle limit long before its end
EMBER_TEST_IDLE_LIMIT=2 "$LIMIT" waits sleep 60 >"$TMP/out" 2>&1
status=$?
[ $status -eq 125 ] || fail "a test that waits: exit $status, not 125: $(cat "$TMP/out")"
[ $(($(date +%s) - start)) -lt 50 ] || fail "the idle test was not stopped at its idle limit"

# stopped itself (as by ctest, or a Ctrl-C), it stops every process of the test
"$LIMIT" stopped sh -c "(sh -c '$spin' &) ; sleep 60" >"$TMP/out" 2>&1 &
pid=$!
sleep 2
kill -TERM $pid
wait $pid
status=$?
[ $status -eq 143 ] || fail "cpu-limit stopped by SIGTERM: exit $status, not 143: $(cat "$TMP/out")"
sleep 1
pgrep -f "cpu-limit test $$" >/dev/null && fail "a process of the stopped test outlived it"

# a test's own exit status, under a limit it keeps
EMBER_TEST_CPU_LIMIT=100 "$LIMIT" skips sh -c 'exit 77'
[ $? -eq 77 ] || fail "a skip's exit 77 does not pass through"
EMBER_TEST_CPU_LIMIT=100 "$LIMIT" passes true || fail "a passing test does not pass"
"$LIMIT" missing "$TMP/no-such-program" 2>"$TMP/out"
[ $? -eq 127 ] && grep -q "cannot run" "$TMP/out" || fail "a missing program: $(cat "$TMP/out")"

[ $failures -eq 0 ] || exit 1
echo "cpu-limit: stops at the CPU limit and the idle limit, passes exit statuses through"
