/* SPDX-License-Identifier: MIT */
/*
 * bench/conv_pointwise.c — one pointwise (1x1, stride 1, no padding)
 * convolution's forward and backward pass through ember_conv2d on one CPU
 * thread, the median of 21: what making no columns for it saves (core/
 * ops-conv.c; docs/benchmarks.md, "CPU: pointwise convolutions without
 * columns"). Build it against two libember.a to compare them.
 *
 *   cc -O2 bench/conv_pointwise.c -Iinclude build/libember.a -lopenblas -lpng -ljpeg -lz -lm -lpthread \
 *       -o conv_pointwise
 *   ./conv_pointwise N C H OC        (an N x C x H x H input, OC filters)
 */
#include "bench-time.h"
#include "ember.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: conv_pointwise N C H OC\n");
        return 2;
    }
    int n = atoi(argv[1]), c = atoi(argv[2]), h = atoi(argv[3]), oc = atoi(argv[4]), reps = 21;
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_use_device(ctx, "cpu");
    ember_ctx_set_threads(ctx, 1);
    int64_t xs[4] = {n, c, h, h}, ws[4] = {oc, c, 1, 1};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 4, xs), *w = ember_tensor_new(ctx, EMBER_F32, 4, ws);
    size_t nx = (size_t)n * c * h * h, nw = (size_t)oc * c;
    float *v = malloc((nx > nw ? nx : nw) * 4);
    for (size_t i = 0; i < nx; i++)
        v[i] = (float)(i % 7) * 0.1f - 0.3f;
    ember_tensor_write(x, v, nx * 4);
    for (size_t i = 0; i < nw; i++)
        v[i] = (float)(i % 5) * 0.1f - 0.2f;
    ember_tensor_write(w, v, nw * 4);
    ember_tensor_set_requires_grad(x, 1);
    ember_tensor_set_requires_grad(w, 1);
    double t[64];
    for (int r = 0; r < reps; r++) {
        double t0 = now_ms();
        ember_tensor *y = ember_conv2d(x, w, NULL, 1, 0);
        ember_backward(ember_sum(y, EMBER_ALL_AXES, false));
        ember_tensor_read(ember_tensor_grad(x), v, 4);
        t[r] = now_ms() - t0;
        ember_tape_clear(ctx);
    }
    printf("(%d, %d, %d, %d) -> %d 1x1: %.3f ms\n", n, c, h, h, oc, median_ms(t, reps));
    return 0;
}
