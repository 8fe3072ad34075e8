#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_checkpoint_interop.py — ember checkpoints against Python's safetensors and PyTorch.

    test_checkpoint_interop.py path/to/test_checkpoint

Both directions, with simplecnn's parameters (conv1.weight (16, 1, 3, 3),
conv1.bias (16), fc.weight (10, 3136), fc.bias (10)):

  ember -> Python   `test_checkpoint write` saves a checkpoint and the raw
                    values; safetensors.numpy reads it back bit for bit, with
                    its metadata, and (when torch imports) a PyTorch module
                    with the same attributes takes it with
                    load_state_dict(strict=True).
  Python -> ember   files written by safetensors.numpy (and safetensors.torch
                    from a fresh PyTorch module) load into ember's set through
                    `test_checkpoint check`, bit for bit; F16, BF16, F64 and
                    I64 tensors (what PyTorch's state_dicts hold) load as
                    float32, and what float32 cannot hold, another dtype and a
                    torch.save pickle are refused with messages naming them.

Needs numpy and safetensors; exits 77 (CTest's "skipped") without them.
torch is optional. To provide them:

    python3 -m venv --system-site-packages build/pyenv
    build/pyenv/bin/pip install safetensors numpy
    cmake -B build -DEMBER_PYTHON=$PWD/build/pyenv/bin/python
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file
except ImportError as err:
    print(f"checkpoint_interop: skipped: {err} (install safetensors and numpy into the "
          "Python that EMBER_PYTHON names; see tests/CMakeLists.txt)", file=sys.stderr)
    sys.exit(77)

SHAPES = {  # in ember's declaration order, which the raw values follow
    "conv1.weight": (16, 1, 3, 3),
    "conv1.bias": (16,),
    "fc.weight": (10, 3136),
    "fc.bias": (10,),
}
NOTE = "ember \"checkpoint\" \\ tab\there, newline\n, \u00e9 \u2713 \U0001F600"

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"checkpoint_interop: FAIL: {message}", file=sys.stderr)
    return cond


def raw_values(path):
    """The values file: every parameter, little-endian F32, back to back."""
    flat = np.fromfile(path, dtype="<f4")
    out, at = {}, 0
    for name, shape in SHAPES.items():
        n = int(np.prod(shape))
        out[name] = flat[at:at + n].reshape(shape)
        at += n
    check(at == flat.size, f"{path} holds {flat.size} values, wanted {at}")
    return out


def write_raw(path, tensors):
    np.concatenate([np.asarray(tensors[name], dtype="<f4").ravel() for name in SHAPES]).tofile(path)


def run_ember(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True)


def ember_loads(binary, tmp, name, tensors, what):
    """ember's `check` loads `name` and finds `tensors` there."""
    values = os.path.join(tmp, name + ".f32")
    write_raw(values, tensors)
    done = run_ember(binary, "check", os.path.join(tmp, name), values)
    check(done.returncode == 0, f"ember could not load {what}: {done.stderr.strip()}")


def ember_to_python(binary, tmp):
    path, values = os.path.join(tmp, "ember.safetensors"), os.path.join(tmp, "ember.f32")
    done = run_ember(binary, "write", path, values)
    if not check(done.returncode == 0, f"test_checkpoint write failed: {done.stderr.strip()}"):
        return None
    want = raw_values(values)
    loaded = load_file(path)
    check(set(loaded) == set(SHAPES), f"names {sorted(loaded)}")
    for name, shape in SHAPES.items():
        got = loaded.get(name)
        if check(got is not None, f"{name} missing"):
            check(got.dtype == np.float32 and got.shape == shape, f"{name} is {got.dtype} {got.shape}")
            check(np.array_equal(got.view(np.uint32), want[name].view(np.uint32)), f"{name} values differ")
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata()
    check(meta == {"format": "pt", "model": "simplecnn", "note": NOTE}, f"metadata {meta!r}")
    with open(path, "rb") as f:
        header = int.from_bytes(f.read(8), "little")
    check((8 + header) % 8 == 0, f"the data section starts at byte {8 + header}, not a multiple of 8")
    return path, want


def python_to_ember(binary, tmp):
    rng = np.random.default_rng(7)
    tensors = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in SHAPES.items()}
    # odd values cross bit for bit too: the largest float, a negative zero, a
    # denormal, the smallest normal
    tensors["conv1.bias"][:4] = [np.finfo(np.float32).max, -0.0, 1e-45, np.finfo(np.float32).tiny]
    save_file(tensors, os.path.join(tmp, "numpy.safetensors"), metadata={"from": "numpy"})
    ember_loads(binary, tmp, "numpy.safetensors", tensors, "a file from safetensors.numpy")

    # a NaN or an infinity (a diverged run) is refused, naming the tensor
    for bad in (np.nan, np.inf):
        broken = dict(tensors, **{"fc.weight": tensors["fc.weight"].copy()})
        broken["fc.weight"][3, 5] = bad
        save_file(broken, os.path.join(tmp, "bad.safetensors"))
        write_raw(os.path.join(tmp, "bad.f32"), broken)
        done = run_ember(binary, "check", os.path.join(tmp, "bad.safetensors"), os.path.join(tmp, "bad.f32"))
        check(done.returncode != 0 and "fc.weight" in done.stderr,
              f"a file holding {bad} was not refused by name: rc {done.returncode}, {done.stderr.strip()!r}")

    # what PyTorch's state_dicts hold besides F32 loads as float32: F16 and
    # F64 exactly (the values below are float16's, which both hold), I64
    # from -2^24 to 2^24
    exact = {k: np.clip(v, -1e4, 1e4).astype(np.float16).astype(np.float32) for k, v in tensors.items()}
    write_raw(os.path.join(tmp, "exact.f32"), exact)
    for dtype in (np.float16, np.float64):
        other = dict(exact, **{"conv1.bias": exact["conv1.bias"].astype(dtype),
                               "fc.weight": exact["fc.weight"].astype(dtype)})
        save_file(other, os.path.join(tmp, "other.safetensors"))
        done = run_ember(binary, "check", os.path.join(tmp, "other.safetensors"), os.path.join(tmp, "exact.f32"))
        check(done.returncode == 0, f"{np.dtype(dtype).name} tensors did not load: {done.stderr.strip()!r}")
    counts = dict(exact, **{"conv1.bias": np.arange(-8, 8, dtype=np.int64) * (1 << 20)})
    write_raw(os.path.join(tmp, "counts.f32"), dict(counts, **{"conv1.bias": counts["conv1.bias"].astype(np.float32)}))
    save_file(counts, os.path.join(tmp, "counts.safetensors"))
    done = run_ember(binary, "check", os.path.join(tmp, "counts.safetensors"), os.path.join(tmp, "counts.f32"))
    check(done.returncode == 0, f"I64 values within 2^24 did not load: {done.stderr.strip()!r}")
    # an integer float32 cannot hold exactly, a double beyond its range, a
    # dtype ember does not convert: each refused, naming the tensor
    too_big = dict(counts, **{"conv1.bias": counts["conv1.bias"].copy()})
    too_big["conv1.bias"][5] = (1 << 24) + 1
    huge = dict(exact, **{"fc.bias": np.full(10, 1e300)})
    bytes_ = dict(exact, **{"conv1.bias": np.zeros(16, dtype=np.uint8)})
    for bad, name, word in ((too_big, "conv1.bias", "index 5"), (huge, "fc.bias", "index 0"),
                            (bytes_, "conv1.bias", "U8")):
        save_file(bad, os.path.join(tmp, "bad.safetensors"))
        done = run_ember(binary, "check", os.path.join(tmp, "bad.safetensors"), os.path.join(tmp, "exact.f32"))
        check(done.returncode != 0 and name in done.stderr and word in done.stderr,
              f"{name} ({word}) was not refused by name: rc {done.returncode}, {done.stderr.strip()!r}")


def with_torch(binary, tmp, ember_file, want):
    try:
        import torch
        from torch import nn
        import safetensors.torch
    except ImportError as err:
        print(f"checkpoint_interop: torch not importable ({err}): load_state_dict not tried")
        return

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
            self.fc = nn.Linear(3136, 10)

    model = SimpleCNN()
    model.load_state_dict(safetensors.torch.load_file(ember_file), strict=True)
    for name, param in model.state_dict().items():
        check(torch.equal(param, torch.from_numpy(want[name].astype(np.float32))), f"torch's {name} differs")

    torch.manual_seed(0)
    fresh = SimpleCNN()
    state = {k: v.contiguous() for k, v in fresh.state_dict().items()}
    safetensors.torch.save_file(state, os.path.join(tmp, "torch.safetensors"), metadata={"format": "pt"})
    ember_loads(binary, tmp, "torch.safetensors", {k: v.numpy() for k, v in state.items()},
                "a file from safetensors.torch")
    # in bfloat16, as a model kept in half precision is saved
    halved = {k: v.to(torch.bfloat16) for k, v in state.items()}
    safetensors.torch.save_file(halved, os.path.join(tmp, "bf16.safetensors"))
    write_raw(os.path.join(tmp, "bf16.f32"), {k: v.float().numpy() for k, v in halved.items()})
    done = run_ember(binary, "check", os.path.join(tmp, "bf16.safetensors"), os.path.join(tmp, "bf16.f32"))
    check(done.returncode == 0, f"a bfloat16 state_dict did not load: {done.stderr.strip()!r}")
    # a pickle from torch.save is refused, with the line that converts it
    torch.save(state, os.path.join(tmp, "model.pt"))
    done = run_ember(binary, "check", os.path.join(tmp, "model.pt"), os.path.join(tmp, "bf16.f32"))
    check(done.returncode != 0 and "pickle" in done.stderr and "save_file(torch.load(" in done.stderr,
          f"a torch.save pickle was not refused with advice: rc {done.returncode}, {done.stderr.strip()!r}")
    print(f"checkpoint_interop: torch {torch.__version__}: load_state_dict(strict=True) took ember's file")


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="ember-interop-") as tmp:
        written = ember_to_python(binary, tmp)
        python_to_ember(binary, tmp)
        if written:
            with_torch(binary, tmp, *written)
    if failures:
        print(f"checkpoint_interop: {failures} check(s) failed", file=sys.stderr)
        return 1
    print("checkpoint_interop: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
