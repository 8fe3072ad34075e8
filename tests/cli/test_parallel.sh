#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_parallel.sh — data-parallel training as a user of `ember train`
# sees it (docs/parallel.md):
#
#   - equivalence: --device cpu,cpu, cpu,opencl:0 (PoCL) and mpirun -np 2
#     reach one device's parameters after 50 steps (float tolerance) and its
#     test accuracy within 0.3 points after an epoch of Fashion-MNIST;
#   - --device all, and a device that does not exist;
#   - two GPUs of different generations (the CUDA test double's H100 and
#     K40m) reach one device's parameters;
#   - faults: a rank killed mid-epoch (the others end, non-zero, within
#     30 s); a rank stopped (SIGSTOP): the others give up after
#     EMBER_MPI_TIMEOUT with a message; Ctrl-C reaching one rank: all stop
#     after the same step, rank 0 saves, the run resumes; a GPU that fails mid-run in one
#     process (the CUDA test double): the run stops with its reason and the
#     last checkpoint stays as it was.
#
#   test_parallel.sh EMBER CHECKPOINT-COMPARE [FAKE_CUDA]
#
# CHECKPOINT-COMPARE (tests/cli/checkpoint-compare.c) compares checkpoints with
# ember's own reader.
set -u
EMBER=$1 COMPARE=$2 FAKE_CUDA=${3:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"
# Open MPI as root, two ranks on however many cores, in a container
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export EMBER_CACHE_DIR="$TMP/cache"
DATA=/usr/share/datasets/fashion-mnist
if [ ! -d "$DATA" ]; then
    echo "no Fashion-MNIST in $DATA (Debian's dataset-fashion-mnist): skipped"
    exit 77
fi
has_opencl=no
run -- devices --json
grep -A4 '"name": "opencl:0",' "$TMP/out" | grep -q '"usable": true' && has_opencl=yes
# MPI is in ember-mpi, beside ember, which ember runs under mpirun
has_mpi=no
command -v mpirun >/dev/null && [ -x "$(dirname "$EMBER")/ember-mpi" ] && has_mpi=yes
[ $has_mpi = yes ] || echo "note: no mpirun, or no ember-mpi beside $EMBER: the runs under mpirun are not checked"
[ $has_opencl = yes ] || echo "note: no usable opencl:0: cpu,opencl:0 is not checked"

# --- the same parameters after 50 steps
same_params() { # WHAT FILE: FILE within float tolerance of $TMP/one.safetensors (ember's own reader)
    if "$COMPARE" "$TMP/one.safetensors" "$2" 1e-5 >"$TMP/compare" 2>&1; then
        echo "  $1: $(cat "$TMP/compare")"
    else
        fail "$1: the parameters are not one device's: $(cat "$TMP/compare")"
    fi
}
STEPS="train --steps 50 --no-eval --quiet --seed 5"
run -- $STEPS --device cpu --save "$TMP/one.safetensors"
expect_status 0 "50 steps on the cpu"
run -- $STEPS --device cpu,cpu --keep-devices --save "$TMP/cpu2.safetensors"
expect_status 0 "50 steps on cpu,cpu"
expect_text "devices: cpu " "50 steps on cpu,cpu" # shares by speed: near half each, not exactly
expect_text " + cpu " "50 steps on cpu,cpu"
same_params "cpu,cpu" "$TMP/cpu2.safetensors"
if [ $has_opencl = yes ]; then
    run -- $STEPS --device cpu,opencl:0 --keep-devices --save "$TMP/ocl.safetensors"
    expect_status 0 "50 steps on cpu,opencl:0"
    expect_text "+ opencl:0 " "50 steps on cpu,opencl:0"
    same_params "cpu,opencl:0" "$TMP/ocl.safetensors"
else
    echo "note: no usable opencl:0 (PoCL): cpu,opencl:0 not run"
fi
if [ $has_mpi = yes ]; then
    expect 0 "on rank 0 of 2" -- mpirun --oversubscribe -np 2 "$EMBER" $STEPS --threads 1 --save "$TMP/mpi.safetensors"
    same_params "mpirun -np 2" "$TMP/mpi.safetensors"
else
    echo "note: no mpirun, or ember built without MPI: the mpirun cases were not run"
fi

# --- the same test accuracy after an epoch, within 0.3 points
accuracy() { sed -n 's/.*test accuracy \([0-9.]*\).*/\1/p' "$1" | tail -1; }
close() { # WHAT ACCURACY: within 0.003 of the single device's
    awk -v a="$2" -v b="$single" 'BEGIN { d = a - b; exit !(a != "" && d < 0.003 && d > -0.003) }' ||
        fail "$1: test accuracy $2 against one device's $single"
    echo "  $1: test accuracy $2 (one device: $single)"
}
EPOCH="train --quiet --seed 5"
run -- $EPOCH --device cpu
single=$(accuracy "$TMP/err")
[ -n "$single" ] || fail "one epoch on the cpu: no test accuracy: $(cat "$TMP/err")"
run -- $EPOCH --device cpu,cpu
close "cpu,cpu" "$(accuracy "$TMP/err")"
if [ $has_opencl = yes ]; then
    run -- $EPOCH --device cpu,opencl:0 --keep-devices
    close "cpu,opencl:0" "$(accuracy "$TMP/err")"
fi
if [ $has_mpi = yes ]; then
    mpirun --oversubscribe -np 2 "$EMBER" $EPOCH --threads 1 >"$TMP/out" 2>"$TMP/err"
    close "mpirun -np 2" "$(accuracy "$TMP/err")"
    [ "$(grep -c "test accuracy" "$TMP/err")" -eq 1 ] || fail "mpirun -np 2: rank 0 alone reports: $(cat "$TMP/err")"
fi

# --- every device, and one that does not exist
run -- train --device all --steps 20 --no-eval --quiet
expect_status 0 "--device all"
[ $has_opencl = yes ] && expect_text "devices: cpu" "--device all: the cpu (auto's choice over PoCL) keeps the model"
run -- train --device cpu,nonsense:1 --steps 5 --no-eval --quiet
[ "$status" -ne 0 ] || fail "cpu,nonsense:1 trained"
expect_text "cannot train on nonsense:1" "cpu,nonsense:1"

# --- faults under mpirun
# rank 1 of this run, found by its environment (other tests may run ember too)
rank1() {
    for p in $(pgrep -x 'ember|ember-mpi'); do # under mpirun, ember runs ember-mpi
        env=$( (tr '\0' '\n' <"/proc/$p/environ") 2>/dev/null) # it may have ended meanwhile
        echo "$env" | grep -qx "EMBER_TEST_TAG=$$" && echo "$env" | grep -qx OMPI_COMM_WORLD_RANK=1 && echo "$p"
    done
}
# starts a long run, waits for its first metrics line, does SIGNAL to rank 1,
# and times the end: $TMP/fault.out, $fault_status, $fault_seconds
fault_run() { # SIGNAL [VAR=VALUE]
    rm -f "$TMP/m.jsonl"
    start=$(date +%s)
    # shellcheck disable=SC2086 # an optional -x
    # shellcheck disable=SC2086 # EXTRA: more options, a list
    mpirun --oversubscribe -np 2 -x EMBER_TEST_TAG=$$ ${2:+-x $2} "$EMBER" train --epochs 30 --threads 1 --quiet \
        --no-eval --metrics "$TMP/m.jsonl" --log-every 20 ${EXTRA:-} >"$TMP/fault.out" 2>&1 &
    job=$!
    i=0
    while [ ! -s "$TMP/m.jsonl" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    victim=$(rank1)
    [ -n "$victim" ] || fail "no rank 1 found to $1"
    t0=$(date +%s)
    [ -n "$victim" ] && kill "-$1" "$victim"
    wait $job
    fault_status=$?
    fault_seconds=$(($(date +%s) - t0))
    sleep 1
    left=$(rank1)
    [ -z "$left" ] || { fail "rank 1 ($left) outlived mpirun"; kill -9 "$left"; }
}
if [ $has_mpi = yes ]; then
    fault_run KILL
    [ "$fault_status" -ne 0 ] || fail "a killed rank: mpirun exited 0"
    [ "$fault_seconds" -le 30 ] || fail "a killed rank: the others took $fault_seconds s to end"
    grep -q "rank 1 .*exited on signal 9" "$TMP/fault.out" || fail "a killed rank: no message: $(cat "$TMP/fault.out")"
    echo "  a killed rank: every rank ended in $fault_seconds s, exit $fault_status"

    fault_run STOP EMBER_MPI_TIMEOUT=4
    [ "$fault_status" -ne 0 ] || fail "a stopped rank: mpirun exited 0"
    [ "$fault_seconds" -le 30 ] || fail "a stopped rank: the others took $fault_seconds s to end"
    grep -q "no answer from the other ranks for 4 s" "$TMP/fault.out" ||
        fail "a stopped rank: no message: $(cat "$TMP/fault.out")"
    echo "  a stopped rank: every rank ended in $fault_seconds s, exit $fault_status"

    # Ctrl-C reaching one rank: every rank stops after the same step, rank 0 saves, the run resumes
    EXTRA="--save $TMP/int.safetensors" fault_run INT
    [ "$fault_seconds" -le 30 ] || fail "an interrupted rank: the others took $fault_seconds s to end"
    grep -q "saved $TMP/int.safetensors (interrupted)" "$TMP/fault.out" ||
        fail "an interrupted rank: rank 0 did not save: $(cat "$TMP/fault.out")"
    grep -q "stopped (another rank was interrupted)" "$TMP/fault.out" ||
        fail "an interrupted rank: no word of it: $(cat "$TMP/fault.out")"
    run -- train --resume "$TMP/int.safetensors" --epochs 1 --steps 5 --no-eval --quiet
    expect_status 0 "resuming after an interrupted rank"
    echo "  an interrupted rank: every rank stopped after the same step in $fault_seconds s, rank 0 saved"
fi

# --- two GPUs of different generations (the CUDA test double: an H100 and a
# K40m, each on its own kernel path) train as one device does; then a GPU
# that fails mid-run: its reason, and the checkpoint of the step before
if [ -n "$FAKE_CUDA" ] && [ -f "$FAKE_CUDA" ]; then
    run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=90:H100-double,35:K40m-double EMBER_FAKE_CUDA_DRIVER=13000" \
        -- $STEPS --steps 20 --device cuda:0,cuda:1 --keep-devices --save "$TMP/gpus.safetensors"
    expect_status 0 "cuda:0,cuda:1 (an H100 and a K40m)"
    expect_text "devices: cuda:0 " "cuda:0,cuda:1 (an H100 and a K40m)"
    run -- $STEPS --steps 20 --device cpu --save "$TMP/one.safetensors"
    same_params "cuda:0,cuda:1 (an H100 and a K40m)" "$TMP/gpus.safetensors"

    DOUBLE="EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=90:H100-double EMBER_FAKE_CUDA_DRIVER=13000 EMBER_CUDA_KERNELS=baseline"
    # the double's cross-entropy kernel fails on its second launch: cuda:0's share of step 2
    run "$DOUBLE EMBER_FAKE_CUDA_FAULT=cross_entropy_backward:2:700" -- train --device cpu,cuda:0 --keep-devices --steps 10 --no-eval \
        --quiet --save "$TMP/gpu.safetensors" --save-every 1
    expect_status 4 "a GPU failing mid-run"
    expect_text "cuda:0 failed during its share of the step" "a GPU failing mid-run"
    expect_text "CUDA_ERROR_ILLEGAL_ADDRESS" "a GPU failing mid-run"
    grep -q '"ember.forwards":"1"' "$TMP/gpu.safetensors" ||
        fail "a GPU failing mid-run: the checkpoint is not step 1's: $(head -c 300 "$TMP/gpu.safetensors")"
    run -- eval --load "$TMP/gpu.safetensors" --device cpu
    expect_status 0 "the checkpoint before the failure loads"
else
    echo "note: no CUDA test double given: the failing-GPU case was not run"
fi

finish test_parallel.sh
