/* SPDX-License-Identifier: MIT */
/*
 * io/data-random.c — synthetic data for benchmarks: uniform random bytes
 * and uniform labels, drawn from the seed.
 *
 * The splits draw from different streams of the same seed, so train and
 * test differ but each is the same on every run and every machine. Nothing
 * here is learnable; it exists to time the training loop without files.
 */
#include <string.h>

#include "data-impl.h"

#define RANDOM_TRAIN_COUNT 4096
#define RANDOM_TEST_COUNT  1024
#define RANDOM_CLASSES     10
#define RANDOM_MAX_CLASSES (1 << 20)

/* Mixed into the seed so that the two splits never share a stream. */
#define TRAIN_STREAM 0x747261696e000000ull /* "train" */
#define TEST_STREAM  0x7465737400000000ull /* "test" */

ember_status ember_data_load_random(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    ember_ctx *ctx = ds->ctx;
    int ndim = options->sample_ndim;
    int64_t shape[3] = {1, 28, 28};
    if (ndim == 0)
        ndim = 3;
    else if (ndim < 1 || ndim > 3)
        return ember_fail(ctx, EMBER_ERR_ARG, "random: a sample has 1 to 3 dimensions, not %d", ndim);
    else
        memcpy(shape, options->sample_shape, sizeof shape);

    int64_t count = options->count;
    if (count == 0)
        count = ds->split == EMBER_TRAIN ? RANDOM_TRAIN_COUNT : RANDOM_TEST_COUNT;
    int classes = options->classes ? options->classes : RANDOM_CLASSES;
    if (count < 0)
        return ember_fail(ctx, EMBER_ERR_ARG, "random: the sample count is %lld", (long long)count);
    if (classes < 1 || classes > RANDOM_MAX_CLASSES)
        return ember_fail(ctx, EMBER_ERR_ARG, "random: %d classes; give 1 to %d", classes,
                          RANDOM_MAX_CLASSES);
    ember_status st = ember_dataset_reserve(ds, count, ndim, shape, classes);
    if (st != EMBER_OK)
        return st;

    ember_rng rng = ember_rng_seed(options->seed ^ (ds->split == EMBER_TRAIN ? TRAIN_STREAM : TEST_STREAM));
    int64_t bytes = count * ds->sample_bytes;
    for (int64_t i = 0; i < bytes; i += 4) {
        uint32_t r = ember_rng_u32(&rng);
        for (int64_t k = 0; k < 4 && i + k < bytes; k++)
            ds->pixels[i + k] = (uint8_t)(r >> (8 * k));
    }
    /* (r * classes) >> 32 maps a uniform u32 onto [0, classes) */
    for (int64_t i = 0; i < count; i++)
        ds->labels[i] = (int32_t)(((uint64_t)ember_rng_u32(&rng) * (uint64_t)classes) >> 32);
    return EMBER_OK;
}
