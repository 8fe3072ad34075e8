/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_cuda_nvrtc.c — every kernel compiles through every NVRTC the
 * CUDA backend finds, for the first arch of each generation that NVRTC says it
 * supports (sm_75, sm_80, sm_90, ... for NVRTC 13; about 4 s each), exactly as
 * the backend compiles them (cuda_nvrtc_compile, the backend's tuning); no
 * GPU needed. Each PTX must target the arch and hold every entry point;
 * each cubin (NVRTC 11.1 and later) must be an ELF image. The kernels have
 * no code of their own for any arch, so the rest of a generation adds little:
 * --every-arch compiles for them too (test_cuda_nvrtc_every_arch, label long).
 *
 *   test_cuda_nvrtc [--version X.Y] [--archs 35,37] [--every-arch]
 *
 * --version tests only the NVRTCs of that version (and skips, 77, when the
 * probe finds none: the CUDA 11.8 wheels test uses it); --archs only those
 * archs, every one. Without any NVRTC the test says so and reports skipped (77).
 */
#include <stdlib.h>
#include <string.h>

#include "../../backends/cuda/cuda-impl.h"
#include "test-util.h"

static bool wanted_arch(const char *list, int arch)
{
    if (!list)
        return true;
    for (const char *p = list; *p;) {
        if (atoi(p) == arch)
            return true;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return false;
}

static void check_ptx(const struct cuda_nvrtc *n, int arch, const char *ptx)
{
    char target[32];
    snprintf(target, sizeof target, "\n.target sm_%d", arch);
    CHECK(strstr(ptx, target), "NVRTC %d.%d compute_%d: the PTX does not say %s", n->major, n->minor, arch,
          target + 1);
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
        char entry[96];
        snprintf(entry, sizeof entry, ".entry %s(", ember_kernel_name(k));
        CHECK(strstr(ptx, entry), "NVRTC %d.%d compute_%d: no entry point %s", n->major, n->minor, arch,
              ember_kernel_name(k));
    }
}

int main(int argc, char **argv)
{
    const char *version = NULL, *archs = NULL;
    bool every_arch = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--every-arch") == 0)
            every_arch = true;
        else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc)
            version = argv[++i];
        else if (strcmp(argv[i], "--archs") == 0 && i + 1 < argc)
            archs = argv[++i];
    }
    const struct cuda_probe *p = cuda_probe();
    struct ember_kernel_tuning tuning = cuda_nvrtc_tuning();
    int tested = 0;
    for (int i = 0; i < p->nvrtc_count; i++) {
        const struct cuda_nvrtc *n = &p->nvrtc[i];
        char v[16];
        snprintf(v, sizeof v, "%d.%d", n->major, n->minor);
        if (version && strcmp(v, version) != 0)
            continue;
        printf("NVRTC %s at %s: %d archs, %s\n", v, n->path, n->arch_count,
               n->cubin ? "cubins too" : "PTX only");
        int generation = -1; /* the last tested arch's: sm_86's is 8 */
        for (int a = 0; a < n->arch_count; a++) {
            int arch = n->archs[a];
            if (!wanted_arch(archs, arch) || (!archs && !every_arch && arch / 10 == generation))
                continue;
            generation = arch / 10;
            char why[4096];
            size_t size = 0;
            unsigned char *ptx = cuda_nvrtc_compile(n, arch, false, &tuning, &size, why, sizeof why);
            CHECK(ptx != NULL, "NVRTC %s compute_%d: %s", v, arch, why);
            if (ptx)
                check_ptx(n, arch, (const char *)ptx);
            free(ptx);
            const char *cubin_note = "";
            if (n->cubin) {
                unsigned char *cubin = cuda_nvrtc_compile(n, arch, true, &tuning, &size, why, sizeof why);
                CHECK(cubin != NULL, "NVRTC %s sm_%d cubin: %s", v, arch, why);
                CHECK(!cubin || (size > 4 && memcmp(cubin, "\177ELF", 4) == 0),
                      "NVRTC %s sm_%d: the cubin is no ELF", v, arch);
                free(cubin);
                cubin_note = " and cubin";
            }
            printf("  sm_%d: PTX%s ok\n", arch, cubin_note);
            tested++;
        }
    }
    if (tested == 0) {
        printf("skipped: no NVRTC%s%s found (%s)\n", version ? " " : "", version ? version : "",
               p->nvrtc_notes[0] ? p->nvrtc_notes
                                 : "install a CUDA toolkit's NVRTC, or point EMBER_NVRTC at one");
        return TEST_SKIP;
    }
    return test_finish("test_cuda_nvrtc");
}
