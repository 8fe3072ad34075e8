/* SPDX-License-Identifier: MIT */
/*
 * backends/opencl/opencl-program.c — the kernels' program for one device:
 * loaded from the on-disk cache when a sound entry is there, built from
 * the shared sources (backends/kernels) otherwise, then one cl_kernel per
 * entry of EMBER_KERNEL_LIST.
 *
 * Build options: -cl-std=CL1.2, the tuning values as -D (opencl.c picks
 * them from the device's limits), and nothing that relaxes float math, so
 * results stay within the parity tolerances of the CPU's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opencl-impl.h"

static double opencl_clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void opencl_program_release(struct opencl_device *d)
{
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        if (d->kernels[k])
            d->cl->clReleaseKernel(d->kernels[k]);
        d->kernels[k] = NULL;
    }
    if (d->program)
        d->cl->clReleaseProgram(d->program);
    d->program = NULL;
}

void opencl_program_close(struct opencl_device *d) { opencl_program_release(d); }

/* The build log, as much of it as fits. */
static void opencl_program_log(struct opencl_device *d, cl_program program, char *out, size_t len)
{
    size_t size = 0;
    out[0] = '\0';
    if (d->cl->clGetProgramBuildInfo(program, d->info->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) !=
        CL_SUCCESS)
        return;
    char *log = malloc(size + 1);
    if (log && d->cl->clGetProgramBuildInfo(program, d->info->id, CL_PROGRAM_BUILD_LOG, size, log, NULL) ==
                   CL_SUCCESS) {
        log[size] = '\0';
        snprintf(out, len, "%s", log);
        if (strlen(log) >= len && len > 40)
            snprintf(out + len - 40, 40, "\n... (the log goes on)");
    }
    free(log);
}

/* Makes every kernel and checks each can run work-groups of the size it
 * is launched with; false with the reason in `why`, and *too_big set when
 * that size is the reason. */
static bool opencl_program_kernels(struct opencl_device *d, char *why, size_t why_len, bool *too_big)
{
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        cl_int err;
        d->kernels[k] = d->cl->clCreateKernel(d->program, ember_kernel_name(k), &err);
        if (!d->kernels[k]) {
            snprintf(why, why_len, "clCreateKernel(%s) failed: %s", ember_kernel_name(k),
                     opencl_error_name(err));
            return false;
        }
        size_t most = 0;
        size_t need = k == EMBER_KERNEL_sgemm ? d->gpu.gemm_threads : (size_t)d->gpu.tuning.wg_size;
        err = d->cl->clGetKernelWorkGroupInfo(d->kernels[k], d->info->id, CL_KERNEL_WORK_GROUP_SIZE,
                                              sizeof most, &most, NULL);
        if (err == CL_SUCCESS && most < need) {
            *too_big = true;
            snprintf(why, why_len, "kernel %s runs at most %zu work-items per group here, not %zu",
                     ember_kernel_name(k), most, need);
            return false;
        }
    }
    return true;
}

/* The first device binary of the program, malloc'd. */
static unsigned char *opencl_program_binary(struct opencl_device *d, size_t *size)
{
    size_t sizes[1] = {0};
    if (d->cl->clGetProgramInfo(d->program, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL) !=
            CL_SUCCESS ||
        sizes[0] == 0)
        return NULL;
    unsigned char *binary = malloc(sizes[0]);
    unsigned char *binaries[1] = {binary};
    if (!binary || d->cl->clGetProgramInfo(d->program, CL_PROGRAM_BINARIES, sizeof binaries, binaries,
                                           NULL) != CL_SUCCESS) {
        free(binary);
        return NULL;
    }
    *size = sizes[0];
    return binary;
}

/* PoCL's own compiler finishes each kernel only at its first launch, for
 * the work-group size it is launched with, and keeps that in a cache of
 * its own; a run whose first steps find that cache empty spends seconds
 * in them (2.4 s of simplecnn's first 20 steps on two cores), whatever
 * ember's cache held. Said at info level, so that --verbose tells the
 * whole truth about the cache. */
#define OPENCL_POCL_NOTE                                                                                     \
    "; PoCL then compiles each kernel once more at its first launch, unless its own cache "                  \
    "($POCL_CACHE_DIR, else ~/.cache/pocl) has it, so the first steps of such a run are slow"

static bool opencl_compiles_at_launch(const struct opencl_device *d)
{
    return strstr(d->info->platform_name, "Portable Computing Language") != NULL;
}

/* Tries the cache entry; true when it gave a working program. */
static bool opencl_program_from_cache(struct opencl_device *d, const struct ember_gpu_cache_key *key)
{
    size_t size = 0;
    unsigned char *binary = ember_gpu_cache_load(&d->gpu, "opencl", key, &size);
    if (!binary)
        return false;
    cl_int err, status = CL_SUCCESS;
    const unsigned char *binaries[1] = {binary};
    char why[256] = "";
    d->program =
        d->cl->clCreateProgramWithBinary(d->context, 1, &d->info->id, &size, binaries, &status, &err);
    if (!d->program)
        snprintf(why, sizeof why, "clCreateProgramWithBinary: %s",
                 opencl_error_name(err != CL_SUCCESS ? err : status));
    else if ((err = d->cl->clBuildProgram(d->program, 1, &d->info->id, NULL, NULL, NULL)) != CL_SUCCESS)
        snprintf(why, sizeof why, "clBuildProgram: %s", opencl_error_name(err));
    else
        opencl_program_kernels(d, why, sizeof why, &(bool){false});
    ember_gpu_cache_loaded("opencl", key); /* the driver answered, and we are alive */
    free(binary);
    if (why[0]) {
        d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO,
                        "%s: ignoring the cached kernels (%s); rebuilding them", d->gpu.name, why);
        opencl_program_release(d);
        return false;
    }
    d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: the driver took the cached kernels%s", d->gpu.name,
                    opencl_compiles_at_launch(d) ? OPENCL_POCL_NOTE : "");
    return true;
}

static ember_status opencl_program_compile(struct opencl_device *d, const char *source, const char *options,
                                           const struct ember_gpu_cache_key *key, bool *too_big)
{
    double start = opencl_clock_seconds();
    cl_int err;
    size_t length = strlen(source);
    d->program = d->cl->clCreateProgramWithSource(d->context, 1, &source, &length, &err);
    if (!d->program)
        return opencl_fail(d, err, "clCreateProgramWithSource");
    err = d->cl->clBuildProgram(d->program, 1, &d->info->id, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char *log = malloc(3500);
        if (log)
            opencl_program_log(d, d->program, log, 3500);
        ember_status st = d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE,
                                           "%s: building the kernels for %s failed (%s, options %s):\n%s",
                                           d->gpu.name, d->info->name, opencl_error_name(err), options,
                                           log ? log : "(no memory for the build log)");
        free(log);
        return st;
    }
    char why[256];
    if (!opencl_program_kernels(d, why, sizeof why, too_big))
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE, "%s: %s", d->gpu.name, why);
    d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: kernels built from source in %.2f s%s", d->gpu.name,
                    opencl_clock_seconds() - start, opencl_compiles_at_launch(d) ? OPENCL_POCL_NOTE : "");
    size_t size = 0;
    unsigned char *binary = opencl_program_binary(d, &size);
    if (binary)
        ember_gpu_cache_store(&d->gpu, "opencl", key, binary, size);
    else
        d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: the driver gives no program binary to cache",
                        d->gpu.name);
    free(binary);
    return EMBER_OK;
}

static ember_status opencl_program_from_source(struct opencl_device *d, const char *source,
                                               const char *options, const struct ember_gpu_cache_key *key,
                                               bool *too_big)
{
    /* the device and its driver's version: "OpenCL 3.0 PoCL 3.1+debian", without PoCL's build options */
    const char *version = d->info->platform_version, *gap = strstr(version, "  ");
    size_t shown = strcspn(version, ",(");
    if (gap && (size_t)(gap - version) < shown) /* "3.1+debian  Linux, None+Asserts, ..." */
        shown = (size_t)(gap - version);
    char what[400];
    snprintf(what, sizeof what, "%s, %.*s", d->info->name, (int)shown, version);
    ember_gpu_compile_begin(&d->gpu, "opencl", what, NULL);
    ember_status st = opencl_program_compile(d, source, options, key, too_big);
    ember_gpu_compile_end(&d->gpu);
    return st;
}

/* One attempt with the current tuning. */
static ember_status opencl_program_try(struct opencl_device *d, const char *source, bool *too_big)
{
    char defines[256], options[320], why[128];
    if (!ember_kernel_tuning_check(&d->gpu.tuning, why, sizeof why))
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE, "%s: bad tuning: %s", d->gpu.name, why);
    ember_kernel_defines(&d->gpu.tuning, defines, sizeof defines);
    snprintf(options, sizeof options, "-cl-std=CL1.2 %s", defines);
    d->gpu.gemm_threads = (size_t)ember_kernel_gemm_threads(&d->gpu.tuning);
    d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO,
                    "%s: work-groups of %d, sgemm tiles %dx%dx%d with %dx%d per work-item (the device allows "
                    "%zu work-items and %llu KiB of local memory per group)",
                    d->gpu.name, d->gpu.tuning.wg_size, d->gpu.tuning.tile_m, d->gpu.tuning.tile_n,
                    d->gpu.tuning.tile_k, d->gpu.tuning.reg_m, d->gpu.tuning.reg_n, d->info->max_work_group,
                    (unsigned long long)(d->info->local_mem / 1024));
    /* everything the binary depends on: the device, its driver, the source, the options */
    const struct opencl_device_info *i = d->info;
    const char *parts[] = {i->name,          i->vendor,           i->driver_version, i->version,
                           i->platform_name, i->platform_version, options,           source};
    struct ember_gpu_cache_key key;
    ember_gpu_cache_key_make(parts, (int)(sizeof parts / sizeof parts[0]), &key);
    if (opencl_program_from_cache(d, &key))
        return EMBER_OK;
    return opencl_program_from_source(d, source, options, &key, too_big);
}

ember_status opencl_program_open(struct opencl_device *d)
{
    char why[512];
    char *source = ember_kernel_program(EMBER_DIALECT_OPENCL, EMBER_KERNEL_ALL_FAMILIES, why, sizeof why);
    if (!source)
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE, "%s: %s", d->gpu.name, why);
    bool too_big = false;
    ember_status st = opencl_program_try(d, source, &too_big);
    /* A kernel that cannot run groups as large as the device promised
     * (registers run out first on some GPUs): once more, with the small
     * defaults that suit any OpenCL device. */
    struct ember_kernel_tuning small = ember_kernel_tuning_default();
    if (st != EMBER_OK && too_big && memcmp(&d->gpu.tuning, &small, sizeof small) != 0) {
        d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO,
                        "%s: the kernels cannot run work-groups that large here; trying the smallest tuning",
                        d->gpu.name);
        opencl_program_release(d);
        d->gpu.tuning = small;
        st = opencl_program_try(d, source, &too_big);
    }
    free(source);
    return st;
}
