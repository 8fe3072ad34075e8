#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/peers-env.sh — the Python environment the benchmarks' peers run in:
# a venv at build/bench-env (or $BENCH_ENV) with NumPy and TensorFlow (for
# bench/keras_train.py) and PyTorch (for bench/torch_zoo_train.py), made once
# and kept. Prints the venv's python on stdout; says what it did on stderr.
#
#   bench/peers-env.sh            # make it (or find it made), print its python
#
# BENCH_ENV    where the venv lives (default build/bench-env)
# BENCH_TORCH  where PyTorch comes from:
#   cpu   (default) PyTorch's own CPU-only index, download.pytorch.org/whl/cpu
#         (a wheel of about 0.2 GB)
#   pypi  PyPI's wheel. On Linux x86-64 it is built for CUDA and imports only
#         with NVIDIA's CUDA wheels beside it (libtorch_global_deps.so needs
#         libcudart): torch 2.15.0 for Python 3.11 is a 539 MB wheel and
#         3.0 GB of downloads with its dependencies (cuDNN 519 MB, cuBLAS
#         404 MB, triton 285 MB, ...), several GB installed
#   none  no PyTorch here: the benchmarks use build/pyenv's (Debian's
#         PyTorch 1.13, made by scripts/test.sh) or $TORCH_PYTHON
# PYTHON       the interpreter to make the venv with (default python3)
#
# Where PyPI cannot be reached it says so and exits 1 without printing a
# path; the benchmarks then run PyTorch from build/pyenv and leave Keras's
# columns as "-". Delete the folder to start again.
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
ENV=${BENCH_ENV:-build/bench-env}
TORCH=${BENCH_TORCH:-cpu}
py=$ENV/bin/python

say() { echo "peers-env: $*" >&2; }
pip_install() { "$py" -m pip install --disable-pip-version-check --retries 1 --timeout 30 "$@" >&2; }
version() { "$py" -c "from importlib.metadata import version; print(version('$1'))" 2>/dev/null || echo "-"; }

case $TORCH in
cpu | pypi | none) ;;
*) say "BENCH_TORCH is cpu, pypi or none, not '$TORCH'"; exit 2 ;;
esac

if [ ! -x "$py" ]; then
    say "making $ENV with ${PYTHON:-python3}"
    if ! "${PYTHON:-python3}" -m venv "$ENV" >&2; then
        say "cannot make a venv (on Debian: apt-get install python3-venv)"
        exit 1
    fi
fi

# a stamp per package, written once the install worked, so a second run
# asks no index anything
if [ ! -e "$ENV/.tensorflow-ready" ]; then
    say "installing NumPy and TensorFlow from PyPI (about 0.6 GB to download, 2.1 GB installed)"
    if pip_install numpy tensorflow; then
        touch "$ENV/.tensorflow-ready"
    else
        say "PyPI unreachable or the install failed: no Keras peer (its columns will read -)"
    fi
fi

if [ "$TORCH" != none ] && [ ! -e "$ENV/.torch-ready" ]; then
    if [ "$TORCH" = cpu ]; then
        say "installing PyTorch (CPU only) from download.pytorch.org/whl/cpu"
        set -- --index-url https://download.pytorch.org/whl/cpu torch
    else
        say "installing PyTorch from PyPI, with its CUDA wheels (3.0 GB of downloads)"
        set -- torch
    fi
    if pip_install "$@"; then
        touch "$ENV/.torch-ready"
    else
        say "could not install PyTorch ($TORCH): the benchmarks fall back to build/pyenv's PyTorch" \
            "(BENCH_TORCH=pypi for PyPI's 3 GB build, or TORCH_PYTHON=/path/to/python)"
    fi
fi

if [ ! -e "$ENV/.tensorflow-ready" ] && [ ! -e "$ENV/.torch-ready" ]; then
    exit 1
fi
say "$ENV: tensorflow $(version tensorflow), torch $(version torch)"
echo "$py"
