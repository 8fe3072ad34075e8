/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-api.h — the CUDA driver and NVRTC functions ember
 * calls, declared here rather than taken from the toolkit.
 *
 * Why our own declarations: building ember must need nothing from CUDA,
 * and the toolkit's cuda.h renames functions (cuCtxCreate becomes
 * cuCtxCreate_v4 in CUDA 13) to versions that old drivers do not export.
 * Each function is named here with the exact symbol every driver since
 * CUDA 4 exports (the _v2 names; cuDevicePrimaryCtxRelease unversioned,
 * as R418 has no _v2 of it and newer drivers keep the old name), in one
 * X-macro list per library. The list
 * expands into a struct of function pointers and into the loop that looks
 * the symbols up (cuda-probe.c), so each function is written once.
 *
 * Types and constants are the documented values of the driver API.
 */
#ifndef EMBER_CUDA_API_H
#define EMBER_CUDA_API_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUjit_option;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_CONTAINED = 226,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
    CUDA_ERROR_UNKNOWN = 999,
};

enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_INTEGRATED = 18, /* 1: the GPU's memory is the host's (a Jetson) */
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
};

enum {
    CU_MEM_ATTACH_GLOBAL = 1, /* cuMemAllocManaged: any stream may use it */
};

enum {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

/* The driver API: X(return type, symbol, parameters). */
#define CUDA_DRIVER_FUNCTIONS(X)                                                                             \
    X(CUresult, cuInit, (unsigned int flags))                                                                \
    X(CUresult, cuDriverGetVersion, (int *version))                                                          \
    X(CUresult, cuDeviceGetCount, (int *count))                                                              \
    X(CUresult, cuDeviceGet, (CUdevice * device, int ordinal))                                               \
    X(CUresult, cuDeviceGetName, (char *name, int len, CUdevice device))                                     \
    X(CUresult, cuDeviceGetAttribute, (int *value, int attribute, CUdevice device))                          \
    X(CUresult, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice device))                                      \
    X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice device))                                \
    X(CUresult, cuDevicePrimaryCtxRelease, (CUdevice device))                                                \
    X(CUresult, cuCtxSetCurrent, (CUcontext ctx))                                                            \
    X(CUresult, cuCtxSynchronize, (void))                                                                    \
    X(CUresult, cuMemGetInfo_v2, (size_t * free_bytes, size_t * total_bytes))                                \
    X(CUresult, cuMemAlloc_v2, (CUdeviceptr * ptr, size_t bytes))                                            \
    X(CUresult, cuMemFree_v2, (CUdeviceptr ptr))                                                             \
    X(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void *src, size_t bytes))                           \
    X(CUresult, cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes))                                 \
    X(CUresult, cuModuleLoadDataEx,                                                                          \
      (CUmodule * module, const void *image, unsigned int count, CUjit_option *options, void **values))      \
    X(CUresult, cuModuleUnload, (CUmodule module))                                                           \
    X(CUresult, cuModuleGetFunction, (CUfunction * function, CUmodule module, const char *name))             \
    X(CUresult, cuModuleGetGlobal_v2,                                                                        \
      (CUdeviceptr * ptr, size_t * bytes, CUmodule module, const char *name))                                \
    X(CUresult, cuFuncGetAttribute, (int *value, int attribute, CUfunction function))                        \
    X(CUresult, cuLaunchKernel,                                                                              \
      (CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,    \
       unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, CUstream stream,               \
       void **params, void **extra))                                                                         \
    X(CUresult, cuEventCreate, (CUevent * event, unsigned int flags))                                        \
    X(CUresult, cuEventRecord, (CUevent event, CUstream stream))                                             \
    X(CUresult, cuEventSynchronize, (CUevent event))                                                         \
    X(CUresult, cuEventElapsedTime, (float *ms, CUevent start, CUevent end))                                 \
    X(CUresult, cuEventDestroy_v2, (CUevent event))

/* Not in every driver, or not in every test double; NULL where absent.
 * cuFuncGetParamInfo: CUDA 12.4 and later. cuMemAllocManaged: every
 * driver ember runs on (CUDA 6.0 on), used on integrated GPUs alone. */
#define CUDA_DRIVER_OPTIONAL_FUNCTIONS(X)                                                                    \
    X(CUresult, cuFuncGetParamInfo, (CUfunction function, size_t index, size_t * offset, size_t * size))     \
    X(CUresult, cuMemAllocManaged, (CUdeviceptr * ptr, size_t bytes, unsigned int flags))

/* NVRTC's result codes are small integers; its own nvrtcGetErrorString names them. */
typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

#define NVRTC_FUNCTIONS(X)                                                                                   \
    X(nvrtcResult, nvrtcVersion, (int *major, int *minor))                                                   \
    X(const char *, nvrtcGetErrorString, (nvrtcResult result))                                               \
    X(nvrtcResult, nvrtcCreateProgram,                                                                       \
      (nvrtcProgram * program, const char *source, const char *name, int headers,                            \
       const char *const *header_sources, const char *const *header_names))                                  \
    X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram * program))                                            \
    X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram program, int count, const char *const *options))       \
    X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram program, size_t * bytes))                           \
    X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram program, char *log))                                    \
    X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram program, size_t * bytes))                                  \
    X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram program, char *ptx))

/* In newer NVRTCs only: cubins from 11.1, the list of archs from 11.2.
 * Looked up the same way; NULL where absent. */
#define NVRTC_OPTIONAL_FUNCTIONS(X)                                                                          \
    X(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram program, size_t * bytes))                                \
    X(nvrtcResult, nvrtcGetCUBIN, (nvrtcProgram program, char *cubin))                                       \
    X(nvrtcResult, nvrtcGetNumSupportedArchs, (int *count))                                                  \
    X(nvrtcResult, nvrtcGetSupportedArchs, (int *archs))

#define CUDA_DECLARE_POINTER(ret, name, params) ret(*name) params;

struct cuda_driver_api {
    CUDA_DRIVER_FUNCTIONS(CUDA_DECLARE_POINTER)
    CUDA_DRIVER_OPTIONAL_FUNCTIONS(CUDA_DECLARE_POINTER)
};

struct nvrtc_api {
    NVRTC_FUNCTIONS(CUDA_DECLARE_POINTER)
    NVRTC_OPTIONAL_FUNCTIONS(CUDA_DECLARE_POINTER)
};

#endif /* EMBER_CUDA_API_H */
