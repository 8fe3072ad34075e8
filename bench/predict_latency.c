/* SPDX-License-Identifier: MIT */
/*
 * bench/predict_latency.c — ember_model_predict's latency from a caller's
 * buffer, as a program embedding ember sees it: a model built in memory,
 * the same batch predicted again and again, the median of the calls.
 *
 *   cc -O2 bench/predict_latency.c $(pkg-config --cflags --libs ember) -o predict_latency
 *   ./predict_latency [MODEL] [SIDE] [BATCH] [THREADS] [CALLS]     (resnet8 8 6 2 200)
 *
 * Run it once on an idle machine and once with every other core busy
 * (`yes >/dev/null &` per core): the CPU pool's chunks are claimed by
 * whichever thread is running, so a busy machine should cost little more
 * than the threads it takes away.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench-time.h"
#include "ember.h"

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "resnet8";
    int side = argc > 2 ? atoi(argv[2]) : 8, batch = argc > 3 ? atoi(argv[3]) : 6;
    int threads = argc > 4 ? atoi(argv[4]) : 2, calls = argc > 5 ? atoi(argv[5]) : 200;
    if (side < 1 || batch < 1 || threads < 0 || calls < 1) {
        fprintf(stderr, "usage: predict_latency [MODEL] [SIDE] [BATCH] [THREADS] [CALLS]\n");
        return 2;
    }
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_threads(ctx, threads);
    const int64_t shape[3] = {3, side, side};
    ember_model *m =
        ember_ctx_use_device(ctx, "cpu") == EMBER_OK ? ember_model_build(ctx, name, 3, shape, 10, 1) : NULL;
    size_t in_len = (size_t)batch * 3 * (size_t)side * (size_t)side;
    float *in = calloc(in_len, sizeof *in), *out = calloc((size_t)batch * 10, sizeof *out);
    double *ms = calloc((size_t)calls, sizeof *ms);
    if (!m || !in || !out || !ms) {
        fprintf(stderr, "predict_latency: %s\n", ember_last_error(ctx));
        return 1;
    }
    for (size_t i = 0; i < in_len; i++)
        in[i] = (float)(i % 255) / 255.0f;
    ember_model_predict(m, in, batch, out); /* the first call sizes everything */
    for (int i = 0; i < calls; i++) {
        double t0 = now_ms();
        if (ember_model_predict(m, in, batch, out) != EMBER_OK) {
            fprintf(stderr, "predict_latency: %s\n", ember_last_error(ctx));
            return 1;
        }
        ms[i] = now_ms() - t0;
    }
    sort_ms(ms, calls);
    printf("%s on 3x%dx%d, batch %d, %s: median %.3f ms, 90th percentile %.3f ms over %d calls\n", name, side,
           side, batch, ember_ctx_device_name(ctx), ms[calls / 2], ms[calls * 9 / 10], calls);
    free(ms);
    free(in);
    free(out);
    ember_model_free(m);
    ember_ctx_free(ctx);
    return 0;
}
