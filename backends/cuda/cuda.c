/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda.c — the CUDA backend's table: devices, memory,
 * launches. The primitives are the shared ones of backends/kernels/gpu.h;
 * this file only says how to reach an NVIDIA GPU through the driver API,
 * which cuda-probe.c opened with dlopen.
 *
 * A device works in the GPU's primary context, the one the CUDA runtime
 * and other libraries in the process share. Every call first makes it
 * current (one ember context may use the GPU from any thread, one thread at
 * a time) and refuses to go on once the device is lost: after a sticky
 * error such as an illegal address the driver refuses all further work in
 * the process, and calling it again would only produce confusing errors.
 *
 * Launches are asynchronous: a kernel that faults is reported by the next
 * call that waits for the GPU, usually a copy. The message names the last
 * kernel launched before it; EMBER_CUDA_SYNC=1 waits for every kernel, so
 * that the one at fault is named for certain. Every launch is checked
 * before it goes: the grid against the GPU's limits, the block against what
 * the kernel's registers allow, and the arguments against the kernel's own
 * (where the driver can say, CUDA 12.4 and later).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-impl.h"
#include "text-impl.h"

static ember_status cuda_launch(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                                size_t local, const struct ember_gpu_arg *args, int nargs);
static ember_status cuda_kernel_timed(struct cuda_device *d, enum ember_kernel kernel, const size_t groups[3],
                                      size_t local);

/* Errors after which the driver refuses every further call in the process. */
static bool cuda_sticky(CUresult r)
{
    return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_TIMEOUT || (r >= 714 && r <= 719) ||
           r == CUDA_ERROR_CONTAINED || r == CUDA_ERROR_TENSOR_MEMORY_LEAK || r == CUDA_ERROR_UNKNOWN;
}

static double mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

ember_status cuda_fail(struct cuda_device *d, CUresult r, const char *fmt, ...)
{
    char what[512];
    EMBER_FORMAT_ARGS(what, fmt);
    const struct ember_host *h = &d->gpu.host;
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {
        size_t free_bytes = 0, total = 0;
        if (d->probe->api.cuMemGetInfo_v2(&free_bytes, &total) == CUDA_SUCCESS)
            return h->fail(h->ctx, EMBER_ERR_NOMEM, "%s: %s: out of memory (%.1f MiB free of %.1f MiB)",
                           d->gpu.name, what, mib(free_bytes), mib(total));
        return h->fail(h->ctx, EMBER_ERR_NOMEM, "%s: %s: out of memory (the GPU has %.1f MiB in all)",
                       d->gpu.name, what, mib(g->memory));
    }
    if (!cuda_sticky(r))
        return h->fail(h->ctx, EMBER_ERR_DEVICE, "%s: %s failed: %s (%d)", d->gpu.name, what,
                       cuda_error_name(r), r);

    d->lost = true;
    snprintf(d->lost_reason, sizeof d->lost_reason, "%s in %.200s", cuda_error_name(r), what);
    /* a fault reported by a later call began in a kernel launched before it
     * (with EMBER_CUDA_SYNC, a kernel's own fault is reported as "kernel ...") */
    char where[256] = "";
    if (d->launched && strncmp(what, "kernel ", 7) != 0)
        snprintf(
            where, sizeof where,
            " (a kernel launched before it failed; the last one was %s: set EMBER_CUDA_SYNC=1 to wait for "
            "every kernel and name the one at fault)",
            ember_kernel_name(d->last_kernel));
    const char *advice = "";
    if (r == CUDA_ERROR_LAUNCH_TIMEOUT)
        advice =
            " The display's watchdog stopped a kernel that ran too long: this GPU drives a screen (as in "
            "a laptop). Train with smaller batches, or on a GPU without a display.";
    return h->fail(
        h->ctx, EMBER_ERR_DEVICE,
        "%s: %s failed: %s (%d)%s.%s %s is lost: after this error the driver refuses all further GPU "
        "work in this process, so restart the program to use it again",
        d->gpu.name, what, cuda_error_name(r), r, where, advice, d->gpu.name);
}

/* Makes the context current; fails at once on a lost device. */
static ember_status cuda_enter(struct cuda_device *d)
{
    if (d->lost)
        return d->gpu.host.fail(
            d->gpu.host.ctx, EMBER_ERR_DEVICE,
            "%s was lost after an earlier error (%s): restart the program to use it again", d->gpu.name,
            d->lost_reason);
    CUresult r = d->probe->api.cuCtxSetCurrent(d->context);
    return r == CUDA_SUCCESS ? EMBER_OK : cuda_fail(d, r, "cuCtxSetCurrent");
}

static CUdeviceptr device_ptr(ember_ptr p) { return (CUdeviceptr)(uintptr_t)p.buf + (CUdeviceptr)p.off * 4; }

/* ---------------------------------------------------------------- devices */

static int cuda_device_count(char *why, size_t why_len)
{
    const struct cuda_probe *p = cuda_probe_driver(); /* no driver: no NVRTC loaded to say so */
    if (!p->driver_ok)
        snprintf(why, why_len, "%s", p->why);
    return p->driver_ok ? cuda_probe()->gpu_count : 0;
}

/* `auto` passes over a GPU no kernel path reaches (cuda-path.c says why). */
static bool cuda_device_preferred(int index, char *why, size_t why_len)
{
    const struct cuda_probe *p = cuda_probe();
    if (index < 0 || index >= p->gpu_count)
        return false;
    const struct cuda_gpu *g = &p->gpus[index];
    if (cuda_choice_path(&g->choice) == CUDA_PATH_NONE)
        snprintf(why, why_len, "%s: %s", g->name, g->choice.reason);
    return cuda_choice_path(&g->choice) != CUDA_PATH_NONE;
}

static void cuda_device_close(void *dev)
{
    struct cuda_device *d = dev;
    if (!d)
        return;
    if (d->context && !d->lost) {
        d->probe->api.cuCtxSetCurrent(d->context);
        if (d->kernel_start)
            d->probe->api.cuEventDestroy_v2(d->kernel_start);
        if (d->kernel_end)
            d->probe->api.cuEventDestroy_v2(d->kernel_end);
        cuda_module_close(d);
    }
    if (d->context)
        d->probe->api.cuDevicePrimaryCtxRelease(d->device);
    free(d);
}

static ember_status cuda_device_open(const struct ember_host *host, int index, void **dev)
{
    if (!cuda_probe_driver()->driver_ok)
        return host->fail(host->ctx, EMBER_ERR_DEVICE, "cuda:%d cannot be used: %s", index,
                          cuda_probe_driver()->why);
    const struct cuda_probe *p = cuda_probe();
    if (index < 0 || index >= p->gpu_count)
        return host->fail(host->ctx, EMBER_ERR_DEVICE, "there is no cuda:%d: the driver reports %d GPU%s",
                          index, p->gpu_count, p->gpu_count == 1 ? "" : "s");
    const struct cuda_gpu *g = &p->gpus[index];
    if (cuda_choice_path(&g->choice) == CUDA_PATH_NONE)
        return host->fail(host->ctx, EMBER_ERR_DEVICE, "cuda:%d (%s) cannot be used: %s", index, g->name,
                          g->choice.reason);
    struct cuda_device *d = calloc(1, sizeof *d);
    if (!d)
        return host->fail(host->ctx, EMBER_ERR_NOMEM, "out of host memory opening cuda:%d", index);
    *d = (struct cuda_device){.gpu = {.host = *host, .launch = cuda_launch}, .probe = p, .index = index};
    snprintf(d->gpu.name, sizeof d->gpu.name, "cuda:%d", index);
    /* EMBER_CUDA_MAPPED=0 copies on an integrated GPU too, as on a discrete one (to compare) */
    const char *mapped = getenv("EMBER_CUDA_MAPPED");
    d->mapped = g->integrated && p->api.cuMemAllocManaged && !(mapped && strcmp(mapped, "0") == 0);
    ember_status st;
    CUresult r = p->api.cuDeviceGet(&d->device, index);
    if (r == CUDA_SUCCESS)
        r = p->api.cuDevicePrimaryCtxRetain(&d->context, d->device);
    if (r == CUDA_SUCCESS)
        r = p->api.cuCtxSetCurrent(d->context);
    if (r != CUDA_SUCCESS) {
        st = cuda_fail(d, r, "opening the primary context of %s", g->name);
        goto fail;
    }
    if ((st = cuda_module_open(d)) != EMBER_OK)
        goto fail;
    d->gpu.gemm_threads = (size_t)ember_kernel_gemm_threads(&d->gpu.tuning);
    /* grid-stride launches need no more groups than this to fill any GPU */
    d->gpu.max_groups = g->max_grid[0] < 65535 ? (size_t)g->max_grid[0] : 65535;
    *dev = d;
    return EMBER_OK;
fail:
    cuda_device_close(d);
    return st;
}

static void cuda_device_describe(void *dev, char *out, size_t len)
{
    struct cuda_device *d = dev;
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    snprintf(out, len, "%s %s (sm_%d, %.1f GiB%s, %d multiprocessor%s, driver CUDA %d.%d, kernels: %s)",
             d->gpu.name, g->name, g->cc, (double)g->memory / (1024.0 * 1024.0 * 1024.0),
             g->integrated ? (d->mapped ? " shared with the CPU, mapped" : " shared with the CPU") : "",
             g->multiprocessors, g->multiprocessors == 1 ? "" : "s", d->probe->driver_version / 1000,
             d->probe->driver_version % 1000 / 10, d->path_detail);
}

/* ----------------------------------------------------------------- memory */

static ember_status cuda_alloc(void *dev, size_t bytes, void **buf)
{
    struct cuda_device *d = dev;
    ember_status st = cuda_enter(d);
    if (st != EMBER_OK)
        return st;
    CUdeviceptr ptr = 0;
    CUresult r = d->mapped ? d->probe->api.cuMemAllocManaged(&ptr, bytes ? bytes : 4, CU_MEM_ATTACH_GLOBAL)
                           : d->probe->api.cuMemAlloc_v2(&ptr, bytes ? bytes : 4);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) /* not reported here: the core frees its cache and retries */
        return EMBER_ERR_NOMEM;
    if (r != CUDA_SUCCESS)
        return cuda_fail(d, r, "cuMemAlloc of %zu bytes", bytes);
    *buf = (void *)(uintptr_t)ptr;
    return EMBER_OK;
}

static void cuda_release(void *dev, void *buf)
{
    struct cuda_device *d = dev;
    if (buf && !d->lost && cuda_enter(d) == EMBER_OK)
        d->probe->api.cuMemFree_v2((CUdeviceptr)(uintptr_t)buf);
}

static ember_status cuda_memory_info(void *dev, size_t *free_bytes, size_t *total_bytes)
{
    struct cuda_device *d = dev;
    ember_status st = cuda_enter(d);
    if (st != EMBER_OK)
        return st;
    CUresult r = d->probe->api.cuMemGetInfo_v2(free_bytes, total_bytes);
    return r == CUDA_SUCCESS ? EMBER_OK : cuda_fail(d, r, "cuMemGetInfo");
}

/* Copies run on the default stream after every launch before them; on a
 * mapped GPU the CPU copies, after the GPU has finished every launch
 * (which is all a Nano's driver allows: its CPU may not touch unified
 * memory while a kernel runs). */
static ember_status mapped_copy(struct cuda_device *d, void *dst, const void *src, size_t bytes)
{
    CUresult r = d->probe->api.cuCtxSynchronize();
    if (r != CUDA_SUCCESS)
        return cuda_fail(d, r, "waiting for the GPU before a copy");
    memcpy(dst, src, bytes);
    return EMBER_OK;
}

static ember_status cuda_write(void *dev, ember_ptr dst, const void *src, size_t bytes)
{
    struct cuda_device *d = dev;
    ember_status st = cuda_enter(d);
    if (st != EMBER_OK || bytes == 0)
        return st;
    if (d->mapped)
        return mapped_copy(d, (void *)(uintptr_t)device_ptr(dst), src, bytes);
    CUresult r = d->probe->api.cuMemcpyHtoD_v2(device_ptr(dst), src, bytes);
    return r == CUDA_SUCCESS ? EMBER_OK : cuda_fail(d, r, "copying %zu bytes to the GPU", bytes);
}

static ember_status cuda_read(void *dev, void *dst, ember_ptr src, size_t bytes)
{
    struct cuda_device *d = dev;
    ember_status st = cuda_enter(d);
    if (st != EMBER_OK || bytes == 0)
        return st;
    if (d->mapped)
        return mapped_copy(d, dst, (const void *)(uintptr_t)device_ptr(src), bytes);
    CUresult r = d->probe->api.cuMemcpyDtoH_v2(dst, device_ptr(src), bytes);
    return r == CUDA_SUCCESS ? EMBER_OK : cuda_fail(d, r, "copying %zu bytes from the GPU", bytes);
}

static ember_status cuda_sync(void *dev)
{
    struct cuda_device *d = dev;
    ember_status st = cuda_enter(d);
    if (st != EMBER_OK)
        return st;
    CUresult r = d->probe->api.cuCtxSynchronize();
    return r == CUDA_SUCCESS ? EMBER_OK : cuda_fail(d, r, "waiting for the GPU");
}

/* --------------------------------------------------------------- launches */

/* A launch the GPU would refuse is a bug in a launch plan (gpu-*.c): say
 * which, before the driver answers with a bare CUDA_ERROR_INVALID_VALUE. */
static ember_status cuda_launch_check(struct cuda_device *d, enum ember_kernel kernel, const size_t groups[3],
                                      size_t local, const struct ember_gpu_arg *args, int nargs)
{
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    const struct cuda_kernel_info *info = &d->kernels[kernel];
    const char *name = ember_kernel_name(kernel);
    for (int i = 0; i < 3; i++)
        if (groups[i] < 1 || groups[i] > (size_t)g->max_grid[i])
            return d->gpu.host.fail(
                d->gpu.host.ctx, EMBER_ERR_UNSUPPORTED,
                "%s: a launch of kernel %s over %zux%zux%zu blocks passes this GPU's grid "
                "(%d x %d x %d)",
                d->gpu.name, name, groups[0], groups[1], groups[2], g->max_grid[0], g->max_grid[1],
                g->max_grid[2]);
    if (local < 1 || local > (size_t)info->max_threads)
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_UNSUPPORTED,
                                "%s: a launch of kernel %s in blocks of %zu threads: it runs at most %d",
                                d->gpu.name, name, local, info->max_threads);
    if (nargs > CUDA_MAX_ARGS)
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_UNSUPPORTED,
                                "%s: kernel %s takes %d arguments, over %d", d->gpu.name, name, nargs,
                                CUDA_MAX_ARGS);
    if (info->arg_count < 0)
        return EMBER_OK;
    bool same = info->arg_count == nargs;
    for (int i = 0; same && i < nargs; i++)
        same = info->arg_sizes[i] == (args[i].kind == EMBER_GPU_ARG_BUFFER ? sizeof(CUdeviceptr) : 4);
    if (!same)
        return d->gpu.host.fail(
            d->gpu.host.ctx, EMBER_ERR_UNSUPPORTED,
            "%s: kernel %s takes %d arguments, but its launch plan passes %d, or of other sizes: "
            "the kernel (backends/kernels/*.kc) and its launch (gpu-*.c) disagree",
            d->gpu.name, name, info->arg_count, nargs);
    return EMBER_OK;
}

static ember_status cuda_launch(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                                size_t local, const struct ember_gpu_arg *args, int nargs)
{
    struct cuda_device *d = (struct cuda_device *)gpu;
    ember_status st = cuda_enter(d);
    if (st == EMBER_OK)
        st = cuda_launch_check(d, kernel, groups, local, args, nargs);
    if (st != EMBER_OK)
        return st;
    /* cuLaunchKernel takes the address of each argument's value; a buffer's
     * value is its device address, which ember_ptr keeps in a pointer. The
     * list ends with a NULL: the driver reads only as many as the kernel
     * takes; the test double (tests/gpu/fakes) counts them by it. */
    void *params[CUDA_MAX_ARGS + 1];
    for (int i = 0; i < nargs; i++)
        params[i] = (void *)&args[i].value;
    params[nargs] = NULL;
    if (d->profiling && d->probe->api.cuEventRecord(d->kernel_start, NULL) != CUDA_SUCCESS)
        d->profiling = false; /* then the core's own clock is all the profile has */
    CUresult r =
        d->probe->api.cuLaunchKernel(d->functions[kernel], (unsigned)groups[0], (unsigned)groups[1],
                                     (unsigned)groups[2], (unsigned)local, 1, 1, 0, NULL, params, NULL);
    if (r != CUDA_SUCCESS) /* refused, or a fault of an earlier kernel reported now */
        return cuda_fail(d, r, "launching kernel %s on %zux%zux%zu blocks of %zu", ember_kernel_name(kernel),
                         groups[0], groups[1], groups[2], local);
    d->last_kernel = kernel;
    d->launched = true;
    if (d->probe->sync && (r = d->probe->api.cuCtxSynchronize()) != CUDA_SUCCESS)
        return cuda_fail(d, r, "kernel %s on %zux%zux%zu blocks of %zu", ember_kernel_name(kernel), groups[0],
                         groups[1], groups[2], local);
    return d->profiling ? cuda_kernel_timed(d, kernel, groups, local) : EMBER_OK;
}

/* Profiling: waits for the kernel and reports the GPU's time for it. */
static ember_status cuda_kernel_timed(struct cuda_device *d, enum ember_kernel kernel, const size_t groups[3],
                                      size_t local)
{
    const struct cuda_driver_api *api = &d->probe->api;
    float ms = 0.0f;
    CUresult r = api->cuEventRecord(d->kernel_end, NULL);
    if (r == CUDA_SUCCESS)
        r = api->cuEventSynchronize(d->kernel_end);
    if (r == CUDA_SUCCESS)
        r = api->cuEventElapsedTime(&ms, d->kernel_start, d->kernel_end);
    if (r != CUDA_SUCCESS)
        return cuda_fail(d, r, "kernel %s (timed by events)", ember_kernel_name(kernel));
    d->gpu.host.kernel_timed(d->gpu.host.ctx, ember_kernel_name(kernel), groups, local, (double)ms * 1e-3);
    return EMBER_OK;
}

/* FP32 lanes of one multiprocessor, by compute capability (NVIDIA's
 * programming guide, "arithmetic instructions"): two FLOPs each a cycle */
static int cuda_fp32_lanes(int cc)
{
    if (cc < 50)
        return 192; /* Kepler */
    if (cc == 60 || (cc >= 70 && cc <= 80))
        return 64; /* P100, Volta, Turing, A100 */
    return 128;    /* Maxwell, the other Pascals, GA10x, Ada, Hopper, Blackwell */
}

/* The GPU's peak from its clocks and units: the FP32 FLOPs of every lane
 * each cycle, and the memory's two transfers a clock over its bus. */
static void cuda_peak(void *dev, double *gflops, double *gbps)
{
    struct cuda_device *d = dev;
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    *gflops = 2.0 * g->multiprocessors * cuda_fp32_lanes(g->cc) * (g->clock_khz * 1e-6);
    *gbps = 2.0 * (g->memory_clock_khz * 1e3) * (g->bus_bits / 8.0) * 1e-9;
}

static ember_status cuda_set_profiling(void *dev, bool on)
{
    struct cuda_device *d = dev;
    ember_status st = cuda_enter(d);
    if (st != EMBER_OK)
        return st;
    const struct cuda_driver_api *api = &d->probe->api;
    CUresult r = CUDA_SUCCESS;
    if (on && !d->kernel_start && (r = api->cuEventCreate(&d->kernel_start, 0)) != CUDA_SUCCESS)
        d->kernel_start = NULL;
    if (on && r == CUDA_SUCCESS && !d->kernel_end &&
        (r = api->cuEventCreate(&d->kernel_end, 0)) != CUDA_SUCCESS)
        d->kernel_end = NULL;
    if (r != CUDA_SUCCESS)
        return cuda_fail(d, r, "creating the events that time kernels");
    d->profiling = on;
    return EMBER_OK;
}

const struct ember_backend_ops ember_cuda_backend = {
    .name = "cuda",
    .device_count = cuda_device_count,
    .device_preferred = cuda_device_preferred,
    .device_open = cuda_device_open,
    .device_close = cuda_device_close,
    .device_describe = cuda_device_describe,
    .diagnose = cuda_diagnose,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .memory_info = cuda_memory_info,
    .write = cuda_write,
    .read = cuda_read,
    .set_profiling = cuda_set_profiling,
    .peak = cuda_peak,
    .sync = cuda_sync,
    EMBER_GPU_PRIMITIVES /* the shared launch plans of backends/kernels */
};
