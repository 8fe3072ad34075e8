#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_profile.sh — `--profile` and `--trace` as a student uses them
# (docs/how-it-works.md):
#
#   1. on every device given, the op rows of `ember train --profile` add up
#      to the training time the run reports itself (its metrics' "seconds",
#      measured by the program's own clock) within 10%;
#   2. the trace parses as JSON in the Trace Event Format: the documented
#      fields on every event, each track's events in order and nested (a
#      call inside its op's span), a host and a device track; on a GPU
#      backend the device track holds kernels timed by the device, each
#      with its launch (grid, block, threads) and the primitive call it is
#      part of, and on CUDA the table states the GPU's peak; on the CPU the
#      host's track holds the op spans alone; a convolution's span and the
#      calls and kernels inside it carry the shapes of its inputs;
#   3. `ember eval --profile` prints its table after the answer, and with
#      --json keeps stdout one JSON object;
#   4. on the CUDA test double, when it holds every kernel's completion back
#      20 ms: each primitive's row holds those 20 ms for every kernel it
#      launched, both with the backend timing kernels by events and with
#      events failing (then only the profiler's own wait for the device puts
#      them there), and the kernel rows hold them when events work;
#   5. the profile shows what the run does unprofiled: on a GPU a batch's
#      convolution is one im2col and one product a layer (ResNet-8's nine at
#      batch 32: a launch per group of images is what a GPU cannot afford),
#      on the CPU groups of about 2 MiB of columns, more calls.
#
#   test_profile.sh path/to/ember PYTHON DEVICE...
#
# Needs Fashion-MNIST (Debian's dataset-fashion-mnist).
set -u
EMBER=$1 PY=$2
shift 2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

for device in "$@"; do
    name=$(echo "$device" | tr ':' '_')
    if ! "$EMBER" train --model simplecnn --device "$device" --steps 40 --no-eval --quiet --profile \
        --trace "$TMP/$name.json" --metrics "$TMP/$name.jsonl" >"$TMP/$name.txt" 2>"$TMP/$name.err"; then
        fail "$device: ember train --profile: $(cat "$TMP/$name.err")"
        continue
    fi
    "$PY" - "$TMP/$name.txt" "$TMP/$name.jsonl" "$TMP/$name.json" "$device" <<'EOF' || fail "$device: see above"
import json, sys
table, metrics, trace, device = sys.argv[1:5]
gpu = not device.startswith("cpu")
problems = []

# 1. the op rows (not indented) against the run's own training seconds
lines = open(table).read().splitlines()
head = next(i for i, l in enumerate(lines) if l.startswith("op / primitive / kernel"))
ops = [l for l in lines[head + 1:] if l and not l.startswith(" ")]
total_ms = sum(float(l[34:].split()[1]) for l in ops)
seconds = [json.loads(l) for l in open(metrics)][-1]["seconds"]
share = total_ms / 1000 / seconds
print(f"{device}: {len(ops)} op rows add up to {total_ms:.1f} ms of {seconds * 1000:.1f} ms trained ({share:.1%})")
if not 0.9 <= share <= 1.1:
    problems.append(f"the op rows add up to {share:.1%} of the training time, not within 10%")
for op in ("conv2d forward", "conv2d backward", "adam step", "batch"):
    if not any(l.startswith(op + " ") for l in ops):
        problems.append(f"no row for {op}")
kernel_rows = [l for l in lines[head + 1:] if l.startswith("    ")]
if gpu and not kernel_rows:
    problems.append("no kernel rows on a GPU backend")
if not gpu and kernel_rows:
    problems.append("kernel rows on the cpu")
# the CUDA backend knows its GPU's peak (the test double's: 15 SMs of 128 lanes at 745 MHz)
if device.startswith("cuda") and not any(l.startswith("the device's peak") and "2861 GFLOP/s" in l
                                         for l in lines[:head]):
    problems.append("no peak line for the CUDA GPU")

# 2. the trace
doc = json.load(open(trace))
events = doc["traceEvents"]
spans = [e for e in events if e["ph"] == "X"]
names = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "process_name"}
if len({pid for pid, _ in names}) != 2:
    problems.append(f"processes {names}, not a host and a device")
for e in spans:
    missing = {"name", "cat", "ph", "ts", "dur", "pid", "tid"} - e.keys()
    if missing or e["dur"] < 0:
        problems.append(f"event {e} lacks {missing} or lasts less than nothing")
        break
cats = {e["cat"] for e in spans}
want = {"op", "primitive", "host"} | ({"kernel"} if gpu else set())
if not want <= cats:
    problems.append(f"categories {cats}, not {want}")
slack = 0.01  # microseconds: times are written with three decimals
for track in sorted({(e["pid"], e["tid"]) for e in spans}):
    stack, last = [], -1.0
    for e in (e for e in spans if (e["pid"], e["tid"]) == track):
        if e["ts"] + slack < last:
            problems.append(f"track {track}: {e['name']} at {e['ts']} after one at {last}")
            break
        last = e["ts"]
        while stack and e["ts"] >= stack[-1] - slack:
            stack.pop()
        if stack and e["ts"] + e["dur"] > stack[-1] + slack:
            problems.append(f"track {track}: {e['name']} overlaps the event it starts in")
            break
        stack.append(e["ts"] + e["dur"])
# a kernel's launch: its grid of work-groups (blocks), their threads, and the primitive call it is part of
kernels = [e for e in spans if e["cat"] == "kernel"]
for e in kernels:
    a = e["args"]
    grid = a.get("grid", [])
    if not (len(grid) == 3 and min(grid) >= 1 and a.get("block", 0) >= 1
            and a.get("threads") == grid[0] * grid[1] * grid[2] * a["block"] and a.get("primitive")
            and "primitive_bytes" in a):
        problems.append(f"a kernel event without its launch: {e}")
        break
# the shapes of the inputs of the op each call served: a convolution's images (4-D) and
# weights, on its span and on every call and kernel inside it
def shapes_ok(e):
    s = e.get("args", {}).get("inputs")
    return (isinstance(s, list) and len(s) >= 2 and all(isinstance(d, list) and d for d in s)
            and len(s[0]) == 4 and len(s[1]) == 4 and all(isinstance(n, int) and n >= 1 for d in s for n in d))
conv = [e for e in spans if (e["name"] if e["cat"] == "op" else e["args"]["op"]).startswith("conv2d forward")]
if not conv:
    problems.append("no event of conv2d forward")
for e in conv:
    if not shapes_ok(e):
        problems.append(f"an event of conv2d forward without its inputs' shapes: {e}")
        break
# on the CPU, which does the host's work too, the host's track holds the op spans alone
if not gpu and any(e["pid"] == 1 and e["cat"] != "op" for e in spans):
    problems.append("on the CPU the host's track holds calls beside its op spans")
host_calls = [e for e in spans if e["pid"] == 1 and e["cat"] != "op"]
op_spans = [e for e in spans if e["cat"] == "op"]
if op_spans and host_calls and not any(o["ts"] <= host_calls[0]["ts"] <= o["ts"] + o["dur"] for o in op_spans):
    problems.append("the host's first call is inside no op's span")
print(f"{device}: trace of {len(spans)} events, categories {sorted(cats)}")
for p in problems:
    print(f"FAILED: {device}: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
done

# 4. a held-back kernel's time is in its primitive's row
for device in "$@"; do
    case $device in cuda*) ;; *) continue ;; esac
    for events in work fail; do
        EMBER_FAKE_CUDA_KERNEL_MS=20 EMBER_FAKE_CUDA_EVENTS=$events "$EMBER" train --model simplecnn --device "$device" \
            --steps 2 --no-eval --quiet --profile >"$TMP/held.txt" 2>"$TMP/held.err" ||
            { fail "$device, kernels held back, events $events: $(cat "$TMP/held.err")"; continue; }
        "$PY" - "$TMP/held.txt" "$events" <<'EOF' || fail "$device, kernels held back, events $events: see above"
import sys
table, events = sys.argv[1:3]
lines = open(table).read().splitlines()
head = next(i for i, l in enumerate(lines) if l.startswith("op / primitive / kernel"))
rows = [(l[:34].rstrip(), float(l[34:].split()[2])) for l in lines[head + 1:] if l.startswith("  ") and l[34:].split()]
# primitives that launch one kernel a call, and those kernels
primitives = {"  sgemm", "  conv_direct forward", "  max_pool2d_forward"}
kernels = {"    conv_direct_forward", "    max_pool2d_forward"}
problems = []
for name, mean_us in rows:
    if name in primitives and mean_us < 20000:
        problems.append(f"{name.strip()}: {mean_us:.0f} us a call, less than the 20 ms its kernel is held back")
    if name in kernels and mean_us < 20000:
        problems.append(f"kernel {name.strip()}: {mean_us:.0f} us, less than the 20 ms it is held back")
seen = {name for name, _ in rows}
if not primitives <= seen:
    problems.append(f"no rows for {primitives - seen}")
if events == "work" and not kernels <= seen:
    problems.append(f"no kernel rows for {kernels - seen}")
if events == "fail" and any(name.startswith("    ") for name in seen):
    problems.append("kernel rows although the events failed")
print(f"kernels held back 20 ms, events {events}: " + ", ".join(f"{n.strip()} {u / 1000:.1f} ms" for n, u in rows if n in primitives | kernels))
for p in problems:
    print(f"FAILED: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
    done
done

# 5. the convolutions' groups of images: ResNet-8's nine convolutions at batch 32, one step
for device in "$@"; do
    # im2col forced: CUDA's default runs most of ResNet-8's convolutions without columns (conv_direct)
    EMBER_CONV_ALGO=im2col "$EMBER" train --model resnet8 --data random --batch 32 --steps 1 --device "$device" \
        --no-eval --quiet --profile \
        >"$TMP/groups.txt" 2>"$TMP/groups.err" || { fail "$device, ResNet-8: $(cat "$TMP/groups.err")"; continue; }
    # the im2col row under "conv2d forward": its calls
    calls=$(awk '/^conv2d forward/ { op = 1; next } /^[^ ]/ { op = 0 } op && $1 == "im2col" { print $2; exit }' \
        "$TMP/groups.txt")
    case $device in
    cpu*) [ "${calls:-0}" -gt 9 ] || fail "$device: ResNet-8's forward made its columns in ${calls:-no} calls, not in groups" ;;
    *) [ "${calls:-0}" -eq 9 ] || fail "$device: ResNet-8's forward made its columns in ${calls:-no} calls, not 9 (one a layer)" ;;
    esac
    echo "$device: ResNet-8 at batch 32: ${calls:-no} im2col calls in the forward pass"
    # the four batch norms a ReLU follows run fused with it, two primitives each (the model's forward pass)
    fused=$(awk '$1 == "batch_norm_relu" && $2 == "forward" { print $3; exit }' "$TMP/groups.txt")
    [ "${fused:-0}" -eq 8 ] || fail "$device: ResNet-8's batch norm and ReLU: ${fused:-no} fused calls, not 8"
done

# 3. eval --profile, in text and beside --json
"$EMBER" train --model simplecnn --device cpu --steps 20 --no-eval --quiet --save "$TMP/m.safetensors" 2>/dev/null ||
    fail "cannot train the model to evaluate"
if "$EMBER" eval --load "$TMP/m.safetensors" --device cpu --profile >"$TMP/eval.txt" 2>"$TMP/eval.err"; then
    grep -q '^test accuracy' "$TMP/eval.txt" && grep -q '^profile of the evaluation' "$TMP/eval.txt" &&
        grep -q '^conv2d forward ' "$TMP/eval.txt" && ! grep -q 'backward' "$TMP/eval.txt" ||
        fail "eval --profile printed: $(cat "$TMP/eval.txt")"
else
    fail "eval --profile: $(cat "$TMP/eval.err")"
fi
"$EMBER" eval --load "$TMP/m.safetensors" --device cpu --profile --json >"$TMP/eval.json" 2>"$TMP/eval.err" &&
    "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/eval.json" &&
    grep -q '^conv2d forward ' "$TMP/eval.err" || fail "eval --json --profile: stdout is not one JSON object, or no table on stderr"
"$EMBER" train --model linear --data random --shape 4 --steps 2 --device cpu --quiet --trace "$TMP/no/such/dir/t.json" \
    2>"$TMP/trace.err"
# found before the first step, not after the run
[ $? -eq 3 ] && grep -q "cannot write --trace $TMP/no/such/dir/t.json: the folder" "$TMP/trace.err" &&
    ! grep -q "epoch 1/1" "$TMP/trace.err" || fail "an unwritable --trace: $(cat "$TMP/trace.err")"

[ "$failures" -eq 0 ] && echo "test_profile: ok" && exit 0
echo "test_profile: $failures failure(s)" >&2
exit 1
