/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_kernels.c — the kernel-source module (backends/kernels), no
 * device needed:
 *   - every source file is in the C subset: outside comments, no OpenCL
 *     extension (#pragma OPENCL EXTENSION, cl_khr_*), no half or double,
 *     no atomics, warp shuffles, __ldg or printf;
 *   - each dialect's program holds every kernel of EMBER_KERNEL_LIST as an
 *     entry point, each file after a #line naming it;
 *   - tuning: the defaults pass their own check, bad values do not, and
 *     they print as -D options;
 *   - EMBER_KERNEL_DIR: the program is read from that folder instead, and a
 *     file missing there is an error that names it;
 *   - softmath.kh's expf and logf (the NVPTX dialect's, which has no
 *     libdevice) are within 1 ulp of the exact value, measured here on the
 *     host over the whole float range.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/kernels/kernels.h"
#include "test-util.h"

static const char *const source_files[] = {
    "prelude-opencl.kh", "prelude-cuda.kh", "prelude-nvptx.kh", "prelude-host.kh", "softmath.kh",
    "common.kh",         "elementwise.kc",  "reduce.kc",        "gemm.kc",         "conv.kc",
    "pool.kc",           "loss.kc",         "optim.kc",         "dropout.kc",      "softmax.kc",
    "norm.kc",           "embedding.kc",    "quant.kc",         "rope.kc",
};
enum { SOURCE_FILES = sizeof source_files / sizeof source_files[0] };

/* a copy of text with its comments blanked out */
static char *strip_comments(const char *text)
{
    char *out = strdup(text);
    for (char *p = out; p && *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            char *end = strstr(p + 2, "*/");
            char *stop = end ? end + 2 : p + strlen(p);
            memset(p, ' ', (size_t)(stop - p));
            p = stop - 1;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                *p++ = ' ';
            p--;
        }
    }
    return out;
}

/* `word` in text as a whole identifier */
static bool has_word(const char *text, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = strstr(text, word); p; p = strstr(p + 1, word)) {
        bool before = p == text || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                     (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'));
        char c = p[len];
        bool after =
            !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
        if (before && after)
            return true;
    }
    return false;
}

static void check_subset(void)
{
    static const char *const words[] = {"half",        "double",      "printf",     "atomic_add",
                                        "atomic_xchg", "atomicAdd",   "__shfl",     "__shfl_sync",
                                        "__ldg",       "cl_khr_fp64", "cl_khr_fp16"};
    static const char *const strings[] = {"#pragma OPENCL EXTENSION", "cl_khr", "__restrict", "restrict "};
    for (int i = 0; i < SOURCE_FILES; i++) {
        const char *text = ember_kernel_embedded_file(source_files[i]);
        CHECK(text != NULL, "%s is not embedded", source_files[i]);
        if (!text)
            continue;
        char *code = strip_comments(text);
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
            CHECK(!has_word(code, words[w]), "%s uses %s, outside the kernels' C subset", source_files[i],
                  words[w]);
        for (size_t s = 0; s < sizeof strings / sizeof strings[0]; s++)
            CHECK(!strstr(code, strings[s]), "%s uses \"%s\", outside the kernels' C subset", source_files[i],
                  strings[s]);
        free(code);
    }
}

static void check_programs(void)
{
    for (int d = 0; d < EMBER_DIALECT_COUNT; d++) {
        char why[256];
        char *program = ember_kernel_program(d, EMBER_KERNEL_ALL_FAMILIES, why, sizeof why);
        CHECK(program != NULL, "%s: %s", ember_kernel_dialect_name(d), why);
        if (!program)
            continue;
        for (int k = 0; k < EMBER_KERNEL_COUNT; k++) {
            char entry[96];
            snprintf(entry, sizeof entry, "KERNEL void %s(", ember_kernel_name(k));
            CHECK(strstr(program, entry) != NULL, "%s: no \"%s\" in the program",
                  ember_kernel_dialect_name(d), entry);
        }
        CHECK(strstr(program, "#line 1 \"common.kh\"") && strstr(program, "#line 1 \"gemm.kc\""),
              "%s: the program lacks the #line of each file", ember_kernel_dialect_name(d));
        CHECK(strstr(program, "#define EMBER_RELU ") && strstr(program, "#define EMBER_MAX "),
              "%s: the program lacks the op codes", ember_kernel_dialect_name(d));
        free(program);
    }
    /* one family alone */
    char why[256];
    char *gemm = ember_kernel_program(EMBER_DIALECT_CUDA, 1u << EMBER_FAMILY_GEMM, why, sizeof why);
    CHECK(gemm && strstr(gemm, "KERNEL void sgemm(") && !strstr(gemm, "KERNEL void fill("),
          "a program of the gemm family alone holds the wrong kernels");
    free(gemm);
}

static void check_tuning(void)
{
    char why[256], defines[256];
    struct ember_kernel_tuning t = ember_kernel_tuning_default();
    CHECK(ember_kernel_tuning_check(&t, why, sizeof why), "the default tuning fails its check: %s", why);
    CHECK(ember_kernel_defines(&t, defines, sizeof defines) && strstr(defines, "-DEMBER_WG_SIZE=64") &&
              strstr(defines, "-DEMBER_REG_N=4"),
          "defines: \"%s\"", defines);
    CHECK(!ember_kernel_defines(&t, defines, 20), "defines fit in 20 characters?");
    CHECK(ember_kernel_tuning_parse("wg_size=128, tile_m=64", &t, why, sizeof why) && t.wg_size == 128 &&
              t.tile_m == 64 && t.tile_n == 32,
          "parse: %s", why);
    CHECK(!ember_kernel_tuning_parse("tile_q=3", &t, why, sizeof why) && strstr(why, "tile_q"), "parse: %s",
          why);
    CHECK(!ember_kernel_tuning_parse("wg_size=x", &t, why, sizeof why), "wg_size=x parsed");
    t = ember_kernel_tuning_default();
    t.wg_size = 48;
    CHECK(!ember_kernel_tuning_check(&t, why, sizeof why) && strstr(why, "power of two"), "wg_size 48: %s",
          why);
    t = ember_kernel_tuning_default();
    t.reg_m = 3;
    CHECK(!ember_kernel_tuning_check(&t, why, sizeof why), "a 32-row tile of 3-row blocks passed the check");
}

static void check_kernel_dir(void)
{
    const char *dir = test_tmpdir();
    if (!dir)
        return;
    for (int i = 0; i < SOURCE_FILES; i++) {
        const char *text = ember_kernel_embedded_file(source_files[i]);
        if (strcmp(source_files[i], "gemm.kc") == 0) {
            char *edited = malloc(strlen(text) + 64);
            sprintf(edited, "%s/* edited in EMBER_KERNEL_DIR */\n", text);
            test_write_file(dir, source_files[i], edited, strlen(edited));
            free(edited);
        } else {
            test_write_file(dir, source_files[i], text, strlen(text));
        }
    }
    setenv("EMBER_KERNEL_DIR", dir, 1);
    char why[512];
    char *program = ember_kernel_program(EMBER_DIALECT_OPENCL, EMBER_KERNEL_ALL_FAMILIES, why, sizeof why);
    CHECK(program && strstr(program, "edited in EMBER_KERNEL_DIR"), "EMBER_KERNEL_DIR was not read: %s",
          program ? "the edit is missing" : why);
    free(program);
    char path[4200];
    snprintf(path, sizeof path, "%s/loss.kc", dir);
    remove(path);
    program = ember_kernel_program(EMBER_DIALECT_OPENCL, EMBER_KERNEL_ALL_FAMILIES, why, sizeof why);
    CHECK(!program && strstr(why, "loss.kc") && strstr(why, "EMBER_KERNEL_DIR"), "a missing loss.kc gave: %s",
          program ? "a program" : why);
    free(program);
    unsetenv("EMBER_KERNEL_DIR");
    test_cleanup_dir(dir);
}

/* ---------------------------------------------------------- softmath */

static float softmath_as_float(int i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

static int softmath_as_int(float f)
{
    int i;
    memcpy(&i, &f, sizeof i);
    return i;
}

#define FUNC                 static
#define EMBER_INF            INFINITY
#define EMBER_NAN            NAN
#define SOFTMATH_AS_FLOAT(i) softmath_as_float(i)
#define SOFTMATH_AS_INT(f)   softmath_as_int(f)
#define SOFTMATH_FLOORF(x)   floorf(x)
#define NO_CONTRACT          /* C11 does not fuse */
#include "../../backends/kernels/softmath.kh"

/* |got - exact| in units of the last place of the float nearest exact */
static double ulps(float got, double exact)
{
    if (isnan(exact) || isnan(got))
        return isnan(exact) && isnan(got) ? 0.0 : INFINITY;
    if (isinf((float)exact) || isinf(got)) /* beyond the float range: only the right infinity will do */
        return got == (float)exact ? 0.0 : INFINITY;
    int e = 0;
    frexp(exact, &e); /* exact = m 2^e with m in [0.5, 1): a float's ulp there is 2^(e - 24) */
    double ulp = fmax(ldexp(1.0, e - 24), ldexp(1.0, -149));
    return fabs((double)got - exact) / ulp;
}

static void check_softmath(void)
{
    double worst_exp = 0.0, worst_log = 0.0;
    float at_exp = 0.0f, at_log = 0.0f;
    for (float x = -104.0f; x < 89.0f; x += 0.000731f) {
        double e = ulps(softmath_expf(x), exp((double)x));
        if (e > worst_exp)
            worst_exp = e, at_exp = x;
    }
    /* every 97th float from the smallest subnormal to the largest finite */
    for (int bits = 1; bits < 0x7f800000; bits += 97) {
        float x = softmath_as_float(bits);
        double e = ulps(softmath_logf(x), log((double)x));
        if (e > worst_log)
            worst_log = e, at_log = x;
    }
    printf("softmath: expf within %.3f ulp (worst at %.9g), logf within %.3f ulp (worst at %.9g)\n",
           worst_exp, (double)at_exp, worst_log, (double)at_log);
    CHECK(worst_exp <= 1.0, "softmath_expf is %.3f ulp off at %.9g", worst_exp, (double)at_exp);
    CHECK(worst_log <= 1.0, "softmath_logf is %.3f ulp off at %.9g", worst_log, (double)at_log);
    CHECK(isnan(softmath_expf(NAN)) && softmath_expf(INFINITY) == INFINITY &&
              softmath_expf(-INFINITY) == 0.0f && softmath_expf(0.0f) == 1.0f,
          "softmath_expf at NaN, +-inf or 0");
    CHECK(isnan(softmath_logf(NAN)) && isnan(softmath_logf(-1.0f)) && softmath_logf(0.0f) == -INFINITY &&
              softmath_logf(INFINITY) == INFINITY && softmath_logf(1.0f) == 0.0f,
          "softmath_logf at NaN, -1, 0, inf or 1");
}

int main(void)
{
    check_subset();
    check_programs();
    check_tuning();
    check_kernel_dir();
    check_softmath();
    return test_finish("test_kernels");
}
