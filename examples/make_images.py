#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/make_images.py — remakes the example images the README's and docs' commands use.

    python3 examples/make_images.py [FASHION-MNIST-DIR]

Writes, with the standard library alone (PNG through zlib):

  examples/images/boot.png, pullover.png, trouser.png, shirt.png, sandal.png,
      sneaker.png      Fashion-MNIST test images 0, 1, 2, 4, 8 and 9 (light
                       things on black, 28x28 gray), for `ember predict`
  examples/images/boot-photo.png
                       test image 0 as a photo of a boot would be: colour,
                       112x112, dark on a white background; predict says it
                       converts and resizes it, and warns that it is unlike
                       the training images
  examples/shapes/{circle,square,triangle}/NN.png
                       a small folder data set: 12 colour 40x40 pictures of
                       each shape, drawn at seeded random places, sizes and
                       colours, for `ember train --data folder`

Fashion-MNIST (Zalando Research, MIT licence) comes from Debian's
dataset-fashion-mnist, /usr/share/datasets/fashion-mnist by default.
The files are committed; run this only to change them.
"""
import gzip
import os
import random
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def png(path, width, height, channels, pixels):
    """Writes 8-bit gray (1) or RGB (3) pixels, rows top to bottom, as a PNG file."""
    stride = width * channels
    raw = b"".join(b"\x00" + bytes(pixels[y * stride:(y + 1) * stride]) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    colour = {1: 0, 3: 2}[channels]
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def fashion_images(folder):
    raw = gzip.open(os.path.join(folder, "t10k-images-idx3-ubyte.gz")).read()
    count, rows, cols = struct.unpack(">III", raw[4:16])
    return [raw[16 + i * rows * cols:16 + (i + 1) * rows * cols] for i in range(count)], rows, cols


def photo(image, side, scale):
    """A 28x28 gray Fashion-MNIST image as a colour photo: dark on white, `scale` times larger."""
    out = bytearray()
    for y in range(side):
        for x in range(side):
            v = image[(y // scale) * 28 + x // scale]
            # a brown boot on a white table: the darker the photo, the more of the thing
            out += bytes((255 - v * 150 // 255, 255 - v * 190 // 255, 255 - v * 220 // 255))
    return out


def shape_picture(kind, rng, side=40):
    background = [rng.randrange(0, 60) for _ in range(3)]
    colour = [rng.randrange(120, 256) for _ in range(3)]
    size = rng.randrange(10, 17)
    cx, cy = rng.randrange(size, side - size), rng.randrange(size, side - size)
    out = bytearray()
    for y in range(side):
        for x in range(side):
            dx, dy = x - cx, y - cy
            inside = (kind == "circle" and dx * dx + dy * dy <= size * size) or \
                     (kind == "square" and abs(dx) <= size * 0.8 and abs(dy) <= size * 0.8) or \
                     (kind == "triangle" and -size <= dy <= size and abs(dx) <= (dy + size) / 2)
            out += bytes(colour if inside else background)
    return out


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/datasets/fashion-mnist"
    images, rows, cols = fashion_images(folder)
    os.makedirs(os.path.join(HERE, "images"), exist_ok=True)
    for index, name in ((0, "boot"), (1, "pullover"), (2, "trouser"), (4, "shirt"), (8, "sandal"), (9, "sneaker")):
        png(os.path.join(HERE, "images", name + ".png"), cols, rows, 1, images[index])
    png(os.path.join(HERE, "images", "boot-photo.png"), 112, 112, 3, photo(images[0], 112, 4))
    rng = random.Random(0)
    for kind in ("circle", "square", "triangle"):
        os.makedirs(os.path.join(HERE, "shapes", kind), exist_ok=True)
        for i in range(12):
            png(os.path.join(HERE, "shapes", kind, f"{i:02d}.png"), 40, 40, 3, shape_picture(kind, rng))


if __name__ == "__main__":
    main()
