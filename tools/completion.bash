# SPDX-License-Identifier: MIT
# tools/completion.bash — bash completion for ember (installed as
# share/bash-completion/completions/ember; or `source tools/completion.bash`).
#
# What can be completed is asked of the program itself, so that completion
# never offers what this ember does not have: the commands (`ember --help`),
# each command's options (`ember CMD --help`), the built-in models (`ember
# summary --list`), the devices (`ember devices`, and the simulated GPUs of
# `ember ptx --gpus` as ptxsim:N), the kernels (`ember ptx --list`) and the
# GPUs `ember ptx --gpu` simulates. The values of a few options are listed
# here; files go where the help says FILE, DIR or CHECKPOINT, and nothing
# where it says a number.

# the words of the program's answer that match a sed pattern
_ember_ask() {
    "$1" "${@:2:$#-2}" 2>/dev/null | sed -n "${*: -1}"
}

# every device name --device takes: auto, all, the devices found, the backends, the simulated GPUs
_ember_devices() {
    echo auto all cpu cuda opencl
    _ember_ask "$1" devices '/^devices, in the order/,/^$/s/^  \([a-z][a-z0-9]*\(:[0-9][0-9]*\)\{0,1\}\) .*/\1/p'
    _ember_ask "$1" ptx --gpus 's/^\([0-9][0-9]*\)  .*/ptxsim:\1/p'
}

_ember() {
    local program=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local command=${COMP_WORDS[1]} words metavar
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        words="$(_ember_ask "$program" --help '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p') --help --version"
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
        return
    fi
    case $prev in
    --model)
        words=$(_ember_ask "$program" summary --list '/^built-in/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur"; compgen -f -X '!*.model' -- "$cur"; compgen -d -- "$cur")
        return
        ;;
    --device | --fallback)
        # a list (cpu,opencl:0) completes its last name
        local done=""
        [[ $cur == *,* ]] && done=${cur%,*},
        words=$(_ember_devices "$program" | tr ' ' '\n' | sort -u)
        mapfile -t COMPREPLY < <(compgen -P "$done" -W "$words" -- "${cur##*,}")
        compopt -o nospace 2>/dev/null
        [ ${#COMPREPLY[@]} -eq 1 ] && compopt +o nospace 2>/dev/null
        return
        ;;
    --gpu) words=$(_ember_ask "$program" ptx --gpus 's/^[0-9][0-9]*  *\([a-z0-9][a-z0-9]*\) .*/\1/p') ;;
    --arch) words="sm_30 sm_35 sm_37 sm_50 sm_52 sm_53 sm_60 sm_61 sm_62 sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90" ;;
    --data) words="fashion-mnist mnist cifar10 cifar100 folder random npy csv text chat" ;;
    --optim) words="adam adamw sgd" ;;
    --schedule) words="constant step cosine" ;;
    --augment) words="none flip crop:4 crop:4,flip" ;;
    -o)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    --*)
        # what the command's help says the option takes: a file or folder, or a value not to guess
        metavar=$("$program" "$command" --help 2>/dev/null | grep -oE -- "$prev [A-Z][A-Z_]*" | head -1)
        case ${metavar#* } in
        FILE | DIR | CHECKPOINT | PATH)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return
            ;;
        "") ;; # a flag: what follows is completed as any word
        *) return ;;
        esac
        ;;
    esac
    if [ -z "${words:-}" ]; then
        if [[ $cur == -* ]]; then
            # every option named at the start of a line of the command's help ("  --from MS, --to MS")
            words=$("$program" "$command" --help 2>/dev/null | grep -E '^ +-' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
        elif [ "$command" = ptx ]; then
            words=$(_ember_ask "$program" ptx --list 's/^\([a-z][a-z0-9_]*\)  .*/\1/p')
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return
        fi
    fi
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -F _ember -o filenames ember ember-mpi
