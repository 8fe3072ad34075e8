#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/lora_torch.py — LoRA fine-tuning steps of a GGUF language model in PyTorch, the twin that
bench/lora_vs_pytorch.sh times ember's `ember train --init MODEL.gguf --lora` against:

    lora_torch.py MODEL.gguf THREADS STEPS BATCH CONTEXT [bf16]

The model is tests/interop/test_lm_vs_torch.py's twin in float32 and batched (PyTorch has no kernels for
GGUF's blocks: the `gguf` package dequantises every weight), frozen; beside each of the seven projections
of every block a LoRA adapter of rank 8 and alpha 16, A uniform in +-1/sqrt(in) and B zero, as PEFT's;
AdamW (lr 1e-3) on the adapters alone. STEPS steps of BATCH random windows of CONTEXT tokens after one
untimed step. One JSON line: tokens a second and the peak resident memory. With "bf16", the forward
pass under torch.autocast("cpu", dtype=torch.bfloat16): its products in bfloat16 (oneDNN's, on the AMX
tile unit where the CPU has one), for ember's --matmul-precision medium to stand beside.
"""
import contextlib
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
from test_lm_vs_torch import Twin  # noqa: E402
from blas_threads import limit_blas_threads  # noqa: E402

torch.set_grad_enabled(True)  # the twin's module turns it off
PROJ = ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down")


class LoraTwin:
    def __init__(self, path, rank=8, alpha=16.0):
        t = Twin(path)
        self.t = t
        self.w = {k: v.float() for k, v in t.w.items()}
        del t.w
        self.scale = alpha / rank
        self.a, self.b = {}, {}
        g = torch.Generator().manual_seed(0)
        for i in range(t.blocks):
            for p in PROJ:
                out, inp = self.w[f"blk.{i}.{p}.weight"].shape
                bound = 1.0 / inp ** 0.5
                self.a[i, p] = (torch.rand(rank, inp, generator=g) * 2 * bound - bound).requires_grad_()
                self.b[i, p] = torch.zeros(out, rank, requires_grad=True)
        pairs = t.rot // 2
        theta = t.base ** (-2.0 * torch.arange(pairs, dtype=torch.float64) / t.rot)
        ang = torch.arange(4096, dtype=torch.float64)[:, None] * theta[None, :]
        self.cos, self.sin = torch.cos(ang).float(), torch.sin(ang).float()

    def params(self):
        return list(self.a.values()) + list(self.b.values())

    def proj(self, i, p, h):
        y = h @ self.w[f"blk.{i}.{p}.weight"].T
        if f"blk.{i}.{p}.bias" in self.w:
            y = y + self.w[f"blk.{i}.{p}.bias"]
        return y + ((h @ self.a[i, p].T) * self.scale) @ self.b[i, p].T

    def rope(self, x):  # x (B, T, H, D)
        t, pairs = x.shape[1], self.t.rot // 2
        cos, sin = self.cos[:t, None, :], self.sin[:t, None, :]
        if self.t.neox:
            a, b = x[..., :pairs], x[..., pairs:2 * pairs]
        else:
            a, b = x[..., 0:2 * pairs:2], x[..., 1:2 * pairs:2]
        ra, rb = a * cos - b * sin, a * sin + b * cos
        if self.t.neox:
            return torch.cat([ra, rb, x[..., 2 * pairs:]], -1)
        return torch.cat([torch.stack([ra, rb], -1).flatten(-2), x[..., 2 * pairs:]], -1)

    def norm(self, x, w):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.t.eps) * w

    def forward(self, tokens):  # (B, T) -> (B, T, vocab)
        t = self.t
        b, n = tokens.shape
        x = self.w["token_embd.weight"][tokens]
        mask = torch.full((n, n), float("-inf")).triu(1)
        group = t.heads // t.kv_heads
        for i in range(t.blocks):
            h = self.norm(x, self.w[f"blk.{i}.attn_norm.weight"])
            q = self.rope(self.proj(i, "attn_q", h).view(b, n, t.heads, t.head_dim)).transpose(1, 2)
            k = self.rope(self.proj(i, "attn_k", h).view(b, n, t.kv_heads, t.head_dim)).transpose(1, 2)
            v = self.proj(i, "attn_v", h).view(b, n, t.kv_heads, t.head_dim).transpose(1, 2)
            k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
            s = torch.softmax(q @ k.transpose(-1, -2) / t.head_dim ** 0.5 + mask, -1)
            x = x + self.proj(i, "attn_output", (s @ v).transpose(1, 2).reshape(b, n, t.width))
            h = self.norm(x, self.w[f"blk.{i}.ffn_norm.weight"])
            g = torch.nn.functional.silu(self.proj(i, "ffn_gate", h))
            x = x + self.proj(i, "ffn_down", g * self.proj(i, "ffn_up", h))
        x = self.norm(x, self.w["output_norm.weight"])
        return x @ self.w.get("output.weight", self.w["token_embd.weight"]).T


def main():
    path, threads, steps, batch, context = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    bf16 = sys.argv[6:7] == ["bf16"]
    torch.set_num_threads(threads)
    limit_blas_threads(threads)  # its products in OpenBLAS too: blas_threads.py
    model = LoraTwin(path)
    opt = torch.optim.AdamW(model.params(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    vocab = model.w["token_embd.weight"].shape[0]

    def step():
        w = torch.randint(0, vocab, (batch, context + 1), generator=g)
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext():
            logits = model.forward(w[:, :-1]).float()
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), w[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    step()  # untimed: allocations, first touches
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    print(json.dumps({"peer": "pytorch", "torch": torch.__version__, "threads": threads, "bf16": bf16,
                      "tokens_per_s": round(steps * batch * context / seconds, 1),
                      "tokens_per_cpu_s": round(steps * batch * context / cpu_seconds, 1),
                      "seconds_per_step": round(seconds / steps, 3),
                      "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))


if __name__ == "__main__":
    main()
