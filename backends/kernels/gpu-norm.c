/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-norm.c — layer normalization through norm.kc, for
 * every GPU backend: one work-group per row.
 */
#include "gpu.h"

/* one work-item per row on a CPU device and for short rows (gpu-softmax.c's rule) */
#define LAYER_NORM_ROW_COLS 32

static bool by_rows(const struct ember_gpu *gpu, int64_t cols)
{
    return gpu->tuning.run > 1 || cols <= LAYER_NORM_ROW_COLS;
}

ember_status ember_gpu_layer_norm_forward(void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x,
                                          ember_ptr weight, ember_ptr bias, ember_ptr y, ember_ptr xhat,
                                          ember_ptr rstd)
{
    struct ember_gpu *gpu = dev;
    const char *name = "layer_norm_forward";
    ember_status st = ember_gpu_check_extents(gpu, name, rows * cols, 3, (ember_ptr[]){x, y, xhat});
    if (st == EMBER_OK)
        st = ember_gpu_check_extents(gpu, name, cols, 2, (ember_ptr[]){weight, bias});
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, rstd, rows);
    if (st != EMBER_OK || rows * cols == 0)
        return st;
    if (by_rows(gpu, cols))
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_layer_norm_forward_rows, rows, GPU_PTR(x), GPU_PTR(weight),
                               GPU_PTR(bias), GPU_PTR(y), GPU_PTR(xhat), GPU_PTR(rstd), GPU_INT(rows),
                               GPU_INT(cols), GPU_FLOAT(eps));
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_layer_norm_forward, rows, GPU_PTR(x), GPU_PTR(weight),
                           GPU_PTR(bias), GPU_PTR(y), GPU_PTR(xhat), GPU_PTR(rstd), GPU_INT(rows),
                           GPU_INT(cols), GPU_FLOAT(eps));
}

ember_status ember_gpu_layer_norm_backward(void *dev, int64_t rows, int64_t cols, ember_ptr dy,
                                           ember_ptr xhat, ember_ptr weight, ember_ptr rstd, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    const char *name = "layer_norm_backward";
    ember_status st = ember_gpu_check_extents(gpu, name, rows * cols, 3, (ember_ptr[]){dy, xhat, dx});
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, weight, cols);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, rstd, rows);
    if (st != EMBER_OK || rows * cols == 0)
        return st;
    if (by_rows(gpu, cols))
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_layer_norm_backward_rows, rows, GPU_PTR(dy), GPU_PTR(xhat),
                               GPU_PTR(weight), GPU_PTR(rstd), GPU_PTR(dx), GPU_INT(rows), GPU_INT(cols));
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_layer_norm_backward, rows, GPU_PTR(dy), GPU_PTR(xhat),
                           GPU_PTR(weight), GPU_PTR(rstd), GPU_PTR(dx), GPU_INT(rows), GPU_INT(cols));
}
