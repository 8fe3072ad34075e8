/* SPDX-License-Identifier: MIT */
/*
 * tests/test_memory.c — a steady-state training step allocates nothing.
 *
 * Trains each built-in model for a few steps (batch 64, or --batch N) on random data and checks that, after
 * the warm-up steps, the context's counters of device buffers and host
 * allocations stand still: every tensor, record and buffer of a step comes
 * from the pools the earlier steps filled. Also checks that clearing the
 * tape gives every buffer back (bytes in use return to the same level).
 */
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

static int64_t batch = 64;

static void train_steps(ember_ctx *ctx, const char *model_name, const int64_t *shape, int ndim)
{
    ember_data_options data = {.kind = "random", .sample_ndim = ndim, .count = batch * 8};
    memcpy(data.sample_shape, shape, (size_t)ndim * sizeof *shape);
    ember_dataset *ds = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    ember_model *model = ds ? ember_model_new(ctx, model_name, ds, 1) : NULL;
    ember_optim *opt = model ? ember_adam_new(ember_model_params(model), ember_adam_defaults(1e-3f)) : NULL;
    ember_batcher *batches = opt ? ember_batcher_new(ds, batch, true, 3) : NULL;
    CHECK(batches != NULL, "%s: setting up failed: %s", model_name, ember_last_error(ctx));
    if (!batches)
        goto done;

    ember_memory_stats after_warmup = {0}, now;
    ember_tensor *x, *y;
    for (int step = 0; step < 6 && ember_batcher_next(batches, &x, &y); step++) {
        ember_optim_zero_grad(opt);
        ember_tensor *loss = ember_cross_entropy(ember_model_forward(model, x), y);
        float value;
        CHECK_OK(ctx, ember_backward(loss));
        CHECK_OK(ctx, ember_optim_step(opt));
        CHECK_OK(ctx, ember_tensor_item(loss, &value));
        ember_tape_clear(ctx);
        ember_ctx_memory_stats(ctx, &now);
        if (step == 1)
            after_warmup = now;
        if (step > 1) {
            CHECK(now.device_allocs == after_warmup.device_allocs,
                  "%s: step %d asked the backend for %llu new buffers", model_name, step,
                  (unsigned long long)(now.device_allocs - after_warmup.device_allocs));
            CHECK(now.host_allocs == after_warmup.host_allocs, "%s: step %d made %llu host allocations",
                  model_name, step, (unsigned long long)(now.host_allocs - after_warmup.host_allocs));
            CHECK(now.device_bytes == after_warmup.device_bytes, "%s: device bytes went from %llu to %llu",
                  model_name, (unsigned long long)after_warmup.device_bytes, (unsigned long long)now.device_bytes);
        }
    }
done:
    ember_batcher_free(batches);
    ember_optim_free(opt);
    ember_model_free(model);
    ember_dataset_free(ds);
}

int main(int argc, char **argv)
{
    /* --batch N: smaller steps where kernels run slowly (the CUDA test double) */
    if (argc == 3 && strcmp(argv[1], "--batch") == 0)
        batch = atoll(argv[2]);
    if (batch < 1 || (argc != 1 && argc != 3)) {
        fprintf(stderr, "usage: test_memory [--batch N]\n");
        return 2;
    }
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    const int64_t image[3] = {1, 28, 28}, features[1] = {100};
    for (const char *const *name = ember_model_names(); *name; name++)
        train_steps(ctx, *name, image, 3); /* every built-in model, BatchNorm and Dropout included */
    train_steps(ctx, "linear", features, 1);
    ember_ctx_free(ctx);
    return test_finish("test_memory");
}
