#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/torch_ddp_train.py — the PyTorch peer for bench/parallel.sh: DistributedDataParallel.

    torch_ddp_train.py --model simplecnn --ranks 2 --threads 1 --steps 300 [--batch 64]

Trains the PyTorch twin of an ember model (tests/interop/torch_zoo.py) on
Fashion-MNIST with DistributedDataParallel over the gloo backend, in
`--ranks` processes on this machine (torch.multiprocessing), each with
`--threads` threads, as `mpirun -np N ember train` does: the same global
batch (64) drawn in the same order on every rank, rank r training the rows
[rB/N, (r+1)B/N) of it, Adam lr 0.001. Rank 0 prints one JSON line:
{"peer", "model", "ranks", "threads", "images_per_s" (the global batch's
images over the timed steps, after 20 untimed ones), "train_loss"}.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "interop"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "common"))
from fashion_subset import read_idx  # noqa: E402
from torch_zoo import ZOO  # noqa: E402
from blas_threads import limit_blas_threads  # noqa: E402

WARMUP = 20


def load(data_dir):
    dims, pixels = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"))
    x = np.frombuffer(pixels, dtype=np.uint8).reshape(dims[0], 1, dims[1], dims[2]).astype(np.float32) / 255
    return torch.from_numpy(x), torch.from_numpy(np.frombuffer(labels, dtype=np.uint8).astype(np.int64))


def rank_main(rank, a, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=a.ranks)
    torch.set_num_threads(a.threads)
    limit_blas_threads(a.threads)  # its products in OpenBLAS too: blas_threads.py
    torch.manual_seed(a.seed)
    x, y = load(a.data_dir)
    model = nn.parallel.DistributedDataParallel(ZOO[a.model]())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    perm = torch.randperm(x.shape[0], generator=torch.Generator().manual_seed(a.seed))  # the same on every rank
    lo, hi = a.batch * rank // a.ranks, a.batch * (rank + 1) // a.ranks
    total, start = 0.0, None
    for step in range(WARMUP + a.steps):
        if step == WARMUP:
            dist.barrier()
            start = time.perf_counter()
        at = (step * a.batch) % (x.shape[0] - a.batch)
        idx = perm[at + lo:at + hi]
        opt.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()  # DDP all-reduces the gradients in buckets during the backward pass
        opt.step()
        total += loss.item()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(json.dumps({"peer": f"pytorch {torch.__version__} DDP gloo", "model": a.model, "ranks": a.ranks,
                          "threads": a.threads, "images_per_s": round(a.steps * a.batch / seconds, 1),
                          "train_loss": round(total / (WARMUP + a.steps), 4)}), flush=True)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, choices=sorted(ZOO))
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    port = 29500 + os.getpid() % 1000
    mp.spawn(rank_main, args=(a, port), nprocs=a.ranks, join=True)


if __name__ == "__main__":
    sys.exit(main())
