/*
 * backends/opencl/opencl-gemm.c — sgemm through backends/kernels/gemm.kc.
 *
 * Products that fill at least one whole tile each way go to the tiled
 * kernel: one work-group per tile of C per matrix of the batch,
 * (ceil(n / TILE_N), ceil(m / TILE_M), batch) groups. Smaller ones (the
 * convolutions and the last layer of a small CNN are mostly such: 16
 * output channels, 10 classes, k = 9) would leave most of each tile idle,
 * and go to the direct kernel, one work-item per element of C.
 */
#include "opencl-impl.h"

/* elements from the first a matrix touches to the last, plus one:
 * `batch` matrices `stride` apart, each `rows` rows of `ld` */
static int64_t opencl_gemm_extent(int64_t batch, int64_t stride, int64_t rows, int64_t cols, int64_t ld)
{
    return (batch - 1) * stride + (rows - 1) * ld + cols;
}

ember_status opencl_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c)
{
    struct opencl_device *d = dev;
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return EMBER_OK;
    /* with k == 0 the kernels read neither A nor B and give C = beta * C */
    int64_t elements = g->batch * g->m * g->n;
    ember_status st =
        opencl_check_extent(d, "sgemm C", c, opencl_gemm_extent(g->batch, g->stride_c, g->m, g->n, g->ldc));
    if (st == EMBER_OK)
        st = opencl_check_extent(d, "sgemm C", c, elements);
    if (st == EMBER_OK && g->k > 0)
        st = opencl_check_extent(d, "sgemm A", a,
                                 g->trans_a ? opencl_gemm_extent(g->batch, g->stride_a, g->k, g->m, g->lda)
                                            : opencl_gemm_extent(g->batch, g->stride_a, g->m, g->k, g->lda));
    if (st == EMBER_OK && g->k > 0)
        st = opencl_check_extent(d, "sgemm B", b,
                                 g->trans_b ? opencl_gemm_extent(g->batch, g->stride_b, g->n, g->k, g->ldb)
                                            : opencl_gemm_extent(g->batch, g->stride_b, g->k, g->n, g->ldb));
    if (st != EMBER_OK)
        return st;
#define GEMM_ARGS                                                                                            \
    OPENCL_PTR(a), OPENCL_PTR(b), OPENCL_PTR(c), OPENCL_INT(g->m), OPENCL_INT(g->n), OPENCL_INT(g->k),       \
        OPENCL_INT(g->trans_a), OPENCL_INT(g->trans_b), OPENCL_INT(g->lda), OPENCL_INT(g->ldb),              \
        OPENCL_INT(g->ldc), OPENCL_INT(g->stride_a), OPENCL_INT(g->stride_b), OPENCL_INT(g->stride_c),       \
        OPENCL_FLOAT(g->alpha), OPENCL_FLOAT(g->beta)
    const struct ember_kernel_tuning *t = &d->tuning;
    if (g->m < t->tile_m || g->n < t->tile_n || g->k < t->tile_k)
        return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_sgemm_direct, elements, GEMM_ARGS, OPENCL_INT(elements));
    size_t groups[3] = {(size_t)((g->n + t->tile_n - 1) / t->tile_n),
                        (size_t)((g->m + t->tile_m - 1) / t->tile_m), (size_t)g->batch};
    return OPENCL_LAUNCH(d, EMBER_KERNEL_sgemm, groups, d->gemm_threads, GEMM_ARGS);
#undef GEMM_ARGS
}
