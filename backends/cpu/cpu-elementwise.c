/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-elementwise.c — fill, unary and binary: a loop for each
 * row of base/elementwise-impl.h, its formula in the loop's body.
 *
 * Dense launches run one flat loop per op, which the compiler vectorises;
 * strided ones walk rows of the innermost axis, each row's start found from
 * the outer axes' strides.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu-impl.h"

/* elements per task below which threading costs more than it gains */
#define EWISE_GRAIN 16384

/* ------------------------------------------------------ the vocabulary
 * of the rows' formulas (base/elementwise-impl.h), for the CPU: the
 * exponential and tanh as polynomials that vectorise (libm's do not), the
 * rest libm's. */

/* tanh x: near zero its odd Taylor series (to x^9: error below 1e-8 for
 * |x| < 0.25), elsewhere (1 - t) / (1 + t) with t = e^-2|x|, which loses no
 * precision there (t < 0.61); both computed, one kept, so the loop has no
 * branch. Saturates to +-1. */
static inline float poly_tanhf(float x)
{
    float a = fabsf(x), x2 = x * x;
    float small =
        x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f + x2 * (-0.0539682540f + x2 * 0.0218694885f))));
    float t = poly_expf(-2.0f * a);
    float large = copysignf((1.0f - t) / (1.0f + t), x);
    return a < 0.25f ? small : large;
}

/* e^x as IEEE's: Inf past ln FLT_MAX, and 0 below ln FLT_MIN, where
 * poly_expf saturates (which suits softmax, not exp itself) */
static inline float cpu_expf(float x)
{
    return x > 88.7228394f ? INFINITY : x < -87.3365448f ? 0.0f : poly_expf(x);
}

#define EXPF(x)       cpu_expf(x)
#define LOGF(x)       logf(x)
#define LOG1PF(x)     log1pf(x)
#define SQRTF(x)      sqrtf(x)
#define TANHF(x)      poly_tanhf(x)
#define NORMAL_CDF(x) (0.5f * erfcf((x) * -0.70710678f))
#define NORMAL_PDF(x) (0.39894228f * expf(-0.5f * (x) * (x)))

/* ------------------------------------------------------------ the loops
 * One loop per row, each its formula over [begin, end) with the operands
 * read and written through OUT_AT, A_AT and B_AT, which each function
 * below defines for its layout: so the switch on the op sits outside the
 * loops and each loop is a plain one, which the compiler vectorises when
 * the layout is dense. */
#define UNARY_LOOP(NAME, f)                                                                                  \
    case EMBER_##NAME:                                                                                       \
        for (int64_t i = begin; i < end; i++) {                                                              \
            float x = A_AT(i);                                                                               \
            OUT_AT(i) = (f);                                                                                 \
        }                                                                                                    \
        return;
#define UNARY_PRIMITIVE_LOOP(NAME, name, f, ...)   UNARY_LOOP(NAME, f)
#define ACTIVATION_LOOP(NAME, name, param, f, ...) UNARY_LOOP(NAME, f)
#define UNARY_LOOPS(op)                                                                                      \
    switch ((enum ember_unary_op)(op)) {                                                                     \
        EMBER_UNARY_PRIMITIVES(UNARY_PRIMITIVE_LOOP)                                                         \
        EMBER_ACTIVATIONS(ACTIVATION_LOOP)                                                                   \
    case EMBER_UNARY_COUNT: return;                                                                          \
    }

#define BINARY_PRIMITIVE_LOOP(NAME, name, f, math)                                                           \
    case EMBER_##NAME:                                                                                       \
        for (int64_t i = begin; i < end; i++) {                                                              \
            float a = A_AT(i), b = B_AT(i);                                                                  \
            OUT_AT(i) = (f);                                                                                 \
        }                                                                                                    \
        return;
/* an activation's backward: dy, and x or y as its row says */
#define BACKWARD_LOOP(NAME, name, param, f, fmath, saves, g, ...)                                            \
    case EMBER_##NAME##_BACKWARD:                                                                            \
        for (int64_t i = begin; i < end; i++) {                                                              \
            float dy = A_AT(i), saves = B_AT(i);                                                             \
            OUT_AT(i) = (g);                                                                                 \
        }                                                                                                    \
        return;
#define BINARY_LOOPS(op)                                                                                     \
    switch ((enum ember_binary_op)(op)) {                                                                    \
        EMBER_BINARY_PRIMITIVES(BINARY_PRIMITIVE_LOOP)                                                       \
        EMBER_ACTIVATIONS(BACKWARD_LOOP)                                                                     \
    case EMBER_BINARY_COUNT: return;                                                                         \
    }

/* dense: out, a and b contiguous over [begin, end) */
#define OUT_AT(i) out[i]
#define A_AT(i)   pa[i]
#define B_AT(i)   pb[i]
CPU_WIDEST_VECTORS static void unary_dense(int op, float alpha, float *out, const float *pa, int64_t begin,
                                           int64_t end)
{
    if (op == EMBER_COPY) { /* bits, not values: it copies I32 tensors too */
        memmove(out + begin, pa + begin, (size_t)(end - begin) * sizeof *out);
        return;
    }
    UNARY_LOOPS(op)
}

CPU_WIDEST_VECTORS static void binary_dense(int op, float alpha, float *out, const float *pa, const float *pb,
                                            int64_t begin, int64_t end)
{
    BINARY_LOOPS(op)
}
#undef B_AT

/* the same with one value of b for the whole row (BatchNorm's per-channel
 * statistics) */
#define B_AT(i) b0
CPU_WIDEST_VECTORS static void binary_dense_b0(int op, float alpha, float *out, const float *pa, float b0,
                                               int64_t begin, int64_t end)
{
    BINARY_LOOPS(op)
}
#undef OUT_AT
#undef A_AT
#undef B_AT

/* one row of a strided launch: out, a and b each with its own stride */
#define OUT_AT(i) out[(i)*so]
#define A_AT(i)   pa[(i)*sa]
#define B_AT(i)   pb[(i)*sb]
static void unary_strided_row(int op, float alpha, float *out, const float *pa, int64_t begin, int64_t end,
                              int64_t so, int64_t sa)
{
    if (op == EMBER_COPY) { /* bits, not values */
        for (int64_t i = begin; i < end; i++)
            memcpy(&out[i * so], &pa[i * sa], sizeof *out);
        return;
    }
    UNARY_LOOPS(op)
}

static void binary_strided_row(int op, float alpha, float *out, const float *pa, const float *pb,
                               int64_t begin, int64_t end, int64_t so, int64_t sa, int64_t sb)
{
    BINARY_LOOPS(op)
}
#undef OUT_AT
#undef A_AT
#undef B_AT

struct ewise_job {
    const struct ember_ewise *e;
    bool binary;
    int op;
    float alpha;
    float *out;
    const float *a, *b;
};

static void ewise_dense(void *p, int64_t begin, int64_t end)
{
    const struct ewise_job *j = p;
    if (j->binary)
        binary_dense(j->op, j->alpha, j->out, j->a, j->b, begin, end);
    else
        unary_dense(j->op, j->alpha, j->out, j->a, begin, end);
}

static void unary_row(int op, float alpha, float *out, const float *a, int64_t len, int64_t so, int64_t sa)
{
    if (op == EMBER_COPY && so == 1 && sa == 0) { /* one value repeated */
        for (int64_t i = 0; i < len; i++)
            memcpy(&out[i], a, sizeof *out);
    } else if (so == 1 && sa == 1) { /* a contiguous run: the loops that vectorise */
        unary_dense(op, alpha, out, a, 0, len);
    } else {
        unary_strided_row(op, alpha, out, a, 0, len, so, sa);
    }
}

static void binary_row(int op, float alpha, float *out, const float *a, const float *b, int64_t len,
                       int64_t so, int64_t sa, int64_t sb)
{
    if (so == 1 && sa == 1 && sb == 1)
        binary_dense(op, alpha, out, a, b, 0, len);
    else if (so == 1 && sa == 1 && sb == 0)
        binary_dense_b0(op, alpha, out, a, b[0], 0, len);
    else
        binary_strided_row(op, alpha, out, a, b, 0, len, so, sa, sb);
}

/* Strided: [begin, end) are rows of the innermost axis. */
static void ewise_strided(void *p, int64_t begin, int64_t end)
{
    const struct ewise_job *j = p;
    const struct ember_ewise *e = j->e;
    int last = e->ndim - 1;
    int64_t len = e->shape[last];
    int64_t so = e->stride_out[last], sa = e->stride_a[last], sb = e->stride_b[last];
    for (int64_t row = begin; row < end; row++) {
        int64_t oo = 0, oa = 0, ob = 0, rest = row;
        for (int d = last - 1; d >= 0; d--) {
            int64_t idx = rest % e->shape[d];
            rest /= e->shape[d];
            oo += idx * e->stride_out[d];
            oa += idx * e->stride_a[d];
            ob += idx * e->stride_b[d];
        }
        if (j->binary)
            binary_row(j->op, j->alpha, j->out + oo, j->a + oa, j->b + ob, len, so, sa, sb);
        else
            unary_row(j->op, j->alpha, j->out + oo, j->a + oa, len, so, sa);
    }
}

static ember_status ewise_run(struct cpu_device *d, struct ewise_job *j)
{
    const struct ember_ewise *e = j->e;
    if (e->numel == 0)
        return EMBER_OK;
    if (e->dense) {
        cpu_parallel_for(d->pool, e->numel, EWISE_GRAIN, ewise_dense, j);
    } else {
        int64_t len = e->shape[e->ndim - 1], rows = e->numel / len;
        cpu_parallel_for(d->pool, rows, EWISE_GRAIN / len + 1, ewise_strided, j);
    }
    return EMBER_OK;
}

ember_status cpu_unary(void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out,
                       ember_ptr a, float alpha)
{
    struct ewise_job j = {.e = e, .op = op, .alpha = alpha, .out = cpu_f32(out), .a = cpu_f32(a)};
    return ewise_run(dev, &j);
}

ember_status cpu_binary(void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out,
                        ember_ptr a, ember_ptr b, float alpha)
{
    struct ewise_job j = {.e = e,
                          .binary = true,
                          .op = op,
                          .alpha = alpha,
                          .out = cpu_f32(out),
                          .a = cpu_f32(a),
                          .b = cpu_f32(b)};
    return ewise_run(dev, &j);
}

struct fill_job {
    float *out;
    float value;
};

static void fill_range(void *p, int64_t begin, int64_t end)
{
    const struct fill_job *j = p;
    for (int64_t i = begin; i < end; i++)
        j->out[i] = j->value;
}

ember_status cpu_fill(void *dev, ember_ptr out, size_t n, float value)
{
    struct cpu_device *d = dev;
    struct fill_job j = {.out = cpu_f32(out), .value = value};
    cpu_parallel_for(d->pool, (int64_t)n, EWISE_GRAIN * 4, fill_range, &j);
    return EMBER_OK;
}
