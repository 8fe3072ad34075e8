/* SPDX-License-Identifier: MIT */
/*
 * core/conv-algo.c — the choice of a convolution's algorithm: a small
 * table by shape and device, so that each shape always runs the same way
 * on the same device (the same numbers, run after run), and
 * EMBER_CONV_ALGO to force one for comparisons (bench/conv_algo.sh).
 *
 * conv_direct (no columns; on the CPU register-blocked vector kernels,
 * backends/cpu/cpu-conv-direct.c) is the default where a backend's
 * kernels are fast, im2col + sgemm elsewhere. Winograd F(2x2, 3x3) and
 * F(4x4, 3x3) (backends/cpu/cpu-winograd.c, cpu-winograd4.c) do 2.25 and
 * 4 times less arithmetic but pay for their transforms in memory traffic,
 * and for tiles that overhang the output's edge: only many channels and a
 * large enough output repay them. Only the CPU backend has them; the GPUs
 * refuse them (backends/kernels/gpu-winograd.c).
 */
#include <stdlib.h>
#include <string.h>

#include "conv-algo-impl.h"

/* Where auto picks Winograd: the first row that a convolution meets, on
 * its backend, with at least min_channels in and out and an output of at
 * least min_side a side. Against im2col (bench/conv_algo.sh on the 2-core
 * EPYC, docs/benchmarks.md, "CPU: convolution algorithms") 4x4 tiles paid
 * from 16x16 outputs on and 2x2 tiles from 8x8; against conv_direct's
 * register-blocked kernels (bench/conv_shapes.c, "CPU: conv_direct's
 * kernels") only 2x2 tiles with 128 channels and more still do, by 1.05
 * to 1.08 times, doing 2.25 times less arithmetic: below that direct was
 * faster on every layer measured (1.1 to 3.7 times Winograd's speed at 16
 * to 64 channels). */
static const struct winograd_rule {
    const char *backend;
    enum ember_conv_algo algo;
    int64_t min_channels, min_side;
} winograd_where[] = {
    {"cpu", EMBER_CONV_WINOGRAD, 128, 8},
};

/* Where conv_direct runs rather than im2col, by default: on these
 * backends, on every layer their conv_direct_fast says yes to (all of
 * them where a backend has none). It is the same arithmetic in float,
 * im2col's products summed in another order, so no accuracy to prove (one
 * ResNet-8 epoch on an H200: training loss 0.534868 against im2col's
 * 0.534956, test accuracy 0.8640 against 0.8645; on the CPU see
 * docs/benchmarks.md, "CPU: conv_direct's kernels").
 *
 * CUDA: 1.03 to 1.44 times im2col's images/s on ResNet-8, VGG-8 and
 * LeNet-5 at batch 64 and 256 on an H200, and on simplecnn 1.09 (batch
 * 64) and 1.22 (batch 1024) on an H100 once the weight gradient came in
 * slices of the batch (docs/benchmarks.md, "CUDA"; docs/gpu-runs/
 * 2026-11-26-h200-conv.md and -h100-conv.md). OpenCL on a GPU device: 1.7
 * to 1.8 times im2col's images/s on ResNet-8 and VGG-8 at batch 256
 * through NVIDIA's driver on an H200, 0.99 to 1.16 at batch 64
 * ("OpenCL on an NVIDIA GPU"); on a CPU device (PoCL) slower (68 images/s
 * on ResNet-8 against 78), and the backend's conv_direct_fast says no.
 * The CPU: its vector kernels (AVX2 or AVX-512; not the plain loops) ran
 * every layer measured 1.0 to 3.4 times as fast as im2col and OpenBLAS,
 * forward and backward, but 1x1 layers (0.87 to 1.05: their columns are
 * the input, or a quarter of it, so im2col there is little more than the
 * product), and trained ResNet-8 and VGG-8 at 1.7 times im2col's images/s
 * on one thread ("CPU: conv_direct's kernels"). The PTX simulator's GPUs
 * (ptxsim:N) choose as CUDA's do, so that a simulated step runs the
 * kernels a real GPU's step runs. */
static const char *const direct_backends[] = {"cuda", "ptxsim", "opencl", "cpu"};

static enum ember_conv_algo exact_table(const ember_ctx *ctx, const struct ember_conv_geom *g)
{
    for (size_t i = 0; i < sizeof direct_backends / sizeof direct_backends[0]; i++)
        if (strcmp(ctx->ops->name, direct_backends[i]) == 0 &&
            (!ctx->ops->conv_direct_fast || ctx->ops->conv_direct_fast(ctx->dev, g)))
            return EMBER_CONV_DIRECT;
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
    /* The default leaves Winograd out: auto's table gives it no layer of
     * the zoo's models (64 channels at most), and when it still beat
     * im2col there, after their documented epochs ResNet-8 trained to the
     * same accuracy with it (+0.06 points over three seeds) and VGG-8 to
     * 0.21 points less over six, for 3 to 5% of their images/s on one
     * thread (docs/benchmarks.md, "What Winograd is worth to the models
     * now"): too little to move every run's numbers for. "auto" is the
     * whole measured table, for layers of 128 channels and more. */
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
           : algo == EMBER_CONV_GROUPED   ? "grouped"
                                          : "im2col";
}

const char *ember_conv_algo_phase(enum ember_conv_algo algo, bool forward)
{
    static const char *const phases[5][2] = {{"backward [im2col]", "forward [im2col]"},
                                             {"backward [winograd]", "forward [winograd]"},
                                             {"backward [winograd4]", "forward [winograd4]"},
                                             {"backward [direct]", "forward [direct]"},
                                             {"backward [grouped]", "forward [grouped]"}};
    return phases[algo == EMBER_CONV_WINOGRAD    ? 1
                  : algo == EMBER_CONV_WINOGRAD4 ? 2
                  : algo == EMBER_CONV_DIRECT    ? 3
                  : algo == EMBER_CONV_GROUPED   ? 4
                                                 : 0][forward];
}

int ember_conv_algo_tile(enum ember_conv_algo algo)
{
    return algo == EMBER_CONV_WINOGRAD ? 2 : algo == EMBER_CONV_WINOGRAD4 ? 4 : 0;
}
