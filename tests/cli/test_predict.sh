#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_predict.sh — a trained model used with --load alone: `ember
# eval` and `ember predict` read the model, data and classes from the
# checkpoint, and predict classifies PNG files as eval scores them.
#
#   test_predict.sh path/to/ember PYTHON
#
# PYTHON writes the images (PNG by hand: zlib and struct) and, where it has
# safetensors, a checkpoint without ember's metadata. A missing Fashion-MNIST
# is a failure: the README's test command installs it.
set -u
EMBER=$1 PY=$2
DATA=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

# the first 300 test images as PNG files named by index and label, the same
# 300 as an IDX subset, a 32x32 image, and a folder data set of three classes
"$PY" - "$DATA" "$TMP" "$(dirname "$0")/../common" <<'EOF' || { echo "FAILED: cannot write the images" >&2; exit 1; }
import os, struct, sys, zlib
data, tmp, here = sys.argv[1:4]
sys.path.insert(0, here)
from fashion_subset import read_idx, subset

def png(path, rows):
    h, w = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(r) for r in rows)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

_, pixels = read_idx(os.path.join(data, "t10k-images-idx3-ubyte.gz"))
_, labels = read_idx(os.path.join(data, "t10k-labels-idx1-ubyte.gz"))
image = lambda i: [pixels[i * 784 + y * 28:i * 784 + y * 28 + 28] for y in range(28)]
os.makedirs(f"{tmp}/pics")
for i in range(300):
    png(f"{tmp}/pics/{i:04d}_{labels[i]}.png", image(i))
subset(data, f"{tmp}/sub", 64, 300)
png(f"{tmp}/big.png", [[(x * y) % 256 for x in range(32)] for y in range(32)])
names = {9: "boot", 1: "trouser", 7: "sneaker"}
for split, (first, last) in (("train", (0, 3000)), ("test", (3000, 4000))):
    for i in range(first, last):
        if labels[i] in names:
            os.makedirs(f"{tmp}/folder/{split}/{names[labels[i]]}", exist_ok=True)
            png(f"{tmp}/folder/{split}/{names[labels[i]]}/{i:05d}.png", image(i))
EOF

# --- Fashion-MNIST: train, then eval and predict with --load alone
run -- train --model simplecnn --epochs 1 --seed 0 --device cpu --quiet --save "$TMP/fm.safetensors"
expect_status 0 "training simplecnn"
run -- eval --load "$TMP/fm.safetensors" --data-dir "$TMP/sub" --device cpu --json
expect_status 0 "eval --load on the 300 images"
eval_acc=$(sed -n 's/.*"test_acc": \([0-9.]*\).*/\1/p' "$TMP/out")
# each class's accuracy and the confusion matrix agree with the total and the labels
"$PY" - "$TMP/out" "$DATA" "$(dirname "$0")/../common" <<'EOF' || fail "eval's classes and confusion matrix: $(head -c 600 "$TMP/out")"
import json, os, sys
sys.path.insert(0, sys.argv[3])
from fashion_subset import read_idx
e = json.load(open(sys.argv[1]))
m = e["confusion"]
_, labels = read_idx(os.path.join(sys.argv[2], "t10k-labels-idx1-ubyte.gz"))
want = [sum(1 for l in labels[:300] if l == k) for k in range(10)]
assert [sum(row) for row in m] == want, ([sum(row) for row in m], want)
assert abs(sum(m[k][k] for k in range(10)) / 300 - e["test_acc"]) < 1e-6
assert e["classes"][9]["class"] == "Ankle boot" and e["classes"][9]["images"] == want[9]
assert all(abs(c["accuracy"] - m[k][k] / max(want[k], 1)) < 1e-6 for k, c in enumerate(e["classes"]))
EOF
run -- predict --load "$TMP/fm.safetensors" --device cpu --json "$TMP/pics"
expect_status 0 "predict on the 300 PNG files"
predict_acc=$("$PY" - "$TMP/out" <<'EOF'
import json, os, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
right = sum(int(os.path.basename(r["input"]).split("_")[1].split(".")[0]) == r["top"][0]["index"] for r in rows)
print(f"{right / len(rows):.6f}" if len(rows) == 300 else f"{len(rows)} rows")
EOF
)
[ "$predict_acc" = "$eval_acc" ] || fail "predict is right on $predict_acc of the PNG files, eval scores the same images $eval_acc"
echo "simplecnn on 300 test images: eval $eval_acc, predict $predict_acc"
# the same 300 images from their IDX file
run -- predict --load "$TMP/fm.safetensors" --device cpu --json --top 1 "$TMP/sub/t10k-images-idx3-ubyte.gz"
expect_status 0 "predict on an IDX file"
idx_acc=$("$PY" - "$TMP/out" "$TMP/sub" "$(dirname "$0")/../common" <<'EOF'
import json, os, sys
sys.path.insert(0, sys.argv[3])
from fashion_subset import read_idx
rows = [json.loads(line) for line in open(sys.argv[1])]
_, labels = read_idx(os.path.join(sys.argv[2], "t10k-labels-idx1-ubyte.gz"))
ok = all(r["input"].endswith(f"#{i}") for i, r in enumerate(rows)) and len(rows) == 300
print(f"{sum(r['top'][0]['index'] == labels[i] for i, r in enumerate(rows)) / 300:.6f}" if ok else "misnamed")
EOF
)
[ "$idx_acc" = "$eval_acc" ] || fail "predict on the IDX file is right on $idx_acc, eval scores $eval_acc"
run -- predict --load "$TMP/fm.safetensors" --device cpu --top 2 "$TMP/pics/0000_9.png"
expect_text "0000_9.png: Ankle boot 0." "predict's line names the class"
[ "$(tr -cd ',' <"$TMP/out")" = "," ] || fail "--top 2 shows two classes: $(cat "$TMP/out")"
# class names and file names are someone else's text: a terminal escape, a
# fake line in them reach the terminal escaped
"$PY" - "$TMP/fm.safetensors" "$TMP/escapes.safetensors" <<'EOF'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
names = json.loads(head["__metadata__"]["ember.class_names"])
names[9] = "Ankle\x1b[2J boot\nfake.png: Trouser 1.000\x9b"
head["__metadata__"]["ember.class_names"] = json.dumps(names)
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
EOF
mkdir -p "$TMP/odd" && cp "$TMP/pics/0000_9.png" "$TMP/odd/$(printf 'a\033[31mb.png')"
run -- predict --load "$TMP/escapes.safetensors" --device cpu --top 1 "$TMP/pics/0000_9.png" "$TMP/odd"
expect_status 0 "class names with escapes"
expect_text 'Ankle\x1b[2J boot\x0afake.png: Trouser 1.000\u009b' "a class name's escapes, escaped"
expect_text 'odd/a\x1b[31mb.png:' "a file name's escape, escaped"
[ "$(wc -l <"$TMP/out")" -eq 2 ] || fail "a class name made a line of its own: $(cat "$TMP/out")"
if grep -q "$(printf '\033')" "$TMP/out"; then fail "an escape reached the terminal: $(cat -v "$TMP/out")"; fi
# eval's and predict's settings from a checkpoint are checked as resume's are
for pair in "ember.classes=99999999999999999999" "ember.seed=-1" "ember.resize=maybe"; do
    "$PY" - "$TMP/fm.safetensors" "$TMP/bad-meta.safetensors" "$pair" <<'EOF'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
key, value = sys.argv[3].split("=", 1)
head["__metadata__"][key] = value
text = json.dumps(head).encode()
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + raw[8 + n:])
EOF
    run -- eval --load "$TMP/bad-meta.safetensors" --device cpu --model simplecnn
    expect_status 3 "eval of a checkpoint with $pair"
    key=${pair%%=*}
    expect_text "the metadata's ${key#ember.} " "eval of a checkpoint with $pair"
done
run -- predict --load "$TMP/fm.safetensors" --device cpu "$TMP/big.png"
expect_status 3 "an image of another size"
expect_text "the image is 32x32 (width x height) but the images are 28x28" "an image of another size"
run -- predict --load "$TMP/fm.safetensors" --device cpu --resize "$TMP/big.png"
expect_status 0 "--resize"
run -- predict --load "$TMP/fm.safetensors" --device cpu "$TMP/none.png"
expect_status 3 "a missing image"

# --- what predict did to each image, said; an image unlike the training images, warned about
# (examples/images/boot-photo.png: the first test image as a colour photo of a boot on white)
EXAMPLES=$(cd "$(dirname "$0")/../../examples/images" && pwd)
run -- predict --load "$TMP/fm.safetensors" --device cpu --resize "$EXAMPLES/boot-photo.png" "$EXAMPLES/boot.png"
expect_status 0 "a colour photo, with --resize"
expect_text "boot-photo.png: converted from colour to gray, resized from 112x112 to 28x28 (the model takes 1x28x28 gray images like fashion-mnist's: light things on a dark background)" "a colour photo, with --resize"
expect_text "warning: $EXAMPLES/boot-photo.png: its background is light" "a photo on white"
grep "boot.png:" "$TMP/err" | grep -v "boot-photo" && fail "predict said something of boot.png, a training-like image: $(cat "$TMP/err")"
# the warning's advice taken: --invert makes the photo light on dark, and the boot is a boot
expect_text "--invert inverts it" "the light background's advice"
run -- predict --load "$TMP/fm.safetensors" --device cpu --resize --invert "$EXAMPLES/boot-photo.png"
expect_status 0 "--invert"
expect_text "boot-photo.png: converted from colour to gray, resized from 112x112 to 28x28, inverted" "--invert, said"
expect_text "boot-photo.png: Ankle boot" "the photo of a boot, inverted"
grep -q "warning" "$TMP/err" && fail "the inverted photo is still warned about: $(cat "$TMP/err")"
grep -q "aspect" "$TMP/err" && fail "a square photo resized to a square is said to be stretched: $(cat "$TMP/err")"
# a resize that stretches the picture says so; a blank image has nothing to classify
"$PY" -c "
import struct, sys, zlib
def png(path, w, h, value):
    raw = b''.join(b'\x00' + bytes((value(x, y) for x in range(w))) for y in range(h))
    chunk = lambda t, d: struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    open(path, 'wb').write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 0, 0, 0, 0))
                           + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
png(sys.argv[1], 56, 28, lambda x, y: 255 if 20 < x < 36 and 4 < y < 24 else 0)
png(sys.argv[2], 28, 28, lambda x, y: 0)
" "$TMP/wide.png" "$TMP/blank.png" || fail "cannot write wide.png and blank.png"
run -- predict --load "$TMP/fm.safetensors" --device cpu --resize "$TMP/wide.png" "$TMP/blank.png"
expect_status 0 "a wide image and a blank one"
expect_text "wide.png: resized from 56x28 to 28x28, which stretches it from an aspect ratio of 2.00 to 1.00" "a stretching resize"
expect_text "warning: $TMP/blank.png is blank (every pixel 0.00)" "a blank image"
# --- a folder with a file that cannot be read: that one said, the others classified, exit 3
mkdir "$TMP/mixed"
cp "$EXAMPLES/boot.png" "$EXAMPLES/sneaker.png" "$TMP/mixed/"
printf 'not a png at all' >"$TMP/mixed/broken.png"
run -- predict --load "$TMP/fm.safetensors" --device cpu "$TMP/mixed"
expect_status 3 "a folder with a broken image"
expect_text "$TMP/mixed/boot.png: Ankle boot" "a folder with a broken image: the good ones"
expect_text "$TMP/mixed/sneaker.png: " "a folder with a broken image: the good ones"
expect_text "$TMP/mixed/broken.png" "a folder with a broken image: the broken one named"
expect_text "1 of 3 images could not be classified" "a folder with a broken image"
run -- eval --load "$TMP/fm.safetensors" --model kerascnn
expect_status 3 "another model named"
expect_text "--model kerascnn, but" "another model named"

# --- a folder of three classes: its class names, its split, its folder, all from the checkpoint
run -- train --data folder --data-dir "$TMP/folder" --model kerascnn --epochs 1 --seed 4 --device cpu \
    --metrics "$TMP/folder.jsonl" --save "$TMP/folder.safetensors" --quiet
expect_status 0 "training on a folder"
run -- eval --load "$TMP/folder.safetensors" --device cpu --json
expect_status 0 "eval of a folder checkpoint with --load alone"
trained=$(sed -n 's/.*"test_acc": \([0-9.]*\).*/\1/p' "$TMP/folder.jsonl")
evaluated=$(sed -n 's/.*"test_acc": \([0-9.]*\).*/\1/p' "$TMP/out")
[ "$trained" = "$evaluated" ] || fail "the folder model scored $trained in training, $evaluated in eval --load"
run -- predict --load "$TMP/folder.safetensors" --device cpu "$TMP/pics/0000_9.png"
expect_text "0000_9.png: boot " "the folder's class names"

# --- a checkpoint that does not say what it holds
if "$PY" -c "import safetensors" 2>/dev/null; then
    "$PY" - "$TMP/fm.safetensors" "$TMP/bare.safetensors" <<'EOF'
import sys
from safetensors.numpy import load_file, save_file
save_file(load_file(sys.argv[1]), sys.argv[2])
EOF
    run -- eval --load "$TMP/bare.safetensors" --device cpu
    expect_status 3 "a checkpoint without metadata"
    expect_text "does not say which model it holds" "a checkpoint without metadata"
    run -- eval --load "$TMP/bare.safetensors" --model simplecnn --device cpu
    expect_status 0 "... with --model"
    run -- predict --load "$TMP/bare.safetensors" --device cpu "$TMP/pics/0000_9.png"
    expect_status 3 "predict on a checkpoint without metadata"
else
    echo "note: $PY has no safetensors: a checkpoint without ember's metadata is not checked"
fi
finish test_predict
