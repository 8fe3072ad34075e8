/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_ptxsim.c — the PTX simulator (ptxsim/) on small kernels
 * written to show one thing each:
 *
 *   - each class of instruction against results computed here in C:
 *     integer arithmetic at its edges (wrapping, division by zero, shifts
 *     past the width), floating point (IEEE rounding, NaN in compares and
 *     min/max, directed rounding, .ftz, conversions that saturate), the
 *     special registers and the parameters;
 *   - divergence and reconvergence: an if/else, a loop whose trip count
 *     differs by lane, an early return, a join laid out above one of its
 *     paths; the record shows the warp split and whole again where the
 *     control flow graph says;
 *   - shared memory and bar.sync across warps, in any warp order;
 *   - each checker firing on a kernel written to trip it, with the message
 *     naming kernel, block, thread, line and address; and silent on every
 *     kernel of the built-in PTX (parsed here; run by the simulated-GPU
 *     suites);
 *   - the parser refusing what it does not know, naming it and its line;
 *   - the occupancy arithmetic on a table of cases worked out with NVIDIA's
 *     cuda_occupancy.h, and bank conflicts by Kepler's rule and Maxwell's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/cuda/cuda-impl.h"
#include "../../ptxsim/ptxsim.h"
#include "test-util.h"

/* ---------------------------------------------------------- memory */

/* device memory for the tests: host buffers the simulator is told about */
#define MAX_BUFFERS 8
static struct {
    void *p;
    size_t bytes;
} buffers[MAX_BUFFERS];
static int buffer_count;

static bool find(void *user, uint64_t address, uint64_t *base, uint64_t *bytes)
{
    (void)user;
    for (int i = 0; i < buffer_count; i++) {
        uint64_t b = (uint64_t)(uintptr_t)buffers[i].p;
        if (address >= b && address < b + buffers[i].bytes) {
            *base = b;
            *bytes = buffers[i].bytes;
            return true;
        }
    }
    return false;
}

static void *buffer(size_t bytes)
{
    void *p = calloc(1, bytes);
    buffers[buffer_count].p = p;
    buffers[buffer_count++].bytes = bytes;
    return p;
}

static void buffers_free(void)
{
    for (int i = 0; i < buffer_count; i++)
        free(buffers[i].p);
    buffer_count = 0;
}

/* ------------------------------------------------------------ running */

/* A module of one kernel from `body`, with parameters `params` (PTX text). */
static struct ptxsim_module *module(const char *params, const char *body)
{
    static char text[16384];
    snprintf(text, sizeof text,
             ".version 7.0\n.target sm_35\n.address_size 64\n\n.visible .entry k(%s)\n{\n%s\n}\n", params,
             body);
    char why[1024];
    struct ptxsim_module *m = ptxsim_module_parse(text, why, sizeof why);
    CHECK(m != NULL, "the test kernel does not parse: %s", why);
    return m;
}

/* parameters: up to four 8-byte values, laid out by the kernel */
struct args {
    uint64_t v[4];
    int n;
};

static enum ptxsim_outcome run(struct ptxsim_module *m, unsigned blocks, unsigned threads, struct args a,
                               unsigned flags, uint64_t seed, struct ptxsim_stats *stats,
                               struct ptxsim_result *r)
{
    const struct ptxsim_kernel *k = ptxsim_module_kernel(m, "k");
    unsigned char params[64] = {0};
    for (int i = 0; i < a.n; i++) {
        size_t at, size;
        if (ptxsim_kernel_param(k, i, &at, &size))
            memcpy(params + at, &a.v[i], size);
    }
    /* clang-format off */
    struct ptxsim_launch l = {.kernel = k, .grid = {blocks, 1, 1}, .block = {threads, 1, 1}, .params = params,
                              .memory = {.find = find}, .flags = flags, .seed = seed, .stats = stats,
                              /* clang-format on */
                              .watchdog = 0.5};
    return ptxsim_run(&l, r);
}

static uint64_t address(const void *p) { return (uint64_t)(uintptr_t)p; }

/* ---------------------------------------------------------- integers */

/* Each thread writes the results of one row of operations; the expected
 * values are computed in C with the PTX ISA's rules. */
static void test_integers(void)
{
    struct ptxsim_module *m = module(
        ".param .u64 out, .param .u32 a, .param .u32 b",
        ".reg .b32 %r<40>;\n.reg .b64 %rd<10>;\n"
        "ld.param.u64 %rd1, [out];\nld.param.u32 %r1, [a];\nld.param.u32 %r2, [b];\n"
        "add.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1], %r3;\n"
        "sub.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+4], %r3;\n"
        "mul.lo.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+8], %r3;\n"
        "mul.hi.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+12], %r3;\n"
        "mul.hi.u32 %r3, %r1, %r2;\n st.global.u32 [%rd1+16], %r3;\n"
        "div.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+20], %r3;\n"
        "rem.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+24], %r3;\n"
        "div.u32 %r3, %r1, 0;\n st.global.u32 [%rd1+28], %r3;\n"
        "rem.u32 %r3, %r1, 0;\n st.global.u32 [%rd1+32], %r3;\n"
        "shl.b32 %r3, %r1, 33;\n st.global.u32 [%rd1+36], %r3;\n"
        "shr.s32 %r3, %r1, 40;\n st.global.u32 [%rd1+40], %r3;\n"
        "shr.u32 %r3, %r1, 4;\n st.global.u32 [%rd1+44], %r3;\n"
        "min.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+48], %r3;\n"
        "min.u32 %r3, %r1, %r2;\n st.global.u32 [%rd1+52], %r3;\n"
        "max.s32 %r3, %r1, %r2;\n st.global.u32 [%rd1+56], %r3;\n"
        "and.b32 %r3, %r1, 0xff00;\n st.global.u32 [%rd1+60], %r3;\n"
        "xor.b32 %r3, %r1, -1;\n st.global.u32 [%rd1+64], %r3;\n"
        "not.b32 %r3, %r2;\n st.global.u32 [%rd1+68], %r3;\n"
        "neg.s32 %r3, %r2;\n st.global.u32 [%rd1+72], %r3;\n"
        "mad.lo.s32 %r3, %r1, %r2, 7;\n st.global.u32 [%rd1+76], %r3;\n"
        "mul.wide.s32 %rd2, %r1, %r2;\n st.global.u64 [%rd1+80], %rd2;\n"
        "cvt.s64.s32 %rd3, %r1;\n st.global.u64 [%rd1+88], %rd3;\n"
        "cvt.u64.u32 %rd3, %r1;\n st.global.u64 [%rd1+96], %rd3;\n"
        "mad.wide.s32 %rd4, %r2, 4, %rd1;\n sub.s64 %rd4, %rd4, %rd1;\n st.global.u64 [%rd1+104], %rd4;\n"
        "abs.s32 %r3, %r1;\n st.global.u32 [%rd1+112], %r3;\n"
        "ret;");
    int32_t a = -1000003, b = 7;
    uint32_t *out = buffer(128);
    struct ptxsim_result r;
    CHECK(run(m, 1, 1, (struct args){{address(out), (uint32_t)a, (uint32_t)b}, 3}, 0, 0, NULL, &r) ==
              PTXSIM_OK,
          "integers: %s", r.message);
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    int64_t wide;
    const uint32_t want[] = {
        /* clang-format off */
        (uint32_t)(a + b), (uint32_t)(a - b), (uint32_t)(a * b), (uint32_t)(((int64_t)a * b) >> 32),
        (uint32_t)(((uint64_t)ua * ub) >> 32), (uint32_t)(a / b), (uint32_t)(a % b),
        0xffffffffu,        /* x / 0: all ones, as NVIDIA GPUs give */
        ua,                 /* x % 0: x */
        0,                  /* a shift past the width: zero */
        0xffffffffu,        /* an arithmetic shift past the width: the sign */
        ua >> 4, (uint32_t)(a < b ? a : b), ua < ub ? ua : ub, (uint32_t)(a > b ? a : b), ua & 0xff00u, ~ua, ~ub,
        (uint32_t)-b, (uint32_t)(a * b + 7),
        /* clang-format on */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(out[i] == want[i], "integers: result %zu is %#x, not %#x", i, out[i], want[i]);
    memcpy(&wide, out + 20, 8);
    CHECK(wide == (int64_t)a * b, "mul.wide.s32 gave %lld, not %lld", (long long)wide, (long long)a * b);
    memcpy(&wide, out + 22, 8);
    CHECK(wide == (int64_t)a, "cvt.s64.s32 gave %lld", (long long)wide);
    memcpy(&wide, out + 24, 8);
    CHECK((uint64_t)wide == (uint64_t)ua, "cvt.u64.u32 gave %#llx", (unsigned long long)wide);
    memcpy(&wide, out + 26, 8);
    CHECK(wide == 28, "mad.wide.s32 (an address: 7 * 4 + base) gave %lld", (long long)wide);
    CHECK(out[28] == (uint32_t)1000003, "abs.s32 gave %d", (int32_t)out[28]);
    ptxsim_module_free(m);
    buffers_free();
}

/* ------------------------------------------------------------ floats */

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_floats(void)
{
    struct ptxsim_module *m = module(
        ".param .u64 out, .param .f32 x, .param .f32 y",
        ".reg .pred %p<8>;\n.reg .b32 %r<10>;\n.reg .f32 %f<20>;\n.reg .b64 %rd<4>;\n"
        "ld.param.u64 %rd1, [out];\nld.param.f32 %f1, [x];\nld.param.f32 %f2, [y];\n"
        "add.rn.f32 %f3, %f1, %f2;\n st.global.f32 [%rd1], %f3;\n"
        "mul.rn.f32 %f3, %f1, %f2;\n st.global.f32 [%rd1+4], %f3;\n"
        "div.rn.f32 %f3, %f1, %f2;\n st.global.f32 [%rd1+8], %f3;\n"
        "fma.rn.f32 %f3, %f1, %f2, %f1;\n st.global.f32 [%rd1+12], %f3;\n"
        "rcp.rn.f32 %f3, %f2;\n st.global.f32 [%rd1+16], %f3;\n"
        "sqrt.rn.f32 %f3, %f2;\n st.global.f32 [%rd1+20], %f3;\n"
        "neg.f32 %f3, %f1;\n st.global.f32 [%rd1+24], %f3;\n"
        "min.f32 %f3, %f1, 0f7FC00000;\n st.global.f32 [%rd1+28], %f3;\n"    /* NaN: the other */
        "cvt.rzi.s32.f32 %r1, 0f4F800000;\n st.global.u32 [%rd1+32], %r1;\n" /* 2^32: saturates */
        "cvt.rzi.s32.f32 %r1, 0f7FC00000;\n st.global.u32 [%rd1+36], %r1;\n" /* NaN: 0 */
        "cvt.rmi.f32.f32 %f3, %f1;\n st.global.f32 [%rd1+40], %f3;\n"        /* floor */
        "cvt.sat.f32.f32 %f3, %f2;\n st.global.f32 [%rd1+44], %f3;\n"        /* clamped to 1 */
        "cvt.rn.f32.s32 %f3, 16777217;\n st.global.f32 [%rd1+48], %f3;\n"    /* 2^24 + 1 to even */
        "fma.rm.f32 %f3, %f1, 0f3EAAAAAB, 0f00000000;\n st.global.f32 [%rd1+52], %f3;\n"
        "fma.rp.f32 %f3, %f1, 0f3EAAAAAB, 0f00000000;\n st.global.f32 [%rd1+56], %f3;\n"
        "add.ftz.f32 %f3, 0f00000001, 0f00000000;\n st.global.f32 [%rd1+60], %f3;\n" /* a subnormal flushed */
        "add.f32 %f3, 0f00000001, 0f00000000;\n st.global.f32 [%rd1+64], %f3;\n"     /* and kept */
        "ex2.approx.ftz.f32 %f3, 0f40400000;\n st.global.f32 [%rd1+68], %f3;\n"      /* 2^3 */
        "setp.lt.f32 %p1, %f1, 0f7FC00000;\n selp.u32 %r2, 1, 0, %p1;\n st.global.u32 [%rd1+72], %r2;\n"
        "setp.ltu.f32 %p1, %f1, 0f7FC00000;\n selp.u32 %r2, 1, 0, %p1;\n st.global.u32 [%rd1+76], %r2;\n"
        "setp.nan.f32 %p1, %f1, 0f7FC00000;\n selp.u32 %r2, 1, 0, %p1;\n st.global.u32 [%rd1+80], %r2;\n"
        "setp.gt.f32 %p1|%p2, %f1, %f2;\n selp.u32 %r2, 1, 0, %p2;\n st.global.u32 [%rd1+84], %r2;\n"
        "and.pred %p3, %p1, %p2;\n selp.f32 %f4, 0f3F800000, 0fBF800000, %p3;\n st.global.f32 [%rd1+88], "
        "%f4;\n"
        "ret;");
    float x = -2.75f, y = 3.0f;
    float *out = buffer(128);
    struct ptxsim_result r;
    CHECK(run(m, 1, 1, (struct args){{address(out), bits(x), bits(y)}, 3}, 0, 0, NULL, &r) == PTXSIM_OK,
          "floats: %s", r.message);
    volatile float third = from_bits(0x3EAAAAABu), product = x * third;
    const float want[] = {x + y, x * y, x / y, fmaf(x, y, x), 1.0f / y, sqrtf(y), -x, x};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(bits(out[i]) == bits(want[i]), "floats: result %zu is %.9g, not %.9g", i, out[i], want[i]);
    const uint32_t *u = (const uint32_t *)out;
    CHECK(u[8] == 0x7fffffffu, "cvt.rzi.s32.f32 of 2^32 gave %#x, not INT_MAX", u[8]);
    CHECK(u[9] == 0, "cvt.rzi.s32.f32 of NaN gave %#x, not 0", u[9]);
    CHECK(out[10] == -3.0f && out[11] == 1.0f && out[12] == 16777216.0f, "floor %g, sat %g, cvt %.1f",
          out[10], out[11], out[12]);
    /* x / 3 is inexact: rounded down and up it is two neighbouring floats around the nearest */
    CHECK(out[13] < out[14] && nextafterf(out[13], INFINITY) == out[14] &&
              (out[13] == product || out[14] == product),
          "fma.rm and fma.rp gave %.9g and %.9g around %.9g", out[13], out[14], product);
    CHECK(bits(out[15]) == 0 && bits(out[16]) == 1, "add.ftz kept %#x, add lost %#x", bits(out[15]),
          bits(out[16]));
    CHECK(out[17] == 8.0f, "ex2(3) gave %g", out[17]);
    CHECK(u[18] == 0 && u[19] == 1 && u[20] == 1, "lt, ltu, nan with NaN gave %u %u %u, not 0 1 1", u[18],
          u[19], u[20]);
    CHECK(u[21] == 1 && out[22] == -1.0f, "setp's second destination %u, and.pred %g", u[21], out[22]);
    ptxsim_module_free(m);
    buffers_free();
}

/* ----------------------------------------------------- ids, divergence */

/* Each thread writes its global id; odd lanes take one side of an if,
 * even ones the other; a loop runs lane % 5 times; lanes past 40 return
 * early. The record shows the split and the reconvergence. */
static void test_divergence(void)
{
    struct ptxsim_module *m =
        module(".param .u64 out",
               ".reg .pred %p<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<6>;\n"
               "ld.param.u64 %rd1, [out];\n"
               "mov.u32 %r1, %tid.x;\nmov.u32 %r2, %ctaid.x;\nmov.u32 %r3, %ntid.x;\n"
               "mad.lo.s32 %r4, %r2, %r3, %r1;\n" /* the global id */
               "mul.wide.s32 %rd2, %r4, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
               "and.b32 %r5, %r1, 1;\nsetp.eq.s32 %p1, %r5, 0;\n"
               "@%p1 bra EVEN;\n"
               "mov.u32 %r6, 100;\n" /* odd lanes */
               "bra.uni JOIN;\n"
               "EVEN:\n"
               "mov.u32 %r6, 200;\n" /* even lanes */
               "JOIN:\n"
               "rem.u32 %r7, %r1, 5;\nmov.u32 %r8, 0;\n" /* a loop of lane % 5 rounds */
               "setp.eq.s32 %p2, %r7, 0;\n@%p2 bra DONE;\n"
               "LOOP:\n"
               "add.s32 %r8, %r8, 10;\nsub.s32 %r7, %r7, 1;\nsetp.ne.s32 %p3, %r7, 0;\n@%p3 bra LOOP;\n"
               "DONE:\n"
               "add.s32 %r9, %r6, %r8;\n"               /* every lane again */
               "setp.gt.u32 %p2, %r1, 40;\n@%p2 ret;\n" /* an early return */
               "add.s32 %r9, %r9, %r4;\n"
               "st.global.u32 [%rd3], %r9;\n"
               "ret;");
    const struct ptxsim_kernel *k = ptxsim_module_kernel(m, "k");
    uint32_t *out = buffer(2 * 48 * 4);
    for (int i = 0; i < 96; i++)
        out[i] = 0xdeadbeef;
    struct ptxsim_stats *stats = ptxsim_stats_new(k);
    struct ptxsim_result r;
    CHECK(run(m, 2, 48, (struct args){{address(out)}, 1}, 0, 0, stats, &r) == PTXSIM_OK, "divergence: %s",
          r.message);
    for (unsigned b = 0; b < 2; b++)
        for (unsigned t = 0; t < 48; t++) {
            uint32_t got = out[b * 48 + t];
            uint32_t want = t > 40 ? 0xdeadbeef : (t % 2 ? 100u : 200u) + 10 * (t % 5) + b * 48 + t;
            CHECK(got == want, "block %u thread %u wrote %u, not %u", b, t, got, want);
        }
    /* the record: find the instructions by their text */
    int join = -1, odd = -1, after_return = -1;
    for (int i = 0; i < ptxsim_kernel_instruction_count(k); i++) {
        const char *text = ptxsim_kernel_instruction_text(k, i);
        if (strcmp(text, "add.s32 %r9, %r6, %r8") == 0)
            join = i;
        if (strcmp(text, "mov.u32 %r6, 100") == 0)
            odd = i;
        if (strcmp(text, "add.s32 %r9, %r9, %r4") == 0)
            after_return = i;
    }
    CHECK(join >= 0 && odd >= 0 && after_return >= 0, "the test kernel's instructions were not found");
    /* 2 blocks of 2 warps (32 + 16 threads) */
    CHECK(stats->warps == 4, "%llu warps, not 4", (unsigned long long)stats->warps);
    CHECK(stats->ins[odd].issued == 4 && stats->ins[odd].threads == 48,
          "the odd side: issued %llu times for %llu threads, not 4 for 48",
          (unsigned long long)stats->ins[odd].issued, (unsigned long long)stats->ins[odd].threads);
    CHECK(stats->ins[join].issued == 4 && stats->ins[join].threads == 96,
          "after the if and the loop: issued %llu times for %llu threads, not 4 (reconverged) for 96",
          (unsigned long long)stats->ins[join].issued, (unsigned long long)stats->ins[join].threads);
    CHECK(stats->ins[after_return].threads == 82, "after the early return: %llu threads, not 82",
          (unsigned long long)stats->ins[after_return].threads);
    CHECK(stats->thread_instructions < stats->warp_instructions * 32, "no idle lanes recorded");
    ptxsim_stats_free(stats);
    ptxsim_module_free(m);
    buffers_free();
}

/* A join laid out before one of the paths that reach it, as clang lays out
 * `reduce`: the branch's block ends in a conditional branch to ODD and falls
 * through to a jump to EVEN, and both paths jump back up to JOIN. Its
 * control flow graph: the branch block's successors are ODD and the jump;
 * every path from it passes JOIN before the end, and JOIN is the first such
 * block, so JOIN is the branch's immediate post-dominator: a warp diverges
 * there into its odd and even lanes and reconverges at JOIN. Expected from
 * the graph, per warp of 32 lanes: each side's move issued once for its 16
 * lanes, JOIN's store once for all 32. (Running the lowest instruction
 * first, the odd lanes reach JOIN above EVEN and store alone, then the even
 * ones: two issues.) And a uniformly untaken guarded branch: every lane is
 * active, none executes it. */
static void test_reconvergence(void)
{
    struct ptxsim_module *m =
        module(".param .u64 out", ".reg .pred %p<3>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n"
                                  "ld.param.u64 %rd1, [out];\n"
                                  "mov.u32 %r1, %tid.x;\n"
                                  "mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
                                  "setp.gt.u32 %p2, %r1, 1000;\n"
                                  "@%p2 bra NEVER;\n"
                                  "and.b32 %r2, %r1, 1;\nsetp.eq.s32 %p1, %r2, 1;\n"
                                  "@%p1 bra ODD;\n"
                                  "bra.uni EVEN;\n"
                                  "JOIN:\n"
                                  "st.global.u32 [%rd3], %r6;\n"
                                  "NEVER:\n"
                                  "ret;\n"
                                  "ODD:\n"
                                  "mov.u32 %r6, 100;\n"
                                  "bra.uni JOIN;\n"
                                  "EVEN:\n"
                                  "mov.u32 %r6, 200;\n"
                                  "bra.uni JOIN;");
    const struct ptxsim_kernel *k = ptxsim_module_kernel(m, "k");
    uint32_t *out = buffer(64 * 4);
    struct ptxsim_stats *stats = ptxsim_stats_new(k);
    struct ptxsim_result r;
    CHECK(run(m, 1, 64, (struct args){{address(out)}, 1}, 0, 0, stats, &r) == PTXSIM_OK, "reconvergence: %s",
          r.message);
    for (int t = 0; t < 64; t++)
        CHECK(out[t] == (t % 2 ? 100u : 200u), "thread %d wrote %u", t, out[t]);
    int store = -1, odd = -1, even = -1, never = -1;
    for (int i = 0; i < ptxsim_kernel_instruction_count(k); i++) {
        const char *text = ptxsim_kernel_instruction_text(k, i);
        store = strncmp(text, "st.global", 9) == 0 ? i : store;
        odd = strcmp(text, "mov.u32 %r6, 100") == 0 ? i : odd;
        even = strcmp(text, "mov.u32 %r6, 200") == 0 ? i : even;
        never = strcmp(text, "@%p2 bra NEVER") == 0 ? i : never;
    }
    CHECK(store >= 0 && odd >= 0 && even >= 0 && never >= 0, "the test kernel's instructions were not found");
    if (store >= 0 && odd >= 0 && even >= 0 && never >= 0) {
        CHECK(stats->ins[store].issued == 2 && stats->ins[store].threads == 64,
              "JOIN's store: issued %llu times for %llu threads, not once a warp (2) for 64",
              (unsigned long long)stats->ins[store].issued, (unsigned long long)stats->ins[store].threads);
        CHECK(stats->ins[odd].issued == 2 && stats->ins[odd].threads == 32 && stats->ins[even].issued == 2 &&
                  stats->ins[even].threads == 32,
              "the sides: %llu and %llu issues for %llu and %llu threads, not 2 and 2 for 32 and 32",
              (unsigned long long)stats->ins[odd].issued, (unsigned long long)stats->ins[even].issued,
              (unsigned long long)stats->ins[odd].threads, (unsigned long long)stats->ins[even].threads);
        CHECK(stats->ins[never].active == 64 && stats->ins[never].threads == 0,
              "the untaken branch: %llu lanes active and %llu executing, not 64 and 0",
              (unsigned long long)stats->ins[never].active, (unsigned long long)stats->ins[never].threads);
    }
    ptxsim_stats_free(stats);
    ptxsim_module_free(m);
    buffers_free();
}

/* ---------------------------------------------------- shared, barriers */

/* A block reverses 96 values through shared memory: each thread writes
 * its own word, waits, reads its mirror's (written by another warp). */
static const char reverse_body[] =
    ".reg .pred %p<2>;\n.reg .b32 %r<10>;\n.reg .f32 %f<4>;\n.reg .b64 %rd<8>;\n"
    ".shared .align 4 .b8 tile[384];\n"
    "ld.param.u64 %rd1, [in];\nld.param.u64 %rd2, [out];\n"
    "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd3, %r1, 4;\n"
    "add.s64 %rd4, %rd1, %rd3;\nld.global.f32 %f1, [%rd4];\n"
    "mov.u64 %rd5, tile;\nadd.s64 %rd6, %rd5, %rd3;\nst.shared.f32 [%rd6], %f1;\n"
    "BARRIER\n" /* bar.sync 0, or nothing */
    "sub.s32 %r2, 95, %r1;\nmul.wide.u32 %rd3, %r2, 4;\nadd.s64 %rd6, %rd5, %rd3;\n"
    "ld.shared.f32 %f2, [%rd6];\n"
    "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd7, %rd2, %rd3;\nst.global.f32 [%rd7], %f2;\n"
    "ret;";

static struct ptxsim_module *reverse_module(bool barrier)
{
    char body[2048];
    const char *at = strstr(reverse_body, "BARRIER\n");
    snprintf(body, sizeof body, "%.*s%s%s", (int)(at - reverse_body), reverse_body,
             barrier ? "bar.sync 0;\n" : "", at + strlen("BARRIER\n"));
    return module(".param .u64 in, .param .u64 out", body);
}

static void test_shared(void)
{
    struct ptxsim_module *m = reverse_module(true);
    float *in = buffer(96 * 4), *out = buffer(96 * 4);
    for (int i = 0; i < 96; i++)
        in[i] = (float)i * 0.5f;
    struct ptxsim_result r;
    for (uint64_t seed = 0; seed < 4; seed++) { /* any order of the warps */
        memset(out, 0, 96 * 4);
        CHECK(run(m, 1, 96, (struct args){{address(in), address(out)}, 2}, 0, seed, NULL, &r) == PTXSIM_OK,
              "reverse, seed %llu: %s", (unsigned long long)seed, r.message);
        for (int i = 0; i < 96; i++)
            CHECK(out[i] == in[95 - i], "seed %llu: out[%d] is %g, not %g", (unsigned long long)seed, i,
                  out[i], in[95 - i]);
    }
    ptxsim_module_free(m);

    /* without the barrier: a race, found in any warp order; and with the
     * race checker off, the warp order changes what it computes */
    m = reverse_module(false);
    for (uint64_t seed = 0; seed < 3; seed++) {
        CHECK(run(m, 1, 96, (struct args){{address(in), address(out)}, 2}, 0, seed, NULL, &r) == PTXSIM_RACE,
              "no race found without the barrier (seed %llu): %d %s", (unsigned long long)seed, r.outcome,
              r.message);
        CHECK(strstr(r.message, "kernel k, block (0,0,0), thread ") &&
                  strstr(r.message, "a shared-memory race") && strstr(r.message, "shared.f32") &&
                  strstr(r.message, "since the last barrier"),
              "the race's message: %s", r.message);
    }
    printf("race: %s\n", r.message);
    bool differ = false;
    float first[96];
    for (uint64_t seed = 0; seed < 8 && !differ; seed++) {
        memset(out, 0, 96 * 4);
        CHECK(run(m, 1, 96, (struct args){{address(in), address(out)}, 2},
                  PTXSIM_NO_RACE_CHECK | PTXSIM_NO_UNINIT_CHECK, seed, NULL, &r) == PTXSIM_OK,
              "racing with the checks off: %s", r.message);
        if (seed == 0)
            memcpy(first, out, sizeof first);
        else
            differ = memcmp(first, out, sizeof first) != 0;
    }
    CHECK(differ, "eight warp orders computed the same racy result");
    ptxsim_module_free(m);
    buffers_free();
}

/* ------------------------------------------------------------ checkers */

static void expect(struct ptxsim_module *m, unsigned threads, struct args a, enum ptxsim_outcome outcome,
                   const char *const *words, const char *what)
{
    struct ptxsim_result r;
    enum ptxsim_outcome got = run(m, 1, threads, a, 0, 0, NULL, &r);
    CHECK(got == outcome, "%s: outcome %d, not %d: %s", what, got, outcome, r.message);
    for (int i = 0; words[i]; i++)
        CHECK(strstr(r.message, words[i]), "%s: the message lacks \"%s\": %s", what, words[i], r.message);
    printf("%s: %s\n", what, r.message);
    ptxsim_module_free(m);
}

static void test_checkers(void)
{
    float *data = buffer(64 * 4);
    struct args one = {{address(data)}, 1};
    /* a store one element past a buffer of 64 */
    expect(module(".param .u64 p",
                  ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\n"
                  "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
                  "st.global.u32 [%rd3+4], %r1;\nret;"),
           64, one, PTXSIM_BAD_ADDRESS,
           (const char *const[]){"thread 63", "PTX line 13", "st.global.u32 [%rd3+4], %r1",
                                 "just past the end of an allocation of 256 bytes", NULL},
           "past a buffer");
    /* a load from an address in no allocation */
    expect(module(".param .u64 p", ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n"
                                   "mov.u64 %rd1, 4096;\nld.global.u32 %r1, [%rd1];\nret;"),
           1, one, PTXSIM_BAD_ADDRESS, (const char *const[]){"at 0x1000, outside every allocation", NULL},
           "no allocation");
    /* a misaligned load */
    expect(module(".param .u64 p", ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\n"
                                   "ld.global.u32 %r1, [%rd1+2];\nret;"),
           1, one, PTXSIM_BAD_ADDRESS, (const char *const[]){"misaligned", NULL}, "misaligned");
    /* past the block's shared memory */
    expect(module(".param .u64 p",
                  ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.shared .align 4 .b8 s[64];\n"
                  "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd1, %r1, 4;\nst.shared.u32 [%rd1], %r1;\nret;"),
           32, one, PTXSIM_BAD_ADDRESS,
           (const char *const[]){"thread 16", "at 64, past the block's 64 bytes of shared memory", NULL},
           "past shared memory");
    /* a barrier half the block returns before */
    expect(module(".param .u64 p",
                  ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n"
                  "mov.u32 %r1, %tid.x;\nsetp.ge.u32 %p1, %r1, 64;\n@%p1 ret;\nbar.sync 0;\nret;"),
           96, one, PTXSIM_BARRIER,
           (const char *const[]){
               "64 threads of the block wait at this barrier, but 32 ended without reaching it",
               "thread 64 first", "bar.sync 0", NULL},
           "a barrier some threads skip");
    /* two barriers: odd warps wait at one, even ones at the other */
    expect(module(".param .u64 p", ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n"
                                   "mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 32;\nsetp.eq.u32 %p1, %r2, 0;\n"
                                   "@%p1 bra OTHER;\nbar.sync 0;\nret;\nOTHER:\nbar.sync 0;\nret;"),
           64, one, PTXSIM_BARRIER, (const char *const[]){"waits at this barrier while thread", NULL},
           "two different barriers");
    /* a barrier whose guard is off in every lane is no barrier: the block ends normally */
    {
        struct ptxsim_result r;
        struct ptxsim_module *m = module(".param .u64 p", ".reg .pred %p<2>;\n.reg .b32 %r<4>;\n"
                                                          "mov.u32 %r1, %tid.x;\nsetp.gt.u32 %p1, %r1, 999;\n"
                                                          "@%p1 bar.sync 0;\nret;");
        CHECK(run(m, 1, 64, one, 0, 0, NULL, &r) == PTXSIM_OK, "a barrier guarded off: %s", r.message);
        ptxsim_module_free(m);
    }
    /* a register read before any write */
    expect(module(".param .u64 p", ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [p];\n"
                                   "add.s32 %r2, %r1, 1;\nst.global.u32 [%rd1], %r2;\nret;"),
           1, one, PTXSIM_UNINITIALISED,
           (const char *const[]){"it reads %r1, which this thread has never written", NULL},
           "a register never written");
    /* a shared word no thread wrote */
    expect(module(".param .u64 p", ".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n.shared .align 4 .b8 s[64];\n"
                                   "mov.u64 %rd1, s;\nld.shared.u32 %r1, [%rd1+8];\nret;"),
           1, one, PTXSIM_UNINITIALISED,
           (const char *const[]){"the shared word at 8, which no thread of this block had written", NULL},
           "shared memory never written");
    /* a loop without end, stopped by the watchdog */
    expect(module(".param .u64 p", "FOREVER:\nbra.uni FOREVER;\nret;"), 32, one, PTXSIM_TIMEOUT,
           (const char *const[]){"watchdog", NULL}, "the watchdog");
    buffers_free();
}

/* -------------------------------------------------------------- parser */

static void refused(const char *body, const char *const *words, const char *what)
{
    char text[4096], why[1024] = "";
    snprintf(text, sizeof text,
             ".version 7.0\n.target sm_35\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n%s\n}\n",
             body);
    struct ptxsim_module *m = ptxsim_module_parse(text, why, sizeof why);
    CHECK(!m, "%s: parsed, but should not", what);
    ptxsim_module_free(m);
    for (int i = 0; words[i]; i++)
        CHECK(strstr(why, words[i]), "%s: the reason lacks \"%s\": %s", what, words[i], why);
    printf("%s: %s\n", what, why);
}

static void test_parser(void)
{
    refused(".reg .b32 %r<4>;\nmov.u32 %r1, 0;\nshfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\nret;",
            (const char *const[]){"PTX line 8, kernel k", "shfl.sync.bfly.b32", "the instruction shfl", NULL},
            "an instruction it does not know");
    refused(".reg .b32 %r<4>;\nadd.cc.s32 %r1, %r2, %r3;\nret;",
            (const char *const[]){"PTX line 7", "the modifier .cc", NULL}, "a modifier it does not know");
    refused(".reg .b32 %r<4>;\nadd.s32 %r1, %r9, 1;\nret;",
            (const char *const[]){"the register %r9 is not declared", NULL}, "a register not declared");
    refused("bra.uni NOWHERE;\nret;", (const char *const[]){"NOWHERE, which is no label", NULL},
            "a missing label");
    refused(".reg .f64 %fd<4>;\nadd.f64 %fd1, %fd2, %fd3;\nret;",
            (const char *const[]){"add.f64", "doubles: ember's kernels use none", NULL}, "a double");
    refused(".local .align 4 .b8 stack[16];\nret;", (const char *const[]){".local", NULL}, "a stack");
    char why[512];
    struct ptxsim_module *m = ptxsim_module_parse(
        ".version 3.2\n.target sm_30\n.address_size 64\n.func f()\n{\nret;\n}\n", why, sizeof why);
    CHECK(!m && strstr(why, ".func"), "a device function was not refused: %s", why);
    ptxsim_module_free(m);
}

/* ----------------------------------------------------- ember's kernels */

static void test_builtin(void)
{
    char why[1024];
    struct ptxsim_module *m = ptxsim_module_parse(cuda_baseline_ptx(), why, sizeof why);
    CHECK(m != NULL, "the built-in PTX does not parse: %s", why);
    if (!m)
        return;
    CHECK(ptxsim_module_version(m) == 32 && ptxsim_module_target(m) == 30,
          "the built-in PTX is .version %d sm_%d", ptxsim_module_version(m), ptxsim_module_target(m));
    CHECK(ptxsim_module_kernel_count(m) == EMBER_KERNEL_COUNT, "%d kernels, ember has %d",
          ptxsim_module_kernel_count(m), EMBER_KERNEL_COUNT);
    for (int k = 0; k < EMBER_KERNEL_COUNT; k++)
        CHECK(ptxsim_module_kernel(m, ember_kernel_name(k)) != NULL, "kernel %s is not in it",
              ember_kernel_name(k));
    const unsigned char *tuning;
    size_t size;
    int values[EMBER_KERNEL_TUNING_COUNT];
    struct ember_kernel_tuning t = ember_kernel_tuning_default();
    ember_kernel_tuning_values(&t, values);
    CHECK(ptxsim_module_variable(m, EMBER_KERNEL_TUNING_SYMBOL, &tuning, &size) && size == sizeof values &&
              memcmp(tuning, values, size) == 0,
          "its tuning constant is not the default tuning");
    const struct ptxsim_kernel *sgemm = ptxsim_module_kernel(m, "sgemm");
    CHECK(sgemm && ptxsim_kernel_shared_bytes(sgemm) == (size_t)ember_kernel_gemm_local_bytes(&t),
          "sgemm's shared memory: %zu bytes", sgemm ? ptxsim_kernel_shared_bytes(sgemm) : 0);
    ptxsim_module_free(m);
}

/* ------------------------------------------------------- occupancy, banks */

/* Occupancy cases, each worked out by NVIDIA's own arithmetic
 * (cudaOccMaxActiveBlocksPerMultiprocessor of CUDA 13.0's
 * cuda_occupancy.h, given each arch's device properties as
 * tests/gpu/test_occupancy.c states them, which compares a million cases
 * where a toolkit is installed): blocks a multiprocessor and what limits
 * them. Among them, the reduce kernel of docs/how-it-works.md's section 8
 * exercise 3 with 32 KiB of shared memory (sm_90: 6 blocks, where leaving
 * out the driver's 1 KiB a block gave 7) and sgemm on the GTX 1080 by
 * ptxas's 38 registers and the 25 of an estimate. */
static void test_occupancy_table(void)
{
    static const struct {
        int sm, threads, registers, shared, blocks;
        const char *limited_by;
    } cases[] = {
        {30, 64, 55, 4096, 12, "shared memory"},
        {30, 256, 32, 0, 8, "threads and registers"},
        {35, 256, 32, 32768, 1, "shared memory"},
        {35, 64, 40, 4096, 12, "shared memory"},
        {37, 256, 64, 8192, 8, "threads and registers"},
        {50, 128, 37, 0, 12, "registers"},
        {52, 256, 40, 12288, 6, "registers"},
        {53, 1024, 33, 0, 0, NULL},
        {60, 320, 169, 0, 0, NULL},
        {61, 256, 25, 4096, 8, "threads and registers"},
        {61, 256, 38, 4096, 6, "registers"},
        {61, 64, 64, 0, 16, "registers"},
        {70, 256, 72, 16384, 3, "registers"},
        {75, 256, 32, 0, 4, "threads"},
        {80, 256, 32, 32768, 4, "shared memory"},
        {86, 128, 40, 8192, 11, "shared memory"},
        {89, 1024, 24, 0, 1, "threads"},
        {90, 256, 32, 32768, 6, "shared memory"},
        {90, 256, 16, 1024, 8, "threads"},
        {90, 64, 255, 0, 4, "registers"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct ptxsim_arch *a = ptxsim_arch_find(cases[i].sm);
        CHECK(a != NULL, "no sm_%d in the table", cases[i].sm);
        if (!a)
            continue;
        struct ptxsim_occupancy o;
        ptxsim_occupancy(a, cases[i].threads, cases[i].registers, (size_t)cases[i].shared, &o);
        CHECK(o.blocks == cases[i].blocks &&
                  (cases[i].blocks == 0 ? o.cannot != NULL : strcmp(o.limited_by, cases[i].limited_by) == 0),
              "sm_%d, %d threads, %d registers, %d bytes shared: %d blocks limited by %s, not %d by %s",
              cases[i].sm, cases[i].threads, cases[i].registers, cases[i].shared, o.blocks,
              o.blocks ? o.limited_by : o.cannot, cases[i].blocks,
              cases[i].limited_by ? cases[i].limited_by : "nothing that fits");
    }
}

/* Each lane stores to the first word of its own 128-byte row, a column of a
 * tile 32 floats wide: every lane in bank 0. From Maxwell on that is 32
 * words of one bank, 32 passes; on Kepler, whose banks are 64 bits wide,
 * words w and w + 32 share a row of the bank: 16 passes. In Kepler's 64-bit
 * mode 8-byte word q is in bank q mod 32: lanes 128 bytes apart alternate
 * banks 0 and 16, 16 rows each: 16 passes too. */
static void test_banks(void)
{
    struct ptxsim_module *m = module("", ".reg .b32 %r<4>;\n.reg .f32 %f<2>;\n.reg .b64 %rd<4>;\n"
                                         ".shared .align 4 .b8 tile[4096];\n"
                                         "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd1, %r1, 128;\n"
                                         "mov.u64 %rd2, tile;\nadd.s64 %rd3, %rd2, %rd1;\n"
                                         "mov.f32 %f1, 0f3F800000;\nst.shared.f32 [%rd3], %f1;\nret;");
    const struct ptxsim_kernel *k = ptxsim_module_kernel(m, "k");
    struct ptxsim_stats *stats = ptxsim_stats_new(k);
    struct ptxsim_result r;
    CHECK(run(m, 1, 32, (struct args){{0}, 0}, 0, 0, stats, &r) == PTXSIM_OK, "banks: %s", r.message);
    int store = -1;
    for (int i = 0; i < ptxsim_kernel_instruction_count(k); i++)
        if (strncmp(ptxsim_kernel_instruction_text(k, i), "st.shared", 9) == 0)
            store = i;
    CHECK(
        store >= 0 && stats->ins[store].wavefronts == 32 && stats->ins[store].wavefronts_kepler == 16 &&
            stats->ins[store].wavefronts_kepler64 == 16,
        "a column store: %llu passes (4-byte banks), %llu (Kepler's) and %llu (its 64-bit mode), not 32, 16 "
        "and 16",
        store >= 0 ? (unsigned long long)stats->ins[store].wavefronts : 0ull,
        store >= 0 ? (unsigned long long)stats->ins[store].wavefronts_kepler : 0ull,
        store >= 0 ? (unsigned long long)stats->ins[store].wavefronts_kepler64 : 0ull);
    ptxsim_stats_free(stats);
    ptxsim_module_free(m);
}

int main(void)
{
    test_integers();
    test_floats();
    test_divergence();
    test_reconvergence();
    test_shared();
    test_checkers();
    test_parser();
    test_builtin();
    test_occupancy_table();
    test_banks();
    return test_finish("test_ptxsim");
}
