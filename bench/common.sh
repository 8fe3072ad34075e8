# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# bench/common.sh — what bench/cpu_vs_peers.sh and bench/compute_bound.sh
# share; sourced, not run.

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
