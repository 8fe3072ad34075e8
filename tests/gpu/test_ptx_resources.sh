#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_ptx_resources.sh — `ember ptx --resources`: what ptxas -v says
# each kernel uses on an arch, with no GPU:
#
#   1. --resources needs --arch sm_XX (exit 2);
#   2. sm_90 through the toolkit's ptxas (CUDA 13) and sm_35 through CUDA
#      11.8's (the nvidia-cuda-nvcc-cu11 wheel in build/cu11, found beside
#      EMBER_NVRTC's NVRTC 11.8): sgemm uses registers, and its row is what
#      the same ptxas -v says of `ember ptx sgemm` when run by hand;
#   3. no kernel named: a row for each kernel `ember ptx --list` lists;
#   4. a ptxas that knows the arch but refuses the PTX (11.8's, for NVRTC
#      13's .version 9.0) is passed over for the next one;
#   5. an arch no ptxas here knows (sm_30: 11.8's starts at sm_35), or no
#      ptxas at all: exit 4, naming each ptxas tried, the archs it knows,
#      and what to install.
# Each part is skipped, with the reason, when its ptxas is missing; exit 77
# when both are.
#
#   test_ptx_resources.sh EMBER [CU11_DIR]
set -u
EMBER=$1 CU11=${2:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"
ran=0 skipped=""

# ptxas -v's numbers for one kernel, read here independently of ember:
# registers, shared, constant (every bank), stack, spill stores, spill loads
ptxas_says() { # PTXAS ARCH PTX-FILE KERNEL
    "$1" -v -arch="$2" "$3" -o "$TMP/cubin" 2>&1 | awk -v k="$4" '
        /Compiling entry function/ { split($0, q, "\047"); cur = q[2] }
        /Function properties for/ { props = $NF }
        /bytes stack frame/ && props == k { stack = $1; st = $5; ld = $9 }
        /: Used / && cur == k {
            for (i = 1; i <= NF; i++) {
                w = $i; sub(/,$/, "", w)
                if (w == "registers") regs = $(i - 1)
                if (w == "smem") smem = $(i - 2)
                if (w ~ /^cmem\[/) { cmem += $(i - 2); any = 1 }
            }
        }
        END {
            if (regs != "" && smem == "") smem = 0 # left out when zero
            print k, (regs == "" ? "-" : regs), (smem == "" ? "-" : smem), (any ? cmem : "-"),
                (stack == "" ? "-" : stack), (st == "" ? "-" : st), (ld == "" ? "-" : ld)
        }'
}

# ember's table row for KERNEL, from $TMP/out
ember_says() { awk -v k="$1" '$1 == k { print $1, $2, $3, $4, $5, $6, $7 }' "$TMP/out"; }

# the ptxas ember names in its first line: "ptxas 11.8 (V11.8.89): /path/ptxas -v -arch=sm_35"
ptxas_used() { sed -n '1s/^ptxas [^:]*: \(.*\) -v -arch=sm_[0-9]*$/\1/p' "$TMP/out"; }

# sgemm's row against ptxas run by hand on `ember ptx sgemm`, same arch, same ptxas
check_sgemm() { # ARCH WANTED-VERSION (env for both ember runs already exported)
    arch=$1 version=$2
    expect 0 "^sgemm " -- "$EMBER" ptx sgemm --arch "$arch" --resources
    used=$(ptxas_used)
    row=$(ember_says sgemm)
    head -n 1 "$TMP/out" | grep -q "ptxas $version" || fail "$arch: not ptxas $version: $(head -n 1 "$TMP/out")"
    regs=$(echo "$row" | cut -d' ' -f2)
    [ "${regs:-0}" -gt 0 ] 2>/dev/null || fail "$arch: sgemm uses no registers? $row"
    if [ -x "$used" ] && "$EMBER" ptx sgemm --arch "$arch" >"$TMP/sgemm.ptx" 2>/dev/null; then
        by_hand=$(ptxas_says "$used" "$arch" "$TMP/sgemm.ptx" sgemm)
        if [ "$row" = "$by_hand" ]; then
            echo "ptx --resources: $arch, ptxas $version: $row (as $used -v says)"
        else
            fail "$arch: ember says \"$row\", $used -v says \"$by_hand\""
        fi
    else
        fail "$arch: ember names no ptxas it ran, or ember ptx failed: $(head -n 1 "$TMP/out")"
    fi
}

# 1. the command line
expect 2 "needs --arch sm_XX" -- "$EMBER" ptx sgemm --resources
expect 2 "needs --arch sm_XX" -- "$EMBER" ptx sgemm --resources --arch compute_90
expect 2 "needs --arch sm_XX" -- "$EMBER" ptx --resources
expect 2 "takes one kernel name" -- "$EMBER" ptx sgemm fill --resources --arch sm_90
expect 0 "--resources" -- "$EMBER" ptx --help

PTXAS=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null)
CU11_PTXAS=${CU11:+$CU11/nvidia/cuda_nvcc/bin/ptxas}
[ -n "$CU11_PTXAS" ] && [ -x "$CU11_PTXAS" ] || CU11_PTXAS=""

# 2 and 3 with the toolkit's ptxas
if [ -n "$PTXAS" ]; then
    ran=1
    check_sgemm sm_90 "$("$PTXAS" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)"
    # every kernel: one row each, in the order of --list, each with registers
    expect 0 "^sgemm " -- "$EMBER" ptx --resources --arch sm_90
    "$EMBER" ptx --list | cut -d' ' -f1 >"$TMP/listed"
    sed -n '4,$p' "$TMP/out" | sed '$d' | cut -d' ' -f1 >"$TMP/rows"
    cmp -s "$TMP/listed" "$TMP/rows" || fail "the table's kernels are not --list's ($(wc -l <"$TMP/rows") rows," \
        "$(wc -l <"$TMP/listed") kernels): $(head -c 800 "$TMP/out")"
    awk 'NR > 3 && NF == 7 && !($2 > 0) { bad = bad " " $1 } END { if (bad) { print bad; exit 1 } }' "$TMP/out" \
        >"$TMP/bad" || fail "kernels with no registers at sm_90:$(cat "$TMP/bad")"
    echo "ptx --resources: sm_90, every kernel: $(wc -l <"$TMP/rows") rows"
else
    skipped="$skipped; sm_90 and every kernel (no CUDA toolkit's ptxas)"
fi

# 2 with CUDA 11.8's: NVRTC 11.8 makes the PTX, the nvcc wheel beside it assembles it
if [ -n "$CU11_PTXAS" ]; then
    ran=1
    EMBER_NVRTC=$CU11/nvidia/cuda_nvrtc/lib
    export EMBER_NVRTC
    check_sgemm sm_35 11.8
    grep -q "NVRTC 11.8" "$TMP/out" || fail "sm_35: the PTX is not NVRTC 11.8's: $(head -n 1 "$TMP/out")"
    # the built-in PTX, through a ptxas named by its folder
    expect 0 "^sgemm " -- env EMBER_NVRTC= EMBER_PTXAS="only:$CU11/nvidia/cuda_nvcc/bin" \
        "$EMBER" ptx sgemm --arch sm_37 --resources --baseline
    grep -q "the built-in sm_30 PTX" "$TMP/out" || fail "sm_37 --baseline: $(head -n 1 "$TMP/out")"
    # 4. 11.8's knows sm_90 but not NVRTC 13's .version 9.0: the toolkit's is next
    if [ -n "$PTXAS" ] && env -u EMBER_NVRTC "$EMBER" ptx sgemm --arch sm_90 2>&1 >/dev/null | grep -q "NVRTC 1[3-9]"
    then
        expect 4 "Unsupported .version" -- env -u EMBER_NVRTC EMBER_PTXAS="only:$CU11_PTXAS" \
            "$EMBER" ptx sgemm --arch sm_90 --resources
        expect 0 "^sgemm " -- env -u EMBER_NVRTC EMBER_PTXAS="$CU11_PTXAS" "$EMBER" ptx sgemm --arch sm_90 --resources
        head -n 1 "$TMP/out" | grep -q "ptxas 11.8" && fail "sm_90: ptxas 11.8 took NVRTC 13's PTX?"
    fi
else
    skipped="$skipped; sm_35 (the nvidia-cuda-nvcc-cu11 wheel is not in ${CU11:-build/cu11}:"
    skipped="$skipped scripts/setup.sh --tests installs it)"
fi

# 5. sm_30, known to no ptxas since CUDA 10.2's (EMBER_NVRTC, where set
# above, also leads to CUDA 11.8's): each one tried is named with its archs
if [ $ran -eq 1 ] && ! { [ -n "$PTXAS" ] && "$PTXAS" --help | grep -q "'sm_30'"; }; then
    expect 4 "no ptxas here assembles for sm_30" -- "$EMBER" ptx sgemm --arch sm_30 --resources
    if [ -n "$PTXAS" ] && ! grep -q "): ptxas [0-9.]* (V[0-9.]*), sm_75 to sm_[0-9]*; does not know sm_30" "$TMP/out"
    then
        fail "sm_30: the message does not name the toolkit's ptxas and its archs: $(cat "$TMP/out")"
    fi
    if [ -n "$CU11_PTXAS" ] && ! grep -q "(beside EMBER_NVRTC): ptxas 11.8 (V[0-9.]*), sm_35 to sm_90" "$TMP/out"
    then
        fail "sm_30: the message does not name ptxas 11.8 and its archs: $(cat "$TMP/out")"
    fi
    grep -q "CUDA 10.2" "$TMP/out" || fail "sm_30: the message does not say what knows sm_30: $(cat "$TMP/out")"
fi
unset EMBER_NVRTC

# 5. no ptxas at all, whatever this machine has
expect 4 "/nonexistent/ptxas (EMBER_PTXAS): not found" -- \
    env EMBER_PTXAS=only:/nonexistent/ptxas "$EMBER" ptx sgemm --arch sm_35 --resources
grep -q "pip install nvidia-cuda-nvcc-cu11" "$TMP/out" || fail "no advice for sm_35: $(cat "$TMP/out")"
expect 4 "no ptxas to assemble for sm_86" -- env EMBER_PTXAS=none "$EMBER" ptx sgemm --arch sm_86 --resources

[ -n "$skipped" ] && echo "not checked here${skipped}"
[ $failures -eq 0 ] || exit 1
[ $ran -eq 1 ] || exit 77
echo "test_ptx_resources: ok"
