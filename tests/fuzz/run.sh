#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh — one bounded fuzzing run of a harness, as CI runs it:
#
#   run.sh FUZZER SEEDS REGRESSIONS SECONDS [LIBFUZZER-OPTIONS...]
#
# The seeds are copied to a scratch corpus (the fuzzer adds what it finds
# there, not in the build tree); the regression inputs run first. A crash,
# a sanitizer report, a hang (-timeout) or an allocation past the limits
# fails the run, and its input is kept in the folder printed: once the bug
# is fixed, add that input to tests/fuzz/regressions/<harness>/, where the
# ordinary suite replays it on every build. Prints libFuzzer's own last
# lines: executions, coverage, corpus.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -u
fuzzer=$1 seeds=$2 regressions=$3 seconds=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work/corpus"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp "$seeds"/* "$work/corpus/" 2>/dev/null
[ -d "$regressions" ] && cp "$regressions"/* "$work/corpus/" 2>/dev/null
# allocator_may_return_null: a refused allocation is ember's error to report, not the fuzzer's finding
ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1} \
    "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -malloc_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$@" "$work/corpus" >"$work/log" 2>&1
status=$?
grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*(DONE|INITED))" "$work/log" | tail -4
if [ $status -ne 0 ]; then
    tail -40 "$work/log" >&2
    echo "fuzz: $(basename "$fuzzer") failed; the input is in $work/artifacts/" >&2
    exit 1
fi
rm -rf "$work"
