#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gpu/test_devices.sh — "why can't it use my GPU?", answered on a machine
# without one: each case puts in front of ember, through the environment,
# the machine a user has (no driver, the toolkit's stub, a driver with no
# NVRTC, an NVRTC too new for the driver or too new for the GPU, a GPU
# older than sm_30, no OpenCL, an OpenCL platform with no devices, a device
# that does not exist) using the real loaders and test doubles of libcuda and
# libnvrtc (tests/gpu/fakes), and checks the reason, the fix, the exit status,
# what `auto` picks, and `ember devices --json` against docs/devices.md.
#
#   test_devices.sh EMBER FAKE_CUDA FAKE_NVRTC FAKE_NVRTC_OLD [STUB_LIBCUDA]
set -u
EMBER=$1 FAKE_CUDA=$2 FAKE_NVRTC=$3 FAKE_NVRTC_OLD=$4 STUB=${5:-}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/../common/cli-util.sh"

NO_GPU="EMBER_CUDA_LIBRARY=/nonexistent/libcuda.so.1"
K40="EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_DRIVER=11040 EMBER_FAKE_CUDA_GPUS=35:Tesla-K40m"

# --- the JSON's documented fields, on this machine as it is
run -- devices --json
expect_status 0 "devices --json"
jcheck "fields" "set(d) == {'ember', 'devices', 'auto', 'backends'} and set(d['backends']) >= {'cpu'}"
jcheck "device fields" "all(set(e) >= {'name', 'backend', 'description', 'usable', 'preferred', 'reason', 'summary'} for e in d['devices'])"
jcheck "cpu fields" "set(cpu) >= {'cores', 'threads', 'blas'} and cpu['cores'] >= 1"
jcheck "cuda fields" "not cuda or (set(cuda) >= {'available', 'driver', 'nvrtc', 'builtin_ptx_isa', 'gpus'} and 'found' in cuda['driver'])"
jcheck "opencl fields" "not opencl or 'available' in opencl"
jcheck "auto is a listed device" "d['auto'] in dev and dev[d['auto']]['usable'] and dev[d['auto']]['preferred']"
jcheck "order" "[e['backend'] for e in d['devices']] == sorted([e['backend'] for e in d['devices']], key=['cuda', 'opencl', 'cpu'].index)"

# --- no driver at all
run $NO_GPU -- devices
expect_status 0 "devices without a driver"
expect_text "cannot open /nonexistent/libcuda.so.1" "devices without a driver"
run $NO_GPU -- devices --json
jcheck "no driver" "dev['cuda']['usable'] is False and 'cannot open' in dev['cuda']['reason'] and cuda['available'] is False and cuda['driver']['found'] is False"
run $NO_GPU -- train --device cuda --data random --steps 1 --quiet
expect_status 4 "forced cuda without a driver"
expect_text "cannot open /nonexistent/libcuda.so.1" "forced cuda without a driver"
run $NO_GPU -- train --device cuda:0 --fallback cpu --data random --steps 1 --quiet
expect_status 0 "--fallback cpu"
expect_text "falling back to cpu" "--fallback cpu"
run $NO_GPU -- train --data random --steps 1 --quiet
expect_status 0 "auto without a driver"
# a machine without a GPU training on its CPU is no news: said with --verbose only
cat "$TMP/out" "$TMP/err" | grep -q "auto chose" && fail "auto's line without a driver, and without --verbose"
run $NO_GPU -- train --data random --steps 1 --quiet --verbose
expect_text "passed over: cuda (cannot open /nonexistent" "auto's line without a driver, with --verbose"
run "$NO_GPU EMBER_DEVICE=cpu" -- train --data random --steps 1 --quiet
expect_status 0 "EMBER_DEVICE=cpu"
cat "$TMP/out" "$TMP/err" | grep -q "auto chose" && fail "EMBER_DEVICE=cpu still went through auto"

# --- only the toolkit's stub libcuda (cuInit answers 34); the real one when installed
for lib in $STUB "$FAKE_CUDA"; do
    [ -f "$lib" ] || continue
    run "EMBER_CUDA_LIBRARY=$lib EMBER_FAKE_CUDA_INIT=34" -- devices
    expect_status 0 "devices with the stub $lib"
    expect_text "stub libcuda" "devices with the stub $lib"
    expect_text "CUDA_ERROR_STUB_LIBRARY" "devices with the stub $lib"
    expect_text "install the NVIDIA driver" "devices with the stub $lib"
done

# --- a driver but no NVRTC: the built-in PTX, and what would do better
run "$K40 EMBER_NVRTC=none" -- devices --json
expect_status 0 "driver, no NVRTC"
jcheck "driver, no NVRTC" "cuda['driver']['found'] and cuda['driver']['cuda_version'] == '11.4' and cuda['driver']['max_ptx_isa'] == '7.4' and cuda['nvrtc'] == [] and cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and 'no NVRTC library found' in cuda['gpus'][0]['passed_over'] and 'CUDA 11.8' in cuda['gpus'][0]['better']"
run "$K40 EMBER_NVRTC=none" -- devices
expect_text "Tesla-K40m, compute capability 3.5" "driver, no NVRTC (text)"
expect_text "kernels: builtin-ptx" "driver, no NVRTC (text)"

# --- an NVRTC too new for the driver: 12.4 emits PTX 8.4, an R470 driver loads 7.4
run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_DRIVER=11040 EMBER_FAKE_CUDA_GPUS=75:RTX-2080 EMBER_NVRTC=only:$FAKE_NVRTC_OLD EMBER_FAKE_NVRTC_VERSION=12.4" -- devices --json
jcheck "NVRTC too new for the driver" "cuda['nvrtc'][0]['version'] == '12.4' and cuda['nvrtc'][0]['ptx_isa'] == '8.4' and not cuda['nvrtc'][0]['cubin'] and cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and 'NVRTC 12.4 emits PTX 8.4 but the driver loads at most PTX 7.4' in cuda['gpus'][0]['passed_over'] and 'newer NVIDIA driver' in cuda['gpus'][0]['better']"

# --- an NVRTC that cannot target the GPU: 12.4 starts at sm_50, the K40m is sm_35
run "$K40 EMBER_NVRTC=only:$FAKE_NVRTC EMBER_FAKE_NVRTC_VERSION=12.4 EMBER_FAKE_NVRTC_ARCHS=50,52,60,61,70,75,80,86,89,90" -- devices --json
jcheck "NVRTC that cannot target sm_35" "cuda['nvrtc'][0]['archs'].startswith('sm_50') and cuda['nvrtc'][0]['cubin'] and cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and 'NVRTC 12.4 targets sm_50 and newer, not sm_35' in cuda['gpus'][0]['passed_over']"

# --- the same NVRTC where it can: a cubin for the exact sm is the best path;
# the test double of NVRTC builds nothing, so the GPU takes the built-in PTX, and says why
run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=86:RTX-3090 EMBER_NVRTC=only:$FAKE_NVRTC EMBER_FAKE_NVRTC_VERSION=12.4" -- devices --json
jcheck "NVRTC cubin" "cuda['gpus'][0]['kernel_paths'] == 'nvrtc-cubin; builtin-ptx' and cuda['gpus'][0]['kernel_path'] == 'builtin-ptx' and 'NVRTC 12.4 cubin for sm_86: NVRTC 12.4 could not compile' in cuda['gpus'][0]['failed_paths'] and cuda['gpus'][0]['kernels_loaded'] == 'built-in sm_30 PTX'"

# --- a GPU older than sm_30 (Fermi): unusable, with the reason, and auto goes on
run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=21:GTX-560 EMBER_NVRTC=none" -- devices --json
jcheck "Fermi" "cuda['gpus'][0]['kernel_path'] == 'none' and dev['cuda:0']['usable'] is False and 'older than sm_30' in dev['cuda:0']['reason'] and d['auto'] != 'cuda:0'"
run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=21:GTX-560 EMBER_NVRTC=none" -- train --device cuda:0 --data random --steps 1 --quiet
expect_status 4 "forced Fermi"
expect_text "compute capability 2.1 is older than sm_30" "forced Fermi"
run "EMBER_CUDA_LIBRARY=$FAKE_CUDA EMBER_FAKE_CUDA_GPUS=21:GTX-560 EMBER_NVRTC=none" -- train --data random --steps 1 --quiet
expect_status 0 "auto with a Fermi GPU"
expect_text "passed over: cuda:0 (GTX-560: compute capability 2.1 is older than sm_30" "auto with a Fermi GPU"

# --- a GPU whose kernels the driver refuses (the test double told to): auto says so and goes on
run "$K40 EMBER_NVRTC=none EMBER_FAKE_CUDA_REFUSE=all" -- train --data random --steps 1 --quiet
expect_status 0 "auto past a GPU that fails to open"
expect_text "cuda:0 (cuda:0 (Tesla-K40m" "auto past a GPU that fails to open"
expect_text "EMBER_FAKE_CUDA_REFUSE=all" "auto past a GPU that fails to open"
# --- and one that works: the test double runs ember's kernels
run "$K40 EMBER_NVRTC=none" -- train --data random --steps 1 --quiet
expect_status 0 "auto on a GPU that works"
expect_text "auto chose cuda:0" "auto on a GPU that works"

# --- a forced device that is not there
run "$K40 EMBER_NVRTC=none" -- train --device cuda:3 --data random --steps 1 --quiet
expect_status 4 "cuda:3 of one GPU"
expect_text "cuda has 1 device" "cuda:3 of one GPU"
run -- train --device cpu:1 --data random --steps 1 --quiet
expect_status 4 "cpu:1"
expect_text "cpu has 1 device" "cpu:1"

# --- a build without the OpenCL backend (EMBER_TEST_OPENCL=OFF, from
# tests/CMakeLists.txt): opencl is a device it does not know, and lists none
if [ "${EMBER_TEST_OPENCL:-ON}" = OFF ]; then
    run -- train --device opencl --data random --steps 1 --quiet
    expect_status 4 "opencl in a build without it"
    expect_text "this build has no opencl backend (it was built with -DEMBER_OPENCL=OFF): it knows auto, cuda, cpu" \
        "opencl in a build without it"
    run -- devices --json
    jcheck "no opencl in a build without it" "not opencl and 'opencl' not in [e['backend'] for e in d['devices']]"
    finish test_devices
fi
run -- train --device opencl:7 --data random --steps 1 --quiet
expect_status 4 "opencl:7"

# --- no OpenCL loader
run "$NO_GPU EMBER_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1" -- devices --json
jcheck "no OpenCL loader" "opencl['available'] is False and 'cannot be opened' in opencl['reason'] and dev['opencl']['usable'] is False"
run "$NO_GPU EMBER_OPENCL_LIBRARY=/nonexistent/libOpenCL.so.1" -- train --device opencl --data random --steps 1 --quiet
expect_status 4 "forced opencl without a loader"
expect_text "ocl-icd-libopencl1" "forced opencl without a loader"

# --- an OpenCL platform with no devices (PoCL told to use a device it has not)
if "$EMBER" devices | grep -q "Portable Computing Language"; then
    run "$NO_GPU POCL_DEVICES=nonexistent" -- devices --json
    jcheck "platform with no devices" "opencl['available'] is False and 'has no devices' in opencl['reason']"
    run "$NO_GPU POCL_DEVICES=nonexistent" -- train --device opencl:0 --data random --steps 1 --quiet
    expect_status 4 "forced opencl with a platform of no devices"
    expect_text "has no devices" "forced opencl with a platform of no devices"
else
    echo "note: PoCL is not installed; the platform-without-devices case was not run"
fi

finish test_devices
