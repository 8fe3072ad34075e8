/* SPDX-License-Identifier: MIT */
/*
 * core/rng.c — the seeded generator behind initialisation, shuffling and
 * random data: SplitMix64, small, fast, and the same on every machine.
 */
#include <math.h>
#include <stdlib.h>

#include "tensor-impl.h"

ember_rng ember_rng_seed(uint64_t seed) { return (ember_rng){.state = seed}; }

#define GOLDEN_GAMMA 0x9E3779B97F4A7C15ull /* SplitMix64's step */

void ember_rng_skip(ember_rng *rng, uint64_t draws)
{
    rng->state += draws * GOLDEN_GAMMA; /* arithmetic mod 2^64, as each draw's */
}

static uint64_t next64(ember_rng *rng)
{
    uint64_t z = (rng->state += GOLDEN_GAMMA);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t ember_rng_u32(ember_rng *rng) { return (uint32_t)(next64(rng) >> 32); }

float ember_rng_uniform(ember_rng *rng, float low, float high)
{
    /* 24 random bits: every float in [0, 1) that has an exact step */
    float u = (float)(next64(rng) >> 40) * (1.0f / 16777216.0f);
    return low + (high - low) * u;
}

ember_status ember_init_uniform(ember_tensor *t, float low, float high, ember_rng *rng)
{
    if (!t || !rng)
        return t ? ember_fail(t->ctx, EMBER_ERR_ARG, "ember_init_uniform: NULL generator") : EMBER_ERR_ARG;
    if (t->dtype != EMBER_F32)
        return ember_fail(t->ctx, EMBER_ERR_ARG, "ember_init_uniform: the tensor is not F32");
    size_t n = (size_t)ember_tensor_numel(t);
    float *host = ember_host_alloc(t->ctx, n * sizeof *host);
    if (!host)
        return t->ctx->status;
    for (size_t i = 0; i < n; i++)
        host[i] = ember_rng_uniform(rng, low, high);
    ember_status st = ember_tensor_write(t, host, n * sizeof *host);
    free(host);
    return st;
}

ember_status ember_init_default(ember_tensor *weight, ember_tensor *bias, ember_rng *rng)
{
    if (!weight)
        return EMBER_ERR_ARG;
    if (weight->ndim < 2 || weight->shape[0] == 0)
        return ember_fail(weight->ctx, EMBER_ERR_ARG,
                          "ember_init_default: a weight is (out, in, ...), with out > 0");
    /* kaiming_uniform(a = sqrt(5)): gain sqrt(2 / (1 + 5)), bound gain * sqrt(3 / fan_in)
     * = 1 / sqrt(fan_in); PyTorch's bias bound is the same */
    int64_t fan_in = ember_tensor_numel(weight) / weight->shape[0];
    float bound = fan_in > 0 ? 1.0f / sqrtf((float)fan_in) : 0.0f;
    ember_status st = ember_init_uniform(weight, -bound, bound, rng);
    if (st == EMBER_OK && bias)
        st = ember_init_uniform(bias, -bound, bound, rng);
    return st;
}
