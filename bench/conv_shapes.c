/* SPDX-License-Identifier: MIT */
/*
 * bench/conv_shapes.c — one convolution's forward and backward pass
 * through ember_conv2d under each algorithm (EMBER_CONV_ALGO: im2col,
 * winograd in 2x2 tiles, winograd4 in 4x4, direct), alternated in one run
 * so that a busy machine slows them alike: the median of the repetitions,
 * and im2col's time over each other's (Winograd's "-" where it does not
 * apply: a kernel other than 3x3, or a stride). The input's gradient is part of the
 * backward pass except for one channel in: a first layer's input (the
 * images) never needs one.
 *
 *   cc -O2 bench/conv_shapes.c -Iinclude build/libember.a -lopenblas -lm -lpthread -o conv_shapes
 *   ./conv_shapes [THREADS] [REPS] [N C H W OC PAD KERNEL STRIDE]...
 *
 * Without shapes: the 3x3 stride-1 convolutions of ResNet-8 and VGG-8 on
 * Fashion-MNIST at batch 64, ResNet-8's stride-2 3x3 and 1x1 layers, the
 * first layers of simplecnn (one channel, padding 1) and kerascnn (32
 * filters, no padding), and two larger layers (CIFAR-sized, more channels).
 * bench/conv_algo.sh builds and runs it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-time.h"
#include "ember.h"

static ember_tensor *random_tensor(ember_ctx *ctx, int ndim, const int64_t *shape, unsigned *seed)
{
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, ndim, shape);
    int64_t n = t ? ember_tensor_numel(t) : 0;
    float *v = malloc((size_t)(n + 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)rand_r(seed) / (float)RAND_MAX - 0.5f;
    if (t)
        ember_tensor_write(t, v, (size_t)n * sizeof *v);
    free(v);
    return t;
}

/* one forward and backward pass: its time in ms, forward and backward; false on an error */
static int step(ember_ctx *ctx, ember_tensor *x, ember_tensor *w, int pad, int stride, double *fwd,
                double *bwd)
{
    double t0 = now_ms();
    ember_tensor *y = ember_conv2d(x, w, NULL, stride, pad);
    ember_tensor *loss = y ? ember_sum(y, EMBER_ALL_AXES, false) : NULL;
    float v;
    if (!loss || ember_tensor_item(loss, &v) != EMBER_OK)
        return 0;
    double t1 = now_ms();
    if (ember_backward(loss) != EMBER_OK || ember_tensor_item(loss, &v) != EMBER_OK)
        return 0;
    *fwd = t1 - t0, *bwd = now_ms() - t1;
    ember_tape_clear(ctx);
    return 1;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, reps = argc > 2 ? atoi(argv[2]) : 15;
    enum { FIELDS = 8 };
    static const int64_t defaults[][FIELDS] = {
        {64, 16, 28, 28, 16, 1, 3, 1},   {64, 16, 14, 14, 32, 1, 3, 1}, {64, 32, 14, 14, 32, 1, 3, 1},
        {64, 32, 7, 7, 64, 1, 3, 1},     {64, 64, 7, 7, 64, 1, 3, 1},   {64, 16, 28, 28, 32, 1, 3, 2},
        {64, 32, 14, 14, 64, 1, 3, 2},   {64, 16, 28, 28, 32, 0, 1, 2}, {64, 32, 14, 14, 64, 0, 1, 2},
        {64, 1, 28, 28, 16, 1, 3, 1},    {64, 1, 28, 28, 32, 0, 3, 1},  {32, 64, 32, 32, 64, 1, 3, 1},
        {32, 128, 16, 16, 128, 1, 3, 1},
    };
    int given = argc > 3 ? (argc - 3) / FIELDS : 0,
        count = given ? given : (int)(sizeof defaults / sizeof defaults[0]);
    if (reps < 1 || reps > 1000 || (argc > 3 && (argc - 3) % FIELDS != 0)) {
        fprintf(stderr, "usage: conv_shapes [THREADS] [REPS] [N C H W OC PAD KERNEL STRIDE]...\n");
        return 2;
    }
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_threads(ctx, threads);
    if (!ctx || ember_ctx_use_device(ctx, "cpu") != EMBER_OK) {
        fprintf(stderr, "conv_shapes: %s\n", ctx ? ember_last_error(ctx) : "no context");
        return 1;
    }
    printf("| shape (N, C, H, W) -> OC, pad, kernel, stride | threads | im2col ms | winograd ms | winograd4 "
           "ms | direct ms | "
           "im2col/winograd | im2col/winograd4 | im2col/direct |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    enum { ALGOS = 4 };
    static const char *const algos[ALGOS] = {"im2col", "winograd", "winograd4", "direct"};
    for (int s = 0; s < count; s++) {
        int64_t d[FIELDS];
        for (int k = 0; k < FIELDS; k++)
            d[k] = given ? atoll(argv[3 + s * FIELDS + k]) : defaults[s][k];
        int64_t xs[4] = {d[0], d[1], d[2], d[3]}, ws[4] = {d[4], d[1], d[6], d[6]};
        bool winograd = d[6] == 3 && d[7] == 1; /* else forcing it would fail, as it should */
        unsigned seed = 1;
        ember_tensor *x = random_tensor(ctx, 4, xs, &seed), *w = random_tensor(ctx, 4, ws, &seed);
        ember_tensor_set_requires_grad(x, d[1] > 1);
        ember_tensor_set_requires_grad(w, true);
        double *ms[ALGOS], median[ALGOS];
        for (int a = 0; a < ALGOS; a++)
            ms[a] = malloc((size_t)reps * sizeof(double));
        for (int r = -2; r < reps; r++) /* two warm-up rounds, then alternated */
            for (int a = 0; a < ALGOS; a++) {
                double f, b;
                if ((a == 1 || a == 2) && !winograd) {
                    ms[a][r < 0 ? 0 : r] = 0.0;
                    continue;
                }
                setenv("EMBER_CONV_ALGO", algos[a], 1);
                if (!step(ctx, x, w, (int)d[5], (int)d[7], &f, &b)) {
                    fprintf(stderr, "conv_shapes: %s\n", ember_last_error(ctx));
                    return 1;
                }
                if (r >= 0)
                    ms[a][r] = f + b;
            }
        for (int a = 0; a < ALGOS; a++) {
            median[a] = median_ms(ms[a], reps);
            free(ms[a]);
        }
        char wino[4][16] = {"-", "-", "-", "-"};
        if (winograd) {
            snprintf(wino[0], sizeof wino[0], "%.2f", median[1]);
            snprintf(wino[1], sizeof wino[1], "%.2f", median[2]);
            snprintf(wino[2], sizeof wino[2], "%.2f", median[0] / median[1]);
            snprintf(wino[3], sizeof wino[3], "%.2f", median[0] / median[2]);
        }
        printf("| (%lld, %lld, %lld, %lld) -> %lld, %lld, %lldx%lld, %lld | %d | %.2f | %s | %s | %.2f | %s "
               "| %s | "
               "%.2f |\n",
               (long long)d[0], (long long)d[1], (long long)d[2], (long long)d[3], (long long)d[4],
               (long long)d[5], (long long)d[6], (long long)d[6], (long long)d[7], threads, median[0],
               wino[0], wino[1], median[3], wino[2], wino[3], median[0] / median[3]);
        ember_tensor_free(x), ember_tensor_free(w);
    }
    ember_ctx_free(ctx);
    return 0;
}
