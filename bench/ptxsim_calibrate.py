# SPDX-License-Identifier: MIT
"""bench/ptxsim_calibrate.py — the PTX simulator's timing estimate
(ptxsim/ptxsim-timing.c) against kernel times recorded on real GPUs.

    EMBER_PTXSIM_ESTIMATES=est.log build/ember ptx --simulate --gpu h100 --model M --batch B
    python3 bench/ptxsim_calibrate.py est.log [--fit]

The log has a line for every launch of the simulated step (what its estimate
was made from, backends/cuda/cuda-sim.c). For each kernel with a recorded time
below (the mean of its launches in a real run of the same model and batch,
docs/gpu-runs), this prints the mean estimate over its launches, the recorded
time and their ratio, and the largest factor either way. --fit searches the
estimate's constants for the smallest largest factor and prints them; the
constants in ptxsim-timing.c are copied by hand from that.

The estimate here is ptxsim-timing.c's, written again: at the constants of
the C file the two agree on the log's own `estimate_us`, and this says where
they do not (a log of another build).
"""
import math
import sys
from collections import defaultdict

# the simulated cards the runs were on: (SMs, MHz, schedulers, issue width,
# L2 bytes, GB/s, dependent-instruction cycles), as ptxsim-gpus.c has them
GPUS = {"h100": (132, 1980.0, 4, 4, 50 * 1024 * 1024, 3350.0, 4.0)}

# (model, batch, kernel): mean microseconds a launch on a real H100, NVRTC
# 13.0's cubin, from `ember train --profile` (the kernel rows' "mean us")
RECORDED = {
    # docs/gpu-runs/2026-11-26-h100-conv.md, call 4, "simplecnn by conv_direct, batch 64, 200 steps"
    ("simplecnn", 64, "conv_direct_weight_grad"): 21.1,
    ("simplecnn", 64, "conv_direct_forward"): 14.8,
    # the same file, call 4, "The profile after (ResNet-8, batch 256, 100 steps)": conv_direct_forward
    # ran 800 times as the forward pass (116.6 us) and 400 as the input gradient (161.1 us)
    ("resnet8", 256, "conv_direct_forward"): (800 * 116.6 + 400 * 161.1) / 1200,
    ("resnet8", 256, "conv_direct_input_grad"): 88.0,
    ("resnet8", 256, "conv_direct_weight_grad"): 102.1,
    ("resnet8", 256, "reduce"): 8.9,
    ("resnet8", 256, "batch_norm_grad_planes"): 28.0,
    ("resnet8", 256, "batch_norm_dx"): 18.7,
    ("resnet8", 256, "batch_norm_grad_channels"): 17.5,
    ("resnet8", 256, "batch_norm_planes"): 28.6,
    # binary_dense ran 300 times in the convolutions' backward rows (16.4 us) and 1800 in batch
    # norm's (6.4 us)
    ("resnet8", 256, "binary_dense"): (300 * 16.4 + 1800 * 6.4) / 2100,
}

CONSTANTS = {"load_ns": 200.0, "in_flight": 8.0, "launch_us": 9.0, "dependent_scale": 0.375}


def estimate(row, gpu, c):
    sms, mhz, schedulers, width, l2, gbs, dependent = GPUS[gpu]
    clock = mhz * 1e6
    blocks, threads, per_sm = row["blocks"], row["threads"], max(row["per_sm"], 1)
    busiest = -(-blocks // sms)
    resident = min(per_sm, busiest)
    waves = -(-busiest // resident)
    warps = max(row["warps"], 1)
    per_warp = row["instructions"] / warps
    per_scheduler = max(resident * -(-threads // 32) / schedulers, 1.0)
    issue = waves * per_scheduler * per_warp / (width / schedulers) / clock
    chain = per_warp * dependent * c["dependent_scale"] + row["loads"] / warps * c["load_ns"] * 1e-9 * clock / c["in_flight"]
    latency = waves * chain / clock
    dram = row["unique"] * 32.0 if row["unique"] * 32.0 <= l2 else row["sectors"] * 32.0
    memory = max(dram / (gbs * 1e9), row["sectors"] * 32.0 / (2.0 * gbs * 1e9))
    return (c["launch_us"] * 1e-6 + max(issue, latency, memory)) * 1e6


def read(path):
    rows = []
    with open(path) as f:
        for line in f:
            words = line.split()
            row = {"gpu": words[0], "kernel": words[1]}
            for w in words[2:]:
                key, value = w.split("=")
                row[key] = float(value) if "." in value else int(value)
            rows.append(row)
    return rows


def compare(rows, model, batch, c, say):
    by_kernel = defaultdict(list)
    for r in rows:
        by_kernel[r["kernel"]].append(r)
    worst = 1.0
    for (m, b, kernel), real in RECORDED.items():
        if (m, b) != (model, batch) or kernel not in by_kernel:
            continue
        launches = by_kernel[kernel]
        est = sum(estimate(r, r["gpu"], c) for r in launches) / len(launches)
        factor = max(est / real, real / est)
        worst = max(worst, factor)
        if say:
            print(f"{model:10s} {batch:4d} {kernel:28s} {len(launches):4d} {est:9.1f} {real:9.1f} {est / real:6.2f}")
    return worst


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    fit = "--fit" in sys.argv
    runs = []
    for path in args:
        rows = read(path)
        # which run: the model and batch are in the log's name, model-batch.log
        name = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        model, batch = name.rsplit("-", 1)
        runs.append((rows, model, int(batch)))
        differ = sum(abs(estimate(r, r["gpu"], CONSTANTS) - r["estimate_us"]) > 0.01 * r["estimate_us"] + 0.01 for r in rows)
        if differ:  # a log of another build, or this file out of step with ptxsim-timing.c
            print(f"note: {path}: {differ} of {len(rows)} launches' estimates differ from this file's at its constants")
    c = dict(CONSTANTS)
    if fit:
        best = None
        for load_ns in (200, 300, 400, 500, 600, 800):
            for in_flight in (2, 4, 8, 16, 32, 64):
                for launch_us in (2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 12.0):
                    for scale in (0.25, 0.375, 0.5, 0.75, 1.0, 1.5, 2.0):
                        t = {"load_ns": load_ns, "in_flight": in_flight, "launch_us": launch_us, "dependent_scale": scale}
                        w = max(compare(rows, m, b, t, False) for rows, m, b in runs)
                        if best is None or w < best[0]:
                            best = (w, t)
        print("fitted:", best[1], f"largest factor {best[0]:.2f}")
        c = best[1]
    print(f"{'model':10s} {'batch':>4s} {'kernel':28s} {'runs':>4s} {'est. us':>9s} {'real us':>9s} {'ratio':>6s}")
    worst = max(compare(rows, m, b, c, True) for rows, m, b in runs)
    print(f"largest factor either way: {worst:.2f}")


if __name__ == "__main__":
    main()
