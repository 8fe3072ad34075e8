/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-probe.c — the first look at the machine: the NVIDIA
 * driver, its GPUs, and every NVRTC that can be found.
 *
 * Nothing here is linked: libcuda.so.1 and each libnvrtc (nvcuda.dll and
 * nvrtc64_*.dll on Windows) are opened through base/platform.h and their functions looked up from the lists
 * in cuda-api.h. A machine without a driver, with only the toolkit's stub libcuda, or with no GPU simply has
 * no cuda devices, and `why` says which and what to do.
 *
 * Environment (for testing, teaching, and unusual installs):
 *   EMBER_CUDA_LIBRARY   the driver library to open instead of libcuda.so.1 (nvcuda.dll)
 *   EMBER_NVRTC          NVRTC libraries or folders holding them, ':' between (';' on Windows),
 *                        looked at before the usual places; "only:" before
 *                        the list looks nowhere else, and "none" nowhere at
 *                        all (as on a machine without any NVRTC)
 *   EMBER_CUDA_KERNELS   "nvrtc" (either NVRTC path), "nvrtc-cubin", "nvrtc-ptx" or
 *                        "baseline": only that kernel path
 *   EMBER_CUDA_MAX_PTX   "6.4": choose kernel paths as for the older driver that
 *                        loads PTX up to that version (R418 loads 6.4, R470 7.4):
 *                        its PTX limit and the cubins it takes; a newer GPU then
 *                        takes the path an old one would
 *   EMBER_CUDA_SYNC      "1": wait for every kernel, so a fault names its kernel
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-impl.h"
#include "platform.h"
#include "text-impl.h"

/* The driver's and NVRTC's files, and where CUDA toolkits install NVRTC:
 * on Linux libcuda.so.1 and libnvrtc.so.*; on Windows nvcuda.dll (in
 * System32, from the driver) and nvrtc64_*.dll, whose name changed with
 * each major version (11.2 to 11.8 share nvrtc64_112_0.dll), in a
 * toolkit's bin folder (bin/x64 from CUDA 13), found through CUDA_PATH. */
#ifdef _WIN32
#define CUDA_DRIVER_FILE  "nvcuda.dll"
#define NVRTC_FILE_PREFIX "nvrtc64_"
static const char *const nvrtc_names[] = {"nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll",
                                          "nvrtc64_111_0.dll", "nvrtc64_110_0.dll", "nvrtc64_102_0.dll",
                                          "nvrtc64_101_0.dll", "nvrtc64_100_0.dll"};
static const char *const toolkit_folders[] = {"$CUDA_PATH/bin", "$CUDA_PATH/bin/x64",
                                              "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v*"};
#define DRIVER_HINT                                                                                          \
    "Install NVIDIA's driver for the card from nvidia.com: a Kepler laptop (Quadro K2100M, GTX 660M) takes " \
    "R418 to R429 (CUDA 10.x), a desktop Kepler 472.xx (R470)"
#else
#define CUDA_DRIVER_FILE  "libcuda.so.1"
#define NVRTC_FILE_PREFIX "libnvrtc.so"
static const char *const nvrtc_names[] = {"libnvrtc.so",      "libnvrtc.so.13",   "libnvrtc.so.12",
                                          "libnvrtc.so.11.2", "libnvrtc.so.11.1", "libnvrtc.so.11.0",
                                          "libnvrtc.so.10.2", "libnvrtc.so.10.1", "libnvrtc.so.10.0"};
static const char *const toolkit_folders[] = {"/usr/local/cuda*/lib64", "/opt/cuda/lib64"};
#define DRIVER_HINT                                                                                          \
    "Install the NVIDIA driver (Debian: nvidia-driver; Kepler GPUs such as the K40m or Quadro K2100M need "  \
    "nvidia-tesla-470-driver)"
#endif

static struct cuda_probe probe;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT, driver_once = PTHREAD_ONCE_INIT;

/* --------------------------------------------------------------- the driver */

/* Looks up every symbol of a list; on a missing one names it in `missing`. */
#define LOOKUP_REQUIRED(ret, name, params)                                                                   \
    if (ok && !(api->name = (ret(*) params)ember_library_symbol(lib, #name))) {                              \
        snprintf(missing, missing_len, "%s", #name);                                                         \
        ok = false;                                                                                          \
    }
#define LOOKUP_OPTIONAL(ret, name, params) api->name = (ret(*) params)ember_library_symbol(lib, #name);

static bool driver_lookup(void *lib, struct cuda_driver_api *api, char *missing, size_t missing_len)
{
    bool ok = true;
    CUDA_DRIVER_FUNCTIONS(LOOKUP_REQUIRED)
    CUDA_DRIVER_OPTIONAL_FUNCTIONS(LOOKUP_OPTIONAL)
    return ok;
}

static bool nvrtc_lookup(void *lib, struct nvrtc_api *api, char *missing, size_t missing_len)
{
    bool ok = true;
    NVRTC_FUNCTIONS(LOOKUP_REQUIRED)
    NVRTC_OPTIONAL_FUNCTIONS(LOOKUP_OPTIONAL)
    return ok;
}

static void probe_driver(struct cuda_probe *p)
{
    const char *override = getenv("EMBER_CUDA_LIBRARY");
    const char *name = override && *override ? override : CUDA_DRIVER_FILE;
    char loader_why[512];
    p->driver_lib = ember_library_open(name, loader_why, sizeof loader_why);
    if (!p->driver_lib) {
        if (override && *override)
            snprintf(p->why, sizeof p->why, "cannot open %s (from EMBER_CUDA_LIBRARY): %s", name, loader_why);
        else
            snprintf(p->why, sizeof p->why,
                     CUDA_DRIVER_FILE " not found: no NVIDIA driver is installed. " DRIVER_HINT);
        return;
    }
    char missing[128];
    if (!driver_lookup(p->driver_lib, &p->api, missing, sizeof missing)) {
        snprintf(p->why, sizeof p->why, "%s has no %s: it is not an NVIDIA driver library, or far too old",
                 name, missing);
        return;
    }
    ember_library_file((const void *)p->api.cuInit, p->driver_path, sizeof p->driver_path);

    CUresult r = p->api.cuInit(0);
    if (r == CUDA_ERROR_STUB_LIBRARY) {
        snprintf(p->why, sizeof p->why,
                 "only the CUDA toolkit's stub libcuda was found (%s): cuInit returned 34 "
                 "(CUDA_ERROR_STUB_LIBRARY), which means no NVIDIA driver is installed. The stub is for "
                 "linking only; install the NVIDIA driver",
                 p->driver_path);
        return;
    }
    if (p->api.cuDriverGetVersion(&p->driver_version) != CUDA_SUCCESS)
        p->driver_version = 0;
    p->driver_ptx_isa = cuda_ptx_isa_of(p->driver_version);
    if (r == CUDA_ERROR_NO_DEVICE) {
        snprintf(p->why, sizeof p->why,
                 "the NVIDIA driver (CUDA %d.%d) found no GPU (CUDA_ERROR_NO_DEVICE): check that the card is "
                 "seated and that `nvidia-smi` lists it",
                 p->driver_version / 1000, p->driver_version % 1000 / 10);
        return;
    }
    if (r != CUDA_SUCCESS) {
        snprintf(p->why, sizeof p->why,
                 "cuInit failed with %s (%d): the driver in %s cannot start; if the driver was just updated, "
                 "reboot so that the kernel module matches it",
                 cuda_error_name(r), r, p->driver_path);
        return;
    }
    int count = 0;
    if ((r = p->api.cuDeviceGetCount(&count)) != CUDA_SUCCESS || count <= 0) {
        snprintf(p->why, sizeof p->why, "the NVIDIA driver reports no GPU (cuDeviceGetCount: %s)",
                 cuda_error_name(r));
        return;
    }
    p->driver_ok = true;
    p->gpu_count = count < CUDA_MAX_GPUS ? count : CUDA_MAX_GPUS;
    for (int i = 0; i < p->gpu_count; i++) {
        struct cuda_gpu *g = &p->gpus[i];
        CUdevice dev;
        int major = 0, minor = 0;
        if (p->api.cuDeviceGet(&dev, i) != CUDA_SUCCESS)
            continue;
        p->api.cuDeviceGetName(g->name, sizeof g->name, dev);
        p->api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        p->api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        p->api.cuDeviceGetAttribute(&g->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
        int integrated = 0;
        g->integrated =
            p->api.cuDeviceGetAttribute(&integrated, CU_DEVICE_ATTRIBUTE_INTEGRATED, dev) == CUDA_SUCCESS &&
            integrated == 1;
        /* for the profile's peak figures only; a driver that does not say leaves them unknown */
        if (p->api.cuDeviceGetAttribute(&g->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) != CUDA_SUCCESS)
            g->clock_khz = 0;
        if (p->api.cuDeviceGetAttribute(&g->memory_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) !=
                CUDA_SUCCESS ||
            p->api.cuDeviceGetAttribute(&g->bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev) !=
                CUDA_SUCCESS)
            g->memory_clock_khz = g->bus_bits = 0;
        p->api.cuDeviceGetAttribute(&g->max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                    dev);
        p->api.cuDeviceGetAttribute(&g->shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                                    dev);
        for (int d = 0; d < 3; d++)
            if (p->api.cuDeviceGetAttribute(&g->max_grid[d], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + d, dev) !=
                    0 ||
                g->max_grid[d] < 1)
                g->max_grid[d] = 65535; /* what every GPU from sm_30 up allows along y and z */
        p->api.cuDeviceTotalMem_v2(&g->memory, dev);
        g->cc = major * 10 + minor;
    }
}

/* ------------------------------------------------------------------ NVRTC */

/* The archs of an NVRTC too old to list them (nvrtcGetSupportedArchs came in 11.2). */
static int archs_by_version(int major, int minor, int *archs)
{
    static const int upto_10[] = {30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75};
    static const int cuda_11[] = {35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86};
    const int *list = major >= 11 ? cuda_11 : upto_10;
    int n = major >= 11 ? (minor >= 1 ? 13 : 12) : (major == 10 ? 13 : 11);
    for (int i = 0; i < n; i++)
        archs[i] = list[i];
    return n;
}

static int compare_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* adds to the notes on NVRTCs found but not usable */
#define note(p, ...) ember_note_append((p)->nvrtc_notes, sizeof(p)->nvrtc_notes, __VA_ARGS__)

/* Opens one candidate NVRTC; keeps it unless it is one already kept.
 * `explicit` candidates (from EMBER_NVRTC) report why they fail. */
static void try_nvrtc(struct cuda_probe *p, const char *name, bool explicit)
{
    if (p->nvrtc_count == CUDA_MAX_NVRTCS)
        return;
    char loader_why[512];
    void *lib = ember_library_open(name, loader_why, sizeof loader_why);
    if (!lib) {
        if (explicit)
            note(p, "cannot open %s: %s", name, loader_why);
        return;
    }
    struct cuda_nvrtc *n = &p->nvrtc[p->nvrtc_count];
    memset(n, 0, sizeof *n);
    char missing[128];
    if (!nvrtc_lookup(lib, &n->api, missing, sizeof missing)) {
        note(p, "%s has no %s", name, missing);
        ember_library_close(lib);
        return;
    }
    ember_library_file((const void *)n->api.nvrtcVersion, n->path, sizeof n->path);
    for (int i = 0; i < p->nvrtc_count; i++)
        if (strcmp(p->nvrtc[i].path, n->path) == 0) { /* the same file by another name */
            ember_library_close(lib);
            return;
        }
    if (n->api.nvrtcVersion(&n->major, &n->minor) != 0) {
        note(p, "%s: nvrtcVersion failed", n->path);
        ember_library_close(lib);
        return;
    }
    n->lib = lib;
    n->cubin = n->api.nvrtcGetCUBIN && n->api.nvrtcGetCUBINSize;
    n->ptx_isa = cuda_ptx_isa_of(n->major * 1000 + n->minor * 10);
    int count = 0;
    if (n->api.nvrtcGetNumSupportedArchs && n->api.nvrtcGetSupportedArchs &&
        n->api.nvrtcGetNumSupportedArchs(&count) == 0 && count > 0 && count <= CUDA_MAX_ARCHS)
        n->api.nvrtcGetSupportedArchs(n->archs);
    else
        count = archs_by_version(n->major, n->minor, n->archs);
    n->arch_count = count;
    qsort(n->archs, (size_t)count, sizeof *n->archs, compare_int);
    p->nvrtc_count++;
}

/* every libnvrtc.so* in a folder (not the builtins, not the .alt variant) */
static void try_nvrtc_folder(struct cuda_probe *p, const char *folder, bool explicit)
{
    DIR *d = opendir(folder);
    if (!d) {
        if (explicit)
            note(p, "cannot open the folder %s", folder);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, NVRTC_FILE_PREFIX, strlen(NVRTC_FILE_PREFIX)) != 0 ||
            strstr(e->d_name, ".alt."))
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        try_nvrtc(p, path, explicit);
    }
    closedir(d);
}

/* ember_each_match's callback: a toolkit's lib64 (Linux) or, on Windows,
 * a folder holding NVRTC, or a toolkit's version folder, whose NVRTC is in
 * bin/ (bin/x64 from CUDA 13) */
static void try_toolkit_folder(const char *folder, void *arg)
{
#ifdef _WIN32
    char bin[PATH_MAX];
    size_t n = strlen(folder);
    if (n > 4 && (strcmp(folder + n - 4, "/bin") == 0 || strcmp(folder + n - 4, "/x64") == 0)) {
        try_nvrtc_folder(arg, folder, false);
        return;
    }
    snprintf(bin, sizeof bin, "%s/bin", folder);
    try_nvrtc_folder(arg, bin, false);
    snprintf(bin, sizeof bin, "%s/bin/x64", folder);
    try_nvrtc_folder(arg, bin, false);
#else
    try_nvrtc_folder(arg, folder, false);
#endif
}

static int newest_first(const void *a, const void *b)
{
    const struct cuda_nvrtc *x = a, *y = b;
    return (y->major * 100 + y->minor) - (x->major * 100 + x->minor);
}

static void probe_nvrtc(struct cuda_probe *p)
{
    /* 1. what the user points at */
    const char *given = getenv("EMBER_NVRTC");
    if (given && strcmp(given, "none") == 0)
        return;
    bool only = given && strncmp(given, "only:", 5) == 0;
    if (only)
        given += 5;
    if (given && *given) {
        char *list = strdup(given), *save = NULL;
        for (char *item = list ? strtok_r(list, EMBER_PATH_LIST_SEPARATOR, &save) : NULL; item;
             item = strtok_r(NULL, EMBER_PATH_LIST_SEPARATOR, &save)) {
            DIR *d = opendir(item);
            if (d) {
                closedir(d);
                try_nvrtc_folder(p, item, true);
            } else {
                try_nvrtc(p, item, true);
            }
        }
        free(list);
    }
    if (only) {
        qsort(p->nvrtc, (size_t)p->nvrtc_count, sizeof *p->nvrtc, newest_first);
        return;
    }
    /* 2. the library search path, under every name NVRTC has had */
    for (size_t i = 0; i < sizeof nvrtc_names / sizeof nvrtc_names[0]; i++)
        try_nvrtc(p, nvrtc_names[i], false);
    /* 3. where toolkits install themselves */
    for (size_t i = 0; i < sizeof toolkit_folders / sizeof toolkit_folders[0]; i++) {
        char pattern[PATH_MAX];
        const char *folder = toolkit_folders[i], *cuda_path = getenv("CUDA_PATH");
        if (strncmp(folder, "$CUDA_PATH", 10) == 0) {
            if (!cuda_path || !*cuda_path)
                continue;
            snprintf(pattern, sizeof pattern, "%s%s", cuda_path, folder + 10);
            folder = pattern;
        }
        ember_each_match(folder, try_toolkit_folder, p);
    }
    qsort(p->nvrtc, (size_t)p->nvrtc_count, sizeof *p->nvrtc, newest_first);
}

/* ------------------------------------------------------------------ probe */

/* EMBER_CUDA_MAX_PTX: choose paths as for the driver that loads PTX up to that version */
static void probe_driver_as(struct cuda_probe *p)
{
    p->path_driver = p->driver_version;
    p->path_ptx_isa = p->driver_ptx_isa;
    const char *cap = getenv("EMBER_CUDA_MAX_PTX");
    if (!cap || !*cap)
        return;
    int major = 0, minor = 0, version = 0;
    if (sscanf(cap, "%d.%d", &major, &minor) == 2 && minor >= 0 && minor <= 9)
        version = cuda_version_for_ptx_isa(major * 10 + minor);
    if (!version) {
        note(
            p,
            "EMBER_CUDA_MAX_PTX=%s ignored: it takes a PTX ISA version some CUDA driver loads, as 6.4 or 7.4",
            cap);
        return;
    }
    if (p->driver_ok && version >= p->driver_version)
        return; /* not older than the driver there is */
    p->driver_as = version;
    p->path_driver = version;
    p->path_ptx_isa = major * 10 + minor;
}

static void probe_run(void)
{
    struct cuda_probe *p = &probe;
    p->baseline_ptx_isa = cuda_ptx_isa_in(cuda_baseline_ptx());
    static const char *const paths[] = {"nvrtc", "nvrtc-cubin", "nvrtc-ptx", "baseline"};
    const char *forced = getenv("EMBER_CUDA_KERNELS");
    for (size_t i = 0; forced && i < sizeof paths / sizeof paths[0]; i++)
        if (strcmp(forced, paths[i]) == 0)
            p->forced = paths[i];
    if (forced && *forced && !p->forced)
        note(p, "EMBER_CUDA_KERNELS=%s ignored: it takes nvrtc, nvrtc-cubin, nvrtc-ptx or baseline", forced);
    const char *sync = getenv("EMBER_CUDA_SYNC");
    p->sync = sync && *sync && strcmp(sync, "0") != 0;
    cuda_probe_driver();
    probe_nvrtc(p);
    probe_driver_as(p);
    for (int i = 0; i < p->gpu_count; i++)
        cuda_choose_path(p->gpus[i].cc, p->path_driver, p->path_ptx_isa, p->nvrtc, p->nvrtc_count,
                         p->baseline_ptx_isa, p->forced, &p->gpus[i].choice);
}

static void probe_driver_run(void) { probe_driver(&probe); }

const struct cuda_probe *cuda_probe_driver(void)
{
    pthread_once(&driver_once, probe_driver_run);
    return &probe;
}

const struct cuda_probe *cuda_probe(void)
{
    pthread_once(&probe_once, probe_run);
    return &probe;
}
