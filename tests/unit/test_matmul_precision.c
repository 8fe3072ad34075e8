/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_matmul_precision.c — ember_ctx_set_matmul_precision and
 * the CPU's products under EMBER_MATMUL_HIGH (backends/cpu/cpu-gemm-amx.c).
 *
 *   test_matmul_precision [--expect-amx | --expect-no-amx]
 *
 * The setting: HIGHEST by default, HIGH when asked, anything else refused
 * with a message. Then the device's sgemm, on a CPU of two threads, over
 * shapes chosen to reach every path of the tile kernel (ragged edges on
 * every side, A and B as stored and transposed, either packed whole, k past a
 * chunk and past a span, alpha and beta, a batch, row strides wider than
 * the rows with guard values between them), each at every precision, held
 * to a double-precision sum:
 *   - HIGHEST within float32's rounding, as always;
 *   - HIGH within bfloat16 x 3's: a normalised squared error under 1e-9
 *     (measured 1e-11 to 1e-10 on a Sapphire Rapids core), every guard
 *     untouched;
 *   - MEDIUM within bfloat16's: under 1e-4 (measured 4e-6);
 *   - where the CPU has AMX (ember_ctx_matmul_precision_matters), HIGH's
 *     results must differ from HIGHEST's, and MEDIUM's from HIGH's,
 *     somewhere in every large product (so the tile unit did run as
 *     asked), and where it has not, be the same bits.
 * Inf and NaN in A must land where float32's do at every precision.
 * --expect-amx fails on a CPU without the tile unit (for a machine known to
 * have one); --expect-no-amx fails where it is used (run under
 * EMBER_CPU_SIMD=avx512 and avx2, which must leave it out).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctx-impl.h"
#include "ops-impl.h"
#include "quant.h"
#include "test-util.h"

#define GUARD_VALUE 12345.0f

struct shape {
    const char *what;
    int64_t m, n, k;
    bool trans_a, trans_b;
    float alpha, beta;
    int64_t batch;
    int64_t pad; /* extra floats at the end of every row of A, B and C */
};

static const struct shape SHAPES[] = {
    {"ragged, B as stored (A packed whole)", 130, 167, 200, false, false, 1.0f, 0.0f, 1, 0},
    {"ragged, B transposed, accumulate", 67, 130, 300, false, true, 1.0f, 1.0f, 1, 3},
    {"B packed whole, k not a multiple of 32, beta 0.5", 300, 40, 97, false, false, 1.0f, 0.5f, 2, 5},
    {"alpha 0.25, B transposed, B packed whole", 256, 64, 160, false, true, 0.25f, 0.0f, 1, 0},
    {"A transposed (a weight's gradient), ragged", 150, 70, 333, true, false, 1.0f, 0.0f, 1, 2},
    {"both transposed, B packed whole, accumulate", 260, 50, 129, true, true, 1.0f, 1.0f, 2, 0},
    {"k past a chunk of 2048", 96, 64, 2100, false, true, 1.0f, 0.0f, 1, 0},
    {"k past a packed span, accumulate", 64, 96, 7000, false, false, 1.0f, 1.0f, 1, 1},
    {"A transposed, k past a packed span", 64, 96, 7000, true, false, 1.0f, 0.0f, 1, 0},
    {"whole blocks of 32", 128, 256, 576, false, true, 1.0f, 0.0f, 1, 0},
};

static float *random_floats(ember_rng *rng, size_t count)
{
    float *v = malloc(count * sizeof *v);
    for (size_t i = 0; v && i < count; i++)
        v[i] = ember_rng_uniform(rng, -1.0f, 1.0f);
    return v;
}

/* C = alpha A op(B) + beta C in double, for matrix `b` of the batch */
static void reference(const struct shape *s, int64_t lda, int64_t ldb, int64_t ldc, const float *a,
                      const float *b, const float *c0, double *want)
{
    for (int64_t i = 0; i < s->m; i++)
        for (int64_t j = 0; j < s->n; j++) {
            double sum = 0.0;
            for (int64_t p = 0; p < s->k; p++)
                sum += (double)(s->trans_a ? a[p * lda + i] : a[i * lda + p]) *
                       (s->trans_b ? b[j * ldb + p] : b[p * ldb + j]);
            want[i * s->n + j] = s->alpha * sum + (s->beta != 0.0f ? s->beta * (double)c0[i * ldc + j] : 0.0);
        }
}

/* the product at one precision into a fresh copy of c0; the normalised
 * squared error against `want` over the batch, or -1 when a guard moved */
static double product(ember_ctx *ctx, const struct shape *s, ember_matmul_precision precision, const float *a,
                      const float *b, const float *c0, const double *want, float **out)
{
    int64_t lda = (s->trans_a ? s->m : s->k) + s->pad, ldb = (s->trans_b ? s->k : s->n) + s->pad;
    int64_t ldc = s->n + s->pad, rows_a = s->trans_a ? s->k : s->m, rows_b = s->trans_b ? s->n : s->k;
    size_t sa = (size_t)(rows_a * lda), sb = (size_t)(rows_b * ldb), sc = (size_t)(s->m * ldc);
    struct ember_gemm g = ember_gemm_batched(ember_gemm_packed(s->trans_a, s->trans_b, s->m, s->n, s->k),
                                             s->batch, (int64_t)sa, (int64_t)sb, (int64_t)sc);
    g.lda = lda, g.ldb = ldb, g.ldc = ldc, g.alpha = s->alpha, g.beta = s->beta;
    float *c = malloc(sc * (size_t)s->batch * sizeof *c);
    memcpy(c, c0, sc * (size_t)s->batch * sizeof *c);
    ember_matmul_precision before = ember_ctx_matmul_precision(ctx);
    ember_ctx_set_matmul_precision(ctx, precision);
    ember_status st = ember_ctx_sgemm(ctx, &g, (ember_ptr){.buf = (void *)a}, (ember_ptr){.buf = (void *)b},
                                      (ember_ptr){.buf = c});
    ember_ctx_set_matmul_precision(ctx, before);
    *out = c;
    if (st != EMBER_OK)
        return -2.0;
    double err = 0.0, norm = 0.0;
    for (int64_t t = 0; t < s->batch; t++)
        for (int64_t i = 0; i < s->m; i++)
            for (int64_t j = 0; j < ldc; j++) {
                float got = c[t * (int64_t)sc + i * ldc + j];
                if (j >= s->n) {
                    if (got != GUARD_VALUE)
                        return -1.0;
                    continue;
                }
                double w = want[(t * s->m + i) * s->n + j];
                err += (got - w) * (got - w);
                norm += w * w;
            }
    return err / norm;
}

/* Inf and NaN in A land in C where float32's do at every precision: a
 * row with Inf is +-Inf by the sign of B's entries, a row with NaN is NaN
 * (the split keeps an infinite x whole in hi: x - hi would be NaN) */
static void check_specials(ember_ctx *ctx, ember_rng *rng)
{
    const int64_t n = 128; /* 128 x 128 x 128: halves on two threads still reach the tile unit */
    float *a = random_floats(rng, (size_t)(n * n)), *b = random_floats(rng, (size_t)(n * n));
    float *c[3];
    a[3 * n + 5] = INFINITY, a[7 * n + 9] = NAN, a[20 * n] = -INFINITY;
    struct ember_gemm g = ember_gemm_packed(false, false, n, n, n);
    for (int p = 0; p < 3; p++) {
        c[p] = calloc((size_t)(n * n), sizeof *c[p]);
        ember_ctx_set_matmul_precision(ctx, (ember_matmul_precision)p);
        CHECK_OK(ctx, ember_ctx_sgemm(ctx, &g, (ember_ptr){.buf = a}, (ember_ptr){.buf = b},
                                      (ember_ptr){.buf = c[p]}));
    }
    ember_ctx_set_matmul_precision(ctx, EMBER_MATMUL_HIGHEST);
    int64_t wrong = 0, specials = 0;
    for (int p = 1; p < 3; p++)
        for (int64_t i = 0; i < n * n; i++) {
            float want = c[0][i], got = c[p][i];
            specials += p == 1 && !isfinite(want);
            wrong += isnan(want) != isnan(got) || isinf(want) != isinf(got) || (isinf(want) && want != got);
        }
    printf("Inf and NaN in A: %lld of C's entries not finite at highest, %lld placed otherwise at high or "
           "medium\n",
           (long long)specials, (long long)wrong);
    CHECK(specials == 3 * n && wrong == 0, "Inf and NaN: %lld of %lld entries differ from float32's",
          (long long)wrong, (long long)specials);
    free(a), free(b), free(c[0]), free(c[1]), free(c[2]);
}

/* `count` random blocks of a 32-weight type: random integers, and half
 * scales of either sign between 2^-6 and 2^-2 */
static uint8_t *random_blocks(ember_rng *rng, ember_dtype type, int64_t count)
{
    int64_t elements = 32, bytes = 34;
    ember_quant_block(type, &elements, &bytes);
    uint8_t *b = malloc((size_t)(count * bytes));
    for (int64_t i = 0; b && i < count * bytes; i++)
        b[i] = (uint8_t)ember_rng_u32(rng);
    for (int64_t i = 0; b && i < count; i++)
        for (int s = 0; s < (type == EMBER_Q4_1 ? 2 : 1); s++) {
            uint32_t u = ember_rng_u32(rng);
            uint16_t half = (uint16_t)((u & 0x8000) | (9 + u % 5) << 10 | ((u >> 4) & 0x3ff));
            b[i * bytes + 2 * s] = (uint8_t)half, b[i * bytes + 2 * s + 1] = (uint8_t)(half >> 8);
        }
    return b;
}

/* quant_matmul into y at one precision; the normalised squared error
 * against the double sums `want` */
static double quant_product(ember_ctx *ctx, struct ember_quant_gemm q, const float *x, const uint8_t *w,
                            const double *want, float *y)
{
    CHECK_OK(ctx, ctx->ops->quant_matmul(ctx->dev, &q, (ember_ptr){.buf = (void *)x},
                                         (ember_ptr){.buf = (void *)w}, (ember_ptr){.buf = y}));
    double err = 0.0, norm = 0.0;
    for (int64_t i = 0; i < q.m * q.n; i++)
        err += (y[i] - want[i]) * (y[i] - want[i]), norm += want[i] * want[i];
    return err / norm;
}

/* Products with Q4_0, Q4_1 and Q8_0 weights, as a language model's
 * generation runs them (a few rows of x): HIGHEST in float, MEDIUM with x
 * rounded to 8 bits a block (cpu-quant.c) on a CPU with AVX2 or NEON, the
 * same bits as HIGHEST under EMBER_CPU_SIMD=none; a block of x holding NaN
 * or Inf makes its row's products NaN at MEDIUM, as they are not finite
 * at HIGHEST. */
static void check_quantised(ember_ctx *ctx, ember_rng *rng)
{
    /* MEDIUM changes the CPU's products where it has AMX or the 8-bit
     * kernel, and every CPU with AMX has AVX2 and F16C: so, the kernel */
    bool i8 = ember_ctx_matmul_precision_matters(ctx, EMBER_MATMUL_MEDIUM);
    const ember_dtype types[] = {EMBER_Q4_0, EMBER_Q4_1, EMBER_Q8_0};
    const int64_t rows[] = {1, 3, 11}, n = 37, k = 576;
    for (size_t t = 0; t < 3; t++)
        for (size_t r = 0; r < 3; r++) {
            ember_dtype type = types[t];
            int64_t m = rows[r];
            uint8_t *w = random_blocks(rng, type, n * k / 32);
            float *x = random_floats(rng, (size_t)(m * k)),
                  *weights = malloc((size_t)(n * k) * sizeof *weights);
            float *y0 = malloc((size_t)(m * n) * sizeof *y0), *y1 = malloc((size_t)(m * n) * sizeof *y1);
            double *want = malloc((size_t)(m * n) * sizeof *want);
            ember_dequantize(type, w, n * k, weights);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double sum = 0.0;
                    for (int64_t p = 0; p < k; p++)
                        sum += (double)x[i * k + p] * weights[j * k + p];
                    want[i * n + j] = sum;
                }
            struct ember_quant_gemm q = {.type = type, .m = m, .n = n, .k = k};
            double e_highest = quant_product(ctx, q, x, w, want, y0);
            q.precision = EMBER_MATMUL_MEDIUM;
            double e_medium = quant_product(ctx, q, x, w, want, y1);
            bool same = memcmp(y0, y1, (size_t)(m * n) * sizeof *y0) == 0;
            printf("%s x %lld rows: error %.1e at highest, %.1e at medium%s\n", ember_dtype_label(type),
                   (long long)m, e_highest, e_medium, same ? " (the same bits)" : "");
            CHECK(e_highest < 1e-10, "%s, %lld rows, at HIGHEST: error %.2e", ember_dtype_label(type),
                  (long long)m, e_highest);
            CHECK(e_medium < 1e-4, "%s, %lld rows, at MEDIUM: error %.2e", ember_dtype_label(type),
                  (long long)m, e_medium);
            CHECK(same != i8, "%s, %lld rows: MEDIUM %s HIGHEST's bits, where x %s rounded to 8 bits",
                  ember_dtype_label(type), (long long)m, same ? "gave" : "did not give",
                  i8 ? "is" : "is not");
            if (m == 3) { /* NaN and Inf in one block each of rows 1 and 2 */
                x[1 * k + 40] = NAN, x[2 * k + 500] = INFINITY;
                quant_product(ctx, q, x, w, want, y1);
                int64_t wrong = 0;
                for (int64_t j = 0; j < n; j++)
                    wrong += isfinite(y1[j]) == 0 || isfinite(y1[n + j]) || isfinite(y1[2 * n + j]);
                CHECK(wrong == 0,
                      "%s: NaN or Inf in x: %lld of %lld columns with a finite product in its row "
                      "or none in a clean row",
                      ember_dtype_label(type), (long long)wrong, (long long)n);
            }
            free(w), free(x), free(weights), free(y0), free(y1), free(want);
        }
}

int main(int argc, char **argv)
{
    bool expect_amx = argc > 1 && strcmp(argv[1], "--expect-amx") == 0;
    bool expect_no_amx = argc > 1 && strcmp(argv[1], "--expect-no-amx") == 0;
    ember_ctx *ctx = ember_ctx_new();
    CHECK(ctx != NULL, "a context");
    if (!ctx)
        return 1;
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);

    /* the setting */
    CHECK(ember_ctx_matmul_precision(ctx) == EMBER_MATMUL_HIGHEST, "the default is HIGHEST");
    CHECK(!ember_ctx_matmul_precision_matters(ctx, EMBER_MATMUL_MEDIUM),
          "no device open: the precision changes nothing");
    CHECK(ember_ctx_set_matmul_precision(ctx, (ember_matmul_precision)7) == EMBER_ERR_ARG &&
              strstr(ember_last_error(ctx),
                     "none of EMBER_MATMUL_HIGHEST, EMBER_MATMUL_HIGH and EMBER_MATMUL_MEDIUM"),
          "a precision outside the enum is refused with the reason: %s", ember_last_error(ctx));
    CHECK(ember_ctx_matmul_precision(ctx) == EMBER_MATMUL_HIGHEST,
          "a refused value leaves the setting as it was");
    CHECK(ember_ctx_set_matmul_precision(NULL, EMBER_MATMUL_HIGH) == EMBER_ERR_ARG, "no context: refused");
    ember_ctx_set_threads(ctx, 2);
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "cpu"));
    CHECK_OK(ctx, ember_ctx_set_matmul_precision(ctx, EMBER_MATMUL_HIGH));
    CHECK(ember_ctx_matmul_precision(ctx) == EMBER_MATMUL_HIGH, "HIGH once set");
    ember_ctx_set_matmul_precision(ctx, EMBER_MATMUL_HIGHEST);
    bool amx =
        ember_ctx_matmul_precision_matters(ctx, EMBER_MATMUL_HIGH); /* only AMX changes float products */
    printf("%s: EMBER_MATMUL_HIGH %s\n", ember_ctx_device_name(ctx),
           amx ? "runs on the AMX tile unit" : "changes nothing (no AMX, or EMBER_CPU_SIMD leaves it out)");
    CHECK(!expect_amx || amx, "--expect-amx, but the CPU's products do not use the tile unit");
    CHECK(!expect_no_amx || !amx, "--expect-no-amx, but the tile unit is used");

    ember_rng rng = ember_rng_seed(42);
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const struct shape *s = &SHAPES[i];
        int64_t lda = (s->trans_a ? s->m : s->k) + s->pad, ldb = (s->trans_b ? s->k : s->n) + s->pad;
        int64_t ldc = s->n + s->pad;
        size_t sa = (size_t)((s->trans_a ? s->k : s->m) * lda),
               sb = (size_t)((s->trans_b ? s->n : s->k) * ldb);
        size_t sc = (size_t)(s->m * ldc);
        float *a = random_floats(&rng, sa * (size_t)s->batch),
              *b = random_floats(&rng, sb * (size_t)s->batch);
        float *c0 = random_floats(&rng, sc * (size_t)s->batch);
        double *want = malloc((size_t)(s->batch * s->m * s->n) * sizeof *want);
        for (int64_t t = 0; t < s->batch; t++)
            for (int64_t r = 0; r < s->m; r++)
                for (int64_t j = s->n; j < ldc; j++)
                    c0[t * (int64_t)sc + r * ldc + j] = GUARD_VALUE;
        for (int64_t t = 0; t < s->batch; t++)
            reference(s, lda, ldb, ldc, a + t * (int64_t)sa, b + t * (int64_t)sb, c0 + t * (int64_t)sc,
                      want + t * s->m * s->n);
        float *highest, *high, *medium;
        double e_highest = product(ctx, s, EMBER_MATMUL_HIGHEST, a, b, c0, want, &highest);
        double e_high = product(ctx, s, EMBER_MATMUL_HIGH, a, b, c0, want, &high);
        double e_medium = product(ctx, s, EMBER_MATMUL_MEDIUM, a, b, c0, want, &medium);
        size_t bytes = sc * (size_t)s->batch * sizeof *high;
        bool differ = memcmp(highest, high, bytes) != 0, differ_medium = memcmp(high, medium, bytes) != 0;
        printf("%-50s %lld x %lld x %lld: error %.1e at highest, %.1e at high, %.1e at medium%s\n", s->what,
               (long long)s->m, (long long)s->n, (long long)s->k, e_highest, e_high, e_medium,
               differ ? "" : " (the same bits)");
        CHECK(e_highest >= 0.0 && e_highest < 1e-12,
              "%s at HIGHEST: error %.2e (-1: a guard between rows moved)", s->what, e_highest);
        CHECK(e_high >= 0.0 && e_high < 1e-9, "%s at HIGH: error %.2e (-1: a guard between rows moved)",
              s->what, e_high);
        CHECK(e_medium >= 0.0 && e_medium < 1e-4, "%s at MEDIUM: error %.2e (-1: a guard between rows moved)",
              s->what, e_medium);
        if (amx)
            CHECK(differ && differ_medium,
                  "%s: HIGH gave HIGHEST's very bits (%d) or MEDIUM HIGH's (%d), so the "
                  "tile unit did not run as asked",
                  s->what, !differ, !differ_medium);
        else
            CHECK(!differ && !differ_medium,
                  "%s: HIGH or MEDIUM changed the bits on a CPU where they should "
                  "change nothing",
                  s->what);
        free(a), free(b), free(c0), free(want), free(highest), free(high), free(medium);
    }
    check_specials(ctx, &rng);
    check_quantised(ctx, &rng);
    ember_ctx_free(ctx);
    return test_finish("test_matmul_precision");
}
