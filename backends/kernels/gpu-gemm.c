/*
 * backends/kernels/gpu-gemm.c — sgemm through gemm.kc, for every GPU backend.
 *
 * Products that fill at least one whole tile each way go to the tiled
 * kernel: one work-group per tile of C per matrix of the batch,
 * (ceil(n / TILE_N), ceil(m / TILE_M), batch) groups. Smaller ones (the
 * convolutions and the last layer of a small CNN are mostly such: 16
 * output channels, 10 classes, k = 9) would leave most of each tile idle,
 * and go to the direct kernel, one work-item per element of C.
 */
#include "gpu.h"

/* elements from the first a matrix touches to the last, plus one:
 * `batch` matrices `stride` apart, each `rows` rows of `ld` */
static int64_t gpu_gemm_extent(int64_t batch, int64_t stride, int64_t rows, int64_t cols, int64_t ld)
{
    return (batch - 1) * stride + (rows - 1) * ld + cols;
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
#define GEMM_ARGS                                                                                            \
    GPU_PTR(a), GPU_PTR(b), GPU_PTR(c), GPU_INT(g->m), GPU_INT(g->n), GPU_INT(g->k), GPU_INT(g->trans_a),    \
        GPU_INT(g->trans_b), GPU_INT(g->lda), GPU_INT(g->ldb), GPU_INT(g->ldc), GPU_INT(g->stride_a),        \
        GPU_INT(g->stride_b), GPU_INT(g->stride_c), GPU_FLOAT(g->alpha), GPU_FLOAT(g->beta)
    const struct ember_kernel_tuning *t = &gpu->tuning;
    if (g->m < t->tile_m || g->n < t->tile_n || g->k < t->tile_k)
        return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_sgemm_direct, elements, GEMM_ARGS, GPU_INT(elements));
    size_t groups[3] = {(size_t)((g->n + t->tile_n - 1) / t->tile_n),
                        (size_t)((g->m + t->tile_m - 1) / t->tile_m), (size_t)g->batch};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_sgemm, groups, gpu->gemm_threads, GEMM_ARGS);
#undef GEMM_ARGS
}
