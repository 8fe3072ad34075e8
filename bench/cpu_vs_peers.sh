#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/cpu_vs_peers.sh — training speed of ember, PyTorch and Keras
# (TensorFlow) on this CPU, side by side in one run: Fashion-MNIST, batch 64,
# Adam 0.001, seed 0, one epoch (or the first STEPS steps), for each model and
# thread count, then ember's time to the first step and peak memory. Prints
# Markdown for docs/benchmarks.md: a header (machine, date, command), the
# tables, and a note for each peer that could not run.
#
#   bench/cpu_vs_peers.sh [build/ember]
#
# MODELS        default "simplecnn kerascnn resnet8";  THREADS  default "1 2"
# STEPS         0 (default): whole epochs; N: the first N steps, speed alone
#               (the test accuracy is then of a part-epoch)
# PEERS         which peers to run, default "pytorch keras"
# PEER_PYTHON   one Python for both peers (then bench/peers-env.sh is not run)
# TORCH_PYTHON  the Python for PyTorch; default: bench/peers-env.sh's venv if it
#               has torch, else build/pyenv (Debian's PyTorch, from scripts/test.sh)
# KERAS_PYTHON  the Python for Keras; default: bench/peers-env.sh's venv
# BENCH_ENV, BENCH_TORCH   passed to bench/peers-env.sh (its header says how)
#
# The peers are bench/torch_zoo_train.py (the models of tests/interop/torch_zoo.py)
# and bench/keras_train.py (model.fit, timed after a warm-up fit).
# --help: the comment above, and nothing else done
case "${1:-}" in -h | --help) sed -n '1d; /^# --help:/q; /^#/!q; /SPDX-License-Identifier/d; s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -eu
EMBER=${1:-build/ember}
HERE=$(dirname "$0")
# shellcheck source=bench/common.sh
. "$HERE/common.sh"
command=$(command_line "$0 $EMBER" STEPS MODELS THREADS PEERS PEER_PYTHON TORCH_PYTHON KERAS_PYTHON \
    BENCH_ENV BENCH_TORCH)
MODELS=${MODELS:-simplecnn kerascnn resnet8} THREADS=${THREADS:-1 2} STEPS=${STEPS:-0}
PEERS=${PEERS:-pytorch keras}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

steps_arg="" run="one epoch"
if [ "$STEPS" -gt 0 ]; then
    steps_arg="--steps $STEPS"
    run="the first $STEPS training steps of an epoch (speed alone; the accuracy is of that part-epoch)"
fi
# has PYTHON MODULE: PYTHON is given and can import MODULE
has() {
    [ -n "$1" ] && "$1" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$2') is None)" 2>/dev/null
}
wants() { case " $PEERS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# the peers' Pythons
env_py=""
if [ -z "${PEER_PYTHON:-}" ] && { { wants pytorch && [ -z "${TORCH_PYTHON:-}" ]; } ||
    { wants keras && [ -z "${KERAS_PYTHON:-}" ]; }; }; then
    env_py=$("$HERE/peers-env.sh") || env_py=""
fi
torch_py=${TORCH_PYTHON:-${PEER_PYTHON:-}}
if [ -z "$torch_py" ]; then
    for py in "$env_py" build/pyenv/bin/python; do
        if has "$py" torch; then torch_py=$py && break; fi
    done
fi
keras_py=${KERAS_PYTHON:-${PEER_PYTHON:-$env_py}}
notes=""
note() { notes="$notes- $*
"; }
if ! wants pytorch; then
    torch_py=""
elif ! has "$torch_py" torch; then
    note "PyTorch: not run: no Python with torch (${torch_py:-none found});" \
        "see bench/peers-env.sh, or set TORCH_PYTHON."
    torch_py=""
fi
if ! wants keras; then
    keras_py=""
elif ! has "$keras_py" tensorflow; then
    note "Keras: not run: no Python with TensorFlow (${keras_py:-none found}; PyPI unreachable?);" \
        "see bench/peers-env.sh, or set KERAS_PYTHON."
    keras_py=""
fi

# peer SCRIPT PYTHON MODEL THREADS OUT: one peer's run, its JSON line in OUT, or a note
peer() {
    : >"$5"
    [ -n "$2" ] || return 0
    # shellcheck disable=SC2086  # steps_arg is one option and its value, or nothing
    if ! "$2" "$HERE/$1" --model "$3" --threads "$4" --epochs 1 $steps_arg >"$5" 2>"$5.err"; then
        note "$1 --model $3 --threads $4 failed: $(tail -n 1 "$5.err")"
        : >"$5"
    fi
}
# cell FIELD FILE FORMAT: a field of a run's JSON in $TMP, formatted, or "-"
cell() { fmt "$(field "$1" "$TMP/$2")" "$3"; }

header "ember and its peers on this CPU" "$command"
echo

rows=$TMP/rows
: >"$rows"
for model in $MODELS; do
    for threads in $THREADS; do
        rm -f "$TMP/e.jsonl"
        # shellcheck disable=SC2086
        "$EMBER" train --model "$model" --data fashion-mnist --epochs 1 --batch 64 --lr 0.001 --seed 0 \
            --device cpu --threads "$threads" --quiet --metrics "$TMP/e.jsonl" $steps_arg 2>"$TMP/e.err" ||
            note "ember --model $model --threads $threads failed: $(tail -n 1 "$TMP/e.err")"
        touch "$TMP/e.jsonl"
        peer torch_zoo_train.py "$torch_py" "$model" "$threads" "$TMP/p.json"
        peer keras_train.py "$keras_py" "$model" "$threads" "$TMP/k.json"
        [ -s "$TMP/p.json" ] && torch_name=$(sfield peer "$TMP/p.json")
        [ -s "$TMP/k.json" ] && keras_name=$(sfield peer "$TMP/k.json")
        [ -s "$TMP/e.jsonl" ] && blas=$(sfield device "$TMP/e.jsonl" | sed -n 's/.*, \(.*\))$/\1/p')
        e=$(field images_per_s "$TMP/e.jsonl") p=$(field images_per_s "$TMP/p.json") k=$(field images_per_s "$TMP/k.json")
        echo "| $model | $threads | $(fmt "$e" %.0f) | $(fmt "$p" %.0f) | $(fmt "$k" %.0f) |" \
            "$(ratio "$e" "$p") | $(ratio "$e" "$k") |" \
            "$(cell test_acc e.jsonl %.4f) | $(cell test_acc p.json %.4f) | $(cell test_acc k.json %.4f) |" \
            "$(cell peak_rss_mib e.jsonl %.1f) | $(cell peak_rss_mib p.json %.1f) | $(cell peak_rss_mib k.json %.1f) |" \
            >>"$rows"
    done
done

echo "- **Peers**: ${torch_name:-PyTorch not run}${torch_py:+ (\`$torch_py\`)};" \
    "${keras_name:-Keras not run}${keras_py:+ (\`$keras_py\`)}"
echo "- **ember**: \`--device cpu\`, ${blas:-?}, the row's threads"
echo "- **Run**: Fashion-MNIST, batch 64, Adam lr 0.001, seed 0, $run, test accuracy after it"
echo
echo "| model | threads | ember images/s | PyTorch images/s | Keras images/s | ember / PyTorch | ember / Keras |" \
    "ember test acc | PyTorch test acc | Keras test acc |" \
    "ember peak RSS MiB | PyTorch peak RSS MiB | Keras peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
cat "$rows"

# ember's time to the first finished step and peak memory, from the process's
# start: the README's command (--device auto, the test set loaded too) for one
# step, the first time (inflating the data, keeping an inflated copy in a
# fresh cache folder) and the next; and random data
echo
echo "| data | start | ember first step (s) | ember peak RSS MiB |"
echo "|---|---|---|---|"
first_step() { # DATA START ARGS...
    data=$1 start=$2
    shift 2
    rm -f "$TMP/f.jsonl"
    EMBER_CACHE_DIR="$TMP/cache" "$EMBER" train --model simplecnn --data "$data" --steps 1 --quiet \
        --metrics "$TMP/f.jsonl" "$@" 2>/dev/null || true
    touch "$TMP/f.jsonl"
    echo "| $data | $start | $(field first_step_s "$TMP/f.jsonl") | $(field peak_rss_mib "$TMP/f.jsonl") |"
}
rm -rf "$TMP/cache"
first_step fashion-mnist "first (inflates, keeps a copy)" --batch 64 --lr 0.001 --seed 0 --device auto
first_step fashion-mnist "next (the inflated copy)" --batch 64 --lr 0.001 --seed 0 --device auto
first_step random "-" --no-eval --device cpu
if [ -n "$notes" ]; then
    echo
    printf '%s' "$notes"
fi
