/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-winograd-impl.h — what the two Winograd tile sizes
 * share: F(2x2, 3x3) in cpu-winograd.c, F(4x4, 3x3) in cpu-winograd4.c,
 * and the driver that runs either (the groups, the products, the passes'
 * order) in cpu-winograd-driver.c. A tile size is its transforms, as
 * passes over planes.
 */
#ifndef EMBER_CPU_WINOGRAD_IMPL_H
#define EMBER_CPU_WINOGRAD_IMPL_H

#include "cpu-impl.h"

struct wino_kind;

/* One call's state, shared by the passes. Transformed tiles are stored
 * position-major, each position's (channels, tiles) a matrix for the
 * products: u (positions, oc, c), v (positions, c, tile_count), m
 * (positions, oc, tile_count). */
struct wino {
    const struct ember_conv_job *c;
    const struct wino_kind *kind;
    int64_t tiles_w, tiles;   /* tiles along a row, and in an image */
    int64_t img0, tile_count; /* the group: its first image, its tiles (images * tiles) */
    const float *src;
    float *dst;
    float *u, *v, *m;
};

/* The passes walk a plane a row of tiles at a time, in blocks of BLOCK
 * tiles: the rows a block reads are first copied into a small buffer with
 * the padding's zeros in place, so the loop over the block's tiles has no
 * bounds test and its stores go to contiguous streams, one a position,
 * which the compiler vectorises across tiles (ivdep: the streams never
 * overlap). */
#define WINO_BLOCK 64
#define WINO_SPAN  (4 * WINO_BLOCK + 2) /* input columns under a block, for tiles of up to 4 */

#if defined(__GNUC__) && !defined(__clang__)
#define WINO_ACROSS_TILES _Pragma("GCC ivdep")
#else
#define WINO_ACROSS_TILES
#endif

/* A transform of one block, nb (<= WINO_BLOCK) tiles along a row of
 * tiles: between rows[i][k], the strip of the plane under the block (its
 * row i, column k, the padding's zeros in place), and the block's first
 * tile in v or m, where the values of a tile position are `stride` floats
 * apart. */
typedef void wino_block_fn(float rows[][WINO_SPAN], float *tiles, int64_t nb, int64_t stride);

/* A tile size: `out` outputs a side from `out + 2` inputs a side, and its
 * transforms: of a block of tiles, for the passes over planes,
 *   inputs        rows of x -> v      (B^T d B)
 *   outputs       m -> rows of y      (A^T m A)
 *   output_grads  rows of dy -> m     (A dy A^T)
 * and of one filter, for the passes over the (oc, c) filters,
 *   filter        g (3x3) -> u (out + 2)^2   (G g G^T)
 *   filter_grad   u -> dg (3x3)              (G^T u G) */
struct wino_kind {
    int out, positions;
    wino_block_fn *inputs, *outputs, *output_grads;
    void (*filter)(const float *g, float *u);
    void (*filter_grad)(const float *u, float *dg);
};

extern const struct wino_kind cpu_winograd_f2, cpu_winograd_f4;

/* The passes over planes, as the pool's tasks over [begin, end) of the
 * group's (image, channel) planes, each block of each plane by the tile
 * size's transform (cpu-winograd.c):
 *   cpu_winograd_inputs        x planes (image * c + ci) -> v
 *   cpu_winograd_outputs       m -> y planes (image * oc + co), + beta * y
 *   cpu_winograd_output_grads  dy planes (image * oc + co) -> m */
void cpu_winograd_inputs(void *p, int64_t begin, int64_t end);
void cpu_winograd_outputs(void *p, int64_t begin, int64_t end);
void cpu_winograd_output_grads(void *p, int64_t begin, int64_t end);

#endif /* EMBER_CPU_WINOGRAD_IMPL_H */
