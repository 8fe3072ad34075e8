/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-dropout.c — dropout's mask, from the hash every backend
 * shares (backends/backend.h: ember_dropout_hash), so that a seed gives the
 * same mask here as on a GPU.
 */
#include "cpu-impl.h"

struct dropout_job {
    float *mask;
    uint64_t seed;
    uint32_t threshold;
    float scale;
};

static void dropout_range(void *p, int64_t begin, int64_t end)
{
    const struct dropout_job *j = p;
    for (int64_t i = begin; i < end; i++)
        j->mask[i] = ember_dropout_hash(j->seed, (uint32_t)i) >= j->threshold ? j->scale : 0.0f;
}

ember_status cpu_dropout_mask(void *dev, ember_ptr mask, size_t n, float p, uint64_t seed)
{
    struct cpu_device *d = dev;
    struct dropout_job j = {.mask = cpu_f32(mask),
                            .seed = seed,
                            .threshold = ember_dropout_threshold(p),
                            .scale = 1.0f / (1.0f - p)};
    cpu_parallel_for(d->pool, (int64_t)n, 16384, dropout_range, &j);
    return EMBER_OK;
}
