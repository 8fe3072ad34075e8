/* SPDX-License-Identifier: MIT */
/*
 * core/conv-algo.c — the choice of a convolution's algorithm: a small
 * table by shape and device, so that each shape always runs the same way
 * on the same device (the same numbers, run after run), and
 * EMBER_CONV_ALGO to force one for comparisons (bench/conv_algo.sh).
 *
 * Winograd F(2x2, 3x3) (backends/cpu/cpu-winograd.c) does 2.25 times less
 * arithmetic than im2col's product but pays for its transforms in memory
 * traffic, which only the arithmetic saved on enough channels repays (a
 * first layer's 1 or 3 channels make products too small to gain from;
 * bench/conv_algo.sh measures each shape, docs/benchmarks.md "Convolution
 * algorithms"). Only the CPU backend has it; the GPUs refuse it
 * (backends/kernels/gpu-winograd.c).
 */
#include <stdlib.h>
#include <string.h>

#include "conv-algo-impl.h"

/* where auto picks Winograd: a backend, and the fewest channels on either side */
static const struct winograd_rule {
    const char *backend;
    int64_t min_channels;
} winograd_where[] = {
    {"cpu", 8},
};

static bool winograd_applies(const struct ember_conv_geom *g)
{
    return g->kh == 3 && g->kw == 3 && g->stride == 1 && g->pad <= 2;
}

static enum ember_conv_algo by_table(const ember_ctx *ctx, const struct ember_conv_geom *g, int64_t oc)
{
    if (!winograd_applies(g))
        return EMBER_CONV_IM2COL;
    for (size_t i = 0; i < sizeof winograd_where / sizeof winograd_where[0]; i++) {
        const struct winograd_rule *r = &winograd_where[i];
        if (strcmp(ctx->ops->name, r->backend) == 0 && g->c >= r->min_channels && oc >= r->min_channels)
            return EMBER_CONV_WINOGRAD;
    }
    return EMBER_CONV_IM2COL;
}

bool ember_conv_algo_choose(ember_ctx *ctx, const struct ember_conv_geom *g, int64_t oc, enum ember_conv_algo *algo)
{
    const char *forced = getenv("EMBER_CONV_ALGO");
    if (!forced || !*forced || strcmp(forced, "auto") == 0)
        *algo = by_table(ctx, g, oc);
    else if (strcmp(forced, "im2col") == 0)
        *algo = EMBER_CONV_IM2COL;
    else if (strcmp(forced, "winograd") == 0)
        *algo = winograd_applies(g) ? EMBER_CONV_WINOGRAD : EMBER_CONV_IM2COL;
    else {
        ember_fail(ctx, EMBER_ERR_ARG, "EMBER_CONV_ALGO=%.40s: expected im2col, winograd or auto", forced);
        return false;
    }
    return true;
}

const char *ember_conv_algo_name(enum ember_conv_algo algo)
{
    return algo == EMBER_CONV_WINOGRAD ? "winograd" : "im2col";
}
