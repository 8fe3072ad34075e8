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

/* A tile size: `out` outputs a side from `out + 2` inputs a side. Each
 * pass runs over [begin, end) of (image, channel) planes of the group, or
 * of (oc, c) filters:
 *   inputs        x -> v         (B^T d B)
 *   outputs       m -> y         (A^T m A, + beta * y)
 *   output_grads  dy -> m        (A dy A^T)
 *   filter        g (3x3) -> u (out + 2)^2   (G g G^T)
 *   filter_grad   u -> dg (3x3)              (G^T u G) */
struct wino_kind {
    int out, positions;
    cpu_task_fn inputs, outputs, output_grads;
    void (*filter)(const float *g, float *u);
    void (*filter_grad)(const float *u, float *dg);
};

extern const struct wino_kind cpu_winograd_f2, cpu_winograd_f4;

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

/* rows[i][k] = the plane's row y0 + i, column x0 + k, 0 outside it, for
 * i < count and k < len (cpu-winograd.c) */
void cpu_winograd_rows(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0, int count,
                       int64_t len, float rows[][WINO_SPAN]);
/* Its way back: the `count` rows of a strip of output tiles into an (h, w)
 * plane at (y0, x0), `len` columns of them, rows past h left out; added to
 * what is there when `add` (the channel groups after the first), else
 * written. */
void cpu_winograd_store_rows(float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0, int count,
                             int64_t len, float rows[][WINO_SPAN], bool add);

#endif /* EMBER_CPU_WINOGRAD_IMPL_H */
