#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_outputs.sh — every file the `ember` program makes goes
# through one output helper (tools/cli-files.c; docs/reliability.md): checked
# before the work, a regular file or none (never a FIFO, a device, a symbolic
# link or a folder replaced, never one of the command's own inputs), written
# beside the target and renamed over it, so that a full disk leaves the old
# file whole. export, import -o and --model-out, predict --output, plot -o and
# --trace, each held to it. Usage: test_outputs.sh path/to/ember
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

# a model of 4 features, its ONNX file, and 3 samples to classify
"$EMBER" train --data random --shape 4 --model linear --steps 2 --device cpu --threads 1 --quiet \
    --save "$TMP/run.safetensors" >/dev/null 2>&1 || fail "cannot train the model the checks use"
"$EMBER" export --load "$TMP/run.safetensors" -o "$TMP/run.onnx" >/dev/null 2>&1 || fail "cannot export"
# ROWS x 4 float32 zeros as a .npy file
npy() {
    "$PYTHON" -c "
import struct, sys
rows = $1
head = \"{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 4), }\" % rows
head += ' ' * (63 - (10 + len(head)) % 64) + '\\n'
sys.stdout.buffer.write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(head)) + head.encode() + bytes(16 * rows))
"
}
npy 3 >"$TMP/x.npy"
"$EMBER" predict --load "$TMP/run.safetensors" "$TMP/x.npy" >/dev/null 2>&1 || fail "cannot classify x.npy"
mkdir -p "$TMP/folder"
mkfifo "$TMP/fifo"
ln -s "$TMP/target" "$TMP/link"
printf 'kept' >"$TMP/target"
cp "$TMP/run.safetensors" "$TMP/run.copy"
cp "$TMP/x.npy" "$TMP/x.copy"

# the FIFO, link or folder again under a name with the ending a writer wants
same_kind() {
    case $1 in
    $TMP/fifo.*) [ -p "$1" ] || mkfifo "$1" ;;
    $TMP/link.*) [ -L "$1" ] || ln -s "$TMP/target" "$1" ;;
    $TMP/folder.*) mkdir -p "$1" ;;
    esac
}

# each writer, each kind of path it must refuse, before any work: exit 3,
# the path and why, the thing left as it was
for writer in export import model-out predict plot; do
    for what in missing folder fifo link input; do
        case $what in
        missing) out=$TMP/nowhere/out why="the folder $TMP/nowhere does not exist" ;;
        folder) out=$TMP/folder why="it is a folder" ;;
        fifo) out=$TMP/fifo why="it is a FIFO" ;;
        link) out=$TMP/link why="it is a symbolic link" ;;
        input) out="" why="it is also an input" ;;
        esac
        case $writer in
        export)
            [ -n "$out" ] || out=$TMP/run.safetensors
            set -- export --load "$TMP/run.safetensors" -o "$out" && option=-o
            ;;
        import)
            [ -n "$out" ] || out=$TMP/run.onnx
            set -- import "$TMP/run.onnx" -o "$out" && option=-o
            ;;
        model-out)
            [ -n "$out" ] || out=$TMP/run.onnx
            set -- import "$TMP/run.onnx" -o "$TMP/imported.safetensors" --model-out "$out" && option=--model-out
            ;;
        predict)
            [ -n "$out" ] || out=$TMP/x.npy
            case $out in *.npy | *.csv) ;; *) out=$out.npy ;; esac
            same_kind "$out"
            set -- predict --load "$TMP/run.safetensors" "$TMP/x.npy" --output "$out" && option=--output
            ;;
        plot)
            # metrics named as a picture: the one file plotted and written
            printf '{"epoch": 1, "train_loss": 1.0}\n' >"$TMP/m.svg"
            cp "$TMP/m.svg" "$TMP/m.keep"
            [ -n "$out" ] || out=$TMP/m.svg
            case $out in *.svg) ;; *) out=$out.svg ;; esac
            same_kind "$out"
            set -- plot "$TMP/m.svg" -o "$out" && option=-o
            ;;
        esac
        expect 3 "cannot write $option $out: $why" -- timeout 20 "$EMBER" "$@"
        grep -q "classif\|wrote" "$TMP/out" && fail "$writer to a $what did the work first: $(cat "$TMP/out")"
    done
done
[ -p "$TMP/fifo" ] || fail "the FIFO was replaced"
[ -L "$TMP/link" ] && [ "$(cat "$TMP/target")" = kept ] || fail "the symbolic link or its file was replaced"
cmp -s "$TMP/run.safetensors" "$TMP/run.copy" || fail "a command replaced its input checkpoint"
cmp -s "$TMP/x.npy" "$TMP/x.copy" || fail "predict replaced its input array"
cmp -s "$TMP/m.svg" "$TMP/m.keep" || fail "plot replaced the metrics it read"
[ -d "$TMP/folder" ] || fail "the folder was replaced"
# -o and --model-out naming one file: the second would replace the first
expect 2 "-o and --model-out are both" -- \
    "$EMBER" import "$TMP/run.onnx" -o "$TMP/both" --model-out "$TMP/both"

# a device node (as root, `-o /dev/null` used to replace the system's own)
if [ "$(id -u)" -eq 0 ] && mknod "$TMP/null" c 1 3 2>/dev/null; then
    expect 3 "cannot write -o $TMP/null: it is a character device" -- \
        "$EMBER" export --load "$TMP/run.safetensors" -o "$TMP/null"
    [ -c "$TMP/null" ] || fail "export replaced a device node"
    mknod "$TMP/null.npy" c 1 3
    expect 3 "cannot write --output $TMP/null.npy: it is a character device" -- \
        "$EMBER" predict --load "$TMP/run.safetensors" "$TMP/x.npy" --output "$TMP/null.npy"
fi
# a file system no file can be made in (/proc takes none) is found before the work
expect 3 "cannot write --output /proc/ember-out.npy: no file can be made in /proc" -- \
    "$EMBER" predict --load "$TMP/run.safetensors" "$TMP/x.npy" --output /proc/ember-out.npy
# --trace: a FIFO is refused before training, never waited on
expect 3 "cannot write --trace $TMP/fifo: it is a FIFO" -- timeout 20 \
    "$EMBER" train --data random --shape 4 --model linear --epochs 100000 --device cpu --quiet --trace "$TMP/fifo"

# a full disk (a file-size limit: the write fails with EFBIG, SIGXFSZ
# ignored) leaves each existing output whole, and no temporary file beside it
cp "$TMP/run.onnx" "$TMP/full.onnx"
cp "$TMP/run.safetensors" "$TMP/full.safetensors"
"$EMBER" predict --load "$TMP/run.safetensors" "$TMP/x.npy" --output "$TMP/full.csv" >/dev/null 2>&1
cp "$TMP/full.csv" "$TMP/full.csv.keep"
# (the command's own stdout is past the limit too: it goes to /dev/null, its messages are short)
limited() { (trap '' XFSZ && ulimit -f 1 && exec "$@" >/dev/null); }
expect 3 "cannot write\|cannot export" -- limited "$EMBER" export --load "$TMP/run.safetensors" -o "$TMP/full.onnx"
cmp -s "$TMP/full.onnx" "$TMP/run.onnx" || fail "export on a full disk tore the old file"
expect 3 "cannot write -o $TMP/full.safetensors" -- limited "$EMBER" import "$TMP/run.onnx" -o "$TMP/full.safetensors"
cmp -s "$TMP/full.safetensors" "$TMP/run.safetensors" || fail "import on a full disk tore the old checkpoint"
# 2,000 rows: more than the limit's 512 bytes
npy 2000 >"$TMP/many.npy"
expect 3 "cannot write --output $TMP/full.csv" -- limited "$EMBER" predict --load "$TMP/run.safetensors" \
    "$TMP/many.npy" --output "$TMP/full.csv"
cmp -s "$TMP/full.csv" "$TMP/full.csv.keep" || fail "predict on a full disk tore the old table"
ls "$TMP" | grep -q "\.tmp\." && fail "a failed write left its temporary file: $(ls "$TMP")"

# what the helper writes is whole and where it was asked for
expect 0 "wrote $TMP/new.onnx" -- "$EMBER" export --load "$TMP/run.safetensors" -o "$TMP/new.onnx"
expect 0 "wrote $TMP/new.safetensors" -- "$EMBER" import "$TMP/new.onnx" -o "$TMP/new.safetensors" \
    --model-out "$TMP/new.model"
grep -q "^input 4" "$TMP/new.model" || fail "--model-out wrote no model file: $(cat "$TMP/new.model")"
expect 0 "" -- "$EMBER" predict --load "$TMP/new.safetensors" "$TMP/many.npy" --output "$TMP/p.npy"
[ "$(wc -c <"$TMP/p.npy")" -eq $((128 + 2000 * 10 * 4)) ] || fail "p.npy is $(wc -c <"$TMP/p.npy") bytes"
ls "$TMP" | grep -q "\.tmp\." && fail "a write left its temporary file: $(ls "$TMP")"

finish test_outputs
