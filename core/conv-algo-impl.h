/* SPDX-License-Identifier: MIT */
/*
 * core/conv-algo-impl.h — which algorithm a convolution runs
 * (core/conv-algo.c; docs/design.md, "Choosing a convolution's algorithm").
 */
#ifndef EMBER_CONV_ALGO_IMPL_H
#define EMBER_CONV_ALGO_IMPL_H

#include "ctx-impl.h"

enum ember_conv_algo {
    EMBER_CONV_IM2COL,    /* im2col (or col2im) and a batched sgemm: any shape, every backend */
    EMBER_CONV_WINOGRAD,  /* conv_winograd in tiles of 2x2, F(2x2, 3x3): 3x3, stride 1, padding 0 to 2 */
    EMBER_CONV_WINOGRAD4, /* the same in tiles of 4x4, F(4x4, 3x3) */
    EMBER_CONV_DIRECT,    /* conv_direct, no columns: any shape, the GPU backends */
    EMBER_CONV_GROUPED,   /* conv_grouped: every convolution of groups > 1, never chosen by the table */
};

/* The algorithm for a convolution of this geometry with `oc` output
 * channels on ctx's device: the same answer for the same shape and
 * device, every time. EMBER_CONV_ALGO=im2col|winograd|winograd4|direct|auto
 * overrides the table (either Winograd where it applies; direct on a
 * backend without it fails at the first convolution); any other value
 * is EMBER_ERR_ARG on the context, and false. */
bool ember_conv_algo_choose(ember_ctx *ctx, const struct ember_conv_geom *g, int64_t oc,
                            enum ember_conv_algo *algo);

/* "im2col", "winograd", "winograd4", "direct": EMBER_CONV_ALGO's spelling
 * ("grouped" for the grouped convolutions, which it does not choose) */
const char *ember_conv_algo_name(enum ember_conv_algo algo);

/* the profile's op row for conv2d's pass: "forward [winograd]", "backward [im2col]" */
const char *ember_conv_algo_phase(enum ember_conv_algo algo, bool forward);

/* conv_winograd's tile for the algorithm: 2 or 4 (0 for im2col) */
int ember_conv_algo_tile(enum ember_conv_algo algo);

#endif /* EMBER_CONV_ALGO_IMPL_H */
