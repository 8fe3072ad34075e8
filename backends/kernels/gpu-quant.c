/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-quant.c — products with block-quantised weights and
 * their rows dequantised, through quant.kc, for every GPU backend: one
 * work-group per row of W (one work-item on a CPU device), and per row of
 * the output.
 */
#include "gpu.h"

/* the weights' extent in 4-byte words */
static int64_t quant_words(ember_dtype type, int64_t rows, int64_t cols, int64_t *elements, int64_t *bytes)
{
    if (!ember_quant_block(type, elements, bytes))
        return -1;
    return (rows * (cols / *elements) * *bytes + 3) / 4;
}

ember_status ember_gpu_quant_matmul(void *dev, const struct ember_quant_gemm *q, ember_ptr x, ember_ptr w,
                                    ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    const char *name = "quant_matmul";
    int64_t elements, bytes, words = quant_words(q->type, q->n, q->k, &elements, &bytes);
    if (words < 0 || q->k % elements != 0)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_ARG, "%s: %s weights with rows of %lld", name,
                              ember_dtype_label(q->type), (long long)q->k);
    ember_status st = ember_gpu_check_extent(gpu, name, x, q->m * q->k);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, w, words);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, y, q->m * q->n);
    if (st != EMBER_OK || q->m * q->n == 0)
        return st;
    if (gpu->tuning.run > 1) /* a CPU device */
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_quant_matmul_rows, q->n, GPU_PTR(x), GPU_PTR(w), GPU_PTR(y),
                               GPU_INT(q->m), GPU_INT(q->n), GPU_INT(q->k), GPU_INT(q->type),
                               GPU_INT(elements), GPU_INT(bytes), GPU_FLOAT(q->beta));
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_quant_matmul, q->n, GPU_PTR(x), GPU_PTR(w), GPU_PTR(y),
                           GPU_INT(q->m), GPU_INT(q->n), GPU_INT(q->k), GPU_INT(q->type), GPU_INT(elements),
                           GPU_INT(bytes), GPU_FLOAT(q->beta));
}

ember_status ember_gpu_dequantize(void *dev, ember_dtype type, int64_t rows, int64_t cols, int64_t vocab,
                                  ember_ptr index, ember_ptr w, ember_ptr out)
{
    struct ember_gpu *gpu = dev;
    const char *name = "dequantize";
    int64_t elements, bytes, words = quant_words(type, vocab, cols, &elements, &bytes);
    if (words < 0 || cols % elements != 0)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_ARG, "%s: %s rows of %lld", name,
                              ember_dtype_label(type), (long long)cols);
    bool indexed = index.buf != NULL;
    ember_status st = indexed ? ember_gpu_check_extent(gpu, name, index, rows) : EMBER_OK;
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, w, words);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, out, rows * cols);
    if (st != EMBER_OK || rows * cols == 0)
        return st;
    /* without an index, the weights stand in as the (unread) index argument */
    ember_ptr index_arg = indexed ? index : w;
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_dequantize, rows, GPU_PTR(index_arg), GPU_INT(indexed),
                           GPU_PTR(w), GPU_PTR(out), GPU_INT(rows), GPU_INT(cols), GPU_INT(vocab),
                           GPU_INT(type), GPU_INT(elements), GPU_INT(bytes));
}
