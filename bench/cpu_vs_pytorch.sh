#!/bin/sh
# bench/cpu_vs_pytorch.sh — the older name of bench/cpu_vs_peers.sh, kept
# for the commands docs/benchmarks.md records: ember and PyTorch alone, on
# simplecnn and kerascnn (MODELS and THREADS as there).
#
#   bench/cpu_vs_pytorch.sh [build/ember]
set -eu
MODELS=${MODELS:-simplecnn kerascnn} PEERS=pytorch
export MODELS PEERS
exec "$(dirname "$0")/cpu_vs_peers.sh" "$@"
