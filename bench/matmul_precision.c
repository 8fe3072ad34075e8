/* SPDX-License-Identifier: MIT */
/*
 * bench/matmul_precision.c — the CPU's matrix products at each
 * ember_ctx_set_matmul_precision: EMBER_MATMUL_HIGHEST (float32 in
 * OpenBLAS) and EMBER_MATMUL_HIGH (three bfloat16 products on the AMX tile
 * unit where the CPU has one, backends/cpu/cpu-gemm-amx.c), alternated in
 * one run so that a busy machine slows both alike: the median of the
 * repetitions, GFLOP/s, HIGHEST's time over HIGH's, and how far HIGH's
 * result is from HIGHEST's (normalised squared difference).
 *
 *   cc -O2 bench/matmul_precision.c -Iinclude build/libember.a -lopenblas -lm -lpthread -o matmul_precision
 *   ./matmul_precision [THREADS] [REPS] [M N K]...
 *
 * Without shapes: a LoRA step of SmolLM2-135M at batch 4 x 128 (512 rows):
 * the projections forward (x W^T, by ember_linear) at 576 -> 576, 192,
 * 1536 and 1536 -> 576, the head's 576 -> 49,152, and a square 1024.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-time.h"
#include "ember.h"

static ember_tensor *random_tensor(ember_ctx *ctx, int64_t rows, int64_t cols, unsigned *seed)
{
    int64_t shape[2] = {rows, cols};
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, 2, shape);
    float *v = malloc((size_t)(rows * cols) * sizeof *v);
    for (int64_t i = 0; v && i < rows * cols; i++)
        v[i] = (float)rand_r(seed) / (float)RAND_MAX - 0.5f;
    if (t && v)
        ember_tensor_write(t, v, (size_t)(rows * cols) * sizeof *v);
    free(v);
    return t;
}

static float *read_all(ember_tensor *t)
{
    size_t n = (size_t)ember_tensor_numel(t);
    float *v = malloc(n * sizeof *v);
    if (v)
        ember_tensor_read(t, v, n * sizeof *v);
    return v;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, reps = argc > 2 ? atoi(argv[2]) : 7;
    static const int64_t defaults[][3] = {{512, 576, 576},  {512, 192, 576},   {512, 1536, 576},
                                          {512, 576, 1536}, {512, 49152, 576}, {1024, 1024, 1024}};
    int shapes = argc > 3 ? (argc - 3) / 3 : (int)(sizeof defaults / sizeof defaults[0]);
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_threads(ctx, threads);
    if (!ctx || ember_ctx_use_device(ctx, "cpu") != EMBER_OK) {
        fprintf(stderr, "matmul_precision: no CPU device: %s\n", ember_last_error(ctx));
        return 1;
    }
    ember_set_grad_enabled(ctx, false);
    printf("%s; HIGH and MEDIUM %s; the median of %d, alternating\n\n", ember_ctx_device_name(ctx),
           ember_ctx_matmul_precision_matters(ctx, EMBER_MATMUL_HIGH) ? "on the AMX tile unit"
                                                                      : "change nothing here (no AMX)",
           reps);
    printf("| x W^T: M x N x K | highest ms | GFLOP/s | high ms | GFLOP/s | x | difference | medium ms | "
           "GFLOP/s | x "
           "| difference |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    unsigned seed = 1;
    for (int s = 0; s < shapes; s++) {
        int64_t m = argc > 3 ? atoll(argv[3 + 3 * s]) : defaults[s][0];
        int64_t n = argc > 3 ? atoll(argv[4 + 3 * s]) : defaults[s][1];
        int64_t k = argc > 3 ? atoll(argv[5 + 3 * s]) : defaults[s][2];
        ember_tensor *x = random_tensor(ctx, m, k, &seed), *w = random_tensor(ctx, n, k, &seed);
        double ms[3][64];
        float *out[3] = {NULL, NULL, NULL};
        if (reps > 64)
            reps = 64;
        for (int r = 0; r < reps; r++)
            for (int p = 0; p < 3; p++) { /* EMBER_MATMUL_HIGHEST, HIGH, MEDIUM */
                ember_ctx_set_matmul_precision(ctx, (ember_matmul_precision)p);
                double t0 = now_ms();
                ember_tensor *y = ember_linear(x, w, NULL);
                ms[p][r] = now_ms() - t0;
                if (!y) {
                    fprintf(stderr, "matmul_precision: %s\n", ember_last_error(ctx));
                    return 1;
                }
                if (r == 0)
                    out[p] = read_all(y);
                ember_tensor_free(y);
            }
        double flop = 2.0 * m * n * k, highest = median_ms(ms[0], reps);
        printf("| %lld x %lld x %lld | %.2f | %.0f |", (long long)m, (long long)n, (long long)k, highest,
               flop / highest / 1e6);
        for (int p = 1; p < 3; p++) {
            double diff = 0.0, norm = 0.0, took = median_ms(ms[p], reps);
            for (int64_t i = 0; out[0] && out[p] && i < m * n; i++) {
                diff += ((double)out[p][i] - out[0][i]) * ((double)out[p][i] - out[0][i]);
                norm += (double)out[0][i] * out[0][i];
            }
            printf(" %.2f | %.0f | %.2fx | %.1e |", took, flop / took / 1e6, highest / took,
                   norm > 0 ? diff / norm : 0.0);
        }
        printf("\n");
        free(out[0]), free(out[1]), free(out[2]);
        ember_tensor_free(x), ember_tensor_free(w);
    }
    ember_ctx_free(ctx);
    return 0;
}
