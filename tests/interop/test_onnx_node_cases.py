#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_onnx_node_cases.py — ONNX's own test cases (Debian's libonnx-testdata) through ember's import.

    test_onnx_node_cases.py path/to/ember [TESTDATA-DIR] [--list]

ONNX ships a test case for each operator: a one-node model (node/) or a
small network PyTorch exported (pytorch-converted/, pytorch-operator/),
inputs and the expected outputs as TensorProto files. Every case whose
nodes are all operators ember's import reads is tried. ember's models take
one batch of samples, (N, C, H, W) or (N, features), and end in a linear
layer giving the logits, so each case is fitted to that shape as far as it
honestly goes:

  - inputs after the first (weights, biases, BatchNorm's statistics) become
    initializers holding the case's own values: ember reads weights from
    the file;
  - the first input is the data; a 3-dimensional one (N, H, W) given to an
    operator that works element by element (Relu, Sigmoid, ...) gets a
    channel axis of 1, which changes no value;
  - a Flatten and a Gemm with the identity matrix are appended, so the
    logits are the case's output, every value, in order.

ember's logits (`ember predict --load case.onnx --logits`) must equal the
expected output within 1e-4 (relative to its largest value, for large
ones). A case ember refuses must be refused cleanly (exit 3, naming the
node): its operator with attributes ember has no layer for (asymmetric
padding, dilations, ceil mode, training mode, a Gemm with alpha or a
transposed input). A case that cannot be fitted (a data input of 1 or 5
dimensions, two data inputs, an integer or constant-only graph) is listed
as not run, with why. The cases expected to run are listed below: one
that stops matching or running fails the test.

Needs onnx and NumPy (build/pyenv); exits 77 without them or the test data.
"""
import glob
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
except ImportError as err:
    print(f"onnx_node_cases: skipped: {err} (scripts/setup.sh --tests installs onnx into build/pyenv)",
          file=sys.stderr)
    sys.exit(77)

# the operators ember's import reads (models/model-onnx-import.c)
IMPORTED = {"Conv", "Gemm", "MatMul", "Add", "BatchNormalization", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Div",
            "Erf", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean", "Flatten", "Reshape", "Shape",
            "Gather", "Unsqueeze", "Concat", "Squeeze", "Dropout", "Identity", "Constant", "Pad", "Softplus", "Clip",
            "HardSigmoid", "HardSwish", "Mish"}
# operators that work value by value: a channel axis of 1 changes nothing
ELEMENTWISE = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Dropout", "Identity", "Softplus", "Clip", "HardSigmoid",
               "HardSwish", "Mish"}
# the cases that run and match; a change that breaks one fails the test
EXPECTED = """
node/test_averagepool_2d_default node/test_averagepool_2d_precomputed_strides node/test_averagepool_2d_strides
node/test_basic_conv_with_padding node/test_basic_conv_without_padding node/test_batchnorm_epsilon
node/test_batchnorm_example node/test_conv_with_strides_no_padding node/test_conv_with_strides_padding
node/test_dropout_default node/test_dropout_default_old node/test_dropout_default_ratio
node/test_dropout_random_old node/test_flatten_axis1 node/test_flatten_default_axis
node/test_gemm_default_no_bias node/test_gemm_default_scalar_bias
node/test_gemm_default_single_elem_vector_bias node/test_gemm_default_vector_bias
node/test_gemm_default_zero_bias node/test_gemm_transposeB node/test_globalaveragepool
node/test_globalaveragepool_precomputed node/test_hardswish node/test_identity node/test_leakyrelu node/test_leakyrelu_default
node/test_leakyrelu_example node/test_matmul_2d node/test_maxpool_2d_default
node/test_maxpool_2d_precomputed_strides node/test_maxpool_2d_strides node/test_relu node/test_sigmoid
node/test_sigmoid_example node/test_softplus node/test_softplus_example node/test_squeeze_negative_axes
node/test_tanh node/test_tanh_example
pytorch-converted/test_AvgPool2d pytorch-converted/test_AvgPool2d_stride
pytorch-converted/test_BatchNorm2d_eval pytorch-converted/test_BatchNorm2d_momentum_eval
pytorch-converted/test_Conv2d_padding pytorch-converted/test_Conv2d_strided pytorch-converted/test_LeakyReLU
pytorch-converted/test_LeakyReLU_with_negval pytorch-converted/test_Linear pytorch-converted/test_ReLU
pytorch-converted/test_Sigmoid pytorch-converted/test_Softplus pytorch-converted/test_Tanh pytorch-operator/test_operator_flatten
simple/test_single_relu_model
""".split()

failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"onnx_node_cases: FAIL: {message}", file=sys.stderr)
    return cond


def load_tensors(folder, kind):
    paths = sorted(glob.glob(os.path.join(folder, f"{kind}_*.pb")), key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    return [numpy_helper.to_array(onnx.load_tensor(p)) for p in paths]


def fit(model, inputs, want):
    """The case as a model ember takes, and its data; or (None, why)."""
    g = model.graph
    ops = {n.op_type for n in g.node}
    if not ops <= IMPORTED:
        return None, f"operators ember has no layer for: {', '.join(sorted(ops - IMPORTED))}"
    if not inputs or len(g.output) != 1 or want.dtype != np.float32:
        return None, "no data input, several outputs, or an output that is not float32"
    initialized = {t.name for t in g.initializer}
    feeds = [i for i in g.input if i.name not in initialized]
    if len(feeds) != len(inputs):
        return None, "inputs and test data disagree"
    x = inputs[0]
    if x.dtype != np.float32 or any(a.dtype not in (np.float32, np.int64) for a in inputs[1:]):
        return None, "inputs that are not float32"
    if x.ndim in (1, 3) and ops <= ELEMENTWISE:  # (N,) as N samples of one feature; (N, H, W) of one channel
        x = x[:, None]
    if x.ndim not in (2, 4):
        return None, f"a data input of {x.ndim} dimensions (ember's samples are (C, H, W) or (features))"
    for vi, value in zip(feeds[1:], inputs[1:]):  # weights and statistics: the file's own
        g.initializer.append(numpy_helper.from_array(value, vi.name))
    keep = [feeds[0]]
    del g.input[:]
    g.input.extend(keep)
    data = g.input[0]
    data.type.tensor_type.ClearField("shape")
    for d in x.shape:
        data.type.tensor_type.shape.dim.add().dim_value = d
    features = int(np.prod(want.shape[1:])) if want.ndim >= 1 else 1
    if want.ndim < 1 or want.shape[0] != x.shape[0]:
        return None, f"an output of shape {want.shape}, not one row per sample"
    if features > 4096:
        return None, f"{features} output values a sample: the identity head appended would be too large"
    out = g.output[0].name
    g.node.append(helper.make_node("Flatten", [out], ["ember_flat"], axis=1))
    g.initializer.append(numpy_helper.from_array(np.eye(features, dtype=np.float32), "ember_head.weight"))
    g.initializer.append(numpy_helper.from_array(np.zeros(features, np.float32), "ember_head.bias"))
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    old = {"broadcast": 1} if opset < 7 else {}  # before opset 7, Gemm broadcast its bias only when asked
    g.node.append(helper.make_node("Gemm", ["ember_flat", "ember_head.weight", "ember_head.bias"], ["logits"],
                                   transB=1, **old))
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, [x.shape[0], features]))
    return (model, x), None


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    listing = "--list" in sys.argv
    ember = args[0]
    root = args[1] if len(args) > 1 else "/usr/share/libonnx-testdata/data"
    if not os.path.isdir(os.path.join(root, "node")):
        print(f"onnx_node_cases: skipped: no {root}/node (scripts/setup.sh --tests installs libonnx-testdata)",
              file=sys.stderr)
        return 77
    ran, refused, unfit = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for case in sorted(glob.glob(os.path.join(root, "*", "test_*"))):
            name = os.path.relpath(case, root)
            sets = sorted(glob.glob(os.path.join(case, "test_data_set_*")))
            try:
                model = onnx.load(os.path.join(case, "model.onnx"))
            except Exception:  # noqa: BLE001 -- a case this onnx cannot read is not ember's to run
                continue
            if not sets or not {n.op_type for n in model.graph.node} <= IMPORTED:
                continue
            try:
                inputs, outputs = load_tensors(sets[0], "input"), load_tensors(sets[0], "output")
            except ValueError:  # an optional or a sequence, which ember's models never take
                unfit.append((name, "inputs or outputs that are not tensors"))
                continue
            if len(outputs) != 1:
                unfit.append((name, "several outputs"))
                continue
            fitted, why = fit(model, inputs, outputs[0])
            if not fitted:
                unfit.append((name, why))
                continue
            model, x = fitted
            path, xs, out = (os.path.join(tmp, f) for f in ("case.onnx", "x.npy", "out.npy"))
            onnx.save(model, path)
            np.save(xs, x)
            if os.path.exists(out):
                os.unlink(out)
            done = subprocess.run([ember, "predict", "--load", path, "--device", "cpu", "--logits", "--output", out,
                                   xs], capture_output=True, text=True)
            if done.returncode != 0:
                why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no message"
                check(done.returncode == 3 and "node" in why, f"{name}: ember exited {done.returncode}: {why}")
                refused.append((name, why.replace("ember: error: cannot read the ONNX model: ", "")))
                continue
            want = outputs[0].reshape(x.shape[0], -1)
            got = np.load(out)
            scale = max(1.0, float(np.abs(want).max()))
            diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
            check(diff <= 1e-4 * scale, f"{name}: ember's output differs from ONNX's by {diff:.3g}")
            ran.append((name, diff))
    names = {n for n, _ in ran}
    for name in EXPECTED:
        check(name in names, f"{name} no longer runs")
    if listing:
        for name, diff in ran:
            print(f"ran      {name}  (largest difference {diff:.2g})")
        for name, why in refused:
            print(f"refused  {name}: {why}")
        for name, why in unfit:
            print(f"not run  {name}: {why}")
    print(f"onnx_node_cases: {len(ran)} cases ran and matched, {len(refused)} refused by ember (each naming the node), "
          f"{len(unfit)} could not be fitted to ember's models")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
