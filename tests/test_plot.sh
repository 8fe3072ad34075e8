#!/bin/sh
# tests/test_plot.sh — `ember plot`: the metrics of two real runs in one
# file drawn as PNG and SVG, and the contract around it: exit statuses,
# warnings that name the line. Usage: test_plot.sh path/to/ember
#
# python3 (the system's: struct, zlib and xml.etree alone) decodes the PNG
# to check its size and that both runs' colours are in it, and parses the
# SVG; without it those checks are left out, with a note.
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/cli-util.sh"

# two short runs appended to one file, the second with a higher learning
# rate and an id that needs escaping in SVG
M=$TMP/metrics.jsonl
train() { run -- train --model linear --data random --shape 1x8x8 --steps 30 --log-every 5 --quiet --metrics "$M" "$@"; }
train --run-id run-a
expect_status 0 "the first run"
train --run-id 'run-b<&>"' --lr 0.01
expect_status 0 "the second run"
[ "$(grep -c '"step"' "$M")" -ge 10 ] || fail "the runs wrote too few per-step lines: $(cat "$M")"
grep -q '"steps"' "$M" || fail "the runs wrote no per-epoch line: $(cat "$M")"
# a line cut short (a run killed mid-write) is skipped with a warning
printf '{"run": "run-a", "epoch": 1, "train_lo\n' >>"$M"
cut_line=$(wc -l <"$M")

run -- plot "$M" -o "$TMP/curves.png" --width 640 --height 360
expect_status 0 "plot to PNG"
expect_text "metrics.jsonl:$cut_line:" "the warning names the malformed line"
run -- plot "$M" -o "$TMP/curves.svg"
expect_status 0 "plot to SVG"

if [ -n "$PYTHON" ]; then
    "$PYTHON" - "$TMP/curves.png" 640 360 <<'EOF' || fail "the PNG is not the picture asked for"
import struct, sys, zlib
path, want_w, want_h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
at, idat = 8, b""
while at < len(data):
    length, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + length]
    if kind == b"IHDR":
        w, h, depth, colour = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    at += 12 + length
assert (w, h) == (want_w, want_h), f"{w}x{h}, not {want_w}x{want_h}"
assert (depth, colour) == (8, 2), "not 8-bit RGB"
# undo each row's filter (PNG spec, section 9), 3 bytes a pixel
raw, stride, rows, prev = zlib.decompress(idat), w * 3, [], bytearray(w * 3)
for y in range(h):
    kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a, b = row[i - 3] if i >= 3 else 0, prev[i]
        c = prev[i - 3] if i >= 3 else 0
        p = a + b - c
        paeth = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c
        row[i] = (row[i] + [0, a, b, (a + b) // 2, paeth][kind]) & 255
    rows.append(row)
    prev = row
colours = {bytes(r[i:i + 3]) for r in rows for i in range(0, stride, 3)}
assert len(colours) > 20, f"only {len(colours)} colours: blank?"
# the palette's first two colours, one per run, where curves are drawn fully
for run, rgb in (("first", (31, 119, 180)), ("second", (214, 39, 40))):
    assert bytes(rgb) in colours, f"the {run} run's colour {rgb} is not in the picture"
EOF
    "$PYTHON" - "$TMP/curves.svg" <<'EOF' || fail "the SVG does not parse or lacks a run"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg" and root.get("width") == "900", root.attrib
texts = [t.text for t in root.iter(ns + "text")]
for label in ("run-a (linear)", 'run-b<&>" (linear)', "loss", "accuracy", "step"):
    assert label in texts, f"no text {label!r} in {texts}"
assert len(list(root.iter(ns + "polyline"))) >= 8, "too few curves"
EOF
fi

# what goes wrong, and how it says so
run -- plot --help
expect_status 0 "plot --help"
expect_text "usage: ember plot" "plot --help"
run -- plot "$M" -o "$TMP/curves.jpg"
expect_status 2 "a picture that is neither .png nor .svg"
expect_text ".png or .svg" "a picture that is neither .png nor .svg"
run -- plot "$M"
expect_status 2 "no -o"
run -- plot -o "$TMP/curves.png"
expect_status 2 "no metrics file"
run -- plot "$M" -o "$TMP/curves.png" --width 10
expect_status 2 "a width too small"
run -- plot "$TMP/missing.jsonl" -o "$TMP/curves.png"
expect_status 3 "a missing metrics file"
expect_text "missing.jsonl" "a missing metrics file is named"
printf '{"loss": 1}\nnot json\n' >"$TMP/other.jsonl"
run -- plot "$TMP/other.jsonl" -o "$TMP/curves.png"
expect_status 3 "a file without metrics"
expect_text "no metrics to plot" "a file without metrics"
run -- plot "$M" -o "$TMP/no-such-folder/curves.png"
expect_status 1 "a picture that cannot be written"
# nulls (values that were not finite) and a file from before "steps": gaps, still a picture
printf '%s\n' '{"run": "old", "epoch": 1, "train_loss": 2.0, "train_acc": 0.1, "test_loss": null, "test_acc": null}' \
    '{"run": "old", "epoch": 2, "train_loss": NaN, "train_acc": 0.2, "test_loss": 1.5, "test_acc": 0.3}' >"$TMP/old.jsonl"
run -- plot "$TMP/old.jsonl" -o "$TMP/old.svg"
expect_status 0 "nulls and epochs without steps"

finish test_plot
