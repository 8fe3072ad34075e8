#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/torch_zoo_train.py — the PyTorch peer for bench/cpu_vs_peers.sh and bench/zoo_vs_pytorch.sh.

    torch_zoo_train.py --model resnet8 --epochs 5 --threads 2 [--steps N] [--schedule cosine] [--data-dir DIR]
                       [--device cuda]

Trains the PyTorch twin of an ember built-in model (tests/interop/torch_zoo.py: the
same layers, the same parameter names) on Fashion-MNIST as `ember train`
does: batch 64, Adam lr 0.001, a fresh shuffle each epoch, the last short
batch kept, evaluation in eval() mode after every epoch. Prints one JSON
line per epoch: {"epoch", "images_per_s" (the training loop only, data in
memory), "train_loss", "test_acc", "seconds", "peak_rss_mib"}. --steps N
stops each epoch after N steps: speed alone, the accuracy is then of a
part-epoch. --device cuda trains on the GPU, the whole data set held there,
with PyTorch's defaults (cuDNN chooses its convolutions and may use TF32
for them); each step still reads its loss back, as ember's does.
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "common"))
from fashion_subset import read_idx  # noqa: E402
from torch_zoo import ZOO  # noqa: E402
from blas_threads import limit_blas_threads  # noqa: E402


def split(data_dir, prefix):
    dims, pixels = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    x = np.frombuffer(pixels, dtype=np.uint8).reshape(dims[0], 1, dims[1], dims[2]).astype(np.float32) / 255
    return torch.from_numpy(x), torch.from_numpy(np.frombuffer(labels, dtype=np.uint8).astype(np.int64))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, choices=sorted(ZOO))
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=0, help="stop after N steps (0: whole epochs); for speed alone")
    ap.add_argument("--schedule", default="constant", choices=["constant", "cosine"],
                    help="cosine: CosineAnnealingLR to 0 over the run, stepped each batch (ember's --schedule cosine)")
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    limit_blas_threads(a.threads)  # its products in OpenBLAS too: blas_threads.py
    xtr, ytr = split(a.data_dir, "train")
    xte, yte = split(a.data_dir, "t10k")
    dev = torch.device(a.device)
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)
    model = ZOO[a.model]().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    steps_per_epoch = (xtr.shape[0] + a.batch - 1) // a.batch
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.epochs * steps_per_epoch)
             if a.schedule == "cosine" else None)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(1, a.epochs + 1):
        model.train()
        perm = torch.randperm(xtr.shape[0], device=dev)
        total, steps = 0.0, 0
        t0 = time.perf_counter()
        for i in range(0, xtr.shape[0], a.batch):
            if a.steps and steps >= a.steps:
                break
            idx = perm[i:i + a.batch]
            opt.zero_grad()
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
            if sched:
                sched.step()
            total += loss.item()
            steps += 1
        seconds = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            correct = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                          for i in range(0, xte.shape[0], 1000))
        images = min(xtr.shape[0], steps * a.batch)
        print(json.dumps({"peer": "pytorch " + torch.__version__, "model": a.model, "epoch": epoch,
                          "threads": a.threads, "images_per_s": round(images / seconds, 1),
                          "train_loss": round(total / steps, 4), "test_acc": correct / xte.shape[0],
                          "seconds": round(seconds, 3),
                          "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}),
              flush=True)


if __name__ == "__main__":
    sys.exit(main())
