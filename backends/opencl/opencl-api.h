/* SPDX-License-Identifier: MIT */
/*
 * backends/opencl/opencl-api.h — the part of the OpenCL 1.2 API ember uses,
 * declared here so that building ember needs no OpenCL headers or library.
 *
 * The library is opened at run time (opencl-runtime.c); OPENCL_FUNCTIONS below
 * is the one list of the functions looked up in it, expanded into the
 * struct opencl_api of function pointers and into the lookup loop. Types and
 * constants keep the Khronos names and values, which are fixed by the ABI.
 *
 * tests/gpu/test_opencl_api.c includes Khronos's CL/cl.h first and this header
 * with OPENCL_API_CHECK defined: then every typedef is re-declared (C11 allows
 * that only for the same type), every constant becomes a static assertion
 * against the Khronos value, and every function type is compared with the
 * Khronos prototype. So a typo here fails that test's build.
 */
#ifndef EMBER_OPENCL_API_H
#define EMBER_OPENCL_API_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef float cl_float;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;
typedef cl_bitfield cl_device_type;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef intptr_t cl_context_properties;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_bitfield cl_mem_flags;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_kernel_work_group_info;
typedef cl_uint cl_profiling_info;

/* Error codes: the values and, for messages, the names. */
#define OPENCL_ERRORS(X)                                                                                     \
    X(CL_SUCCESS, 0)                                                                                         \
    X(CL_DEVICE_NOT_FOUND, -1)                                                                               \
    X(CL_DEVICE_NOT_AVAILABLE, -2)                                                                           \
    X(CL_COMPILER_NOT_AVAILABLE, -3)                                                                         \
    X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4)                                                                  \
    X(CL_OUT_OF_RESOURCES, -5)                                                                               \
    X(CL_OUT_OF_HOST_MEMORY, -6)                                                                             \
    X(CL_PROFILING_INFO_NOT_AVAILABLE, -7)                                                                   \
    X(CL_MEM_COPY_OVERLAP, -8)                                                                               \
    X(CL_IMAGE_FORMAT_MISMATCH, -9)                                                                          \
    X(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10)                                                                    \
    X(CL_BUILD_PROGRAM_FAILURE, -11)                                                                         \
    X(CL_MAP_FAILURE, -12)                                                                                   \
    X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13)                                                                  \
    X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14)                                                     \
    X(CL_COMPILE_PROGRAM_FAILURE, -15)                                                                       \
    X(CL_LINKER_NOT_AVAILABLE, -16)                                                                          \
    X(CL_LINK_PROGRAM_FAILURE, -17)                                                                          \
    X(CL_DEVICE_PARTITION_FAILED, -18)                                                                       \
    X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19)                                                                 \
    X(CL_INVALID_VALUE, -30)                                                                                 \
    X(CL_INVALID_DEVICE_TYPE, -31)                                                                           \
    X(CL_INVALID_PLATFORM, -32)                                                                              \
    X(CL_INVALID_DEVICE, -33)                                                                                \
    X(CL_INVALID_CONTEXT, -34)                                                                               \
    X(CL_INVALID_QUEUE_PROPERTIES, -35)                                                                      \
    X(CL_INVALID_COMMAND_QUEUE, -36)                                                                         \
    X(CL_INVALID_HOST_PTR, -37)                                                                              \
    X(CL_INVALID_MEM_OBJECT, -38)                                                                            \
    X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39)                                                               \
    X(CL_INVALID_IMAGE_SIZE, -40)                                                                            \
    X(CL_INVALID_SAMPLER, -41)                                                                               \
    X(CL_INVALID_BINARY, -42)                                                                                \
    X(CL_INVALID_BUILD_OPTIONS, -43)                                                                         \
    X(CL_INVALID_PROGRAM, -44)                                                                               \
    X(CL_INVALID_PROGRAM_EXECUTABLE, -45)                                                                    \
    X(CL_INVALID_KERNEL_NAME, -46)                                                                           \
    X(CL_INVALID_KERNEL_DEFINITION, -47)                                                                     \
    X(CL_INVALID_KERNEL, -48)                                                                                \
    X(CL_INVALID_ARG_INDEX, -49)                                                                             \
    X(CL_INVALID_ARG_VALUE, -50)                                                                             \
    X(CL_INVALID_ARG_SIZE, -51)                                                                              \
    X(CL_INVALID_KERNEL_ARGS, -52)                                                                           \
    X(CL_INVALID_WORK_DIMENSION, -53)                                                                        \
    X(CL_INVALID_WORK_GROUP_SIZE, -54)                                                                       \
    X(CL_INVALID_WORK_ITEM_SIZE, -55)                                                                        \
    X(CL_INVALID_GLOBAL_OFFSET, -56)                                                                         \
    X(CL_INVALID_EVENT_WAIT_LIST, -57)                                                                       \
    X(CL_INVALID_EVENT, -58)                                                                                 \
    X(CL_INVALID_OPERATION, -59)                                                                             \
    X(CL_INVALID_GL_OBJECT, -60)                                                                             \
    X(CL_INVALID_BUFFER_SIZE, -61)                                                                           \
    X(CL_INVALID_MIP_LEVEL, -62)                                                                             \
    X(CL_INVALID_GLOBAL_WORK_SIZE, -63)                                                                      \
    X(CL_INVALID_PROPERTY, -64)                                                                              \
    X(CL_INVALID_IMAGE_DESCRIPTOR, -65)                                                                      \
    X(CL_INVALID_COMPILER_OPTIONS, -66)                                                                      \
    X(CL_INVALID_LINKER_OPTIONS, -67)                                                                        \
    X(CL_INVALID_DEVICE_PARTITION_COUNT, -68)                                                                \
    X(CL_INVALID_PIPE_SIZE, -69)                                                                             \
    X(CL_INVALID_DEVICE_QUEUE, -70)                                                                          \
    X(CL_INVALID_SPEC_ID, -71)                                                                               \
    X(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72)                                                                 \
    X(CL_PLATFORM_NOT_FOUND_KHR, -1001) /* the ICD loader's: no platform installed */

/* The info queries and flags used. */
#define OPENCL_CONSTANTS(X)                                                                                  \
    X(CL_FALSE, 0)                                                                                           \
    X(CL_TRUE, 1)                                                                                            \
    X(CL_PLATFORM_VERSION, 0x0901)                                                                           \
    X(CL_PLATFORM_NAME, 0x0902)                                                                              \
    X(CL_PLATFORM_VENDOR, 0x0903)                                                                            \
    X(CL_DEVICE_TYPE, 0x1000)                                                                                \
    X(CL_DEVICE_MAX_COMPUTE_UNITS, 0x1002)                                                                   \
    X(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 0x1003)                                                            \
    X(CL_DEVICE_MAX_WORK_GROUP_SIZE, 0x1004)                                                                 \
    X(CL_DEVICE_MAX_WORK_ITEM_SIZES, 0x1005)                                                                 \
    X(CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0x1010)                                                                  \
    X(CL_DEVICE_GLOBAL_MEM_SIZE, 0x101F)                                                                     \
    X(CL_DEVICE_LOCAL_MEM_SIZE, 0x1023)                                                                      \
    X(CL_DEVICE_AVAILABLE, 0x1027)                                                                           \
    X(CL_DEVICE_COMPILER_AVAILABLE, 0x1028)                                                                  \
    X(CL_DEVICE_NAME, 0x102B)                                                                                \
    X(CL_DEVICE_VENDOR, 0x102C)                                                                              \
    X(CL_DRIVER_VERSION, 0x102D)                                                                             \
    X(CL_DEVICE_VERSION, 0x102F)                                                                             \
    X(CL_CONTEXT_PLATFORM, 0x1084)                                                                           \
    X(CL_PROGRAM_BINARY_SIZES, 0x1165)                                                                       \
    X(CL_PROGRAM_BINARIES, 0x1166)                                                                           \
    X(CL_PROGRAM_BUILD_LOG, 0x1183)                                                                          \
    X(CL_KERNEL_WORK_GROUP_SIZE, 0x11B0)                                                                     \
    X(CL_DEVICE_TYPE_CPU, (1 << 1))                                                                          \
    X(CL_DEVICE_TYPE_GPU, (1 << 2))                                                                          \
    X(CL_DEVICE_TYPE_ACCELERATOR, (1 << 3))                                                                  \
    X(CL_MEM_READ_WRITE, (1 << 0))                                                                           \
    X(CL_QUEUE_PROFILING_ENABLE, (1 << 1))                                                                   \
    X(CL_PROFILING_COMMAND_START, 0x1282)                                                                    \
    X(CL_PROFILING_COMMAND_END, 0x1283)

/* every device type; as a define, since it does not fit an int enum */
#define OPENCL_DEVICE_TYPE_ALL ((cl_device_type)0xFFFFFFFF)

/* The functions: return type, name, parameters. */
#define OPENCL_FUNCTIONS(X)                                                                                  \
    X(cl_int, clGetPlatformIDs, (cl_uint num_entries, cl_platform_id * platforms, cl_uint * num_platforms))  \
    X(cl_int, clGetPlatformInfo,                                                                             \
      (cl_platform_id platform, cl_platform_info name, size_t size, void *value, size_t *size_ret))          \
    X(cl_int, clGetDeviceIDs,                                                                                \
      (cl_platform_id platform, cl_device_type type, cl_uint num_entries, cl_device_id * devices,            \
       cl_uint * num_devices))                                                                               \
    X(cl_int, clGetDeviceInfo,                                                                               \
      (cl_device_id device, cl_device_info name, size_t size, void *value, size_t *size_ret))                \
    X(cl_context, clCreateContext,                                                                           \
      (const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,            \
       void (*notify)(const char *, const void *, size_t, void *), void *user, cl_int *err))                 \
    X(cl_int, clReleaseContext, (cl_context context))                                                        \
    X(cl_command_queue, clCreateCommandQueue,                                                                \
      (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int * err))       \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue queue))                                               \
    X(cl_mem, clCreateBuffer,                                                                                \
      (cl_context context, cl_mem_flags flags, size_t size, void *host, cl_int *err))                        \
    X(cl_int, clReleaseMemObject, (cl_mem mem))                                                              \
    X(cl_int, clEnqueueReadBuffer,                                                                           \
      (cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size, void *ptr,       \
       cl_uint num_events, const cl_event *wait_list, cl_event *event))                                      \
    X(cl_int, clEnqueueWriteBuffer,                                                                          \
      (cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size, const void *ptr, \
       cl_uint num_events, const cl_event *wait_list, cl_event *event))                                      \
    X(cl_program, clCreateProgramWithSource,                                                                 \
      (cl_context context, cl_uint count, const char **strings, const size_t *lengths, cl_int *err))         \
    X(cl_program, clCreateProgramWithBinary,                                                                 \
      (cl_context context, cl_uint num_devices, const cl_device_id *devices, const size_t *lengths,          \
       const unsigned char **binaries, cl_int *binary_status, cl_int *err))                                  \
    X(cl_int, clBuildProgram,                                                                                \
      (cl_program program, cl_uint num_devices, const cl_device_id *devices, const char *options,            \
       void (*notify)(cl_program, void *), void *user))                                                      \
    X(cl_int, clGetProgramInfo,                                                                              \
      (cl_program program, cl_program_info name, size_t size, void *value, size_t *size_ret))                \
    X(cl_int, clGetProgramBuildInfo,                                                                         \
      (cl_program program, cl_device_id device, cl_program_build_info name, size_t size, void *value,        \
       size_t *size_ret))                                                                                    \
    X(cl_int, clReleaseProgram, (cl_program program))                                                        \
    X(cl_kernel, clCreateKernel, (cl_program program, const char *name, cl_int *err))                        \
    X(cl_int, clReleaseKernel, (cl_kernel kernel))                                                           \
    X(cl_int, clSetKernelArg, (cl_kernel kernel, cl_uint index, size_t size, const void *value))             \
    X(cl_int, clGetKernelWorkGroupInfo,                                                                      \
      (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info name, size_t size, void *value,      \
       size_t *size_ret))                                                                                    \
    X(cl_int, clEnqueueNDRangeKernel,                                                                        \
      (cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,                     \
       const size_t *global, const size_t *local, cl_uint num_events, const cl_event *wait_list,             \
       cl_event *event))                                                                                     \
    X(cl_int, clFinish, (cl_command_queue queue))                                                            \
    X(cl_int, clFlush, (cl_command_queue queue))                                                             \
    X(cl_int, clWaitForEvents, (cl_uint num_events, const cl_event *events))                                 \
    X(cl_int, clGetEventProfilingInfo,                                                                       \
      (cl_event event, cl_profiling_info name, size_t size, void *value, size_t *size_ret))                  \
    X(cl_int, clReleaseEvent, (cl_event event))

#ifndef OPENCL_API_CHECK

#define OPENCL_ENUM_ENTRY(name, value) name = value,
enum { OPENCL_ERRORS(OPENCL_ENUM_ENTRY) OPENCL_CONSTANTS(OPENCL_ENUM_ENTRY) };
#undef OPENCL_ENUM_ENTRY

/* The library's functions, looked up by name. */
struct opencl_api {
#define OPENCL_POINTER_ENTRY(ret, name, params) ret(*name) params;
    OPENCL_FUNCTIONS(OPENCL_POINTER_ENTRY)
#undef OPENCL_POINTER_ENTRY
};

#else /* checking this header against Khronos's CL/cl.h, included before */

#define OPENCL_ASSERT_VALUE(name, value) _Static_assert((name) == (value), #name " differs from CL/cl.h");
OPENCL_ERRORS(OPENCL_ASSERT_VALUE)
OPENCL_CONSTANTS(OPENCL_ASSERT_VALUE)
OPENCL_ASSERT_VALUE(CL_DEVICE_TYPE_ALL, OPENCL_DEVICE_TYPE_ALL)
#undef OPENCL_ASSERT_VALUE
#define OPENCL_ASSERT_TYPE(ret, name, params)                                                                \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params),                           \
                   #name " differs from CL/cl.h");
OPENCL_FUNCTIONS(OPENCL_ASSERT_TYPE)
#undef OPENCL_ASSERT_TYPE

#endif /* OPENCL_API_CHECK */

#endif /* EMBER_OPENCL_API_H */
