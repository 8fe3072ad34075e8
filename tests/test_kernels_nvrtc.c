/*
 * tests/test_kernels_nvrtc.c — the kernels in the CUDA dialect compile with
 * NVRTC, as the CUDA backend will compile them, with no GPU needed.
 *
 * NVRTC is opened with dlopen ($EMBER_NVRTC_LIBRARY, else libnvrtc.so and
 * its versioned names, else the toolkit's lib64), and the program is
 * compiled for the lowest virtual architecture that NVRTC supports
 * (compute_75 for NVRTC 13, compute_30 for 10.2), with the default tuning
 * and with the large one. Each compile must succeed without a warning and
 * give PTX with an entry point per kernel, and with no double arithmetic,
 * warp shuffles or ld.global.nc. Without NVRTC the test says so and
 * reports skipped (77).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/kernels/kernels.h"
#include "test-util.h"

/* the few NVRTC functions used, with their C signatures (nvrtc.h) */
typedef struct nvrtc_program *nvrtc_program;
struct nvrtc {
    int (*version)(int *major, int *minor);
    int (*create)(nvrtc_program *prog, const char *src, const char *name, int nheaders,
                  const char *const *headers, const char *const *include_names);
    int (*compile)(nvrtc_program prog, int noptions, const char *const *options);
    int (*log_size)(nvrtc_program prog, size_t *size);
    int (*log)(nvrtc_program prog, char *log);
    int (*ptx_size)(nvrtc_program prog, size_t *size);
    int (*ptx)(nvrtc_program prog, char *ptx);
    int (*destroy)(nvrtc_program *prog);
    int (*num_archs)(int *count); /* NVRTC 11.2 and later; else NULL */
    int (*archs)(int *archs);
};

static void *nvrtc_open(const char **name)
{
    static const char *const names[] = {"libnvrtc.so",
                                        "libnvrtc.so.13",
                                        "libnvrtc.so.12",
                                        "libnvrtc.so.11.2",
                                        "libnvrtc.so.11.1",
                                        "libnvrtc.so.11.0",
                                        "libnvrtc.so.10.2",
                                        "/usr/local/cuda/lib64/libnvrtc.so",
                                        "/usr/local/cuda/lib/libnvrtc.so"};
    const char *env = getenv("EMBER_NVRTC_LIBRARY");
    if (env && *env) {
        *name = env;
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *name = names[i];
            return lib;
        }
    }
    return NULL;
}

static bool nvrtc_load(void *lib, struct nvrtc *api)
{
    const struct {
        const char *name;
        void *slot;
        bool optional;
    } table[] = {
        {"nvrtcVersion", &api->version, false},
        {"nvrtcCreateProgram", &api->create, false},
        {"nvrtcCompileProgram", &api->compile, false},
        {"nvrtcGetProgramLogSize", &api->log_size, false},
        {"nvrtcGetProgramLog", &api->log, false},
        {"nvrtcGetPTXSize", &api->ptx_size, false},
        {"nvrtcGetPTX", &api->ptx, false},
        {"nvrtcDestroyProgram", &api->destroy, false},
        {"nvrtcGetNumSupportedArchs", &api->num_archs, true},
        {"nvrtcGetSupportedArchs", &api->archs, true},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        void *sym = dlsym(lib, table[i].name);
        if (!sym && !table[i].optional) {
            fprintf(stderr, "NVRTC lacks %s\n", table[i].name);
            return false;
        }
        memcpy(table[i].slot, &sym, sizeof sym);
    }
    return true;
}

/* the lowest architecture NVRTC compiles for */
static int lowest_arch(const struct nvrtc *api, int major)
{
    int count = 0, archs[64];
    if (api->num_archs && api->archs && api->num_archs(&count) == 0 && count > 0 && count <= 64 &&
        api->archs(archs) == 0)
        return archs[0];
    return major >= 11 ? 35 : 30; /* older NVRTC: from its release notes */
}

static void compile(const struct nvrtc *api, const char *source, int arch,
                    const struct ember_kernel_tuning *t)
{
    char defines[512], arch_option[64], what[96];
    ember_kernel_defines(t, defines, sizeof defines);
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=compute_%d", arch);
    snprintf(what, sizeof what, "compute_%d, %dx%d tiles", arch, t->tile_m, t->tile_n);
    const char *options[16] = {arch_option};
    int n = 1;
    for (char *p = strtok(defines, " "); p && n < 16; p = strtok(NULL, " "))
        options[n++] = p;

    nvrtc_program prog = NULL;
    CHECK(api->create(&prog, source, "ember-kernels.cu", 0, NULL, NULL) == 0, "nvrtcCreateProgram failed");
    if (!prog)
        return;
    int rc = api->compile(prog, n, options);
    size_t size = 0;
    api->log_size(prog, &size);
    char *log = calloc(1, size + 1);
    if (log && size > 1)
        api->log(prog, log);
    CHECK(rc == 0, "%s: NVRTC could not compile the CUDA dialect (error %d):\n%s", what, rc, log ? log : "");
    CHECK(rc != 0 || !log || !strstr(log, "warning"), "%s: NVRTC warns:\n%s", what, log);
    free(log);
    char *ptx = NULL;
    if (rc == 0 && api->ptx_size(prog, &size) == 0 && (ptx = calloc(1, size + 1)) &&
        api->ptx(prog, ptx) == 0) {
        for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
            char entry[96];
            snprintf(entry, sizeof entry, ".entry %s(", ember_kernel_name(k));
            CHECK(strstr(ptx, entry) != NULL, "%s: no entry point %s in the PTX", what, ember_kernel_name(k));
        }
        static const char *const forbidden[] = {".f64", "shfl", "ld.global.nc"};
        for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
            CHECK(!strstr(ptx, forbidden[i]), "%s: the PTX uses %s", what, forbidden[i]);
        printf("NVRTC %s: %zu bytes of PTX\n", what, size);
    }
    free(ptx);
    api->destroy(&prog);
}

int main(void)
{
    const char *name = NULL;
    void *lib = nvrtc_open(&name);
    if (!lib) {
        printf("skipped: NVRTC not found (a CUDA toolkit's libnvrtc.so, or set EMBER_NVRTC_LIBRARY)\n");
        return TEST_SKIP;
    }
    struct nvrtc api;
    int major = 0, minor = 0;
    if (!nvrtc_load(lib, &api) || api.version(&major, &minor) != 0) {
        fprintf(stderr, "%s is not a usable NVRTC\n", name);
        return 1;
    }
    int arch = lowest_arch(&api, major);
    printf("NVRTC %d.%d from %s, compiling for compute_%d\n", major, minor, name, arch);
    char why[256];
    char *source = ember_kernel_program(EMBER_DIALECT_CUDA, EMBER_KERNEL_ALL_FAMILIES, why, sizeof why);
    CHECK(source != NULL, "%s", why);
    if (source) {
        struct ember_kernel_tuning small = ember_kernel_tuning_default(), large = small;
        large.wg_size = 256;
        large.tile_m = large.tile_n = 64;
        compile(&api, source, arch, &small);
        compile(&api, source, arch, &large);
    }
    free(source);
    /* NVRTC stays loaded: unloading it at exit gains nothing */
    return test_finish("test_kernels_nvrtc");
}
