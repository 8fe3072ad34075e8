#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_tokenizer_vs_hf.py — ember's byte-level BPE tokenizer
(models/lm-tokenizer.c, lm-pretokenize.c) against Hugging Face's
`tokenizers`, built here from the same vocabulary and merges.

    test_tokenizer_vs_hf.py LM_TOKENIZE MODEL.gguf

SmolLM2's GGUF gives the vocabulary (49,152 tokens, 48,900 merges). For each
pre-tokenizer ember knows, a vocabulary-only GGUF is written with the
`gguf` package naming it, and the same tokenizer is made in `tokenizers`
the way the models' own tokenizer.json files make it:
  smollm     Digits(individual_digits) then ByteLevel's GPT-2 regex
  gpt2       ByteLevel's GPT-2 regex
  llama-bpe  Split on Llama 3's regex, then ByteLevel bytes; ignore_merges
  qwen2      Split on Qwen 2's regex, then ByteLevel bytes
with the control tokens as special tokens. Every string of a fixed set
(digits, runs of spaces and newlines, accents, CJK, emoji, code,
contractions in both cases, special tokens inside text) must give the same
ids, and decode back to itself. Exit 77 without the model or the packages.
"""
import os
import subprocess
import sys
import tempfile

try:
    import gguf
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
except ImportError as e:
    print(f"skipped: {e} (scripts/setup.sh --tests installs gguf and tokenizers into build/pyenv)")
    sys.exit(77)

LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")

STRINGS = [
    "Hello, world!",
    # long pieces that merge and merge again (a fortune's rule of dashes, an indented block): the merge
    # queue holds up to three entries a byte
    "-" * 700 + " " + "=" * 300 + " " * 900 + "x" + "\n" * 400,
    "What is the capital of France?",
    "  leading and trailing spaces   ",
    "tabs\tand\nnewlines\n\n\nand\r\nwindows line ends \n \n",
    "1234567890 3.14159 1,000,000 -42 x2 ab12cd 2026-11-28",
    "It's, I'm, we'll, they've, you'd, he's. IT'S, I'M, WE'LL, THEY'VE. 'tis 'S'",
    "Café, naïve, façade, São Paulo, Zürich, Ærøskøbing, Straße",
    "日本語のテキスト、中文文本，한국어 텍스트",
    "Emoji: 😀🎉👍🏽 👨‍👩‍👧 ❤️ 🇫🇷",
    "Arabic digits ٣٤٥ and superscripts x² y³ ½",
    "def f(x):\n    return x ** 2  # square\n\nif __name__ == '__main__':\n\tprint(f(3))\n",
    "for (int i = 0; i < n; i++) { a[i] += b[i]; }  /* C */",
    "<|im_start|>user\nHi there!<|im_end|>\n<|im_start|>assistant\n",
    "text<|endoftext|>more text <|im_end|>",
    "   \n\n   ",
    "a" * 300 + " " + "ab" * 200,
    "!!!???...,,,;;;:::---___===+++",
    "ALL CAPS SHOUTING and MiXeD CaSe WoRdS",
    "\u00a0non-breaking\u2003em space\u3000ideographic space",
    "URL: https://example.com/path?q=1&r=2#frag",
    "",
]


def read_vocab(path):
    r = gguf.GGUFReader(path)
    f = r.fields
    tokens = [bytes(f["tokenizer.ggml.tokens"].parts[i]).decode("utf-8") for i in f["tokenizer.ggml.tokens"].data]
    types = [int(f["tokenizer.ggml.token_type"].parts[i][0]) for i in f["tokenizer.ggml.token_type"].data]
    merges = [bytes(f["tokenizer.ggml.merges"].parts[i]).decode("utf-8") for i in f["tokenizer.ggml.merges"].data]
    return tokens, types, merges


def write_vocab(path, pre, tokens, types, merges):
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def hf_tokenizer(pre, tokens, types, merges):
    vocab = {t: i for i, t in reversed(list(enumerate(tokens)))}
    pairs = [tuple(m.split(" ", 1)) for m in merges]
    tok = Tokenizer(models.BPE(vocab=vocab, merges=pairs, ignore_merges=(pre == "llama-bpe")))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    bytes_only = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    if pre == "smollm":
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    elif pre == "gpt2":
        tok.pre_tokenizer = byte_level
    else:
        pattern = LLAMA3 if pre == "llama-bpe" else QWEN2
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False), bytes_only])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, kind in zip(tokens, types) if kind == 3])
    return tok


def main():
    lm_tokenize, model = sys.argv[1], sys.argv[2]
    if not os.path.exists(model):
        print(f"skipped: no {model} (scripts/fetch-model.sh fetches it)")
        return 77
    tokens, types, merges = read_vocab(model)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for pre in ("smollm", "gpt2", "llama-bpe", "qwen2"):
            path = os.path.join(tmp, f"{pre}.gguf")
            write_vocab(path, pre, tokens, types, merges)
            hf = hf_tokenizer(pre, tokens, types, merges)
            blob = b"".join(s.encode("utf-8") + b"\0" for s in STRINGS)
            r = subprocess.run([lm_tokenize, path], input=blob, capture_output=True)
            if r.returncode != 0:
                print(f"FAILED: {pre}: lm-tokenize exited {r.returncode}: {r.stderr.decode()}")
                failures += 1
                continue
            lines = r.stdout.decode().splitlines()
            if len(lines) != len(STRINGS):
                print(f"FAILED: {pre}: {len(lines)} lines for {len(STRINGS)} strings")
                failures += 1
                continue
            for s, line in zip(STRINGS, lines):
                fields = line.split()
                ours, roundtrip = [int(x) for x in fields[:-1]], fields[-1]
                want = hf.encode(s, add_special_tokens=False).ids
                if ours != want:
                    at = next((i for i, (a, b) in enumerate(zip(ours, want)) if a != b), min(len(ours), len(want)))
                    print(f"FAILED: {pre}: {s[:40]!r}: ids differ from token {at}: "
                          f"ours {ours[at:at + 6]} {[tokens[i] for i in ours[at:at + 6]]}, "
                          f"tokenizers' {want[at:at + 6]} {[tokens[i] for i in want[at:at + 6]]}")
                    failures += 1
                if roundtrip != "=":
                    print(f"FAILED: {pre}: {s[:40]!r} does not decode back to itself")
                    failures += 1
            print(f"{pre}: {len(STRINGS)} strings checked")
    if failures:
        print(f"{failures} failures")
        return 1
    print("ok: ember's ids are the tokenizers package's for every pre-tokenizer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
