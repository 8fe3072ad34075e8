#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/windows/test_wine_cli.sh — the Windows zip (scripts/windows-package.sh)
# as a user meets it, under Wine: unpacked into a folder whose name has spaces
# and non-ASCII letters, its ember.exe run with Windows paths (drive letters,
# backslashes), a model file with CRLF line ends, OpenCL through Wine's
# opencl.dll to PoCL, and the README's job: simplecnn for one epoch on
# Fashion-MNIST, whose test accuracy must be the Linux build's within 0.3
# points (docs/windows.md).
#
#   test_wine_cli.sh ZIP LINUX-EMBER [WINDOWS-NVRTC-FOLDER LINUX-NVRTC-FOLDER]
#
# With the two NVRTC folders (CUDA 11.8's, from NVIDIA's PyPI wheels for each
# system: scripts/windows-deps.sh --tests and scripts/setup.sh --tests), the
# zip's ember.exe compiles kernels with NVIDIA's own nvrtc64_112_0.dll under
# Wine, and its PTX must be the Linux build's with libnvrtc.so.11.2, byte for
# byte. With EMBER_WINE_DOUBLE (the CUDA test double built for Windows), that
# DLL beside ember.exe as nvcuda.dll is found and trained on.
# Skips (77) without Wine or the data set.
set -u
zip=$1 linux_ember=$2
here=$(cd "$(dirname "$0")/.." && pwd)
fashion=/usr/share/datasets/fashion-mnist
command -v wine >/dev/null || { echo "test_wine_cli: skipped: no wine (scripts/setup.sh --tests)"; exit 77; }
[ -f "$fashion/train-images-idx3-ubyte.gz" ] || { echo "test_wine_cli: skipped: no $fashion"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# a Wine prefix of the test's own, made on first use (about 10 s)
export WINEPREFIX="${EMBER_WINEPREFIX:-$TMP/wineprefix}" WINEDEBUG=-all
. "$here/common/cli-util.sh"

# unpacked where a Windows user might: spaces, accents and Cyrillic in the path
home="$TMP/Mes programmes/émber Обучение"
mkdir -p "$home"
(cd "$home" && python3 -m zipfile -e "$zip" .) || { echo "FAILED: cannot unpack $zip"; exit 1; }
dir=$(ls -d "$home"/ember-*-win64)
EMBER="$here/windows/wine-run.sh"
export EMBER_WINE_PROGRAM="$dir/bin/ember.exe"
# the same data as Linux, under a folder named as Windows users name them, and
# given with a drive letter and backslashes (Wine's Z: is the Linux root)
data="$TMP/Données d'entraînement/fashion-mnist"
mkdir -p "$data"
cp "$fashion"/*.gz "$data/"
windows_data="Z:$(printf '%s' "$data" | tr '/' '\\')"

run -- --version
expect_status 0 "ember.exe --version"
expect_text "ember " "ember.exe --version"

run -- devices
expect_status 0 "ember.exe devices"
expect_text "cpu" "ember.exe devices lists the CPU"
expect_text "nvcuda.dll not found" "ember.exe devices says what CUDA lacks on Windows"

# a model file with Windows line ends, at a Windows path
sed 's/$/\r/' "$here/../models/simplecnn.model" >"$data/../simplecnn crlf.model"
windows_model="Z:$(printf '%s' "$data/../simplecnn crlf.model" | tr '/' '\\')"
run -- train --model "$windows_model" --data-dir "$windows_data" --steps 20 --device cpu
expect_status 0 "training a CRLF model file at a Windows path"

# OpenCL through Wine's opencl.dll, to PoCL on the Linux side
if grep -q "opencl:0" "$TMP/out" 2>/dev/null || { run -- devices && grep -q "opencl:0" "$TMP/out"; }; then
    run -- train --data-dir "$windows_data" --steps 60 --device opencl:0
    expect_status 0 "training on opencl:0 (PoCL through Wine)"
    acc=$(sed -n 's/.*test accuracy \([0-9.]*\).*/\1/p' "$TMP/out" "$TMP/err" | tail -1)
    python3 -c "import sys; sys.exit(0 if float('${acc:-0}') > 0.6 else 1)" ||
        fail "60 steps on opencl:0 reached a test accuracy of ${acc:-none}, not above 0.6"
else
    echo "test_wine_cli: no OpenCL device under Wine: the OpenCL check is skipped"
fi

# NVIDIA's NVRTC for Windows, loaded by path (its nvrtc-builtins DLL found
# beside it), compiling ember's kernels as on Linux
if [ -n "${3:-}" ] && [ -d "${3:-}" ] && [ -d "${4:-}" ]; then
    windows_nvrtc="Z:$(printf '%s' "$3" | tr '/' '\\')"
    for kernel in fill sgemm im2col softmax_forward_rows layer_norm_backward_rows adam_step; do
        EMBER_NVRTC="only:$4" "$linux_ember" ptx $kernel --arch sm_35 >"$TMP/linux.ptx" 2>"$TMP/err" ||
            fail "Linux's NVRTC 11.8 did not compile $kernel: $(cat "$TMP/err")"
        run EMBER_NVRTC="only:$windows_nvrtc" -- ptx $kernel --arch sm_35
        expect_status 0 "nvrtc64_112_0.dll compiling $kernel for sm_35"
        tr -d '\r' <"$TMP/out" >"$TMP/windows.ptx"
        [ -s "$TMP/linux.ptx" ] && cmp -s "$TMP/linux.ptx" "$TMP/windows.ptx" ||
            fail "$kernel: the PTX of NVRTC 11.8 for Windows differs from Linux's ($(wc -c <"$TMP/windows.ptx") and $(wc -c <"$TMP/linux.ptx") bytes)"
    done
    echo "test_wine_cli: nvrtc64_112_0.dll under Wine compiled 6 kernels for sm_35 to Linux's PTX"
    # `ember ptx --resources`: NVIDIA's ptxas.exe started by CreateProcessW,
    # its report (CRLF lines) read into the same table as Linux's ptxas 11.8
    windows_ptxas="$3/../../cuda_nvcc/bin/ptxas.exe" linux_ptxas="$4/../../cuda_nvcc/bin/ptxas"
    if [ -f "$windows_ptxas" ] && [ -x "$linux_ptxas" ]; then
        EMBER_NVRTC="only:$4" EMBER_PTXAS="only:$linux_ptxas" "$linux_ember" ptx --resources --arch sm_35 sgemm \
            >"$TMP/linux.res" 2>"$TMP/err" || fail "Linux's ptx --resources: $(cat "$TMP/err")"
        run EMBER_NVRTC="only:$windows_nvrtc" EMBER_PTXAS="only:Z:$(cd "$(dirname "$windows_ptxas")" && pwd | tr '/' '\\')\\ptxas.exe" \
            -- ptx --resources --arch sm_35 sgemm
        expect_status 0 "ember.exe ptx --resources with ptxas.exe"
        grep '^sgemm ' "$TMP/linux.res" >"$TMP/linux.rows"
        tr -d '\r' <"$TMP/out" | grep '^sgemm ' >"$TMP/windows.rows"
        [ -s "$TMP/linux.rows" ] && cmp -s "$TMP/linux.rows" "$TMP/windows.rows" ||
            fail "ptx --resources under Wine: $(cat "$TMP/windows.rows") where Linux's says $(cat "$TMP/linux.rows")"
        echo "test_wine_cli: ptxas.exe under Wine reported sgemm's resources as Linux's ptxas"
    else
        echo "test_wine_cli: no ptxas 11.8 for both systems: the --resources check is skipped"
    fi
else
    echo "test_wine_cli: no NVRTC 11.8 for both systems: the NVRTC check is skipped"
fi

# the README's job, and a checkpoint saved at a Windows path then saved over
save="$TMP/Mes programmes/run ü.safetensors"
windows_save="Z:$(printf '%s' "$save" | tr '/' '\\')"
run -- train --data-dir "$windows_data" --epochs 1 --device cpu --save "$windows_save"
expect_status 0 "ember.exe train --epochs 1"
wine_acc=$(sed -n 's/.*test accuracy \([0-9.]*\).*/\1/p' "$TMP/out" "$TMP/err" | tail -1)
[ -f "$save" ] || fail "no checkpoint at $save"
run -- train --data-dir "$windows_data" --steps 5 --device cpu --save "$windows_save"
expect_status 0 "saving over an existing checkpoint (MoveFileEx)"
run -- eval --load "$windows_save" --data-dir "$windows_data"
expect_status 0 "ember.exe eval of the replaced checkpoint"

# a checkpoint another program holds open (tests/windows/hold_open.c, built
# with the Windows tests): Windows replaces no open file, so the save fails
# saying why, the old checkpoint stays whole, and what was to be saved is
# kept beside it, whole too
# hold WINDOWS_PATH: opened by hold_open.exe until `release`
hold() {
    wine "$EMBER_HOLD_OPEN" "$1" 120 >"$TMP/held" 2>&1 &
    holder=$!
    tries=0
    until grep -q held "$TMP/held" 2>/dev/null || [ $tries -ge 60 ]; do
        sleep 0.5
        tries=$((tries + 1))
    done
    grep -q held "$TMP/held" || fail "hold_open did not open $1: $(cat "$TMP/held")"
}
release() {
    kill "$holder" 2>/dev/null
    wait "$holder" 2>/dev/null
}
if [ -n "${EMBER_HOLD_OPEN:-}" ]; then
    cp "$save" "$TMP/before.safetensors"
    hold "$windows_save"
    run -- train --data-dir "$windows_data" --steps 5 --device cpu --save "$windows_save"
    release
    [ "$status" -ne 0 ] || fail "saving over a checkpoint held open succeeded"
    expect_text "another program has it open" "saving over a checkpoint held open"
    cmp -s "$save" "$TMP/before.safetensors" || fail "the refused save changed $save"
    kept=$(ls "$save".tmp.* 2>/dev/null | head -n 1)
    if [ -n "$kept" ]; then
        run -- eval --load "Z:$(printf '%s' "$kept" | tr '/' '\\')" --data-dir "$windows_data"
        expect_status 0 "ember.exe eval of the checkpoint kept beside the one held open"
        rm -f "$kept"
    else
        fail "no checkpoint kept beside $save: $(cat "$TMP/err")"
    fi
    # and an ONNX file held open likewise: the export fails saying why, the
    # old file stays, the new one is kept whole beside it
    onnx="$(dirname "$save")/held.onnx"
    windows_onnx="Z:$(printf '%s' "$onnx" | tr '/' '\\')"
    run -- export --load "$windows_save" -o "$windows_onnx"
    expect_status 0 "ember.exe export"
    cp "$onnx" "$TMP/before.onnx"
    hold "$windows_onnx"
    run -- export --load "$windows_save" -o "$windows_onnx"
    release
    [ "$status" -ne 0 ] || fail "exporting over an ONNX file held open succeeded"
    expect_text "another program has it open" "exporting over an ONNX file held open"
    cmp -s "$onnx" "$TMP/before.onnx" || fail "the refused export changed $onnx"
    kept=$(ls "$onnx".tmp.* 2>/dev/null | head -n 1)
    [ -n "$kept" ] && cmp -s "$kept" "$onnx" || fail "no whole ONNX file kept beside $onnx: $(cat "$TMP/err")"
    rm -f "$kept"
else
    echo "test_wine_cli: no EMBER_HOLD_OPEN (scripts/windows-test.sh sets it): the open checkpoint is not tried"
fi

# Ctrl-C: Wine hands a SIGINT to the console handler (SetConsoleCtrlHandler,
# base/platform-windows.c), and ember.exe finishes the step, saves, says how
# to go on and exits 130, as on Linux
interrupted="$TMP/int rupted.safetensors"
windows_interrupted="Z:$(printf '%s' "$interrupted" | tr '/' '\\')"
wine "$EMBER_WINE_PROGRAM" train --data-dir "$windows_data" --epochs 50 --device cpu --save "$windows_interrupted" \
    >"$TMP/int.out" 2>&1 &
trainer=$!
tries=0
until grep -q "step" "$TMP/int.out" 2>/dev/null || [ $tries -ge 120 ]; do
    sleep 0.5
    tries=$((tries + 1))
done
kill -INT "$trainer"
wait "$trainer"
status=$?
[ "$status" -eq 130 ] || fail "ember.exe after Ctrl-C exited $status, not 130: $(tail -3 "$TMP/int.out")"
grep -q "interrupted (Ctrl-C) at epoch" "$TMP/int.out" || fail "ember.exe did not say it was interrupted: $(tail -3 "$TMP/int.out")"
grep -q "(interrupted)" "$TMP/int.out" && [ -s "$interrupted" ] || fail "ember.exe did not save when interrupted: $(tail -3 "$TMP/int.out")"
run -- train --resume "$windows_interrupted" --data-dir "$windows_data" --steps 5 --device cpu
expect_status 0 "ember.exe train --resume of the interrupted run"

# nvcuda.dll found where Windows looks first, beside ember.exe: the CUDA test
# double (EMBER_WINE_DOUBLE, which scripts/windows-test.sh sets) as a user's
# driver, without EMBER_CUDA_LIBRARY; it plays a Quadro K2100M on R418, so the
# built-in sm_30 PTX is the path, and ember.exe trains on it
if [ -n "${EMBER_WINE_DOUBLE:-}" ]; then
    cp "$EMBER_WINE_DOUBLE" "$dir/bin/nvcuda.dll"
    export EMBER_FAKE_CUDA_GPUS="30:Quadro K2100M (CUDA test double)" EMBER_FAKE_CUDA_DRIVER=10010 EMBER_NVRTC=none
    run -- devices
    expect_status 0 "ember.exe devices with nvcuda.dll beside it"
    expect_text "cuda:0    Quadro K2100M (CUDA test double) (sm_30" "ember.exe devices finds nvcuda.dll beside it"
    run -- train --data-dir "$windows_data" --steps 20 --device cuda:0
    expect_status 0 "ember.exe train on cuda:0 through nvcuda.dll beside it"
    expect_text "kernels: built-in sm_30 PTX" "ember.exe train on the K2100M's path"
    rm -f "$dir/bin/nvcuda.dll"
    unset EMBER_FAKE_CUDA_GPUS EMBER_FAKE_CUDA_DRIVER EMBER_NVRTC
    echo "test_wine_cli: nvcuda.dll beside ember.exe (the CUDA test double) found, and 20 steps trained on it"
else
    echo "test_wine_cli: no EMBER_WINE_DOUBLE (scripts/windows-test.sh sets it): nvcuda.dll beside ember.exe is not tried"
fi

"$linux_ember" train --data-dir "$fashion" --epochs 1 --device cpu >"$TMP/linux" 2>&1 ||
    fail "the Linux build did not train: $(tail -3 "$TMP/linux")"
linux_acc=$(sed -n 's/.*test accuracy \([0-9.]*\).*/\1/p' "$TMP/linux" | tail -1)
echo "test_wine_cli: simplecnn, one epoch: test accuracy ${wine_acc:-none} under Wine, ${linux_acc:-none} on Linux"
python3 -c "import sys; sys.exit(0 if abs(float('${wine_acc:-0}') - float('${linux_acc:-1}')) <= 0.003 else 1)" ||
    fail "under Wine the test accuracy is ${wine_acc:-none}, more than 0.3 points from Linux's ${linux_acc:-none}"
finish test_wine_cli
