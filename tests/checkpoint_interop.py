#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/checkpoint_interop.py — ember checkpoints against Python's safetensors and PyTorch.

    checkpoint_interop.py path/to/test_checkpoint

Both directions, with simplecnn's parameters (conv1.weight (16, 1, 3, 3),
conv1.bias (16), fc.weight (10, 3136), fc.bias (10)):

  ember -> Python   `test_checkpoint write` saves a checkpoint and the raw
                    values; safetensors.numpy reads it back bit for bit, with
                    its metadata, and (when torch imports) a PyTorch module
                    with the same attributes takes it with
                    load_state_dict(strict=True).
  Python -> ember   files written by safetensors.numpy (and safetensors.torch
                    from a fresh PyTorch module) load into ember's set through
                    `test_checkpoint check`, bit for bit; an F16 tensor is
                    refused with a message naming it.

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

    # a tensor of another dtype is refused, by name
    half = dict(tensors, **{"conv1.bias": tensors["conv1.bias"].astype(np.float16)})
    save_file(half, os.path.join(tmp, "half.safetensors"))
    write_raw(os.path.join(tmp, "half.f32"), tensors)
    done = run_ember(binary, "check", os.path.join(tmp, "half.safetensors"), os.path.join(tmp, "half.f32"))
    check(done.returncode != 0 and "conv1.bias" in done.stderr and "F16" in done.stderr,
          f"an F16 tensor was not refused by name: rc {done.returncode}, {done.stderr.strip()!r}")


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
