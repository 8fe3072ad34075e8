#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/keras_train.py — the Keras (TensorFlow) peer for bench/cpu_vs_peers.sh.

    keras_train.py --model kerascnn --threads 2 [--epochs 1] [--steps N] [--data-dir DIR]

Trains the Keras twin of an ember built-in model on Fashion-MNIST as a
Keras user would and as `ember train` does: batch 64, Adam lr 0.001, seed
0, a fresh shuffle each epoch, the last short batch kept, `model.fit`.
Before the timed epochs, a warm-up fit on 11 batches (10 full, one short,
as an epoch ends) traces and compiles the training step; the weights and
Adam's state are then put back as they were, so the timed run trains from
the same start as an untimed one would. Threads: tf.config.threading with
intra-op = --threads and inter-op = 1.

Prints one JSON line per epoch: {"epoch", "images_per_s" (the epoch's
training steps inside model.fit, data in memory), "train_loss" (the
epoch's mean, as fit logs it), "test_acc" (model.evaluate after the
epoch), "seconds", "peak_rss_mib"}. --steps N stops each epoch after N
batches: speed alone, the accuracy is then of a part-epoch.

The models (ember's: `build/ember summary --model M`; PyTorch's: tests/interop/torch_zoo.py):
  simplecnn  Conv2d(1, 16, 3, padding=1), ReLU, MaxPool2d(2), Flatten, Linear(3136, 10)
  kerascnn   the Keras document's: Conv2D(32, 3x3, relu), Flatten, Dense(10, softmax)
  resnet8    a 3x3 conv of 16 with BatchNorm and ReLU; three basic blocks (torchvision's:
             conv-BN-ReLU-conv-BN plus the input, or a strided 1x1 conv with BN where the
             shape changes, then ReLU) of 16, 32 (stride 2) and 64 (stride 2) channels;
             global average pool; Linear(64, 10)
  vgg8       three blocks of two 3x3 convs (16, 32, 64 channels) each with BatchNorm and
             ReLU, each block max-pooled; Flatten, Dropout(0.5), Linear(576, 256), ReLU,
             Dropout(0.5), Linear(256, 10)
Images are (28, 28, 1), channels last, Keras's own layout on the CPU. The
weights start from Keras's initialisers (Glorot), not PyTorch's.
"""
import argparse
import gzip
import json
import os
import resource
import sys
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402  (after the log level is set)

layers = tf.keras.layers


def read_idx(path):
    """An IDX file (gzip) as a NumPy array of its dims: magic 0x0000 08 D, D big-endian int32 dims, bytes."""
    with gzip.open(path) as f:
        raw = f.read()
    ndim = raw[3]
    dims = np.frombuffer(raw, dtype=">i4", count=ndim, offset=4)
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def split(data_dir, prefix):
    x = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    return (x.astype(np.float32) / 255)[..., None], y.astype(np.int64)  # (N, 28, 28, 1), (N,)


def conv3x3(x, filters, stride):
    """nn.Conv2d(C, filters, 3, stride, padding=1, bias=False): Keras's "same" pads a stride-2
    convolution on one side only, so pad by one on each side and convolve "valid"."""
    if stride == 1:
        return layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
    return layers.Conv2D(filters, 3, strides=stride, use_bias=False)(layers.ZeroPadding2D(1)(x))


def batch_norm(x):
    return layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(x)  # PyTorch's momentum 0.1 and eps


def basic_block(x, filters, stride):
    out = layers.ReLU()(batch_norm(conv3x3(x, filters, stride)))
    out = batch_norm(conv3x3(out, filters, 1))
    if stride != 1 or x.shape[-1] != filters:
        x = batch_norm(layers.Conv2D(filters, 1, strides=stride, use_bias=False)(x))
    return layers.ReLU()(layers.Add()([out, x]))


def resnet8(inputs):
    x = layers.ReLU()(batch_norm(conv3x3(inputs, 16, 1)))
    x = basic_block(x, 16, 1)
    x = basic_block(x, 32, 2)
    x = basic_block(x, 64, 2)
    return layers.Dense(10)(layers.GlobalAveragePooling2D()(x))


def vgg8(inputs):
    x = inputs
    for filters in (16, 32, 64):
        for _ in range(2):
            x = layers.ReLU()(batch_norm(conv3x3(x, filters, 1)))
        x = layers.MaxPooling2D(2)(x)
    x = layers.Dense(256, activation="relu")(layers.Dropout(0.5)(layers.Flatten()(x)))
    return layers.Dense(10)(layers.Dropout(0.5)(x))


def build(name):
    """The model and its loss: logits and a from-logits loss, except the Keras document's softmax."""
    inputs = tf.keras.Input((28, 28, 1))
    logits = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if name == "simplecnn":
        x = layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
        outputs = layers.Dense(10)(layers.Flatten()(layers.MaxPooling2D(2)(x)))
        return tf.keras.Model(inputs, outputs, name=name), logits
    if name == "kerascnn":
        x = layers.Flatten()(layers.Conv2D(32, (3, 3), activation="relu")(inputs))
        outputs = layers.Dense(10, activation="softmax")(x)
        return tf.keras.Model(inputs, outputs, name=name), "sparse_categorical_crossentropy"
    return tf.keras.Model(inputs, (vgg8 if name == "vgg8" else resnet8)(inputs), name=name), logits


def peak_rss_mib():
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # Linux: KiB


class EpochReport(tf.keras.callbacks.Callback):
    """Times each epoch's training steps, then evaluates and prints the epoch's JSON line."""

    def __init__(self, a, test, images):
        super().__init__()
        self.a, self.test, self.images, self.t0 = a, test, images, 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self.t0 = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        seconds = time.perf_counter() - self.t0
        _, acc = self.model.evaluate(*self.test, batch_size=1000, verbose=0)
        print(json.dumps({"peer": f"keras {tf.keras.__version__} (tensorflow {tf.__version__})",
                          "model": self.a.model, "epoch": epoch + 1, "threads": self.a.threads,
                          "images_per_s": round(self.images / seconds, 1), "train_loss": round(logs["loss"], 4),
                          "test_acc": round(float(acc), 4), "seconds": round(seconds, 3),
                          "peak_rss_mib": peak_rss_mib()}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, choices=["simplecnn", "kerascnn", "resnet8", "vgg8"])
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=0, help="stop each epoch after N batches (0: whole epochs)")
    ap.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    tf.config.threading.set_intra_op_parallelism_threads(a.threads)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(a.seed)
    xtr, ytr = split(a.data_dir, "train")
    test = split(a.data_dir, "t10k")

    model, loss = build(a.model)
    model.compile(optimizer=tf.keras.optimizers.Adam(a.lr), loss=loss, metrics=["accuracy"])
    start = model.get_weights()  # BatchNorm's moving statistics too
    warm = 10 * a.batch + (xtr.shape[0] % a.batch or a.batch)  # ten batches and one of the epoch's last size
    model.fit(xtr[:warm], ytr[:warm], batch_size=a.batch, epochs=1, verbose=0)
    model.evaluate(test[0][:1000], test[1][:1000], batch_size=1000, verbose=0)
    model.set_weights(start)
    for v in model.optimizer.variables:  # the step count and Adam's moments; the rate stays
        if not v.path.endswith("learning_rate"):
            v.assign(tf.zeros_like(v))

    steps = -(-xtr.shape[0] // a.batch)
    if a.steps:
        steps = min(steps, a.steps)
    images = min(xtr.shape[0], steps * a.batch)
    model.fit(xtr, ytr, batch_size=a.batch, epochs=a.epochs, steps_per_epoch=steps if a.steps else None,
              shuffle=True, verbose=0, callbacks=[EpochReport(a, test, images)])


if __name__ == "__main__":
    sys.exit(main())
