/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-dropout.c — dropout's mask through dropout.kc, for
 * every GPU backend: one work-item per element.
 */
#include "gpu.h"

ember_status ember_gpu_dropout_mask(void *dev, ember_ptr mask, size_t n, float p, uint64_t seed)
{
    struct ember_gpu *gpu = dev;
    ember_status st = ember_gpu_check_extent(gpu, "dropout_mask", mask, (int64_t)n);
    if (st != EMBER_OK || n == 0)
        return st;
    uint32_t threshold = ember_dropout_threshold(p);
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_dropout_mask, (int64_t)n, GPU_PTR(mask), GPU_INT(n),
                           GPU_INT((int32_t)(uint32_t)seed), GPU_INT((int32_t)(uint32_t)(seed >> 32)),
                           GPU_INT((int32_t)threshold), GPU_FLOAT(1.0f / (1.0f - p)));
}
