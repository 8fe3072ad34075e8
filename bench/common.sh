# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# bench/common.sh — what the benchmarks share; sourced, not run.

# the last value of a numeric JSON field in a JSON-lines file: field NAME FILE
field() { sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p" "$2" | tail -n 1; }

# the last value of a string JSON field: sfield NAME FILE
sfield() { sed -n "s/.*\"$1\": \"\([^\"]*\)\".*/\1/p" "$2" | tail -n 1; }

# a number in a printf format, or "-" when it is missing: fmt VALUE FORMAT
fmt() { awk -v v="$1" -v f="$2" 'BEGIN { if (v == "") print "-"; else printf f "\n", v }'; }

# a / b to the given decimals, or "-" when either is missing: ratio A B [DECIMALS]
ratio() {
    awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.*f", d, a / b; else print "-" }'
}

# the command as typed, with those of the named variables that the
# environment set: command_line "bench/x.sh build/ember" STEPS MODELS
command_line() {
    line=$1
    shift
    for v in "$@"; do
        val=$(printenv "$v" || true)
        [ -n "$val" ] && line="$v=\"$val\" $line"
    done
    echo "$line"
}

# the run's header: machine, date and the command that printed it: header TITLE COMMAND...
header() {
    title=$1
    shift
    cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)
    os=$(sed -n 's/^PRETTY_NAME="\(.*\)"/\1/p' /etc/os-release 2>/dev/null)
    mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
    rev=$(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null || echo "not a git checkout")
    echo "## $title"
    echo
    echo "- **Machine**: ${cpu:-unknown CPU}, $(nproc) CPUs, ${mem:-? GiB}, ${os:-unknown OS}, $(uname -r)"
    echo "- **Date**: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- **Command**: \`$*\`"
    echo "- **ember revision**: $rev"
}

# the larger (best) or smaller (least) of a round's figure and the best so far, either
# possibly missing: best VALUE SO_FAR
best() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || a + 0 > b + 0) print a; else print b }'; }
least() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == "" || (a != "" && a + 0 < b + 0)) print a; else print b }'; }

# ember's rate over the steps after the first, from `ember train --log-every 1 --metrics FILE`
# (each step line's images_per_s, which for text counts tokens): step_rate FILE
step_rate() {
    awk -F'"images_per_s": ' 'NR > 1 && /"step"/ { split($2, v, /[,}]/); t += 1 / v[1]; n++ }
        END { if (n) printf "%.1f", n / t }' "$1"
}

# bytes/s of `ember generate`, greedy, from its --verbose line; MODE cache (its key/value
# cache) or whole (the whole context each byte): generate_rate EMBER MODEL BYTES MODE OPTION...
generate_rate() {
    g_ember=$1 g_model=$2 g_bytes=$3 g_flag=""
    [ "$4" = whole ] && g_flag=--no-cache
    shift 4
    # shellcheck disable=SC2086 # g_flag is one option or nothing
    "$g_ember" generate --load "$g_model" --tokens "$g_bytes" --temperature 0 --verbose $g_flag "$@" 2>&1 \
        >/dev/null | sed -n 's/.* \([0-9.]*\) bytes\/s .*/\1/p'
}

# ROUNDS rounds of greedy generation, GENERATE bytes after a newline, alternating: ember from
# $TMP/gpt.safetensors with its key/value cache and with the whole context each byte, then the
# PyTorch twin (torch_gpt_train.py, nanoGPT's generate: the whole context each byte). The best
# bytes/s of each go into g_cache, g_whole and g_torch.
# generation_rounds "EMBER OPTIONS" "TWIN OPTIONS" [NAME=VALUE... for the twin's environment]
generation_rounds() {
    gr_ember=$1 gr_twin=$2
    shift 2
    g_cache="" g_whole="" g_torch="" gr_round=0
    while [ $gr_round -lt "$ROUNDS" ]; do
        for gr_mode in cache whole; do
            # shellcheck disable=SC2086 # the options are words
            gr_rate=$(generate_rate "$EMBER" "$TMP/gpt.safetensors" "$GENERATE" $gr_mode $gr_ember)
            if [ $gr_mode = cache ]; then
                g_cache=$(best "$gr_rate" "$g_cache")
            else
                g_whole=$(best "$gr_rate" "$g_whole")
            fi
        done
        # shellcheck disable=SC2086 # the options are words
        env "$@" "$PY" "$HERE/torch_gpt_train.py" --text "$TEXT" --steps 2 --generate "$GENERATE" $gr_twin \
            >"$TMP/p.json" 2>/dev/null || true
        g_torch=$(best "$(field generate_tokens_per_s "$TMP/p.json")" "$g_torch")
        gr_round=$((gr_round + 1))
    done
}
