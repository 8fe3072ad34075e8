#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/interop/test_gguf_vs_python.py — io/gguf.c against the `gguf`
package (llama.cpp's own Python reader and writer).

    test_gguf_vs_python.py GGUF_DUMP

Writes GGUF files with the package: a tensor of every type ember reads
(F32, F16 with infinities, NaN and subnormals, BF16, Q4_0, Q4_1, Q8_0
quantised by the package, Q4_K and Q6_K as random blocks, since the package
only dequantises those), in several shapes, and metadata of every type.
gguf-dump prints what ember read and writes every tensor dequantised; each
value must equal the package's dequantisation bit for bit, each shape and
key must match. Then damaged files: every truncation of a small file, a
wrong magic number, version 1, a big-endian file, a type ember does not
read (named in the refusal), a tensor past the end: each refused with a
message, never a crash. Exit 77 without the package.
"""
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import gguf
except ImportError as e:
    print(f"skipped: {e} (scripts/setup.sh --tests installs gguf into build/pyenv)")
    sys.exit(77)

Q = gguf.GGMLQuantizationType
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def random_k_blocks(rng, qtype, rows, cols):
    """raw blocks of a K-quant with sane f16 scales and random everything else"""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, size=(rows, cols // block, size), dtype=np.uint8)
    scales = rng.uniform(-0.05, 0.05, size=(rows, cols // block, 2)).astype(np.float16).view(np.uint8)
    if qtype == Q.Q4_K:  # d and dmin first
        raw[..., 0:4] = scales.reshape(rows, cols // block, 4)
    else:  # Q6_K: d last
        raw[..., size - 2:size] = scales[..., 0:2]
    return raw.reshape(rows, cols // block * size)


def write_model(path, rng):
    w = gguf.GGUFWriter(path, "llama")
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 60000)
    w.add_int16("test.i16", -30000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_float32("test.f32", 1.5)
    w.add_bool("test.bool", True)
    w.add_string("test.string", "héllo, wörld")
    w.add_uint64("test.u64", 2**63 + 5)
    w.add_int64("test.i64", -(2**62))
    w.add_float64("test.f64", 2.0**-30)
    w.add_array("test.array_i32", [1, -2, 3])
    w.add_array("test.array_str", ["a", "", "bc"])
    w.add_array("test.array_nested", [[1, 2], [3]])
    tensors = {}
    for rows, cols in ((4, 64), (3, 256), (1, 512)):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        tensors[f"f32_{rows}x{cols}"] = (x, Q.F32)
        h = x.astype(np.float16)
        if rows == 4:  # the specials: infinities, NaN, subnormals, signed zero
            h.view(np.uint16)[0, :8] = [0x7C00, 0xFC00, 0x7E00, 0x0001, 0x83FF, 0x8000, 0x03FF, 0x7BFF]
        tensors[f"f16_{rows}x{cols}"] = (h, Q.F16)
        tensors[f"bf16_{rows}x{cols}"] = (gguf.quants.quantize(x, Q.BF16), Q.BF16)
        for qtype in (Q.Q4_0, Q.Q4_1, Q.Q8_0):
            tensors[f"{qtype.name.lower()}_{rows}x{cols}"] = (gguf.quants.quantize(x, qtype), qtype)
        if cols % 256 == 0:
            for qtype in (Q.Q4_K, Q.Q6_K):
                tensors[f"{qtype.name.lower()}_{rows}x{cols}"] = (random_k_blocks(rng, qtype, rows, cols), qtype)
    # a 3-D one: rows of rows
    x = rng.standard_normal((2, 3, 32)).astype(np.float32)
    tensors["q8_0_2x3x32"] = (gguf.quants.quantize(x, Q.Q8_0), Q.Q8_0)
    for name, (data, qtype) in tensors.items():
        w.add_tensor(name, data, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return tensors


def dump(gguf_dump, path, out):
    return subprocess.run([gguf_dump, path, out], capture_output=True, text=True)


def main():
    gguf_dump = sys.argv[1]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "all.gguf")
        write_model(path, rng)
        r = dump(gguf_dump, path, tmp)
        check(r.returncode == 0, f"gguf-dump refused the package's file: {r.stderr}")
        lines = r.stdout.splitlines()
        ours = {ln.split()[1]: ln.split()[2:] for ln in lines if ln.startswith("tensor ")}
        keys = {ln.split()[1]: ln.split()[2:] for ln in lines if ln.startswith("key ")}
        reader = gguf.GGUFReader(path)
        check(len(ours) == len(reader.tensors), f"{len(ours)} tensors read, the package has {len(reader.tensors)}")
        for t in reader.tensors:
            if t.name not in ours:
                check(False, f"tensor {t.name} missing")
                continue
            qtype, shape = ours[t.name]
            want_shape = ",".join(str(int(d)) for d in reversed(t.shape))
            check(qtype == t.tensor_type.name, f"{t.name}: type {qtype}, the package says {t.tensor_type.name}")
            check(shape == want_shape, f"{t.name}: shape {shape}, the package's row-major {want_shape}")
            want = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).ravel()
            got = np.fromfile(os.path.join(tmp, t.name + ".f32"), dtype=np.float32)
            same = got.size == want.size and np.array_equal(got.view(np.uint32), want.view(np.uint32))
            if not same and got.size == want.size:
                bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
                check(False, f"{t.name}: {bad.size} of {want.size} values differ in their bits, first at "
                      f"{bad[0]}: {got[bad[0]]!r} against {want[bad[0]]!r}")
            else:
                check(same, f"{t.name}: {got.size} values against {want.size}")
        for name, field in reader.fields.items():
            if name.startswith("GGUF."):
                continue
            check(name in keys, f"key {name} missing")
        check(keys.get("test.array_str") == ["string", "3"], f"test.array_str read as {keys.get('test.array_str')}")
        check(keys.get("test.u64") == ["u64", "1"], f"test.u64 read as {keys.get('test.u64')}")
        print(f"{len(reader.tensors)} tensors and {len(keys)} keys agree with the gguf package")

        # damaged files: refused with a message, and no crash
        small = os.path.join(tmp, "small.gguf")
        w = gguf.GGUFWriter(small, "llama")
        w.add_array("tokenizer.ggml.tokens", ["a", "b"])
        w.add_tensor("w", gguf.quants.quantize(rng.standard_normal((2, 32)).astype(np.float32), Q.Q4_1),
                     raw_dtype=Q.Q4_1)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        data = open(small, "rb").read()
        bad = os.path.join(tmp, "bad.gguf")

        def refused(blob, what, message=None):
            with open(bad, "wb") as f:
                f.write(blob)
            r = dump(gguf_dump, bad, tmp)
            check(r.returncode == 1 and "GGUF" in r.stderr,
                  f"{what}: exit {r.returncode}, {r.stderr.strip()[:200]!r}")
            if message:
                check(message in r.stderr, f"{what}: the message does not say {message!r}: {r.stderr.strip()}")

        t = gguf.GGUFReader(small).tensors[0]
        end = int(t.data_offset) + int(t.n_bytes)  # the writer pads past it to the alignment
        for n in range(end):
            refused(data[:n], f"cut at byte {n} of {len(data)}")
        r = dump(gguf_dump, small, tmp)
        check(r.returncode == 0, f"the file before damage was refused: {r.stderr}")
        refused(b"GGUX" + data[4:], "a wrong magic number", "does not start with")
        refused(data[:4] + struct.pack("<I", 1) + data[8:], "version 1", "version 1")
        refused(data[:4] + struct.pack(">I", 3) + data[8:], "a big-endian file", "big-endian")
        # the tensor's type (after its name, dimension count and dimensions) changed to Q5_K
        at = data.index(b"\x01\x00\x00\x00\x00\x00\x00\x00w") + 9
        ndim_end = at + 4 + 8 * 2
        refused(data[:ndim_end] + struct.pack("<I", 13) + data[ndim_end + 4:], "a Q5_K tensor", "Q5_K")
        # its offset moved past the end
        refused(data[:ndim_end + 4] + struct.pack("<Q", 1 << 40) + data[ndim_end + 12:], "an offset past the end",
                "outside")
        # the array's count made huge
        at = data.index(b"tokenizer.ggml.tokens") + len("tokenizer.ggml.tokens") + 8
        refused(data[:at] + struct.pack("<Q", 1 << 60) + data[at + 8:], "an array too long for the file", "array")
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
