/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-sim.c — simulated NVIDIA GPUs: the device "ptxsim:N"
 * runs ember's kernels as the CUDA backend compiles them for one of the
 * real GPUs of ptxsim's table (ptxsim/ptxsim-gpus.c: 0 a Quadro K2100M,
 * 1 a Tesla K40m, 2 a GeForce GTX 1080, 3 an H100), executed instruction by
 * instruction in this process by ember's PTX simulator, with every check
 * of ptxsim.h on. It is some ten thousand times slower than the GPU it
 * stands for: it is for seeing what a GPU does, and for checking kernels,
 * not for training.
 *
 *     ember train --device ptxsim:1 --steps 2 --batch 8    a K40m's kernels, every launch checked
 *     ember ptx sgemm --simulate --gpu k40m                 what one launch of a training step did
 *
 * The kernels are the PTX `ember ptx --arch sm_XX` prints for the GPU's
 * arch (cuda-ptx.c): the newest NVRTC here that targets it, else the
 * built-in sm_30 PTX (EMBER_CUDA_KERNELS=baseline asks for it), checked to
 * carry the tuning the launch plans use. The launch plans are the shared
 * ones (backends/kernels/gpu.h); this file gives them host memory, each
 * allocation known to the simulator's checks, and a launch that runs at
 * once. The first launch of each kernel is recorded, for the optional
 * kernel_report entry (ember_kernel_report).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../ptxsim/ptxsim.h"
#include "cuda-impl.h"
#include "platform.h"

struct allocation {
    uint64_t base, bytes;
};

struct sim_device {
    struct ember_gpu gpu; /* first: the shared launch plans run on it */
    const struct ptxsim_gpu *spec;
    struct ptxsim_module *module;
    const struct ptxsim_kernel *kernels[EMBER_KERNEL_COUNT];
    char kernels_from[256]; /* "NVRTC 11.8 (...), PTX for compute_35" */
    struct allocation *allocations;
    int allocation_count, allocation_cap;
    uint64_t bytes_used;
    /* the record: each kernel's first launch, and how many there were */
    struct ptxsim_stats *first[EMBER_KERNEL_COUNT];
    int first_at[EMBER_KERNEL_COUNT]; /* its number among all launches, from 1 */
    int launches_of[EMBER_KERNEL_COUNT];
    int launches;
    uint64_t warp_instructions; /* every launch's, and the time they took */
    double seconds;
    /* every launch's estimated time on the real GPU (ptxsim_estimate), by
     * kernel and in all, from a record of that launch alone */
    struct ptxsim_stats *scratch[EMBER_KERNEL_COUNT];
    double estimated[EMBER_KERNEL_COUNT], estimated_all;
    bool profiling; /* --profile: each launch's estimate is its kernel's time */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* --------------------------------------------------------------- memory */

static bool sim_find(void *user, uint64_t address, uint64_t *base, uint64_t *bytes)
{
    const struct sim_device *d = user;
    for (int i = 0; i < d->allocation_count; i++)
        if (address >= d->allocations[i].base && address - d->allocations[i].base < d->allocations[i].bytes) {
            *base = d->allocations[i].base;
            *bytes = d->allocations[i].bytes;
            return true;
        }
    return false;
}

static ember_status sim_alloc(void *dev, size_t bytes, void **buf)
{
    struct sim_device *d = dev;
    size_t rounded = (bytes + 255) / 256 * 256;
    if (rounded == 0)
        rounded = 256;
    if (d->bytes_used + rounded > (uint64_t)d->spec->memory_mib << 20)
        return EMBER_ERR_NOMEM;
    if (d->allocation_count == d->allocation_cap) {
        int cap = d->allocation_cap ? d->allocation_cap * 2 : 64;
        struct allocation *grown = realloc(d->allocations, (size_t)cap * sizeof *grown);
        if (!grown)
            return EMBER_ERR_NOMEM;
        d->allocations = grown;
        d->allocation_cap = cap;
    }
    void *p = ember_aligned_alloc(256, rounded); /* cudaMalloc aligns to 256 bytes */
    if (!p)
        return EMBER_ERR_NOMEM;
    memset(p, 0xff, rounded); /* what was never written reads as NaN, as on the CUDA test double */
    d->allocations[d->allocation_count++] =
        (struct allocation){.base = (uint64_t)(uintptr_t)p, .bytes = bytes};
    d->bytes_used += rounded;
    *buf = p;
    return EMBER_OK;
}

static void sim_release(void *dev, void *buf)
{
    struct sim_device *d = dev;
    for (int i = 0; i < d->allocation_count; i++)
        if (d->allocations[i].base == (uint64_t)(uintptr_t)buf) {
            d->bytes_used -= (d->allocations[i].bytes + 255) / 256 * 256;
            d->allocations[i] = d->allocations[--d->allocation_count];
            ember_aligned_free(buf);
            return;
        }
}

static ember_status sim_memory_info(void *dev, size_t *free_bytes, size_t *total_bytes)
{
    struct sim_device *d = dev;
    *total_bytes = (size_t)d->spec->memory_mib << 20;
    *free_bytes = *total_bytes - (size_t)d->bytes_used;
    return EMBER_OK;
}

/* the bytes of p, checked against its allocation */
static unsigned char *sim_bytes(struct sim_device *d, ember_ptr p, size_t bytes, const char *what)
{
    uint64_t at = (uint64_t)(uintptr_t)p.buf + (uint64_t)p.off * 4, base, size;
    if (!sim_find(d, (uint64_t)(uintptr_t)p.buf, &base, &size) || at + bytes > base + size) {
        d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_ARG,
                         "%s: %s %zu bytes at element %lld of a buffer it does not "
                         "hold, or past its end",
                         d->gpu.name, what, bytes, (long long)p.off);
        return NULL;
    }
    return (unsigned char *)(uintptr_t)at;
}

static ember_status sim_write(void *dev, ember_ptr dst, const void *src, size_t bytes)
{
    unsigned char *p = bytes ? sim_bytes(dev, dst, bytes, "writing") : NULL;
    if (p)
        memcpy(p, src, bytes);
    return p || !bytes ? EMBER_OK : EMBER_ERR_ARG;
}

static ember_status sim_read(void *dev, void *dst, ember_ptr src, size_t bytes)
{
    unsigned char *p = bytes ? sim_bytes(dev, src, bytes, "reading") : NULL;
    if (p)
        memcpy(dst, p, bytes);
    return p || !bytes ? EMBER_OK : EMBER_ERR_ARG;
}

/* --------------------------------------------------------------- launches */

/* EMBER_PTXSIM_ESTIMATES=FILE: a line a launch with what its estimate was
 * made from, appended, for fitting the estimate's constants to recorded
 * kernel times (bench/ptxsim_calibrate.py, docs/benchmarks.md) */
static void sim_log_estimate(const struct sim_device *d, const char *kernel, const struct ptxsim_stats *s,
                             int blocks_per_sm, const struct ptxsim_timing *t)
{
    const char *path = getenv("EMBER_PTXSIM_ESTIMATES");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    uint64_t loads = 0, sectors = 0, fp = 0;
    for (int i = 0; i < s->count; i++) {
        enum ptxsim_class c = ptxsim_kernel_instruction_class(s->kernel, i);
        loads += c == PTXSIM_CLASS_LOAD_GLOBAL ? s->ins[i].issued : 0;
        sectors += s->ins[i].sectors;
        fp += c == PTXSIM_CLASS_FLOAT ? s->ins[i].threads : 0;
    }
    fprintf(f,
            "%s %s blocks=%llu threads=%u per_sm=%d warps=%llu instructions=%llu loads=%llu sectors=%llu "
            "unique=%llu fp=%llu estimate_us=%.3f\n",
            d->spec->key, kernel, (unsigned long long)s->grid[0] * s->grid[1] * s->grid[2],
            s->block[0] * s->block[1] * s->block[2], blocks_per_sm, (unsigned long long)s->warps,
            (unsigned long long)s->warp_instructions, (unsigned long long)loads, (unsigned long long)sectors,
            (unsigned long long)s->unique_sectors, (unsigned long long)fp, t->total * 1e6);
    fclose(f);
}

static ember_status sim_launch(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                               size_t local, const struct ember_gpu_arg *args, int nargs)
{
    struct sim_device *d = (struct sim_device *)gpu;
    const struct ember_host *h = &gpu->host;
    const char *name = ember_kernel_name(kernel);
    const struct ptxsim_kernel *k = d->kernels[kernel];
    static const size_t limit[3] = {2147483647u, 65535, 65535}; /* every GPU from sm_30 on */
    for (int i = 0; i < 3; i++)
        if (groups[i] < 1 || groups[i] > limit[i])
            return h->fail(
                h->ctx, EMBER_ERR_UNSUPPORTED,
                "%s: a launch of kernel %s over %zux%zux%zu blocks passes the grid (%zu x %zu x %zu)",
                gpu->name, name, groups[0], groups[1], groups[2], limit[0], limit[1], limit[2]);
    if (local < 1 || local > 1024 || nargs != ptxsim_kernel_param_count(k))
        return h->fail(
            h->ctx, EMBER_ERR_UNSUPPORTED,
            "%s: kernel %s launched in blocks of %zu threads with %d arguments: it takes %d, in blocks "
            "of 1 to 1024",
            gpu->name, name, local, nargs, ptxsim_kernel_param_count(k));
    unsigned char params[CUDA_MAX_ARGS * 8];
    for (int i = 0; i < nargs; i++) {
        size_t at, size;
        ptxsim_kernel_param(k, i, &at, &size);
        uint64_t address = (uint64_t)(uintptr_t)args[i].value.buffer;
        const void *value =
            args[i].kind == EMBER_GPU_ARG_BUFFER ? (const void *)&address : (const void *)&args[i].value;
        size_t given = args[i].kind == EMBER_GPU_ARG_BUFFER ? 8 : 4;
        if (size != given || at + size > sizeof params)
            return h->fail(h->ctx, EMBER_ERR_UNSUPPORTED,
                           "%s: kernel %s's argument %d is %zu bytes, its launch plan passes %zu: the kernel "
                           "(backends/kernels/*.kc) and its launch (gpu-*.c) disagree",
                           gpu->name, name, i, size, given);
        memcpy(params + at, value, size);
    }
    d->launches++;
    d->launches_of[kernel]++;
    struct ptxsim_stats *record = NULL;
    if (!d->first[kernel] && (record = ptxsim_stats_new(k))) { /* its first launch: kept for the report */
        d->first[kernel] = record;
        d->first_at[kernel] = d->launches;
    } else if (d->scratch[kernel] ||
               (d->scratch[kernel] = ptxsim_stats_new(k))) { /* the others: for the estimate */
        record = d->scratch[kernel];
        ptxsim_stats_clear(record);
    }
    struct ptxsim_launch l = {.kernel = k,
                              .grid = {(unsigned)groups[0], (unsigned)groups[1], (unsigned)groups[2]},
                              .block = {(unsigned)local, 1, 1},
                              .params = params,
                              .memory = {.find = sim_find, .user = d},
                              .stats = record};
    struct ptxsim_result r;
    double start = now();
    enum ptxsim_outcome outcome = ptxsim_run(&l, &r);
    d->seconds += now() - start;
    d->warp_instructions += r.warp_instructions;
    if (outcome != PTXSIM_OK)
        return h->fail(h->ctx, outcome == PTXSIM_NO_MEMORY ? EMBER_ERR_NOMEM : EMBER_ERR_DEVICE, "%s: %s",
                       gpu->name, r.message);
    if (record) {
        struct ptxsim_occupancy o;
        struct ptxsim_timing t;
        int registers = ptxsim_kernel_registers(k),
            most = ptxsim_arch_find(d->spec->sm)->max_registers_per_thread;
        ptxsim_occupancy(ptxsim_arch_find(d->spec->sm), (int)local, registers < most ? registers : most,
                         ptxsim_kernel_shared_bytes(k), &o);
        ptxsim_estimate(record, d->spec, o.blocks, &t);
        d->estimated[kernel] += t.total;
        d->estimated_all += t.total;
        sim_log_estimate(d, name, record, o.blocks, &t);
        if (d->profiling) /* the real GPU's time, estimated: what the profile shows for the kernel */
            h->kernel_timed(h->ctx, name, groups, local, t.total);
    }
    return EMBER_OK;
}

/* ---------------------------------------------------------------- devices */

static int sim_device_count(char *why, size_t why_len)
{
    (void)why, (void)why_len;
    return ptxsim_gpu_count();
}

static bool sim_device_preferred(int index, char *why, size_t why_len)
{
    snprintf(why, why_len, "a simulated GPU: for seeing what a GPU does, far too slow to train on");
    return false;
}

static void sim_device_close(void *dev)
{
    struct sim_device *d = dev;
    if (!d)
        return;
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        ptxsim_stats_free(d->first[k]);
        ptxsim_stats_free(d->scratch[k]);
    }
    for (int i = 0; i < d->allocation_count; i++)
        free((void *)(uintptr_t)d->allocations[i].base);
    free(d->allocations);
    ptxsim_module_free(d->module);
    free(d);
}

/* The kernels for the GPU's arch, parsed, checked for every kernel and for
 * the tuning the launch plans will use. */
static ember_status sim_load(struct sim_device *d)
{
    const struct ember_host *h = &d->gpu.host;
    char arch[16], how[256], why[2048];
    snprintf(arch, sizeof arch, "sm_%d", d->spec->sm);
    const char *forced = getenv("EMBER_CUDA_KERNELS");
    bool baseline = forced && strcmp(forced, "baseline") == 0;
    char *ptx = ember_ptx(NULL, arch, baseline, how, sizeof how, why, sizeof why);
    if (!ptx)
        return h->fail(h->ctx, EMBER_ERR_DEVICE, "%s: no PTX for %s: %s", d->gpu.name, arch, why);
    snprintf(d->kernels_from, sizeof d->kernels_from, "%s", how);
    d->module = ptxsim_module_parse(ptx, why, sizeof why);
    bool nvrtc = strncmp(how, "NVRTC", 5) == 0;
    free(ptx);
    if (!d->module)
        return h->fail(h->ctx, EMBER_ERR_DEVICE, "%s: the simulator cannot run the kernels (%s): %s",
                       d->gpu.name, how, why);
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++)
        if (!(d->kernels[k] = ptxsim_module_kernel(d->module, ember_kernel_name(k))))
            return h->fail(h->ctx, EMBER_ERR_DEVICE, "%s: kernel %s is missing from %s", d->gpu.name,
                           ember_kernel_name(k), how);
    struct ember_kernel_tuning t = nvrtc ? cuda_nvrtc_tuning() : ember_kernel_tuning_default();
    int want[EMBER_KERNEL_TUNING_COUNT];
    ember_kernel_tuning_values(&t, want);
    const unsigned char *found;
    size_t size;
    if (!ptxsim_module_variable(d->module, EMBER_KERNEL_TUNING_SYMBOL, &found, &size) ||
        size != sizeof want || memcmp(found, want, sizeof want) != 0)
        return h->fail(h->ctx, EMBER_ERR_DEVICE,
                       "%s: the kernels (%s) do not carry the tuning ember launches them with", d->gpu.name,
                       how);
    const struct ptxsim_arch *multiprocessor = ptxsim_arch_find(d->spec->sm);
    if (ember_kernel_gemm_local_bytes(&t) > (size_t)multiprocessor->shared_per_block)
        return h->fail(h->ctx, EMBER_ERR_DEVICE,
                       "%s: the sgemm tiles need %zu bytes of shared memory, the %s has %d", d->gpu.name,
                       ember_kernel_gemm_local_bytes(&t), d->spec->name, multiprocessor->shared_per_block);
    d->gpu.tuning = t;
    return EMBER_OK;
}

static ember_status sim_device_open(const struct ember_host *host, int index, void **dev)
{
    const struct ptxsim_gpu *spec = ptxsim_gpu_at(index);
    if (!spec)
        return host->fail(host->ctx, EMBER_ERR_DEVICE,
                          "there is no ptxsim:%d: the simulated GPUs are ptxsim:0 to "
                          "ptxsim:%d",
                          index, ptxsim_gpu_count() - 1);
    struct sim_device *d = calloc(1, sizeof *d);
    if (!d)
        return host->fail(host->ctx, EMBER_ERR_NOMEM, "out of host memory opening ptxsim:%d", index);
    *d = (struct sim_device){.gpu = {.host = *host, .launch = sim_launch}, .spec = spec};
    snprintf(d->gpu.name, sizeof d->gpu.name, "ptxsim:%d", index);
    ember_status st = sim_load(d);
    if (st != EMBER_OK) {
        sim_device_close(d);
        return st;
    }
    d->gpu.gemm_threads = (size_t)ember_kernel_gemm_threads(&d->gpu.tuning);
    d->gpu.max_groups = 65535;
    *dev = d;
    return EMBER_OK;
}

static void sim_device_describe(void *dev, char *out, size_t len)
{
    const struct sim_device *d = dev;
    snprintf(out, len, "%s %s (simulated by ptxsim: sm_%d, %d multiprocessor%s, %.0f GiB, kernels: %s)",
             d->gpu.name, d->spec->name, d->spec->sm, d->spec->multiprocessors,
             d->spec->multiprocessors == 1 ? "" : "s", d->spec->memory_mib / 1024.0, d->kernels_from);
}

/* --profile: kernels are "timed" by their estimated time on the real GPU */
static ember_status sim_set_profiling(void *dev, bool on)
{
    ((struct sim_device *)dev)->profiling = on;
    return EMBER_OK;
}

static void sim_peak(void *dev, double *gflops, double *gbps)
{
    const struct sim_device *d = dev;
    *gflops = 2.0 * d->spec->multiprocessors * d->spec->fp32_lanes * d->spec->clock_mhz * 1e-3;
    *gbps = d->spec->bandwidth_gbs;
}

/* ---------------------------------------------------------------- reports */

/* every kernel launched: how often, and its first launch in a line */
static char *sim_summary(const struct sim_device *d)
{
    size_t cap = 4096 + (size_t)EMBER_KERNEL_COUNT * 200, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    len += (size_t)snprintf(s + len, cap - len,
                            "%s, the simulated %s: %d launches; the first of each kernel, and the mean time "
                            "estimated for its launches on the real GPU:\n"
                            "%-28s %8s %12s %11s %12s %12s %9s\n",
                            d->gpu.name, d->spec->name, d->launches, "kernel", "launches", "warp instr",
                            "efficiency", "sectors/req", "bank passes", "est. us");
    for (int k = 0; k < EMBER_KERNEL_COUNT && len < cap; k++) {
        const struct ptxsim_stats *st = d->first[k];
        if (!st)
            continue;
        uint64_t requests = 0, sectors = 0, shared = 0, passes = 0;
        for (int i = 0; i < st->count; i++) {
            enum ptxsim_class c = ptxsim_kernel_instruction_class(st->kernel, i);
            if (c == PTXSIM_CLASS_LOAD_GLOBAL || c == PTXSIM_CLASS_STORE_GLOBAL)
                requests += st->ins[i].issued, sectors += st->ins[i].sectors;
            if (c == PTXSIM_CLASS_SHARED) /* Kepler's banks are 8 bytes wide (ptxsim-gpus.c) */
                shared += st->ins[i].issued, passes += ptxsim_arch_find(d->spec->sm)->bank_bytes == 8
                                                           ? st->ins[i].wavefronts_kepler
                                                           : st->ins[i].wavefronts;
        }
        char bank[32] = "-";
        if (shared)
            snprintf(bank, sizeof bank, "%.2f", (double)passes / (double)shared);
        len += (size_t)snprintf(s + len, cap - len, "%-28s %8d %12llu %10.1f%% %12.1f %12s %9.1f\n",
                                ember_kernel_name(k), d->launches_of[k],
                                (unsigned long long)st->warp_instructions,
                                st->warp_instructions ? 100.0 * (double)st->active_instructions /
                                                            (32.0 * (double)st->warp_instructions)
                                                      : 0.0,
                                requests ? (double)sectors / (double)requests : 0.0, bank,
                                d->launches_of[k] ? d->estimated[k] / d->launches_of[k] * 1e6 : 0.0);
    }
    if (len < cap)
        len +=
            (size_t)snprintf(s + len, cap - len,
                             "the kernels of the step: an estimated %.0f us on a real %s, launches one after "
                             "another (an estimate: docs/benchmarks.md states its error)\n",
                             d->estimated_all * 1e6, d->spec->name);
    if (len < cap)
        snprintf(s + len, cap - len,
                 "the simulator executed %llu warp instructions in %.2f s: %.2f million a second\n",
                 (unsigned long long)d->warp_instructions, d->seconds,
                 d->seconds > 0 ? (double)d->warp_instructions / d->seconds * 1e-6 : 0.0);
    return s;
}

static char *sim_kernel_report(void *dev, const char *kernel, int registers, const char *registers_from,
                               char *why, size_t why_len)
{
    const struct sim_device *d = dev;
    if (!kernel)
        return sim_summary(d);
    int k = 0;
    while (k < EMBER_KERNEL_COUNT && strcmp(ember_kernel_name(k), kernel) != 0)
        k++;
    if (k == EMBER_KERNEL_COUNT) {
        snprintf(why, why_len, "there is no kernel \"%s\" (ember_kernel_name_at lists them)", kernel);
        return NULL;
    }
    if (!d->first[k]) {
        snprintf(why, why_len, "%s did not launch kernel %s", d->gpu.name, kernel);
        return NULL;
    }
    char *body = ptxsim_report(d->first[k], d->spec, registers, registers_from);
    size_t len = (body ? strlen(body) : 0) + 1024;
    char *out = body ? malloc(len) : NULL;
    if (!out) {
        free(body);
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    snprintf(
        out, len,
        "kernel %s on %s, a simulated %s (sm_%d)\nits PTX: %s\nthe first of its %d launches (launch %d of %d "
        "on this device)\n%s",
        kernel, d->gpu.name, d->spec->name, d->spec->sm, d->kernels_from, d->launches_of[k], d->first_at[k],
        d->launches, body);
    free(body);
    return out;
}

const struct ember_backend_ops ember_ptxsim_backend = {
    .name = "ptxsim",
    .device_count = sim_device_count,
    .device_preferred = sim_device_preferred,
    .device_open = sim_device_open,
    .device_close = sim_device_close,
    .device_describe = sim_device_describe,
    .alloc = sim_alloc,
    .release = sim_release,
    .memory_info = sim_memory_info,
    .write = sim_write,
    .read = sim_read,
    .peak = sim_peak,
    .kernel_report = sim_kernel_report,
    .set_profiling = sim_set_profiling,
    EMBER_GPU_PRIMITIVES /* the shared launch plans of backends/kernels */
};
