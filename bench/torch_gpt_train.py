#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/torch_gpt_train.py — the PyTorch peer for bench/gpt_vs_pytorch.sh.

    torch_gpt_train.py --text FILE --steps 30 --threads 2 [--batch 32] [--generate 200] [--device cuda]

Trains gpt-tiny's PyTorch twin (tests/interop/test_gpt_vs_torch.py: nanoGPT's GPT, 4
layers, 4 heads, width 128, context 128) on the text as `ember train --data
text` does: every byte a token, the first 90% for training, batches of
random windows, AdamW (lr 1e-3, weight decay 0.1 on the weights and
embeddings) with the gradients clipped to a norm of 1. Then generates
--generate bytes greedily as nanoGPT's generate() does, running the model
over the last context for every byte (PyTorch's GPT has no key/value
cache). Prints one JSON line: {"tokens_per_s" (the training steps after
the first), "tokens_per_cpu_s" (the same over the process's CPU time: on
a shared machine, what the steps cost whatever else runs),
"generate_tokens_per_s", "train_loss" (the last step's), "peak_rss_mib"}.
"""
import argparse
import json
import os
import resource
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
from test_gpt_vs_torch import GPT  # noqa: E402
from blas_threads import limit_blas_threads  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--text", required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--generate", type=int, default=200)
    ap.add_argument("--device", default="cpu", help="cuda: the model and each batch on the GPU")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    limit_blas_threads(a.threads)  # its products in OpenBLAS too: blas_threads.py
    torch.manual_seed(0)
    text = open(a.text, "rb").read()
    vocab = sorted(set(text))
    token = {b: i for i, b in enumerate(vocab)}
    train = torch.tensor([token[b] for b in text[:len(text) - len(text) // 10]], dtype=torch.long)
    context = 128
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    net = GPT(len(vocab)).to(dev)
    decay = [p for p in net.parameters() if p.dim() >= 2]
    no_decay = [p for p in net.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3)
    start = cpu_start = None
    for step in range(a.steps):
        if step == 1:  # the first step allocates; the rest are the steady state
            sync()
            start, cpu_start = time.perf_counter(), time.process_time()
        ix = torch.randint(len(train) - context, (a.batch,))
        x = torch.stack([train[i:i + context] for i in ix])
        y = torch.stack([train[i + 1:i + 1 + context] for i in ix])
        x, y = x.to(dev), y.to(dev)
        logits = net(x)
        loss = F.cross_entropy(logits.reshape(-1, len(vocab)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    sync()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    net.eval()
    idx = torch.tensor([[token.get(ord("\n"), 0)]], dtype=torch.long, device=dev)
    g0 = time.perf_counter()
    with torch.no_grad():
        for _ in range(a.generate):
            logits = net(idx[:, -context:])
            idx = torch.cat((idx, logits[:, -1, :].argmax(-1, keepdim=True)), dim=1)
    sync()
    g = time.perf_counter() - g0
    tokens = (a.steps - 1) * a.batch * context
    print(json.dumps({"tokens_per_s": round(tokens / seconds, 1), "tokens_per_cpu_s": round(tokens / cpu_seconds, 1),
                      "generate_tokens_per_s": round(a.generate / g, 1), "train_loss": round(loss.item(), 4),
                      "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    main()
