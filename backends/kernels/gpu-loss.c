/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-loss.c — softmax-cross-entropy through loss.kc, for
 * every GPU backend.
 */
#include "gpu.h"

/* Rows of at most this many classes take one work-item each rather than a
 * whole work-group, which would mostly idle. */
#define CROSS_ENTROPY_ROW_CLASSES 32

ember_status ember_gpu_cross_entropy_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits,
                                             ember_ptr target, ember_ptr prob, ember_ptr loss)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "cross_entropy_forward", n * classes, 2, (ember_ptr[]){logits, prob});
    if (st == EMBER_OK)
        st = ember_gpu_check_extents(gpu, "cross_entropy_forward", n, 2, (ember_ptr[]){target, loss});
    if (st != EMBER_OK || n == 0)
        return st;
    if (classes <= CROSS_ENTROPY_ROW_CLASSES)
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_cross_entropy_forward_rows, n, GPU_PTR(logits),
                               GPU_PTR(target), GPU_PTR(prob), GPU_PTR(loss), GPU_INT(n), GPU_INT(classes));
    /* one work-group per row */
    size_t groups = n < (int64_t)gpu->max_groups ? (size_t)n : gpu->max_groups;
    return GPU_LAUNCH(gpu, EMBER_KERNEL_cross_entropy_forward, ((const size_t[3]){groups, 1, 1}),
                      (size_t)gpu->tuning.wg_size, GPU_PTR(logits), GPU_PTR(target), GPU_PTR(prob),
                      GPU_PTR(loss), GPU_INT(n), GPU_INT(classes));
}

ember_status ember_gpu_cross_entropy_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob,
                                              ember_ptr target, ember_ptr dloss, float scale,
                                              ember_ptr dlogits)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "cross_entropy_backward", n * classes, 2, (ember_ptr[]){prob, dlogits});
    if (st == EMBER_OK)
        st = ember_gpu_check_extents(gpu, "cross_entropy_backward", n, 2, (ember_ptr[]){target, dloss});
    if (st != EMBER_OK || n * classes == 0)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_cross_entropy_backward, n * classes, GPU_PTR(prob),
                           GPU_PTR(target), GPU_PTR(dloss), GPU_FLOAT(scale), GPU_PTR(dlogits), GPU_INT(n),
                           GPU_INT(classes));
}
