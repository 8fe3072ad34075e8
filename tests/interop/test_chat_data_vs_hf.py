#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_chat_data_vs_hf.py — a chat's training data (models/lm-chat.c) against the way
Hugging Face's stack makes it.

    test_chat_data_vs_hf.py LM_CHAT_DATA MODEL.gguf

A JSON Lines file of conversations (one- and many-turn, with and without a system message, escapes,
accents, emoji, keys ember passes over, one with no reply) is rendered here with SmolLM2's own chat
template, read from the GGUF file and run by Jinja as transformers' apply_chat_template runs it, and
tokenised by `tokenizers` built from the file's vocabulary (test_tokenizer_vs_hf's). The labels are TRL's
assistant-only loss: a token is taught when it starts inside an assistant's reply or the <|im_end|> that
closes it, -100 otherwise. ember's tokens and labels, both splits (the last tenth of the conversations
validates), must be these. Malformed files must be refused naming the line. Exit 77 without the model,
gguf, tokenizers or jinja2.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jinja2.sandbox
    from test_tokenizer_vs_hf import hf_tokenizer, read_vocab
except ImportError as e:
    print(f"skipped: {e} (scripts/setup.sh --tests installs gguf, tokenizers and jinja2 into build/pyenv)")
    sys.exit(77)
import gguf  # noqa: E402 (test_tokenizer_vs_hf has checked it is there)

CONTEXT = 16
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def conversations():
    talks = []
    for i in range(30):
        user = {"role": "user", "content": f"Question {i}: what is {i} + {i}?"}
        reply = {"role": "assistant", "content": f"{i} + {i} is {2 * i}."}
        kind = i % 6
        if kind == 0:
            talks.append({"messages": [user, reply]})
        elif kind == 1:  # its own system message: the template's default is not added
            talks.append({"messages": [{"role": "system", "content": "Answer in French."}, user,
                                       {"role": "assistant", "content": f"Ça fait {2 * i}, naïvement 😀."}]})
        elif kind == 2:  # many turns
            talks.append({"messages": [user, reply, {"role": "user", "content": "And twice that?"},
                                       {"role": "assistant", "content": f"{4 * i}.\n\tThat's \"all\" \\o/"}]})
        elif kind == 3:  # keys ember passes over, around and inside the messages
            talks.append({"id": i, "meta": {"tags": ["a", 1.5e3, None, True, {"deep": [[]]}]},
                          "messages": [dict(user, name="ann"), dict(reply, weight=1)]})
        elif kind == 4:  # no reply: nothing taught
            talks.append({"messages": [user]})
        else:
            talks.append({"messages": [{"role": "user", "content": "日本語で?"},
                                       {"role": "assistant", "content": "はい、" + "word " * i}]})
    return talks


def template_of(model):
    f = gguf.GGUFReader(model).fields["tokenizer.chat_template"]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


def render(template, messages):
    """transformers' apply_chat_template: a sandboxed Jinja environment, trim_blocks and lstrip_blocks"""
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=messages, add_generation_prompt=False,
                                            bos_token="<|im_start|>", eos_token="<|im_end|>")


def labelled(template, hf, talk):
    """a conversation's tokens and TRL's labels: the assistant's replies and the <|im_end|> after each"""
    messages = talk["messages"]
    text = render(template, messages)
    spans = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        start = len(render(template, messages[:i]) + "<|im_start|>assistant\n")
        check(text[start:start + len(m["content"])] == m["content"], "the reply is not where the template puts it")
        spans.append((start, start + len(m["content"]) + len("<|im_end|>")))
    enc = hf.encode(text, add_special_tokens=False)
    labels = [t if any(a <= off[0] < b for a, b in spans) else -100 for t, off in zip(enc.ids, enc.offsets)]
    return enc.ids, labels


def refused(lm_chat_data, model, tmp, name, content, want):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(content)
    context = 128 if name == "short.jsonl" else CONTEXT
    r = subprocess.run([lm_chat_data, model, path, str(context)], capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and all(w in r.stderr for w in want),
          f"{name}: exit {r.returncode}, {r.stderr.strip()[-300:]!r}, not one naming {want}")


def main():
    lm_chat_data, model = sys.argv[1], sys.argv[2]
    if not os.path.exists(model):
        print(f"skipped: no {model} (scripts/fetch-model.sh fetches it)")
        return 77
    tokens, types, merges = read_vocab(model)
    hf = hf_tokenizer("smollm", tokens, types, merges)
    template = template_of(model)
    talks = conversations()
    stream, labels, starts = [], [], []
    for talk in talks:
        starts.append(len(stream))
        ids, lab = labelled(template, hf, talk)
        stream += ids
        labels += lab
    held = max(1, len(talks) // 10)
    splits = {"training": (0, starts[-held]), "validation": (starts[-held], len(stream))}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "chat.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for talk in talks:  # with ensure_ascii: the non-ASCII as \\u escapes, emoji as surrogate pairs
                f.write(json.dumps(talk) + ("\r\n" if talk.get("id") == 3 else "\n\n"))
        r = subprocess.run([lm_chat_data, model, path, str(CONTEXT)], capture_output=True, text=True, timeout=120)
        if r.returncode == 77:
            print(f"skipped: {r.stderr.strip()}")
            return 77
        check(r.returncode == 0, f"lm-chat-data exited {r.returncode}: {r.stderr.strip()[-400:]}")
        lines = r.stdout.splitlines() if r.returncode == 0 else []
        for k, (name, (a, b)) in enumerate(splits.items()):
            if len(lines) < 2 * k + 2:
                check(False, f"{name}: no lines")
                continue
            ours_x = [int(v) for v in lines[2 * k].split()]
            ours_y = [int(v) for v in lines[2 * k + 1].split()]
            n = (b - a - 1) // CONTEXT * CONTEXT  # the windows side by side
            want_x, want_y = stream[a:a + n], labels[a + 1:a + n + 1]
            at = next((i for i, (p, q) in enumerate(zip(ours_x, want_x)) if p != q), None)
            check(len(ours_x) == n and at is None,
                  f"{name}: {len(ours_x)} tokens for {n}" + ("" if at is None else
                  f"; from token {at}: ours {[tokens[i] for i in ours_x[at:at + 6]]}, "
                  f"Hugging Face's {[tokens[i] for i in want_x[at:at + 6]]}"))
            at = next((i for i, (p, q) in enumerate(zip(ours_y, want_y)) if p != q), None)
            check(len(ours_y) == n and at is None,
                  f"{name}: labels differ" + ("" if at is None else
                  f" from target {at}: ours {ours_y[at:at + 8]}, TRL's {want_y[at:at + 8]}"))
            taught = sum(v != -100 for v in want_y)
            print(f"{name}: {n} tokens, {taught} of them taught, the same as Hugging Face's")
            check(0 < taught < n, f"{name}: {taught} of {n} targets taught")

        # refused, naming the line (and the byte where there is one)
        good = json.dumps(talks[0]).encode()
        for name, content, want in [
            ("not-json.jsonl", good + b"\n{\"messages\": [}\n", ["line 2", "bad conversation at byte"]),
            ("no-messages.jsonl", good + b"\n" + good + b"\n{\"text\": \"hi\"}\n", ["line 3", "no \"messages\""]),
            ("content-number.jsonl", b'{"messages": [{"role": "user", "content": 5}]}\n',
             ["line 1", "message 1's \"content\" is '5', not a string"]),
            ("no-role.jsonl", b'{"messages": [{"content": "hi"}]}\n', ["line 1", "message 1 has no \"role\""]),
            ("two-objects.jsonl", good + b" " + good + b"\n", ["line 1", "one a line"]),
            ("bad-utf8.jsonl", b'{"messages": [{"role": "user", "content": "caf\xe9"}]}\n', ["line 1", "UTF-8"]),
            ("lone-surrogate.jsonl", b'{"messages": [{"role": "user", "content": "\\udc00"}]}\n',
             ["line 1", "surrogate"]),
            ("deep.jsonl", b'{"x": ' + b"[" * 100 + b"]" * 100 + b', "messages": []}\n', ["line 1", "nested more than"]),
            ("no-reply.jsonl", b'{"messages": [{"role": "user", "content": "hi"}]}\n' * 40, ["no assistant message"]),
            ("empty.jsonl", b"\n \n", ["no conversation"]),
            ("short.jsonl", good + b"\n" + good + b"\n", ["must each hold a window"]),
        ]:
            refused(lm_chat_data, model, tmp, name, content, want)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok: ember's chat data is Hugging Face's rendering with TRL's labels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
