#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/cli/test_memory_limits.sh — under any address-space limit (ulimit -v)
# ember trains, or exits 4 saying it ran out of memory and what it asked
# for, within seconds: it never hangs and never dies of a signal. The
# libraries that cannot fail cleanly are not started when they would not
# fit: OpenBLAS (which retries a failed allocation forever) gives way to
# the built-in sgemm, and OpenCL (PoCL aborts under a tight limit) is passed
# over by auto and refused by name with the limit as the reason.
#
#   test_memory_limits.sh EMBER
# Below about 50 MB the system's loader itself cannot map the libraries
# (exit 127 from the shell, before ember runs): not tested.
set -u
EMBER=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAILED: $*" >&2; failures=$((failures + 1)); }
export EMBER_CACHE_DIR="$TMP/cache"

# run LIMIT_KIB ARGS...: ember under the limit; status in $status, seconds in $seconds
run() {
    limit=$1
    shift
    start=$(date +%s)
    (ulimit -v "$limit" && exec timeout 60 "$EMBER" "$@") >"$TMP/out" 2>"$TMP/err"
    status=$?
    seconds=$(($(date +%s) - start))
}

# trained, or out of memory said as such; quickly; no hang (124), no signal (>128)
check() {
    what=$1
    case $status in
    0) ;;
    4) grep -q "out of .*memory" "$TMP/err" || fail "$what: exit 4 without saying memory: $(head -c 400 "$TMP/err")" ;;
    *) fail "$what: exit $status: $(head -c 400 "$TMP/err")" ;;
    esac
    [ "$seconds" -le 30 ] || fail "$what: took $seconds s"
}

"$EMBER" train --data random --model simplecnn --steps 3 --device cpu --quiet --save "$TMP/ck.safetensors" ||
    fail "the checkpoint to evaluate"
trained=0
for limit in 60000 80000 120000 250000 1000000; do
    run $limit train --data random --model simplecnn --steps 3 --device cpu --quiet
    check "train under ulimit -v $limit"
    [ $status -eq 0 ] && trained=$((trained + 1))
    run $limit eval --load "$TMP/ck.safetensors" --data random --device cpu
    check "eval under ulimit -v $limit"
done
[ $trained -ge 3 ] || fail "only $trained of 5 limits trained at all"

# the message names what was asked for
run 60000 train --data fashion-mnist --model simplecnn --steps 1 --device cpu --quiet
if [ $status -eq 4 ]; then
    grep -q "asked for [0-9]" "$TMP/err" || fail "out of memory without the size asked for: $(cat "$TMP/err")"
fi
check "fashion-mnist under ulimit -v 60000"

# OpenBLAS gives way to the built-in sgemm, and says so
run 300000 train --data random --model linear --steps 1 --device cpu --verbose
check "the built-in sgemm under ulimit -v 300000"
if grep -q "OpenBLAS" "$TMP/err" 2>/dev/null && ! grep -q "built without OpenBLAS" "$TMP/err"; then
    grep -q "using the built-in sgemm" "$TMP/err" || fail "OpenBLAS under a 300 MB limit: $(grep 'using cpu' "$TMP/err")"
fi

# OpenCL is not started under a tight limit: auto passes it over, a named
# OpenCL device is refused with the limit as the reason (exit 4)
run 300000 train --data random --model linear --steps 1 --device auto --verbose
check "auto under ulimit -v 300000"
[ $status -eq 0 ] || fail "auto under a 300 MB limit did not train"
run 300000 train --data random --model linear --steps 1 --device opencl
if [ $status -ne 0 ]; then
    [ $status -eq 4 ] || fail "opencl under a 300 MB limit: exit $status: $(head -c 300 "$TMP/err")"
    grep -q "address-space limit\|has no opencl backend" "$TMP/err" ||
        fail "opencl under a 300 MB limit blames something else: $(head -c 300 "$TMP/err")"
fi

if [ "$failures" -ne 0 ]; then
    echo "test_memory_limits: $failures failures" >&2
    exit 1
fi
echo "test_memory_limits: ok"
