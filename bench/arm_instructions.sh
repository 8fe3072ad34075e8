#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/arm_instructions.sh — the instructions an ARM core executes per
# training step of the arm64 build, with its NEON kernels and with plain
# loops (EMBER_CPU_SIMD=none), counted under qemu-user by the plugin
# bench/qemu_insn_count.c: the proxy for speed until a board reports
# (docs/embedded.md). Emulation times nothing, and an instruction count is
# not a time (one NEON multiply-add does four), but the same step in fewer
# instructions is what the vector kernels are for. One thread, so the
# count is exact; a step is the difference between runs of STEPS steps,
# which cancels the start and the evaluation. Prints Markdown.
#
#   bench/arm_instructions.sh [build-arm/ember]     [needs: scripts/arm-test.sh's build-arm]
#
# MODELS   default "simplecnn kerascnn resnet8";  STEPS  default "2 6"
# BATCH    default 64; the data is --data random (4096 seeded 1x28x28 samples)
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build-arm/ember}
HERE=$(dirname "$0")
MODELS=${MODELS:-simplecnn kerascnn resnet8} STEPS=${STEPS:-2 6} BATCH=${BATCH:-64}
qemu=$(command -v qemu-aarch64) || {
    echo "arm_instructions: no qemu-aarch64 (Debian's qemu-user, whose qemu takes plugins): scripts/setup.sh --arm" >&2
    exit 2
}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cc -O2 -shared -fPIC -o "$TMP/insn.so" "$HERE/qemu_insn_count.c"

# count SIMD MODEL STEPS: the instructions of a whole run
count() {
    EMBER_CPU_SIMD=$1 "$qemu" -plugin "$TMP/insn.so" -d plugin -D "$TMP/plugin.txt" "$EMBER" train \
        --model "$2" --data random --steps "$3" --batch "$BATCH" --threads 1 --seed 0 >/dev/null 2>&1
    sed -n 's/^instructions: //p' "$TMP/plugin.txt"
}

set -- $STEPS
short=$1 long=$2
echo "### Instructions per training step on 64-bit ARM, under qemu-user"
echo
echo "$(date -u +%Y-%m-%d), $(uname -m) host, $("$qemu" --version | head -n 1), command:"
echo "\`bench/arm_instructions.sh $EMBER\` (MODELS=\"$MODELS\" STEPS=\"$STEPS\" BATCH=$BATCH); one thread,"
echo "batch $BATCH of --data random; a step: (instructions of $long steps - of $short) / $((long - short))."
echo
echo "| model | NEON kernels | plain loops (EMBER_CPU_SIMD=none) | plain / NEON |"
echo "|---|---:|---:|---:|"
for model in $MODELS; do
    row="| $model"
    for simd in neon none; do
        a=$(count $simd "$model" "$short") b=$(count $simd "$model" "$long")
        per=$(((b - a) / (long - short)))
        row="$row | $per"
        eval "per_$simd=$per"
    done
    echo "$row | $(awk -v n="$per_neon" -v p="$per_none" 'BEGIN { printf "%.2f", p / n }') |"
done
