/* SPDX-License-Identifier: MIT */
/*
 * bench/vision_speed.c — a vision network's speed in ember from an ONNX
 * file, as bench/vision_vs_peers.sh times ONNX Runtime and PyTorch on the
 * same network:
 *
 *     vision_speed NET.onnx DEVICE THREADS BATCH STEPS CALLS
 *
 * inference: ember_model_predict of one image from a caller's buffer,
 * CALLS times after a first call; the median in milliseconds.
 * training: STEPS steps of Adam (lr 0.001) at BATCH random images and
 * labels, each read back (the loss) so that a device's queue is drained;
 * the median step as images per second, after a first step.
 * Prints one JSON line.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench-time.h"
#include "ember.h"

static int fail(ember_ctx *ctx)
{
    fprintf(stderr, "vision_speed: %s\n", ember_last_error(ctx));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: vision_speed NET.onnx DEVICE THREADS BATCH STEPS CALLS\n");
        return 2;
    }
    int threads = atoi(argv[3]), batch = atoi(argv[4]), steps = atoi(argv[5]), calls = atoi(argv[6]);
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx || threads < 0 || batch < 1 || steps < 1 || calls < 1)
        return 2;
    ember_ctx_set_threads(ctx, threads);
    ember_model *m =
        ember_ctx_use_device(ctx, argv[2]) == EMBER_OK ? ember_model_from_onnx(ctx, argv[1]) : NULL;
    if (!m)
        return fail(ctx);
    int64_t shape[4];
    int ndim = ember_model_sample_shape(m, shape + 1), classes = ember_model_classes(m);
    int64_t numel = 1;
    for (int i = 1; i <= ndim; i++)
        numel *= shape[i];
    float *in = malloc((size_t)(batch * numel) * sizeof *in), *out = malloc((size_t)classes * sizeof *out);
    int32_t *labels = malloc((size_t)batch * sizeof *labels);
    double *ms = malloc((size_t)(calls > steps ? calls : steps) * sizeof *ms);
    if (!in || !out || !labels || !ms)
        return 1;
    ember_rng rng = ember_rng_seed(1);
    for (int64_t i = 0; i < batch * numel; i++)
        in[i] = ember_rng_uniform(&rng, 0.0f, 1.0f);
    for (int i = 0; i < batch; i++)
        labels[i] = i % classes;

    /* inference, batch 1 */
    if (ember_model_set_training(m, false) != EMBER_OK || ember_model_predict(m, in, 1, out) != EMBER_OK)
        return fail(ctx);
    for (int i = 0; i < calls; i++) {
        double t0 = now_ms();
        if (ember_model_predict(m, in, 1, out) != EMBER_OK)
            return fail(ctx);
        ms[i] = now_ms() - t0;
    }
    double predict_ms = median_ms(ms, calls);

    /* training, Adam at `batch` */
    shape[0] = batch;
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, ndim + 1, shape);
    ember_tensor *y = ember_tensor_new(ctx, EMBER_I32, 1, (const int64_t[]){batch});
    ember_optim *opt = ember_adam_new(ember_model_params(m), ember_adam_defaults(0.001f));
    if (!x || !y || !opt || ember_tensor_write(x, in, (size_t)(batch * numel) * sizeof *in) != EMBER_OK ||
        ember_tensor_write(y, labels, (size_t)batch * sizeof *labels) != EMBER_OK ||
        ember_model_set_training(m, true) != EMBER_OK)
        return fail(ctx);
    for (int i = -1; i < steps; i++) { /* the first, unmeasured, sizes everything */
        double t0 = now_ms();
        float loss;
        ember_tensor *l =
            ember_optim_zero_grad(opt) == EMBER_OK ? ember_cross_entropy(ember_model_forward(m, x), y) : NULL;
        if (!l || ember_backward(l) != EMBER_OK || ember_optim_step(opt) != EMBER_OK ||
            ember_tensor_item(l, &loss) != EMBER_OK)
            return fail(ctx);
        ember_tape_clear(ctx);
        if (i >= 0)
            ms[i] = now_ms() - t0;
    }
    double step_ms = median_ms(ms, steps);
    printf("{\"device\": \"%s\", \"threads\": %d, \"predict_ms\": %.3f, \"train_images_per_s\": %.1f}\n",
           ember_ctx_device_name(ctx), threads, predict_ms, 1000.0 * batch / step_ms);
    ember_optim_free(opt);
    ember_tensor_free(x);
    ember_tensor_free(y);
    ember_model_free(m);
    ember_ctx_free(ctx);
    free(in), free(out), free(labels), free(ms);
    return 0;
}
