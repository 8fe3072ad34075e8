/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-softmax.c — softmax over rows, with attention's
 * causal mask, through softmax.kc, for every GPU backend: one work-group
 * per row.
 */
#include "gpu.h"

ember_status ember_gpu_softmax_forward(void *dev, int64_t rows, int64_t cols, int64_t causal_rows,
                                       ember_ptr x, ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    ember_status st = ember_gpu_check_extents(gpu, "softmax_forward", rows * cols, 2, (ember_ptr[]){x, y});
    if (st != EMBER_OK || rows * cols == 0)
        return st;
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
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_softmax_backward, rows, GPU_PTR(y), GPU_PTR(dy), GPU_PTR(dx),
                           GPU_INT(rows), GPU_INT(cols));
}
