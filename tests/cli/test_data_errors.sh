#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_data_errors.sh — data that is wrong is found before the
# work and exits with the data status, 3 (docs/reliability.md): a NumPy
# folder whose splits' samples differ in shape, a label that would size the
# model alone (NumPy and CSV), labels that disagree in count with their
# samples inside an archive that would inflate to gigabytes, NumPy headers
# with a key twice or a NUL; and CSV labels "1" and "1.0" are one class.
# The arrays are written here byte by byte (Python's standard library, no
# NumPy). Usage: test_data_errors.sh path/to/ember
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"
[ -n "$PYTHON" ] || { echo "test_data_errors: no python3 to write the arrays" >&2; exit 77; }

# npy FILE DTYPE SHAPE VALUES [HEADER]: a .npy file of that dtype ('<f4', '|u1', '<i8'), shape (a Python
# tuple) and values (a Python expression giving a list), or with HEADER as its header's text (<NUL>: a NUL)
npy() {
    "$PYTHON" - "$@" <<'PY'
import struct, sys
path, dtype, shape, values = sys.argv[1:5]
shape, values = eval(shape), eval(values)
head = sys.argv[5].replace('<NUL>', '\0') if len(sys.argv) > 5 else \
    "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (dtype, shape)
head += ' ' * (63 - (10 + len(head)) % 64) + '\n'
code = {'<f4': 'f', '|u1': 'B', '<i8': 'q'}[dtype]
body = struct.pack('<%d%s' % (len(values), code), *values)
open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(head)) + head.encode('latin-1') + body)
PY
}
# a folder of 64 samples of 1x4x4 images a split, labels 0 to 3
good() {
    mkdir -p "$1"
    npy "$1/x_train.npy" '|u1' '(64, 1, 4, 4)' '[i % 256 for i in range(64 * 16)]'
    npy "$1/y_train.npy" '<i8' '(64,)' '[i % 4 for i in range(64)]'
    npy "$1/x_test.npy" '|u1' '(64, 1, 4, 4)' '[i % 256 for i in range(64 * 16)]'
    npy "$1/y_test.npy" '<i8' '(64,)' '[i % 4 for i in range(64)]'
}
quick="--model linear --epochs 1 --device cpu --threads 1 --quiet"
good "$TMP/good"
expect 0 "" -- "$EMBER" train --data npy "$TMP/good" $quick

# x_test of another sample shape: found before the first step (it was found
# after a whole epoch, then exit 2 and nothing saved)
good "$TMP/shapes"
npy "$TMP/shapes/x_test.npy" '|u1' '(64, 1, 2, 8)' '[0] * (64 * 16)'
expect 3 "holds samples of shape (1, 4, 4) but .*x_test.npy of shape (1, 2, 8)" -- \
    "$EMBER" train --data npy "$TMP/shapes" $quick --save "$TMP/shapes.safetensors"
grep -q "epoch 1" "$TMP/out" && fail "a run trained an epoch before finding the test split's shape"

# one label of 10^6 among labels 0 to 3: not a model of a million classes
good "$TMP/label"
npy "$TMP/label/y_train.npy" '<i8' '(64,)' '[i % 4 for i in range(63)] + [1000000 - 1]'
expect 3 "the labels go up to 999999, so the model would have 1000000 classes, but only 5 of them have a sample" -- \
    "$EMBER" train --data npy "$TMP/label" $quick
# gaps are fine while most classes have a sample: labels 0, 1, 3
good "$TMP/gap"
npy "$TMP/gap/y_train.npy" '<i8' '(64,)' '[(0, 1, 3)[i % 3] for i in range(64)]'
npy "$TMP/gap/y_test.npy" '<i8' '(64,)' '[(0, 1, 3)[i % 3] for i in range(64)]'
expect 0 "" -- "$EMBER" train --data npy "$TMP/gap" $quick

# headers NumPy never writes: a key twice, a NUL
good "$TMP/twice"
npy "$TMP/twice/x_train.npy" '|u1' '(64, 1, 4, 4)' '[0] * (64 * 16)' \
    "{'descr': '|u1', 'fortran_order': False, 'shape': (64, 1, 4, 4), 'shape': (64, 16), }"
expect 3 "x_train.npy: its header gives 'shape' twice" -- "$EMBER" train --data npy "$TMP/twice" $quick
good "$TMP/nul"
npy "$TMP/nul/x_train.npy" '|u1' '(64, 1, 4, 4)' '[0] * (64 * 16)' \
    "{'descr': '|u1', 'fortran_order': False, 'shape': (64, 1, 4, 4), }<NUL>'shape': (1, 2)"
expect 3 "x_train.npy: its header holds a NUL byte" -- "$EMBER" train --data npy "$TMP/nul" $quick

# an archive whose y_train declares 300 million labels (deflated to 300 kB)
# for 64 samples: refused by the headers' counts before a byte is inflated
# (inflating first took gigabytes); under a 2 GB address-space limit the
# labels alone would not fit
"$PYTHON" - "$TMP/big.npz" <<'PY'
import struct, sys, zipfile, zlib
def npy(dtype, shape, body_len, chunks):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (dtype, shape)
    head += ' ' * (63 - (10 + len(head)) % 64) + '\n'
    yield b'\x93NUMPY\x01\x00' + struct.pack('<H', len(head)) + head.encode()
    yield from chunks
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    count = 300_000_000
    with z.open('y_train.npy', 'w', force_zip64=True) as f:
        for part in npy('|u1', (count,), count, ()):
            f.write(part)
        zero = bytes(1 << 20)
        for _ in range(count >> 20):
            f.write(zero)
        f.write(bytes(count - (count >> 20 << 20)))
    for name, shape, n in (('x_train', (64, 4), 64 * 4), ('x_test', (64, 4), 64 * 4), ('y_test', (64,), 64)):
        with z.open(name + '.npy', 'w') as f:
            for part in npy('|u1', shape, n, (bytes(i % 2 for i in range(n)),)):
                f.write(part)
PY
# (a sanitizer's shadow memory cannot start under the limit: there, no limit)
limit="ulimit -v 2000000 &&"
[ "${EMBER_TEST_SANITIZED:-OFF}" = ON ] && limit=""
expect 3 "x_train.npy holds 64 samples but .*y_train.npy 300000000 labels: x and y are the same samples" -- \
    sh -c "$limit exec \"\$0\" \"\$@\"" "$EMBER" train --data npy "$TMP/big.npz" $quick

# CSV: labels "1" and "1.0" are one class; integer labels that would size the model alone are refused
"$PYTHON" -c "
rows = ['a,b,label'] + ['%d,%d,%s' % (i, i % 7, ('0', '1', '1.0', '2')[i % 4]) for i in range(200)]
open('$TMP/table.csv', 'w').write('\n'.join(rows) + '\n')
rows = ['a,b,label'] + ['%d,%d,%s' % (i, i % 7, i % 3 if i else 65535) for i in range(200)]
open('$TMP/wide.csv', 'w').write('\n'.join(rows) + '\n')"
expect 0 "3 classes" -- "$EMBER" train --data csv "$TMP/table.csv" --model tabular --epochs 1 --device cpu --threads 1
expect 3 "the labels are class indices up to 65535, so the model would have 65536 classes" -- \
    "$EMBER" train --data csv "$TMP/wide.csv" --model tabular --epochs 1 --device cpu --threads 1 --quiet
finish test_data_errors
