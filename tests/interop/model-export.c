/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/model-export.c — a model's checkpoint and its outputs on a
 * fixed input, for tests/interop/test_models_vs_torch.py to hold against the same
 * network written in PyTorch.
 *
 *   model-export MODEL CHECKPOINT IO.safetensors
 *
 * Builds MODEL (a built-in or a model file) for 1x28x28 images and 10
 * classes, runs three training forwards on other inputs so that BatchNorm's
 * running statistics are not their starting values, and saves the model to
 * CHECKPOINT. Then, on x (8, 1, 28, 28), it writes to IO: x, the logits in
 * evaluation mode ("eval") and in training mode ("train"). The device is
 * cpu, or $EMBER_TEST_DEVICE.
 */
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

static const int64_t image[3] = {1, 28, 28};

static ember_tensor *seeded(ember_ctx *ctx, uint64_t seed)
{
    const int64_t shape[4] = {8, 1, 28, 28};
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, 4, shape);
    int64_t n = ember_tensor_numel(t);
    float *v = malloc((size_t)n * sizeof *v);
    ember_rng rng = ember_rng_seed(seed);
    for (int64_t i = 0; v && i < n; i++)
        v[i] = ember_rng_uniform(&rng, 0.0f, 1.0f);
    if (v)
        ember_tensor_write(t, v, (size_t)n * sizeof *v);
    free(v);
    return t;
}

/* a copy of t under `name` in `out` */
static bool keep(ember_params *out, const char *name, ember_tensor *t)
{
    if (!t)
        return false;
    int64_t shape[EMBER_MAX_DIMS];
    int ndim = ember_tensor_ndim(t);
    for (int d = 0; d < ndim; d++)
        shape[d] = ember_tensor_dim(t, d);
    ember_tensor *p = ember_params_add(out, name, ndim, shape);
    size_t bytes = (size_t)ember_tensor_numel(t) * sizeof(float);
    float *values = malloc(bytes);
    bool ok = p && values && ember_tensor_read(t, values, bytes) == EMBER_OK &&
              ember_tensor_write(p, values, bytes) == EMBER_OK;
    free(values);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: model-export MODEL CHECKPOINT IO.safetensors\n");
        return 2;
    }
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    ember_set_grad_enabled(ctx, false);
    ember_model *m = ember_model_build(ctx, argv[1], 3, image, 10, 7);
    ember_params *out = ember_params_new(ctx);
    ember_tensor *x = seeded(ctx, 1);
    bool ok = m && out && x;
    for (uint64_t i = 0; ok && i < 3; i++) {
        ember_tensor *warm = seeded(ctx, 10 + i);
        ok = ember_model_forward(m, warm) != NULL;
        ember_tensor_free(warm);
        ember_tape_clear(ctx);
    }
    ok = ok && ember_model_save(m, argv[2], NULL) == EMBER_OK && keep(out, "x", x);
    ember_model_set_training(m, false);
    ok = ok && keep(out, "eval", ember_model_forward(m, x));
    ember_model_set_training(m, true);
    ok = ok && keep(out, "train", ember_model_forward(m, x)) &&
         ember_params_save(out, argv[3], NULL) == EMBER_OK;
    if (!ok)
        fprintf(stderr, "model-export %s: %s\n", argv[1], ember_last_error(ctx));
    ember_tensor_free(x);
    ember_params_free(out);
    ember_model_free(m);
    ember_ctx_free(ctx);
    return ok ? 0 : 1;
}
