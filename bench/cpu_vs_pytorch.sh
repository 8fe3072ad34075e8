#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/cpu_vs_pytorch.sh — the older name of bench/cpu_vs_peers.sh, kept
# for the commands docs/benchmarks.md records: ember and PyTorch alone, on
# simplecnn and kerascnn (MODELS and THREADS as there).
#
#   bench/cpu_vs_pytorch.sh [build/ember]
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
MODELS=${MODELS:-simplecnn kerascnn} PEERS=pytorch
export MODELS PEERS
exec "$(dirname "$0")/cpu_vs_peers.sh" "$@"
