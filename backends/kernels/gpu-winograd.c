/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-winograd.c — conv_winograd on the GPU backends:
 * not written yet, so every GPU says so, and core/conv-algo.c never asks
 * a GPU for it (their convolutions stay im2col and a tiled sgemm). A
 * request anyway, through EMBER_CONV_ALGO=winograd, is this refusal.
 */
#include "gpu.h"

ember_status ember_gpu_conv_winograd(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                                     ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    (void)c, (void)x, (void)w, (void)y;
    return gpu->host.fail(gpu->host.ctx, EMBER_ERR_UNSUPPORTED,
                          "%s: conv_winograd has no GPU kernels yet (EMBER_CONV_ALGO=im2col or auto runs it)",
                          gpu->name);
}
