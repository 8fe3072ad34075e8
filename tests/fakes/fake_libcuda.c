/*
 * tests/fakes/fake_libcuda.c — a stand-in for libcuda.so.1, so that the
 * CUDA backend's probe, diagnosis and device selection run, on a machine
 * without a GPU, through the very code paths a real machine takes.
 *
 * Loaded through EMBER_CUDA_LIBRARY. It answers from the environment:
 *   EMBER_FAKE_CUDA_INIT     what cuInit returns (default 0; 34 is the stub's answer)
 *   EMBER_FAKE_CUDA_DRIVER   cuDriverGetVersion (default 12020, CUDA 12.2)
 *   EMBER_FAKE_CUDA_GPUS     "cc:name,cc:name" (default "35:Fake Tesla K40m")
 * Memory is host memory, so allocations and copies work; it runs no
 * kernels: loading a module answers CUDA_ERROR_NOT_SUPPORTED (801), which
 * is how a device it pretends to have fails to open.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static const char *gpu_spec(int index, int *cc, char *name, int len)
{
    const char *spec = getenv("EMBER_FAKE_CUDA_GPUS");
    if (!spec)
        spec = "35:Fake Tesla K40m";
    for (int i = 0; *spec; i++) {
        const char *end = strchr(spec, ',');
        size_t n = end ? (size_t)(end - spec) : strlen(spec);
        if (i == index) {
            *cc = atoi(spec);
            const char *colon = memchr(spec, ':', n);
            size_t name_len = colon ? n - (size_t)(colon + 1 - spec) : 0;
            if (name_len >= (size_t)len)
                name_len = (size_t)len - 1;
            memcpy(name, colon ? colon + 1 : "", name_len);
            name[name_len] = '\0';
            return spec;
        }
        if (!end)
            break;
        spec = end + 1;
    }
    return NULL;
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

CUresult cuInit(unsigned int flags) { (void)flags; return env_int("EMBER_FAKE_CUDA_INIT", 0); }
CUresult cuDriverGetVersion(int *v) { *v = env_int("EMBER_FAKE_CUDA_DRIVER", 12020); return 0; }

CUresult cuDeviceGetCount(int *count)
{
    char name[256];
    int cc, n = 0;
    while (gpu_spec(n, &cc, name, sizeof name))
        n++;
    *count = n;
    return 0;
}

CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return 0; }

CUresult cuDeviceGetName(char *name, int len, int device)
{
    int cc;
    return gpu_spec(device, &cc, name, len) ? 0 : 101;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device)
{
    char name[256];
    int cc = 0;
    if (!gpu_spec(device, &cc, name, sizeof name))
        return 101;
    switch (attribute) {
    case 75: *value = cc / 10; break;        /* compute capability major */
    case 76: *value = cc % 10; break;        /* minor */
    case 16: *value = 15; break;             /* multiprocessors */
    case 1: *value = 1024; break;            /* threads per block */
    case 8: *value = 48 * 1024; break;       /* shared memory per block */
    default: *value = 0; break;
    }
    return 0;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int device) { (void)device; *bytes = (size_t)12 << 30; return 0; }
CUresult cuCtxCreate_v2(void **ctx, unsigned int flags, int device) { (void)flags, (void)device; *ctx = (void *)1; return 0; }
CUresult cuCtxDestroy_v2(void *ctx) { (void)ctx; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
CUresult cuCtxSynchronize(void) { return 0; }
CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total) { *free_bytes = (size_t)11 << 30; *total = (size_t)12 << 30; return 0; }

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    *ptr = (CUdeviceptr)(uintptr_t)p;
    return p ? 0 : 2;
}

CUresult cuMemFree_v2(CUdeviceptr ptr) { free((void *)(uintptr_t)ptr); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)(uintptr_t)dst, src, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (void *)(uintptr_t)src, n); return 0; }

CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t count)
{
    unsigned int *p = (unsigned int *)(uintptr_t)dst;
    for (size_t i = 0; i < count; i++)
        p[i] = value;
    return 0;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned int n, int *options, void **values)
{
    (void)module, (void)image, (void)n, (void)options, (void)values;
    return 801; /* CUDA_ERROR_NOT_SUPPORTED: a test double runs no kernels */
}

CUresult cuModuleUnload(void *module) { (void)module; return 0; }
CUresult cuModuleGetFunction(void **f, void *module, const char *name) { (void)f, (void)module, (void)name; return 500; }

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)params,
        (void)extra;
    return 801;
}
