/* SPDX-License-Identifier: MIT */
/*
 * backends/opencl/opencl-impl.h — the OpenCL backend's insides.
 *
 * Two kinds of state:
 *   - the runtime (opencl-runtime.c): the OpenCL library, opened with
 *     dlopen, and the platforms and devices it reports. Found once per
 *     process, the first time any device is counted, and read-only after;
 *     it is the backend's only process-wide state.
 *   - a device (struct opencl_device), one per context that opens it: an
 *     OpenCL context, an in-order queue, the program built for the device
 *     and a cl_kernel for each entry of EMBER_KERNEL_LIST.
 *
 * Memory: a buffer from alloc is a cl_mem; an ember_ptr's offset is passed
 * to each kernel as an int beside the buffer. What each primitive launches
 * is decided once for every GPU backend (backends/kernels/gpu.h); this
 * backend only says how to launch on OpenCL (opencl_launch in opencl.c).
 */
#ifndef EMBER_OPENCL_IMPL_H
#define EMBER_OPENCL_IMPL_H

#include "../kernels/gpu.h"
#include "opencl-api.h"

#define OPENCL_MAX_DEVICES 64

/* What enumeration found about one device. */
struct opencl_device_info {
    cl_platform_id platform;
    cl_device_id id;
    char name[128], vendor[128], driver_version[64], version[128];
    char platform_name[128], platform_version[128];
    cl_device_type type;
    cl_uint compute_units;
    cl_ulong global_mem, max_alloc, local_mem;
    size_t max_work_group, max_item_size[3];
    cl_bool available, compiler_available;
};

struct opencl_runtime {
    struct opencl_api cl;
    const char *library; /* the name it was opened by */
    int count;           /* devices, over all platforms */
    struct opencl_device_info devices[OPENCL_MAX_DEVICES];
    char why[512];   /* when count is 0: why, and the fix */
    char notes[512]; /* platforms without devices, and devices past the limit */
};

/* The runtime, found on the first call; NULL when there is no usable
 * OpenCL library (runtime_why says why). Never NULL once count > 0. */
const struct opencl_runtime *opencl_runtime_get(void);
const char *opencl_runtime_why(void);

/* What "auto" remembers (opencl-auto.c): skip is true, with the reason,
 * when an earlier run on this machine's drivers found no device auto
 * would take; remember records what an enumeration found. */
bool opencl_auto_skip(char *why, size_t why_len);
void opencl_auto_remember(const struct opencl_runtime *rt, int count);
/* "CL_OUT_OF_RESOURCES", or "unknown OpenCL error -1234" (in a static buffer) */
const char *opencl_error_name(cl_int err);

/* A device: what every GPU backend holds (the shared launch plans of
 * backends/kernels/gpu.h run on it), then OpenCL's own. */
struct opencl_device {
    struct ember_gpu gpu;
    int index; /* in opencl:N */
    const struct opencl_device_info *info;
    const struct opencl_api *cl;
    cl_context context;
    cl_command_queue queue;
    bool profiling; /* the queue times its commands; each launch waits and reports */
    cl_program program;
    cl_kernel kernels[EMBER_KERNEL_COUNT];
};

/* Builds (or loads from the cache) the program and makes its kernels:
 * opencl-program.c. */
ember_status opencl_program_open(struct opencl_device *d);
void opencl_program_close(struct opencl_device *d);

/* Reports a failed OpenCL call: "opencl:0: <what> failed: CL_...". */
ember_status opencl_fail(struct opencl_device *d, cl_int err, const char *what, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* EMBER_OPENCL_IMPL_H */
