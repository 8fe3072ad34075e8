/* SPDX-License-Identifier: MIT */
/*
 * backends/opencl/opencl.c — the OpenCL backend's table: devices, memory,
 * launches. The primitives are in the files beside this one, the kernels
 * in backends/kernels. README.md here tells the whole story.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl-impl.h"
#include "report-impl.h"

static ember_status opencl_launch(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                                  size_t local, const struct ember_gpu_arg *args, int nargs);

/* ---------------------------------------------------------------- devices */

static int opencl_device_count(char *why, size_t why_len)
{
    const struct opencl_runtime *rt = opencl_runtime_get();
    if (!rt)
        snprintf(why, why_len, "%s", opencl_runtime_why());
    return rt ? rt->count : 0;
}

/* `auto` passes over CPU devices (PoCL, Intel's CPU runtime): ember's own
 * cpu backend, with OpenBLAS, is faster on the same cores. */
static bool opencl_device_preferred(int index, char *why, size_t why_len)
{
    const struct opencl_runtime *rt = opencl_runtime_get();
    bool cpu = rt && index >= 0 && index < rt->count && (rt->devices[index].type & CL_DEVICE_TYPE_CPU);
    if (cpu)
        snprintf(why, why_len, "a CPU device; ember's cpu backend is faster there");
    return !cpu;
}

/* conv_direct (backends/kernels/conv.kc) on a GPU: each work-item sums
 * over channels and taps for its few outputs, and neighbouring work-items
 * read neighbouring addresses. On an H200 through NVIDIA's OpenCL driver
 * that trained ResNet-8 and VGG-8 at 1.7 to 1.8 times im2col's images/s at
 * batch 256 and 0.99 to 1.16 times at batch 64 (docs/benchmarks.md,
 * "OpenCL on an NVIDIA GPU"). A CPU device (PoCL) runs a group's work-items one after another,
 * and there the same sums were slower than im2col's products (68 images/s
 * on ResNet-8 against 78): core/conv-algo.c's table leaves it im2col. */
static bool opencl_conv_direct_fast(void *dev, const struct ember_conv_geom *g)
{
    (void)g;
    const struct opencl_device *d = dev;
    return !(d->info->type & CL_DEVICE_TYPE_CPU);
}

static size_t smaller(size_t a, size_t b) { return a < b ? a : b; }

/* Tuning from what the device reports: the largest work-group (up to 256,
 * a power of two) its limits allow, and the sgemm tile that fits in it and
 * in its local memory. Unknown limits (0) count as the smallest. */
static ember_status opencl_tuning_pick(struct opencl_device *d)
{
    const struct opencl_device_info *info = d->info;
    size_t limit = smaller(info->max_work_group, info->max_item_size[0]);
    struct ember_kernel_tuning t = ember_kernel_tuning_default(); /* 64 work-items, 32x32 tiles */
    while (t.wg_size * 2 <= 256 && (size_t)t.wg_size * 2 <= limit)
        t.wg_size *= 2;
    while (t.wg_size > 1 && (size_t)t.wg_size > limit)
        t.wg_size /= 2;
    /* 64x64 tiles, 4x4 per work-item: 256 work-items and 8 KiB of local memory */
    struct ember_kernel_tuning big = t;
    big.tile_m = big.tile_n = 64;
    if ((size_t)ember_kernel_gemm_threads(&big) <= limit &&
        ember_kernel_gemm_local_bytes(&big) * 2 <= info->local_mem)
        t = big;
    /* a device below 64 work-items per group: 16x16 tiles, 16 work-items */
    if ((size_t)ember_kernel_gemm_threads(&t) > limit)
        t.tile_m = t.tile_n = 16;
    /* for experiments, and for testing on one device the tuning of another */
    const char *override = getenv("EMBER_OPENCL_TUNING");
    /* A CPU device (PoCL) runs a group's work-items one after another, its
     * compiler vectorising each one's code: sgemm_wide, sgemm_direct and
     * reduce_rows then give every work-item runs of 8 neighbouring columns
     * (or values of k), which it loads as vectors, where a GPU wants
     * neighbouring work-items on neighbouring addresses instead; the launch
     * plans read run > 1 as such a device (kernels.h). Not under an
     * override, which stands for another device: a GPU's tuning then runs
     * the GPU paths here (the small and odd test_parity runs). */
    if ((info->type & CL_DEVICE_TYPE_CPU) && !(override && *override))
        t.wide_cols = t.run = 8;
    char why[256];
    if (override && *override && !ember_kernel_tuning_parse(override, &t, why, sizeof why))
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_ARG, "EMBER_OPENCL_TUNING=%s: %s", override, why);
    d->gpu.tuning = t;
    return EMBER_OK;
}

static void opencl_device_close(void *dev)
{
    struct opencl_device *d = dev;
    if (!d)
        return;
    if (d->queue)
        d->cl->clFinish(d->queue);
    opencl_program_close(d);
    if (d->queue)
        d->cl->clReleaseCommandQueue(d->queue);
    if (d->context)
        d->cl->clReleaseContext(d->context);
    free(d);
}

static ember_status opencl_device_open(const struct ember_host *host, int index, void **dev)
{
    const struct opencl_runtime *rt = opencl_runtime_get();
    if (!rt || index < 0 || index >= rt->count)
        return host->fail(host->ctx, EMBER_ERR_DEVICE, "there is no opencl:%d: %s", index,
                          rt ? "ember_devices_report lists the devices there are" : opencl_runtime_why());
    const struct opencl_device_info *info = &rt->devices[index];
    if (!info->available || !info->compiler_available)
        return host->fail(host->ctx, EMBER_ERR_DEVICE, "opencl:%d (%s) %s", index, info->name,
                          !info->available
                              ? "is not available (the driver reports it busy or offline)"
                              : "has no OpenCL C compiler, which ember needs to build its kernels");
    struct opencl_device *d = calloc(1, sizeof *d);
    if (!d)
        return host->fail(host->ctx, EMBER_ERR_NOMEM, "out of host memory opening opencl:%d", index);
    *d = (struct opencl_device){
        .gpu = {.host = *host, .launch = opencl_launch}, .index = index, .info = info, .cl = &rt->cl};
    snprintf(d->gpu.name, sizeof d->gpu.name, "opencl:%d", index);
    if (rt->notes[0])
        host->log(host->ctx, EMBER_LOG_INFO, "opencl: %s", rt->notes);

    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)info->platform, 0};
    d->context = d->cl->clCreateContext(props, 1, &info->id, NULL, NULL, &err);
    ember_status st = EMBER_OK;
    if (!d->context) {
        st = opencl_fail(d, err, "creating a context on %s", info->name);
        goto fail;
    }
    /* in order: every launch runs after the one before; no profiling
     * until the core asks (opencl_set_profiling) */
    d->queue = d->cl->clCreateCommandQueue(d->context, info->id, 0, &err);
    if (!d->queue) {
        st = opencl_fail(d, err, "creating a command queue on %s", info->name);
        goto fail;
    }
    if ((st = opencl_tuning_pick(d)) != EMBER_OK || (st = opencl_program_open(d)) != EMBER_OK)
        goto fail;
    /* Grid-stride launches give each work-item a single element wherever
     * 65535 groups allow: a CPU device (PoCL) runs a group's work-items one
     * after another, and a work-item striding over many elements would then
     * touch a new cache line at each one (14 times slower here). */
    d->gpu.max_groups = 65535;
    *dev = d;
    return EMBER_OK;
fail:
    opencl_device_close(d);
    return st;
}

static void opencl_device_describe(void *dev, char *out, size_t len)
{
    struct opencl_device *d = dev;
    const struct opencl_device_info *info = d->info;
    /* the platform's version up to its fourth word: "OpenCL 3.0 PoCL 3.1" */
    char version[64] = "";
    const char *p = info->platform_version;
    for (int words = 0; *p && words < 4; words++) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " +,");
        if (n == 0)
            break;
        size_t used = strlen(version);
        snprintf(version + used, sizeof version - used, "%s%.*s", used ? " " : "", (int)n, p);
        p += strcspn(p, " ");
    }
    const char *kind = info->type & CL_DEVICE_TYPE_GPU   ? ""
                       : info->type & CL_DEVICE_TYPE_CPU ? "CPU, "
                                                         : "accelerator, ";
    snprintf(out, len, "opencl:%d %s (%s, %s, %s%u compute unit%s, %.1f GiB)", d->index, info->name,
             info->platform_name, version, kind, info->compute_units, info->compute_units == 1 ? "" : "s",
             (double)info->global_mem / (1024.0 * 1024.0 * 1024.0));
}

static const char *opencl_type_name(cl_device_type type)
{
    return type & CL_DEVICE_TYPE_GPU ? "GPU" : type & CL_DEVICE_TYPE_CPU ? "CPU" : "accelerator";
}

static void opencl_diagnose(struct ember_report *r, int threads)
{
    (void)threads;
    const struct opencl_runtime *rt = opencl_runtime_get();
    ember_report_bool(r, "available", NULL, rt != NULL);
    if (!rt) {
        ember_report_string(r, "reason", "not available", "%s", opencl_runtime_why());
        return;
    }
    ember_report_string(r, "library", "library", "%s", rt->library);
    if (rt->notes[0])
        ember_report_string(r, "notes", "notes", "%s", rt->notes);
    struct ember_report *list = ember_report_array(r, "devices", "devices");
    for (int i = 0; i < rt->count; i++) {
        const struct opencl_device_info *info = &rt->devices[i];
        struct ember_report *d = ember_report_object(list, NULL, NULL);
        ember_report_string(d, "summary", NULL, "opencl:%d %s", i, info->name);
        ember_report_int(d, "index", NULL, i);
        ember_report_string(d, "device", NULL, "%s", info->name);
        ember_report_string(d, "type", "type", "%s", opencl_type_name(info->type));
        ember_report_string(d, "vendor", "vendor", "%s", info->vendor);
        ember_report_string(d, "platform", "platform", "%s (%s)", info->platform_name,
                            info->platform_version);
        ember_report_string(d, "version", "version", "%s", info->version);
        ember_report_string(d, "driver_version", "driver", "%s", info->driver_version);
        ember_report_int(d, "compute_units", "compute units", info->compute_units);
        ember_report_int(d, "memory_bytes", NULL, (int64_t)info->global_mem);
        ember_report_string(d, "memory", "memory", "%.1f GiB",
                            (double)info->global_mem / (1024.0 * 1024.0 * 1024.0));
        ember_report_int(d, "max_work_group", "largest work-group", (int64_t)info->max_work_group);
        ember_report_int(d, "local_memory_bytes", "local memory per group (bytes)", (int64_t)info->local_mem);
    }
}

/* ----------------------------------------------------------------- memory */

static ember_status opencl_alloc(void *dev, size_t bytes, void **buf)
{
    struct opencl_device *d = dev;
    if (bytes > d->info->max_alloc && d->info->max_alloc)
        return EMBER_ERR_NOMEM;
    cl_int err;
    cl_mem mem = d->cl->clCreateBuffer(d->context, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
    if (mem) {
        *buf = mem;
        return EMBER_OK;
    }
    /* out of memory is not reported here: the core frees its cache and retries */
    if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
        err == CL_OUT_OF_HOST_MEMORY || err == CL_INVALID_BUFFER_SIZE)
        return EMBER_ERR_NOMEM;
    return opencl_fail(d, err, "clCreateBuffer of %zu bytes", bytes);
}

static void opencl_release(void *dev, void *buf)
{
    struct opencl_device *d = dev;
    if (buf)
        d->cl->clReleaseMemObject(buf);
}

/* Writes block: the caller may reuse `src` as soon as this returns. */
static ember_status opencl_write(void *dev, ember_ptr dst, const void *src, size_t bytes)
{
    struct opencl_device *d = dev;
    if (bytes == 0) /* OpenCL calls a copy of nothing invalid */
        return EMBER_OK;
    cl_int err =
        d->cl->clEnqueueWriteBuffer(d->queue, dst.buf, CL_TRUE, dst.off * 4, bytes, src, 0, NULL, NULL);
    return err == CL_SUCCESS
               ? EMBER_OK
               : opencl_fail(d, err, "writing %zu bytes to the device (clEnqueueWriteBuffer)", bytes);
}

static ember_status opencl_read(void *dev, void *dst, ember_ptr src, size_t bytes)
{
    struct opencl_device *d = dev;
    if (bytes == 0)
        return EMBER_OK;
    cl_int err =
        d->cl->clEnqueueReadBuffer(d->queue, src.buf, CL_TRUE, src.off * 4, bytes, dst, 0, NULL, NULL);
    return err == CL_SUCCESS
               ? EMBER_OK
               : opencl_fail(d, err, "reading %zu bytes from the device (clEnqueueReadBuffer)", bytes);
}

static ember_status opencl_sync(void *dev)
{
    struct opencl_device *d = dev;
    cl_int err = d->cl->clFinish(d->queue);
    return err == CL_SUCCESS ? EMBER_OK : opencl_fail(d, err, "waiting for the device (clFinish)");
}

/* --------------------------------------------------------------- launches */

/* The argument's size and address, as clSetKernelArg takes them. */
static size_t opencl_arg_bytes(const struct ember_gpu_arg *arg)
{
    switch (arg->kind) {
    case EMBER_GPU_ARG_INT: return sizeof(cl_int);
    case EMBER_GPU_ARG_FLOAT: return sizeof(cl_float);
    case EMBER_GPU_ARG_BUFFER: return sizeof(cl_mem);
    }
    return 0;
}

static ember_status opencl_kernel_timed(struct opencl_device *d, enum ember_kernel kernel,
                                        const size_t groups[3], size_t local, cl_event event);

static ember_status opencl_launch(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                                  size_t local, const struct ember_gpu_arg *args, int nargs)
{
    struct opencl_device *d = (struct opencl_device *)gpu;
    const struct opencl_api *cl = d->cl;
    cl_kernel k = d->kernels[kernel];
    for (int i = 0; i < nargs; i++) {
        cl_int err = cl->clSetKernelArg(k, (cl_uint)i, opencl_arg_bytes(&args[i]), &args[i].value);
        if (err != CL_SUCCESS)
            return opencl_fail(d, err, "setting argument %d of kernel %s", i, ember_kernel_name(kernel));
    }
    size_t global[3] = {groups[0] * local, groups[1], groups[2]}, local3[3] = {local, 1, 1};
    cl_event event = NULL;
    cl_int err = cl->clEnqueueNDRangeKernel(d->queue, k, 3, NULL, global, local3, 0, NULL,
                                            d->profiling ? &event : NULL);
    if (err != CL_SUCCESS)
        return opencl_fail(d, err, "launching kernel %s on %zux%zux%zu work-groups of %zu",
                           ember_kernel_name(kernel), groups[0], groups[1], groups[2], local);
    return event ? opencl_kernel_timed(d, kernel, groups, local, event) : EMBER_OK;
}

/* Profiling: the kernel's start and end by the device's clock, in ns. */
static ember_status opencl_kernel_timed(struct opencl_device *d, enum ember_kernel kernel,
                                        const size_t groups[3], size_t local, cl_event event)
{
    const struct opencl_api *cl = d->cl;
    cl_ulong start = 0, end = 0;
    cl_int err = cl->clWaitForEvents(1, &event);
    if (err == CL_SUCCESS)
        err = cl->clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    if (err == CL_SUCCESS)
        err = cl->clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL);
    cl->clReleaseEvent(event);
    if (err != CL_SUCCESS)
        return opencl_fail(d, err, "timing kernel %s", ember_kernel_name(kernel));
    d->gpu.host.kernel_timed(d->gpu.host.ctx, ember_kernel_name(kernel), groups, local,
                             end > start ? (double)(end - start) * 1e-9 : 0.0);
    return EMBER_OK;
}

/* A queue that times its commands replaces the one that does not, and
 * back: OpenCL sets profiling when a queue is made. */
static ember_status opencl_set_profiling(void *dev, bool on)
{
    struct opencl_device *d = dev;
    if (d->profiling == on)
        return EMBER_OK;
    cl_int err = d->cl->clFinish(d->queue);
    if (err != CL_SUCCESS)
        return opencl_fail(d, err, "waiting for the queue before %s profiling", on ? "starting" : "ending");
    cl_command_queue queue =
        d->cl->clCreateCommandQueue(d->context, d->info->id, on ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (!queue)
        return opencl_fail(d, err, "creating a command queue %s profiling", on ? "with" : "without");
    d->cl->clReleaseCommandQueue(d->queue);
    d->queue = queue;
    d->profiling = on;
    return EMBER_OK;
}

const struct ember_backend_ops ember_opencl_backend = {
    .name = "opencl",
    .device_count = opencl_device_count,
    .device_preferred = opencl_device_preferred,
    .auto_passes_over = opencl_auto_skip,
    .device_open = opencl_device_open,
    .device_close = opencl_device_close,
    .device_describe = opencl_device_describe,
    .diagnose = opencl_diagnose,
    .alloc = opencl_alloc,
    .release = opencl_release,
    .write = opencl_write,
    .read = opencl_read,
    .sync = opencl_sync,
    .set_profiling = opencl_set_profiling,
    .conv_direct_fast = opencl_conv_direct_fast,
    EMBER_GPU_PRIMITIVES /* the shared launch plans of backends/kernels */
};
