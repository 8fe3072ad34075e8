#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/cli/test_completion.sh — bash completion (tools/completion.bash) as a
# user meets it after pressing Tab: every command, built-in model, device,
# kernel and simulated GPU this ember has, files where a file goes, and
# nothing where a number goes.
#
#   test_completion.sh EMBER COMPLETION-FILE
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 1
touch run.safetensors notes.txt
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
# shellcheck source=/dev/null
source "$2"
# tab WORDS...: what completion offers for the last word, one line
tab() {
    COMP_WORDS=("$EMBER" "$@")
    COMP_CWORD=$#
    _ember
    echo "${COMPREPLY[*]}"
}
# offers WHAT WORDS... -- LINE...: completing LINE offers each of WORDS
offers() {
    what=$1
    shift
    want=""
    while [ "$1" != -- ]; do want="$want $1"; shift; done
    shift
    got=" $(tab "$@") "
    for w in $want; do
        case $got in *" $w "*) ;; *) fail "$what: \"ember $*\" offers \"$got\", not $w" ;; esac
    done
}

offers "commands" train eval predict generate summary export import plot devices ptx -- ""
offers "every built-in model" gpt-tiny simplecnn resnet8 vgg8 tabular -- train --model ""
offers "devices" auto all cpu -- train --device ""
offers "the device of a list" cpu,cpu -- train --device cpu,c
offers "options" --steps --stop-if-diverging -- train --st
offers "predict's options" --invert -- predict --in
offers "files for a checkpoint" run.safetensors -- eval --load ""
offers "files to predict" notes.txt -- predict --load run.safetensors ""
offers "the values of --optim" adamw -- train --optim a
# what only some builds have: the devices found, the kernels, the simulated GPUs
"$EMBER" devices 2>/dev/null | grep -q "^  opencl:0 " && offers "an OpenCL device" opencl:0 -- train --device o
if "$EMBER" ptx --gpus >/dev/null 2>&1; then
    offers "the simulated GPUs as devices" ptxsim:0 ptxsim:3 -- train --device p
    offers "the GPUs ptx simulates" k2100m k40m gtx1080 h100 -- ptx fill --simulate --gpu ""
    case " $(tab ptx --simulate --gpu "") " in *notes.txt*) fail "ptx --gpu offers files" ;; esac
fi
offers "kernel names" sgemm fill copy_dense -- ptx ""
# a number is not a file
[ -z "$(tab train --lr "")" ] || fail "train --lr offers \"$(tab train --lr "")\""
[ -z "$(tab generate --prompt "")" ] || fail "generate --prompt offers \"$(tab generate --prompt "")\""
[ $failures -eq 0 ] || exit 1
echo "completion: every case offered what it should"
