#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_torchvision_onnx.py — torchvision's own networks through ONNX into ember, against ONNX Runtime.

    test_torchvision_onnx.py path/to/ember [--quick | --cuda-double]

The networks people deploy on small devices, built by Debian's torchvision
(random weights, BatchNorm statistics that are not the identity), exported
by torch.onnx.export in evaluation mode with a dynamic batch:

ResNet-18 (its padded 3x3 stem max-pool), MobileNetV2 (depthwise
    convolutions, ReLU6), MobileNetV3-Small (squeeze-and-excitation gates,
    HardSwish), SqueezeNet 1.1 (fire modules' Concat, ceil-mode pools, a
    convolution for a head) and ShuffleNetV2 x0.5 (x.chunk written as Slice
    with computed bounds, Concat, the channel shuffle's Reshape, Transpose,
    Reshape): `ember predict --load net.onnx --logits` equals ONNX Runtime's
    logits within 1e-4 (relative to the largest logit, at least 1) at
    3x224x224 (opset 13) and at 3x64x64 (opsets 11 and 17), on the CPU, and
    at 3x64x64 on OpenCL (PoCL) where it is installed. Each imported
    network written back by `ember export` gives ONNX Runtime the logits
    PyTorch's file gives it, within the same bound.
The blocks in a model file: a network written here with a fire module
    (concat), a squeeze-and-excitation gate, a ShuffleNet unit (chunk,
    concat, channel_shuffle), a DenseNet-style concat with its input,
    bilinear and nearest upsampling, a softmax over the channels and a log_softmax after the head, and its
    PyTorch twin with the same parameter names: ember's logits from
    the twin's state_dict, ONNX Runtime's on `ember export`'s file, ember's
    on that file read back, and ember's on torch.onnx.export's file of the
    twin all equal the twin's within 1e-4.
Fine-tuning: each of the five at 3x32x32 with a new two-class head
    (--init-skip the classifier) trains on a folder of generated photos for
    two steps on the CPU and on PoCL; MobileNetV3, SqueezeNet and
    ShuffleNetV2 one step on the CUDA test double (an H100, ember's kernels
    compiled for the host, which runs them thread by thread: ResNet-18's
    step took it 34 s, MobileNetV2's 7, so they run apart, with
    --cuda-double, a test of their own), and
    MobileNetV2 and ShuffleNetV2 one step on a simulated Tesla K40m (the
    double running the built-in PTX in ember's simulator), so that each
    block and layer the five add runs on a CUDA path: every device's weights after the
    steps equal the CPU's within 1e-4; with --freeze backbone every weight
    but the new head's stays as imported; photos of four other sizes load at
    the imported input with --resize and are refused, naming it, without. MobileNetV2 exported after
    model.train() with training=TrainingMode.PRESERVE imports with its 52
    BatchNorm layers and its dropout, and predicts ONNX Runtime's logits of
    the same network in evaluation mode; `ember train --init` on the
    evaluation export, whose BatchNorm PyTorch folded, says so. The steps are SGD's, so that a
    difference in the weights is one in the gradients: Adam's first steps
    move each weight by about the rate whatever its gradient's size, and a
    gradient near zero that rounds to the other sign on another device
    moves its weight twice the rate apart. --quick leaves the simulated
    GPU out.

Needs torch, torchvision, onnxruntime and Pillow; exits 77 (CTest's
"skipped") without them. About 80 s on two cores.
"""
import os
import subprocess
import sys
import tempfile
import warnings

warnings.filterwarnings("ignore", category=UserWarning)  # torch.onnx.export's notes on every traced module

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
    from PIL import Image
    from safetensors import safe_open
    from safetensors.numpy import load_file
except ImportError as err:
    print(f"torchvision_onnx: skipped: {err} (scripts/setup.sh --tests installs it)", file=sys.stderr)
    sys.exit(77)

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"FAILED: {message}", file=sys.stderr)
    return cond


def run(*args, expect=0, env=None):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env)
    check(done.returncode == expect,
          f"{' '.join(map(str, args[1:4]))} ... exited {done.returncode}, not {expect}: {done.stderr.strip()[-600:]}")
    return done


def randomise(net):
    """Random BatchNorm statistics and affine parameters (not the identity), and a classifier
    whose logits are not all near zero, so that a wrong layer shows in the logits."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=g) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            elif isinstance(m, nn.Linear):
                m.weight.normal_(0.0, 0.05, generator=g)
    return net.eval()


def export(name, side, opset, tmp, batch=2):
    """torchvision's `name` as ONNX for 3 x side x side; the file, an input and ONNX Runtime's logits"""
    torch.manual_seed(0)
    net = randomise(getattr(torchvision.models, name)(weights=None))
    x = torch.rand(batch, 3, side, side)
    path = os.path.join(tmp, f"{name}-{side}-{opset}.onnx")
    torch.onnx.export(net, x, path, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=opset)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"input": x.numpy()})[0]
    return path, x.numpy(), want


def agree(ember, tmp, name, side, opset, device):
    path, x, want = export(name, side, opset, tmp)
    xs, out = os.path.join(tmp, "x.npy"), os.path.join(tmp, "logits.npy")
    np.save(xs, x)
    if os.path.exists(out):
        os.remove(out)
    done = run(ember, "predict", "--load", path, "--device", device, "--logits", "--output", out, xs)
    if done.returncode:
        return
    got = np.load(out)
    diff = float(np.abs(got - want).max())
    scale = max(float(np.abs(want).max()), 1.0)
    check(got.shape == want.shape and diff <= 1e-4 * scale,
          f"{name} 3x{side}x{side} opset {opset} on {device}: ember's logits and ONNX Runtime's differ by "
          f"{diff:.3g} (largest logit {scale:.3g})")
    print(f"torchvision_onnx: {name:13} 3x{side}x{side} opset {opset} {device:7} largest difference {diff:.2g} "
          f"(largest logit {scale:.2g})")


def round_trip(ember, tmp, name):
    """the network imported, then written back by `ember export`: ONNX Runtime gives the same logits from
    ember's file as from PyTorch's"""
    path, x, want = export(name, 64, 13, tmp)
    ck, back = os.path.join(tmp, f"{name}-back.safetensors"), os.path.join(tmp, f"{name}-back.onnx")
    if run(ember, "import", path, "-o", ck).returncode or run(ember, "export", "--load", ck, "-o", back).returncode:
        return
    got = ort.InferenceSession(back, providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    diff = float(np.abs(got - want).max())
    check(got.shape == want.shape and diff <= 1e-4 * max(float(np.abs(want).max()), 1.0),
          f"{name}: ONNX Runtime on ember's export differs from it on PyTorch's by {diff:.3g}")
    print(f"torchvision_onnx: {name:18} imported and exported by ember: ONNX Runtime's logits within {diff:.2g}")


def photos(folder, side):
    """two classes of eight generated photos each, side x side"""
    rng = np.random.default_rng(0)
    for c, label in enumerate(["warm", "cool"]):
        os.makedirs(os.path.join(folder, label), exist_ok=True)
        for i in range(8):
            a = rng.integers(0, 200, (side, side, 3), dtype=np.uint8)
            a[..., 2 * c] += 55
            Image.fromarray(a).save(os.path.join(folder, label, f"{i}.png"))


def simulated_k40m(ember):
    """the environment of tests/gpu/test_simulated_gpu.sh's K40m, running the built-in PTX"""
    tests = os.path.join(os.path.dirname(os.path.abspath(ember)), "tests")
    env = dict(os.environ, EMBER_CUDA_LIBRARY=os.path.join(tests, "libfake-cuda.so"), EMBER_FAKE_CUDA_EXEC="ptx",
               EMBER_FAKE_CUDA_GPUS="35:Tesla K40m (simulated)", EMBER_FAKE_CUDA_DRIVER="11040",
               EMBER_CUDA_KERNELS="baseline", EMBER_NVRTC="none", EMBER_EXACT_BUFFERS="1")
    return env if os.path.exists(env["EMBER_CUDA_LIBRARY"]) else None


# each network's new head, and its width before it
HEADS = {"resnet18": ("fc", 512), "mobilenet_v2": ("classifier.1", 1280), "mobilenet_v3_small": ("classifier.3", 1024),
         "squeezenet1_1": ("classifier.1", 512), "shufflenet_v2_x0_5": ("fc", 1024)}


def cuda_double(ember):
    """the CUDA test double as an H100 on a CUDA 13 driver, running ember's kernels compiled for the host
    (tests/gpu/fakes/fake_cuda.h): the CUDA backend's every launch and copy, in seconds"""
    tests = os.path.join(os.path.dirname(os.path.abspath(ember)), "tests")
    env = dict(os.environ, EMBER_CUDA_LIBRARY=os.path.join(tests, "libfake-cuda.so"),
               EMBER_FAKE_CUDA_GPUS="90:H100 (CUDA test double)", EMBER_FAKE_CUDA_DRIVER="13000",
               EMBER_CUDA_KERNELS="baseline")
    return env if os.path.exists(env["EMBER_CUDA_LIBRARY"]) else None


# the two whose step on the CUDA double takes longest (ResNet-18's 34 s, MobileNetV2's 7): run apart, by --cuda-double
ON_THE_DOUBLE_APART = ("resnet18", "mobilenet_v2")


def fine_tune(ember, tmp, opencl, quick, apart=False):
    """each network fine-tuned on every device; with apart, ResNet-18 and MobileNetV2 on the CUDA double alone"""
    folder = os.path.join(tmp, "photos")
    photos(folder, 32)
    sim, double = None if quick or apart else simulated_k40m(ember), cuda_double(ember)
    for env in (sim, double):
        if env:
            env["EMBER_CACHE_DIR"] = os.path.join(tmp, "cache")
    for name, (head, width) in HEADS.items():
        if apart and name not in ON_THE_DOUBLE_APART:
            continue
        path, _, _ = export(name, 32, 13, tmp)
        runs = [] if apart else [("cpu", 2, None)] + ([("opencl", 2, None)] if opencl else [])
        if double or sim:
            runs += [("cpu", 1, None)]
        if double and (name in ON_THE_DOUBLE_APART) == apart:
            runs += [("cuda double", 1, double)]
        if sim and name in ("mobilenet_v2", "shufflenet_v2_x0_5"):
            runs += [("simulated K40m", 1, sim)]
        weights = {}
        for device, steps, env in runs:
            saved = os.path.join(tmp, f"{name}-tuned-{device.replace(' ', '-')}-{steps}.safetensors")
            if not run(ember, "train", "--init", path, "--init-skip", head, "--data", "folder", "--data-dir", folder,
                       "--steps", steps, "--batch", 4, "--optim", "sgd", "--lr", 0.01, "--no-eval", "--quiet", "--seed", 1,
                       "--device", "cuda" if env else device, "--save", saved, env=env).returncode:
                weights[(device, steps)] = load_file(saved)
        if name == "mobilenet_v2" and not apart:
            frozen(ember, tmp, path, head, folder)
            own_sizes(ember, tmp, path, head)
            preserved(ember, tmp, folder)
        new_head = weights.get(("cpu", 1 if apart else 2), {}).get(f"{head}.weight")
        check(new_head is not None and new_head.shape[:2] == (2, width),
              f"{name}: the new head is {None if new_head is None else new_head.shape}, not (2, {width}, ...)")
        for (device, steps), w in weights.items():
            cpu = weights.get(("cpu", steps))
            if device == "cpu" or cpu is None:
                continue
            diff = max(float(np.abs(w[k] - cpu[k]).max()) for k in cpu)
            check(diff <= 1e-4, f"{name} fine-tuned {steps} steps on {device}: weights differ from the CPU's "
                                f"by {diff:.3g}")
            print(f"torchvision_onnx: {name:18} fine-tuned {steps} step(s) on {device:14}: weights within {diff:.2g} "
                  f"of the CPU's")


def preserved(ember, tmp, folder):
    """MobileNetV2 exported after model.train() with TrainingMode.PRESERVE keeps its BatchNorm layers (and the
    classifier's dropout) learnable; the evaluation-mode export, whose BatchNorm PyTorch folds, says so"""
    import copy
    net = copy.deepcopy(randomise(torchvision.models.mobilenet_v2(weights=None))).train()
    x = torch.rand(2, 3, 32, 32)
    kept, folded = os.path.join(tmp, "mv2-preserve.onnx"), os.path.join(tmp, "mv2-folded.onnx")
    torch.onnx.export(net, x, kept, input_names=["input"], output_names=["logits"], opset_version=13,
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    net.eval()  # the same weights and statistics (the export's forward moved them), in evaluation mode
    torch.onnx.export(net, x, folded, input_names=["input"], output_names=["logits"], opset_version=13,
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    want = ort.InferenceSession(folded, providers=["CPUExecutionProvider"]).run(None, {"input": x.numpy()})[0]
    model, xs, out = (os.path.join(tmp, f) for f in ("mv2-preserve.model", "mv2-x.npy", "mv2-logits.npy"))
    np.save(xs, x.numpy())
    if run(ember, "import", kept, "-o", os.path.join(tmp, "mv2-preserve.safetensors"), "--model-out",
           model).returncode:
        return
    with open(model) as f:
        text = f.read()
    check(text.count("batch_norm2d") == 52 and "dropout 0.2" in text,
          f"the PRESERVE export imported {text.count('batch_norm2d')} batch_norm2d layers, not 52, or no dropout")
    if not run(ember, "predict", "--load", kept, "--logits", "--output", out, xs).returncode:
        diff = float(np.abs(np.load(out) - want).max())
        check(diff <= 1e-4 * max(float(np.abs(want).max()), 1.0),
              f"MobileNetV2 with its BatchNorm kept: logits {diff:.3g} from ONNX Runtime's")
        print(f"torchvision_onnx: MobileNetV2 exported with TrainingMode.PRESERVE: 52 batch_norm2d layers, logits "
              f"within {diff:.2g} of ONNX Runtime's")
    notes = {}
    for name, path in [("folded", folded), ("kept", kept)]:
        notes[name] = run(ember, "train", "--init", path, "--init-skip", "classifier.1", "--data", "folder",
                          "--data-dir", folder, "--steps", 1, "--batch", 4, "--no-eval", "--quiet").stderr
    check("were folded into its convolutions" in notes["folded"] and "TrainingMode.PRESERVE" in notes["folded"]
          and "folded" not in notes["kept"], "the folded export's note is missing, or the kept one has it")


def own_sizes(ember, tmp, path, head):
    """photos of the sizes a phone gives, not the network's: loaded at the imported network's input (3x32x32
    here) with --resize, refused naming --resize without it"""
    folder = os.path.join(tmp, "own-photos")
    rng = np.random.default_rng(2)
    for c, label in enumerate(["warm", "cool"]):
        os.makedirs(os.path.join(folder, label))
        for i, (w, h) in enumerate([(48, 36), (36, 48), (40, 40), (60, 45)]):
            a = rng.integers(0, 200, (h, w, 3), dtype=np.uint8)
            a[..., 2 * c] += 55
            Image.fromarray(a).save(os.path.join(folder, label, f"{i}.png"))
    args = ["train", "--init", path, "--init-skip", head, "--data", "folder", "--data-dir", folder, "--steps", 1,
            "--batch", 4, "--no-eval", "--quiet"]
    refused = run(ember, *args, expect=3)
    check("--resize" in refused.stderr, f"photos of another size without --resize: {refused.stderr.strip()[-300:]!r}")
    saved = os.path.join(tmp, "own-sizes.safetensors")
    done = run(ember, *args, "--resize", "--save", saved)
    if not done.returncode:
        with safe_open(saved, framework="numpy") as f:
            meta = f.metadata()
        check("loaded at 3x32x32, the input of" in done.stderr and meta.get("ember.input") == "3x32x32",
              f"photos of their own sizes were not loaded at the network's input: {done.stderr.strip()!r}")
        print("torchvision_onnx: photos of 4 sizes loaded at the imported network's 3x32x32 (--resize)")


def frozen(ember, tmp, path, head, folder):
    """--freeze backbone: two AdamW steps with weight decay leave every weight but the new head's as imported"""
    imported, tuned = os.path.join(tmp, "imported.safetensors"), os.path.join(tmp, "frozen.safetensors")
    if run(ember, "import", path, "-o", imported).returncode or run(
            ember, "train", "--init", path, "--init-skip", head, "--freeze", "backbone", "--data", "folder",
            "--data-dir", folder, "--steps", 2, "--batch", 4, "--optim", "adamw", "--weight-decay", 0.1,
            "--no-eval", "--quiet", "--save", tuned).returncode:
        return
    before, after = load_file(imported), load_file(tuned)
    moved = [k for k in after if not k.startswith(head + ".") and not np.array_equal(after[k], before[k])]
    check(not moved, f"--freeze backbone: {len(moved)} frozen tensors moved, {moved[:3]}")
    print(f"torchvision_onnx: --freeze backbone: {len(after) - 2} tensors as imported, the head trained")


# a network of every block: a fire module, a squeeze-and-excitation gate, a ShuffleNet unit, a DenseNet join;
# upsampling, bilinear and nearest; a softmax over channels and a log_softmax at the end
BLOCKS_MODEL = """input 3x16x16
upsample 2 bilinear=true
conv1: conv2d 8 kernel=3 stride=2
relu
fire.squeeze: conv2d 4 kernel=1
relu
fire: concat
    expand1x1: conv2d 6 kernel=1
    relu
branch
    expand3x3: conv2d 6 kernel=3 padding=1
    relu
end
se: gate
    global_avg_pool2d keepdim=true
    fc1: conv2d 4 kernel=1
    relu
    fc2: conv2d 12 kernel=1
    hardsigmoid
end
unit: concat
    chunk 2
branch
    chunk 2 index=1
    b.0: conv2d 6 kernel=1 bias=false
    b.1: batch_norm2d
    relu
end
channel_shuffle 3
upsample 2
dense: concat
branch
    conv: conv2d 4 kernel=3 padding=1
end
softmax
global_avg_pool2d
fc: linear classes
log_softmax
"""


class BlocksTwin(nn.Module):
    """BLOCKS_MODEL in PyTorch, its parameters named as ember names them"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2)
        self.fire = nn.Module()
        self.fire.squeeze, self.fire.expand1x1 = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 6, 1)
        self.fire.expand3x3 = nn.Conv2d(4, 6, 3, padding=1)
        self.se = nn.Module()
        self.se.fc1, self.se.fc2 = nn.Conv2d(12, 4, 1), nn.Conv2d(4, 12, 1)
        self.unit = nn.Module()
        self.unit.b = nn.Sequential(nn.Conv2d(6, 6, 1, bias=False), nn.BatchNorm2d(6))
        self.dense = nn.Module()
        self.dense.conv = nn.Conv2d(12, 4, 3, padding=1)
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.conv1(F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)))
        x = F.relu(self.fire.squeeze(x))
        x = torch.cat([F.relu(self.fire.expand1x1(x)), F.relu(self.fire.expand3x3(x))], 1)
        x = x * F.hardsigmoid(self.se.fc2(F.relu(self.se.fc1(F.adaptive_avg_pool2d(x, 1)))))
        x1, x2 = x.chunk(2, dim=1)
        x = torch.cat([x1, F.relu(self.unit.b(x2))], 1)
        n, c, h, w = x.size()
        x = x.view(n, 3, c // 3, h, w).transpose(1, 2).contiguous().view(n, -1, h, w)
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = F.softmax(torch.cat([x, self.dense.conv(x)], 1), dim=1)
        return F.log_softmax(self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1)), dim=1)


def blocks(ember, tmp):
    from safetensors.torch import save_file
    torch.manual_seed(3)
    twin = randomise(BlocksTwin())
    for m in twin.modules():
        if isinstance(m, nn.Conv2d):
            m.weight.data.normal_(0.0, 0.5)
    x = torch.rand(4, 3, 16, 16)
    with torch.no_grad():
        want = twin(x).numpy()
    model, sd, xs = (os.path.join(tmp, f) for f in ("blocks.model", "blocks.safetensors", "blocks-x.npy"))
    with open(model, "w") as f:
        f.write(BLOCKS_MODEL)
    save_file({k: v.contiguous() for k, v in twin.state_dict().items()}, sd)
    np.save(xs, x.numpy())
    ours, theirs = os.path.join(tmp, "blocks.onnx"), os.path.join(tmp, "blocks-torch.onnx")
    torch.onnx.export(twin, x, theirs, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=13)
    got = {}
    out = os.path.join(tmp, "blocks-logits.npy")
    for what, load in [("the state_dict", ["--model", model, "--classes", 3, "--load", sd]),
                       ("ember's ONNX read back", ["--load", ours]),
                       ("PyTorch's ONNX", ["--load", theirs])]:
        if what == "ember's ONNX read back" and run(ember, "export", "--model", model, "--classes", 3, "--load", sd,
                                                     "-o", ours).returncode:
            continue
        if what == "ember's ONNX read back":
            got["ONNX Runtime on ember's export"] = ort.InferenceSession(
                ours, providers=["CPUExecutionProvider"]).run(None, {"input": x.numpy()})[0]
        if not run(ember, "predict", *load, "--logits", "--output", out, xs).returncode:
            got[what] = np.load(out)
    check(len(got) == 4, f"blocks: {4 - len(got)} of the four paths failed")
    for what, logits in got.items():
        diff = float(np.abs(logits - want).max())
        check(logits.shape == want.shape and diff <= 1e-4 * max(float(np.abs(want).max()), 1.0),
              f"blocks: {what} differs from the PyTorch twin by {diff:.3g}")
        print(f"torchvision_onnx: blocks, {what:30}: within {diff:.2g} of the PyTorch twin")


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--quick"], ["--cuda-double"]):
        print(__doc__, file=sys.stderr)
        return 2
    ember, quick = sys.argv[1], sys.argv[2:] == ["--quick"]
    torch.set_num_threads(1)
    if sys.argv[2:] == ["--cuda-double"]:
        if not cuda_double(ember):
            print("torchvision_onnx: no CUDA test double in this build: skipped")
            return 77
        with tempfile.TemporaryDirectory() as tmp:
            fine_tune(ember, tmp, False, False, apart=True)
        print("torchvision_onnx --cuda-double: " + ("ok" if failures == 0 else f"{failures} failures"))
        return 1 if failures else 0
    opencl = "opencl:0" in run(ember, "devices").stdout
    with tempfile.TemporaryDirectory() as tmp:
        for name in HEADS:
            agree(ember, tmp, name, 224, 13, "cpu")
            for opset in (11, 17):
                agree(ember, tmp, name, 64, opset, "cpu")
            if opencl:
                agree(ember, tmp, name, 64, 13, "opencl")
            round_trip(ember, tmp, name)
        blocks(ember, tmp)
        fine_tune(ember, tmp, opencl, quick)
    print("torchvision_onnx: " + ("ok" if failures == 0 else f"{failures} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
