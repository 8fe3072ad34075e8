#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/gpu-check.sh — everything the CUDA backend needs a GPU to show,
# in one call, from a clone on a machine with an NVIDIA GPU and no network
# (a lent GPU machine's half hour: under 8 minutes on an H100 with 16 cores):
#
#   1. the build: OpenBLAS if there is one (the pack has it), else ember's own sgemm
#   2. `ember devices` and `--json`, nvidia-smi's GPU and driver
#   3. on every kernel path: NVRTC's cubin, NVRTC's PTX, the built-in sm_30 PTX,
#      and the Kepler conditions on this GPU: a Quadro K2100M's R418 driver
#      (EMBER_CUDA_MAX_PTX=6.4: the built-in PTX) and a K40m's R470 driver with
#      CUDA 11.8's NVRTC as the only one (its cubin, the old toolkit for real):
#      the CUDA tests (parity, gradients, memory, models, an epoch against the
#      CPU), then simplecnn one epoch, kerascnn two and resnet8 (BatchNorm,
#      residual blocks) one on Fashion-MNIST, test accuracy next to the CPU's
#      (within 0.5 points; resnet8 by its training loss, within 1%: below; it is
#      left out on the double, too slow there)
#   4. speed: images/s at batch 64 and 1024 on both kernel paths next to PyTorch
#      on the same GPU, ResNet-8's convolutions (ember's default and im2col next to
#      cuDNN, and their GFLOP/s), the primitives' GFLOP/s and GB/s, the cold
#      compile of every kernel and the warm start from the cache
#   5. a GGUF language model (SmolLM2 where build/models or the pack's models/ has it): 32
#      greedy tokens on cuda:0 by NVRTC's kernels and by the built-in PTX, the CPU's text,
#      and tokens/s of the prompt and of generation; LoRA fine-tuning on both paths, four
#      steps' losses against the CPU's; the PyTorch twins of tests/interop (test_lm_vs_torch.py,
#      test_lora_vs_torch.py) on cuda:0 where python3 has torch and gguf
#   6. the OpenCL backend on the same GPU, through NVIDIA's OpenCL driver where it
#      is there (an .icd file is written for it), else the report says it is not:
#      the tests, simplecnn against the CPU, and ResNet-8's images/s by the
#      default convolution (conv_direct on a GPU) and by im2col
#
#   scripts/gpu-check.sh [--pack DIR] [--build DIR] [--budget SECONDS] [--double] OUTDIR
#
#   --pack DIR    what scripts/gpu-pack.sh gathered: libraries and headers the
#                 build lacks, Fashion-MNIST, CUDA 11.8's NVRTC, the PyTorch peer
#   --build DIR   the build folder (default build-gpu-check), made or brought up to date
#   --budget S    stop starting checks after S seconds, each left recorded as skipped
#                 "out of time", so that a lease's time limit still gets the report and
#                 the logs; the order puts first what matters most: the default kernel
#                 path, then speed next to PyTorch, then the other paths
#   --double      no GPU: CUDA's test double (tests/gpu/fakes), which runs the kernels on
#                 the CPU, stands in for the driver, on a subset of Fashion-MNIST
#                 and a few steps: a rehearsal of this script (CI runs it); its
#                 figures are no GPU's, and the test programs run on the first kernel
#                 path only, memory and models not even there (the double's ctest
#                 suites run them all). OpenCL
#                 runs on whatever device there is (PoCL)
#
# Every command has a limit of its own (GPU_CHECK_STEP_LIMIT seconds, default 240): a
# kernel that hangs fails its check, not the whole run. The CPU's reference accuracies
# train in the background while the GPU's checks run, on half the cores, each run within
# three times that limit (a ResNet-8 epoch took 140 s on 8 cores of an H200 machine).
# OUTDIR gets summary.txt (the table printed last), results.tsv, devices.txt,
# devices.json, and logs.tar.gz (every command's output; logs/ while it runs).
# Exits 0 when every check passed or was skipped for a stated reason, 1 when
# one failed, 2 on bad usage.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -u
usage() { echo "usage: scripts/gpu-check.sh [--pack DIR] [--build DIR] [--budget SECONDS] [--double] OUTDIR" >&2; exit 2; }
pack="" build="" double=no budget=
while [ $# -gt 1 ]; do
    case $1 in
    --pack) pack=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --double) double=yes; shift ;;
    *) usage ;;
    esac
done
[ $# -eq 1 ] || usage
case $budget in *[!0-9]*) usage ;; esac
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
absolute() { case $1 in /*) echo "$1" ;; *) echo "$(pwd)/$1" ;; esac; }
out=$(absolute "$out")
[ -n "$pack" ] && pack=$(absolute "$pack")
build=$(absolute "${build:-$root/build-gpu-check}")
mkdir -p "$out/logs" || exit 2
rm -f "$out/logs"/* "$out/results.tsv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
cores=$(nproc 2>/dev/null || echo 2)

# ------------------------------------------------------------------ helpers

failures=0
# record SECTION CHECK OUTCOME DETAIL: OUTCOME is pass, FAIL or skip
record() {
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$out/results.tsv"
    [ "$3" = FAIL ] && failures=$((failures + 1))
    echo "gpu-check: $1 / $2: $3${4:+ ($4)}"
}
step_limit=${GPU_CHECK_STEP_LIMIT:-240}
# logged NAME CMD...: the command's output in logs/NAME.log, its status in $rc; a command
# past its limit is stopped (status 124) and its log ends saying so
logged() {
    name=$1
    shift
    timeout -k 10 "$step_limit" "$@" >"$out/logs/$name.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "gpu-check: stopped after $step_limit s" >>"$out/logs/$name.log"
}
outcome_of() { case $1 in 0) echo pass ;; 77) echo skip ;; *) echo FAIL ;; esac; }
# out_of_time SECTION CHECK: true, with the check recorded as skipped, once --budget is spent
out_of_time() {
    [ -n "$budget" ] && [ $(($(date +%s) - started)) -ge "$budget" ] || return 1
    record "$1" "$2" skip "out of time (--budget $budget)"
}
# a field of the last line of a metrics file
metric() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p" "$2" 2>/dev/null | tail -n 1; }
# a value from a JSON file: python3 EXPR over d
json() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }
# tar.xz unpacking without xz(1): Python's tarfile reads it
unpack() { python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$1" "$2"; }

# --------------------------------------------------------------- the pack

prefix="" cu11="" data=/usr/share/datasets/fashion-mnist peers=$root/../shared/peers
if [ -n "$pack" ]; then
    unpack "$pack/prefix.tar.xz" "$work" && prefix=$work/prefix
    unpack "$pack/cu11-nvrtc.tar.xz" "$work" && cu11=$work/cu11
    [ -d "$pack/fashion-mnist" ] && data=$pack/fashion-mnist
    [ -d "$pack/peers" ] && peers=$pack/peers
    record pack unpacked pass "$(head -n 1 "$pack/MANIFEST" 2>/dev/null)"
fi
[ -z "$cu11" ] && [ -f "$root/build/cu11/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2" ] &&
    cu11=$root/build/cu11/nvidia/cuda_nvrtc/lib
# what every ember command runs with: the pack's libraries, a cache of its own
lib_path=${prefix:+$prefix/lib:}${LD_LIBRARY_PATH:-}
cache=$work/cache
ember_env="LD_LIBRARY_PATH=$lib_path EMBER_CACHE_DIR=$cache"

# ---------------------------------------------------------------- build

cmake_args="-DCMAKE_BUILD_TYPE=Release"
# what the checks run, and no more: the rest of the build (the fuzzers' seeds, say) wants
# files a GPU machine lacks
targets="ember_cli test_parity test_gradcheck test_memory test_models test_backend_e2e lm-run lora-run"
[ $double = yes ] && targets="$targets fake-cuda"
[ -n "$prefix" ] && cmake_args="$cmake_args -DCMAKE_PREFIX_PATH=$prefix"
if [ -f "$build/CMakeCache.txt" ]; then # a build folder made before: brought up to date as it is
    # shellcheck disable=SC2086 # a list of targets
    logged build cmake --build "$build" -j "$cores" --target $targets
else
    # shellcheck disable=SC2086 # cmake_args is a list of options
    logged build env PKG_CONFIG_PATH="${prefix:+$prefix/lib/pkgconfig:}${PKG_CONFIG_PATH:-}" \
        sh -c "cmake -S '$root' -B '$build' $cmake_args && cmake --build '$build' -j $cores --target $targets"
fi
ember=$build/ember
if [ $rc -ne 0 ] || [ ! -x "$ember" ]; then
    record build ember FAIL "see logs/build.log: $(grep -m 1 -i 'error:\|error [0-9]' "$out/logs/build.log")"
else
    record build ember pass "in $build"
fi

# ----------------------------------------------------- the GPU and the data

if [ $double = yes ]; then
    # im2col on the double: it runs conv_direct's barriers one work-item at a time, which made this
    # rehearsal 75 s longer; the double's own suites (test_*_cuda_double_*) run conv_direct, CUDA's default
    gpu_env="EMBER_CUDA_LIBRARY=$build/tests/libfake-cuda.so EMBER_FAKE_CUDA_GPUS=90:H100-CUDA-test-double EMBER_FAKE_CUDA_DRIVER=13000 EMBER_CONV_ALGO=im2col"
    record machine GPU pass "the CUDA test double (an sm_90 GPU, a CUDA 13.0 driver; kernels run on the CPU)"
    # a subset of Fashion-MNIST: 640 training images (10 steps), 500 test images
    mkdir -p "$work/fashion-small"
    python3 - "$data" "$work/fashion-small" <<'EOF' || record machine data FAIL "cannot write the subset of $data"
import gzip, struct, sys
src, dst = sys.argv[1], sys.argv[2]
for name, keep in (("train-images-idx3-ubyte", 640), ("train-labels-idx1-ubyte", 640),
                   ("t10k-images-idx3-ubyte", 500), ("t10k-labels-idx1-ubyte", 500)):
    raw = gzip.open(f"{src}/{name}.gz").read()
    ndim = raw[3]
    dims = list(struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim]))
    per = 1
    for d in dims[1:]:
        per *= d
    dims[0] = keep
    body = raw[4 + 4 * ndim:4 + 4 * ndim + keep * per]
    with gzip.open(f"{dst}/{name}.gz", "wb") as f:
        f.write(raw[:4] + struct.pack(">" + "I" * ndim, *dims) + body)
EOF
    data=$work/fashion-small
    steps_e2e="" epochs_simple=1 epochs_keras=2 timing_steps="--steps 1" memory_args="--batch 8"
else
    gpu_env=""
    logged nvidia-smi nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader
    if [ $rc -eq 0 ]; then
        record machine GPU pass "$(head -n 1 "$out/logs/nvidia-smi.log")"
    else
        record machine GPU FAIL "nvidia-smi failed: $(head -c 200 "$out/logs/nvidia-smi.log")"
    fi
    steps_e2e="" epochs_simple=1 epochs_keras=2 timing_steps="" memory_args=""
fi
if [ -f "$data/train-images-idx3-ubyte.gz" ]; then
    record machine data pass "Fashion-MNIST from $data"
else
    record machine data FAIL "no Fashion-MNIST in $data: give --pack, or install dataset-fashion-mnist"
fi
data_args="--data fashion-mnist --data-dir $data"

# shellcheck disable=SC2086 # the environments are lists of assignments
env $ember_env $gpu_env "$ember" devices >"$out/devices.txt" 2>&1
# shellcheck disable=SC2086
env $ember_env $gpu_env "$ember" devices --json >"$out/devices.json" 2>"$out/logs/devices-json.log"
gpu_usable=$(json "$out/devices.json" "any(e['name'] == 'cuda:0' and e['usable'] for e in d['devices'])")
if [ "$gpu_usable" = True ]; then
    record machine "ember devices" pass "$(json "$out/devices.json" "d['backends']['cuda']['gpus'][0]['summary']"); driver CUDA $(json "$out/devices.json" "d['backends']['cuda']['driver']['cuda_version']"); auto: $(json "$out/devices.json" "d['auto']"); cpu sgemm: $(json "$out/devices.json" "d['backends']['cpu']['blas']")"
else
    record machine "ember devices" FAIL "cuda:0 is not usable: $(json "$out/devices.json" "[e['reason'] for e in d['devices'] if e['name'].startswith('cuda')]")"
fi

# ---------------------------------------------- the CPU's accuracy, to compare

# trained in the background, on half the cores, while the GPU's checks run; cpu_refs waits
cpu_threads=$(((cores + 1) / 2))
cpu_train() { # MODEL EPOCHS: the CPU's own run, its metrics in $work/cpu-MODEL.jsonl
    # shellcheck disable=SC2086
    env $ember_env timeout -k 10 $((3 * step_limit)) "$ember" train --device cpu --threads $cpu_threads --model "$1" \
        --epochs "$2" $data_args --seed 0 --quiet --metrics "$work/cpu-$1.jsonl" >"$out/logs/cpu-$1.log" 2>&1
}
(
    cpu_train simplecnn $epochs_simple
    cpu_train kerascnn $epochs_keras
    [ $double = yes ] || cpu_train resnet8 1
) &
cpu_job=$!
refs_known=no
cpu_refs() { # the reference accuracies in cpu_simple, cpu_keras and cpu_resnet, recorded once
    [ $refs_known = yes ] && return
    refs_known=yes
    wait $cpu_job
    cpu_simple=$(metric test_acc "$work/cpu-simplecnn.jsonl")
    cpu_keras=$(metric test_acc "$work/cpu-kerascnn.jsonl")
    cpu_resnet=$(metric test_acc "$work/cpu-resnet8.jsonl")
    cpu_resnet_loss=$(metric train_loss "$work/cpu-resnet8.jsonl")
    record cpu "reference accuracy" "$([ -n "$cpu_simple" ] && [ -n "$cpu_keras" ] && echo pass || echo FAIL)" \
        "simplecnn ${cpu_simple:-?} after $epochs_simple epoch, kerascnn ${cpu_keras:-?} after $epochs_keras"
    [ $double = yes ] || record cpu "reference accuracy" "$([ -n "$cpu_resnet" ] && echo pass || echo FAIL)" \
        "resnet8 ${cpu_resnet:-?} after 1 epoch, its mean training loss ${cpu_resnet_loss:-?}"
}

# ------------------------------------------------------ every kernel path

# train_on SECTION ENV MODEL EPOCHS CPU_ACC [CPU_LOSS]: one training run on cuda:0 against the
# CPU's: its test accuracy within 0.5 points, or, given CPU_LOSS, the epoch's mean training loss
# within 1%. The ResNet's test accuracy after one epoch at a constant learning rate is too
# noisy a measure: on an H200 (2026-11-26) the built-in PTX and NVRTC's cubin, both right by
# every test, ended 0.92 points apart at test and 0.04% apart in training loss, and the CPU
# 0.42 and 1.34 points from them (0.07% and 0.17% in training loss)
train_on() {
    out_of_time "$1" "train $3" && return
    rm -f "$work/m.jsonl"
    # shellcheck disable=SC2086
    logged "$1-train-$3" env $ember_env $gpu_env $2 "$ember" train --device cuda:0 --model "$3" --epochs "$4" \
        $data_args --seed 0 --quiet --metrics "$work/m.jsonl"
    acc=$(metric test_acc "$work/m.jsonl")
    loss=$(metric train_loss "$work/m.jsonl")
    ips=$(metric images_per_s "$work/m.jsonl")
    if [ $rc -ne 0 ] || [ -z "$acc" ]; then
        record "$1" "train $3" FAIL "exit $rc: $(tail -n 2 "$out/logs/$1-train-$3.log" | tr '\n' ' ')"
    elif [ -n "${6:-}" ]; then
        if awk -v a="$loss" -v b="$6" 'BEGIN { if (b + 0 <= 0) exit 1; d = (a - b) / b; exit !(d <= 0.01 && d >= -0.01) }'; then
            record "$1" "train $3" pass "training loss $loss, cpu $6; test accuracy $acc, cpu $5; $ips images/s"
        else
            record "$1" "train $3" FAIL "training loss $loss, cpu ${6}: more than 1% apart"
        fi
    elif awk -v a="$acc" -v b="$5" 'BEGIN { d = a - b; exit !(d <= 0.005 && d >= -0.005) }'; then
        record "$1" "train $3" pass "test accuracy $acc, cpu $5; $ips images/s"
    else
        record "$1" "train $3" FAIL "test accuracy $acc, cpu $5: more than 0.5 points apart"
    fi
}

# check_path PATH: one kernel path's kernels, tests and training runs
check_path() {
    path=$1
    out_of_time $path kernels && return
    case $path in
    nvrtc-cubin) penv="EMBER_CUDA_KERNELS=nvrtc-cubin" want="NVRTC .* cubin" ;;
    nvrtc-ptx) penv="EMBER_CUDA_KERNELS=nvrtc-ptx" want="NVRTC .* PTX" ;;
    builtin-ptx) penv="EMBER_CUDA_KERNELS=baseline" want="built-in" ;;
    r418) penv="EMBER_CUDA_MAX_PTX=6.4" want="built-in" ;;               # a Quadro K2100M's driver
    r470-cu11) penv="EMBER_CUDA_MAX_PTX=7.4 EMBER_NVRTC=only:$cu11" want="NVRTC 11.8 cubin" ;; # a K40m's
    esac
    if [ $path = r470-cu11 ] && [ -z "$cu11" ]; then
        record $path kernels skip "no CUDA 11.8 NVRTC: give --pack"
        return
    fi
    # shellcheck disable=SC2086
    env $ember_env $gpu_env $penv "$ember" devices --json >"$work/$path.json" 2>"$out/logs/$path-devices.log"
    loaded=$(json "$work/$path.json" "d['backends']['cuda']['gpus'][0].get('kernels_loaded', '')")
    if [ -z "$loaded" ]; then
        why=$(json "$work/$path.json" "[e['reason'] for e in d['devices'] if e['name'] == 'cuda:0']")
        nvrtcs=$(json "$work/$path.json" "len(d['backends']['cuda']['nvrtc'])")
        # NVRTC's own paths need an NVRTC: on a machine without any, they are skipped
        case $path in nvrtc-*) [ "$nvrtcs" = 0 ] && record $path kernels skip "no NVRTC on this machine" && return ;; esac
        record $path kernels FAIL "${why:-no kernels loaded}"
        return
    fi
    if echo "$loaded" | grep -q "$want"; then
        record $path kernels pass "$loaded"
    else
        record $path kernels FAIL "$loaded, where $want was wanted"
    fi
    for t in parity gradcheck memory models backend_e2e; do
        out_of_time $path "test $t" && continue
        # on the double the first path rehearses the tests (memory and models aside, 17 s of its
        # 90); the double's own ctest suites run them all (test_*_cuda_double_*: parity on all
        # four paths, the rest on NVRTC's cubin and the built-in PTX), and doing it again here
        # on every path took a minute of the rehearsal's three
        if [ $double = yes ] && { [ $path != nvrtc-cubin ] || [ $t = memory ] || [ $t = models ]; }; then
            record $path "test $t" skip "the double: its own ctest suites (test_${t}_cuda_double_*) run it"
            continue
        fi
        case $t in
        parity) args="-b cuda" ;;
        memory) args="$memory_args" ;;
        backend_e2e) args="cuda:0 --data-dir $data $steps_e2e" ;;
        *) args="" ;;
        esac
        # shellcheck disable=SC2086
        logged "$path-$t" env $ember_env $gpu_env $penv EMBER_TEST_DEVICE=cuda:0 "$build/tests/test_$t" $args
        detail=$(grep -m 1 "test accuracy\|checks\? failed" "$out/logs/$path-$t.log")
        record $path "test $t" "$(outcome_of $rc)" "${detail:-logs/$path-$t.log}"
    done
    cpu_refs
    train_on $path "$penv" simplecnn $epochs_simple "$cpu_simple"
    # on the double the paths differ only in how the kernels were compiled: simplecnn rehearses
    # each, and kerascnn's two epochs run on NVRTC's cubin and the built-in PTX alone
    if [ $double = yes ] && [ $path != nvrtc-cubin ] && [ $path != builtin-ptx ]; then
        record $path "train kerascnn" skip "the double: simplecnn rehearses this path; kerascnn runs on nvrtc-cubin and builtin-ptx"
    else
        train_on $path "$penv" kerascnn $epochs_keras "$cpu_keras"
    fi
    if [ $double = no ]; then
        train_on $path "$penv" resnet8 1 "$cpu_resnet" "$cpu_resnet_loss"
    else
        record $path "train resnet8" skip "the double runs one work-item at a time: too slow for a ResNet epoch"
    fi
}

# ------------------------------------------------------------------ speed

check_speed() {
    torch_cuda=$(python3 -c "import torch; print(torch.cuda.is_available())" 2>/dev/null)
    # (the double rehearses the small batch only: a batch of 1024 took it a minute, and measures nothing)
    batches="64 1024"
    [ $double = yes ] && batches=64
    for model in simplecnn kerascnn; do
        for batch in $batches; do
            out_of_time speed "$model batch $batch images/s" && continue
            row=""
            for kernels in nvrtc baseline; do
                rm -f "$work/s.jsonl"
                # shellcheck disable=SC2086
                logged "speed-$model-$batch-$kernels" env $ember_env $gpu_env EMBER_CUDA_KERNELS=$kernels "$ember" \
                    train --device cuda:0 --model $model --epochs 1 --batch $batch $data_args $timing_steps \
                    --no-eval --quiet --metrics "$work/s.jsonl"
                row="$row $kernels $(metric images_per_s "$work/s.jsonl")"
            done
            if [ "$torch_cuda" = True ] && [ -f "$peers/torch_train.py" ]; then
                logged "speed-$model-$batch-pytorch" env FASHION_MNIST_DIR="$data" python3 "$peers/torch_train.py" \
                    --model $model --data fashion --epochs 1 --batch $batch --device cuda
                row="$row pytorch $(metric images_per_s "$out/logs/speed-$model-$batch-pytorch.log")"
            else
                row="$row pytorch -"
            fi
            record speed "$model batch $batch images/s" pass "${row# }${timing_steps:+ ($timing_steps, the double, not a GPU: no speed figures)}"
        done
    done
    [ "$torch_cuda" = True ] || record speed "PyTorch" skip "no PyTorch with a CUDA device here"
    # the convolutions (docs/design.md, "Choosing a convolution's algorithm"): ResNet-8 at batch 256
    # by ember's default (conv_direct on CUDA) and by im2col, next to PyTorch (cuDNN) with the same
    # command as bench/gpu_vs_pytorch.sh, and the GFLOP/s of conv2d's rows in --profile
    conv_args="--batch 256 --steps 100"
    [ $double = yes ] && conv_args="--batch 4 --steps 2"
    if ! out_of_time speed "convolutions, resnet8"; then
        row=""
        for algo in default im2col; do
            rm -f "$work/c.jsonl"
            # shellcheck disable=SC2086
            logged "conv-$algo" env $ember_env $gpu_env EMBER_CONV_ALGO="${algo#default}" "$ember" train \
                --device cuda:0 --model resnet8 $data_args $conv_args --no-eval --quiet --metrics "$work/c.jsonl"
            row="$row $algo $(metric images_per_s "$work/c.jsonl")"
        done
        if [ "$torch_cuda" = True ]; then
            # shellcheck disable=SC2086
            logged conv-pytorch python3 "$root/bench/torch_zoo_train.py" --model resnet8 $conv_args --device cuda \
                --data-dir "$data"
            row="$row pytorch $(metric images_per_s "$out/logs/conv-pytorch.log")"
        fi
        # shellcheck disable=SC2086
        logged conv-profile env $ember_env $gpu_env "$ember" train --device cuda:0 --model resnet8 $data_args \
            $conv_args --no-eval --quiet --profile
        rates=$(awk '/^conv2d (forward|backward)/ { printf "%s%s %s %s GFLOP/s", sep, $2, $3, $(NF - 1); sep = ", " }' \
            "$out/logs/conv-profile.log")
        record speed "convolutions, resnet8" "$(outcome_of $rc)" "images/s${row}; ${rates:-no conv2d rows}${timing_steps:+ (the double, not a GPU: no speed figures)}"
    fi
    # the primitives, at a simplecnn step's shapes and a square sgemm
    square=2048
    [ $double = yes ] && square=128
    for kernels in nvrtc baseline; do
        out_of_time speed "primitives, $kernels" && continue
        # shellcheck disable=SC2086
        logged "perf-$kernels" env $ember_env $gpu_env EMBER_CUDA_KERNELS=$kernels EMBER_TEST_DEVICE=cuda:0 \
            "$build/tests/test_parity" -b cuda -o fill --perf-square $square
        record speed "primitives, $kernels" "$(outcome_of $rc)" \
            "$(grep -o "sgemm ${square}x[0-9x]* *[0-9.]* us *[0-9.]* GFLOP/s" "$out/logs/perf-$kernels.log" | tr -s ' '); logs/perf-$kernels.log"
    done
    # where a step's time goes on the GPU: --profile's rows, its kernels timed by CUDA events, and a trace
    profile_steps="--steps 50"
    [ $double = yes ] && profile_steps="--steps 2 --batch 8"
    for kernels in nvrtc baseline; do
        out_of_time speed "profile, $kernels" && continue
        # shellcheck disable=SC2086
        logged "profile-$kernels" env $ember_env $gpu_env EMBER_CUDA_KERNELS=$kernels "$ember" \
            train --device cuda:0 --model simplecnn $data_args $profile_steps --no-eval --quiet --profile \
            --trace "$out/trace-$kernels.json"
        record speed "profile, $kernels" "$(outcome_of $rc)" \
            "$(grep -m1 '^the device' "$out/logs/profile-$kernels.log"); slowest: $(grep -m1 -A1 '^op / primitive' \
            "$out/logs/profile-$kernels.log" | tail -n 1 | tr -s ' '); logs/profile-$kernels.log, trace-$kernels.json"
    done
    # data parallel (docs/parallel.md): the GPU and the CPU training one model, every device kept,
    # then as the trial decides (a CPU share that slows a GPU down is left out with a note)
    par_steps="--steps 100"
    [ $double = yes ] && par_steps="--steps 3 --batch 8"
    for keep in kept trial; do
        out_of_time speed "cuda:0,cpu, $keep" && continue
        flag=""
        [ $keep = kept ] && flag=--keep-devices
        # shellcheck disable=SC2086
        logged "parallel-$keep" env $ember_env $gpu_env "$ember" train --device cuda:0,cpu $flag --model simplecnn \
            $data_args $par_steps --no-eval --quiet
        record speed "cuda:0,cpu, $keep" "$(outcome_of $rc)" \
            "$(grep -m1 'devices:' "$out/logs/parallel-$keep.log"); $(grep -o '[0-9]* images/s' \
            "$out/logs/parallel-$keep.log" | tail -n 1); logs/parallel-$keep.log"
    done
    # every kernel compiled by NVRTC into an empty cache, then the start from it
    for start in cold warm; do
        out_of_time speed "$start start" && continue
        [ $start = cold ] && rm -rf "$work/cache-compile"
        rm -f "$work/f.jsonl"
        # shellcheck disable=SC2086
        logged "start-$start" env LD_LIBRARY_PATH="$lib_path" EMBER_CACHE_DIR="$work/cache-compile" $gpu_env \
            EMBER_CUDA_KERNELS=nvrtc "$ember" train --device cuda:0 --data random --steps 1 --no-eval --quiet \
            --metrics "$work/f.jsonl"
        record speed "$start start" "$(outcome_of $rc)" "process start to the first step done: $(metric first_step_s "$work/f.jsonl") s"
    done
}

# ------------------------------------------------------- a language model

# check_lm: a GGUF language model (SmolLM2, from --pack's models/ or build/models/) on cuda:0 by
# NVRTC's kernels and by the built-in PTX: 32 greedy tokens, the same text as the CPU's, and the
# tokens per second of the prompt and of generation (ember generate --verbose)
check_lm() {
    lm=""
    for f in ${pack:+$pack/models/*.gguf} "$root"/build/models/*.gguf; do [ -f "$f" ] && lm=$f && break; done
    if [ $double = yes ]; then
        record lm generate skip "the double: simulated_*_lm run tiny models' twins on the simulated GPUs"
        return
    fi
    if [ -z "$lm" ]; then
        record lm generate skip "no GGUF model: scripts/fetch-model.sh, or a models/ folder in the pack"
        return
    fi
    lm_args="--load $lm --prompt 'The capital of France is' --tokens 32 --temperature 0 --verbose"
    logged lm-cpu sh -c "env $ember_env '$ember' generate $lm_args --device cpu"
    for kernels in nvrtc baseline; do
        out_of_time lm "generate, $kernels" && continue
        logged "lm-$kernels" sh -c "env $ember_env $gpu_env EMBER_CUDA_KERNELS=$kernels '$ember' generate $lm_args --device cuda:0"
        speed=$(grep -o 'prompt .* tokens/s), reply .* tokens/s)' "$out/logs/lm-$kernels.log")
        if [ $rc -ne 0 ]; then
            record lm "generate, $kernels" FAIL "exit $rc: $(tail -n 1 "$out/logs/lm-$kernels.log")"
        elif [ "$(grep -v '^ember:' "$out/logs/lm-$kernels.log")" = "$(grep -v '^ember:' "$out/logs/lm-cpu.log")" ]; then
            record lm "generate, $kernels" pass "the CPU's 32 greedy tokens; $speed; $(basename "$lm")"
        else
            record lm "generate, $kernels" FAIL "other text than the CPU's: logs/lm-$kernels.log, logs/lm-cpu.log"
        fi
    done
    # LoRA fine-tuning (ember train --init --lora): four steps on the README's text on the CPU and
    # on cuda:0 by each kernel path, the same losses step for step (within 1e-3 relative: sums in
    # other orders), with the GPU's tokens/s and the process's peak host memory
    lora_args="--init $lm --lora r=8,alpha=16 --data text $root/README.md --context 64 --batch 2 --steps 4"
    lora_args="$lora_args --log-every 1 --seed 0 --no-eval"
    logged lora-cpu sh -c "env $ember_env '$ember' train $lora_args --device cpu --metrics '$work/lora-cpu.jsonl'"
    for kernels in nvrtc baseline; do
        out_of_time lm "LoRA, $kernels" && continue
        rm -f "$work/lora-$kernels.jsonl"
        logged "lora-$kernels" sh -c "env $ember_env $gpu_env EMBER_CUDA_KERNELS=$kernels '$ember' train $lora_args --device cuda:0 --metrics '$work/lora-$kernels.jsonl'"
        worst=$(python3 -c 'import json, sys
steps = [[d["train_loss"] for d in map(json.loads, open(f)) if "step" in d] for f in sys.argv[1:]]
assert len(steps[0]) == len(steps[1]) == 4
print("%.1e" % max(abs(a - b) / abs(a) for a, b in zip(*steps)))' "$work/lora-cpu.jsonl" "$work/lora-$kernels.jsonl" 2>/dev/null)
        speed=$(grep -o '[0-9.]* tokens/s' "$out/logs/lora-$kernels.log" | tail -n 1)
        if [ $rc -ne 0 ]; then
            record lm "LoRA, $kernels" FAIL "exit $rc: $(tail -n 1 "$out/logs/lora-$kernels.log")"
        elif [ -z "$worst" ] || ! python3 -c "import sys; sys.exit(float('$worst') > 1e-3)"; then
            record lm "LoRA, $kernels" FAIL "4 steps' losses not the CPU's ($worst): logs/lora-$kernels.log, logs/lora-cpu.log"
        else
            record lm "LoRA, $kernels" pass "4 steps' losses within $worst of the CPU's; $speed; peak on the GPU $(metric peak_device_mib "$work/lora-$kernels.jsonl") MiB in use, host $(metric peak_rss_mib "$work/lora-$kernels.jsonl") MiB"
        fi
    done
    # the PyTorch twins of tests/interop on this GPU: test_lm_vs_torch.py (SmolLM2 and a tiny model of
    # every weight type: scores and 32 greedy tokens) and test_lora_vs_torch.py (20 LoRA steps' losses
    # within 1e-4, the merged exports); they exit 77, a skip, where python3 lacks torch or gguf
    for twin in lm lora; do
        out_of_time lm "PyTorch twin, $twin" && continue
        twin_args=""
        [ $twin = lm ] && twin_args=$lm
        # shellcheck disable=SC2086
        logged "twin-$twin" env $ember_env $gpu_env EMBER_TEST_DEVICE=cuda:0 python3 \
            "$root/tests/interop/test_${twin}_vs_torch.py" "$build/tests/$twin-run" $twin_args
        record lm "PyTorch twin, $twin" "$(outcome_of $rc)" \
            "$(tail -n 1 "$out/logs/twin-$twin.log"); logs/twin-$twin.log"
    done
}

# the default path first, then speed, then the other paths: what matters most comes before a --budget ends
if [ "$gpu_usable" = True ]; then
    check_path nvrtc-cubin
    check_speed
    check_lm
    for p in builtin-ptx r418 r470-cu11 nvrtc-ptx; do check_path $p; done
fi
cpu_refs

# ------------------------------------------------------------------ OpenCL

ocl_env=""
nvidia_ocl=$(ldconfig -p 2>/dev/null | sed -n 's/.*libnvidia-opencl\.so\.1.*=> //p' | head -n 1)
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    [ -z "$nvidia_ocl" ] && [ -f "$d/libnvidia-opencl.so.1" ] && nvidia_ocl=$d/libnvidia-opencl.so.1
done
if [ -n "$nvidia_ocl" ] && [ $double = no ]; then
    mkdir -p "$work/vendors"
    echo "$nvidia_ocl" >"$work/vendors/nvidia.icd"
    ocl_env="OCL_ICD_VENDORS=$work/vendors"
    [ -f "$prefix/lib/libOpenCL.so.1" ] && ! ldconfig -p 2>/dev/null | grep -q "libOpenCL.so.1 " &&
        ocl_env="$ocl_env EMBER_OPENCL_LIBRARY=$prefix/lib/libOpenCL.so.1"
    record opencl driver pass "NVIDIA's OpenCL driver, $nvidia_ocl, through an .icd file of this run's"
elif [ $double = yes ]; then
    record opencl driver skip "the double: no NVIDIA OpenCL; the OpenCL checks run on this machine's own device"
else
    record opencl driver skip "no NVIDIA OpenCL driver (libnvidia-opencl.so.1) on this machine"
fi
if { [ -n "$nvidia_ocl" ] || [ $double = yes ]; } && ! out_of_time opencl device; then
    # shellcheck disable=SC2086
    env $ember_env $ocl_env EMBER_CUDA_LIBRARY=/nonexistent "$ember" devices --json >"$work/ocl.json" 2>/dev/null
    ocl=$(json "$work/ocl.json" "[e['name'] for e in d['devices'] if e['backend'] == 'opencl' and e['usable']][0]")
    if [ -z "$ocl" ]; then
        record opencl device FAIL "no usable OpenCL device: $(json "$work/ocl.json" "d['backends']['opencl'].get('reason', '')")"
    else
        record opencl device pass "$ocl: $(json "$work/ocl.json" "[e['description'] for e in d['devices'] if e['name'] == '$ocl'][0]")"
        for t in parity gradcheck memory models backend_e2e; do
            out_of_time opencl "test $t" && continue
            case $t in
            parity) args="-b opencl" ;;
            memory) args="$memory_args" ;;
            backend_e2e) args="$ocl --data-dir $data $steps_e2e" ;;
            *) args="" ;;
            esac
            # shellcheck disable=SC2086
            logged "opencl-$t" env $ember_env $ocl_env EMBER_TEST_DEVICE=$ocl "$build/tests/test_$t" $args
            detail=$(grep -m 1 "test accuracy\|checks\? failed" "$out/logs/opencl-$t.log")
            record opencl "test $t" "$(outcome_of $rc)" "${detail:-logs/opencl-$t.log}"
        done
        rm -f "$work/o.jsonl"
        # shellcheck disable=SC2086
        logged opencl-train env $ember_env $ocl_env "$ember" train --device "$ocl" --model simplecnn \
            --epochs $epochs_simple $data_args --seed 0 --quiet --metrics "$work/o.jsonl"
        acc=$(metric test_acc "$work/o.jsonl")
        if [ $rc -eq 0 ] && awk -v a="$acc" -v b="$cpu_simple" 'BEGIN { d = a - b; exit !(a != "" && d <= 0.005 && d >= -0.005) }'; then
            record opencl "train simplecnn" pass "test accuracy $acc, cpu $cpu_simple; $(metric images_per_s "$work/o.jsonl") images/s"
        else
            record opencl "train simplecnn" FAIL "exit $rc, test accuracy ${acc:-?}, cpu $cpu_simple"
        fi
        # ResNet-8's convolutions on the same GPU through OpenCL: the default (conv_direct on a GPU
        # device, im2col on a CPU one) and im2col, as for CUDA above
        if ! out_of_time opencl "convolutions, resnet8"; then
            conv_args="--batch 256 --steps 100"
            [ $double = yes ] && conv_args="--batch 4 --steps 2"
            row="" rc_all=0
            for algo in default im2col; do
                rm -f "$work/c.jsonl"
                # shellcheck disable=SC2086
                logged "opencl-conv-$algo" env $ember_env $ocl_env EMBER_CONV_ALGO="${algo#default}" "$ember" train \
                    --device "$ocl" --model resnet8 $data_args $conv_args --no-eval --quiet --metrics "$work/c.jsonl"
                [ $rc -eq 0 ] || rc_all=$rc
                row="$row $algo $(metric images_per_s "$work/c.jsonl")"
            done
            record opencl "convolutions, resnet8" "$(outcome_of $rc_all)" "images/s${row}${timing_steps:+ (the double's run: no GPU's figures)}"
        fi
    fi
fi

# ----------------------------------------------------------------- report

tar -C "$out" -czf "$out/logs.tar.gz" logs && rm -rf "$out/logs"
seconds=$(($(date +%s) - started))
{
    echo "ember gpu-check, $(date -u '+%Y-%m-%d %H:%M UTC'), $([ $double = yes ] && echo 'the CUDA test double (no GPU)' || echo "the machine's NVIDIA driver"), ${seconds} s"
    echo
    awk -F '\t' '{ printf "%-11s %-28s %-5s %s\n", $1, $2, $3, $4 }' "$out/results.tsv"
    echo
    passed=$(awk -F '\t' '$3 == "pass"' "$out/results.tsv" | wc -l)
    skipped=$(awk -F '\t' '$3 == "skip"' "$out/results.tsv" | wc -l)
    echo "gpu-check: $passed passed, $failures failed, $skipped skipped; logs in $out/logs.tar.gz"
} >"$out/summary.txt"
echo
cat "$out/summary.txt"
[ $failures -eq 0 ]
