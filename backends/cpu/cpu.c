/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu.c — the CPU backend's table: one device, host memory,
 * primitives from the files beside this one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu-impl.h"
#include "platform.h"
#include "report-impl.h"

/* buffers are aligned for the widest vector loads (AVX-512) */
#define CPU_ALIGN 64

static int cpu_device_count(char *why, size_t why_len)
{
    (void)why;
    (void)why_len;
    return 1;
}

static int online_cores(void) { return ember_cpu_count(); }

/* OpenBLAS where its buffers fit the address-space limit, else the plain
 * sgemm, said once at info level (`ember --verbose`, and the device's name) */
static void cpu_choose_blas(struct cpu_device *d)
{
    char why[256] = "";
    d->blas = cpu_blas_fits(d->threads, why, sizeof why);
    if (!d->blas && strcmp(why, "built without OpenBLAS") != 0)
        d->host.log(d->host.ctx, EMBER_LOG_INFO, "cpu: %s; using the built-in sgemm", why);
}

static ember_status cpu_device_open(const struct ember_host *host, int index, void **dev)
{
    if (index != 0)
        return host->fail(host->ctx, EMBER_ERR_DEVICE, "there is one cpu device, cpu:0");
    struct cpu_device *d = calloc(1, sizeof *d);
    if (!d)
        return host->fail(host->ctx, EMBER_ERR_NOMEM, "out of host memory opening the cpu device");
    d->host = *host;
    d->threads = host->threads > 0 ? host->threads : online_cores();
    d->pool = cpu_pool_new(d->threads);
    if (!d->pool) {
        free(d);
        return host->fail(host->ctx, EMBER_ERR_NOMEM, "could not start %d cpu threads", host->threads);
    }
    cpu_choose_blas(d);
    *dev = d;
    return EMBER_OK;
}

static void cpu_device_close(void *dev)
{
    struct cpu_device *d = dev;
    if (!d)
        return;
    cpu_pool_free(d->pool);
    ember_aligned_free(d->scratch);
    free(d->taps);
    free(d);
}

/* A new pool of the new size; the old one's workers are joined first, so
 * the process never holds both. */
static ember_status cpu_set_threads(void *dev, int threads)
{
    struct cpu_device *d = dev;
    int want = threads > 0 ? threads : online_cores();
    if (want == d->threads)
        return EMBER_OK;
    cpu_pool_free(d->pool);
    d->pool = cpu_pool_new(want);
    if (!d->pool) {
        d->pool = cpu_pool_new(1); /* one thread needs no workers: this cannot fail for want of threads */
        d->threads = 1;
        return d->host.fail(d->host.ctx, EMBER_ERR_NOMEM, "could not start %d cpu threads; running on 1",
                            want);
    }
    d->threads = want;
    cpu_choose_blas(d);
    return EMBER_OK;
}

static void cpu_device_describe(void *dev, char *out, size_t len)
{
    struct cpu_device *d = dev;
    snprintf(out, len, "cpu (%d thread%s, %s)", d->threads, d->threads == 1 ? "" : "s", cpu_blas_name(d));
}

static bool cpu_matmul_precision_matters(void *dev, ember_matmul_precision precision)
{
    (void)dev;
    return cpu_amx() || (precision == EMBER_MATMUL_MEDIUM && cpu_quant_i8());
}

static void cpu_diagnose(struct ember_report *r, int threads)
{
    int cores = online_cores();
    ember_report_int(r, "cores", "cores", cores);
    ember_report_int(r, "threads", "threads used", threads > 0 ? threads : cores);
    ember_report_string(r, "blas", "matrix products", "%s", cpu_blas_library());
    ember_report_string(r, "amx", "EMBER_MATMUL_HIGH, MEDIUM", "%s",
                        cpu_amx() ? "bfloat16 x 3, x 1 on the AMX tile unit"
                                  : "no AMX: float32 as at highest");
    ember_report_string(r, "quant_i8", "EMBER_MATMUL_MEDIUM, quantised", "%s",
                        cpu_quant_i8() ? "8-bit activations, integer products"
                                       : "none: float activations as at highest");
}

static ember_status cpu_alloc(void *dev, size_t bytes, void **buf)
{
    (void)dev;
    size_t rounded = (bytes + CPU_ALIGN - 1) / CPU_ALIGN * CPU_ALIGN;
    *buf = ember_aligned_alloc(CPU_ALIGN, rounded ? rounded : CPU_ALIGN);
    return *buf ? EMBER_OK : EMBER_ERR_NOMEM;
}

static void cpu_release(void *dev, void *buf)
{
    (void)dev;
    ember_aligned_free(buf);
}

static ember_status cpu_write(void *dev, ember_ptr dst, const void *src, size_t bytes)
{
    (void)dev;
    memcpy(cpu_f32(dst), src, bytes);
    return EMBER_OK;
}

static ember_status cpu_read(void *dev, void *dst, ember_ptr src, size_t bytes)
{
    (void)dev;
    memcpy(dst, cpu_f32(src), bytes);
    return EMBER_OK;
}

const struct ember_backend_ops ember_cpu_backend = {
    .name = "cpu",
    .device_count = cpu_device_count,
    .device_open = cpu_device_open,
    .device_close = cpu_device_close,
    .device_describe = cpu_device_describe,
    .set_threads = cpu_set_threads,
    .matmul_precision_matters = cpu_matmul_precision_matters,
    .diagnose = cpu_diagnose,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .write = cpu_write,
    .read = cpu_read,
    .sync = NULL, /* everything runs to completion before it returns */
    .conv_direct_fast = cpu_conv_direct_fast,
#define CPU_PRIMITIVE_ENTRY(name, ...) .name = cpu_##name,
    EMBER_PRIMITIVES(CPU_PRIMITIVE_ENTRY)
#undef CPU_PRIMITIVE_ENTRY
};
