/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-softmax.c — softmax over rows, with attention's
 * causal mask, through softmax.kc, for every GPU backend: one work-group
 * per row.
 */
#include "gpu.h"

/* Rows of at most this many columns take one work-item each rather than a
 * whole work-group (as cross-entropy's do); on a CPU device (tuning.run > 1)
 * every row does. */
#define SOFTMAX_ROW_COLS 32

static bool by_rows(const struct ember_gpu *gpu, int64_t cols)
{
    return gpu->tuning.run > 1 || cols <= SOFTMAX_ROW_COLS;
}

ember_status ember_gpu_softmax_forward(void *dev, int64_t rows, int64_t cols, int64_t causal_rows,
                                       ember_ptr x, ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    ember_status st = ember_gpu_check_extents(gpu, "softmax_forward", rows * cols, 2, (ember_ptr[]){x, y});
    if (st != EMBER_OK || rows * cols == 0)
        return st;
    if (by_rows(gpu, cols))
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_softmax_forward_rows, rows, GPU_PTR(x), GPU_PTR(y),
                               GPU_INT(rows), GPU_INT(cols), GPU_INT(causal_rows));
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_softmax_forward, rows, GPU_PTR(x), GPU_PTR(y), GPU_INT(rows),
                           GPU_INT(cols), GPU_INT(causal_rows));
}

ember_status ember_gpu_softmax_backward(void *dev, int64_t rows, int64_t cols, ember_ptr y, ember_ptr dy,
                                        ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "softmax_backward", rows * cols, 3, (ember_ptr[]){y, dy, dx});
    if (st != EMBER_OK || rows * cols == 0)
        return st;
    if (by_rows(gpu, cols))
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_softmax_backward_rows, rows, GPU_PTR(y), GPU_PTR(dy),
                               GPU_PTR(dx), GPU_INT(rows), GPU_INT(cols));
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_softmax_backward, rows, GPU_PTR(y), GPU_PTR(dy), GPU_PTR(dx),
                           GPU_INT(rows), GPU_INT(cols));
}
