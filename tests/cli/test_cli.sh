#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_cli.sh — the `ember` program's contract: help, exit statuses,
# diagnostics, metrics. Usage: test_cli.sh path/to/ember
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

expect 0 "usage: ember" -- "$EMBER" --help
expect 0 "^ember [0-9]" -- "$EMBER" --version
expect 2 "usage: ember" -- "$EMBER"
expect 2 "unknown command" -- "$EMBER" fly
expect 0 "usage: ember train" -- "$EMBER" train --help
expect 0 "usage: ember eval" -- "$EMBER" eval --help
expect 2 "unrecognized option" -- "$EMBER" train --frobnicate
# a slip of the keyboard gets the name meant: an option, a model, a command
expect 2 "unrecognized option '--stpes' (did you mean \"--steps\"?)" -- "$EMBER" train --stpes 3
expect 2 "option '--st' is ambiguous: it begins --steps, --step-epochs, --stop-if-diverging" -- "$EMBER" train --st 3
expect 2 "option --lr needs a value" -- "$EMBER" train --lr
expect 2 "option --quiet takes no value" -- "$EMBER" train --quiet=yes
expect 2 "unrecognized option '--invrt' (did you mean \"--invert\"?)" -- "$EMBER" predict --invrt
expect 2 "unknown model \"resnt8\" (did you mean \"resnet8\"?)" -- "$EMBER" train --model resnt8 --data random --quiet
expect 2 "unknown command \"trian\" (did you mean \"train\"?)" -- "$EMBER" trian
expect 2 "--batch wants a whole number" -- "$EMBER" train --batch 0
expect 2 "--lr wants a number" -- "$EMBER" train --lr fast
expect 2 "--optim is adam, adamw or sgd" -- "$EMBER" train --optim lbfgs
expect 2 "--shape wants" -- "$EMBER" train --data random --shape 1x0x28
expect 2 "unknown model" -- "$EMBER" train --model resnet --data random --quiet
expect 2 "unknown device" -- "$EMBER" train --device quantum --data random
expect 4 "cpu:3" -- "$EMBER" train --device cpu:3 --data random
expect 3 "/nonexistent" -- "$EMBER" train --data mnist --data-dir /nonexistent --quiet
expect 2 "data-dir" -- "$EMBER" train --data cifar10 --quiet
# --steps ends the epoch sooner: the progress and its ETA count to it, not to the epoch's end
expect 0 "step 30/30 " -- "$EMBER" train --data random --steps 30 --device cpu --no-eval
grep -q "/64 " "$TMP/out" && fail "the progress counts to the epoch's 64 steps, not --steps 30: $(cat "$TMP/out")"
# the library's message, in the program's words: the option, not the API's field
expect 2 "holds its files with --data-dir" -- "$EMBER" train --data mnist --quiet
grep -q "ember_data_options\|options->" "$TMP/out" && fail "a message names the C API to a user of the program: $(cat "$TMP/out")"
expect 2 "needs --load" -- "$EMBER" eval
expect 3 "missing.safetensors" -- "$EMBER" eval --data random --load "$TMP/missing.safetensors"
printf 'not a checkpoint at all' >"$TMP/bad.safetensors"
expect 3 "bad.safetensors" -- "$EMBER" eval --data random --load "$TMP/bad.safetensors"
expect 0 "  cpu  " -- "$EMBER" devices

# the PTX a GPU gets, without a GPU; a build without the CUDA backend
# (EMBER_TEST_CUDA=OFF, from tests/CMakeLists.txt) lists the kernels and says
# why it has no PTX
expect 0 "^sgemm " -- "$EMBER" ptx --list
expect 2 "needs a kernel name" -- "$EMBER" ptx
expect 2 "no kernel \"softmax\"" -- "$EMBER" ptx softmax --baseline
expect 2 "--arch wants" -- "$EMBER" ptx fill --arch 86
expect 2 "--arch wants" -- "$EMBER" ptx fill --arch sm_4294967326
expect 2 "--arch wants" -- "$EMBER" ptx fill --arch sm_35x
if [ "${EMBER_TEST_CUDA:-ON}" = OFF ]; then
    expect 4 "this build has no CUDA backend (built with -DEMBER_CUDA=OFF)" -- "$EMBER" ptx fill --baseline
    expect 4 "this build has no CUDA backend" -- "$EMBER" ptx fill --arch sm_86
    expect 4 "this build has no cuda backend (it was built with -DEMBER_CUDA=OFF)" -- \
        "$EMBER" train --device cuda --data random --steps 1 --quiet
else
    expect 0 ".target sm_30" -- "$EMBER" ptx fill --baseline
    expect 0 ".entry fill(" -- "$EMBER" ptx fill --baseline
    expect 4 "older than sm_30" -- "$EMBER" ptx fill --arch sm_21
fi
if [ "${EMBER_TEST_CUDA:-ON}" != OFF ] && "$EMBER" devices | grep -q "NVRTC 1[1-9]"; then
    expect 0 ".target sm_86" -- "$EMBER" ptx sgemm --arch sm_86
    grep -q "^\.entry\|^\.visible \.entry sgemm(" "$TMP/out" || fail "ember ptx sgemm printed no sgemm entry"
    grep -q "\.entry fill(" "$TMP/out" && fail "ember ptx sgemm printed other kernels too"
fi

# a short run on random data: progress lines (stderr is not a terminal),
# one metrics object per epoch with the documented fields, a checkpoint
expect 0 "epoch 2/2" -- "$EMBER" train --data random --epochs 2 --batch 32 --seed 3 --device cpu \
    --metrics "$TMP/run.jsonl" --save "$TMP/run.safetensors"
grep -q "epoch 1/2 step" "$TMP/out" || fail "no plain progress line: $(head -c 600 "$TMP/out")"
[ "$(wc -l <"$TMP/run.jsonl")" -eq 2 ] || fail "run.jsonl should have 2 lines: $(cat "$TMP/run.jsonl")"
for field in run epoch train_loss train_acc test_acc images_per_s seconds device first_step_s peak_device_mib peak_device_held_mib peak_rss_mib; do
    grep -q "\"$field\": " "$TMP/run.jsonl" || fail "run.jsonl lacks $field: $(cat "$TMP/run.jsonl")"
done
grep -q '"device": "cpu' "$TMP/run.jsonl" || fail "run.jsonl device is not cpu"
[ -s "$TMP/run.safetensors" ] || fail "no checkpoint written"
ls "$TMP" | grep -q tmp && fail "a temporary checkpoint file was left behind"
# the checkpoint reloads and evaluates on the same data
expect 0 "test accuracy" -- "$EMBER" eval --data random --seed 3 --load "$TMP/run.safetensors"
# the checkpoint says what it holds: another model named is refused, by name
expect 3 "--model kerascnn, but .*run.safetensors was trained with simplecnn" -- \
    "$EMBER" eval --data random --model kerascnn --load "$TMP/run.safetensors"
expect 0 "test accuracy" -- "$EMBER" eval --load "$TMP/run.safetensors"
expect 3 "--seed 5, but .* was trained with 3" -- "$EMBER" eval --seed 5 --load "$TMP/run.safetensors"
# diverging training stops with a clear message and status 1
expect 1 "diverged: the loss is NaN" -- "$EMBER" train --data random --model mlp --optim sgd --momentum 0.99 --lr 1000000 --quiet --steps 50

# a run goes on from its checkpoint (tests/cli/test_resume.sh holds it to an unbroken run, bit for bit)
expect 0 "saved $TMP/go.safetensors (the end of the run)" -- "$EMBER" train --data random --model vgg8 --batch 256 \
    --steps 5 --save "$TMP/go.safetensors" --quiet
expect 0 "resuming $TMP/go.safetensors at epoch 1, step 5 of 16" -- "$EMBER" train --resume "$TMP/go.safetensors" \
    --steps 7 --quiet
expect 3 "--model mlp, but" -- "$EMBER" train --resume "$TMP/go.safetensors" --model mlp --quiet
# a resumed run's progress numbers the epoch's steps as the run does (21 to 64 of 64, not 1 to 44 of
# 44), and with epochs still to come says the run's time left beside the epoch's
expect 0 "saved" -- "$EMBER" train --data random --steps 20 --epochs 2 --device cpu --no-eval --save "$TMP/part.safetensors"
expect 0 "^epoch 1/2 step 64/64 .*ETA [0-9:]*, run [0-9:]*\$" -- "$EMBER" train --resume "$TMP/part.safetensors" --device cpu
grep -q "step [0-9]*/44 " "$TMP/out" && fail "the resumed run counts its steps from the resume: $(cat "$TMP/out")"
grep -q "^epoch 2/2 step 64/64 .*ETA [0-9:]*\$" "$TMP/out" || fail "the last epoch's line says a run's ETA: $(cat "$TMP/out")"

# metrics every N steps, a run id on every line; early stopping when the test accuracy stalls
rm -f "$TMP/log.jsonl"
expect 0 "stopping early: no better test accuracy for 1 epochs (the best, .*, was epoch 1)" -- \
    "$EMBER" train --data random --batch 512 --epochs 5 --lr 0 --early-stop 1 --log-every 3 --run-id try-1 \
    --metrics "$TMP/log.jsonl" --quiet
[ "$(grep -c '"step": ' "$TMP/log.jsonl")" -eq 5 ] && [ "$(grep -c '"test_acc": ' "$TMP/log.jsonl")" -eq 2 ] &&
    [ "$(grep -c '"run": "try-1"' "$TMP/log.jsonl")" -eq 7 ] || fail "--log-every 3 over 16 steps: $(cat "$TMP/log.jsonl")"
expect 2 "--early-stop watches the test accuracy" -- "$EMBER" train --early-stop 2 --no-eval

# learning-rate schedules: the rate of each epoch's last step in the metrics
rm -f "$TMP/lr.jsonl"
expect 0 "sgd lr 0.4 step" -- "$EMBER" train --data random --epochs 3 --batch 512 --optim sgd --lr 0.4 \
    --schedule step --step-epochs 1 --gamma 0.5 --no-eval --quiet --metrics "$TMP/lr.jsonl"
[ "$(sed -n 's/.*"lr_last": \([0-9.e-]*\).*/\1/p' "$TMP/lr.jsonl" | tr '\n' ' ')" = "0.4 0.2 0.1 " ] ||
    fail "step schedule: $(cat "$TMP/lr.jsonl")"
expect 2 "--schedule is constant, step or cosine" -- "$EMBER" train --schedule linear
expect 0 "--steps 100 is more than --epochs 1 allow (8 steps of batch 512)" -- \
    "$EMBER" train --data random --batch 512 --steps 100 --no-eval --quiet

# models: the summary, files of one's own, and their mistakes
expect 0 "usage: ember summary" -- "$EMBER" summary --help
expect 2 "needs --model" -- "$EMBER" summary
expect 0 "Total params: 77,754" -- "$EMBER" summary --model resnet8
grep -q "layer2.0.downsample.0 (Conv2d(16, 32, 1, stride=2, bias=False)) *32x14x14 *512" "$TMP/out" ||
    fail "the resnet8 summary lacks its projection row: $(head -c 2000 "$TMP/out")"
grep -q "FLOPs per image: forward 19.04 M, training step 56.52 M" "$TMP/out" ||
    fail "the resnet8 summary lacks its FLOPs: $(tail -c 400 "$TMP/out")"
expect 0 "Total params: 41,418" -- "$EMBER" summary --model simplecnn --shape 3x32x32
expect 0 "batch_norm2d" -- "$EMBER" summary --list
grep -q "^  resnet8 " "$TMP/out" || fail "summary --list lacks resnet8: $(head -c 600 "$TMP/out")"
printf 'conv1: conv2d 8 kernel=3 padding=same\nbn1: batch_norm2d\nleaky_relu 0.1\nmax_pool2d 2\n' >"$TMP/mine.model"
printf 'flatten\ndropout 0.25\nhead: linear classes\n' >>"$TMP/mine.model"
expect 0 "mine.model: Conv2d(1, 8, 3, padding=1) BatchNorm2d(8) LeakyReLU(0.1)" -- \
    "$EMBER" train --model "$TMP/mine.model" --data random --steps 5 --quiet --save "$TMP/mine.safetensors"
expect 0 "test accuracy" -- "$EMBER" eval --model "$TMP/mine.model" --data random --load "$TMP/mine.safetensors"
expect 3 "--model mlp, but .* was trained with .*mine.model" -- \
    "$EMBER" eval --model mlp --data random --load "$TMP/mine.safetensors"
cp "$TMP/mine.model" "$TMP/same.model"   # the same network under another name agrees
expect 0 "test accuracy" -- "$EMBER" eval --model "$TMP/same.model" --load "$TMP/mine.safetensors"
printf 'conv1: conv2d 8 kernel=3\nrelu\nconv3d 8\n' >"$TMP/typo.model"
expect 3 "typo.model:3:1: unknown layer \"conv3d\" (did you mean \"conv2d\"?)" -- "$EMBER" summary --model "$TMP/typo.model"
expect 3 "typo.model:3:1" -- "$EMBER" train --model "$TMP/typo.model" --data random --quiet
printf 'input 3x32x32\nflatten\nlinear classes\n' >"$TMP/cifar.model"
expect 2 "cifar.model:1:7: this model is for input 3x32x32, but the samples are 1x28x28" -- \
    "$EMBER" train --model "$TMP/cifar.model" --data random --quiet
expect 3 "cannot open model file $TMP/none.model" -- "$EMBER" summary --model "$TMP/none.model"
# the example in docs/models.md is a model file that builds
docs=$(dirname "$0")/../../docs/models.md
awk '/^```$/ { on = 0 } on { print } /^# A small ResNet/ { on = 1; print }' "$docs" >"$TMP/doc.model"
expect 0 "Total params" -- "$EMBER" summary --model "$TMP/doc.model"

# a checkpoint holding a NaN is refused with the tensor's name; one whose
# finite weights overflow gives a loss JSON can only spell null, never nan
PYTHON=$(command -v python3 || true)
if [ -n "$PYTHON" ]; then
    "$PYTHON" - "$TMP" <<'PY'
import json, struct, sys
def save(path, fill):
    shapes = {"weight": [10, 784], "bias": [10]}
    header, data, at = {}, b"", 0
    for name, shape in shapes.items():
        n = shape[0] * (shape[1] if len(shape) > 1 else 1)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [at, at + 4 * n]}
        data += struct.pack("<%df" % n, *([fill] * n))
        at += 4 * n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
save(sys.argv[1] + "/nan.safetensors", float("nan"))
save(sys.argv[1] + "/huge.safetensors", 3e38)
# a folder of one 8x8 gray PNG per class: nothing to hold out for a test
import os, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
for c in "ab":
    os.makedirs(f"{sys.argv[1]}/one/{c}")
    rows = b"".join(b"\0" + bytes([40 if c == "a" else 200] * 8) for _ in range(8))
    open(f"{sys.argv[1]}/one/{c}/0.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 0, 0, 0, 0))
                                                 + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
PY
    expect 3 "has no images to test on" -- "$EMBER" train --data folder --data-dir "$TMP/one" --model linear \
        --epochs 1 --save "$TMP/one.safetensors"
    [ ! -e "$TMP/one.safetensors" ] || fail "a run that could not evaluate trained and saved first"
    expect 0 "saved" -- "$EMBER" train --data folder --data-dir "$TMP/one" --model linear --epochs 1 --no-eval \
        --save "$TMP/one.safetensors"
    # a class folder whose name is not UTF-8 (Latin-1's "caf\xe9"): its checkpoint could not
    # store the name, which is found before the first step, not at the first save
    cp -r "$TMP/one" "$TMP/latin"
    mv "$TMP/latin/a" "$TMP/latin/$(printf 'caf\351')"
    expect 3 "its metadata cannot be stored" -- timeout 20 "$EMBER" train --data folder --data-dir "$TMP/latin" \
        --model linear --epochs 1000 --no-eval --save "$TMP/latin.safetensors" --quiet
    expect 3 'tensor "weight" holds NaN at index 0' -- \
        "$EMBER" eval --model linear --data random --load "$TMP/nan.safetensors"
    "$EMBER" eval --model linear --data random --load "$TMP/huge.safetensors" --json >"$TMP/huge.json" 2>"$TMP/err"
    "$PYTHON" -c "import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d['test_loss'] is not None)" \
        "$TMP/huge.json" || fail "eval --json of an overflowing model: $(head -c 300 "$TMP/huge.json")"
fi

# Fashion-MNIST with its test labels cut short by 4 bytes (a download that
# stopped inside the gzip trailer): refused, as gzip -t would
# (not in the sanitizer build, where loading 60,000 images unoptimised
# costs half a minute; test_loaders cuts gzip files at every length there)
fm=/usr/share/datasets/fashion-mnist
if [ -f "$fm/t10k-labels-idx1-ubyte.gz" ] && [ "${EMBER_TEST_SANITIZED:-OFF}" != ON ]; then
    mkdir -p "$TMP/cut-fm"
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte; do
        ln -s "$fm/$f.gz" "$TMP/cut-fm/$f.gz"
    done
    size=$(wc -c <"$fm/t10k-labels-idx1-ubyte.gz")
    head -c $((size - 4)) "$fm/t10k-labels-idx1-ubyte.gz" >"$TMP/cut-fm/t10k-labels-idx1-ubyte.gz"
    expect 3 "t10k-labels-idx1-ubyte.gz: truncated or corrupt gzip" -- \
        "$EMBER" train --data fashion-mnist --data-dir "$TMP/cut-fm" --model linear --steps 1 --quiet
fi

# a FIFO (or any file that is not a regular file) given where ember reads a
# file is refused at once: open() on a FIFO would wait for a writer forever
mkfifo "$TMP/fifo.safetensors" "$TMP/fifo.png" "$TMP/fifo.model"
expect 3 "fifo.safetensors is a FIFO, not a regular file" -- timeout 20 "$EMBER" eval --load "$TMP/fifo.safetensors"
expect 3 "fifo.png is a FIFO, not a regular file" -- \
    timeout 20 "$EMBER" predict --load "$TMP/mine.safetensors" "$TMP/fifo.png"
expect 3 "fifo.model is not a regular file" -- timeout 20 "$EMBER" summary --model "$TMP/fifo.model"

# every file a run will write is checked before its first step, so that a
# typo costs a second, not the run: a missing folder (--save, --metrics,
# --trace), a folder where a checkpoint or its best sibling goes, a FIFO
# given as --save (the checkpoint replaces it: never a device or FIFO), one
# without a reader as --metrics (opening it would wait), a folder no file
# can be made in; none of them trains a step
quick="train --data random --shape 4 --model linear --epochs 100000 --device cpu --threads 1 --quiet"
expect 3 "cannot write --save $TMP/nowhere/run.safetensors: the folder $TMP/nowhere does not exist" -- \
    timeout 20 "$EMBER" $quick --save "$TMP/nowhere/run.safetensors"
expect 3 "cannot write --metrics $TMP/nowhere/m.jsonl: the folder $TMP/nowhere does not exist" -- \
    timeout 20 "$EMBER" $quick --metrics "$TMP/nowhere/m.jsonl"
expect 3 "cannot write --trace $TMP/nowhere/t.json" -- timeout 20 "$EMBER" $quick --trace "$TMP/nowhere/t.json"
mkdir -p "$TMP/outs/run.best.safetensors"
expect 3 "cannot write --save's best epoch $TMP/outs/run.best.safetensors: it is a folder" -- \
    timeout 20 "$EMBER" $quick --save "$TMP/outs/run.safetensors"
printf x >"$TMP/outs/file"
expect 3 "$TMP/outs/file is not a folder" -- timeout 20 "$EMBER" $quick --save "$TMP/outs/file/run.safetensors"
mkfifo "$TMP/outs/fifo.safetensors" "$TMP/outs/fifo.jsonl"
expect 3 "it is a FIFO; ember writes only regular files" -- \
    timeout 20 "$EMBER" $quick --save "$TMP/outs/fifo.safetensors"
expect 3 "cannot write --metrics $TMP/outs/fifo.jsonl" -- timeout 20 "$EMBER" $quick --metrics "$TMP/outs/fifo.jsonl"
[ -p "$TMP/outs/fifo.safetensors" ] || fail "the FIFO given as --save was replaced"
# an ONNX file that cannot be written says where and why, and leaves nothing behind
expect 3 "cannot write -o $TMP/nowhere/m.onnx: the folder $TMP/nowhere does not exist" -- \
    "$EMBER" export --load "$TMP/run.safetensors" -o "$TMP/nowhere/m.onnx"
# rms_norm, which opset 13 has no operator for, is written out as its arithmetic
printf 'input 1x28x28\nflatten\nhidden: linear 16\nnorm: rms_norm\nout: linear classes\n' >"$TMP/rms.model"
expect 0 "saved" -- "$EMBER" train --model "$TMP/rms.model" --data random --steps 2 --no-eval --device cpu \
    --save "$TMP/rms.safetensors"
expect 0 "wrote $TMP/outs/rms.onnx" -- "$EMBER" export --load "$TMP/rms.safetensors" -o "$TMP/outs/rms.onnx"
if [ "$(id -u)" -ne 0 ]; then # root writes into a read-only folder anyway
    mkdir -p "$TMP/outs/ro" && chmod 555 "$TMP/outs/ro"
    expect 3 "no file can be made in $TMP/outs/ro" -- timeout 20 "$EMBER" $quick --save "$TMP/outs/ro/run.safetensors"
fi
ls "$TMP/outs" | grep -q "ember-probe" && fail "a probe file was left: $(ls "$TMP/outs")"
# a write that fails in the middle of a run (a full disk: /dev/full) stops it,
# and what it learnt is saved all the same, ready to resume
expect 3 "stopped at step 2 because --metrics could not be written; the run is saved" -- \
    "$EMBER" train --data random --model mlp --epochs 2 --log-every 2 --metrics /dev/full --device cpu \
    --save "$TMP/outs/full.safetensors" --quiet
expect 0 "resuming $TMP/outs/full.safetensors at epoch 1, step 2 of 64" -- \
    "$EMBER" train --resume "$TMP/outs/full.safetensors" --steps 3 --device cpu --quiet

# "auto" on a machine whose only OpenCL devices are CPUs (PoCL here): the
# first run loads the drivers to find that out and remembers it; the next
# passes OpenCL over without loading it (no libOpenCL, no LLVM in the
# process), and `ember devices` still asks afresh
cache=$TMP/auto-cache
EMBER_CACHE_DIR=$cache LD_DEBUG=files "$EMBER" train --data random --model linear --steps 1 --device auto \
    --verbose >"$TMP/auto1" 2>&1
if grep -q "opencl:0 (a CPU device" "$TMP/auto1"; then
    EMBER_CACHE_DIR=$cache LD_DEBUG=files "$EMBER" train --data random --model linear --steps 1 --device auto \
        --verbose >"$TMP/auto2" 2>&1
    grep -q "opencl (no OpenCL device auto would take on this machine (remembered" "$TMP/auto2" ||
        fail "auto did not remember OpenCL's answer: $(grep 'auto chose' "$TMP/auto2")"
    ! grep -q "file=libOpenCL" "$TMP/auto2" || fail "the second auto loaded libOpenCL"
    EMBER_CACHE_DIR=$cache "$EMBER" devices >"$TMP/auto3" 2>&1
    grep -q "opencl:0" "$TMP/auto3" || fail "ember devices lost opencl:0 after auto remembered it"
fi

# training that is not learning: said, with its likely causes; --stop-if-diverging stops it and keeps
# the model of its lowest loss (Fashion-MNIST; a healthy run says nothing: test_train_e2e.sh). Not
# under the sanitizers, which make these hundreds of real steps too slow for the test's time.
if [ "${EMBER_TEST_SANITIZED:-OFF}" = ON ]; then
    echo "note: a sanitizer build: training that is not learning is checked in the plain build"
elif [ -d /usr/share/datasets/fashion-mnist ]; then
    expect 0 "warning: the training loss is .* more than twice a uniform guess's" -- \
        "$EMBER" train --lr 100 --steps 200 --device cpu --no-eval --quiet
    grep -qF "a learning rate too high (--lr 100: try 10)" "$TMP/out" || fail "--lr 100: no likely cause: $(cat "$TMP/out")"
    # a rate that rises in its warm-up: the loss falls, then grows
    expect 1 "warning: the training loss has grown for [0-9]* intervals of 20 steps in a row" -- \
        "$EMBER" train --lr 5 --warmup 1 --steps 600 --device cpu --no-eval --quiet --log-every 20 \
        --stop-if-diverging --save "$TMP/diverged.safetensors"
    grep -qF "stopped: the run was not learning (--stop-if-diverging); saved $TMP/diverged.safetensors: the model of step" \
        "$TMP/out" || fail "--stop-if-diverging did not say what it kept: $(cat "$TMP/out")"
    "$EMBER" eval --load "$TMP/diverged.safetensors" --device cpu --json >"$TMP/out" 2>&1 ||
        fail "eval of the model --stop-if-diverging kept: $(cat "$TMP/out")"
    acc=$(sed -n 's/.*"test_acc": \([0-9.]*\).*/\1/p' "$TMP/out")
    awk -v a="$acc" 'BEGIN { exit !(a > 0.5) }' || fail "the model --stop-if-diverging kept is no better than chance: $acc"
    # worse than a guess from the start: nothing worth keeping
    expect 1 "never did better than a uniform guess's" -- \
        "$EMBER" train --lr 100 --steps 300 --device cpu --no-eval --quiet --stop-if-diverging --save "$TMP/none.safetensors"
    [ -e "$TMP/none.safetensors" ] && fail "--stop-if-diverging saved a model that never beat a guess"
else
    echo "note: no Fashion-MNIST: training that is not learning is not checked"
fi
# on a folder of 36 pictures an epoch is a step: the watch still judges intervals of 10 steps, and
# the 3 test pictures are too few to call an accuracy chance
SHAPES="$(dirname "$0")/../../examples/shapes"
expect 0 "warning: the training loss is .* over steps 1 to 10, more than twice" -- "$EMBER" train --data folder \
    --data-dir "$SHAPES" --shape 3x32x32 --resize --model kerascnn --lr 100 --epochs 30 --device cpu --quiet
grep -q "is chance" "$TMP/out" && fail "3 test pictures judged at chance: $(cat "$TMP/out")"
# the README's folder example learns: every training picture right by its end, and nothing said
expect 0 "^epoch 20/20: train loss .*, train accuracy 1.0000" -- "$EMBER" train --data folder --data-dir "$SHAPES" \
    --shape 3x32x32 --resize --model kerascnn --batch 8 --epochs 20 --device cpu
grep -q "warning" "$TMP/out" && fail "the README's folder example is warned about: $(cat "$TMP/out")"

if [ "$failures" -ne 0 ]; then
    echo "test_cli: $failures failures" >&2
    exit 1
fi
echo "test_cli: ok"
