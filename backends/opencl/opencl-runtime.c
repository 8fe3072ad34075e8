/* SPDX-License-Identifier: MIT */
/*
 * backends/opencl/opencl-runtime.c — the OpenCL library, opened at run time,
 * and the devices it reports.
 *
 * The library is the ICD loader, libOpenCL.so.1 (Debian's
 * ocl-icd-libopencl1), which finds the installed drivers through
 * /etc/OpenCL/vendors. EMBER_OPENCL_LIBRARY names another file to open
 * instead (a driver's own library, or a missing one, in tests). Nothing is
 * linked: a machine without OpenCL has zero OpenCL devices and says why.
 *
 * Devices are numbered across platforms in the order the library lists
 * them (platforms, then each platform's devices): opencl:N is the Nth.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits-impl.h"
#include "opencl-impl.h"
#include "platform.h"
#include "text-impl.h"

/* OpenCL's loader library (the ICD loader), and what to install when it
 * is missing: on Windows every GPU vendor's driver puts OpenCL.dll in
 * System32 */
#ifdef _WIN32
static const char *const loader_names[] = {"OpenCL.dll"};
static const char install_hint[] = "install the GPU's own driver (NVIDIA, AMD and Intel drivers all bring "
                                   "OpenCL.dll)";
#else
static const char *const loader_names[] = {"libOpenCL.so.1", "libOpenCL.so"};
static const char install_hint[] = "install an OpenCL driver (ocl-icd-libopencl1 and e.g. pocl-opencl-icd, "
                                   "mesa-opencl-icd, nvidia-opencl-icd)";
#endif

static struct opencl_runtime runtime;
static pthread_once_t runtime_once = PTHREAD_ONCE_INIT;

const char *opencl_error_name(cl_int err)
{
    switch (err) {
#define ERROR_CASE(name, value)                                                                              \
    case value: return #name;
        OPENCL_ERRORS(ERROR_CASE)
#undef ERROR_CASE
    }
    static _Thread_local char unknown[48];
    snprintf(unknown, sizeof unknown, "unknown OpenCL error %d", (int)err);
    return unknown;
}

/* in this file, not opencl.c, so that opencl-program.c's failures do not
 * call back into the table's file that calls it */
ember_status opencl_fail(struct opencl_device *d, cl_int err, const char *what, ...)
{
    char message[512];
    EMBER_FORMAT_ARGS(message, what);
    ember_status status = err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE
                              ? EMBER_ERR_NOMEM
                              : EMBER_ERR_DEVICE;
    return d->gpu.host.fail(d->gpu.host.ctx, status, "%s: %s failed: %s", d->gpu.name, message,
                            opencl_error_name(err));
}

/* Finds every function of OPENCL_FUNCTIONS in the library; false (and why)
 * at the first one missing. */
static bool opencl_runtime_lookup_functions(void *lib, const char *library, struct opencl_api *cl)
{
    static const struct {
        const char *name;
        size_t offset;
    } table[] = {
#define LOOKUP_ENTRY(ret, name, params) {#name, offsetof(struct opencl_api, name)},
        OPENCL_FUNCTIONS(LOOKUP_ENTRY)
#undef LOOKUP_ENTRY
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        void *sym = ember_library_symbol(lib, table[i].name);
        if (!sym) {
            snprintf(runtime.why, sizeof runtime.why, "%s is not an OpenCL 1.2 library: it lacks %s; %s",
                     library, table[i].name, install_hint);
            return false;
        }
        /* a data pointer to a function pointer, as POSIX allows for dlsym */
        memcpy((char *)cl + table[i].offset, &sym, sizeof sym);
    }
    return true;
}

/* A string query into a fixed buffer, "?" when the driver will not say. */
static void opencl_runtime_device_string(cl_device_id id, cl_device_info what, char *out, size_t len)
{
    if (runtime.cl.clGetDeviceInfo(id, what, len, out, NULL) != CL_SUCCESS)
        snprintf(out, len, "?");
    out[len - 1] = '\0';
}

static void opencl_runtime_platform_string(cl_platform_id id, cl_platform_info what, char *out, size_t len)
{
    if (runtime.cl.clGetPlatformInfo(id, what, len, out, NULL) != CL_SUCCESS)
        snprintf(out, len, "?");
    out[len - 1] = '\0';
}

/* Adds a sentence to runtime.notes, after a "; " when there is one before. */
/* adds to the notes on platforms without devices and devices past the limit */
#define opencl_runtime_add_note(...) ember_note_append(runtime.notes, sizeof runtime.notes, __VA_ARGS__)

/* Reads what ember needs to know about one device into the next slot. */
static void opencl_runtime_add_device(cl_platform_id platform, cl_device_id id, const char *platform_name,
                                      const char *platform_version)
{
    const struct opencl_api *cl = &runtime.cl;
    if (runtime.count == OPENCL_MAX_DEVICES) {
        opencl_runtime_add_note("devices past opencl:%d (on %s) are not used", OPENCL_MAX_DEVICES - 1,
                                platform_name);
        return;
    }
    struct opencl_device_info *info = &runtime.devices[runtime.count++];
    memset(info, 0, sizeof *info);
    info->platform = platform;
    info->id = id;
    snprintf(info->platform_name, sizeof info->platform_name, "%s", platform_name);
    snprintf(info->platform_version, sizeof info->platform_version, "%s", platform_version);
    opencl_runtime_device_string(id, CL_DEVICE_NAME, info->name, sizeof info->name);
    opencl_runtime_device_string(id, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
    opencl_runtime_device_string(id, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
    opencl_runtime_device_string(id, CL_DEVICE_VERSION, info->version, sizeof info->version);
    /* numbers a driver will not give stay 0, and the device then counts as small */
    cl->clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof info->type, &info->type, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof info->compute_units, &info->compute_units,
                        NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof info->global_mem, &info->global_mem, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof info->max_alloc, &info->max_alloc, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof info->local_mem, &info->local_mem, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info->max_work_group, &info->max_work_group,
                        NULL);
    /* the spec promises at least 3 dimensions; ask for exactly 3 */
    cl->clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof info->max_item_size, info->max_item_size,
                        NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_AVAILABLE, sizeof info->available, &info->available, NULL);
    cl->clGetDeviceInfo(id, CL_DEVICE_COMPILER_AVAILABLE, sizeof info->compiler_available,
                        &info->compiler_available, NULL);
}

static void opencl_runtime_enumerate(void)
{
    const struct opencl_api *cl = &runtime.cl;
    cl_platform_id platforms[16];
    cl_uint nplatforms = 0;
    cl_int err = cl->clGetPlatformIDs(16, platforms, &nplatforms);
    if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && nplatforms == 0)) {
        snprintf(runtime.why, sizeof runtime.why,
                 "%s found no OpenCL platform (no driver under /etc/OpenCL/vendors): %s", runtime.library,
                 install_hint);
        return;
    }
    if (err != CL_SUCCESS) {
        snprintf(runtime.why, sizeof runtime.why, "clGetPlatformIDs failed: %s", opencl_error_name(err));
        return;
    }
    if (nplatforms > 16)
        nplatforms = 16;
    for (cl_uint p = 0; p < nplatforms; p++) {
        char name[128], version[128];
        opencl_runtime_platform_string(platforms[p], CL_PLATFORM_NAME, name, sizeof name);
        opencl_runtime_platform_string(platforms[p], CL_PLATFORM_VERSION, version, sizeof version);
        cl_device_id ids[OPENCL_MAX_DEVICES];
        cl_uint nids = 0;
        err = cl->clGetDeviceIDs(platforms[p], OPENCL_DEVICE_TYPE_ALL, OPENCL_MAX_DEVICES, ids, &nids);
        if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && nids == 0)) {
            opencl_runtime_add_note("platform %s (%s) has no devices", name, version);
            continue;
        }
        if (err != CL_SUCCESS) {
            opencl_runtime_add_note("platform %s: clGetDeviceIDs failed: %s", name, opencl_error_name(err));
            continue;
        }
        for (cl_uint i = 0; i < nids && i < OPENCL_MAX_DEVICES; i++)
            opencl_runtime_add_device(platforms[p], ids[i], name, version);
    }
    if (runtime.count == 0)
        snprintf(runtime.why, sizeof runtime.why,
                 "no OpenCL devices: %.300s. The platform's driver sees no device: check that the card is "
                 "present and its kernel driver loaded (for PoCL, that POCL_DEVICES is unset)",
                 runtime.notes);
}

/* What OpenCL's drivers need to start: PoCL maps LLVM and reserves
 * arenas, and under a tighter address-space limit it aborts or crashes
 * inside its own start-up, which ember cannot catch. */
#define OPENCL_ADDRESS_SPACE ((uint64_t)1 << 30)

static void opencl_runtime_open(void)
{
    const char *override = getenv("EMBER_OPENCL_LIBRARY");
    void *lib = NULL;
    char limit[256];
    if (!ember_address_space_fits(OPENCL_ADDRESS_SPACE, limit, sizeof limit)) {
        snprintf(runtime.why, sizeof runtime.why,
                 "OpenCL was not started: %s for its drivers; raise the limit, "
                 "or use the device \"cpu\"",
                 limit);
        return;
    }
    if (override && *override) {
        runtime.library = override;
        char loader_why[256];
        if (!(lib = ember_library_open(override, loader_why, sizeof loader_why))) {
            snprintf(runtime.why, sizeof runtime.why,
                     "EMBER_OPENCL_LIBRARY=%s cannot be opened (%s); unset it or %s", override, loader_why,
                     install_hint);
            return;
        }
    } else {
        for (size_t i = 0; i < sizeof loader_names / sizeof loader_names[0] && !lib; i++)
            if ((lib = ember_library_open(loader_names[i], NULL, 0)))
                runtime.library = loader_names[i];
        if (!lib) {
            snprintf(runtime.why, sizeof runtime.why, "%s not found: %s", loader_names[0], install_hint);
            return;
        }
    }
    /* The library stays open for the life of the process: drivers start
     * threads and register handlers that a dlclose would pull the code
     * out from under. */
    if (opencl_runtime_lookup_functions(lib, runtime.library, &runtime.cl)) {
        opencl_runtime_enumerate();
        if (runtime.count > 0) /* an answer worth remembering: devices, of some kind */
            opencl_auto_remember(&runtime, runtime.count);
    }
}

const struct opencl_runtime *opencl_runtime_get(void)
{
    pthread_once(&runtime_once, opencl_runtime_open);
    return runtime.count > 0 ? &runtime : NULL;
}

const char *opencl_runtime_why(void)
{
    pthread_once(&runtime_once, opencl_runtime_open);
    return runtime.why;
}
