# SPDX-License-Identifier: MIT
# tests/common/cli-util.sh — what the shell tests of the `ember` program share;
# sourced, with EMBER set to the program and TMP to a scratch folder.
#
#   run [NAME=VALUE ...] -- ARGS...   runs ember with that environment: stdout in $TMP/out, stderr
#                                     in $TMP/err, status in $status
#   expect_status N WHAT              the last run exited N
#   expect_text TEXT WHAT             the last run's output, either stream, holds TEXT
#   expect STATUS PATTERN -- CMD...   runs any command (env -u ... too): it exits STATUS and its
#                                     output, both streams in $TMP/out, matches the grep PATTERN
#   jcheck WHAT PYTHON-EXPRESSION     the last run's output, JSON from `ember devices --json`, passes
#                                     the expression (d the whole; cuda, opencl, cpu the backends'
#                                     sections; dev the devices by name)
#   finish NAME                       exits 0, or 1 after saying how many checks failed
failures=0
PYTHON=$(command -v python3 || true)

fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }

run() {
    vars=""
    while [ "$1" != "--" ]; do vars="$vars $1"; shift; done
    shift
    # shellcheck disable=SC2086 # vars is a list of assignments
    env $vars "$EMBER" "$@" >"$TMP/out" 2>"$TMP/err"
    status=$?
}

expect() {
    want=$1 pattern=$2
    shift 3
    "$@" >"$TMP/out" 2>&1
    got=$?
    [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want: $(head -c 800 "$TMP/out")"
    grep -q -- "$pattern" "$TMP/out" || fail "$*: output lacks \"$pattern\": $(head -c 800 "$TMP/out")"
}

# stderr first and its end: a sanitizer's report (exit 134 under abort_on_error) comes last there,
# and a long stdout (devices --json) once hid it
expect_status() {
    [ "$status" -eq "$1" ] ||
        fail "$2: exit $status, expected $1: stderr: $(tail -c 2000 "$TMP/err"); stdout: $(head -c 300 "$TMP/out")"
}
expect_text() { cat "$TMP/out" "$TMP/err" | grep -qF -- "$1" || fail "$2: no \"$1\" in: $(cat "$TMP/out" "$TMP/err" | head -c 800)"; }

jcheck() {
    [ -n "$PYTHON" ] || return 0
    "$PYTHON" -c "import json, sys
d = json.load(open('$TMP/out'))
cuda, opencl, cpu = d['backends'].get('cuda', {}), d['backends'].get('opencl', {}), d['backends']['cpu']
dev = {e['name']: e for e in d['devices']}
sys.exit(0 if ($2) else 1)" || fail "$1: the JSON does not have $2: $(head -c 1500 "$TMP/out")"
}

finish() {
    [ -n "$PYTHON" ] || echo "note: no python3: the JSON was not checked field by field"
    if [ "$failures" -ne 0 ]; then
        echo "$1: $failures failures" >&2
        exit 1
    fi
    echo "$1: ok"
    exit 0
}
