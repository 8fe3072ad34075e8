#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_models_vs_torch.py — ember's built-in models against the same networks written in PyTorch.

    test_models_vs_torch.py path/to/model-export path/to/ember [DATA_DIR]

For every model of the zoo, model-export saves an ember checkpoint
(after three training forwards, so BatchNorm's running statistics have
moved) and the logits of a fixed batch in evaluation and training mode. The
PyTorch module below, written as a PyTorch user would, must

  - have exactly the checkpoint's names and shapes: load_state_dict(strict=True)
  - have as many parameters as ember counts
  - give the same logits in eval() mode, and in train() mode (BatchNorm's
    batch statistics) except for the model with Dropout, whose masks differ

Then resnet8 is trained by `ember train` on the first 2,000 images of
Fashion-MNIST (DATA_DIR, default Debian's /usr/share/datasets/fashion-mnist)
and evaluated on 1,000 test images by `ember eval` and by PyTorch with the
checkpoint loaded strictly: the accuracy must be the same.

Needs torch and safetensors; exits 77 (CTest's "skipped") without them.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    from safetensors.torch import load_file
except ImportError as err:
    print(f"models_vs_torch: skipped: {err} (install torch and safetensors into the Python that "
          "EMBER_PYTHON names; see tests/CMakeLists.txt)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_subset import read_idx, subset  # noqa: E402
from torch_zoo import HAS_DROPOUT, ZOO, ResNet8  # noqa: E402

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"models_vs_torch: FAIL: {message}", file=sys.stderr)
    return cond


from torch_zoo import HAS_DROPOUT, ZOO, ResNet8  # noqa: E402


def close(got, want, tol=1e-4):
    err = (got - want).abs().max().item()
    return err <= tol * max(want.abs().max().item(), 1.0), err


def compare_model(export, tmp, name, cls):
    ck, io = os.path.join(tmp, f"{name}.safetensors"), os.path.join(tmp, f"{name}-io.safetensors")
    run = subprocess.run([export, name, ck, io], capture_output=True, text=True)
    if run.returncode == 77:
        print(f"models_vs_torch: skipped: {run.stderr.strip()}", file=sys.stderr)
        sys.exit(77)
    if not check(run.returncode == 0, f"model-export {name}: {run.stderr.strip()}"):
        return
    state, outputs = load_file(ck), load_file(io)
    torch.manual_seed(0)
    net = cls()
    want = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    have = {k: tuple(v.shape) for k, v in state.items()}
    if not check(want == have, f"{name}: PyTorch's names and shapes differ from ember's: "
                 f"missing {sorted(set(want) - set(have))}, unexpected {sorted(set(have) - set(want))}, "
                 f"shapes {[(k, want[k], have[k]) for k in want if k in have and want[k] != have[k]]}"):
        return
    net.load_state_dict(state, strict=True)
    params = sum(p.numel() for p in net.parameters())
    buffers_kept = [k for k in state if k.endswith("num_batches_tracked")]
    check(all(net.state_dict()[k].dtype == torch.int64 for k in buffers_kept),
          f"{name}: num_batches_tracked should load as PyTorch's int64")
    ember_params = sum(v.numel() for k, v in state.items() if not k.endswith(("running_mean", "running_var",
                                                                              "num_batches_tracked")))
    check(params == ember_params, f"{name}: PyTorch counts {params} parameters, ember {ember_params}")
    x = outputs["x"]
    with torch.no_grad():
        net.eval()
        ok_eval, err_eval = close(net(x), outputs["eval"])
        net.train()
        ok_train, err_train = close(net(x), outputs["train"])
    check(ok_eval, f"{name}: eval() logits differ from ember's by {err_eval:.3g}")
    line = f"{name:10} {params:7} parameters, strict load ok, eval logits within {err_eval:.1e}"
    if name in HAS_DROPOUT:
        line += ", train mode not compared (dropout masks differ)"
    else:
        check(ok_train, f"{name}: train() logits differ from ember's by {err_train:.3g}")
        line += f", train logits within {err_train:.1e}"
    print(line)


def trained_resnet(ember, tmp, data_dir):
    """ember trains resnet8; PyTorch, loading the checkpoint strictly, scores what ember scores."""
    small = os.path.join(tmp, "fashion-small")
    subset(data_dir, small, 2000, 1000)
    ck = os.path.join(tmp, "resnet8-trained.safetensors")
    common = ["--model", "resnet8", "--data", "fashion-mnist", "--data-dir", small, "--device", "cpu"]
    run = subprocess.run([ember, "train", *common, "--epochs", "1", "--seed", "0", "--quiet", "--no-eval",
                          "--save", ck], capture_output=True, text=True)
    if not check(run.returncode == 0, f"ember train: {run.stderr.strip()}"):
        return
    run = subprocess.run([ember, "eval", *common, "--load", ck, "--json"], capture_output=True, text=True)
    if not check(run.returncode == 0, f"ember eval: {run.stderr.strip()}"):
        return
    ember_acc = json.loads(run.stdout)["test_acc"]
    dims, pixels = read_idx(os.path.join(small, "t10k-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(small, "t10k-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(np.frombuffer(pixels, dtype=np.uint8).reshape(dims[0], 1, 28, 28).astype(np.float32) / 255)
    y = torch.from_numpy(np.frombuffer(labels, dtype=np.uint8).astype(np.int64))
    net = ResNet8()
    net.load_state_dict(load_file(ck), strict=True)
    net.eval()
    with torch.no_grad():
        torch_acc = (net(x).argmax(1) == y).float().mean().item()
    check(abs(torch_acc - ember_acc) < 0.5 / len(y),
          f"trained resnet8: PyTorch scores {torch_acc:.4f}, ember {ember_acc:.4f}")
    print(f"trained resnet8 (2,000 images, one epoch): test accuracy {ember_acc:.4f} in ember, "
          f"{torch_acc:.4f} in PyTorch {torch.__version__} with the checkpoint loaded strictly")


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    export, ember = sys.argv[1], sys.argv[2]
    data_dir = sys.argv[3] if len(sys.argv) > 3 else "/usr/share/datasets/fashion-mnist"
    torch.set_num_threads(2)
    with tempfile.TemporaryDirectory() as tmp:
        for name, cls in ZOO.items():
            compare_model(export, tmp, name, cls)
        if check(os.path.exists(os.path.join(data_dir, "t10k-images-idx3-ubyte.gz")),
                 f"no Fashion-MNIST in {data_dir}: install Debian's dataset-fashion-mnist"):
            trained_resnet(ember, tmp, data_dir)
    if failures:
        print(f"models_vs_torch: {failures} failure(s)", file=sys.stderr)
        return 1
    print("models_vs_torch: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
