/*
 * backends/cuda/cuda-module.c — getting the kernels onto one GPU.
 *
 * On the path cuda-path.c chose:
 *   NVRTC cubin / PTX   the CUDA dialect of backends/kernels compiled by that
 *                       NVRTC for the GPU's arch, with a tuning sized for
 *                       CUDA GPUs; the result is kept in the disk cache
 *                       (backends/kernels/gpu-cache.c) under a key of the
 *                       source, the options, the NVRTC version, the arch and
 *                       the driver version, so a warm start compiles nothing;
 *   built-in PTX        the embedded sm_30 PTX, compiled with the default
 *                       tuning, which the driver JITs.
 * When the driver refuses what NVRTC made (a PTX too new after all, a cubin
 * it cannot run), the reason is logged and the built-in PTX is loaded
 * instead, unless EMBER_CUDA_KERNELS forces NVRTC. A cached entry the
 * driver refuses is dropped and rebuilt, never trusted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-impl.h"

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
                                  const struct ember_kernel_tuning *tuning, size_t *size, char *why, size_t why_len)
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
        if (api->nvrtcGetProgramLogSize(program, &log_size) == 0 && (log = malloc(log_size + 1)) &&
            api->nvrtcGetProgramLog(program, log) == 0)
            log[log_size] = '\0';
        snprintf(why, why_len, "NVRTC %d.%d could not compile the kernels for %s (%s): %s", n->major, n->minor,
                 o.arch, api->nvrtcGetErrorString(r), log ? log : "(no log)");
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

/* Loads an image (PTX text or a cubin) and finds every kernel in it; on
 * failure the driver's JIT log goes into `why`. */
static bool module_load(struct cuda_device *d, const void *image, char *why, size_t why_len)
{
    const struct cuda_driver_api *api = &d->probe->api;
    char log[2048] = "";
    CUjit_option options[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[2] = {log, (void *)(size_t)sizeof log};
    CUresult r = api->cuModuleLoadDataEx(&d->module, image, 2, options, values);
    if (r != CUDA_SUCCESS) {
        d->module = NULL;
        snprintf(why, why_len, "the driver refused the kernels: %s (%d)%s%.1500s", cuda_error_name(r), r,
                 log[0] ? ": " : "", log);
        return false;
    }
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        r = api->cuModuleGetFunction(&d->functions[k], d->module, ember_kernel_name(k));
        if (r != CUDA_SUCCESS) {
            snprintf(why, why_len, "kernel %s is missing from the module: %s", ember_kernel_name(k),
                     cuda_error_name(r));
            module_unload(d);
            return false;
        }
    }
    return true;
}

/* The NVRTC path: from the cache, else compiled and cached. */
static bool load_nvrtc(struct cuda_device *d, const struct cuda_choice *c, char *why, size_t why_len)
{
    const struct cuda_probe *p = d->probe;
    const struct cuda_nvrtc *n = &p->nvrtc[c->nvrtc];
    bool cubin = c->path == CUDA_PATH_NVRTC_CUBIN;
    struct ember_kernel_tuning t = cuda_nvrtc_tuning();
    char *source = ember_kernel_program(EMBER_DIALECT_CUDA, EMBER_KERNEL_ALL_FAMILIES, why, why_len);
    if (!source)
        return false;
    char nvrtc[32], target[32], driver[32], defines[512];
    snprintf(nvrtc, sizeof nvrtc, "NVRTC %d.%d", n->major, n->minor);
    snprintf(target, sizeof target, "%s_%d", cubin ? "sm" : "compute", c->arch);
    snprintf(driver, sizeof driver, "driver %d", p->driver_version);
    ember_kernel_defines(&t, defines, sizeof defines);
    const char *parts[] = {nvrtc, target, driver, defines, source};
    struct ember_gpu_cache_key key;
    ember_gpu_cache_key_make(parts, (int)(sizeof parts / sizeof parts[0]), &key);
    free(source);

    size_t size = 0;
    unsigned char *image = ember_gpu_cache_load(&d->gpu, "cuda", &key, &size);
    if (image) {
        /* the cache returns exactly the bytes stored; PTX needs its NUL back */
        unsigned char *terminated = realloc(image, size + 1);
        if (terminated) {
            terminated[size] = '\0';
            image = terminated;
        }
        if (module_load(d, image, why, why_len)) {
            free(image);
            d->gpu.tuning = t;
            d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: kernels loaded from the cache", d->gpu.name);
            return true;
        }
        d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: ignoring the cached kernels (%s); rebuilding them",
                        d->gpu.name, why);
        free(image);
    }
    image = cuda_nvrtc_compile(n, c->arch, cubin, &t, &size, why, why_len);
    if (!image)
        return false;
    bool ok = module_load(d, image, why, why_len);
    if (ok) {
        ember_gpu_cache_store(&d->gpu, "cuda", &key, image, size);
        d->gpu.tuning = t;
    }
    free(image);
    return ok;
}

ember_status cuda_module_open(struct cuda_device *d)
{
    const struct cuda_gpu *g = &d->probe->gpus[d->index];
    const struct cuda_choice *c = &g->choice;
    char why[2048] = "";
    d->path = c->path;
    if (c->path == CUDA_PATH_NVRTC_CUBIN || c->path == CUDA_PATH_NVRTC_PTX) {
        const struct cuda_nvrtc *n = &d->probe->nvrtc[c->nvrtc];
        snprintf(d->path_detail, sizeof d->path_detail, "NVRTC %d.%d %s for %s_%d", n->major, n->minor,
                 c->path == CUDA_PATH_NVRTC_CUBIN ? "cubin" : "PTX",
                 c->path == CUDA_PATH_NVRTC_CUBIN ? "sm" : "compute", c->arch);
        if (load_nvrtc(d, c, why, sizeof why)) {
            d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: kernels: %s (%s)", d->gpu.name, d->path_detail,
                            c->reason);
            return EMBER_OK;
        }
        if (d->probe->forced)
            return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE, "%s: %s failed and EMBER_CUDA_KERNELS=%s: %s",
                                    d->gpu.name, d->path_detail, d->probe->forced, why);
        d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_WARN, "%s: %s failed (%s); using the built-in sm_30 PTX instead",
                        d->gpu.name, d->path_detail, why);
    } else if (c->path != CUDA_PATH_BASELINE_PTX) {
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE, "%s (%s) cannot be used: %s", d->gpu.name,
                                g->name, c->reason);
    }
    d->path = CUDA_PATH_BASELINE_PTX;
    snprintf(d->path_detail, sizeof d->path_detail, "built-in sm_30 PTX");
    if (!module_load(d, cuda_baseline_ptx(), why, sizeof why))
        return d->gpu.host.fail(d->gpu.host.ctx, EMBER_ERR_DEVICE,
                                "%s (%s, sm_%d, driver CUDA %d.%d): no way to load ember's kernels: %s", d->gpu.name,
                                g->name, g->cc, d->probe->driver_version / 1000, d->probe->driver_version % 1000 / 10,
                                why);
    d->gpu.tuning = ember_kernel_tuning_default(); /* what the built-in PTX was compiled with */
    d->gpu.host.log(d->gpu.host.ctx, EMBER_LOG_INFO, "%s: kernels: the built-in sm_30 PTX (%s)", d->gpu.name,
                    c->path == CUDA_PATH_BASELINE_PTX ? c->reason : "NVRTC's failed");
    return EMBER_OK;
}

void cuda_module_close(struct cuda_device *d)
{
    module_unload(d);
}
