/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-path.c — which way the kernels reach a GPU, and why.
 *
 * Every path that may work, in order of preference (docs/design.md):
 *   1. for each NVRTC, newest first, that targets the GPU's arch or the
 *      highest arch below it: a cubin when it can build one for the exact
 *      sm and the driver is of the NVRTC's major version or newer (a cubin
 *      skips the driver's PTX version check, not its toolkit check), then
 *      PTX when the driver JITs that PTX version;
 *   2. the built-in PTX for sm_30, which every driver since 2013 JITs for
 *      any GPU from sm_30 up.
 * cuda-module.c tries them in this order until the driver takes one. Every
 * path passed over is recorded with its reason, for `ember devices`.
 */
#include <stdio.h>
#include <string.h>

#include "cuda-impl.h"
#include "text-impl.h"

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
#define reject(out, ...) ember_note_append((out)->rejected, sizeof(out)->rejected, __VA_ARGS__)

/* the highest arch the NVRTC targets at or below cc, or 0 */
static int best_arch(const struct cuda_nvrtc *n, int cc)
{
    int best = 0;
    for (int i = 0; i < n->arch_count; i++)
        if (n->archs[i] <= cc && n->archs[i] > best)
            best = n->archs[i];
    return best;
}

static void add_option(struct cuda_choice *out, enum cuda_kernel_path path, int nvrtc, int arch,
                       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_option(struct cuda_choice *out, enum cuda_kernel_path path, int nvrtc, int arch,
                       const char *fmt, ...)
{
    if (out->count == CUDA_MAX_OPTIONS)
        return;
    struct cuda_option *o = &out->options[out->count++];
    *o = (struct cuda_option){.path = path, .nvrtc = nvrtc, .arch = arch};
    EMBER_FORMAT_ARGS(o->reason, fmt);
}

/* EMBER_CUDA_KERNELS: which paths it lets through */
static bool forced_allows(const char *forced, enum cuda_kernel_path path)
{
    if (!forced)
        return true;
    if (strcmp(forced, "baseline") == 0)
        return path == CUDA_PATH_BASELINE_PTX;
    if (strcmp(forced, "nvrtc") == 0)
        return path == CUDA_PATH_NVRTC_CUBIN || path == CUDA_PATH_NVRTC_PTX;
    if (strcmp(forced, "nvrtc-cubin") == 0)
        return path == CUDA_PATH_NVRTC_CUBIN;
    return strcmp(forced, "nvrtc-ptx") == 0 && path == CUDA_PATH_NVRTC_PTX;
}

/* The NVRTC paths, newest NVRTC first, each NVRTC's cubin before its PTX. */
static void nvrtc_options(int cc, int driver_cuda, int driver_ptx_isa, const struct cuda_nvrtc *nvrtc,
                          int nvrtc_count, const char *forced, struct cuda_choice *out)
{
    bool cubin_wanted = forced_allows(forced, CUDA_PATH_NVRTC_CUBIN),
         ptx_wanted = forced_allows(forced, CUDA_PATH_NVRTC_PTX);
    if (!cubin_wanted && !ptx_wanted)
        reject(out, "NVRTC not tried (EMBER_CUDA_KERNELS=%s)", forced);
    else if (nvrtc_count == 0)
        reject(out, "no NVRTC library found");
    for (int i = 0; (cubin_wanted || ptx_wanted) && i < nvrtc_count; i++) {
        const struct cuda_nvrtc *n = &nvrtc[i];
        int arch = best_arch(n, cc);
        if (!arch) {
            reject(out, "NVRTC %d.%d targets sm_%d and newer, not sm_%d", n->major, n->minor,
                   n->arch_count ? n->archs[0] : 0, cc);
            continue;
        }
        /* a cubin skips the driver's PTX check, but needs a driver of its toolkit's major version */
        if (n->cubin && arch == cc && cubin_wanted) {
            if (n->major > driver_cuda / 1000)
                reject(out, "NVRTC %d.%d's cubins need a CUDA %d driver, this one is CUDA %d.%d", n->major,
                       n->minor, n->major, driver_cuda / 1000, driver_cuda % 1000 / 10);
            else
                add_option(out, CUDA_PATH_NVRTC_CUBIN, i, arch, "NVRTC %d.%d builds a cubin for sm_%d",
                           n->major, n->minor, arch);
        }
        if (!ptx_wanted)
            continue;
        if (n->ptx_isa <= driver_ptx_isa)
            add_option(out, CUDA_PATH_NVRTC_PTX, i, arch,
                       "NVRTC %d.%d emits PTX %d.%d for compute_%d, which the driver (up to PTX %d.%d) JITs",
                       n->major, n->minor, n->ptx_isa / 10, n->ptx_isa % 10, arch, driver_ptx_isa / 10,
                       driver_ptx_isa % 10);
        else
            reject(out, "NVRTC %d.%d emits PTX %d.%d but the driver loads at most PTX %d.%d", n->major,
                   n->minor, n->ptx_isa / 10, n->ptx_isa % 10, driver_ptx_isa / 10, driver_ptx_isa % 10);
    }
}

void cuda_choose_path(int cc, int driver_cuda, int driver_ptx_isa, const struct cuda_nvrtc *nvrtc,
                      int nvrtc_count, int baseline_ptx_isa, const char *forced, struct cuda_choice *out)
{
    memset(out, 0, sizeof *out);
    if (cc < CUDA_OLDEST_ARCH) {
        snprintf(out->reason, sizeof out->reason,
                 "compute capability %d.%d is older than sm_30, the oldest ember supports: train on the "
                 "CPU instead (the device \"cpu\")",
                 cc / 10, cc % 10);
        return;
    }
    nvrtc_options(cc, driver_cuda, driver_ptx_isa, nvrtc, nvrtc_count, forced, out);
    if (!forced_allows(forced, CUDA_PATH_BASELINE_PTX))
        reject(out, "the built-in PTX not tried (EMBER_CUDA_KERNELS=%s)", forced);
    else if (baseline_ptx_isa <= driver_ptx_isa)
        add_option(out, CUDA_PATH_BASELINE_PTX, -1, 30,
                   "the built-in sm_30 PTX (PTX %d.%d), JITted by the driver for sm_%d",
                   baseline_ptx_isa / 10, baseline_ptx_isa % 10, cc);
    else
        reject(out, "the built-in PTX is PTX %d.%d but the driver loads at most PTX %d.%d",
               baseline_ptx_isa / 10, baseline_ptx_isa % 10, driver_ptx_isa / 10, driver_ptx_isa % 10);
    if (out->count > 0)
        snprintf(out->reason, sizeof out->reason, "%s", out->options[0].reason);
    else if (forced)
        snprintf(out->reason, sizeof out->reason, "no kernel path EMBER_CUDA_KERNELS=%s allows works: %.*s",
                 forced, (int)sizeof out->reason - 80, out->rejected);
    else
        snprintf(out->reason, sizeof out->reason,
                 "no kernel path works: %.*s; a newer NVIDIA driver would load them",
                 (int)sizeof out->reason - 80, out->rejected);
}

int cuda_version_for_ptx_isa(int isa)
{
    /* the CUDA releases: 8.0, 9.0 to 9.2, 10.0 to 10.2, 11.0 to 11.8, 12.0 to 12.9, 13.x */
    static const int last_minor[] = {[8] = 0, [9] = 2, [10] = 2, [11] = 8, [12] = 9, [13] = 9};
    for (int major = 8; major <= 13; major++)
        for (int minor = 0; minor <= last_minor[major]; minor++)
            if (cuda_ptx_isa_of(major * 1000 + minor * 10) == isa)
                return major * 1000 + minor * 10;
    return 0;
}
