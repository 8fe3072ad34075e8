#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/contention.sh — training speed when another program wants a core:
# ember with its default threads (every core) and with --threads 1, on an
# idle machine and beside one busy process (a shell loop that never
# sleeps, as a compile or a browser tab would be), alternated in one run.
# Issue 14's target: under that load the default trains at least 80% as
# fast as --threads 1 does, and on the idle machine it still scales.
#
#   bench/contention.sh [build/ember]
#
# MODELS  default "simplecnn kerascnn";  STEPS  default 300;  ROUNDS  default 2
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
STEPS=${STEPS:-300} ROUNDS=${ROUNDS:-2}
TMP=$(mktemp -d)
busy=""
cleanup() {
    [ -n "$busy" ] && kill "$busy" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

ips() { # MODEL THREADS-OPTION... -> images/s of one run
    model=$1
    shift
    rm -f "$TMP/m.jsonl"
    "$EMBER" train --model "$model" --steps "$STEPS" --no-eval --quiet --device cpu "$@" \
        --metrics "$TMP/m.jsonl" 2>/dev/null
    sed -n 's/.*"images_per_s": \([0-9.]*\).*/\1/p' "$TMP/m.jsonl" | tail -n 1
}

echo "## Training beside another busy program"
echo
echo "- **Machine**: $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs"
echo "- **Date**: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- **Command**: \`STEPS=$STEPS ROUNDS=$ROUNDS bench/contention.sh $EMBER\`; the load is \`sh -c 'while :; do :; done'\`"
echo
echo "| model | load | default threads, images/s | --threads 1, images/s | default / one thread |"
echo "|---|---|---|---|---|"
for model in ${MODELS:-simplecnn kerascnn}; do
    for load in idle busy; do
        if [ "$load" = busy ]; then
            sh -c 'while :; do :; done' &
            busy=$!
        fi
        all="" one=""
        round=0
        while [ "$round" -lt "$ROUNDS" ]; do
            all="$all $(ips "$model")"
            one="$one $(ips "$model" --threads 1)"
            round=$((round + 1))
        done
        if [ -n "$busy" ]; then
            kill "$busy"
            wait "$busy" 2>/dev/null || true
            busy=""
        fi
        ratio=$(echo "$all / $one" | awk '{ n = split($0, f, "/"); split(f[1], a, " "); split(f[2], b, " ");
            sa = 0; sb = 0; for (i in a) sa += a[i]; for (i in b) sb += b[i]; if (sb > 0) printf "%.2f", sa / sb }')
        echo "| $model | $load |$all |$one | $ratio |"
    done
done
