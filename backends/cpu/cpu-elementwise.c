/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-elementwise.c — fill, unary and binary.
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

/* 1 / (1 + e^-x) */
static inline float poly_sigmoidf(float x) { return 1.0f / (1.0f + poly_expf(-x)); }

/* GELU's tanh form (GPT-2's) and its derivative: with u = k (x + c x^3) and
 * t = tanh u, y = x (1 + t) / 2 and y' = (1 + t) / 2 + x (1 - t^2) k (1 + 3 c x^2) / 2 */
#define GELU_TANH_K 0.7978845608f /* sqrt(2 / pi) */
#define GELU_TANH_C 0.044715f
static inline float gelu_tanhf(float x)
{
    return 0.5f * x * (1.0f + poly_tanhf(GELU_TANH_K * (x + GELU_TANH_C * x * x * x)));
}
static inline float gelu_tanh_grad(float x)
{
    float t = poly_tanhf(GELU_TANH_K * (x + GELU_TANH_C * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_TANH_K * (1.0f + 3.0f * GELU_TANH_C * x * x);
}

/* Phi(x), the standard normal CDF, and phi(x), its density: GELU's parts */
static float normal_cdf(float x) { return 0.5f * erfcf(-x * 0.70710678f); }
static float normal_pdf(float x) { return 0.39894228f * expf(-0.5f * x * x); }

static float unary_value(enum ember_unary_op op, float x, float alpha)
{
    switch (op) {
    case EMBER_COPY: return x;
    case EMBER_NEG: return -x;
    case EMBER_RELU: return x < 0.0f ? 0.0f : x; /* NaN passes, as in PyTorch */
    case EMBER_EXP: return expf(x);
    case EMBER_LOG: return logf(x);
    case EMBER_SCALE: return alpha * x;
    case EMBER_ADD_SCALAR: return x + alpha;
    case EMBER_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case EMBER_SIGMOID: return poly_sigmoidf(x);
    case EMBER_TANH: return poly_tanhf(x);
    case EMBER_GELU: return x * normal_cdf(x);
    case EMBER_RSQRT: return 1.0f / sqrtf(x + alpha);
    case EMBER_GELU_TANH: return gelu_tanhf(x);
    case EMBER_UNARY_COUNT: break;
    }
    return NAN;
}

static float binary_value(enum ember_binary_op op, float a, float b, float alpha)
{
    switch (op) {
    case EMBER_ADD: return a + b;
    case EMBER_SUB: return a - b;
    case EMBER_MUL: return a * b;
    case EMBER_DIV: return a / b;
    case EMBER_RELU_BACKWARD: return b > 0.0f ? a : 0.0f;
    case EMBER_LEAKY_RELU_BACKWARD: return b > 0.0f ? a : alpha * a;
    case EMBER_SIGMOID_BACKWARD: return a * b * (1.0f - b);
    case EMBER_TANH_BACKWARD: return a * (1.0f - b * b);
    case EMBER_GELU_BACKWARD: return a * (normal_cdf(b) + b * normal_pdf(b));
    case EMBER_GELU_TANH_BACKWARD: return a * gelu_tanh_grad(b);
    case EMBER_BINARY_COUNT: break;
    }
    return NAN;
}

/* The binary ops over [begin, end), with b read as B: b[i] (a dense
 * operand) or b0 (one value, broadcast along the row, as BatchNorm's
 * per-channel statistics are). The switch sits outside the loops so each
 * loop is a plain, vectorisable one. */
#define BINARY_LOOP(expr)                                                                                    \
    for (int64_t i = begin; i < end; i++)                                                                    \
        out[i] = (expr);                                                                                     \
    return
#define BINARY_CASES(B)                                                                                      \
    switch ((enum ember_binary_op)op) {                                                                      \
    case EMBER_ADD: BINARY_LOOP(a[i] + (B));                                                                 \
    case EMBER_SUB: BINARY_LOOP(a[i] - (B));                                                                 \
    case EMBER_MUL: BINARY_LOOP(a[i] * (B));                                                                 \
    case EMBER_DIV: BINARY_LOOP(a[i] / (B));                                                                 \
    case EMBER_LEAKY_RELU_BACKWARD: BINARY_LOOP((B) > 0.0f ? a[i] : alpha * a[i]);                           \
    case EMBER_SIGMOID_BACKWARD: BINARY_LOOP(a[i] * (B) * (1.0f - (B)));                                     \
    case EMBER_TANH_BACKWARD: BINARY_LOOP(a[i] * (1.0f - (B) * (B)));                                        \
    case EMBER_GELU_BACKWARD: BINARY_LOOP(binary_value(EMBER_GELU_BACKWARD, a[i], (B), alpha));              \
    case EMBER_GELU_TANH_BACKWARD: BINARY_LOOP(a[i] * gelu_tanh_grad(B));                                    \
    case EMBER_RELU_BACKWARD:                                                                                \
        /* a mask on the bits, not a select: the signs of b are a coin toss to                               \
         * the branch predictor, and a * (b > 0) would turn 0 * Inf into NaN */                              \
        for (int64_t i = begin; i < end; i++) {                                                              \
            uint32_t bits;                                                                                   \
            memcpy(&bits, &a[i], sizeof bits);                                                               \
            bits &= -(uint32_t)((B) > 0.0f);                                                                 \
            memcpy(&out[i], &bits, sizeof bits);                                                             \
        }                                                                                                    \
        return;                                                                                              \
    case EMBER_BINARY_COUNT: return;                                                                         \
    }

CPU_WIDEST_VECTORS static void binary_dense(int op, float alpha, float *out, const float *a, const float *b,
                                            int64_t begin, int64_t end){BINARY_CASES(b[i])}

CPU_WIDEST_VECTORS static void binary_dense_b0(int op, float alpha, float *out, const float *a, float b0,
                                               int64_t begin, int64_t end)
{
    BINARY_CASES(b0)
}
#undef BINARY_CASES
#undef BINARY_LOOP

struct ewise_job {
    const struct ember_ewise *e;
    bool binary;
    int op;
    float alpha;
    float *out;
    const float *a, *b;
};

/* Dense: the switch sits outside the loops so each loop is a plain,
 * vectorisable one. COPY moves bits (it also copies I32 tensors). */
CPU_WIDEST_VECTORS static void ewise_dense(void *p, int64_t begin, int64_t end)
{
    const struct ewise_job *j = p;
    float *out = j->out;
    const float *a = j->a, *b = j->b;
#define DENSE_LOOP(expr)                                                                                     \
    for (int64_t i = begin; i < end; i++)                                                                    \
        out[i] = (expr);                                                                                     \
    return

    if (!j->binary) {
        float alpha = j->alpha;
        switch ((enum ember_unary_op)j->op) {
        case EMBER_COPY: memmove(out + begin, a + begin, (size_t)(end - begin) * sizeof *out); return;
        case EMBER_NEG: DENSE_LOOP(-a[i]);
        case EMBER_RELU: DENSE_LOOP(a[i] < 0.0f ? 0.0f : a[i]);
        case EMBER_EXP: DENSE_LOOP(expf(a[i]));
        case EMBER_LOG: DENSE_LOOP(logf(a[i]));
        case EMBER_SCALE: DENSE_LOOP(alpha * a[i]);
        case EMBER_ADD_SCALAR: DENSE_LOOP(a[i] + alpha);
        case EMBER_LEAKY_RELU: DENSE_LOOP(a[i] < 0.0f ? alpha * a[i] : a[i]);
        case EMBER_SIGMOID: DENSE_LOOP(poly_sigmoidf(a[i]));
        case EMBER_TANH: DENSE_LOOP(poly_tanhf(a[i]));
        case EMBER_GELU_TANH: DENSE_LOOP(gelu_tanhf(a[i]));
        case EMBER_GELU:
        case EMBER_RSQRT: DENSE_LOOP(unary_value(j->op, a[i], alpha));
        case EMBER_UNARY_COUNT: return;
        }
    }
#undef DENSE_LOOP
    binary_dense(j->op, j->alpha, out, a, b, begin, end);
}

/* One row of a strided launch: the switch sits outside the loop. */
#define ROW_LOOP(expr)                                                                                       \
    for (int64_t i = 0; i < len; i++)                                                                        \
        out[i * so] = (expr);

static void unary_row(int op, float alpha, float *out, const float *a, int64_t len, int64_t so, int64_t sa)
{
    if (op == EMBER_COPY && so == 1 && sa <= 1) { /* a contiguous run, or one value repeated */
        if (sa == 1)
            memcpy(out, a, (size_t)len * sizeof *out);
        else
            for (int64_t i = 0; i < len; i++)
                memcpy(&out[i], a, sizeof *out);
        return;
    }
    switch ((enum ember_unary_op)op) {
    case EMBER_COPY: /* bits, not values: it copies I32 tensors too */
        for (int64_t i = 0; i < len; i++)
            memcpy(&out[i * so], &a[i * sa], sizeof *out);
        return;
    case EMBER_SCALE: ROW_LOOP(alpha * a[i * sa]); return;
    case EMBER_RELU: ROW_LOOP(a[i * sa] < 0.0f ? 0.0f : a[i * sa]); return;
    default: ROW_LOOP(unary_value(op, a[i * sa], alpha)); return;
    }
}

static void binary_row(int op, float alpha, float *out, const float *a, const float *b, int64_t len,
                       int64_t so, int64_t sa, int64_t sb)
{
    if (so == 1 && sa == 1 && sb <= 1) { /* contiguous, b contiguous or one value: loops that vectorise */
        if (sb == 1)
            binary_dense(op, alpha, out, a, b, 0, len);
        else
            binary_dense_b0(op, alpha, out, a, b[0], 0, len);
        return;
    }
    switch ((enum ember_binary_op)op) {
    case EMBER_ADD: ROW_LOOP(a[i * sa] + b[i * sb]); return;
    case EMBER_SUB: ROW_LOOP(a[i * sa] - b[i * sb]); return;
    case EMBER_MUL: ROW_LOOP(a[i * sa] * b[i * sb]); return;
    default: ROW_LOOP(binary_value(op, a[i * sa], b[i * sb], alpha)); return;
    }
}
#undef ROW_LOOP

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
