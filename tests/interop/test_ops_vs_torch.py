#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_ops_vs_torch.py — ember's layer ops against PyTorch's on the same inputs.

    test_ops_vs_torch.py path/to/ops-export

Runs ops-export (on cpu, or $EMBER_TEST_DEVICE), which writes fixed
inputs and what ember's ops make of them to a safetensors file, and holds
each to PyTorch's functional op on the same inputs and state:

  activations    every row of base/elementwise-impl.h, on values over [-8, 8]
                 and NaN, Inf, zeros and the kinks, against the PyTorch module
                 its row names: y and the gradient of sum(y), NaN and Inf
                 where PyTorch gives them; and silu
  pooling        avg_pool2d (3, stride 2), adaptive_avg_pool2d(1) flattened, max and
                 average pools with padding and ceil_mode, F.pad, torch.cat, F.interpolate (nearest, bilinear)
  grouped        a depthwise conv2d (groups=3, two outputs a channel) and its gradients
  batch norm     BatchNorm2d and BatchNorm1d (momentum 0.1, eps 1e-5): y in
                 training and in evaluation, the running statistics after a
                 training step, and in training the gradients of sum(y * x)
                 for x, weight and bias
  dropout        evaluation gives x itself; training gives 0 or 2x (p 0.5)
                 for each element, about half of them 0
  RMS norm       over the last axis (eps 1e-5), and the gradients of
                 sum(y * x) for x and weight, against its formula in
                 PyTorch (1.13 has no nn.RMSNorm)
  folding        batch norm folded into a convolution's weight and bias
                 against torch.nn.utils.fusion.fuse_conv_bn_weights, and
                 the gradients through the folded weights

and checks that training and evaluation differ where they must (batch
norm with running statistics that are not the batch's, dropout). Needs
torch and safetensors; exits 77 (CTest's "skipped") without them.
"""
import os
import subprocess
import sys
import tempfile

try:
    import torch
    import torch.nn.functional as F
    from safetensors.torch import load_file
except ImportError as err:
    print(f"ops_vs_torch: skipped: {err} (install torch and safetensors into the Python that "
          "EMBER_PYTHON names; see tests/CMakeLists.txt)", file=sys.stderr)
    sys.exit(77)

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"ops_vs_torch: FAIL: {message}", file=sys.stderr)
    return cond


def close(name, got, want, tol=1e-5):
    err = (got - want).abs().max().item() if got.numel() else 0.0
    scale = max(want.abs().max().item() if want.numel() else 0.0, 1.0)
    ok = got.shape == want.shape and err <= tol * scale
    check(ok, f"{name}: shape {tuple(got.shape)} vs {tuple(want.shape)}, largest difference {err:.3g}")
    print(f"{name:24} {'ok' if ok else 'FAILED'} (largest difference {err:.2e})")


def same(name, got, want, x, tol=1e-5):
    """close() where NaN and Inf must come out where PyTorch's do, element by element"""
    special = torch.isnan(want) | torch.isinf(want)
    wrong = (torch.isnan(got) != torch.isnan(want)) | (torch.isinf(want) & (got != want))
    err = (got[~special] - want[~special]).abs().max().item() if (~special).any() else 0.0
    scale = max(want[~special].abs().max().item() if (~special).any() else 0.0, 1.0)
    ok = check(got.shape == want.shape and not wrong.any() and err <= tol * scale,
               f"{name}: largest difference {err:.2e}; at x = {x[wrong].tolist()} ember gives "
               f"{got[wrong].tolist()}, PyTorch {want[wrong].tolist()}")
    print(f"{name:24} {'ok' if ok else 'FAILED'} (largest difference {err:.2e}, NaN and Inf as PyTorch's)")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ops.safetensors")
        run = subprocess.run([sys.argv[1], path], capture_output=True, text=True)
        if run.returncode == 77:
            print(f"ops_vs_torch: skipped: {run.stderr.strip()}", file=sys.stderr)
            return 77
        if not check(run.returncode == 0, f"ops-export failed: {run.stdout}{run.stderr}"):
            return 1
        t = load_file(path)

    x4, x2 = t["x4"], t["x2"]
    rows = [line.split(" ", 1)[1].rsplit(" ", 1) for line in run.stdout.splitlines()
            if line.startswith("activation ")]
    check(len(rows) > 0, "ops-export named no activation")
    for head, alpha in rows:
        name, module = head.split(" ", 1)
        m = eval(module, {"nn": torch.nn, "alpha": float(alpha)})  # PyTorch's module, from the row
        xa = t["xa"].clone().requires_grad_(True)
        y = m(xa)
        y.sum().backward()
        same(name, t[f"act.{name}"], y.detach(), t["xa"])
        same(f"{name} dx", t[f"act.{name}.dx"], xa.grad, t["xa"])
    close("silu", t["silu"], F.silu(x4))
    close("avg_pool2d", t["avg_pool2d"], F.avg_pool2d(x4, 3, 2))
    close("max_pool2d padding 1", t["max_pool2d_padded"], F.max_pool2d(x4, 3, 2, 1))
    close("avg_pool2d padding 1", t["avg_pool2d_padded"], F.avg_pool2d(x4, 3, 2, 1))
    close("avg_pool2d pad excluded", t["avg_pool2d_padded_excl"],
          F.avg_pool2d(x4, 3, 2, 1, ceil_mode=True, count_include_pad=False))
    close("max_pool2d ceil_mode", t["max_pool2d_ceil"], F.max_pool2d(x4, 3, 2, ceil_mode=True))
    close("upsample nearest x2", t["upsample_nearest"], F.interpolate(x4, scale_factor=2, mode="nearest"))
    close("upsample bilinear x3", t["upsample_bilinear"],
          F.interpolate(x4, scale_factor=3, mode="bilinear", align_corners=False))
    close("concat", t["concat"], torch.cat([x4, 2 * x4], 1))
    close("pad", t["pad"], F.pad(x4, (0, 3, 2, 1, 1, 0, 0, 1), value=0.25))
    # a depthwise convolution, two outputs a channel, and its gradients
    xg = x4.clone().requires_grad_(True)
    gw, gb = t["grouped.w"].clone().requires_grad_(True), t["grouped.b"].clone().requires_grad_(True)
    y = F.conv2d(xg, gw, gb, stride=2, padding=1, groups=3)
    close("conv2d groups=3", t["grouped"], y.detach())
    (y * y.detach()).sum().backward()
    close("conv2d groups=3 dx", t["grouped.dx"], xg.grad)
    close("conv2d groups=3 dw", t["grouped.dw"], gw.grad)
    close("conv2d groups=3 db", t["grouped.db"], gb.grad)
    close("global_avg_pool2d", t["global_avg_pool2d"], F.adaptive_avg_pool2d(x4, 1).flatten(1))

    # dropout: evaluation is x; training keeps each element doubled or drops it
    check(torch.equal(t["dropout_eval"], x4), "dropout in evaluation is not x itself")
    y = t["dropout_train"]
    kept = y != 0
    check(torch.allclose(y[kept], 2 * x4[kept]), "dropout in training: kept elements are not 2x")
    share = kept.float().mean().item()
    check(0.3 < share < 0.7, f"dropout in training kept {share:.2f} of the elements, p was 0.5")
    check(not torch.equal(y, t["dropout_eval"]), "dropout: training and evaluation are the same")
    print(f"{'dropout':24} kept {share:.2f} in training, x itself in evaluation")

    def bn(dims, x, training):
        m = (torch.nn.BatchNorm2d if dims == 2 else torch.nn.BatchNorm1d)(3, momentum=0.1, eps=1e-5)
        with torch.no_grad():
            m.weight.copy_(t["bn.weight"])
            m.bias.copy_(t["bn.bias"])
            m.running_mean.copy_(t["bn.running_mean"])
            m.running_var.copy_(t["bn.running_var"])
        m.train(training)
        return m

    m = bn(2, x4, False)
    close("bn2d_eval", t["bn2d_eval"], m(x4).detach())
    m = bn(1, x2, False)
    close("bn1d_eval", t["bn1d_eval"], m(x2).detach())
    m = bn(1, x2, True)
    close("bn1d_train", t["bn1d_train"], m(x2).detach())

    m = bn(2, x4, True)
    xg = x4.clone().requires_grad_(True)
    y = m(xg)
    (y * x4).sum().backward()
    close("bn2d_train", t["bn2d_train"], y.detach())
    close("bn2d_train running mean", t["bn2d_train.mean"], m.running_mean)
    close("bn2d_train running var", t["bn2d_train.var"], m.running_var)
    close("bn2d_train dx", t["bn2d_train.dx"], xg.grad, 1e-4)
    close("bn2d_train dweight", t["bn2d_train.dweight"], m.weight.grad, 1e-4)
    close("bn2d_train dbias", t["bn2d_train.dbias"], m.bias.grad, 1e-4)
    check(not torch.allclose(t["bn2d_train"], t["bn2d_eval"]), "batch norm: training and evaluation are the same")

    # RMS norm: PyTorch 1.13 has no nn.RMSNorm, so its formula, with autograd's gradients
    xn = x4.clone().requires_grad_(True)
    rw = t["rms.weight"].clone().requires_grad_(True)
    y = xn * torch.rsqrt(xn.pow(2).mean(-1, keepdim=True) + 1e-5) * rw
    (y * x4).sum().backward()
    close("rms_norm", t["rms_norm"], y.detach())
    close("rms_norm dx", t["rms_norm.dx"], xn.grad, 1e-4)
    close("rms_norm dweight", t["rms_norm.dweight"], rw.grad, 1e-4)

    m = bn(2, x4, True)
    xr = x4.clone().requires_grad_(True)
    y = torch.relu(m(xr))
    (y * x4).sum().backward()
    close("bn2d_relu_train", t["bn2d_relu_train"], y.detach())
    close("bn2d_relu_train dx", t["bn2d_relu_train.dx"], xr.grad, 1e-4)
    close("bn2d_relu_train dweight", t["bn2d_relu_train.dweight"], m.weight.grad, 1e-4)
    check(bool((t["bn2d_relu_train"] == 0).any()), "batch norm with ReLU: no value was cut to 0")

    # batch norm folded into a convolution: the weights as PyTorch's own fusion makes them
    from torch.nn.utils.fusion import fuse_conv_bn_weights
    rm, rv = t["bn.running_mean"], t["bn.running_var"]
    fw, fb = fuse_conv_bn_weights(t["fold.w"], t["fold.b"], rm, rv, 1e-5, t["bn.weight"], t["bn.bias"])
    close("batch_norm_fold weight", t["fold.weight"], fw.detach())
    close("batch_norm_fold bias", t["fold.bias"], fb.detach())
    unfolded = F.conv2d(x4, t["fold.w"], t["fold.b"], padding=1)
    with torch.no_grad():  # what the folded convolution stands for: the convolution, then batch norm
        close("conv folded = conv, bn", F.conv2d(x4, fw, fb, padding=1), bn(2, x4, False)(unfolded))
    # the gradients: fuse_conv_bn_weights hands back new leaves, so its formula, through autograd
    w, b = t["fold.w"].clone().requires_grad_(True), t["fold.b"].clone().requires_grad_(True)
    bw, bb = t["bn.weight"].clone().requires_grad_(True), t["bn.bias"].clone().requires_grad_(True)
    s = bw * torch.rsqrt(rv + 1e-5)
    (F.conv2d(x4, w * s.reshape(-1, 1, 1, 1), (b - rm) * s + bb, padding=1) * unfolded).sum().backward()
    close("batch_norm_fold dw", t["fold.dw"], w.grad, 1e-4)
    close("batch_norm_fold db", t["fold.db"], b.grad, 1e-4)
    close("batch_norm_fold dweight", t["fold.dweight"], bw.grad, 1e-4)
    close("batch_norm_fold dbias", t["fold.dbias"], bb.grad, 1e-4)

    if failures:
        print(f"ops_vs_torch: {failures} checks failed", file=sys.stderr)
        return 1
    print(f"ops_vs_torch: ok (PyTorch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
