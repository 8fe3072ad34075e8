#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_lora_vs_torch.py — LoRA fine-tuning of a GGUF language model (models/lm-lora.c)
against a PyTorch twin.

    test_lora_vs_torch.py LORA_RUN [--steps N] [--quick | --lora-only]

For tiny models written with the `gguf` package (a llama one with Q8_0 weights and an untied output, a
qwen2 one with Q4_0 weights and biases), ember's lora-run adds adapters, saves them as they start, and
trains them with AdamW for N steps (20 by default) on batches of windows of a text; the twin (test_lm_vs_
torch.py's, in double) takes the same starting adapters from that file, by PEFT's names, and trains them on
the same batches with torch.optim.AdamW, as PEFT trains them on Hugging Face's model (a llama file's q and k
rows put back in Hugging Face's order, RoPE on halves: so ember's B must be PEFT's, rows and all); the llama one's targets partly ignored (-100), as a chat's prompts
are, its loss F.cross_entropy(..., ignore_index=-100)'s over the batch. Checked: every step's loss within 1e-4 relative of the twin's,
the merged GGUF files (F32, F16, Q8_0, Q4_0) as the gguf package reads them equal to W + (alpha / r) B A
in each type (the quantised ones block for block as gguf.quants quantises it), the rest the base's,
the loss falling, B zero at the start, and the trained adapters near the twin's (--quick: the llama one
alone, for the simulated GPUs; --lora-only: the two LoRA runs, for EMBER_TEST_MATMUL_PRECISION=high). The device is
$EMBER_TEST_DEVICE (cpu by default). Exit 77 without PyTorch, numpy, gguf or safetensors.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import gguf
    from safetensors.numpy import load_file
except ImportError as e:
    print(f"skipped: {e} (scripts/setup.sh --tests installs them)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_lm_vs_torch import Twin, write_tiny, norms_to_one  # noqa: E402

torch.set_grad_enabled(True)  # test_lm_vs_torch turns it off
Q = gguf.GGMLQuantizationType
failures = []

# GGUF's projection names and PEFT's
PEFT = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
        "ffn_down": "mlp.down_proj"}
SHORT = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output", "gate": "ffn_gate", "up": "ffn_up",
         "down": "ffn_down"}


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def to_gguf_rows(m, heads):
    """llama's q or k rows as llama.cpp's converter writes them (its `permute`): each head's RoPE halves
    (i, i + head_dim / 2) made neighbours (2i, 2i + 1)"""
    return m.reshape(heads, 2, m.shape[0] // heads // 2, *m.shape[1:]).swapaxes(1, 2).reshape(m.shape)


def to_hf_rows(m, heads):
    """the converter's permutation undone: Hugging Face's rows"""
    return m.reshape(heads, m.shape[0] // heads // 2, 2, *m.shape[1:]).swapaxes(1, 2).reshape(m.shape)


def gguf_order(b, name, twin):
    """a B of PEFT's (Hugging Face's rows) in the GGUF file's row order"""
    if twin.arch != "llama" or name not in ("attn_q", "attn_k"):
        return b
    return to_gguf_rows(b, twin.heads if name == "attn_q" else twin.kv_heads)


class LoraTwin(Twin):
    """the twin with PEFT's LoRA, y = W h (+ b) + (alpha / r) * B A h, as PEFT runs it on Hugging Face's
    model: a llama file's q and k rows put back in Hugging Face's order and RoPE on halves, as
    transformers' LlamaAttention does it, so that PEFT's B (its rows Hugging Face's) means what it means
    there"""

    def __init__(self, path, adapters, alpha):
        super().__init__(path)
        if not self.neox:
            for i in range(self.blocks):
                for name, heads in (("attn_q", self.heads), ("attn_k", self.kv_heads)):
                    key = f"blk.{i}.{name}.weight"
                    self.w[key] = to_hf_rows(self.w[key], heads)
            self.neox = True
        self.a, self.b = {}, {}
        for i in range(self.blocks):
            for name, peft in PEFT.items():
                key = f"base_model.model.model.layers.{i}.{peft}.lora_"
                if key + "A.weight" in adapters:
                    self.a[i, name] = torch.tensor(adapters[key + "A.weight"], dtype=torch.float64, requires_grad=True)
                    self.b[i, name] = torch.tensor(adapters[key + "B.weight"], dtype=torch.float64, requires_grad=True)
        self.rank = next(iter(self.a.values())).shape[0]
        self.scale = alpha / self.rank

    def project(self, i, name, h):
        y = super().project(i, name, h)
        if (i, name) in self.a:
            y = y + (h @ self.a[i, name].T @ self.b[i, name].T) * self.scale
        return y

    def params(self):
        return list(self.a.values()) + list(self.b.values())


class FullTwin(Twin):
    """the twin with every weight trained (full fine-tuning): each of ember's starting weights, by the file's
    name, a leaf to learn; AdamW decays those of two axes, as ember's does"""

    def __init__(self, path, weights):
        super().__init__(path)
        for name, v in weights.items():
            self.w[name] = torch.tensor(v, dtype=torch.float64, requires_grad=True)
        self.trained = sorted(weights)

    def groups(self):
        return [{"params": [self.w[n] for n in self.trained if self.w[n].dim() >= 2]},
                {"params": [self.w[n] for n in self.trained if self.w[n].dim() < 2], "weight_decay": 0.0}]


def check_merged(base_path, adapters, alpha, tmp, what, twin):
    """the merged GGUF files, read by the gguf package: the base's metadata and other tensors byte for byte, and
    each adapted projection W + (alpha / r) B A (computed here in float32, B's rows in the file's order) in its
    type: F32 within float rounding, F16 as NumPy rounds it, Q8_0 and Q4_0 as gguf.quants quantises it"""
    base = gguf.GGUFReader(base_path)
    base_t = {t.name: t for t in base.tensors}
    for qtype in ("F32", "F16", "Q8_0", "Q4_0"):
        merged = gguf.GGUFReader(os.path.join(tmp, f"merged-{qtype}.gguf"))
        check(sorted(merged.fields) == sorted(base.fields) and
              all(merged.fields[k].contents() == base.fields[k].contents() for k in base.fields),
              f"{what}: merged {qtype}: the metadata is not the base's")
        worst, blocks, same_blocks = 0.0, 0, 0
        for t in merged.tensors:
            b = base_t[t.name]
            parts = t.name.split(".")
            key = f"base_model.model.model.layers.{parts[1]}.{PEFT.get(parts[2], '')}.lora_" if len(parts) == 4 and parts[3] == "weight" else ""
            full = isinstance(twin, FullTwin)
            if full and len(b.shape) == 1:  # a trained norm or bias: F32, its value as trained
                ours = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
                check(t.tensor_type.name == "F32" and np.array_equal(ours, adapters[t.name]),
                      f"{what}: merged {qtype}: {t.name} is not its trained value in F32")
                continue
            if not full and key + "A.weight" not in adapters:
                check(t.tensor_type == b.tensor_type and bytes(t.data) == bytes(b.data),
                      f"{what}: merged {qtype}: {t.name}, which no adapter changes, is not the base's")
                continue
            if full:
                want = adapters[t.name]
            else:
                w = gguf.quants.dequantize(b.data, b.tensor_type).astype(np.float32)
                a, bb = adapters[key + "A.weight"], gguf_order(adapters[key + "B.weight"], parts[2], twin)
                want = (w + np.float32(alpha / a.shape[0]) * (bb @ a)).astype(np.float32)
            check(t.tensor_type.name == qtype, f"{what}: merged {qtype}: {t.name} is {t.tensor_type.name}")
            ours = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(want.shape)
            if qtype == "F32":
                worst = max(worst, float(np.abs(ours - want).max() / np.abs(want).max()))
            elif qtype == "F16":
                step = np.abs(want).max() * 2.0 ** -10  # a half's spacing near the largest
                worst = max(worst, float(np.abs(ours - want.astype(np.float16).astype(np.float32)).max() / step))
            else:
                theirs = gguf.quants.quantize(want, t.tensor_type)
                mine = np.asarray(t.data).reshape(theirs.shape)
                blocks += theirs.shape[0] * theirs.shape[1] // (34 if qtype == "Q8_0" else 18)
                per = 34 if qtype == "Q8_0" else 18
                same_blocks += int((mine.reshape(-1, per) == theirs.reshape(-1, per)).all(axis=1).sum())
        if qtype == "F32":
            check(worst <= 1e-6, f"{what}: merged F32 differs from W + scale B A by {worst:.1e} of the largest")
        elif qtype == "F16":
            check(worst <= 1.0, f"{what}: merged F16 differs from NumPy's halves by {worst:.2f} of a half's step")
        else:  # a block whose float32 sum rounds the other way at a quantiser's tie may differ
            check(same_blocks >= 0.99 * blocks,
                  f"{what}: merged {qtype}: {blocks - same_blocks} of {blocks} blocks differ from gguf.quants'")
        print(f"{what}: merged {qtype}: " + (f"within {worst:.1e}" if qtype in ("F32", "F16") else
                                              f"{same_blocks} of {blocks} blocks gguf.quants' own"))


def run(lora_run, path, text, steps, batch, context, lr, targets, rank, alpha, what, masked):
    rng = np.random.default_rng(7)
    starts = rng.integers(0, len(text) - context - 1, size=steps * batch)
    windows = np.stack([np.frombuffer(text[s:s + context + 1], dtype=np.uint8) for s in starts]).astype(np.int32)
    # masked: a chat's prompt, the targets before a point drawn for each window ignored (-100, as TRL labels
    # them), and one window of every fourth batch ignored whole; lora-run reads an ignored target as -(t + 1)
    labels = windows[:, 1:].copy()
    if masked:
        for i in range(len(labels)):
            labels[i, :context if i % (4 * batch) == 1 else int(rng.integers(0, context))] = -100
    written = windows.copy()
    written[:, 1:] = np.where(labels == -100, -windows[:, 1:] - 1, windows[:, 1:])
    with tempfile.TemporaryDirectory() as tmp:
        wpath = os.path.join(tmp, "windows.i32")
        written.tofile(wpath)
        r = subprocess.run([lora_run, path, wpath, str(steps), str(batch), str(context), str(lr), tmp, targets,
                            str(rank), str(alpha)], capture_output=True, text=True, timeout=600)
        if r.returncode == 77:
            print(f"skipped: {r.stderr.strip()}")
            sys.exit(77)
        if r.returncode != 0:
            check(False, f"{what}: lora-run exited {r.returncode}: {r.stderr.strip()[-400:]}")
            return
        print(r.stderr.strip().splitlines()[-1])
        ours = [float(v) for v in r.stdout.split()]
        initial = load_file(os.path.join(tmp, "initial.safetensors"))
        final = load_file(os.path.join(tmp, "final.safetensors"))
        full = targets == "full"
        twin = FullTwin(path, initial) if full else LoraTwin(path, initial, alpha)
        check_merged(path, final, alpha, tmp, what, twin)
    if full:
        names = sorted(t.name for t in gguf.GGUFReader(path).tensors)
        check(twin.trained == names, f"{what}: the trained weights are {twin.trained}, not the file's {names}")
        opt = torch.optim.AdamW(twin.groups(), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    else:
        want = [SHORT[t] for t in targets.split(",")]
        check(sorted({name for _, name in twin.a}) == sorted(want), f"{what}: the adapters are on {sorted(twin.a)}")
        check(all(not b.detach().any() for b in twin.b.values()), f"{what}: B does not start at zero")
        opt = torch.optim.AdamW(twin.params(), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    theirs = []
    for s in range(steps):
        opt.zero_grad()
        # the mean over the batch's every target that counts, as TRL's SFT trainer takes it
        rows = range(s * batch, (s + 1) * batch)
        logits = torch.cat([twin.forward([int(t) for t in windows[i, :-1]]) for i in rows])
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor(labels[s * batch:(s + 1) * batch].reshape(-1), dtype=torch.long),
                                                 ignore_index=-100)
        loss.backward()
        opt.step()
        theirs.append(loss.item())
    worst = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs)) if len(ours) == steps else float("inf")
    check(worst <= 1e-4, f"{what}: a step's loss differs from the twin's by {worst:.2e} relative "
                         f"(ours {ours[:3]}..., the twin's {theirs[:3]}...)")
    # (a fall of a tenth over 8 steps or more; over the simulated GPUs' 2, a fall)
    check(len(ours) == steps and ours[-1] < ours[0] - (0.1 if steps >= 8 else 0.0),
          f"{what}: the loss did not fall: {ours[0] if ours else None} to {ours[-1] if ours else None}")
    # the trained adapters: Adam's steps are lr-sized, so the differences are measured in lr
    diff = 0.0
    for name in twin.trained if full else []:
        diff = max(diff, np.abs(final[name] - twin.w[name].detach().numpy()).max())
    for (i, name), a in ({} if full else twin.a).items():
        key = f"base_model.model.model.layers.{i}.{PEFT[name]}.lora_"
        diff = max(diff, np.abs(final[key + "A.weight"] - a.detach().numpy()).max(),
                   np.abs(final[key + "B.weight"] - twin.b[i, name].detach().numpy()).max())
    # (every weight: some have gradients near zero, where Adam's step is +-lr whichever way rounding tips)
    bound = (0.1 if full else 0.05) * lr * steps
    check(diff <= bound, f"{what}: the trained {'weights' if full else 'adapters'} differ from the twin's by "
                         f"{diff:.2e}")
    print(f"{what}: {steps} steps, losses {ours[0]:.4f} -> {ours[-1]:.4f}, within {worst:.1e} relative of the "
          f"twin's; {'weights' if full else 'adapters'} within {diff:.1e}")


def main():
    args = sys.argv[1:]
    lora_run = args[0]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 20
    text = (b"The quick brown fox jumps over the lazy dog. A stitch in time saves nine. "
            b"All that glitters is not gold. Where there is smoke there is fire. ") * 8
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        # the llama one's targets partly ignored, as a chat's prompts are (ember_cross_entropy_ignore)
        # and every weight of the qwen2 one trained (full fine-tuning), its tied output too
        models = (("llama", Q.Q8_0, True, False, "q,k,v,o,gate,up,down", 8, 16.0, True),
                  ("qwen2", Q.Q4_0, False, True, "q,v,down", 4, 8.0, False),
                  ("qwen2", Q.Q4_0, False, True, "full", 0, 0.0, False))
        if "--quick" in args:
            models = models[:1]
        elif "--lora-only" in args:
            models = models[:2]
        for arch, qtype, untied, biases, targets, rank, alpha, masked in models:
            path = os.path.join(tmp, f"tiny-{arch}.gguf")
            if not os.path.exists(path):
                write_tiny(path, arch, qtype, rng, untied, biases)
                norms_to_one(path)
            run(lora_run, path, text, steps, 4, 32, 1e-3 if targets == "full" else 1e-2, targets, rank, alpha,
                f"tiny {arch} {qtype.name} " + ("full fine-tuning" if targets == "full" else f"LoRA {targets} r={rank}")
                + (", prompts ignored" if masked else ""), masked)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
