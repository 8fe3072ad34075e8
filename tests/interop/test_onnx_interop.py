#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_onnx_interop.py — ONNX both ways, against the onnx package's checker and ONNX Runtime.

    test_onnx_interop.py path/to/ember [DATA_DIR]

ember -> ONNX: every model of the zoo and a model file written here (with
    the layers the zoo leaves out: GELU and its tanh form, ReLU6, HardSwish,
    Mish, HardSigmoid, LeakyReLU, Sigmoid, average pooling, LayerNorm and RMSNorm, a constant pad,
    BatchNorm on features, a strided convolution without bias, a residual
    block without projection) is trained for a few steps on Fashion-MNIST
    (DATA_DIR, default Debian's), exported with `ember export`, checked by
    onnx.checker (full_check) and run by ONNX Runtime on 100 test images: the
    logits must equal `ember predict --logits --output` within 1e-5, and the
    class names must be in the file's metadata.
PyTorch -> ONNX -> ember: the PyTorch twins of the zoo (tests/interop/torch_zoo.py)
    and a torchvision-style ResNet-18 for 3x32x32, with random weights and
    BatchNorm statistics, exported by torch.onnx.export (dynamic batch), and
    a network using x.view(N, -1), GELU, LeakyReLU and a MatMul, and one
    padded by F.pad and nn.ZeroPad2d (opsets 11 and 17): ember's
    logits (`ember predict --load model.onnx`) equal ONNX Runtime's within
    1e-4. An operator ember lacks exits 3 naming the node and the operator;
    several are listed at once, each with its PyTorch scope and name.
PyTorch's state_dict: ResNet-8's, saved by safetensors.torch (its
    num_batches_tracked int64), loads into `ember eval --model resnet8`;
    `ember predict --model resnet8` gives PyTorch's logits within 1e-4, and
    so does ONNX Runtime on `ember export --model resnet8`'s file; without
    --model, predict asks for it, a wrong --classes names the tensor, and
    nn.DataParallel's "module." names get a hint.
Fine-tuning: a SimpleCNN trained a little in PyTorch and exported to ONNX
    is trained on by `ember train --init`: its test accuracy rises;
    --init-skip fc leaves the head fresh; another model's mismatch is named.

Needs torch, onnx, onnxruntime and safetensors; exits 77 (CTest's
"skipped") without them. About 40 s on two cores.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from safetensors.torch import save_file
except ImportError as err:
    print(f"onnx_interop: skipped: {err} (scripts/setup.sh --tests installs onnx and onnxruntime into build/pyenv)",
          file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_subset import read_idx, subset  # noqa: E402
from torch_zoo import ZOO, BasicBlock  # noqa: E402

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"onnx_interop: FAIL: {message}", file=sys.stderr)
    return cond


def run(*args, expect=0):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if expect is not None and done.returncode != expect:
        check(False, f"{' '.join(map(str, args))} exited {done.returncode}: {done.stderr.strip()[-800:]}")
    return done


USER_MODEL = """# every layer the zoo leaves out
input 1x28x28
stem: conv2d 8 kernel=3 stride=2 padding=1 bias=false
stem_bn: batch_norm2d
gelu
pad 1 value=0.25
block: residual
    conv: conv2d 8 kernel=3 padding=same
    leaky_relu 0.2
    silu
end
avg_pool2d 2
sigmoid
flatten
dropout 0.3
hidden: linear 32
norm: batch_norm1d
ln: layer_norm
rms: rms_norm
gelu tanh=true
relu6
hardswish
mish
hardsigmoid
tanh
out: linear classes
"""


def ember_to_onnx(ember, tmp, data_dir, x):
    np.save(os.path.join(tmp, "x.npy"), x)
    user = os.path.join(tmp, "user.model")
    with open(user, "w") as f:
        f.write(USER_MODEL)
    for name in list(ZOO) + [user]:
        short = os.path.basename(name).replace(".model", "")
        ck, path = os.path.join(tmp, short + ".safetensors"), os.path.join(tmp, short + ".onnx")
        if run(ember, "train", "--model", name, "--data-dir", data_dir, "--steps", 5, "--batch", 32, "--no-eval",
               "--quiet", "--device", "cpu", "--save", ck).returncode:
            continue
        if run(ember, "export", "--load", ck, "-o", path).returncode:
            continue
        model = onnx.load(path)
        try:
            onnx.checker.check_model(model, full_check=True)
        except onnx.checker.ValidationError as err:
            check(False, f"{short}: the onnx checker refused the export: {err}")
        meta = {p.key: p.value for p in model.metadata_props}
        check("Ankle boot" in meta.get("ember.class_names", ""), f"{short}: no class names in {sorted(meta)}")
        want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        out = os.path.join(tmp, short + ".logits.npy")
        if run(ember, "predict", "--load", ck, "--device", "cpu", "--logits", "--output", out,
               os.path.join(tmp, "x.npy")).returncode:
            continue
        got = np.load(out)
        diff = float(np.abs(got - want).max())
        check(got.shape == want.shape and diff <= 1e-5,
              f"{short}: ember's logits and ONNX Runtime's differ by {diff:.3g} (over 1e-5)")
        print(f"onnx_interop: ember -> ONNX -> ONNX Runtime: {short}: largest difference {diff:.2g}")


class ResNet18(nn.Module):
    """torchvision's resnet18 layout for 3x32x32 images: a 3x3 stem without max-pooling."""

    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        widths, inplanes = (64, 128, 256, 512), 64
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(inplanes, w, stride), BasicBlock(w, w)))
            inplanes = w
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class Mobile(nn.Module):
    """MobileNet's activations: ReLU6, Hardswish, Hardsigmoid, and Mish."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2)
        self.fc = nn.Linear(4 * 13 * 13, 16)
        self.head = nn.Linear(16, 10)
        with torch.no_grad():  # inputs that reach past ReLU6's 6 and the hard sigmoid's +-3
            self.conv.weight.mul_(8)
            self.fc.weight.mul_(4)

    def forward(self, x):
        x = nn.Hardswish()(nn.ReLU6()(self.conv(x)))
        x = nn.Mish()(self.fc(torch.flatten(x, 1)))
        return self.head(nn.Hardsigmoid()(x))


class Mixed(nn.Module):
    """What a PyTorch user writes besides nn.Sequential: view, GELU, SiLU, LeakyReLU, a matmul."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 5, stride=2)
        self.pool = nn.AvgPool2d(2)
        self.w = nn.Parameter(torch.randn(6 * 6 * 6, 20) * 0.1)
        self.b = nn.Parameter(torch.randn(20))
        self.head = nn.Linear(20, 10)

    def forward(self, x):
        x = F.silu(self.pool(F.leaky_relu(self.conv(x), 0.1)))
        x = F.gelu(x.view(x.size(0), -1) @ self.w + self.b)
        return self.head(torch.sigmoid(x))


class Padded(nn.Module):
    """F.pad and nn.ZeroPad2d, whose pads torch.onnx.export computes in the graph from PyTorch's order."""

    def __init__(self):
        super().__init__()
        self.zero = nn.ZeroPad2d(1)
        self.conv = nn.Conv2d(1, 4, 3, stride=2)
        self.fc = nn.Linear(4 * 16 * 16, 10)

    def forward(self, x):
        x = F.pad(self.zero(x), (2, 2, 2, 2), value=0.5)
        return self.fc(torch.flatten(F.relu(self.conv(x)), 1))


def randomise(net):
    """Random weights, and BatchNorm statistics that are not the identity."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
    return net.eval()


def torch_to_ember(ember, tmp, x28):
    rng = np.random.default_rng(3)
    x32 = rng.random((100, 3, 32, 32), dtype=np.float32)
    torch.manual_seed(0)
    nets = [(name, randomise(cls()), x28) for name, cls in ZOO.items()]
    nets += [("resnet18", randomise(ResNet18()), x32), ("mixed", randomise(Mixed()), x28)]
    nets = [(name, net, x, 13) for name, net, x in nets]
    # opset 13 writes HardSwish as HardSigmoid and Mul, 14 on as HardSwish
    nets += [("mobile-opset13", Mobile().eval(), x28, 13), ("mobile-opset17", Mobile().eval(), x28, 17)]
    nets += [("padded-opset11", Padded().eval(), x28, 11), ("padded-opset17", Padded().eval(), x28, 17)]
    for name, net, x, opset in nets:
        path = os.path.join(tmp, "torch-" + name + ".onnx")
        torch.onnx.export(net, torch.from_numpy(x[:2]), path, input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=opset)
        want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        xs, out = os.path.join(tmp, f"x-{name}.npy"), os.path.join(tmp, f"torch-{name}.logits.npy")
        np.save(xs, x)
        if run(ember, "predict", "--load", path, "--device", "cpu", "--logits", "--output", out, xs).returncode:
            continue
        got = np.load(out)
        diff = float(np.abs(got - want).max())
        check(got.shape == want.shape and diff <= 1e-4,
              f"{name}: ember's logits and ONNX Runtime's differ by {diff:.3g} (over 1e-4)")
        print(f"onnx_interop: PyTorch -> ONNX -> ember: {name}: largest difference {diff:.2g}")

    # an operator ember lacks: exit 3, naming the node, the operator and what is supported
    class Upsampler(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(1, 2, 2, stride=2)
            self.fc = nn.Linear(2 * 56 * 56, 10)

        def forward(self, x):
            return self.fc(torch.flatten(self.up(x), 1))

    path = os.path.join(tmp, "upsampler.onnx")
    torch.onnx.export(Upsampler().eval(), torch.from_numpy(x28[:1]), path, opset_version=13)
    done = run(ember, "predict", "--load", path, "--device", "cpu", os.path.join(tmp, "x.npy"), expect=3)
    check("ConvTranspose" in done.stderr and "/up/ConvTranspose" in done.stderr and "supports" in done.stderr
          and "nn.ConvTranspose2d" in done.stderr, f"an unsupported operator was not named: {done.stderr.strip()!r}")

    # a pad ember's layer has not (more on one side than the other): refused, naming the node and the layer
    class Uneven(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(31 * 29, 10)

        def forward(self, x):
            return self.fc(torch.flatten(F.pad(x, (1, 2, 0, 1)), 1))

    path = os.path.join(tmp, "uneven.onnx")
    torch.onnx.export(Uneven().eval(), torch.from_numpy(x28[:1]), path, opset_version=13)
    done = run(ember, "predict", "--load", path, "--device", "cpu", os.path.join(tmp, "x.npy"), expect=3)
    check("/Pad" in done.stderr and "nn.ConstantPad2d" in done.stderr,
          f"an uneven F.pad was not refused naming its node: {done.stderr.strip()!r}")

    # several: every one listed at once, with its PyTorch scope and PyTorch's name for it
    class Several(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(1, 2, 2, stride=2)
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * 56 * 56, 10), nn.PReLU())

        def forward(self, x):
            return self.head(nn.functional.elu(self.up(x)))

    path = os.path.join(tmp, "several.onnx")
    torch.onnx.export(Several().eval(), torch.from_numpy(x28[:1]), path, opset_version=13)
    done = run(ember, "predict", "--load", path, "--device", "cpu", os.path.join(tmp, "x.npy"), expect=3)
    check("3 nodes have operators ember has no layer for" in done.stderr
          and "(ConvTranspose, PyTorch's nn.ConvTranspose2d, in up)" in done.stderr
          and "(Elu, PyTorch's nn.ELU)" in done.stderr and "(PRelu, PyTorch's nn.PReLU, in head.2)" in
          done.stderr, f"every unsupported operator at once: {done.stderr.strip()!r}")


def state_dict_loads(ember, tmp, data_dir, x):
    torch.manual_seed(0)
    net = randomise(ZOO["resnet8"]())
    state = {k: v.contiguous() for k, v in net.state_dict().items()}
    check(state["bn1.num_batches_tracked"].dtype == torch.int64, "PyTorch's num_batches_tracked is not int64")
    path = os.path.join(tmp, "torch-resnet8.safetensors")
    save_file(state, path)
    done = run(ember, "eval", "--model", "resnet8", "--load", path, "--data-dir", data_dir, "--device", "cpu",
               "--json")
    check(done.returncode == 0 and "test_acc" in done.stdout, f"a PyTorch state_dict did not load: {done.stderr!r}")
    # predict and export take it given --model: PyTorch's logits, in ember and through ONNX Runtime
    net.eval()
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()
    xs, logits, onnx_path = (os.path.join(tmp, n) for n in ("x.npy", "sd-logits.npy", "sd-resnet8.onnx"))
    done = run(ember, "predict", "--load", path, "--device", "cpu", xs, expect=3)
    check("names no model" in done.stderr and "give --model" in done.stderr,
          f"a state_dict without --model: {done.stderr.strip()!r}")
    done = run(ember, "predict", "--load", path, "--model", "resnet8", "--classes", "7", "--device", "cpu", xs,
               expect=2)
    check("fc.weight: the file has (10, 64)" in done.stderr, f"--classes 7 for 10 classes: {done.stderr.strip()!r}")
    # nn.DataParallel's names: the message says what to save instead
    wrapped = os.path.join(tmp, "data-parallel.safetensors")
    save_file({"module." + k: v for k, v in state.items()}, wrapped)
    done = run(ember, "predict", "--load", wrapped, "--model", "resnet8", "--device", "cpu", xs, expect=2)
    check('begins with "module.", as nn.DataParallel saves them: save model.module.state_dict()' in done.stderr,
          f"a DataParallel state_dict: {done.stderr.strip()[-300:]!r}")
    if not run(ember, "predict", "--load", path, "--model", "resnet8", "--device", "cpu", "--logits", "--output",
               logits, xs).returncode:
        diff = float(np.abs(np.load(logits) - want).max())
        check(diff <= 1e-4, f"predict --model resnet8 on PyTorch's state_dict: {diff:.3g} from PyTorch's logits")
        print(f"onnx_interop: PyTorch's state_dict through predict --model: largest difference {diff:.2g}")
    if not run(ember, "export", "--load", path, "--model", "resnet8", "-o", onnx_path).returncode:
        got = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
        diff = float(np.abs(got - want).max())
        check(diff <= 1e-4, f"export --model resnet8 of PyTorch's state_dict in ONNX Runtime: {diff:.3g} off")
        print(f"onnx_interop: PyTorch's state_dict through export --model and ONNX Runtime: largest difference "
              f"{diff:.2g}")


def finetune(ember, tmp, data_dir):
    """A model trained in PyTorch, exported to ONNX, fine-tunes in ember."""
    dims, pixels = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte.gz"))
    _, labels = read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(np.frombuffer(pixels, dtype=np.uint8).reshape(-1, 1, 28, 28) / 255.0).float()
    y = torch.from_numpy(np.frombuffer(labels, dtype=np.uint8).astype(np.int64))
    torch.manual_seed(0)
    net = ZOO["simplecnn"]()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for step in range(10):  # a little training elsewhere: far from done
        opt.zero_grad()
        F.cross_entropy(net(x[step * 64:(step + 1) * 64]), y[step * 64:(step + 1) * 64]).backward()
        opt.step()
    path = os.path.join(tmp, "elsewhere.onnx")
    torch.onnx.export(net.eval(), x[:1], path, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)

    def accuracy(load):
        done = run(ember, "eval", "--load", load, "--data-dir", data_dir, "--device", "cpu", "--json")
        return json.loads(done.stdout)["test_acc"] if done.returncode == 0 else -1.0

    before = accuracy(path)
    tuned = os.path.join(tmp, "tuned.safetensors")
    run(ember, "train", "--init", path, "--data-dir", data_dir, "--epochs", 2, "--no-eval", "--quiet", "--device",
        "cpu", "--save", tuned)
    after = accuracy(tuned)
    check(before >= 0 and after > before + 0.05, f"fine-tuning did not raise the accuracy: {before} -> {after}")
    print(f"onnx_interop: a PyTorch model fine-tuned in ember: test accuracy {before:.3f} -> {after:.3f}")

    # --init-skip: the head starts fresh, the rest is the file's
    fresh = os.path.join(tmp, "fresh-head.safetensors")
    run(ember, "train", "--init", path, "--init-skip", "fc", "--data-dir", data_dir, "--steps", 1, "--lr", 0,
        "--no-eval", "--quiet", "--device", "cpu", "--save", fresh)
    from safetensors.numpy import load_file
    got, theirs = load_file(fresh), {k: v.detach().numpy() for k, v in net.state_dict().items()}
    check(np.array_equal(got["conv1.weight"], theirs["conv1.weight"]), "--init did not take conv1 from the file")
    check(not np.allclose(got["fc.weight"], theirs["fc.weight"]), "--init-skip fc still took fc from the file")
    # another network: every difference named, exit 2
    done = run(ember, "train", "--init", path, "--model", "mlp", "--data-dir", data_dir, "--steps", 1, "--quiet",
               "--device", "cpu", expect=2)
    check("does not fit" in done.stderr and "missing fc1.weight (256, 784)" in done.stderr and
          "unexpected conv1.weight" in done.stderr, f"a mismatch was not listed: {done.stderr.strip()!r}")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    ember = sys.argv[1]
    source = sys.argv[2] if len(sys.argv) == 3 else "/usr/share/datasets/fashion-mnist"
    if not os.path.isdir(source):
        print(f"onnx_interop: skipped: no Fashion-MNIST at {source}", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="ember-onnx-") as tmp:
        data_dir = os.path.join(tmp, "fashion")
        subset(source, data_dir, 2000, 1000)
        dims, pixels = read_idx(os.path.join(data_dir, "t10k-images-idx3-ubyte.gz"))
        x = (np.frombuffer(pixels, dtype=np.uint8)[:100 * 784].reshape(100, 1, 28, 28) / 255.0).astype(np.float32)
        ember_to_onnx(ember, tmp, data_dir, x)
        torch_to_ember(ember, tmp, x)
        state_dict_loads(ember, tmp, data_dir, x)
        finetune(ember, tmp, data_dir)
    if failures:
        print(f"onnx_interop: {failures} check(s) failed", file=sys.stderr)
        return 1
    print("onnx_interop: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
