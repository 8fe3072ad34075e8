/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-diagnose.c — the CUDA section of `ember devices`:
 * the driver and the PTX it loads, every NVRTC found and what it targets,
 * each GPU's kernel path with the reason and the paths passed over, and,
 * where a better path exists, what to install to get it.
 */
#include <stdio.h>
#include <string.h>

#include "cuda-impl.h"
#include "report-impl.h"
#include "text-impl.h"

/* where NVIDIA's PyPI wheel puts NVRTC: the .so files in lib, the DLLs in bin */
#ifdef _WIN32
#define NVRTC_WHEEL_FOLDER "nvidia\\cuda_nvrtc\\bin"
#else
#define NVRTC_WHEEL_FOLDER "nvidia/cuda_nvrtc/lib"
#endif

static const char *path_key(enum cuda_kernel_path path)
{
    switch (path) {
    case CUDA_PATH_NVRTC_CUBIN: return "nvrtc-cubin";
    case CUDA_PATH_NVRTC_PTX: return "nvrtc-ptx";
    case CUDA_PATH_BASELINE_PTX: return "builtin-ptx";
    case CUDA_PATH_NONE: break;
    }
    return "none";
}

/* What would give this GPU a better path than it has, or "" when nothing would. */
static void better_path(const struct cuda_probe *p, const struct cuda_gpu *g, char *out, size_t len)
{
    const struct cuda_choice *c = &g->choice;
    enum cuda_kernel_path path = cuda_choice_path(c);
    out[0] = '\0';
    if (path == CUDA_PATH_NVRTC_CUBIN || path == CUDA_PATH_NONE || g->cc < CUDA_OLDEST_ARCH)
        return;
    if (path == CUDA_PATH_NVRTC_PTX) {
        snprintf(out, len,
                 "an NVRTC that builds cubins for sm_%d (CUDA 11.1 or later) would skip the driver's JIT",
                 g->cc);
        return;
    }
    /* the built-in PTX: is it for want of an NVRTC, or of a driver? */
    if (strstr(c->rejected, "but the driver loads at most"))
        snprintf(
            out, len,
            "a newer NVIDIA driver would load the PTX of the NVRTC found (this one loads up to PTX %d.%d)",
            p->path_ptx_isa / 10, p->path_ptx_isa % 10);
    else if (g->cc < 35)
        snprintf(out, len,
                 "none needed: no NVRTC newer than 10.2 targets sm_%d, and the built-in PTX is made for it",
                 g->cc);
    else if (g->cc < 50)
        snprintf(out, len,
                 "CUDA 11.8's NVRTC, the last for sm_%d, would compile a cubin for it: pip install "
                 "nvidia-cuda-nvrtc-cu11 and point EMBER_NVRTC at its " NVRTC_WHEEL_FOLDER " folder",
                 g->cc);
    else
        snprintf(out, len,
                 "a CUDA toolkit's NVRTC that targets sm_%d would compile for it: install one, or point "
                 "EMBER_NVRTC at one",
                 g->cc);
}

static void cuda_diagnose_nvrtc(struct ember_report *r, const struct cuda_probe *p)
{
    struct ember_report *list = ember_report_array(r, "nvrtc", "NVRTC found");
    for (int i = 0; i < p->nvrtc_count; i++) {
        const struct cuda_nvrtc *n = &p->nvrtc[i];
        struct ember_report *e = ember_report_object(list, NULL, NULL);
        ember_report_string(e, "summary", NULL, "NVRTC %d.%d at %s", n->major, n->minor, n->path);
        ember_report_string(e, "version", NULL, "%d.%d", n->major, n->minor);
        ember_report_string(e, "path", NULL, "%s", n->path);
        ember_report_string(e, "ptx_isa", "emits PTX", "%d.%d", n->ptx_isa / 10, n->ptx_isa % 10);
        char archs[512] = "";
        for (int a = 0; a < n->arch_count; a++) {
            size_t used = strlen(archs);
            snprintf(archs + used, sizeof archs - used, "%ssm_%d", a ? " " : "", n->archs[a]);
        }
        ember_report_string(e, "archs", "targets", "%s", archs);
        ember_report_bool(e, "cubin", "builds cubins", n->cubin);
    }
    if (p->nvrtc_notes[0])
        ember_report_string(r, "nvrtc_notes", "NVRTC notes", "%s", p->nvrtc_notes);
}

void cuda_diagnose(struct ember_report *r, int threads)
{
    (void)threads;
    const struct cuda_probe *p = cuda_probe();
    ember_report_bool(r, "available", NULL, p->driver_ok && p->gpu_count > 0);
    struct ember_report *driver = ember_report_object(r, "driver", NULL);
    ember_report_bool(driver, "found", NULL, p->driver_ok);
    if (p->driver_path[0])
        ember_report_string(driver, "library", "driver library", "%s", p->driver_path);
    if (p->driver_version) {
        ember_report_string(driver, "cuda_version", "driver's CUDA version", "%d.%d",
                            p->driver_version / 1000, p->driver_version % 1000 / 10);
        ember_report_string(driver, "max_ptx_isa", "loads PTX up to", "%d.%d", p->driver_ptx_isa / 10,
                            p->driver_ptx_isa % 10);
    }
    if (p->driver_as)
        ember_report_string(driver, "paths_chosen_as", "kernel paths chosen as for",
                            "a CUDA %d.%d driver (EMBER_CUDA_MAX_PTX=%d.%d)", p->driver_as / 1000,
                            p->driver_as % 1000 / 10, p->path_ptx_isa / 10, p->path_ptx_isa % 10);
    if (!p->driver_ok)
        ember_report_string(driver, "reason", "not available", "%s", p->why);
    cuda_diagnose_nvrtc(r, p);
    ember_report_string(r, "builtin_ptx_isa", "built-in sm_30 PTX", "%d.%d", p->baseline_ptx_isa / 10,
                        p->baseline_ptx_isa % 10);
    if (p->forced)
        ember_report_string(r, "forced", "forced by EMBER_CUDA_KERNELS", "%s", p->forced);
    if (p->sync)
        ember_report_bool(r, "sync", "waits for every kernel (EMBER_CUDA_SYNC)", true);

    struct ember_report *gpus = ember_report_array(r, "gpus", "GPUs");
    for (int i = 0; i < p->gpu_count; i++) {
        const struct cuda_gpu *g = &p->gpus[i];
        const struct cuda_choice *c = &g->choice;
        struct ember_report *e = ember_report_object(gpus, NULL, NULL);
        ember_report_string(e, "summary", NULL,
                            "cuda:%d %s, compute capability %d.%d, %.1f GiB, %d multiprocessors", i, g->name,
                            g->cc / 10, g->cc % 10, (double)g->memory / (1024.0 * 1024.0 * 1024.0),
                            g->multiprocessors);
        ember_report_int(e, "index", NULL, i);
        ember_report_string(e, "gpu", NULL, "%s", g->name);
        ember_report_string(e, "compute_capability", NULL, "%d.%d", g->cc / 10, g->cc % 10);
        ember_report_int(e, "memory_bytes", NULL, (int64_t)g->memory);
        ember_report_int(e, "multiprocessors", NULL, g->multiprocessors);
        /* the path taken when this process opened the GPU (ember devices
         * opens each one), else the one expected */
        char detail[160], failed[1024], paths[256] = "";
        enum cuda_kernel_path taken = cuda_module_outcome(i, detail, sizeof detail, failed, sizeof failed);
        enum cuda_kernel_path path = taken != CUDA_PATH_NONE ? taken : cuda_choice_path(c);
        const char *reason = c->reason;
        for (int o = 0; o < c->count; o++) {
            ember_note_append(paths, sizeof paths, "%s", path_key(c->options[o].path));
            if (c->options[o].path == taken)
                reason = c->options[o].reason;
        }
        ember_report_string(e, "kernel_path", "kernels", "%s", path_key(path));
        ember_report_string(e, "kernel_path_reason", "because", "%s", reason);
        if (taken != CUDA_PATH_NONE)
            ember_report_string(e, "kernels_loaded", "loaded", "%s", detail);
        ember_report_string(e, "kernel_paths", "paths, best first", "%s", c->count ? paths : "none");
        if (failed[0])
            ember_report_string(e, "failed_paths", "failed here", "%s", failed);
        if (c->rejected[0])
            ember_report_string(e, "passed_over", "passed over", "%s", c->rejected);
        char better[512];
        better_path(p, g, better, sizeof better);
        if (better[0])
            ember_report_string(e, "better", "to do better", "%s", better);
    }
}
