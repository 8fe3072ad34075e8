#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/common/fashion_subset.py — the first N images of Fashion-MNIST, as IDX files ember reads.

    fashion_subset.py SRC DST TRAIN TEST

Writes DST/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz holding the first
TRAIN training and TEST test samples of the data set in SRC (Debian's
dataset-fashion-mnist puts it in /usr/share/datasets/fashion-mnist), so that
a test can train a real network on real images in seconds. Also importable:
subset(src, dst, train, test), read_idx(path) -> (dims, bytes).
"""
import gzip
import os
import struct
import sys

FILES = (("train-images-idx3-ubyte", "train"), ("train-labels-idx1-ubyte", "train"),
         ("t10k-images-idx3-ubyte", "test"), ("t10k-labels-idx1-ubyte", "test"))


def read_idx(path):
    """An IDX file's dimensions and its data bytes."""
    raw = gzip.open(path).read()
    ndim = raw[3]
    dims = list(struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim]))
    return dims, raw[4 + 4 * ndim:]


def subset(src, dst, train, test):
    os.makedirs(dst, exist_ok=True)
    for name, split in FILES:
        keep = train if split == "train" else test
        raw = gzip.open(os.path.join(src, name + ".gz")).read()
        ndim = raw[3]
        dims = list(struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim]))
        per = 1
        for d in dims[1:]:
            per *= d
        if keep > dims[0]:
            raise ValueError(f"{name} holds {dims[0]} samples, not {keep}")
        dims[0] = keep
        body = raw[4 + 4 * ndim:4 + 4 * ndim + keep * per]
        with gzip.open(os.path.join(dst, name + ".gz"), "wb") as f:
            f.write(raw[:4] + struct.pack(">" + "I" * ndim, *dims) + body)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    subset(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
