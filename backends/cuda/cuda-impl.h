/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-impl.h — the CUDA backend's insides.
 *
 * The backend finds its way onto whatever NVIDIA GPU is present, at run
 * time, with nothing from CUDA needed to build (docs/design.md):
 *
 *   cuda-probe.c    opens libcuda.so.1 and every libnvrtc it can find, reads
 *                   the driver's version and each GPU's compute capability
 *   cuda-path.c     ranks the kernel paths for each GPU (NVRTC cubin, NVRTC
 *                   PTX, the built-in sm_30 PTX) and says why
 *   cuda-module.c   compiles the kernels on the best path (or takes them
 *                   from the disk cache) and loads them; when the driver
 *                   refuses them, the next path, and the refusal is
 *                   remembered
 *   cuda-baseline.c the built-in PTX, generated from backends/kernels by
 *                   scripts/baseline-ptx.sh and embedded at build time
 *   cuda.c          the backend table: devices, memory, launches; the
 *                   primitives themselves are the shared ones of
 *                   backends/kernels/gpu.h
 *
 * The probe runs once per process and is kept: what it found does not
 * change while ember runs, and `ember devices` prints it whole.
 */
#ifndef EMBER_CUDA_IMPL_H
#define EMBER_CUDA_IMPL_H

#include <stdbool.h>

#include "../kernels/gpu.h"
#include "cuda-api.h"

#define CUDA_MAX_GPUS    16
#define CUDA_MAX_NVRTCS  8
#define CUDA_MAX_ARCHS   64
#define CUDA_MAX_OPTIONS (2 * CUDA_MAX_NVRTCS + 1)
#define CUDA_MAX_ARGS    48

/* The oldest GPU ember supports: Kepler, sm_30. */
#define CUDA_OLDEST_ARCH 30

/* One NVRTC library found on the machine. */
struct cuda_nvrtc {
    char path[512];
    void *lib;
    struct nvrtc_api api;
    int major, minor;
    int ptx_isa;               /* the PTX ISA it emits, times ten: 78 is PTX 7.8 */
    int archs[CUDA_MAX_ARCHS]; /* compute capabilities it targets, times ten, ascending */
    int arch_count;
    bool cubin; /* it can emit a cubin (nvrtcGetCUBIN, NVRTC 11.1 and later) */
};

enum cuda_kernel_path {
    CUDA_PATH_NONE,         /* the GPU cannot be used */
    CUDA_PATH_NVRTC_CUBIN,  /* NVRTC compiles to machine code for the exact sm */
    CUDA_PATH_NVRTC_PTX,    /* NVRTC compiles to PTX, the driver JITs it */
    CUDA_PATH_BASELINE_PTX, /* the built-in sm_30 PTX, JITted by the driver */
};

/* One way to get the kernels onto a GPU. */
struct cuda_option {
    enum cuda_kernel_path path;
    int nvrtc; /* index into the probe's NVRTCs, for the NVRTC paths; -1 */
    int arch;  /* the arch compiled for, times ten (35: sm_35 or compute_35) */
    char reason[256];
};

/* Every kernel path that may work on one GPU, best first, and the reasons
 * behind them. */
struct cuda_choice {
    struct cuda_option options[CUDA_MAX_OPTIONS];
    int count;
    char reason[512];    /* why the first, or why none works */
    char rejected[1024]; /* each path passed over and why, "; " between them */
};

/* the path the GPU is expected to take: the first option's */
static inline enum cuda_kernel_path cuda_choice_path(const struct cuda_choice *c)
{
    return c->count > 0 ? c->options[0].path : CUDA_PATH_NONE;
}

struct cuda_gpu {
    char name[256];
    int cc;        /* compute capability times ten: 35 for 3.5 */
    size_t memory; /* bytes */
    int multiprocessors;
    int clock_khz, memory_clock_khz, bus_bits; /* 0: the driver did not say */
    int max_threads_per_block;
    int shared_per_block; /* bytes */
    int max_grid[3];      /* blocks along x, y, z */
    bool integrated;      /* its memory is the host's (a Jetson): see cuda_device's mapped */
    struct cuda_choice choice;
};

/* What the first look at the machine found. */
struct cuda_probe {
    /* the driver; when driver_ok is false, why says what is wrong and the fix */
    bool driver_ok;
    char driver_path[512];
    char why[768];
    void *driver_lib;
    struct cuda_driver_api api;
    int driver_version; /* cuDriverGetVersion: 11040 is CUDA 11.4 */
    int driver_ptx_isa; /* the highest PTX ISA it JITs, times ten */
    /* EMBER_CUDA_MAX_PTX: the kernel paths are chosen as for an older
     * driver, the one of this CUDA version (its PTX ISA and the cubins it
     * takes), to see on a new GPU what an old one gets; 0 when unset */
    int driver_as;
    int path_driver, path_ptx_isa; /* what the paths are chosen for: the driver's, or driver_as's */
    bool sync;                     /* EMBER_CUDA_SYNC: wait for every kernel, to name the one that faults */

    int gpu_count;
    struct cuda_gpu gpus[CUDA_MAX_GPUS];

    int nvrtc_count;
    struct cuda_nvrtc nvrtc[CUDA_MAX_NVRTCS];
    char nvrtc_notes[1024]; /* libraries that were found but could not be used */

    int baseline_ptx_isa; /* the built-in PTX's .version, times ten */
    /* $EMBER_CUDA_KERNELS: "nvrtc", "nvrtc-cubin", "nvrtc-ptx", "baseline" or NULL */
    const char *forced;
};

/* What the driver says of one loaded kernel. */
struct cuda_kernel_info {
    int max_threads; /* per block, as its registers allow */
    int arg_count;   /* -1 when the driver cannot say (before CUDA 12.4) */
    unsigned char arg_sizes[CUDA_MAX_ARGS];
};

/* One open GPU. */
struct cuda_device {
    struct ember_gpu gpu; /* first: the shared launch plans run on it */
    const struct cuda_probe *probe;
    int index;
    CUdevice device;
    CUcontext context; /* the device's primary context, retained */
    CUmodule module;
    CUfunction functions[EMBER_KERNEL_COUNT];
    struct cuda_kernel_info kernels[EMBER_KERNEL_COUNT];
    enum cuda_kernel_path path; /* the path whose kernels are loaded */
    char path_detail[160];      /* "NVRTC 11.8 cubin for sm_35" */
    /* An integrated GPU's tensors are unified memory (cuMemAllocManaged),
     * which the GPU and the CPU both read where it lies: a copy to or from
     * it is the CPU's memcpy once the GPU is idle, not a trip through the
     * driver's staging buffers (NVIDIA's "CUDA for Tegra" notes: unified
     * memory stays cached on both sides on a Jetson Nano or TX2, where
     * pinned memory would be uncached on the GPU). */
    bool mapped;
    enum ember_kernel last_kernel; /* launched last: where a fault reported later most likely began */
    bool launched;
    /* After a sticky error (an illegal address, a failed launch) the
     * context is unusable: every later call fails at once with this. */
    bool lost;
    char lost_reason[256];
    /* while the core profiles: two events around every launch, whose
     * elapsed time is the kernel's by the GPU's clock */
    bool profiling;
    CUevent kernel_start, kernel_end;
};

/* Reports a failed driver call, names the error, and marks the device
 * lost when the error is a sticky one. Out of memory adds free and total. */
ember_status cuda_fail(struct cuda_device *d, CUresult r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Compiles (or takes from the cache) and loads the kernels on the GPU's
 * best path, going down its options while the driver refuses them
 * (cuda-module.c); fills d->module, d->functions, d->kernels, d->path,
 * d->gpu.tuning. */
ember_status cuda_module_open(struct cuda_device *d);
void cuda_module_close(struct cuda_device *d);

/* What happened the last time this process opened GPU `index`: the path
 * loaded (CUDA_PATH_NONE: never opened, or nothing loaded), its detail, and
 * the paths that failed on the way, each with why: the driver refused it,
 * or NVRTC could not build it ("" when none). For `ember devices`, which
 * reports the path taken, not only the one expected. */
enum cuda_kernel_path cuda_module_outcome(int index, char *detail, size_t detail_len, char *failed,
                                          size_t failed_len);

/* The kernels compiled by one NVRTC for `arch` (times ten), as PTX, or as a
 * cubin when `cubin` is set; malloc'd bytes (PTX NUL-terminated), or NULL
 * with NVRTC's log in `why`. No GPU is needed: `ember ptx` and the tests
 * use it too. */
unsigned char *cuda_nvrtc_compile(const struct cuda_nvrtc *n, int arch, bool cubin,
                                  const struct ember_kernel_tuning *tuning, size_t *size, char *why,
                                  size_t why_len);

/* The tuning NVRTC compiles the kernels with: bigger groups and tiles than
 * the defaults the built-in PTX has. */
struct ember_kernel_tuning cuda_nvrtc_tuning(void);

/* The built-in PTX: every kernel for .target sm_30, compiled with the
 * default tuning (cuda-baseline.c). */
const char *cuda_baseline_ptx(void);
/* The `.version` of a PTX text, times ten (32 for 3.2); 0 when it has none. */
int cuda_ptx_isa_in(const char *ptx);

/* The CUDA section of `ember devices` (cuda-diagnose.c). */
struct ember_report;
void cuda_diagnose(struct ember_report *section, int threads);

/* The probe, made on first call (thread-safe) and kept for the process. */
const struct cuda_probe *cuda_probe(void);
/* Its driver part alone (driver_ok, why, the GPUs): what opening a device
 * asks first, so that a machine without a driver never loads an NVRTC (a
 * large library) just to be told no. */
const struct cuda_probe *cuda_probe_driver(void);

/* The PTX ISA (times ten) a given CUDA version emits or, for a driver,
 * the highest it loads: 11040 (CUDA 11.4) -> 74. 0 when too old to know. */
int cuda_ptx_isa_of(int cuda_version);

/* The kernel paths for a GPU of compute capability `cc` (times ten) given
 * the driver's CUDA version and PTX ISA, the NVRTCs found, the built-in
 * PTX's ISA and an optional forced path (EMBER_CUDA_KERNELS). Pure: no
 * library is called, so every rule is tested without a GPU. */
void cuda_choose_path(int cc, int driver_cuda, int driver_ptx_isa, const struct cuda_nvrtc *nvrtc,
                      int nvrtc_count, int baseline_ptx_isa, const char *forced, struct cuda_choice *out);

/* The oldest CUDA version whose driver loads PTX ISA `isa` (times ten):
 * 64 -> 10010 (CUDA 10.1); 0 for none. */
int cuda_version_for_ptx_isa(int isa);

/* "NVRTC 11.8 cubin for sm_35", "built-in sm_30 PTX", ... */
const char *cuda_path_name(enum cuda_kernel_path path);

/* The driver API's name for a result: "CUDA_ERROR_ILLEGAL_ADDRESS". Our
 * own table, because the stub library's cuGetErrorName fails too. */
const char *cuda_error_name(CUresult result);

#endif /* EMBER_CUDA_IMPL_H */
