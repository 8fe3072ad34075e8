#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/wine_vs_native.sh — the Windows build under Wine next to the Linux
# build on the same machine, in one run: simplecnn for one epoch of
# Fashion-MNIST (the README's job), the Linux ember and the zip's ember.exe
# one after the other, ROUNDS times, on 1 and 2 threads: the images/s each
# reports, the ratio within the round, and both test accuracies.
# The machine may be shared: the ratios within a round are what to read.
# Prints a Markdown table for docs/benchmarks.md.
#
#   bench/wine_vs_native.sh [build] [build-win]
#
# ROUNDS  default 3;  THREADS  default "1 2"
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
BUILD=${1:-build} WIN=${2:-build-win}
ROUNDS=${ROUNDS:-3} THREADS=${THREADS:-"1 2"}
data=/usr/share/datasets/fashion-mnist
export WINEPREFIX=${WINEPREFIX:-$PWD/$WIN/wineprefix} WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
export WINEPATH="Z:$PWD/$WIN/deps/openblas/bin"
windows_data="Z:$(printf '%s' "$data" | tr '/' '\\')"
# "test accuracy A, N images/s" from the epoch's line
field() { sed -n "s/.*test accuracy \([0-9.]*\), \([0-9]*\) images\/s.*/\\$1/p" | tail -1; }
echo "| round | threads | Linux images/s | Wine images/s | Wine / Linux | accuracy Linux, Wine |"
echo "|---|---|---|---|---|---|"
for round in $(seq "$ROUNDS"); do
    for t in $THREADS; do
        "$BUILD/ember" train --epochs 1 --threads "$t" --seed 0 --data-dir "$data" --device cpu >/tmp/wvn.$$ 2>&1
        native=$(field 2 </tmp/wvn.$$) native_acc=$(field 1 </tmp/wvn.$$)
        wine "$WIN/ember.exe" train --epochs 1 --threads "$t" --seed 0 --data-dir "$windows_data" --device cpu \
            >/tmp/wvn.$$ 2>&1
        wine_speed=$(field 2 </tmp/wvn.$$) wine_acc=$(field 1 </tmp/wvn.$$)
        ratio=$(python3 -c "print(f'{$wine_speed / $native:.2f}')")
        echo "| $round | $t | $native | $wine_speed | $ratio | $native_acc, $wine_acc |"
    done
done
rm -f /tmp/wvn.$$
