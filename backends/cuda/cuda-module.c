/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-module.c — getting the kernels onto one GPU.
 *
 * The paths cuda-path.c ranked, tried in order until the driver takes one:
 *   NVRTC cubin / PTX   the CUDA dialect of backends/kernels compiled by that
 *                       NVRTC for the GPU's arch, with a tuning sized for
 *                       CUDA GPUs; the result is kept in the disk cache
 *                       (backends/kernels/gpu-cache.c) under a key of the
 *                       source, the options, the NVRTC version, the arch and
 *                       the driver version, so a warm start compiles nothing;
 *   built-in PTX        the embedded sm_30 PTX, compiled with the default
 *                       tuning, which the driver JITs.
 * A module the driver takes is then checked before it is used: the tuning
 * it carries (its `ember_tuning` constant) must be the one the launch plans
 * assume, each kernel must run the block size its launches use (registers
 * may allow fewer threads), and, where the driver can say (CUDA 12.4 and
 * later), each kernel's arguments are noted so that every launch is
 * checked against them.
 *
 * When the driver refuses what NVRTC made (a PTX too new after all, a cubin
 * it cannot run), the reason is logged, remembered in the cache (so the
 * next start neither compiles nor offers it again) and the next path is
 * tried. A cached binary the driver refuses is dropped and rebuilt, never
 * trusted.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-impl.h"
#include "text-impl.h"

/* NVRTC's options for one compile: the target, then the tuning as -D. */
#define MAX_OPTIONS 16

struct compile_options {
    char arch[16];   /* "sm_35" or "compute_35" */
    char target[48]; /* "--gpu-architecture=sm_35" */
    char defines[MAX_OPTIONS][48];
    const char *list[MAX_OPTIONS + 1];
    int count;
};

static void options_make(struct compile_options *o, int arch, bool cubin, const struct ember_kernel_tuning *t)
{
    char joined[512];
    memset(o, 0, sizeof *o);
    snprintf(o->arch, sizeof o->arch, "%s_%d", cubin ? "sm" : "compute", arch);
    snprintf(o->target, sizeof o->target, "--gpu-architecture=%s", o->arch);
    o->list[o->count++] = o->target;
    ember_kernel_defines(t, joined, sizeof joined); /* "-DEMBER_WG_SIZE=64 -D..." */
    int i = 0;
    for (char *save = NULL, *word = strtok_r(joined, " ", &save); word && i < MAX_OPTIONS - 1;
         word = strtok_r(NULL, " ", &save), i++) {
        snprintf(o->defines[i], sizeof o->defines[i], "%s", word);
        o->list[o->count++] = o->defines[i];
    }
}

unsigned char *cuda_nvrtc_compile(const struct cuda_nvrtc *n, int arch, bool cubin,
                                  const struct ember_kernel_tuning *tuning, size_t *size, char *why,
                                  size_t why_len)
{
    const struct nvrtc_api *api = &n->api;
    if (cubin && !n->cubin) {
        snprintf(why, why_len, "NVRTC %d.%d cannot emit cubins", n->major, n->minor);
        return NULL;
    }
    char *source = ember_kernel_program(EMBER_DIALECT_CUDA, EMBER_KERNEL_ALL_FAMILIES, why, why_len);
    if (!source)
        return NULL;
    struct compile_options o;
    options_make(&o, arch, cubin, tuning);
    nvrtcProgram program = NULL;
    unsigned char *out = NULL;
    nvrtcResult r = api->nvrtcCreateProgram(&program, source, "ember-kernels.cu", 0, NULL, NULL);
    if (r != 0) {
        snprintf(why, why_len, "nvrtcCreateProgram: %s", api->nvrtcGetErrorString(r));
        goto done;
    }
    r = api->nvrtcCompileProgram(program, o.count, o.list);
    if (r != 0) {
        size_t log_size = 0;
        char *log = NULL;
        if (api->nvrtcGetProgramLogSize(program, &log_size) == 0 && (log = calloc(1, log_size + 1)) &&
            api->nvrtcGetProgramLog(program, log) != 0)
            log[0] = '\0'; /* the log call failed: whatever it wrote is not a log */
        if (log)
            log[log_size] = '\0';
        snprintf(why, why_len, "NVRTC %d.%d could not compile the kernels for %s (%s): %s", n->major,
                 n->minor, o.arch, api->nvrtcGetErrorString(r), log ? log : "(no log)");
        free(log);
        goto done;
    }
    size_t bytes = 0;
    r = cubin ? api->nvrtcGetCUBINSize(program, &bytes) : api->nvrtcGetPTXSize(program, &bytes);
    if (r == 0 && (out = malloc(bytes + 1))) {
        r = cubin ? api->nvrtcGetCUBIN(program, (char *)out) : api->nvrtcGetPTX(program, (char *)out);
        out[bytes] = '\0'; /* the driver wants PTX NUL-terminated; a cubin does not mind */
        *size = bytes;
    }
    if (r != 0 || !out) {
        snprintf(why, why_len, "NVRTC %d.%d: fetching the %s failed: %s", n->major, n->minor,
                 cubin ? "cubin" : "PTX", r ? api->nvrtcGetErrorString(r) : "out of memory");
        free(out);
        out = NULL;
    }
done:
    if (program)
        api->nvrtcDestroyProgram(&program);
    free(source);
    return out;
}

/* The tuning for kernels NVRTC compiles: bigger groups and tiles than the
 * baseline's defaults (sized for small old GPUs), within what every CUDA
 * GPU from sm_30 offers (1024 threads and 48 KiB of shared memory a block). */
struct ember_kernel_tuning cuda_nvrtc_tuning(void)
{
    struct ember_kernel_tuning t = ember_kernel_tuning_default();
    t.wg_size = 256;
    t.tile_m = t.tile_n = 64;
    return t;
}

static void module_unload(struct cuda_device *d)
{
    if (d->module)
        d->probe->api.cuModuleUnload(d->module);
    d->module = NULL;
    memset(d->functions, 0, sizeof d->functions);
}

/* The block size each kernel's launches use under a tuning: the sgemm
 * tile's work-items for sgemm, at most wg_size for every other kernel. */
static int threads_needed(enum ember_kernel k, const struct ember_kernel_tuning *t)
{
    return k == EMBER_KERNEL_sgemm ? ember_kernel_gemm_threads(t) : t->wg_size;
}

/* What the driver says of each kernel: how many threads a block may have,
 * and its arguments where it can tell. False (with why) when a kernel
 * cannot run the blocks its launches use, or the GPU has too little shared
 * memory for the sgemm tiles. */
static bool module_describe(struct cuda_device *d, const struct ember_kernel_tuning *t, char *why,
                            size_t why_len)
{
    const struct cuda_driver_api *api = &d->probe->api;
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    if (g->shared_per_block > 0 && ember_kernel_gemm_local_bytes(t) > (size_t)g->shared_per_block) {
        snprintf(why, why_len, "the sgemm tiles take %zu bytes of shared memory, the GPU has %d a block",
                 ember_kernel_gemm_local_bytes(t), g->shared_per_block);
        return false;
    }
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        struct cuda_kernel_info *info = &d->kernels[k];
        CUresult r = api->cuFuncGetAttribute(&info->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                             d->functions[k]);
        if (r != CUDA_SUCCESS) {
            snprintf(why, why_len, "cuFuncGetAttribute(%s): %s", ember_kernel_name(k), cuda_error_name(r));
            return false;
        }
        if (info->max_threads < threads_needed(k, t)) {
            snprintf(
                why, why_len,
                "kernel %s runs at most %d threads a block on this GPU (its registers), its launches use %d",
                ember_kernel_name(k), info->max_threads, threads_needed(k, t));
            return false;
        }
        info->arg_count = -1;
        if (!api->cuFuncGetParamInfo)
            continue;
        int n = 0;
        size_t offset, size;
        while (n < CUDA_MAX_ARGS && api->cuFuncGetParamInfo(d->functions[k], (size_t)n, &offset, &size) == 0)
            info->arg_sizes[n++] = (unsigned char)size;
        info->arg_count = n;
    }
    return true;
}

/* The tuning the module carries (kernels.h: EMBER_KERNEL_TUNING_SYMBOL)
 * must be `t`, which the launch plans assume; a driver that cannot find the
 * constant is trusted. */
static bool module_tuning_matches(struct cuda_device *d, const struct ember_kernel_tuning *t, char *why,
                                  size_t why_len)
{
    const struct cuda_driver_api *api = &d->probe->api;
    CUdeviceptr where = 0;
    size_t bytes = 0;
    int found[EMBER_KERNEL_TUNING_COUNT], want[EMBER_KERNEL_TUNING_COUNT];
    CUresult r = api->cuModuleGetGlobal_v2(&where, &bytes, d->module, EMBER_KERNEL_TUNING_SYMBOL);
    if (r == CUDA_ERROR_NOT_FOUND)
        return true;
    if (r == CUDA_SUCCESS && bytes != sizeof found) {
        snprintf(why, why_len, "the module's %s holds %zu bytes, not %zu", EMBER_KERNEL_TUNING_SYMBOL, bytes,
                 sizeof found);
        return false;
    }
    if (r == CUDA_SUCCESS)
        r = api->cuMemcpyDtoH_v2(found, where, sizeof found);
    if (r != CUDA_SUCCESS) {
        snprintf(why, why_len, "reading the module's %s: %s", EMBER_KERNEL_TUNING_SYMBOL, cuda_error_name(r));
        return false;
    }
    ember_kernel_tuning_values(t, want);
    if (memcmp(found, want, sizeof want) != 0) {
        snprintf(why, why_len,
                 "the module was compiled with another tuning (work-groups of %d, sgemm tiles %dx%dx%d) than "
                 "ember launches it with (%d, %dx%dx%d)",
                 found[0], found[1], found[2], found[3], want[0], want[1], want[2], want[3]);
        return false;
    }
    return true;
}

/* How a load ended. */
enum load_outcome {
    LOADED,
    REFUSED,   /* by the driver, or by the checks: the next path may work */
    NOT_BUILT, /* NVRTC failed, or out of memory */
};

/* Loads an image (PTX text or a cubin), finds every kernel in it and
 * checks the module; on failure the driver's JIT log goes into `why`. */
static enum load_outcome module_load(struct cuda_device *d, const void *image,
                                     const struct ember_kernel_tuning *t, char *why, size_t why_len)
{
    const struct cuda_driver_api *api = &d->probe->api;
    char log[2048] = "";
    CUjit_option options[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[2] = {log, (void *)(size_t)sizeof log};
    CUresult r = api->cuModuleLoadDataEx(&d->module, image, 2, options, values);
    if (r != CUDA_SUCCESS) {
        d->module = NULL;
        log[sizeof log - 1] = '\0';
        snprintf(why, why_len, "the driver refused the kernels: %s (%d)%s%.1500s", cuda_error_name(r), r,
                 log[0] ? ": " : "", log);
        return r == CUDA_ERROR_OUT_OF_MEMORY ? NOT_BUILT : REFUSED;
    }
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        r = api->cuModuleGetFunction(&d->functions[k], d->module, ember_kernel_name(k));
        if (r != CUDA_SUCCESS) {
            snprintf(why, why_len, "kernel %s is missing from the module: %s", ember_kernel_name(k),
                     cuda_error_name(r));
            module_unload(d);
            return REFUSED;
        }
    }
    if (!module_tuning_matches(d, t, why, why_len) || !module_describe(d, t, why, why_len)) {
        module_unload(d);
        return REFUSED;
    }
    d->gpu.tuning = *t;
    return LOADED;
}

/* The cache keys of an NVRTC option: its binary, and the driver's refusal of it. */
static bool nvrtc_keys(const struct cuda_device *d, const struct cuda_option *o,
                       struct ember_gpu_cache_key *binary, struct ember_gpu_cache_key *refusal, char *why,
                       size_t why_len)
{
    const struct cuda_probe *p = d->probe;
    const struct cuda_nvrtc *n = &p->nvrtc[o->nvrtc];
    bool cubin = o->path == CUDA_PATH_NVRTC_CUBIN;
    struct ember_kernel_tuning t = cuda_nvrtc_tuning();
    char *source = ember_kernel_program(EMBER_DIALECT_CUDA, EMBER_KERNEL_ALL_FAMILIES, why, why_len);
    if (!source)
        return false;
    char nvrtc[32], target[32], driver[32], defines[512];
    snprintf(nvrtc, sizeof nvrtc, "NVRTC %d.%d", n->major, n->minor);
    snprintf(target, sizeof target, "%s_%d", cubin ? "sm" : "compute", o->arch);
    snprintf(driver, sizeof driver, "driver %d", p->driver_version);
    ember_kernel_defines(&t, defines, sizeof defines);
    const char *parts[] = {nvrtc, target, driver, defines, source, "refused by the driver"};
    int count = (int)(sizeof parts / sizeof parts[0]);
    ember_gpu_cache_key_make(parts, count - 1, binary);
    ember_gpu_cache_key_make(parts, count, refusal);
    free(source);
    return true;
}

/* The NVRTC path: from the cache, else compiled and cached. */
static enum load_outcome load_nvrtc(struct cuda_device *d, const struct cuda_option *o, char *why,
                                    size_t why_len)
{
    const struct cuda_nvrtc *n = &d->probe->nvrtc[o->nvrtc];
    struct ember_kernel_tuning t = cuda_nvrtc_tuning();
    struct ember_gpu_cache_key key, refusal;
    if (!nvrtc_keys(d, o, &key, &refusal, why, why_len))
        return NOT_BUILT;
    size_t size = 0;
    unsigned char *image = ember_gpu_cache_load(&d->gpu, "cuda", &refusal, &size);
    ember_gpu_cache_loaded("cuda", &refusal); /* a note, never given to the driver */
    if (image) {                              /* this driver refused these very kernels before */
        snprintf(why, why_len, "refused by this driver before (remembered in the cache): %.*s", (int)size,
                 (const char *)image);
        free(image);
        return REFUSED;
    }
    if ((image = ember_gpu_cache_load(&d->gpu, "cuda", &key, &size))) {
        /* the cache returns exactly the bytes stored; PTX needs its NUL back */
        unsigned char *terminated = realloc(image, size + 1);
        if (terminated) {
            terminated[size] = '\0';
            image = terminated;
        }
        enum load_outcome cached = module_load(d, image, &t, why, why_len);
        ember_gpu_cache_loaded("cuda", &key); /* the driver answered, and we are alive */
        free(image);
        if (cached == LOADED) {
            d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: kernels loaded from the cache",
                            d->gpu.name);
            return LOADED;
        }
        d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO,
                        "%s: ignoring the cached kernels (%s); rebuilding them", d->gpu.name, why);
    }
    char what[512];
    snprintf(what, sizeof what, "%s, %s", d->probe->gpus[d->index].name, d->path_detail);
    ember_gpu_compile_begin(&d->gpu, "cuda", what, NULL);
    image = cuda_nvrtc_compile(n, o->arch, o->path == CUDA_PATH_NVRTC_CUBIN, &t, &size, why, why_len);
    enum load_outcome outcome = image ? module_load(d, image, &t, why, why_len) : NOT_BUILT;
    ember_gpu_compile_end(&d->gpu);
    if (!image)
        return NOT_BUILT;
    if (outcome == LOADED)
        ember_gpu_cache_store(&d->gpu, "cuda", &key, image, size);
    else if (outcome == REFUSED) /* so that the next start neither compiles nor offers it */
        ember_gpu_cache_store(&d->gpu, "cuda", &refusal, (const unsigned char *)why, strlen(why));
    free(image);
    return outcome;
}

/* ------------------------------------------------------------- outcomes */

static struct {
    pthread_mutex_t lock;
    enum cuda_kernel_path path[CUDA_MAX_GPUS];
    char detail[CUDA_MAX_GPUS][160];
    char failed[CUDA_MAX_GPUS][1024];
} outcomes = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void outcome_record(int index, enum cuda_kernel_path path, const char *detail, const char *failed)
{
    if (index < 0 || index >= CUDA_MAX_GPUS)
        return;
    pthread_mutex_lock(&outcomes.lock);
    outcomes.path[index] = path;
    snprintf(outcomes.detail[index], sizeof outcomes.detail[index], "%s", detail);
    snprintf(outcomes.failed[index], sizeof outcomes.failed[index], "%s", failed);
    pthread_mutex_unlock(&outcomes.lock);
}

enum cuda_kernel_path cuda_module_outcome(int index, char *detail, size_t detail_len, char *failed,
                                          size_t failed_len)
{
    if (index < 0 || index >= CUDA_MAX_GPUS)
        return CUDA_PATH_NONE;
    pthread_mutex_lock(&outcomes.lock);
    enum cuda_kernel_path path = outcomes.path[index];
    snprintf(detail, detail_len, "%s", outcomes.detail[index]);
    snprintf(failed, failed_len, "%s", outcomes.failed[index]);
    pthread_mutex_unlock(&outcomes.lock);
    return path;
}

/* ------------------------------------------------------------- the paths */

static void option_detail(const struct cuda_probe *p, const struct cuda_option *o, char *out, size_t len)
{
    if (o->path == CUDA_PATH_BASELINE_PTX) {
        snprintf(out, len, "built-in sm_30 PTX");
        return;
    }
    const struct cuda_nvrtc *n = &p->nvrtc[o->nvrtc];
    bool cubin = o->path == CUDA_PATH_NVRTC_CUBIN;
    snprintf(out, len, "NVRTC %d.%d %s for %s_%d", n->major, n->minor, cubin ? "cubin" : "PTX",
             cubin ? "sm" : "compute", o->arch);
}

ember_status cuda_module_open(struct cuda_device *d)
{
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    const struct cuda_choice *c = &g->choice;
    const struct ember_host *h = &d->gpu.host;
    char why[2048], failed[1024] = "", tried[2048] = "";
    if (c->count == 0)
        return h->fail(h->ctx, EMBER_ERR_DEVICE, "%s (%s) cannot be used: %s", d->gpu.name, g->name,
                       c->reason);
    for (int i = 0; i < c->count; i++) {
        const struct cuda_option *o = &c->options[i];
        option_detail(d->probe, o, d->path_detail, sizeof d->path_detail);
        why[0] = '\0';
        struct ember_kernel_tuning baseline = ember_kernel_tuning_default(); /* what it was compiled with */
        enum load_outcome outcome;
        if (o->path == CUDA_PATH_BASELINE_PTX) {
            /* the driver JITs the PTX for the GPU, and keeps the result in its own cache */
            char what[512];
            snprintf(what, sizeof what, "%s, the driver JIT-compiling the built-in sm_30 PTX for sm_%d",
                     g->name, g->cc);
            ember_gpu_compile_begin(
                &d->gpu, "cuda", what,
                "once; the driver keeps the result in $CUDA_CACHE_PATH, else ~/.nv/ComputeCache");
            outcome = module_load(d, cuda_baseline_ptx(), &baseline, why, sizeof why);
            ember_gpu_compile_end(&d->gpu);
        } else {
            outcome = load_nvrtc(d, o, why, sizeof why);
        }
        if (outcome == LOADED) {
            d->path = o->path;
            outcome_record(d->index, o->path, d->path_detail, failed);
            h->log(h->ctx, EMBER_LOG_INFO, "%s: kernels: %s (%s)", d->gpu.name, d->path_detail, o->reason);
            return EMBER_OK;
        }
        ember_note_append(tried, sizeof tried, "%s: %.600s", d->path_detail, why);
        ember_note_append(failed, sizeof failed, "%s: %.400s", d->path_detail, why);
        if (i + 1 < c->count)
            h->log(h->ctx, EMBER_LOG_WARN, "%s: %s failed (%s); trying %s next", d->gpu.name, d->path_detail,
                   why, cuda_path_name(c->options[i + 1].path));
    }
    outcome_record(d->index, CUDA_PATH_NONE, "", failed);
    return h->fail(h->ctx, EMBER_ERR_DEVICE,
                   "%s (%s, sm_%d, driver CUDA %d.%d): no way to load ember's kernels%s: %s", d->gpu.name,
                   g->name, g->cc, d->probe->driver_version / 1000, d->probe->driver_version % 1000 / 10,
                   d->probe->forced ? " on the paths EMBER_CUDA_KERNELS allows" : "", tried);
}

void cuda_module_close(struct cuda_device *d) { module_unload(d); }
