#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/vision_peers.py — torchvision's NET in ONNX Runtime and PyTorch, timed as bench/vision_speed.c times ember.

    vision_peers.py NET SIDE THREADS BATCH STEPS CALLS OUT.onnx

Writes OUT.onnx first: the network (random weights, seed 0) exported after
model.train() with TrainingMode.PRESERVE, so that ember imports its
BatchNorm layers and trains what PyTorch trains. Then, on THREADS threads:
ONNX Runtime's inference of one 3 x SIDE x SIDE image (the same network
exported in evaluation mode, BatchNorm folded, as ember folds it when not
training), the median of CALLS runs; and PyTorch's training step (Adam,
lr 0.001, BATCH random images and labels), the median of STEPS steps as
images per second. Prints one JSON line.
"""
import json
import sys
import tempfile
import time
import warnings

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as F
import torchvision

from blas_threads import limit_blas_threads

warnings.filterwarnings("ignore", category=UserWarning)


def main():
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        return 2
    name, side, threads, batch, steps, calls, out = sys.argv[1], *map(int, sys.argv[2:7]), sys.argv[7]
    torch.set_num_threads(threads)
    limit_blas_threads(threads)  # its products in OpenBLAS too: blas_threads.py
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)(weights=None)
    x1 = torch.rand(1, 3, side, side)
    axes = {"input": {0: "batch"}, "logits": {0: "batch"}}
    torch.onnx.export(net.train(), torch.rand(2, 3, side, side), out, input_names=["input"], output_names=["logits"],
                      dynamic_axes=axes, opset_version=13, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    with tempfile.NamedTemporaryFile(suffix=".onnx") as folded:
        torch.onnx.export(net.eval(), x1, folded.name, input_names=["input"], output_names=["logits"],
                          dynamic_axes=axes, opset_version=13)
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        session = ort.InferenceSession(folded.name, so, providers=["CPUExecutionProvider"])
    feed = {"input": x1.numpy()}
    session.run(None, feed)
    ms = []
    for _ in range(calls):
        t0 = time.perf_counter()
        session.run(None, feed)
        ms.append((time.perf_counter() - t0) * 1e3)

    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=0.001)
    x, y = torch.rand(batch, 3, side, side), torch.arange(batch) % 1000
    step_ms = []
    for i in range(steps + 1):  # the first, unmeasured, sizes everything
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        loss.item()
        if i:
            step_ms.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"threads": threads, "ort_predict_ms": round(float(np.median(ms)), 3),
                      "torch_train_images_per_s": round(1000.0 * batch / float(np.median(step_ms)), 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
