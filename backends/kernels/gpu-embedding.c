/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-embedding.c — an embedding's gather and scatter-add
 * through embedding.kc, for every GPU backend: one work-group per row of
 * the output, and per row of the table.
 */
#include "gpu.h"

ember_status ember_gpu_embedding_forward(void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index,
                                         ember_ptr weight, ember_ptr out)
{
    struct ember_gpu *gpu = dev;
    ember_status st = ember_gpu_check_each(gpu, "embedding_forward", 3, (ember_ptr[]){index, weight, out},
                                           (int64_t[]){n, vocab * dim, n * dim});
    if (st != EMBER_OK || n * dim == 0)
        return st;
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_embedding_forward, n, GPU_PTR(index), GPU_PTR(weight),
                           GPU_PTR(out), GPU_INT(n), GPU_INT(dim), GPU_INT(vocab));
}

ember_status ember_gpu_embedding_backward(void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index,
                                          ember_ptr dy, ember_ptr dweight)
{
    struct ember_gpu *gpu = dev;
    ember_status st = ember_gpu_check_each(gpu, "embedding_backward", 3, (ember_ptr[]){index, dy, dweight},
                                           (int64_t[]){n, n * dim, vocab * dim});
    if (st != EMBER_OK || n * dim == 0 || vocab == 0)
        return st;
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_embedding_backward, vocab, GPU_PTR(index), GPU_PTR(dy),
                           GPU_PTR(dweight), GPU_INT(n), GPU_INT(dim), GPU_INT(vocab));
}
