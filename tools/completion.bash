# SPDX-License-Identifier: MIT
# tools/completion.bash — bash completion for ember (installed as
# share/bash-completion/completions/ember; or `source tools/completion.bash`).
#
# The commands, each command's options and the built-in models are asked of
# the program itself (`ember --help`, `ember CMD --help`, `ember summary
# --list`), so that completion never offers what this ember does not have;
# the values of a few options are listed here, and files where a file goes.

# the words of the program's answer that match a sed pattern
_ember_ask() {
    "$1" "${@:2:$#-2}" 2>/dev/null | sed -n "${*: -1}"
}

_ember() {
    local program=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} words
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        words="$(_ember_ask "$program" --help '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p') --help --version"
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
        return
    fi
    case $prev in
    --model)
        words=$(_ember_ask "$program" summary --list '/^built-in/,/^$/s/^  \([a-z0-9]*\) .*/\1/p')
        mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur"; compgen -f -X '!*.model' -- "$cur"; compgen -d -- "$cur")
        return
        ;;
    --data) words="fashion-mnist mnist cifar10 cifar100 folder random npy csv text" ;;
    --device | --fallback) words="auto cpu cuda opencl all" ;;
    --optim) words="adam adamw sgd" ;;
    --schedule) words="constant step cosine" ;;
    --data-dir)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    --load | --resume | --save | --metrics | --trace | -o | --output | --init)
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return
        ;;
    *)
        if [[ $cur == -* ]]; then
            # every option named at the start of a line of the command's help ("  --from MS, --to MS")
            words=$("$program" "${COMP_WORDS[1]}" --help 2>/dev/null | grep -E '^ +-' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
        else
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            return
        fi
        ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
}
complete -F _ember -o filenames ember ember-mpi
