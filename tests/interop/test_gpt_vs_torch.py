#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_gpt_vs_torch.py — gpt-tiny against its PyTorch twin, step for step, as llm.c checks itself.

    test_gpt_vs_torch.py path/to/gpt-export STEPS BATCH [CORPUS_BYTES] [--val-tolerance NATS]

The corpus is Debian's fortunes (/usr/share/games/fortunes, every file but the
.dat indexes, in name order; the first CORPUS_BYTES of it, default 400,000,
or all of it with 0), which scripts/setup.sh --tests installs. gpt-export
(tests/interop/gpt-export.c) builds gpt-tiny for it, saves the initial weights and
trains STEPS steps of BATCH windows with AdamW and clipping, writing every
batch, the first batch's logits, every loss and gradient norm, and the
validation loss at the end. The twin below, nanoGPT's GPT written as a
PyTorch user would (its names, LayerNorm, GELU's tanh form, the causal mask
as a buffer that is not saved, the lm_head untied), must

  - load ember's initial checkpoint with load_state_dict(strict=True)
  - give the first batch's logits within 1e-5, as does ONNX Runtime running
    ember's ONNX export of them (ember_model_export_onnx: Gather, LayerNorm
    spelt out, attention as MatMul, Softmax and a causal mask) within 1e-4
    where onnxruntime is installed
  - from those weights and the same batches, with torch.optim.AdamW (decay on
    the parameters of 2 or more dimensions, as nanoGPT's configure_optimizers)
    and clip_grad_norm_, give each of the first 50 steps' losses within 1e-4
    and its gradient norm within 1e-3 (relative)
  - reach the same validation loss, within 1e-3 nats (or --val-tolerance: the
    long tests train for 600 steps on all of the fortunes, on the CPU and on
    PoCL, and hold the validation loss to 0.02 nats)

Needs torch and safetensors; exits 77 (CTest's "skipped") without them or
without the fortunes.
"""
import math
import os
import subprocess
import sys
import tempfile

# one thread for PyTorch's OpenBLAS too (torch.set_num_threads leaves its pool alone, and on a busy machine
# its spinning threads cost more than they give); read when the library loads, so before torch is imported
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from safetensors.torch import load_file
except ImportError as err:
    print(f"gpt_vs_torch: skipped: {err} (install torch and safetensors into the Python that "
          "EMBER_PYTHON names; see tests/CMakeLists.txt)", file=sys.stderr)
    sys.exit(77)

FORTUNES = os.environ.get("EMBER_FORTUNES", "/usr/share/games/fortunes")
STEP_CHECKS = 50  # the steps whose losses must agree within 1e-4
failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"gpt_vs_torch: FAIL: {message}", file=sys.stderr)
    return cond


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        # the mask is not a parameter: not saved, so the state_dict is ember's
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's GPT with n_layer=4, n_head=4, n_embd=128, block_size=128, bias=True, untied lm_head."""

    def __init__(self, vocab, n_layer=4, n_head=4, n_embd=128, block_size=128):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx):
        t = idx.size(1)
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(t, device=idx.device))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def corpus(path, limit):
    names = sorted(n for n in os.listdir(FORTUNES) if not n.endswith((".dat", ".u8"))
                   and os.path.isfile(os.path.join(FORTUNES, n)) and not os.path.islink(os.path.join(FORTUNES, n)))
    text = b"".join(open(os.path.join(FORTUNES, n), "rb").read() for n in names)
    if limit:
        text = text[:limit]
    with open(path, "wb") as f:
        f.write(text)
    return text


def validation_loss(net, text, context=128):
    """the mean loss over the last tenth of the text in windows side by side, as ember_model_evaluate reads it"""
    vocab = sorted(set(text))
    token = {b: i for i, b in enumerate(vocab)}
    split = text[len(text) - len(text) // 10:]
    ids = torch.tensor([token[b] for b in split], dtype=torch.long)
    windows = (len(ids) - 1) // context
    total = 0.0
    with torch.no_grad():
        for start in range(0, windows, 32):
            rows = range(start, min(start + 32, windows))
            x = torch.stack([ids[i * context:(i + 1) * context] for i in rows])
            y = torch.stack([ids[i * context + 1:(i + 1) * context + 1] for i in rows])
            logits = net(x)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item() * len(rows)
    return total / windows


def onnx_logits(path, tokens, want):
    """ember's ONNX export of the same weights, run by ONNX Runtime on the first batch (int64 tokens), against
    ember's logits: within 1e-4 of the largest; None where onnxruntime is missing"""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = torch.from_numpy(session.run(None, {"input": tokens.numpy()})[0])
    err = (got - want).abs().max().item() if got.shape == want.shape else float("inf")
    check(err <= 1e-4 * max(want.abs().max().item(), 1.0),
          f"ember's ONNX export in ONNX Runtime: logits {tuple(got.shape)} differ from ember's by {err:.3g}")
    return err


def main():
    args = [a for a in sys.argv[1:]]
    val_tol = 1e-3
    if "--val-tolerance" in args:
        i = args.index("--val-tolerance")
        val_tol = float(args[i + 1])
        del args[i:i + 2]
    if len(args) not in (3, 4):
        sys.exit(__doc__)
    export, steps, batch = args[0], int(args[1]), int(args[2])
    limit = int(args[3]) if len(args) > 3 else 400_000
    if not os.path.isdir(FORTUNES):
        print(f"gpt_vs_torch: skipped: no {FORTUNES} (apt install fortunes; scripts/setup.sh --tests does)",
              file=sys.stderr)
        sys.exit(77)
    torch.set_num_threads(1)  # on a shared 2-core machine, faster than two threads that wait for each other
    with tempfile.TemporaryDirectory() as tmp:
        text = corpus(os.path.join(tmp, "fortunes.txt"), limit)
        run = subprocess.run([export, os.path.join(tmp, "fortunes.txt"), tmp, str(steps), str(batch)],
                             capture_output=True, text=True)
        if run.returncode == 77:
            print(f"gpt_vs_torch: skipped: {run.stderr.strip()}", file=sys.stderr)
            sys.exit(77)
        if not check(run.returncode == 0, f"gpt-export: {run.stderr.strip()}"):
            sys.exit(1)
        print(run.stdout.strip())
        state, io = load_file(os.path.join(tmp, "init.safetensors")), load_file(os.path.join(tmp, "io.safetensors"))
        vocab = state["lm_head.weight"].shape[0]
        net = GPT(vocab)
        net.load_state_dict(state, strict=True)
        x, y = io["x"].long(), io["y"].long()
        logits = net(x[0])
        err = (logits - io["logits0"]).abs().max().item()
        check(err <= 1e-5, f"the first batch's logits differ from ember's by {err:.3g} (bound 1e-5)")
        onnx_err = onnx_logits(os.path.join(tmp, "init.onnx"), x[0], io["logits0"])
        decay = [p for p in net.parameters() if p.dim() >= 2]
        no_decay = [p for p in net.parameters() if p.dim() < 2]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=2e-3, betas=(0.9, 0.99), eps=1e-8)
        worst_loss = worst_norm = 0.0
        for s in range(steps):
            logits = net(x[s])
            loss = F.cross_entropy(logits.reshape(-1, vocab), y[s].reshape(-1))
            opt.zero_grad()
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0).item()
            opt.step()
            if s >= STEP_CHECKS:  # past them the two runs part as any two orders of float sums do
                continue
            worst_loss = max(worst_loss, abs(loss.item() - io["loss"][s].item()))
            worst_norm = max(worst_norm, abs(norm - io["norm"][s].item()) / max(norm, 1e-6))
            if not check(abs(loss.item() - io["loss"][s].item()) <= 1e-4,
                         f"step {s + 1}: loss {loss.item():.6f} in PyTorch, {io['loss'][s].item():.6f} in ember"):
                break
        check(worst_norm <= 1e-3, f"the gradient norms differ by up to {worst_norm:.3g} (relative; bound 1e-3)")
        val = validation_loss(net, text)
        val_ember = io["val_loss"].item()
        check(abs(val - val_ember) <= val_tol,
              f"validation loss {val:.5f} in PyTorch, {val_ember:.5f} in ember (bound {val_tol})")
        if onnx_err is not None:
            print(f"gpt_vs_torch: ember's ONNX export (opset 13) in ONNX Runtime: the first batch's logits within "
                  f"{onnx_err:.1e} of ember's")
        print(f"gpt_vs_torch: strict load ok; first logits within {err:.1e}; {steps} steps of {batch} x 128 tokens: "
              f"the first {min(steps, STEP_CHECKS)} losses within {worst_loss:.1e} "
              f"({io['loss'][0].item():.4f} -> {io['loss'][steps - 1].item():.4f}), "
              f"gradient norms within {worst_norm:.1e}; validation loss {val_ember:.4f} in ember, {val:.4f} in "
              f"PyTorch {torch.__version__}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
