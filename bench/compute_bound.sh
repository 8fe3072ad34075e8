#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/compute_bound.sh — how close ember trains to this machine's limit:
# for each model and thread count, its FLOPs per training image, the images
# per second those FLOPs allow at the large-sgemm rate (the compute bound),
# and ember's measured images/s as a fraction of it. Builds and runs
# bench/limits.c first (sgemm at a large size and at the models' own shapes,
# stream copy) and prints its tables too. Markdown, for docs/benchmarks.md.
#
#   bench/compute_bound.sh [build/ember]
#
# MODELS   default "simplecnn kerascnn resnet8";  THREADS  default "1 2"
# STEPS    ember's training steps per run (default 300), batch 64, Fashion-MNIST
# SIZE     the large sgemm's side (default 2048; 1024 for a quicker run)
# LIMIT_SECONDS  limits' time per figure (default 0.5)
# CC       the C compiler (default cc);  BENCH_BUILD  where limits is built (default build-bench)
#
# FLOPs per training image are `ember summary`'s "training step" figure:
# forward and backward, where a convolution's or linear layer's backward is
# twice its forward (weight and input gradients) except the first layer's,
# which has no input gradient, and every other layer's backward equals its
# forward. The optimizer's step is not counted (for Adam about 10 FLOPs per
# parameter per step, shared by the batch's 64 images).
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
HERE=$(dirname "$0")
# shellcheck source=bench/common.sh
. "$HERE/common.sh"
command=$(command_line "$0 $EMBER" MODELS THREADS STEPS SIZE LIMIT_SECONDS)
MODELS=${MODELS:-simplecnn kerascnn resnet8} THREADS=${THREADS:-1 2} STEPS=${STEPS:-300}
SIZE=${SIZE:-2048} LIMIT_SECONDS=${LIMIT_SECONDS:-0.5} CC=${CC:-cc} BENCH_BUILD=${BENCH_BUILD:-build-bench}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# limits, built when missing or older than its source
limits=$BENCH_BUILD/limits
if [ ! -x "$limits" ] || [ -n "$(find "$HERE/limits.c" -newer "$limits")" ]; then
    mkdir -p "$BENCH_BUILD"
    blas=$(pkg-config --cflags --libs openblas 2>/dev/null || echo -lopenblas)
    # shellcheck disable=SC2086  # blas is several compiler options
    "$CC" -O2 -Wall -Wextra "$HERE/limits.c" $blas -lpthread -o "$limits"
fi

header "ember against this machine's limits" "$command"
echo
echo "- **ember's runs**: \`ember train --device cpu --steps $STEPS --no-eval\`, batch 64, Fashion-MNIST"
echo
"$limits" --threads "$(echo "$THREADS" | tr ' ' ',')" --size "$SIZE" --seconds "$LIMIT_SECONDS" \
    --models "$(echo "$MODELS" | tr ' ' ',')" >"$TMP/limits.md"
sed 's/^## Machine limits/### Machine limits/; s/^### \(.*: its products\)/#### \1/' "$TMP/limits.md"

# the figure in the limits table: large COLUMN, or shapes MODEL COLUMN (1 = the first thread count)
large_rate() { awk -F'|' -v c=$(($1 + 2)) '$2 ~ /^ sgemm [0-9]+\^3/ { gsub(/ /, "", $c); print $c }' "$TMP/limits.md"; }
shapes_rate() {
    awk -F'|' -v m="$1" -v c=$(($2 + 5)) '/^### / { inside = index($0, "### " m ":") == 1 }
        inside && $2 ~ /images\/s, products alone/ { gsub(/ /, "", $c); print $c }' "$TMP/limits.md"
}
# "training step 715.0 k (forward ..." -> 715000
training_flops() {
    "$EMBER" summary --model "$1" | sed -n 's/.*training step \([0-9.]*\) \([kMG]*\) *(.*/\1 \2/p' |
        awk '{ print $1 * ($2 == "k" ? 1e3 : $2 == "M" ? 1e6 : $2 == "G" ? 1e9 : 1) }'
}

echo
echo "### Each model's speed as a fraction of its bounds"
echo
echo "| model | threads | training MFLOP per image | sgemm ${SIZE}^3 GFLOP/s | compute bound images/s |" \
    "its sgemms at their shapes, images/s | ember images/s | ember / compute bound | ember / its sgemms |"
echo "|---|---|---|---|---|---|---|---|---|"
for model in $MODELS; do
    flops=$(training_flops "$model")
    mflops=$(awk -v f="$flops" 'BEGIN { if (f > 0) printf "%.3f", f / 1e6 }')
    i=0
    for threads in $THREADS; do
        i=$((i + 1))
        rm -f "$TMP/e.jsonl"
        "$EMBER" train --model "$model" --data fashion-mnist --steps "$STEPS" --batch 64 --lr 0.001 --seed 0 \
            --device cpu --threads "$threads" --no-eval --quiet --metrics "$TMP/e.jsonl" 2>/dev/null || true
        touch "$TMP/e.jsonl"
        e=$(field images_per_s "$TMP/e.jsonl")
        rate=$(large_rate "$i")
        bound=$(awk -v r="$rate" -v f="$flops" 'BEGIN { if (r > 0 && f > 0) printf "%.0f", r * 1e9 / f }')
        shapes=$(shapes_rate "$model" "$i")
        echo "| $model | $threads | ${mflops:--} | $(fmt "$rate" %.1f) |" \
            "$(fmt "$bound" %.0f) | $(fmt "$shapes" %.0f) | $(fmt "$e" %.0f) | $(ratio "$e" "$bound" 3) |" \
            "$(ratio "$e" "$shapes" 3) |"
    done
done
echo
echo "Training MFLOP per image: \`ember summary\`'s training step (forward and backward; no optimizer step)."
echo "Compute bound: those FLOPs at the large sgemm's rate. \"Its sgemms at their shapes\": the images/s"
echo "if the model's matrix products alone ran, each at the rate measured at its own shape (the tables"
echo "above), and nothing else did."
