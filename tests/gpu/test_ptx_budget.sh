#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_ptx_budget.sh — the built-in PTX stays as lean as it was
# recorded, kernel by kernel, so that a change to the kernel sources (a new
# elementwise op's case, a helper clang stops inlining) cannot quietly make
# the old GPUs' kernels slower:
#
#   1. no kernel calls a function: the PTX holds no .func and no call
#      (FUNC is always_inline in prelude-nvptx.kh; a call costs an old GPU
#      its stack and the call's registers);
#   2. each kernel's registers, as CUDA 11.8's ptxas -v counts them for
#      sm_35 (the oldest arch it assembles; sm_30's register file is the
#      same), are at most its budget in backends/cuda/baseline/
#      registers-sm35.txt, and every kernel has one (skipped without that
#      ptxas, from build/cu11).
#
# A budget is raised by editing its line, in the commit that says why.
#
#   test_ptx_budget.sh SOURCE_DIR JOINED_PTX [CU11_DIR]
set -u
SRC=$1 PTX=$2 CU11=${3:-}
BUDGET=$SRC/backends/cuda/baseline/registers-sm35.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
status=0
fail() { echo "FAILED: $*" >&2; status=1; }

# 1. calls
if grep -nE '^\.func|^[[:space:]]*call(\.uni)?[[:space:]]' "$PTX" >"$TMP/calls"; then
    fail "the built-in PTX calls a function (a helper not inlined): $(head -n 3 "$TMP/calls" | tr '\n' ' ')"
else
    echo "built-in PTX: no function calls"
fi

# 2. registers
PTXAS=""
[ -n "$CU11" ] && [ -x "$CU11/nvidia/cuda_nvcc/bin/ptxas" ] && PTXAS=$CU11/nvidia/cuda_nvcc/bin/ptxas
if [ -z "$PTXAS" ]; then
    echo "registers: skipped (no CUDA 11.8 ptxas in ${CU11:-build/cu11}; scripts/setup.sh --tests installs it)"
    [ $status = 0 ] && exit 77
    exit $status
fi
"$PTXAS" -v -arch=sm_35 "$PTX" -o "$TMP/cubin" 2>"$TMP/v" || fail "ptxas refused the PTX: $(head -c 400 "$TMP/v")"
awk '/Compiling entry function/ { split($0, q, "\047"); k = q[2] }
     /: Used [0-9]+ registers/ && k != "" { for (i = 1; i <= NF; i++) if ($i ~ /^registers/) print k, $(i - 1); k = "" }' \
    "$TMP/v" | sort >"$TMP/used"
[ -s "$TMP/used" ] || fail "ptxas -v named no kernel's registers"
while read -r kernel used; do
    budget=$(awk -v k="$kernel" '$1 == k { print $2 }' "$BUDGET")
    if [ -z "$budget" ]; then
        fail "$kernel has no register budget in $BUDGET (it uses $used)"
    elif [ "$used" -gt "$budget" ]; then
        fail "$kernel uses $used registers on sm_35, over its budget of $budget ($BUDGET)"
    fi
done <"$TMP/used"
[ $status = 0 ] && echo "registers: $(wc -l <"$TMP/used") kernels within their budgets (ptxas 11.8, sm_35)"
exit $status
