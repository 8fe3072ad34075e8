#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_plot.sh — `ember plot`: the metrics of two real runs in one
# file drawn as PNG and SVG, and the contract around it: exit statuses,
# warnings that name the line. Then traces of simplecnn training on the CPU
# and, where `ember devices` lists one, on OpenCL, drawn as timelines, and
# traces cut short or broken, which exit 3 naming the line.
# Usage: test_plot.sh path/to/ember
#
# python3 (the system's: struct, zlib and xml.etree alone) decodes the PNG
# to check its size and colours, and parses the SVG; without it those
# checks are left out, with a note. The traces train on Fashion-MNIST, or
# on random images where it is not installed. EMBER_TEST_SANITIZED=ON
# leaves OpenCL out, as test_profile does.
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

# png_check PNG WIDTH HEIGHT MIN_COLOURS [R,G,B ...]: the picture is that
# size, has more distinct colours than MIN_COLOURS (it is not blank) and
# holds each R,G,B given exactly (where a curve or bar is drawn fully)
png_check() {
    "$PYTHON" - "$@" <<'EOF'
import struct, sys, zlib
path, want_w, want_h, min_colours = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
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
assert len(colours) > min_colours, f"only {len(colours)} colours: blank?"
for rgb in sys.argv[5:]:
    assert bytes(int(v) for v in rgb.split(",")) in colours, f"the colour {rgb} is not in the picture"
EOF
}

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
    # the palette's first two colours, one per run
    png_check "$TMP/curves.png" 640 360 20 31,119,180 214,39,40 || fail "the PNG is not the picture asked for"
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

# a run with the id ember made up ("20261125T130312-31396") is named in the
# legend by its model, rate and start, not by that id
run -- train --model linear --data random --shape 1x8x8 --steps 10 --quiet --lr 0.003 --metrics "$TMP/plain.jsonl"
expect_status 0 "a run without --run-id"
run -- plot "$TMP/plain.jsonl" -o "$TMP/plain.svg"
expect_status 0 "plot of a run without --run-id"
grep -q '>linear, lr 0.003, [A-Z][a-z][a-z] [0-9]* [0-9][0-9]:[0-9][0-9]<' "$TMP/plain.svg" ||
    fail "the legend does not name the run by model, rate and start: $(grep -o '<text[^<]*</text>' "$TMP/plain.svg" | head -12)"

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
expect_status 3 "a picture that cannot be written (found before the metrics are read)"
expect_text "the folder $TMP/no-such-folder does not exist" "a picture that cannot be written"
# nulls (values that were not finite) and a file from before "steps": gaps, still a picture
printf '%s\n' '{"run": "old", "epoch": 1, "train_loss": 2.0, "train_acc": 0.1, "test_loss": null, "test_acc": null}' \
    '{"run": "old", "epoch": 2, "train_loss": NaN, "train_acc": 0.2, "test_loss": 1.5, "test_acc": 0.3}' >"$TMP/old.jsonl"
run -- plot "$TMP/old.jsonl" -o "$TMP/old.svg"
expect_status 0 "nulls and epochs without steps"

# ---- traces, drawn as timelines ----

# trace DEVICE FILE: a short simplecnn run's trace, on random images where
# Fashion-MNIST is not installed (exit 3 names it)
trace() {
    run -- train --model simplecnn --steps 6 --device "$1" --no-eval --quiet --trace "$2"
    if [ "$status" -eq 3 ]; then
        run -- train --model simplecnn --data random --shape 1x28x28 --steps 6 --device "$1" --no-eval --quiet \
            --trace "$2"
    fi
    expect_status 0 "a trace on $1"
}
devices=cpu
if [ "${EMBER_TEST_SANITIZED:-OFF}" != ON ] && "$EMBER" devices 2>/dev/null | grep -q '^  opencl:0 '; then
    devices="cpu opencl"
else
    echo "note: no OpenCL device (or a sanitized build): the trace is drawn from the CPU alone"
fi
for device in $devices; do
    T=$TMP/trace-$device.json
    trace "$device" "$T"
    run -- plot "$T" -o "$TMP/trace-$device.png" --width 800 --height 300
    expect_status 0 "a $device trace to PNG"
    expect_text "the last whole step" "a $device trace's default window"
    run -- plot "$T" -o "$TMP/trace-$device.svg"
    expect_status 0 "a $device trace to SVG"
    # the whole trace (--from alone: to its end)
    run -- plot "$T" -o "$TMP/trace-$device-all.svg" --from 0
    expect_status 0 "a $device trace from its start"
    [ -n "$PYTHON" ] || continue
    # the palette's first colour: "batch", the op each window's step starts with
    png_check "$TMP/trace-$device.png" 800 300 40 31,119,180 || fail "the $device trace's PNG is not the picture asked for"
    # one step, wide enough for names in its bars, and the whole trace
    for svg in "$TMP/trace-$device.svg" "$TMP/trace-$device-all.svg"; do
        "$PYTHON" - "$svg" "$device" <<'EOF' || fail "the $device trace's SVG $svg does not parse or lacks a part"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
device, one_step = sys.argv[2], not sys.argv[1].endswith("-all.svg")
ns = "{http://www.w3.org/2000/svg}"
texts = [t.text for t in root.iter(ns + "text")]
# lane titles: the host's, and the device's process name with what its track holds
# (on the CPU, which does the host's work too, the device's lane has the calls)
assert ("host: ops and the calls inside them" if device == "opencl" else "host: ops") in texts, texts
what = "kernels" if device == "opencl" else "primitives and the host's work"
assert any(t.startswith(device) and t.endswith(": " + what) for t in texts), f"no {device} lane title in {texts}"
# ops in the legend, and in one step names written inside the bars: a
# name the legend has too, or two bars of one name
for op in ("batch", "conv2d forward", "conv2d backward", "adam step"):
    assert op in texts, f"no op {op!r} in {texts}"
assert "ms from the start of the trace" in texts, texts
assert not one_step or any(texts.count(t) > 1 for t in texts), "no name written inside a bar"
rects = list(root.iter(ns + "rect"))
assert len(rects) > 40, f"only {len(rects)} rectangles"
# every row of every lane holds a bar: a lane is a band (#f6f6f6) of rows of bars 2 px shorter
bands = [r for r in rects if r.get("fill") == "#f6f6f6"]
for band in bands:
    top, height = float(band.get("y")), float(band.get("height"))
    bars = [r for r in rects if r is not band and r.get("fill") not in ("#ffffff", "#f6f6f6")
            and top <= float(r.get("y")) < top + height]
    row_h = float(bars[0].get("height")) + 2
    rows = {int((float(r.get("y")) - top) // row_h) for r in bars}
    assert rows == set(range(round(height / row_h))), f"a lane of {round(height / row_h)} rows has bars in {rows}"
EOF
    done
done

T=$TMP/trace-cpu.json
run -- plot "$T" -o "$TMP/window.png" --from 1 --to 100000
expect_status 0 "a window that runs past the trace's end"
run -- plot "$T" -o "$TMP/window.png" --from 100000 --to 200000
expect_status 2 "a window after the trace's end"
expect_text "outside the trace" "a window after the trace's end"
run -- plot "$T" -o "$TMP/window.png" --from 3 --to 2
expect_status 2 "a window that ends before it starts"
run -- plot "$T" "$M" -o "$TMP/mixed.png"
expect_status 2 "a trace and metrics together"
run -- plot "$M" -o "$TMP/window.png" --from 1
expect_status 2 "a window on metrics"
# cut short after a whole line, in the middle of a line, and garbage where events belong
lines=$(wc -l <"$T")
head -n $((lines / 2)) "$T" >"$TMP/cut.json"
run -- plot "$TMP/cut.json" -o "$TMP/cut.png"
expect_status 3 "a trace cut short"
expect_text "cut.json:$((lines / 2)):" "a trace cut short names its last line"
head -c $(($(wc -c <"$T") / 2)) "$T" >"$TMP/cut.json"
run -- plot "$TMP/cut.json" -o "$TMP/cut.png"
expect_status 3 "a trace cut in the middle of a line"
expect_text "cut.json:" "a trace cut in the middle of a line names it"
{ head -n 3 "$T"; printf 'garbage\x01\xff{{\n'; tail -n 3 "$T"; } >"$TMP/garbage.json"
run -- plot "$TMP/garbage.json" -o "$TMP/garbage.svg"
expect_status 3 "garbage in a trace"
expect_text "garbage.json:4:" "garbage in a trace names its line"
[ ! -e "$TMP/garbage.svg" ] || fail "a broken trace left a picture"

# files as someone else left them: a FIFO or a device is refused at once (a
# FIFO used to wait forever, /dev/zero to grow without end), a file of only
# per-step lines plots (its runs have no epochs: qsort(NULL, 0) before, UB),
# and reading is linear: 300,000 epochs and 150,000 runs, each within 30 s
# (quadratic before: 500,000 epochs took 346 s and the runs over 600 s on
# the 2-core VM while it was shared, 12 s and 2 s now; left out under the
# sanitizers, whose slower build is not what is measured)
mkfifo "$TMP/fifo.jsonl"
expect 3 "fifo.jsonl is a FIFO, not a regular file" -- timeout 20 "$EMBER" plot "$TMP/fifo.jsonl" -o "$TMP/f.png"
expect 3 "/dev/zero is a character device" -- timeout 20 "$EMBER" plot /dev/zero -o "$TMP/f.png"
printf '{"run": "s", "step": %d, "train_loss": 1.5, "train_acc": 0.5}\n' 1 2 3 >"$TMP/steps.jsonl"
expect 0 "wrote $TMP/steps.svg: 1 run" -- "$EMBER" plot "$TMP/steps.jsonl" -o "$TMP/steps.svg"
if [ "${EMBER_TEST_SANITIZED:-OFF}" != ON ]; then
    awk 'BEGIN { for (e = 1; e <= 300000; e++)
        printf "{\"run\": \"a\", \"epoch\": %d, \"train_loss\": %g, \"train_acc\": 0.5, \"test_loss\": %g, " \
               "\"test_acc\": 0.5, \"steps\": 10, \"total_steps\": %d}\n", e, 1 / e, 1 / e, 10 * e }' >"$TMP/long.jsonl"
    expect 0 "wrote $TMP/long.png: 1 run" -- timeout 30 "$EMBER" plot "$TMP/long.jsonl" -o "$TMP/long.png"
    awk 'BEGIN { for (r = 0; r < 150000; r++)
        printf "{\"run\": \"r%d\", \"epoch\": 1, \"train_loss\": 1.0, \"total_steps\": 10}\n", r }' >"$TMP/runs.jsonl"
    expect 0 "wrote $TMP/runs.png: 150000 runs" -- timeout 30 "$EMBER" plot "$TMP/runs.jsonl" -o "$TMP/runs.png"
fi

finish test_plot
