/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-gemm.c — sgemm through gemm.kc, for every GPU backend.
 *
 * On a GPU, products that fill at least one whole tile each way go to the tiled
 * kernel: one work-group per tile of C per matrix of the batch,
 * (ceil(n / TILE_N), ceil(m / TILE_M), batch) groups, split into several
 * launches past the grid's limits (65535 along y and z on CUDA). The shapes of a small
 * CNN mostly do not, and have kernels of their own (gemm.kc): sgemm_wide
 * for few rows of C against many columns with B not transposed (a
 * convolution, a linear layer's input and weight gradients), sgemm_split
 * for a small C over a long k (a linear layer, a convolution's weight
 * gradient). What is left, small every way, goes to the direct kernel, one
 * work-item per element of C; so does a small C over a long k on a CPU
 * device (tuning run > 1), when C has enough elements to keep its cores
 * busy. A CPU device never takes the tiled kernel: its barriers and local
 * memory are loops and copies there, and on PoCL it made a convolution's
 * input and weight gradients half of ResNet-8's step; without it ResNet-8
 * and VGG-8 trained 1.9 times as fast (docs/benchmarks.md, 2026-11-26).
 */
#include "gpu.h"

/* elements from the first a matrix touches to the last, plus one:
 * `batch` matrices `stride` apart, each `rows` rows of `ld` */
static int64_t gpu_gemm_extent(int64_t batch, int64_t stride, int64_t rows, int64_t cols, int64_t ld)
{
    return (batch - 1) * stride + (rows - 1) * ld + cols;
}

/* sgemm_wide takes B not transposed with at least this many columns;
 * sgemm_split a k at least this long, in blocks of C of this shape (gemm.kc) */
#define WIDE_MIN_COLS       32
#define SPLIT_MIN_K         32
#define SPLIT_ROWS          4
#define SPLIT_COLS          4
#define SPLIT_MAX_THREADS   256
#define DIRECT_MIN_ELEMENTS 256

/* The work-group size and the groups along x and y of a launch of
 * sgemm_wide or sgemm_split; false when they pass the grid's limits. */
static bool gpu_gemm_plan(const struct ember_gpu *gpu, const struct ember_gemm *g, enum ember_kernel kernel,
                          size_t *local, size_t groups[3])
{
    const struct ember_kernel_tuning *t = &gpu->tuning;
    int64_t x, y;
    if (kernel == EMBER_KERNEL_sgemm_wide) {
        int64_t per_row = (g->n + t->wide_cols - 1) / t->wide_cols; /* work-items along a row of C */
        *local = ember_gpu_local_for(gpu, per_row);
        x = (per_row + (int64_t)*local - 1) / (int64_t)*local;
        y = (g->m + t->wide_rows - 1) / t->wide_rows;
    } else {
        /* about 16 values of k per work-item: enough to hide the reduction at the end */
        int64_t most = t->wg_size < SPLIT_MAX_THREADS ? t->wg_size : SPLIT_MAX_THREADS;
        *local = 1;
        while ((int64_t)*local < most && (int64_t)*local * 16 < g->k)
            *local *= 2;
        x = (g->n + SPLIT_COLS - 1) / SPLIT_COLS;
        y = (g->m + SPLIT_ROWS - 1) / SPLIT_ROWS;
    }
    groups[0] = (size_t)x;
    groups[1] = (size_t)y;
    return x <= (int64_t)gpu->max_groups && y <= EMBER_GPU_GRID_YZ;
}

/* sgemm_wide or sgemm_split over the batch, in launches of at most
 * EMBER_GPU_GRID_YZ matrices (the grid's z). */
static ember_status gpu_gemm_batches(struct ember_gpu *gpu, const struct ember_gemm *g, ember_ptr a,
                                     ember_ptr b, ember_ptr c, enum ember_kernel kernel, size_t local,
                                     size_t groups[3])
{
    for (int64_t z0 = 0; z0 < g->batch; z0 += EMBER_GPU_GRID_YZ) {
        int64_t count = g->batch - z0 < EMBER_GPU_GRID_YZ ? g->batch - z0 : EMBER_GPU_GRID_YZ;
        ember_ptr az = {a.buf, a.off + (size_t)(z0 * g->stride_a)},
                  bz = {b.buf, b.off + (size_t)(z0 * g->stride_b)},
                  cz = {c.buf, c.off + (size_t)(z0 * g->stride_c)};
        groups[2] = (size_t)count;
        ember_status st =
            kernel == EMBER_KERNEL_sgemm_wide
                ? GPU_LAUNCH(gpu, kernel, groups, local, GPU_PTR(az), GPU_PTR(bz), GPU_PTR(cz), GPU_INT(g->m),
                             GPU_INT(g->n), GPU_INT(g->k), GPU_INT(g->lda), GPU_INT(g->ldb), GPU_INT(g->ldc),
                             GPU_INT(g->trans_a), GPU_INT(g->stride_a), GPU_INT(g->stride_b),
                             GPU_INT(g->stride_c), GPU_FLOAT(g->alpha), GPU_FLOAT(g->beta))
                : GPU_LAUNCH(gpu, kernel, groups, local, GPU_PTR(az), GPU_PTR(bz), GPU_PTR(cz), GPU_INT(g->m),
                             GPU_INT(g->n), GPU_INT(g->k), GPU_INT(g->trans_a), GPU_INT(g->trans_b),
                             GPU_INT(g->lda), GPU_INT(g->ldb), GPU_INT(g->ldc), GPU_INT(g->stride_a),
                             GPU_INT(g->stride_b), GPU_INT(g->stride_c), GPU_FLOAT(g->alpha),
                             GPU_FLOAT(g->beta));
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

/* The tiled kernel: a group per tile of C per matrix, (ceil(n / TILE_N),
 * ceil(m / TILE_M), batch) groups, in as many launches as the grid's
 * limits need: a part of the batch, a band of rows of C (and of op(A)), a
 * band of columns of C (and of op(B)) each, the pointers moved to the
 * part's start. */
static ember_status gpu_gemm_tiled(struct ember_gpu *gpu, const struct ember_gemm *g, ember_ptr a,
                                   ember_ptr b, ember_ptr c)
{
    const struct ember_kernel_tuning *t = &gpu->tuning;
    int64_t rows = EMBER_GPU_GRID_YZ * (int64_t)t->tile_m, cols = (int64_t)gpu->max_groups * t->tile_n;
    for (int64_t z0 = 0; z0 < g->batch; z0 += EMBER_GPU_GRID_YZ)
        for (int64_t i0 = 0; i0 < g->m; i0 += rows)
            for (int64_t j0 = 0; j0 < g->n; j0 += cols) {
                int64_t batch = g->batch - z0 < EMBER_GPU_GRID_YZ ? g->batch - z0 : EMBER_GPU_GRID_YZ,
                        m = g->m - i0 < rows ? g->m - i0 : rows, n = g->n - j0 < cols ? g->n - j0 : cols;
                int64_t a_at = z0 * g->stride_a + (g->trans_a ? i0 : i0 * g->lda),
                        b_at = z0 * g->stride_b + (g->trans_b ? j0 * g->ldb : j0),
                        c_at = z0 * g->stride_c + i0 * g->ldc + j0;
                ember_ptr ap = {a.buf, a.off + (size_t)a_at}, bp = {b.buf, b.off + (size_t)b_at},
                          cp = {c.buf, c.off + (size_t)c_at};
                size_t groups[3] = {(size_t)((n + t->tile_n - 1) / t->tile_n),
                                    (size_t)((m + t->tile_m - 1) / t->tile_m), (size_t)batch};
                ember_status st = GPU_LAUNCH(
                    gpu, EMBER_KERNEL_sgemm, groups, gpu->gemm_threads, GPU_PTR(ap), GPU_PTR(bp), GPU_PTR(cp),
                    GPU_INT(m), GPU_INT(n), GPU_INT(g->k), GPU_INT(g->trans_a), GPU_INT(g->trans_b),
                    GPU_INT(g->lda), GPU_INT(g->ldb), GPU_INT(g->ldc), GPU_INT(g->stride_a),
                    GPU_INT(g->stride_b), GPU_INT(g->stride_c), GPU_FLOAT(g->alpha), GPU_FLOAT(g->beta));
                if (st != EMBER_OK)
                    return st;
            }
    return EMBER_OK;
}

ember_status ember_gpu_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c)
{
    struct ember_gpu *gpu = dev;
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return EMBER_OK;
    /* with k == 0 the kernels read neither A nor B and give C = beta * C */
    int64_t elements = g->batch * g->m * g->n;
    ember_status st =
        ember_gpu_check_extent(gpu, "sgemm C", c, gpu_gemm_extent(g->batch, g->stride_c, g->m, g->n, g->ldc));
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, "sgemm C", c, elements);
    if (st == EMBER_OK && g->k > 0)
        st = ember_gpu_check_extent(gpu, "sgemm A", a,
                                    g->trans_a ? gpu_gemm_extent(g->batch, g->stride_a, g->k, g->m, g->lda)
                                               : gpu_gemm_extent(g->batch, g->stride_a, g->m, g->k, g->lda));
    if (st == EMBER_OK && g->k > 0)
        st = ember_gpu_check_extent(gpu, "sgemm B", b,
                                    g->trans_b ? gpu_gemm_extent(g->batch, g->stride_b, g->n, g->k, g->ldb)
                                               : gpu_gemm_extent(g->batch, g->stride_b, g->k, g->n, g->ldb));
    if (st != EMBER_OK)
        return st;
    const struct ember_kernel_tuning *t = &gpu->tuning;
    if (t->run == 1 && g->m >= t->tile_m && g->n >= t->tile_n && g->k >= t->tile_k)
        return gpu_gemm_tiled(gpu, g, a, b, c);
    size_t local, groups[3];
    if (!g->trans_b && g->n >= WIDE_MIN_COLS &&
        gpu_gemm_plan(gpu, g, EMBER_KERNEL_sgemm_wide, &local, groups))
        return gpu_gemm_batches(gpu, g, a, b, c, EMBER_KERNEL_sgemm_wide, local, groups);
    /* a CPU device (run > 1) does a C of enough elements to share out among
     * its cores better with the direct kernel's runs along k */
    bool direct = t->run > 1 && elements >= DIRECT_MIN_ELEMENTS;
    if (!direct && g->k >= SPLIT_MIN_K && gpu_gemm_plan(gpu, g, EMBER_KERNEL_sgemm_split, &local, groups))
        return gpu_gemm_batches(gpu, g, a, b, c, EMBER_KERNEL_sgemm_split, local, groups);
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_sgemm_direct, elements, GPU_PTR(a), GPU_PTR(b), GPU_PTR(c),
                         GPU_INT(g->m), GPU_INT(g->n), GPU_INT(g->k), GPU_INT(g->trans_a),
                         GPU_INT(g->trans_b), GPU_INT(g->lda), GPU_INT(g->ldb), GPU_INT(g->ldc),
                         GPU_INT(g->stride_a), GPU_INT(g->stride_b), GPU_INT(g->stride_c),
                         GPU_FLOAT(g->alpha), GPU_FLOAT(g->beta), GPU_INT(elements));
}
