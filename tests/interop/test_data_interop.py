#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_data_interop.py — NumPy arrays and CSV tables as ember's data, written by NumPy itself.

    test_data_interop.py path/to/ember [FASHION-MNIST-DIR]

--data npy: the first 2,500 Fashion-MNIST images saved by numpy.save as a
    folder of uint8 (N, 1, 28, 28) images and int64 labels train SimpleCNN;
    the same images as float32 / 255 in numpy.savez's .npz and as float64 in
    numpy.savez_compressed's evaluate to the same loss (uint8 is scaled as
    images are); (N, features) float64 rows train the tabular model; a
    damaged archive, float labels, a missing array and a wrong shape exit 3
    naming the file.
--data csv: a table NumPy writes from the same images (the mean ink of
    each 4x4 block, 49 columns, the class's name in the first column):
    no Debian package ships a small real classification table without
    pulling in SciPy and Boost (scikit-learn's iris.csv and wine_data.csv
    come with python3-sklearn), so the table is built from real images.
    The tabular model trains on train.csv and is tested on test.csv; the
    checkpoint holds NumPy's mean and standard deviation of train.csv;
    `ember predict` on test.csv gives the logits NumPy computes from the
    checkpoint's weights on rows standardised with them, and eval's
    accuracy; exported to ONNX, ONNX Runtime gives the same logits on the
    raw rows (the file standardises them itself), and so does predict on
    the rows as a .npy array; one file holds out a tenth of each class; a bad cell names
    its line and column.

Needs NumPy (exits 77, CTest's "skipped", without it). About 20 s on two cores.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as err:
    print(f"data_interop: skipped: {err} (scripts/setup.sh --tests installs NumPy)", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fashion_subset import read_idx  # noqa: E402

CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
failures = 0


def check(cond, message):
    global failures
    if not cond:
        failures += 1
        print(f"data_interop: FAIL: {message}", file=sys.stderr)
    return cond


def run(*args, expect=0):
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if expect is not None and done.returncode != expect:
        check(False, f"{' '.join(map(str, args))} exited {done.returncode}, not {expect}: {done.stderr.strip()[-800:]}")
    return done


def test_accuracy(stderr):
    """The last epoch line's test accuracy."""
    lines = [l for l in stderr.splitlines() if "test accuracy" in l]
    return float(lines[-1].split("test accuracy ")[1].split(",")[0]) if lines else -1.0


def eval_json(ember, *args):
    done = run(ember, "eval", "--json", "--device", "cpu", *args)
    return json.loads(done.stdout) if done.returncode == 0 else {}


def checkpoint(path):
    """A safetensors file's metadata and float32 tensors."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        lo, hi = t["data_offsets"]
        tensors[name] = np.frombuffer(raw[8 + n + lo:8 + n + hi], np.float32).reshape(t["shape"])
    return meta, tensors


def test_npy(ember, tmp, x, y):
    folder = os.path.join(tmp, "arrays")
    os.makedirs(folder)
    np.save(os.path.join(folder, "x_train.npy"), x[:2000, None])
    np.save(os.path.join(folder, "y_train.npy"), y[:2000].astype(np.int64))
    np.save(os.path.join(folder, "x_test.npy"), x[2000:, None])
    np.save(os.path.join(folder, "y_test.npy"), y[2000:].astype(np.int64))
    ck = os.path.join(tmp, "npy.safetensors")
    done = run(ember, "train", "--data", "npy", folder, "--epochs", 2, "--quiet", "--device", "cpu", "--save", ck)
    acc = test_accuracy(done.stderr)
    check(acc > 0.6, f"SimpleCNN on the .npy folder: test accuracy {acc} (want over 0.6)")
    print(f"data_interop: --data npy folder (uint8 images, int64 labels): SimpleCNN test accuracy {acc:.3f}")

    # the same images as floats, stored and deflated: the same loss
    stored, deflated = os.path.join(tmp, "float32.npz"), os.path.join(tmp, "float64.npz")
    f64 = x[:, None].astype(np.float64) / 255.0
    np.savez(stored, x_train=f64[:2000].astype(np.float32), y_train=y[:2000].astype(np.int64),
             x_test=f64[2000:].astype(np.float32), y_test=y[2000:].astype(np.int64))
    np.savez_compressed(deflated, x_train=f64[:2000], y_train=y[:2000].astype(np.int32), x_test=f64[2000:],
                        y_test=y[2000:].astype(np.int64))
    base = eval_json(ember, "--load", ck)
    for path in (stored, deflated):
        got = eval_json(ember, "--load", ck, "--data", "npy", path)
        check(base and got and abs(got["test_loss"] - base["test_loss"]) < 1e-5 and got["images"] == 500,
              f"{os.path.basename(path)}: test loss {got.get('test_loss')}, the uint8 folder's {base.get('test_loss')}")
    print(f"data_interop: float32 .npz (savez) and float64 .npz (savez_compressed): the uint8 folder's test loss "
          f"{base.get('test_loss')}")

    # (N, features) rows train the tabular model
    rows = os.path.join(tmp, "rows.npz")
    np.savez_compressed(rows, x_train=f64[:2000].reshape(2000, -1), y_train=y[:2000].astype(np.int64),
                        x_test=f64[2000:].reshape(500, -1), y_test=y[2000:].astype(np.int64))
    done = run(ember, "train", "--data", "npy", rows, "--model", "tabular", "--epochs", 3, "--quiet", "--device",
               "cpu")
    acc = test_accuracy(done.stderr)
    check("(2000 x 784, 10 classes)" in done.stderr and acc > 0.6,
          f"tabular on (N, 784) float64 rows: test accuracy {acc}: {done.stderr[-300:]}")
    print(f"data_interop: --data npy (N, 784) float64 rows: tabular test accuracy {acc:.3f}")

    # what is wrong is named, exit 3
    bad = os.path.join(tmp, "bad")
    os.makedirs(bad)
    for name in ("x_train", "y_train", "x_test", "y_test"):
        os.link(os.path.join(folder, name + ".npy"), os.path.join(bad, name + ".npy"))
    os.unlink(os.path.join(bad, "y_test.npy"))
    np.save(os.path.join(bad, "y_test.npy"), y[2000:].astype(np.float32))
    done = run(ember, "train", "--data", "npy", bad, "--device", "cpu", expect=3)
    check("y_test.npy: labels are a 1-dimensional array of integers" in done.stderr, f"float labels: {done.stderr}")
    cut = os.path.join(tmp, "cut.npz")
    raw = open(stored, "rb").read()
    open(cut, "wb").write(raw[:len(raw) // 2])
    done = run(ember, "train", "--data", "npy", cut, "--device", "cpu", expect=3)
    check("cut.npz is not a .npz archive" in done.stderr, f"a truncated archive: {done.stderr}")
    flipped = os.path.join(tmp, "flipped.npz")
    damaged = bytearray(raw)
    damaged[len(raw) // 3] ^= 0x40  # inside x_train's floats: only the CRC-32 can tell
    open(flipped, "wb").write(bytes(damaged))
    done = run(ember, "train", "--data", "npy", flipped, "--device", "cpu", expect=3)
    check("CRC-32" in done.stderr and "x_train.npy" in done.stderr, f"a damaged archive: {done.stderr}")
    lacking = os.path.join(tmp, "lacking.npz")
    np.savez(lacking, x_train=x[:10, None], y_train=y[:10].astype(np.int64), y_test=y[:10].astype(np.int64))
    done = run(ember, "train", "--data", "npy", lacking, "--device", "cpu", expect=3)
    check("has no x_test.npy (it holds x_train.npy, y_train.npy, y_test.npy)" in done.stderr,
          f"a missing array: {done.stderr}")
    three = os.path.join(tmp, "three.npz")
    np.savez(three, x_train=x[:10], y_train=y[:10].astype(np.int64), x_test=x[:10], y_test=y[:10].astype(np.int64))
    done = run(ember, "train", "--data", "npy", three, "--device", "cpu", expect=3)
    check("x_train.npy has 3 dimensions" in done.stderr, f"(N, H, W) images: {done.stderr}")
    uneven = os.path.join(tmp, "uneven.npz")
    np.savez(uneven, x_train=x[:10, None], y_train=y[:9].astype(np.int64), x_test=x[:10, None],
             y_test=y[:10].astype(np.int64))
    done = run(ember, "train", "--data", "npy", uneven, "--device", "cpu", expect=3)
    check("x_train.npy holds 10 samples but" in done.stderr and "9 labels: x and y are the same samples" in done.stderr,
          f"x and y of different lengths: {done.stderr}")


def block_features(x):
    """Each image's mean ink in its 7x7 grid of 4x4 blocks: 49 columns."""
    return x.astype(np.float64).reshape(-1, 7, 4, 7, 4).mean(axis=(2, 4)).reshape(len(x), 49)


def write_table(path, features, labels, first_label=True):
    names = [f"block{i}" for i in range(features.shape[1])]
    with open(path, "w") as f:
        f.write(",".join(["class"] + names if first_label else names + ["class"]) + "\n")
        for row, label in zip(features, labels):
            cells = [f"{v:.4g}" for v in row]
            label = f'"{CLASSES[label]}"' if "/" in CLASSES[label] else CLASSES[label]
            f.write(",".join([label] + cells if first_label else cells + [label]) + "\n")


def test_csv(ember, tmp, x, y):
    feats = block_features(x)
    folder = os.path.join(tmp, "table")
    os.makedirs(folder)
    train, test = os.path.join(folder, "train.csv"), os.path.join(folder, "test.csv")
    write_table(train, feats[:2000], y[:2000])
    write_table(test, feats[2000:], y[2000:])
    ck = os.path.join(tmp, "table.safetensors")
    done = run(ember, "train", "--data", "csv", folder, "--label", "class", "--model", "tabular", "--epochs", 10,
               "--quiet", "--device", "cpu", "--save", ck)
    acc = test_accuracy(done.stderr)
    check(acc > 0.7, f"tabular on the CSV table: test accuracy {acc} (want over 0.7)")
    print(f"data_interop: --data csv (2,000 rows of 49 features, given splits): tabular test accuracy {acc:.3f}")

    # the checkpoint holds train.csv's statistics, as NumPy computes them
    table = np.loadtxt(train, delimiter=",", skiprows=1, usecols=range(1, 50))
    meta, weights = checkpoint(ck)
    mean, std = np.array(json.loads(meta.get("ember.feature_mean", "[]"))), np.array(json.loads(meta.get("ember.feature_std", "[]")))
    want_std = table.std(axis=0)
    want_std[want_std == 0] = 1.0
    check(mean.shape == (49,) and np.allclose(mean, table.mean(axis=0), rtol=1e-6, atol=1e-6) and
          np.allclose(std, want_std, rtol=1e-6), "the checkpoint's mean and std are not NumPy's of train.csv")
    check(json.loads(meta.get("ember.features", "[]")) == [f"block{i}" for i in range(49)] and
          meta.get("ember.label") == "class", f"the checkpoint's columns: {meta.get('ember.features')}")

    # predict standardises new rows with them: NumPy's forward pass on the checkpoint's weights
    logits = os.path.join(tmp, "logits.npy")
    run(ember, "predict", "--load", ck, "--device", "cpu", "--logits", "--output", logits, test)
    rows = np.loadtxt(test, delimiter=",", skiprows=1, usecols=range(1, 50)).astype(np.float32)
    h = (rows - mean.astype(np.float32)) / std.astype(np.float32)
    for layer in ("fc1", "fc2"):
        h = np.maximum(h @ weights[layer + ".weight"].T + weights[layer + ".bias"], 0)
    want = h @ weights["fc3.weight"].T + weights["fc3.bias"]
    if check(os.path.exists(logits), "predict wrote no logits"):
        got = np.load(logits)
        diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
        check(diff < 1e-4, f"predict's logits on test.csv and NumPy's differ by {diff:.3g}")
        found = eval_json(ember, "--load", ck)
        order = sorted(CLASSES)  # ember's classes: the labels in byte order
        truth = np.array([order.index(CLASSES[k]) for k in y[2000:]])
        predicted = float((got.argmax(axis=1) == truth).mean())
        check(found and abs(found["test_acc"] - predicted) < 1e-9 and found["classes"][0]["class"] == "Ankle boot",
              f"eval's accuracy {found.get('test_acc')} and predict's {predicted}")
        print(f"data_interop: predict on test.csv: NumPy's logits within {diff:.2g}; eval's accuracy {predicted:.3f}")
        # exported to ONNX and read back by ember, the model keeps its standardisation (metadata_props)
        onnx_path, again = os.path.join(tmp, "table.onnx"), os.path.join(tmp, "again.npy")
        run(ember, "export", "--load", ck, "-o", onnx_path)
        run(ember, "predict", "--load", onnx_path, "--device", "cpu", "--logits", "--output", again, test)
        check(os.path.exists(again) and np.abs(np.load(again) - got).max() < 1e-5,
              "predict through the exported ONNX file gives other logits on test.csv")
        # the same rows as a NumPy array: predict standardises them as the table's, and says so
        raw_npy, from_npy = os.path.join(tmp, "rows.npy"), os.path.join(tmp, "from-npy.npy")
        np.save(raw_npy, rows)
        done = run(ember, "predict", "--load", ck, "--device", "cpu", "--logits", "--output", from_npy, raw_npy)
        check("each row's 49 features standardised as the training table's were" in done.stderr,
              f"predict on rows.npy did not say it standardised them: {done.stderr[-400:]}")
        check(os.path.exists(from_npy) and np.abs(np.load(from_npy) - got).max() < 1e-5,
              "predict on the table's rows as .npy gives other logits than on test.csv")
        # and the file standardises the raw features itself (Sub, Div at its input), as ONNX Runtime runs it
        try:
            import onnxruntime as ort
        except ImportError as err:
            print(f"data_interop: note: {err}: the exported table model was not run by ONNX Runtime")
        else:
            session = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
            raw = session.run(None, {"input": rows})[0]
            diff = float(np.abs(raw - got).max()) if raw.shape == got.shape else float("inf")
            check(diff < 1e-4, f"ONNX Runtime on test.csv's raw rows and ember's predict differ by {diff:.3g}")
            print(f"data_interop: the exported table model in ONNX Runtime, raw rows: within {diff:.2g}")

    # one file: each class holds out a tenth of its rows, the label the last column
    single = os.path.join(tmp, "all.csv")
    write_table(single, feats, y, first_label=False)
    counts = np.bincount(y, minlength=10)
    held = sum(max((n + 5) // 10, 1) if n >= 2 else 0 for n in counts)
    done = run(ember, "train", "--data", "csv", single, "--model", "tabular", "--epochs", 1, "--seed", 3, "--quiet",
               "--device", "cpu")
    check(f"csv train ({2500 - held} x 49, 10 classes)" in done.stderr, f"the hold-out: {done.stderr[-400:]}")

    # pandas' to_csv writes the row index as an unnamed first column: refused, saying how to leave it out
    indexed = os.path.join(tmp, "indexed.csv")
    open(indexed, "w").write("," + "\n".join(f"{i}," + line if i >= 0 else line
                                               for i, line in enumerate(open(train).read().splitlines(), -1)) + "\n")
    done = run(ember, "train", "--data", "csv", indexed, "--label", "class", "--device", "cpu", expect=3)
    check("column 1 of the header has no name" in done.stderr and "index=False" in done.stderr,
          f"a pandas index column: {done.stderr}")

    # a bad cell is named by its line and column; a row short of cells too
    lines = open(train).read().splitlines()
    bad = os.path.join(tmp, "bad.csv")
    cells = lines[4].split(",")
    cells[2] = "abc"
    open(bad, "w").write("\n".join(lines[:4] + [",".join(cells)] + lines[5:]) + "\n")
    done = run(ember, "train", "--data", "csv", bad, "--label", "class", "--device", "cpu", expect=3)
    check('bad.csv line 5, column 3 ("block1"): "abc" is not a number' in done.stderr, f"a bad cell: {done.stderr}")
    open(bad, "w").write("\n".join(lines[:7] + [",".join(lines[7].split(",")[:-1])] + lines[8:]) + "\n")
    done = run(ember, "train", "--data", "csv", bad, "--label", "class", "--device", "cpu", expect=3)
    check("bad.csv line 8 has 49 cells; the header has 50 columns" in done.stderr, f"a short row: {done.stderr}")
    done = run(ember, "train", "--data", "csv", train, "--label", "species", "--device", "cpu", expect=2)
    check('has no column "species"' in done.stderr, f"an unknown --label: {done.stderr}")
    open(bad, "w").write("a,class\n1.5,x\n2.5,y\n")  # one row a class: nothing to hold out
    done = run(ember, "train", "--data", "csv", bad, "--device", "cpu", expect=3)
    check("has no rows to test on (a table needs at least two rows in some class" in done.stderr,
          f"a table too small to test on: {done.stderr}")
    # predict: a table without a feature the model needs
    open(bad, "w").write("\n".join(",".join(l.split(",")[:-1]) for l in lines[:5]) + "\n")
    done = run(ember, "predict", "--load", ck, bad, expect=3)
    check('has no column "block48", a feature the model was trained on' in done.stderr, f"a missing column: {done.stderr}")


def main():
    ember = sys.argv[1]
    data = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/datasets/fashion-mnist"
    dims, raw = read_idx(os.path.join(data, "train-images-idx3-ubyte.gz"))
    x = np.frombuffer(raw, np.uint8).reshape(dims)[:2500]
    dims, raw = read_idx(os.path.join(data, "train-labels-idx1-ubyte.gz"))
    y = np.frombuffer(raw, np.uint8)[:2500]
    with tempfile.TemporaryDirectory() as tmp:
        test_npy(ember, tmp, x, y)
        test_csv(ember, tmp, x, y)
    if failures:
        print(f"data_interop: {failures} failure(s)", file=sys.stderr)
        return 1
    print("data_interop: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
