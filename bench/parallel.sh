#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/parallel.sh — data-parallel training speed on this machine
# (docs/parallel.md): images per second of ember with one process, with
# `mpirun -np 2`, with two cpu replicas in one process and with PoCL's
# opencl:0 beside the CPU, next to PyTorch's DistributedDataParallel (gloo)
# with 1 and 2 processes: the same model and global batch (64), the first
# STEPS steps of Fashion-MNIST, side by side in one run. Then the scaling
# efficiency, and the all-reduce's cost model beside the sum's measured
# time. Prints Markdown for docs/benchmarks.md.
#
#   bench/parallel.sh [build/ember]
#
# MODELS   default "simplecnn kerascnn";  STEPS  default 300
# TORCH_PYTHON  a Python with torch (default: build/pyenv, Debian's PyTorch)
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
HERE=$(dirname "$0")
# shellcheck source=bench/common.sh
. "$HERE/common.sh"
command=$(command_line "$0 $EMBER" MODELS STEPS TORCH_PYTHON)
MODELS=${MODELS:-simplecnn kerascnn} STEPS=${STEPS:-300}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
has() { [ -n "$1" ] && "$1" -c "import $2" 2>/dev/null; }
torch_py=${TORCH_PYTHON:-build/pyenv/bin/python}
has "$torch_py" torch || torch_py=""

# rate OUTPUT: the images/s of an ember run's epoch line
rate() { sed -n 's/.* \([0-9]*\) images\/s.*/\1/p' "$1" | tail -n 1; }
# ember_run NAME ARGS...: one run, its rate in $TMP/NAME.rate and its output in $TMP/NAME.out
ember_run() {
    name=$1
    shift
    if "$@" >"$TMP/$name.out" 2>&1; then rate "$TMP/$name.out" >"$TMP/$name.rate"; else echo "" >"$TMP/$name.rate"; fi
}
get() { cat "$TMP/$1.rate" 2>/dev/null; }

header "Data parallel: one model on several devices and processes" "$command"
echo
echo "Fashion-MNIST, global batch 64, Adam 0.001, the first $STEPS steps (speed alone), images per second of"
echo "the training loop. ember's \`--threads 1\` rows give each process or replica one core of the two."
echo
echo "| model | ember 1 process, 1 thread | ember 1 process, 2 threads | ember mpirun -np 2 (1 thread each) | ember cpu,cpu | ember cpu,opencl:0 (kept) | ember cpu,opencl:0 (auto) | PyTorch DDP 1 process | PyTorch DDP 2 processes |"
echo "|---|---|---|---|---|---|---|---|---|"
RUN="train --steps $STEPS --no-eval --quiet"
for model in $MODELS; do
    ember_run one1 "$EMBER" $RUN --model "$model" --device cpu --threads 1
    ember_run one2 "$EMBER" $RUN --model "$model" --device cpu --threads 2
    ember_run mpi2 mpirun --oversubscribe -np 2 "$EMBER" $RUN --model "$model" --device cpu --threads 1
    ember_run cpu2 "$EMBER" $RUN --model "$model" --device cpu,cpu --keep-devices
    ember_run oclk "$EMBER" $RUN --model "$model" --device cpu,opencl:0 --keep-devices
    ember_run ocla "$EMBER" $RUN --model "$model" --device cpu,opencl:0
    for n in 1 2; do
        : >"$TMP/ddp$n.rate"
        [ -n "$torch_py" ] && "$torch_py" "$HERE/torch_ddp_train.py" --model "$model" --ranks $n --threads 1 \
            --steps "$STEPS" >"$TMP/ddp$n.out" 2>&1 && field images_per_s "$TMP/ddp$n.out" >"$TMP/ddp$n.rate"
    done
    echo "| $model | $(fmt "$(get one1)" %.0f) | $(fmt "$(get one2)" %.0f) | $(fmt "$(get mpi2)" %.0f) |" \
        "$(fmt "$(get cpu2)" %.0f) | $(fmt "$(get oclk)" %.0f) | $(fmt "$(get ocla)" %.0f) |" \
        "$(fmt "$(get ddp1)" %.0f) | $(fmt "$(get ddp2)" %.0f) |"
    # what the others say: shares, left-out devices, the sum's time
    sed -n 's/^ember: devices: /devices: /p; s/^ember: warning: //p' "$TMP/oclk.out" "$TMP/ocla.out" "$TMP/mpi2.out" |
        sed "s/^/    $model: /" >>"$TMP/notes"
    sum_ms=$(sed -n 's/.*across the ranks took \([0-9.]*\) ms a step.*/\1/p' "$TMP/mpi2.out" | tail -n 1)
    kib=$(sed -n 's/.*the sum of \([0-9]*\) KiB.*/\1/p' "$TMP/mpi2.out" | tail -n 1)
    v() { [ -n "$1" ] && echo "$1" || echo -; } # a field for `read`: never empty
    echo "$model $(v "$(get one1)") $(v "$(get mpi2)") $(v "$(get ddp1)") $(v "$(get ddp2)") $(v "$sum_ms")" \
        "$(v "$kib")" >>"$TMP/scaling"
done
echo
echo "Scaling efficiency of two processes (the rate of two over twice the rate of one, one thread each),"
echo "and the sum across the two ranks (gradients, BatchNorm statistics, the loss) as measured, beside"
echo "the cost model's 2(N-1)/N x bytes / bandwidth for links of 1 and 10 Gbit/s:"
echo
echo "| model | ember efficiency | PyTorch DDP efficiency | bytes summed a step | measured sum here (shared memory; includes waiting for the slower rank) | model, 1 Gbit/s | model, 10 Gbit/s |"
echo "|---|---|---|---|---|---|---|"
while read -r model one mpi ddp1 ddp2 sum_ms kib; do
    echo "| $model | $(ratio "$mpi" "$(awk -v a="$one" 'BEGIN { print 2 * a }')") |" \
        "$(ratio "$ddp2" "$(awk -v a="$ddp1" 'BEGIN { print 2 * a }')") | $kib KiB | $sum_ms ms |" \
        "$(awk -v k="$kib" 'BEGIN { if (k == "-") print "-"; else printf "%.2f ms", 1e3 * k * 1024 * 8 / 1e9 }') |" \
        "$(awk -v k="$kib" 'BEGIN { if (k == "-") print "-"; else printf "%.3f ms", 1e3 * k * 1024 * 8 / 1e10 }') |"
done <"$TMP/scaling"
echo
echo "What the trainer said:"
echo
echo '```'
cat "$TMP/notes"
echo '```'
[ -n "$torch_py" ] || echo "- PyTorch: not run: no Python with torch (set TORCH_PYTHON)."

# --- the cost model for the zoo: what N machines would give
echo
echo "The cost model for the zoo (docs/parallel.md, \"What it costs\"): a step of the global batch of 64 takes"
echo "T1 on one machine (measured here: two threads, the first 30 steps), T1/N of compute on each of N, plus the"
echo "ring all-reduce's 2(N-1)/N x the gradient's bytes over the link, nothing overlapped. The speedup over"
echo "one machine, predicted:"
echo
echo "| model | parameters | T1 (ms a step) | link | N = 2 | 4 | 8 | 16 | 32 | 64 |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for model in simplecnn kerascnn lenet5 vgg8 resnet8; do
    params=$("$EMBER" summary --model "$model" 2>/dev/null | sed -n 's/^Total params: \([0-9,]*\).*/\1/p' | tr -d ,)
    ember_run cost "$EMBER" train --model "$model" --steps 30 --no-eval --quiet --device cpu --threads 2
    r=$(get cost)
    for gbit in 1 10; do
        awk -v p="$params" -v r="$r" -v g="$gbit" -v m="$model" 'BEGIN {
            if (p == "" || r == "") { printf "| %s | - | - | %d Gbit/s | - | - | - | - | - | - |\n", m, g; exit }
            t1 = 64 / r; bytes = 4 * p; bw = g * 1e9 / 8
            printf "| %s | %d | %.2f | %d Gbit/s |", m, p, 1e3 * t1, g
            for (n = 2; n <= 64; n *= 2) printf " %.1fx |", t1 / (t1 / n + 2 * (n - 1) / n * bytes / bw)
            printf "\n" }'
    done
done
