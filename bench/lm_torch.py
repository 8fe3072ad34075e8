#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/lm_torch.py — the PyTorch twin of a GGUF language model
(tests/interop/test_lm_vs_torch.py's, in float32, with a key/value cache),
timed as bench/lm_speed.c times ember:

    lm_torch.py MODEL.gguf THREADS PROMPT GEN

pp: PROMPT random tokens at once; tg: GEN tokens one at a time from an
empty cache; the faster of two runs each. One JSON line, with the peak
resident memory. The weights are dequantised to float32 by the `gguf`
package: PyTorch has no kernels for GGUF's blocks.
"""
import json
import os
import resource
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
from test_lm_vs_torch import Twin  # noqa: E402
from blas_threads import limit_blas_threads  # noqa: E402

torch.set_grad_enabled(False)


class Cached:
    def __init__(self, twin):
        self.t = twin
        self.w = {k: v.float() for k, v in twin.w.items()}
        self.reset()

    def reset(self):
        self.k = [None] * self.t.blocks
        self.v = [None] * self.t.blocks
        self.pos = 0

    def rope(self, x, start):
        return self.t.rope(x.double(), start).float()

    def feed(self, tokens):
        t, w, n = self.t, self.w, len(tokens)
        x = w["token_embd.weight"][torch.tensor(tokens)]
        group = t.heads // t.kv_heads
        for i in range(t.blocks):
            p = f"blk.{i}."
            h = x / torch.sqrt((x * x).mean(-1, keepdim=True) + t.eps) * w[p + "attn_norm.weight"]
            q = self.rope((h @ w[p + "attn_q.weight"].T).view(n, t.heads, t.head_dim), self.pos)
            k = self.rope((h @ w[p + "attn_k.weight"].T).view(n, t.kv_heads, t.head_dim), self.pos)
            v = (h @ w[p + "attn_v.weight"].T).view(n, t.kv_heads, t.head_dim)
            self.k[i] = k if self.k[i] is None else torch.cat([self.k[i], k])
            self.v[i] = v if self.v[i] is None else torch.cat([self.v[i], v])
            kk = self.k[i].repeat_interleave(group, dim=1)
            vv = self.v[i].repeat_interleave(group, dim=1)
            s = torch.einsum("thd,shd->hts", q, kk) / t.head_dim ** 0.5
            mask = torch.full((n, self.pos + n), float("-inf")).triu(self.pos + 1)
            o = torch.einsum("hts,shd->thd", torch.softmax(s + mask, -1), vv).reshape(n, t.width)
            x = x + o @ w[p + "attn_output.weight"].T
            h = x / torch.sqrt((x * x).mean(-1, keepdim=True) + t.eps) * w[p + "ffn_norm.weight"]
            g = torch.nn.functional.silu(h @ w[p + "ffn_gate.weight"].T) * (h @ w[p + "ffn_up.weight"].T)
            x = x + g @ w[p + "ffn_down.weight"].T
        self.pos += n
        x = x[-1:]
        x = x / torch.sqrt((x * x).mean(-1, keepdim=True) + t.eps) * w["output_norm.weight"]
        return x @ w.get("output.weight", w["token_embd.weight"]).T


def main():
    path, threads, prompt, gen = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    torch.set_num_threads(threads)
    limit_blas_threads(threads)  # its products in OpenBLAS too: blas_threads.py
    model = Cached(Twin(path))
    vocab = model.w["token_embd.weight"].shape[0]
    tokens = np.random.default_rng(1).integers(0, vocab, prompt + gen).tolist()
    pp = tg = float("inf")
    for _ in range(2):
        model.reset()
        start = time.perf_counter()
        model.feed(tokens[:prompt])
        pp = min(pp, time.perf_counter() - start)
        model.reset()
        start = time.perf_counter()
        for tok in tokens[prompt:]:
            model.feed([tok])
        tg = min(tg, time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"threads": threads, "pp": round(prompt / pp, 2), "tg": round(gen / tg, 2),
                      "peak_mib": round(peak, 1)}))


if __name__ == "__main__":
    main()
