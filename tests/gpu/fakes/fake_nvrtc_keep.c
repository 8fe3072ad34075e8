/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_nvrtc_keep.c — an NVRTC that is a real one, and keeps
 * the PTX behind every cubin it hands out.
 *
 * ember loads a cubin where the driver can run one (NVRTC 11.8's for a
 * K40m on R470, 12.x's for a GTX 1080 on R580, 13's for an H100), and a
 * cubin is machine code no simulator here executes. But NVRTC makes the
 * cubin from PTX with ptxas, and after a compile for sm_XX the program
 * still gives that PTX (nvrtcGetPTX). So this library forwards every call
 * to the real NVRTC (EMBER_FAKE_NVRTC_REAL, a library path) and, whenever
 * ember fetches a cubin, writes the program's PTX to
 * $EMBER_FAKE_NVRTC_PTX_DIR/<hash of the cubin>.ptx (fake_elf.h), where
 * the CUDA test double's PTX mode finds it when that cubin is loaded, now
 * or from ember's disk cache later. ember points at it with
 * EMBER_NVRTC=only:path/to/libfake-nvrtc-keep.so.
 *
 * So what the simulated K40m runs is exactly the PTX ptxas turned into the
 * cubin ember loaded; what it cannot show is ptxas's own work (register
 * allocation, its fusing of mul and add): docs/gpu-validation.md.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_elf.h"

typedef int nvrtcResult;
typedef void *nvrtcProgram;

#define NVRTC_KEEP_FUNCTIONS(X)                                                                              \
    X(nvrtcResult, nvrtcVersion, (int *major, int *minor), (major, minor))                                   \
    X(const char *, nvrtcGetErrorString, (nvrtcResult r), (r))                                               \
    X(nvrtcResult, nvrtcCreateProgram,                                                                       \
      (nvrtcProgram * p, const char *src, const char *name, int n, const char *const *h,                     \
       const char *const *hn),                                                                               \
      (p, src, name, n, h, hn))                                                                              \
    X(nvrtcResult, nvrtcDestroyProgram, (nvrtcProgram * p), (p))                                             \
    X(nvrtcResult, nvrtcCompileProgram, (nvrtcProgram p, int n, const char *const *o), (p, n, o))            \
    X(nvrtcResult, nvrtcGetProgramLogSize, (nvrtcProgram p, size_t * n), (p, n))                             \
    X(nvrtcResult, nvrtcGetProgramLog, (nvrtcProgram p, char *log), (p, log))                                \
    X(nvrtcResult, nvrtcGetPTXSize, (nvrtcProgram p, size_t * n), (p, n))                                    \
    X(nvrtcResult, nvrtcGetPTX, (nvrtcProgram p, char *ptx), (p, ptx))                                       \
    X(nvrtcResult, nvrtcGetCUBINSize, (nvrtcProgram p, size_t * n), (p, n))                                  \
    X(nvrtcResult, nvrtcGetNumSupportedArchs, (int *n), (n))                                                 \
    X(nvrtcResult, nvrtcGetSupportedArchs, (int *a), (a))

static struct {
#define POINTER(ret, name, params, args) ret(*name) params;
    NVRTC_KEEP_FUNCTIONS(POINTER)
#undef POINTER
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram p, char *cubin);
} real;

static pthread_once_t opened = PTHREAD_ONCE_INIT;

static void open_real(void)
{
    const char *path = getenv("EMBER_FAKE_NVRTC_REAL");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!lib) {
        fprintf(stderr, "fake NVRTC (keep): EMBER_FAKE_NVRTC_REAL=%s cannot be opened: %s\n",
                path ? path : "", path ? dlerror() : "not set");
        return;
    }
#define LOOKUP(ret, name, params, args) real.name = (ret(*) params)dlsym(lib, #name);
    NVRTC_KEEP_FUNCTIONS(LOOKUP)
#undef LOOKUP
    real.nvrtcGetCUBIN = (nvrtcResult(*)(nvrtcProgram, char *))dlsym(lib, "nvrtcGetCUBIN");
}

/* every call: to the real NVRTC, or NVRTC_ERROR_INTERNAL_ERROR (11) without one */
#define FORWARD(ret, name, params, args)                                                                     \
    ret name params                                                                                          \
    {                                                                                                        \
        pthread_once(&opened, open_real);                                                                    \
        if (!real.name)                                                                                      \
            return (ret)11;                                                                                  \
        return real.name args;                                                                               \
    }
#define FORWARD_ALL(ret, name, params, args) FORWARD(ret, name, params, args)
NVRTC_KEEP_FUNCTIONS(FORWARD_ALL)
#undef FORWARD_ALL
#undef FORWARD

/* the PTX of program p into the kept folder, named for its cubin */
static void keep(nvrtcProgram p, const unsigned char *cubin, size_t size)
{
    const char *dir = getenv("EMBER_FAKE_NVRTC_PTX_DIR");
    size_t ptx_size = 0;
    char *ptx = NULL;
    if (!dir || !*dir || real.nvrtcGetPTXSize(p, &ptx_size) != 0 || !(ptx = malloc(ptx_size + 1)) ||
        real.nvrtcGetPTX(p, ptx) != 0) {
        fprintf(stderr,
                "fake NVRTC (keep): the PTX of a cubin could not be kept (EMBER_FAKE_NVRTC_PTX_DIR=%s)\n",
                dir ? dir : "");
        free(ptx);
        return;
    }
    mkdir(dir, 0755);
    char path[1024], temporary[1100];
    fake_elf_ptx_path(dir, cubin, size, path, sizeof path);
    snprintf(temporary, sizeof temporary, "%s.%d", path, (int)getpid());
    FILE *f = fopen(temporary, "wb");
    size_t length = strnlen(ptx, ptx_size);
    if (!f || fwrite(ptx, 1, length, f) != length || fclose(f) != 0 || rename(temporary, path) != 0)
        fprintf(stderr, "fake NVRTC (keep): could not write %s\n", path);
    free(ptx);
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *cubin)
{
    pthread_once(&opened, open_real);
    if (!real.nvrtcGetCUBIN || !real.nvrtcGetCUBINSize)
        return 11;
    nvrtcResult r = real.nvrtcGetCUBIN(p, cubin);
    size_t size = 0;
    if (r == 0 && real.nvrtcGetCUBINSize(p, &size) == 0) {
        /* the double knows a cubin by its ELF extent alone (it is handed no size): the same here */
        size_t extent = fake_elf_size((const unsigned char *)cubin);
        if (extent != size)
            fprintf(stderr, "fake NVRTC (keep): a cubin of %zu bytes whose ELF says %zu\n", size, extent);
        else
            keep(p, (const unsigned char *)cubin, size);
    }
    return r;
}
