#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_lm_vs_torch.py — ember's GGUF language models
(models/lm-llama.c) against a PyTorch twin.

    test_lm_vs_torch.py LM_RUN MODEL.gguf [--tiny-only] [--quick] [--only NAMES] [--tokens N] [--medium]

The twin is written here from the file's metadata alone, on weights the
`gguf` package dequantises: RMSNorm, RoPE as the file keeps q and k (llama:
pairs of neighbours; qwen2: halves), grouped-query causal attention,
SwiGLU, the output tied to the embedding when the file has no
output.weight. For each model:
  - ember's last-position scores after the prompt (through its key/value
    cache) within 1e-4 of the largest score of the twin's;
  - every position's scores of ember_lm_forward (no cache) the same;
  - N greedy tokens (32 by default) identical to the twin's, up to a
    tie: where the twin's best and ember's choice score within 1e-4 of
    the largest score of each other, float rounding may pick either, the
    texts part there and the rest is not compared.
The models: SmolLM2-135M-Instruct (Q4_1, Q8_0 embedding, tied), when
fetched, on a prompt tokenised by Hugging Face's `tokenizers`; and tiny
models written here with the `gguf` package, one per weight type (Q4_0,
Q4_1, Q8_0, Q4_K, Q6_K, F16, BF16, F32), a qwen2 one with biases and an
untied output (--quick: Q4_0, Q4_K, Q6_K and the qwen2 one, 4 tokens each,
for the simulated GPUs; --only Q4_K,qwen2: the tiny ones named, by type or
architecture, so that four simulated GPUs share them out). The device is $EMBER_TEST_DEVICE (cpu by default).
--medium runs ember at EMBER_MATMUL_MEDIUM (generation's quantised products
with 8-bit activations on the CPU, and bfloat16 products on AMX), held to
TOLERANCE_MEDIUM of the largest score instead of 1e-4, greedy ties judged
by it too: the bound of a model that rounds what it multiplies to 8 bits.
Exit 77 without PyTorch, numpy or gguf.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import gguf
except ImportError as e:
    print(f"skipped: {e} (scripts/setup.sh --tests installs them)")
    sys.exit(77)

torch.set_grad_enabled(False)
Q = gguf.GGMLQuantizationType
failures = []
TOLERANCE = 1e-4
TOLERANCE_MEDIUM = 3e-2


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


class Twin:
    """the model of a GGUF file, in PyTorch, from its metadata and dequantised tensors"""

    def __init__(self, path):
        r = gguf.GGUFReader(path)
        f = r.fields
        self.arch = f["general.architecture"].contents()
        a = self.arch

        def meta(key, default=None):
            return f[f"{a}.{key}"].contents() if f"{a}.{key}" in f else default

        self.blocks = meta("block_count")
        self.width = meta("embedding_length")
        self.heads = meta("attention.head_count")
        self.kv_heads = meta("attention.head_count_kv", self.heads)
        self.head_dim = self.width // self.heads
        self.rot = meta("rope.dimension_count", self.head_dim)
        self.eps = meta("attention.layer_norm_rms_epsilon", 1e-5)
        self.base = meta("rope.freq_base", 10000.0)
        self.w = {}
        for t in r.tensors:
            v = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            self.w[t.name] = torch.from_numpy(v.reshape([int(d) for d in reversed(t.shape)]).copy()).double()
        self.neox = self.arch == "qwen2"

    def rope(self, x, start):
        # x (T, H, D); angles in double, as ember's table
        t, h, d = x.shape
        pairs = self.rot // 2
        theta = self.base ** (-2.0 * torch.arange(pairs, dtype=torch.float64) / self.rot)
        ang = (start + torch.arange(t, dtype=torch.float64))[:, None] * theta[None, :]
        cos, sin = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
        y = x.clone()
        if self.neox:
            a, b = x[..., :pairs], x[..., pairs:2 * pairs]
            y[..., :pairs], y[..., pairs:2 * pairs] = a * cos - b * sin, a * sin + b * cos
        else:
            a, b = x[..., 0:2 * pairs:2], x[..., 1:2 * pairs:2]
            y[..., 0:2 * pairs:2], y[..., 1:2 * pairs:2] = a * cos - b * sin, a * sin + b * cos
        return y

    def norm(self, x, w):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps) * w

    def project(self, i, name, h):
        """h through block i's projection `name` (GGUF's: attn_q ... ffn_down), with its bias if any: a
        subclass adds LoRA here (test_lora_vs_torch.py)"""
        p = f"blk.{i}.{name}"
        y = h @ self.w[p + ".weight"].T
        return y + self.w[p + ".bias"] if p + ".bias" in self.w else y

    def forward(self, tokens):
        """every position's scores, (T, vocab), in double"""
        w, t = self.w, len(tokens)
        x = w["token_embd.weight"][torch.tensor(tokens)]
        mask = torch.full((t, t), float("-inf"), dtype=torch.float64).triu(1)
        group = self.heads // self.kv_heads
        for i in range(self.blocks):
            p = f"blk.{i}."
            h = self.norm(x, w[p + "attn_norm.weight"])
            q = self.rope(self.project(i, "attn_q", h).view(t, self.heads, self.head_dim), 0)
            k = self.rope(self.project(i, "attn_k", h).view(t, self.kv_heads, self.head_dim), 0)
            v = self.project(i, "attn_v", h).view(t, self.kv_heads, self.head_dim)
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
            s = torch.einsum("thd,shd->hts", q, k) / self.head_dim ** 0.5 + mask
            o = torch.einsum("hts,shd->thd", torch.softmax(s, -1), v).reshape(t, self.width)
            x = x + self.project(i, "attn_output", o)
            h = self.norm(x, w[p + "ffn_norm.weight"])
            g = torch.nn.functional.silu(self.project(i, "ffn_gate", h))
            x = x + self.project(i, "ffn_down", g * self.project(i, "ffn_up", h))
        x = self.norm(x, w["output_norm.weight"])
        return x @ w.get("output.weight", w["token_embd.weight"]).T

    def greedy(self, tokens, count):
        out = list(tokens)
        for _ in range(count):
            out.append(int(self.forward(out)[-1].argmax()))
        return out[len(tokens):]


def compare(lm_run, path, prompt, count, what):
    twin = Twin(path)
    with tempfile.TemporaryDirectory() as tmp:
        logits = os.path.join(tmp, "logits.f32")
        r = subprocess.run([lm_run, path, logits, str(count)] + [str(t) for t in prompt],
                           capture_output=True, text=True, timeout=1200)
        if r.returncode == 77:
            print(f"skipped: {r.stdout}{r.stderr}")
            sys.exit(77)
        if r.returncode != 0:
            check(False, f"{what}: lm-run exited {r.returncode}: {r.stderr.strip()[-400:]}")
            return
        for line in r.stderr.splitlines():  # the CUDA test double's count of chunked launches (simulated GPUs)
            if "grid's x limit" in line:
                print(line)
        device = next((line for line in r.stderr.splitlines() if " on " in line), "")
        if device:  # the model and the device it ran on (the simulated GPUs' tests check the kernel path)
            print(device.split(" on ", 1)[1] if what.startswith("tiny") else device)
        ours = np.fromfile(logits, dtype=np.float32)
        generated = [int(x) for x in r.stdout.split()]
        scores = twin.forward(prompt).numpy()
        largest = np.abs(scores[-1]).max()
        err = np.abs(ours - scores[-1]).max()
        check(err <= TOLERANCE * largest,
              f"{what}: the last position's scores differ from the twin's by {err:.2e}, over {TOLERANCE:g} of {largest:.2f}")
        # every position, through ember_lm_forward (no cache)
        r = subprocess.run([lm_run, path, logits, "-1"] + [str(t) for t in prompt], capture_output=True,
                           text=True, timeout=1200)
        every = np.fromfile(logits, dtype=np.float32).reshape(scores.shape) if r.returncode == 0 else None
        err_all = np.abs(every - scores).max() if every is not None else float("inf")
        check(err_all <= TOLERANCE * np.abs(scores).max(),
              f"{what}: ember_lm_forward's scores differ from the twin's by {err_all:.2e} ({r.stderr.strip()[-200:]})")
        want = twin.greedy(prompt, count)
        same = next((i for i, (a, b) in enumerate(zip(generated, want)) if a != b), len(want))
        tie = ""
        if same < len(want) and same < len(generated):
            # a tie the scores' own tolerance cannot break: the twin's best and ours within 1e-4 of the
            # largest score of each other there (SmolLM2's 31st token on PoCL: a gap of 1.6e-5 in 18.08),
            # which float rounding may settle either way; past it the texts part, so the rest is not compared
            at = twin.forward(prompt + want[:same])[-1]
            gap = float(at[want[same]] - at[generated[same]])
            if 0 <= gap <= TOLERANCE * float(at.abs().max()):
                tie = f", then a tie (the twin's two choices {gap:.1e} apart), the rest not compared"
        check(generated == want or tie != "",
              f"{what}: greedy tokens differ from the twin's at {same}: ours {generated[same:same + 5]}, "
              f"the twin's {want[same:same + 5]}")
        print(f"{what}: scores within {err:.1e} (all positions {err_all:.1e}) of the largest {largest:.1f}; "
              f"{same} of {count} greedy tokens the twin's{tie}")


def write_tiny(path, arch, qtype, rng, untied=False, biases=False):
    """a random tiny model: 2 blocks, width 256 (K-quants' blocks are 256), 4 query and 2 key/value heads,
    a byte-level vocabulary of 256 + 2 special tokens"""
    c, ffn, heads, kv, vocab = 256, 512, 4, 2, 258
    w = gguf.GGUFWriter(path, arch)
    w.add_block_count(2)
    w.add_embedding_length(c)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv)
    w.add_context_length(256)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    tokens = [chr(cc) for _, cc in sorted(zip(bs, cs))] + ["<|im_start|>", "<|im_end|>"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2" if arch == "qwen2" else "smollm")
    w.add_token_list(tokens)
    w.add_token_types([1] * 256 + [3, 3])
    w.add_token_merges(["! !"])  # one merge, whose result is not a token: ignored (an empty array has no type)
    w.add_eos_token_id(257)

    def add(name, shape, quantised=True, scale=0.05):
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        t = qtype if quantised else Q.F32
        if t in (Q.Q4_K, Q.Q6_K):  # the package cannot quantise these: random blocks, scales near the data's
            block, size = gguf.GGML_QUANT_SIZES[t]
            raw = rng.integers(0, 256, size=(shape[0], shape[1] // block, size), dtype=np.uint8)
            d = np.full((shape[0], shape[1] // block, 1), scale / 8, dtype=np.float16).view(np.uint8)
            if t == Q.Q4_K:
                raw[..., 0:2] = d
                raw[..., 2:4] = d
            else:
                raw[..., size - 2:size] = d
                raw[..., 192:208] = rng.integers(-8, 8, size=(shape[0], shape[1] // block, 16)).astype(np.int8).view(np.uint8)
            w.add_tensor(name, raw.reshape(shape[0], -1), raw_dtype=t)
        elif t in (Q.F32,):
            w.add_tensor(name, x)
        elif t == Q.F16:
            w.add_tensor(name, x.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(x, t), raw_dtype=t)

    add("token_embd.weight", (vocab, c), scale=1.0)
    add("output_norm.weight", (c,), quantised=False, scale=0.0)
    if untied:
        add("output.weight", (vocab, c))
    for i in range(2):
        p = f"blk.{i}."
        for name, shape in (("attn_q", (c, c)), ("attn_k", (kv * 64, c)), ("attn_v", (kv * 64, c)),
                            ("attn_output", (c, c)), ("ffn_gate", (ffn, c)), ("ffn_up", (ffn, c)),
                            ("ffn_down", (c, ffn))):
            add(p + name + ".weight", shape)
        if biases:
            for name, n_out in (("attn_q", c), ("attn_k", kv * 64), ("attn_v", kv * 64)):
                add(p + name + ".bias", (n_out,), quantised=False, scale=0.1)
        add(p + "attn_norm.weight", (c,), quantised=False, scale=0.0)
        add(p + "ffn_norm.weight", (c,), quantised=False, scale=0.0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def norms_to_one(path):
    """RMSNorm weights of 1 (add() wrote zeros for them, to keep write_tiny short): rewritten in place"""
    r = gguf.GGUFReader(path, "r+")
    for t in r.tensors:
        if "norm" in t.name:
            t.data[:] = 1.0


def main():
    global TOLERANCE
    args = sys.argv[1:]
    if "--medium" in args:
        os.environ["EMBER_TEST_MATMUL_PRECISION"] = "medium"
        TOLERANCE = TOLERANCE_MEDIUM
    lm_run, model = args[0], args[1]
    count = int(args[args.index("--tokens") + 1]) if "--tokens" in args else 32
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        types = (Q.Q4_0, Q.Q4_K, Q.Q6_K) if "--quick" in args else (Q.Q4_0, Q.Q4_1, Q.Q8_0, Q.Q4_K, Q.Q6_K, Q.F16,
                                                                    Q.BF16, Q.F32)
        tiny = [("llama", t, False, False) for t in types] + [("qwen2", Q.Q8_0, True, True)]
        if "--only" in args:
            only = args[args.index("--only") + 1].split(",")
            tiny = [m for m in tiny if (m[1].name if m[0] == "llama" else m[0]) in only]
            assert len(tiny) == len(only), f"--only {only}: not all of them are among the tiny models"
        for arch, qtype, untied, biases in tiny:
            path = os.path.join(tmp, f"tiny-{arch}-{qtype.name}.gguf")
            write_tiny(path, arch, qtype, rng, untied, biases)
            norms_to_one(path)
            compare(lm_run, path, [72, 101, 108, 108, 111, 44, 32, 119, 257], 4 if "--quick" in args else 8,
                    f"tiny {arch} {qtype.name}")
        if "--tiny-only" not in args:
            if not os.path.exists(model):
                print(f"skipped SmolLM2: no {model} (scripts/fetch-model.sh fetches it)")
            else:
                sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
                from test_tokenizer_vs_hf import hf_tokenizer, read_vocab
                tokens, types, merges = read_vocab(model)
                hf = hf_tokenizer("smollm", tokens, types, merges)
                text = ("<|im_start|>user\nWhat is the capital of France? Answer in one sentence.<|im_end|>\n"
                        "<|im_start|>assistant\n")
                compare(lm_run, model, hf.encode(text, add_special_tokens=False).ids, count, "SmolLM2-135M")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
