/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_libnvrtc.c — a stand-in for an NVRTC of any version,
 * for the probe and the kernel-path rules. Built twice (tests/CMakeLists.txt):
 * as a "new" NVRTC (11.2 and later: it lists its archs and builds cubins)
 * and, with FAKE_NVRTC_OLD defined, as an "old" one (10.x: neither).
 *
 *   EMBER_FAKE_NVRTC_VERSION   "12.4" (default "12.4", or "10.2" for the old one)
 *   EMBER_FAKE_NVRTC_ARCHS     "50,52,...,90": what nvrtcGetSupportedArchs answers
 * It compiles nothing: nvrtcCompileProgram fails with a log saying so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;

static const char *version(void)
{
    const char *v = getenv("EMBER_FAKE_NVRTC_VERSION");
#ifdef FAKE_NVRTC_OLD
    return v && *v ? v : "10.2";
#else
    return v && *v ? v : "12.4";
#endif
}

nvrtcResult nvrtcVersion(int *major, int *minor)
{
    return sscanf(version(), "%d.%d", major, minor) == 2 ? 0 : 3;
}

const char *nvrtcGetErrorString(nvrtcResult r)
{
    return r == 6 ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR (fake)";
}

nvrtcResult nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h,
                               const char *const *hn)
{
    (void)src, (void)name, (void)n, (void)h, (void)hn;
    *p = malloc(1);
    return *p ? 0 : 1;
}

/* clang-format off */
nvrtcResult nvrtcDestroyProgram(void **p) { free(*p); *p = NULL; return 0; }
nvrtcResult nvrtcCompileProgram(void *p, int n, const char *const *o) { (void)p, (void)n, (void)o; return 6; }
/* clang-format on */

static const char compile_log[] = "fake NVRTC: a test double compiles nothing";
/* clang-format off */
nvrtcResult nvrtcGetProgramLogSize(void *p, size_t *n) { (void)p; *n = sizeof compile_log; return 0; }
nvrtcResult nvrtcGetProgramLog(void *p, char *log) { (void)p; memcpy(log, compile_log, sizeof compile_log); return 0; }
nvrtcResult nvrtcGetPTXSize(void *p, size_t *n) { (void)p; *n = 0; return 5; }
nvrtcResult nvrtcGetPTX(void *p, char *ptx) { (void)p, (void)ptx; return 5; }
/* clang-format on */

#ifndef FAKE_NVRTC_OLD
/* clang-format off */
nvrtcResult nvrtcGetCUBINSize(void *p, size_t *n) { (void)p; *n = 0; return 5; }
nvrtcResult nvrtcGetCUBIN(void *p, char *c) { (void)p, (void)c; return 5; }
/* clang-format on */

static int archs(int *out)
{
    const char *list = getenv("EMBER_FAKE_NVRTC_ARCHS");
    if (!list)
        list = "50,52,53,60,61,62,70,72,75,80,86,87,89,90";
    int n = 0;
    for (const char *p = list; *p;) {
        int a = atoi(p);
        if (out)
            out[n] = a;
        n++;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return n;
}

/* clang-format off */
nvrtcResult nvrtcGetNumSupportedArchs(int *n) { *n = archs(NULL); return 0; }
nvrtcResult nvrtcGetSupportedArchs(int *a) { archs(a); return 0; }
/* clang-format on */
#endif
