/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_cuda_path.c — the rules that rank a GPU's kernel paths, on the
 * machines ember is for, without a GPU: each row is a GPU, a driver and the
 * NVRTCs installed, and the paths, in order, and reasons ember must come
 * to (the module loader tries them in that order until the driver takes
 * one).
 */
#include <string.h>

#include "../../backends/cuda/cuda-impl.h"
#include "test-util.h"

/* NVRTCs as installed: version, the PTX ISA it emits, its archs, cubin support */
static struct cuda_nvrtc nvrtc_13_0(void)
{
    struct cuda_nvrtc n = {.major = 13,
                           .minor = 0,
                           .ptx_isa = 90,
                           .cubin = true,
                           .arch_count = 8,
                           .archs = {75, 80, 86, 87, 89, 90, 100, 120}};
    return n;
}
static struct cuda_nvrtc nvrtc_12_4(void)
{
    struct cuda_nvrtc n = {.major = 12,
                           .minor = 4,
                           .ptx_isa = 84,
                           .cubin = true,
                           .arch_count = 10,
                           .archs = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80}};
    return n;
}
static struct cuda_nvrtc nvrtc_11_8(void)
{
    struct cuda_nvrtc n = {.major = 11,
                           .minor = 8,
                           .ptx_isa = 78,
                           .cubin = true,
                           .arch_count = 15,
                           .archs = {35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 89, 90}};
    return n;
}
static struct cuda_nvrtc nvrtc_11_1(void)
{
    struct cuda_nvrtc n = {.major = 11,
                           .minor = 1,
                           .ptx_isa = 71,
                           .cubin = true,
                           .arch_count = 13,
                           .archs = {35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86}};
    return n;
}
static struct cuda_nvrtc nvrtc_10_2(void)
{
    struct cuda_nvrtc n = {.major = 10,
                           .minor = 2,
                           .ptx_isa = 65,
                           .cubin = false,
                           .arch_count = 13,
                           .archs = {30, 32, 35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75}};
    return n;
}

struct row {
    const char *machine;
    int cc, driver_cuda;
    struct cuda_nvrtc (*nvrtc[3])(void);
    const char *forced;
    int baseline_isa;
    const char *want; /* the paths, best first: c an NVRTC cubin, p NVRTC PTX, b the built-in PTX */
    int want_arch;    /* of the first */
    const char *reason_has, *rejected_has;
};

static const struct row rows[] = {
    /* clang-format off */
    {"Quadro K2100M (sm_30), R418, NVRTC 13", 30, 10010, {nvrtc_13_0}, NULL, 32, "b", 30, "built-in sm_30 PTX",
     "NVRTC 13.0 targets sm_75 and newer, not sm_30"},
    {"K40m (sm_35), R470, NVRTC 13 and 11.8", 35, 11040, {nvrtc_13_0, nvrtc_11_8}, NULL, 32, "cb", 35,
     "NVRTC 11.8 builds a cubin for sm_35", "NVRTC 11.8 emits PTX 7.8 but the driver loads at most PTX 7.4"},
    {"K40m (sm_35), R470, NVRTC 12.4 only", 35, 11040, {nvrtc_12_4}, NULL, 32, "b", 30, "built-in",
     "NVRTC 12.4 targets sm_50 and newer, not sm_35"},
    {"GTX 1080 (sm_61), R470, NVRTC 12.4: its cubins need a CUDA 12 driver", 61, 11040, {nvrtc_12_4}, NULL, 32, "b",
     30, "built-in", "NVRTC 12.4's cubins need a CUDA 12 driver, this one is CUDA 11.4"},
    {"GTX 1080 (sm_61), R535, NVRTC 12.4", 61, 12020, {nvrtc_12_4}, NULL, 32, "cb", 61, "cubin for sm_61",
     "NVRTC 12.4 emits PTX 8.4 but the driver loads at most PTX 8.2"},
    {"RTX 4090 (sm_89), 11.4 driver, NVRTC 11.1: PTX for compute_86", 89, 11040, {nvrtc_11_1}, NULL, 32, "pb", 86,
     "PTX 7.1 for compute_86", ""},
    {"RTX 2080 (sm_75), R418, NVRTC 10.2: its PTX 6.5 is too new", 75, 10010, {nvrtc_10_2}, NULL, 32, "b", 30,
     "built-in", "NVRTC 10.2 emits PTX 6.5 but the driver loads at most PTX 6.4"},
    {"H100 (sm_90), CUDA 13 driver, NVRTC 13", 90, 13000, {nvrtc_13_0}, NULL, 32, "cpb", 90, "cubin for sm_90", ""},
    {"H100, CUDA 12.2 driver, NVRTC 13: neither its cubin nor its PTX", 90, 12020, {nvrtc_13_0}, NULL, 32, "b", 30,
     "built-in", "NVRTC 13.0's cubins need a CUDA 13 driver, this one is CUDA 12.2"},
    {"H100, CUDA 12.2 driver, NVRTC 13 and 11.8: 11.8's cubin", 90, 12020, {nvrtc_13_0, nvrtc_11_8}, NULL, 32, "cpb",
     90, "NVRTC 11.8 builds a cubin for sm_90", "NVRTC 13.0 emits PTX 9.0 but the driver loads at most PTX 8.2"},
    {"H100, NVRTC 13, EMBER_CUDA_KERNELS=baseline", 90, 13000, {nvrtc_13_0}, "baseline", 32, "b", 30, "built-in",
     "NVRTC not tried (EMBER_CUDA_KERNELS=baseline)"},
    {"H100, NVRTC 13, EMBER_CUDA_KERNELS=nvrtc-ptx", 90, 13000, {nvrtc_13_0}, "nvrtc-ptx", 32, "p", 90,
     "PTX 9.0 for compute_90", "the built-in PTX not tried (EMBER_CUDA_KERNELS=nvrtc-ptx)"},
    {"H100, NVRTC 13 and 11.8, EMBER_CUDA_KERNELS=nvrtc-cubin", 90, 13000, {nvrtc_13_0, nvrtc_11_8}, "nvrtc-cubin",
     32, "cc", 90, "NVRTC 13.0 builds a cubin", ""},
    {"H100, NVRTC 13, EMBER_CUDA_KERNELS=nvrtc", 90, 13000, {nvrtc_13_0}, "nvrtc", 32, "cp", 90, "cubin", ""},
    {"RTX 4090, NVRTC 11.1, EMBER_CUDA_KERNELS=nvrtc-cubin: no cubin for sm_89", 89, 12000, {nvrtc_11_1},
     "nvrtc-cubin", 32, "", 0, "no kernel path EMBER_CUDA_KERNELS=nvrtc-cubin allows works",
     "the built-in PTX not tried"},
    {"H100, no NVRTC, EMBER_CUDA_KERNELS=nvrtc", 90, 13000, {NULL}, "nvrtc", 32, "", 0, "no kernel path",
     "no NVRTC library found"},
    {"GTX 580 (sm_20, Fermi)", 20, 9010, {nvrtc_10_2}, NULL, 32, "", 0, "compute capability 2.0 is older than sm_30",
     ""},
    {"a driver too old even for the built-in PTX", 35, 9000, {NULL}, NULL, 64, "", 0, "no kernel path works",
     /* clang-format on */
     "the built-in PTX is PTX 6.4 but the driver loads at most PTX 6.0"},
};

/* the letters of `want` for a choice's paths */
static void ranked(const struct cuda_choice *c, char *out)
{
    int n = 0;
    for (int i = 0; i < c->count; i++)
        out[n++] = c->options[i].path == CUDA_PATH_NVRTC_CUBIN ? 'c'
                   : c->options[i].path == CUDA_PATH_NVRTC_PTX ? 'p'
                                                               : 'b';
    out[n] = '\0';
}

static void check_isa(int cuda, int want)
{
    CHECK(cuda_ptx_isa_of(cuda) == want, "CUDA %d: PTX ISA %d, want %d", cuda, cuda_ptx_isa_of(cuda), want);
}

int main(void)
{
    check_isa(9000, 60);
    check_isa(10010, 64);
    check_isa(10020, 65);
    check_isa(11040, 74);
    check_isa(11080, 78);
    check_isa(12040, 84);
    check_isa(12060, 85);
    check_isa(12080, 87);
    check_isa(12090, 88);
    check_isa(13000, 90);
    /* EMBER_CUDA_MAX_PTX's driver for a PTX ISA: the oldest that loads it */
    CHECK(cuda_version_for_ptx_isa(64) == 10010, "PTX 6.4: CUDA %d", cuda_version_for_ptx_isa(64));
    CHECK(cuda_version_for_ptx_isa(74) == 11040, "PTX 7.4: CUDA %d", cuda_version_for_ptx_isa(74));
    CHECK(cuda_version_for_ptx_isa(85) == 12050, "PTX 8.5: CUDA %d", cuda_version_for_ptx_isa(85));
    CHECK(cuda_version_for_ptx_isa(90) == 13000, "PTX 9.0: CUDA %d", cuda_version_for_ptx_isa(90));
    CHECK(cuda_version_for_ptx_isa(78) == 11080, "PTX 7.8: CUDA %d", cuda_version_for_ptx_isa(78));
    CHECK(cuda_version_for_ptx_isa(33) == 0, "PTX 3.3: CUDA %d", cuda_version_for_ptx_isa(33));

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        struct cuda_nvrtc nvrtc[3];
        int count = 0;
        for (int k = 0; k < 3 && r->nvrtc[k]; k++)
            nvrtc[count++] = r->nvrtc[k]();
        struct cuda_choice c;
        cuda_choose_path(r->cc, r->driver_cuda, cuda_ptx_isa_of(r->driver_cuda), nvrtc, count,
                         r->baseline_isa, r->forced, &c);
        char paths[CUDA_MAX_OPTIONS + 1];
        ranked(&c, paths);
        CHECK(strcmp(paths, r->want) == 0, "%s: paths \"%s\", want \"%s\" (%s)", r->machine, paths, r->want,
              c.reason);
        int arch = c.count ? c.options[0].arch : 0;
        CHECK(arch == r->want_arch, "%s: arch %d, want %d", r->machine, arch, r->want_arch);
        CHECK(strstr(c.reason, r->reason_has), "%s: reason \"%s\" lacks \"%s\"", r->machine, c.reason,
              r->reason_has);
        CHECK(strstr(c.rejected, r->rejected_has), "%s: rejected \"%s\" lacks \"%s\"", r->machine, c.rejected,
              r->rejected_has);
        printf("%-72s %-4s %s\n", r->machine, paths[0] ? paths : "-", c.reason);
    }
    return test_finish("test_cuda_path");
}
