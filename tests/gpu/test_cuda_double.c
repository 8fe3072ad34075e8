/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_cuda_double.c — the CUDA test double (tests/gpu/fakes) catches
 * what a real driver would, so that the CUDA tests run through it can
 * fail. It is used here directly, through the driver API, as ember uses a
 * driver:
 *
 *   - modules: PTX of a newer ISA than the driver loads, PTX for a newer
 *     arch than the GPU, a cubin for another arch, a cubin from a newer
 *     toolkit than the driver (cubins from the NVRTCs found; skipped
 *     without one), a module with no tuning the double can run;
 *   - launches: too few or too many arguments, a grid or a block past the
 *     limits, a block over the kernel's own limit, a function of an
 *     unloaded module;
 *   - memory: copies past an allocation or from freed memory, a free of
 *     what is not an allocation, more memory than the GPU has;
 *   - faults: a kernel writing past a buffer, and a kernel given freed
 *     memory, are CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronisation,
 *     and every call after it fails the same way; a fault of the display
 *     watchdog;
 *   - streams and events: recorded in order, timed, queried.
 *
 *   test_cuda_double FAKE_LIBCUDA
 */
#include <stdlib.h>
#include <string.h>

#include "../../backends/cuda/cuda-impl.h"
#include "platform.h"
#include "test-util.h"

typedef struct CUevent_st *CUevent;

/* the driver API as the test calls it: X(return, name, parameters) */
#define DOUBLE_API(X)                                                                                        \
    X(CUresult, cuInit, (unsigned int))                                                                      \
    X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                                           \
    X(CUresult, cuDevicePrimaryCtxRelease, (CUdevice))                                                       \
    X(CUresult, cuCtxSetCurrent, (CUcontext))                                                                \
    X(CUresult, cuCtxSynchronize, (void))                                                                    \
    X(CUresult, cuMemAlloc_v2, (CUdeviceptr *, size_t))                                                      \
    X(CUresult, cuMemFree_v2, (CUdeviceptr))                                                                 \
    X(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t))                                        \
    X(CUresult, cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t))                                              \
    X(CUresult, cuModuleLoadDataEx, (CUmodule *, const void *, unsigned int, CUjit_option *, void **))       \
    X(CUresult, cuModuleUnload, (CUmodule))                                                                  \
    X(CUresult, cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                                 \
    X(CUresult, cuFuncGetParamInfo, (CUfunction, size_t, size_t *, size_t *))                                \
    X(CUresult, cuLaunchKernel,                                                                              \
      (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **,  \
       void **))                                                                                             \
    X(CUresult, cuStreamCreate, (CUstream *, unsigned int))                                                  \
    X(CUresult, cuStreamDestroy_v2, (CUstream))                                                              \
    X(CUresult, cuEventCreate, (CUevent *, unsigned int))                                                    \
    X(CUresult, cuEventRecord, (CUevent, CUstream))                                                          \
    X(CUresult, cuEventSynchronize, (CUevent))                                                               \
    X(CUresult, cuEventQuery, (CUevent))                                                                     \
    X(CUresult, cuEventElapsedTime, (float *, CUevent, CUevent))                                             \
    X(CUresult, cuEventDestroy_v2, (CUevent))

#define API_POINTER(ret, name, params) static ret(*name) params;
DOUBLE_API(API_POINTER)

/* the GPUs the double pretends to have: device 0 a K40m, device 1 an H100 */
#define GPUS "35:Tesla K40m (test),90:H100 (test)"

static char jit_log[1024];

static CUresult load(CUmodule *m, const void *image)
{
    CUjit_option options[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[2] = {jit_log, (void *)(size_t)sizeof jit_log};
    jit_log[0] = '\0';
    return cuModuleLoadDataEx(m, image, 2, options, values);
}

/* the built-in PTX with one line changed */
static char *baseline_with(const char *from, const char *to)
{
    const char *ptx = cuda_baseline_ptx(), *at = strstr(ptx, from);
    char *out = malloc(strlen(ptx) + strlen(to) + 1);
    if (!at || !out) {
        free(out);
        return NULL;
    }
    size_t head = (size_t)(at - ptx);
    memcpy(out, ptx, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

/* fill(out, out_off, n, value, first): the launch ember makes, with a NULL after the arguments */
static CUresult fill(CUfunction f, CUdeviceptr out, int n, unsigned groups, unsigned block)
{
    int off = 0, first = 0;
    float value = 1.5f;
    void *params[] = {&out, &off, &n, &value, &first, NULL};
    return cuLaunchKernel(f, groups, 1, 1, block, 1, 1, 0, NULL, params, NULL);
}

static void check_modules(CUcontext k40, CUcontext h100)
{
    CUmodule m;
    cuCtxSetCurrent(k40);
    CHECK(load(&m, cuda_baseline_ptx()) == CUDA_SUCCESS, "the built-in PTX: %s", jit_log);
    cuModuleUnload(m);

    char *ptx = baseline_with("\n.version 3.2\n", "\n.version 9.0\n");
    CHECK(ptx && load(&m, ptx) == CUDA_ERROR_UNSUPPORTED_PTX_VERSION &&
              strstr(jit_log, "Unsupported .version 9.0"),
          "PTX 9.0 on a CUDA 12.2 driver: \"%s\"", jit_log);
    free(ptx);
    ptx = baseline_with("\n.target sm_30\n", "\n.target sm_90\n");
    CHECK(ptx && load(&m, ptx) == 218 && strstr(jit_log, "sm_90"), "PTX for sm_90 on an sm_35 GPU: \"%s\"",
          jit_log);
    free(ptx);
    ptx = baseline_with("ember_tuning", "other_name");
    CHECK(ptx && load(&m, ptx) == 801 && strstr(jit_log, "ember_tuning"), "PTX without a tuning: \"%s\"",
          jit_log);
    free(ptx);

    /* cubins, from the NVRTCs this machine has */
    const struct cuda_probe *p = cuda_probe();
    if (p->nvrtc_count == 0)
        printf("note: no NVRTC found: the cubin checks were not run\n");
    for (int i = 0; i < p->nvrtc_count; i++) {
        const struct cuda_nvrtc *n = &p->nvrtc[i];
        if (!n->cubin)
            continue;
        int arch = n->archs[n->arch_count - 1] >= 90 ? 90 : 0;
        bool has35 = n->archs[0] <= 35;
        struct ember_kernel_tuning t = ember_kernel_tuning_default();
        size_t size;
        char why[2048];
        if (arch) {
            unsigned char *cubin = cuda_nvrtc_compile(n, 90, true, &t, &size, why, sizeof why);
            CHECK(cubin != NULL, "NVRTC %d.%d: %s", n->major, n->minor, why);
            cuCtxSetCurrent(k40);
            CHECK(cubin && load(&m, cubin) == 209, "NVRTC %d.%d's sm_90 cubin on an sm_35 GPU: \"%s\"",
                  n->major, n->minor, jit_log);
            cuCtxSetCurrent(h100);
            ember_set_env("EMBER_FAKE_CUDA_DRIVER", "10010");
            CHECK(cubin && load(&m, cubin) == CUDA_ERROR_UNSUPPORTED_PTX_VERSION &&
                      strstr(jit_log, "made by CUDA"),
                  "NVRTC %d.%d's cubin on a CUDA 10.1 driver: \"%s\"", n->major, n->minor, jit_log);
            ember_set_env("EMBER_FAKE_CUDA_DRIVER", "13000");
            CHECK(cubin && load(&m, cubin) == CUDA_SUCCESS,
                  "NVRTC %d.%d's cubin for sm_90 on an H100: \"%s\"", n->major, n->minor, jit_log);
            if (cubin)
                cuModuleUnload(m);
            ember_set_env("EMBER_FAKE_CUDA_DRIVER", "12020");
            printf("NVRTC %d.%d's cubin: refused for another arch and by an older driver, taken by its own\n",
                   n->major, n->minor);
            free(cubin);
        }
        if (has35) {
            unsigned char *cubin = cuda_nvrtc_compile(n, 35, true, &t, &size, why, sizeof why);
            cuCtxSetCurrent(k40);
            CHECK(cubin && load(&m, cubin) == CUDA_SUCCESS, "NVRTC %d.%d's sm_35 cubin on a K40m: \"%s\"",
                  n->major, n->minor, jit_log);
            if (cubin)
                cuModuleUnload(m);
            free(cubin);
        }
    }
    cuCtxSetCurrent(k40);
}

static void check_launches(CUfunction f, CUdeviceptr buf)
{
    int off = 0, n = 64, first = 0;
    float value = 2.0f;
    void *too_few[] = {&buf, &off, &n, &value, NULL};
    void *too_many[] = {&buf, &off, &n, &value, &first, &first, NULL};
    CHECK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, too_few, NULL) == CUDA_ERROR_INVALID_VALUE,
          "a launch with an argument missing");
    CHECK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, too_many, NULL) == CUDA_ERROR_INVALID_VALUE,
          "a launch with an argument too many");
    void *right[] = {&buf, &off, &n, &value, &first, NULL};
    CHECK(cuLaunchKernel(f, 1, 70000, 1, 64, 1, 1, 0, NULL, right, NULL) == CUDA_ERROR_INVALID_VALUE,
          "a grid of 70000 along y");
    CHECK(cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, right, NULL) == CUDA_ERROR_INVALID_VALUE,
          "blocks of 2048");
    CHECK(fill(f, buf, 64, 1, 64) == CUDA_SUCCESS, "a good launch");
    CHECK(cuCtxSynchronize() == CUDA_SUCCESS, "after a good launch");
    float back[64];
    CHECK(cuMemcpyDtoH_v2(back, buf, sizeof back) == CUDA_SUCCESS && back[0] == 1.5f && back[63] == 1.5f,
          "the kernel ran: %g %g", back[0], back[63]);

    size_t offset = 0, size = 0;
    CHECK(cuFuncGetParamInfo(f, 4, &offset, &size) == CUDA_SUCCESS && offset == 20 && size == 4,
          "fill's fifth argument at %zu, %zu bytes", offset, size);
    CHECK(cuFuncGetParamInfo(f, 5, &offset, &size) == CUDA_ERROR_INVALID_VALUE, "fill has no sixth argument");
}

static void check_memory(CUdeviceptr buf)
{
    float data[65] = {0};
    CHECK(cuMemcpyHtoD_v2(buf, data, 64 * sizeof(float)) == CUDA_SUCCESS, "a copy of the whole allocation");
    CHECK(cuMemcpyHtoD_v2(buf, data, 65 * sizeof(float)) == CUDA_ERROR_INVALID_VALUE,
          "a copy one float past it");
    CHECK(cuMemcpyDtoH_v2(data, buf + 4, 64 * sizeof(float)) == CUDA_ERROR_INVALID_VALUE,
          "a copy from 4 bytes in");
    CHECK(cuMemFree_v2(buf + 4) == CUDA_ERROR_INVALID_VALUE, "freeing what is not an allocation's start");
    CUdeviceptr huge = 0;
    CHECK(cuMemAlloc_v2(&huge, (size_t)1 << 40) == CUDA_ERROR_OUT_OF_MEMORY, "a terabyte");
    CUdeviceptr gone = 0;
    CHECK(cuMemAlloc_v2(&gone, 256) == CUDA_SUCCESS && cuMemFree_v2(gone) == CUDA_SUCCESS, "alloc and free");
    CHECK(cuMemcpyDtoH_v2(data, gone, 16) == CUDA_ERROR_INVALID_VALUE, "a copy from freed memory");
}

static void check_streams_and_events(CUfunction f, CUdeviceptr buf)
{
    CUstream s;
    CUevent start, end, never;
    CHECK(cuStreamCreate(&s, 0) == CUDA_SUCCESS && cuEventCreate(&start, 0) == CUDA_SUCCESS &&
              cuEventCreate(&end, 0) == CUDA_SUCCESS && cuEventCreate(&never, 0) == CUDA_SUCCESS,
          "streams and events");
    float ms = -1.0f;
    CHECK(cuEventRecord(start, s) == CUDA_SUCCESS, "record");
    CHECK(fill(f, buf, 64, 1, 64) == CUDA_SUCCESS, "a launch between events");
    CHECK(cuEventRecord(end, s) == CUDA_SUCCESS, "record");
    CHECK(cuEventSynchronize(end) == CUDA_SUCCESS && cuEventQuery(end) == CUDA_SUCCESS, "synchronize, query");
    CHECK(cuEventElapsedTime(&ms, start, end) == CUDA_SUCCESS && ms >= 0.0f, "elapsed %g ms", ms);
    CHECK(cuEventElapsedTime(&ms, start, never) == 400, "elapsed time to an event never recorded");
    cuEventDestroy_v2(start);
    cuEventDestroy_v2(end);
    cuEventDestroy_v2(never);
    cuStreamDestroy_v2(s);
}

/* A fault is sticky: reported at the next synchronisation, then by every call. */
static void check_fault(CUfunction f, CUdeviceptr buf, const char *what, CUresult want)
{
    CUdeviceptr other = 0;
    CHECK(cuCtxSynchronize() == want, "%s: not reported at the next synchronisation", what);
    CHECK(cuMemAlloc_v2(&other, 64) == want, "%s: an allocation after it does not fail the same way", what);
    CHECK(fill(f, buf, 64, 1, 64) == want, "%s: a launch after it does not fail the same way", what);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cuda_double FAKE_LIBCUDA\n");
        return 2;
    }
    ember_set_env("EMBER_CUDA_LIBRARY", argv[1]);
    ember_set_env("EMBER_FAKE_CUDA_GPUS", GPUS);
    ember_set_env("EMBER_FAKE_CUDA_DRIVER", "12020");
    ember_set_env("EMBER_FAKE_CUDA_MEMORY", "1024");
    char why[512];
    void *lib = ember_library_open(argv[1], why, sizeof why);
    if (!lib) {
        fprintf(stderr, "cannot open %s: %s\n", argv[1], why);
        return 1;
    }
#define API_LOOKUP(ret, name, params)                                                                        \
    if (!(name = (ret(*) params)ember_library_symbol(lib, #name))) {                                         \
        fprintf(stderr, "the double has no %s\n", #name);                                                    \
        return 1;                                                                                            \
    }
    DOUBLE_API(API_LOOKUP)
    CUcontext k40, h100;
    CHECK(cuInit(0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&k40, 0) == CUDA_SUCCESS &&
              cuDevicePrimaryCtxRetain(&h100, 1) == CUDA_SUCCESS,
          "the double's two GPUs");
    check_modules(k40, h100);

    /* a kernel the double runs, with a block limit of its own */
    ember_set_env("EMBER_FAKE_CUDA_MAX_THREADS", "fill=32");
    CUmodule m;
    CUfunction f;
    CUdeviceptr buf = 0;
    CHECK(load(&m, cuda_baseline_ptx()) == CUDA_SUCCESS && cuModuleGetFunction(&f, m, "fill") == CUDA_SUCCESS,
          "fill from the built-in PTX");
    CHECK(cuMemAlloc_v2(&buf, 64 * sizeof(float)) == CUDA_SUCCESS, "64 floats");
    CHECK(fill(f, buf, 64, 1, 64) == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "blocks of 64 where fill allows 32");
    cuModuleUnload(m);
    CHECK(fill(f, buf, 64, 1, 64) == 400, "a function of an unloaded module");
    ember_set_env("EMBER_FAKE_CUDA_MAX_THREADS", NULL);
    CHECK(load(&m, cuda_baseline_ptx()) == CUDA_SUCCESS && cuModuleGetFunction(&f, m, "fill") == CUDA_SUCCESS,
          "fill again");

    check_launches(f, buf);
    check_memory(buf);
    check_streams_and_events(f, buf);

    /* the watchdog of a display GPU stops a long kernel (on the K40m's context) */
    CUdeviceptr big = 0;
    int n = 1 << 24;
    CHECK(cuMemAlloc_v2(&big, (size_t)n * sizeof(float)) == CUDA_SUCCESS, "64 MiB");
    ember_set_env("EMBER_FAKE_CUDA_WATCHDOG_MS", "1");
    CHECK(fill(f, big, n, (unsigned)(n / 64), 64) == CUDA_SUCCESS, "a long launch goes");
    check_fault(f, buf, "the watchdog", CUDA_ERROR_LAUNCH_TIMEOUT);
    ember_set_env("EMBER_FAKE_CUDA_WATCHDOG_MS", NULL);

    /* a kernel writing past its buffer faults, on the other GPU */
    cuCtxSetCurrent(h100);
    CUmodule m2;
    CUfunction f2;
    CUdeviceptr small = 0, freed = 0;
    CHECK(load(&m2, cuda_baseline_ptx()) == CUDA_SUCCESS &&
              cuModuleGetFunction(&f2, m2, "fill") == CUDA_SUCCESS &&
              cuMemAlloc_v2(&small, 100 * sizeof(float)) == CUDA_SUCCESS,
          "the H100's module");
    CHECK(fill(f2, small, 101, 2, 64) == CUDA_SUCCESS, "a launch one float too long goes");
    check_fault(f2, small, "writing one float past a buffer", CUDA_ERROR_ILLEGAL_ADDRESS);

    /* freed memory given to a kernel faults too: on a fresh context */
    cuDevicePrimaryCtxRelease(1);
    CHECK(cuDevicePrimaryCtxRetain(&h100, 1) == CUDA_SUCCESS && cuCtxSetCurrent(h100) == CUDA_SUCCESS &&
              load(&m2, cuda_baseline_ptx()) == CUDA_SUCCESS &&
              cuModuleGetFunction(&f2, m2, "fill") == CUDA_SUCCESS,
          "a fresh context on the H100");
    CHECK(cuMemAlloc_v2(&freed, 256) == CUDA_SUCCESS && cuMemFree_v2(freed) == CUDA_SUCCESS, "memory freed");
    CHECK(fill(f2, freed, 64, 1, 64) == CUDA_SUCCESS, "a launch on freed memory goes");
    check_fault(f2, freed, "a kernel given freed memory", CUDA_ERROR_ILLEGAL_ADDRESS);
    cuDevicePrimaryCtxRelease(1);
    cuDevicePrimaryCtxRelease(0);
    return test_finish("test_cuda_double");
}
