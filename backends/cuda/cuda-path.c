/*
 * backends/cuda/cuda-path.c — which way the kernels reach a GPU, and why.
 *
 * In order of preference (DESIGN.md decision 5):
 *   1. an NVRTC that targets the GPU's arch, or the highest arch below it:
 *      a cubin when it can build one for the exact sm (a cubin skips the
 *      driver's PTX version check), else PTX the driver accepts;
 *   2. the built-in PTX for sm_30, which every driver since 2013 JITs for
 *      any GPU from sm_30 up.
 * Every path passed over is recorded with its reason, for `ember devices`.
 */
#include <stdio.h>
#include <string.h>

#include "../../core/text-impl.h"
#include "cuda-impl.h"

int cuda_ptx_isa_of(int cuda_version)
{
    int major = cuda_version / 1000, minor = cuda_version % 1000 / 10;
    if (major >= 13)
        return 90 + (major - 13) * 10 + minor;
    if (major == 12) /* 12.0-12.5 emit 8.0-8.5; 12.6 stayed at 8.5; 12.8 is 8.7, 12.9 is 8.8 */
        return minor <= 5 ? 80 + minor : minor == 6 ? 85 : 79 + minor;
    if (major == 11)
        return 70 + minor;
    if (major == 10)
        return 63 + minor;
    if (major == 9)
        return 60 + minor;
    if (major == 8)
        return 50;
    return 0;
}

const char *cuda_path_name(enum cuda_kernel_path path)
{
    switch (path) {
    case CUDA_PATH_NVRTC_CUBIN: return "NVRTC cubin";
    case CUDA_PATH_NVRTC_PTX: return "NVRTC PTX";
    case CUDA_PATH_BASELINE_PTX: return "built-in sm_30 PTX";
    case CUDA_PATH_NONE: break;
    }
    return "none";
}

/* adds a path passed over, and why, to the choice's list */
#define reject(out, ...) ember_note_append((out)->rejected, sizeof (out)->rejected, __VA_ARGS__)

/* the highest arch the NVRTC targets at or below cc, or 0 */
static int best_arch(const struct cuda_nvrtc *n, int cc)
{
    int best = 0;
    for (int i = 0; i < n->arch_count; i++)
        if (n->archs[i] <= cc && n->archs[i] > best)
            best = n->archs[i];
    return best;
}

void cuda_choose_path(int cc, int driver_ptx_isa, const struct cuda_nvrtc *nvrtc, int nvrtc_count,
                      int baseline_ptx_isa, const char *forced, struct cuda_choice *out)
{
    memset(out, 0, sizeof *out);
    out->nvrtc = -1;
    if (cc < CUDA_OLDEST_ARCH) {
        snprintf(out->reason, sizeof out->reason,
                 "compute capability %d.%d is older than sm_30, the oldest ember supports: train on the "
                 "CPU instead (--device cpu)",
                 cc / 10, cc % 10);
        return;
    }
    bool try_nvrtc = !forced || strcmp(forced, "nvrtc") == 0;
    bool try_baseline = !forced || strcmp(forced, "baseline") == 0;

    if (!try_nvrtc)
        reject(out, "NVRTC not tried (EMBER_CUDA_KERNELS=%s)", forced);
    else if (nvrtc_count == 0)
        reject(out, "no NVRTC library found");
    for (int i = 0; try_nvrtc && i < nvrtc_count; i++) {
        const struct cuda_nvrtc *n = &nvrtc[i];
        int arch = best_arch(n, cc);
        if (!arch) {
            reject(out, "NVRTC %d.%d targets sm_%d and newer, not sm_%d", n->major, n->minor,
                   n->arch_count ? n->archs[0] : 0, cc);
            continue;
        }
        if (n->cubin && arch == cc) {
            out->path = CUDA_PATH_NVRTC_CUBIN;
            snprintf(out->reason, sizeof out->reason, "NVRTC %d.%d builds a cubin for sm_%d", n->major, n->minor,
                     arch);
        } else if (n->ptx_isa <= driver_ptx_isa) {
            out->path = CUDA_PATH_NVRTC_PTX;
            snprintf(out->reason, sizeof out->reason,
                     "NVRTC %d.%d emits PTX %d.%d for compute_%d, which the driver (up to PTX %d.%d) JITs",
                     n->major, n->minor, n->ptx_isa / 10, n->ptx_isa % 10, arch, driver_ptx_isa / 10,
                     driver_ptx_isa % 10);
        } else {
            reject(out, "NVRTC %d.%d emits PTX %d.%d but the driver loads at most PTX %d.%d", n->major, n->minor,
                   n->ptx_isa / 10, n->ptx_isa % 10, driver_ptx_isa / 10, driver_ptx_isa % 10);
            continue;
        }
        out->nvrtc = i;
        out->arch = arch;
        return;
    }

    if (!try_baseline) {
        reject(out, "the built-in PTX not tried (EMBER_CUDA_KERNELS=%s)", forced);
    } else if (baseline_ptx_isa <= driver_ptx_isa) {
        out->path = CUDA_PATH_BASELINE_PTX;
        out->arch = 30;
        snprintf(out->reason, sizeof out->reason, "the built-in sm_30 PTX (PTX %d.%d), JITted by the driver for sm_%d",
                 baseline_ptx_isa / 10, baseline_ptx_isa % 10, cc);
        return;
    } else {
        reject(out, "the built-in PTX is PTX %d.%d but the driver loads at most PTX %d.%d",
               baseline_ptx_isa / 10, baseline_ptx_isa % 10, driver_ptx_isa / 10, driver_ptx_isa % 10);
    }
    snprintf(out->reason, sizeof out->reason, "no kernel path works: %.*s; a newer NVIDIA driver would load them",
             (int)sizeof out->reason - 80, out->rejected);
}
