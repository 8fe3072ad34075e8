/* SPDX-License-Identifier: MIT */
/*
 * core/conv-algo.c — the choice of a convolution's algorithm: a small
 * table by shape and device, so that each shape always runs the same way
 * on the same device (the same numbers, run after run), and
 * EMBER_CONV_ALGO to force one for comparisons (bench/conv_algo.sh).
 *
 * Winograd F(2x2, 3x3) and F(4x4, 3x3) (backends/cpu/cpu-winograd.c,
 * cpu-winograd4.c) do 2.25 and 4 times less arithmetic than im2col's
 * product but pay for their transforms in memory traffic, and for tiles
 * that overhang the output's edge: only enough channels and a large
 * enough output repay them (a first layer's 1 or 3 channels make products
 * too small to gain from). Only the CPU backend has them; the GPUs refuse
 * them (backends/kernels/gpu-winograd.c).
 */
#include <stdlib.h>
#include <string.h>

#include "conv-algo-impl.h"

/* Where auto picks Winograd: the first row that a convolution meets, on
 * its backend, with at least min_channels in and out and an output of at
 * least min_side a side. Measured with bench/conv_algo.sh on the 2-core
 * EPYC (docs/benchmarks.md, "CPU: convolution algorithms"): 4x4 tiles pay
 * from 16x16 outputs on (1.1 to 1.9 times im2col's speed at 28x28 and
 * 32x32); at 14x14 four tiles a side cover 16, an eighth wasted twice
 * over, and 2x2 tiles do better; at 7x7 both mostly lose to im2col (2x2
 * tiles 0.75 to 1.14, 4x4 0.52 to 0.88). */
static const struct winograd_rule {
    const char *backend;
    enum ember_conv_algo algo;
    int64_t min_channels, min_side;
} winograd_where[] = {
    {"cpu", EMBER_CONV_WINOGRAD4, 8, 16},
    {"cpu", EMBER_CONV_WINOGRAD, 8, 8},
};

/* Where conv_direct runs rather than im2col, by default: the same
 * arithmetic in float, im2col's products summed in another order, so no
 * accuracy to prove (one ResNet-8 epoch on an H200: training loss 0.534868
 * against im2col's 0.534956, test accuracy 0.8640 against 0.8645). Measured
 * with bench/gpu_vs_pytorch.sh on an H200 (docs/benchmarks.md, "CUDA"; the
 * run's call 3 in docs/gpu-runs/2026-11-26-h200-conv.md): 1.03 to 1.44
 * times im2col's images/s on ResNet-8, VGG-8 and LeNet-5 at batch 64 and
 * 256, but 0.73 to 0.85 on simplecnn, whose one convolution reads one
 * channel: its weight gradient was then too few work-groups for their long
 * sums, so such layers stayed on im2col. Since the weight gradient comes in
 * slices of the batch, simplecnn by conv_direct ran at 1.09 (batch 64) and
 * 1.22 (batch 1024) times im2col's images/s on an H100 (docs/gpu-runs/
 * 2026-11-26-h100-conv.md, call 4), so every layer takes it now. On OpenCL
 * the same kernels take every layer on a GPU device: through NVIDIA's
 * OpenCL driver on an H200 they trained ResNet-8 and VGG-8 at 1.7 to 1.8
 * times im2col's images/s at batch 256, 0.99 to 1.16 at batch 64
 * (docs/benchmarks.md, "OpenCL on an NVIDIA GPU"); on a CPU device (PoCL)
 * they were slower (68 images/s on ResNet-8 against 78), and the backend's
 * conv_direct_fast says so. On the CPU only a 3x3 layer of one
 * input channel at stride 1 takes it, and only where its vector kernels
 * run (conv_direct_fast in the backend's table: AVX2 or AVX-512; its
 * plain loops took six times im2col's time): simplecnn trained 1.20 to
 * 1.28 times as fast as by im2col, kerascnn at 0.97 to 1.04
 * (docs/benchmarks.md, "CPU: a first layer without columns"); with more
 * channels im2col's products are the shapes OpenBLAS is fast at. */
static const struct direct_rule {
    const char *backend;
    int64_t min_channels, max_channels; /* in; max 0: any */
    int64_t kernel, stride;             /* 0: any */
} direct_where[] = {
    {"cuda", 1, 0, 0, 0},
    {"opencl", 1, 0, 0, 0},
    {"cpu", 1, 1, 3, 1},
};

static enum ember_conv_algo exact_table(const ember_ctx *ctx, const struct ember_conv_geom *g)
{
    for (size_t i = 0; i < sizeof direct_where / sizeof direct_where[0]; i++) {
        const struct direct_rule *r = &direct_where[i];
        if (strcmp(ctx->ops->name, r->backend) == 0 && g->c >= r->min_channels &&
            (!ctx->ops->conv_direct_fast || ctx->ops->conv_direct_fast(ctx->dev, g)) &&
            (!r->max_channels || g->c <= r->max_channels) &&
            (!r->kernel || (g->kh == r->kernel && g->kw == r->kernel)) &&
            (!r->stride || g->stride == r->stride))
            return EMBER_CONV_DIRECT;
    }
    return EMBER_CONV_IM2COL;
}

static bool winograd_applies(const struct ember_conv_geom *g)
{
    return g->kh == 3 && g->kw == 3 && g->stride == 1 && g->pad <= 2;
}

static enum ember_conv_algo by_table(const ember_ctx *ctx, const struct ember_conv_geom *g, int64_t oc)
{
    if (!winograd_applies(g))
        return exact_table(ctx, g);
    int64_t side = g->oh < g->ow ? g->oh : g->ow;
    for (size_t i = 0; i < sizeof winograd_where / sizeof winograd_where[0]; i++) {
        const struct winograd_rule *r = &winograd_where[i];
        if (strcmp(ctx->ops->name, r->backend) == 0 && g->c >= r->min_channels && oc >= r->min_channels &&
            side >= r->min_side)
            return r->algo;
    }
    return exact_table(ctx, g);
}

bool ember_conv_algo_choose(ember_ctx *ctx, const struct ember_conv_geom *g, int64_t oc,
                            enum ember_conv_algo *algo)
{
    /* The default leaves Winograd out: after their documented epochs
     * ResNet-8 trained to the same accuracy with it (+0.06 points over
     * three seeds) and VGG-8 to 0.21 points less over six (within the 0.3
     * asked, on the mean, with half a point's spread a seed), for 3 to 5%
     * of their images/s on one thread and nothing measurable on two
     * (docs/benchmarks.md, "What Winograd is worth to the models now"):
     * too little to move every run's numbers for. "auto" is the whole
     * measured table, for larger layers, where it gains more. */
    const char *forced = getenv("EMBER_CONV_ALGO");
    if (forced && strcmp(forced, "auto") == 0)
        *algo = by_table(ctx, g, oc);
    else if (!forced || !*forced)
        *algo = exact_table(ctx, g);
    else if (strcmp(forced, "im2col") == 0)
        *algo = EMBER_CONV_IM2COL;
    else if (strcmp(forced, "winograd") == 0)
        *algo = winograd_applies(g) ? EMBER_CONV_WINOGRAD : EMBER_CONV_IM2COL;
    else if (strcmp(forced, "winograd4") == 0)
        *algo = winograd_applies(g) ? EMBER_CONV_WINOGRAD4 : EMBER_CONV_IM2COL;
    else if (strcmp(forced, "direct") == 0)
        *algo = EMBER_CONV_DIRECT;
    else {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "EMBER_CONV_ALGO=%.40s: expected im2col, winograd, winograd4, direct or auto", forced);
        return false;
    }
    return true;
}

const char *ember_conv_algo_name(enum ember_conv_algo algo)
{
    return algo == EMBER_CONV_WINOGRAD    ? "winograd"
           : algo == EMBER_CONV_WINOGRAD4 ? "winograd4"
           : algo == EMBER_CONV_DIRECT    ? "direct"
                                          : "im2col";
}

const char *ember_conv_algo_phase(enum ember_conv_algo algo, bool forward)
{
    static const char *const phases[4][2] = {{"backward [im2col]", "forward [im2col]"},
                                             {"backward [winograd]", "forward [winograd]"},
                                             {"backward [winograd4]", "forward [winograd4]"},
                                             {"backward [direct]", "forward [direct]"}};
    return phases[algo == EMBER_CONV_WINOGRAD    ? 1
                  : algo == EMBER_CONV_WINOGRAD4 ? 2
                  : algo == EMBER_CONV_DIRECT    ? 3
                                                 : 0][forward];
}

int ember_conv_algo_tile(enum ember_conv_algo algo)
{
    return algo == EMBER_CONV_WINOGRAD ? 2 : algo == EMBER_CONV_WINOGRAD4 ? 4 : 0;
}
