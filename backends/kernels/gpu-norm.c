/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-norm.c — layer, RMS and batch normalization through
 * norm.kc, for every GPU backend: layer norm and RMS norm's forward pass
 * one work-group per row, batch norm by planes, then channels, then
 * elements (at the end).
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

ember_status ember_gpu_rms_norm_forward(void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x,
                                        ember_ptr weight, int weighted, ember_ptr y, ember_ptr rrms)
{
    struct ember_gpu *gpu = dev;
    const char *name = "rms_norm_forward";
    ember_status st = ember_gpu_check_extents(gpu, name, rows * cols, 2, (ember_ptr[]){x, y});
    if (st == EMBER_OK && weighted)
        st = ember_gpu_check_extent(gpu, name, weight, cols);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, rrms, rows);
    if (st != EMBER_OK || rows * cols == 0)
        return st;
    ember_ptr w = weighted ? weight : x; /* unread without a weight, but a buffer the kernel can be given */
    if (by_rows(gpu, cols))
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_rms_norm_forward_rows, rows, GPU_PTR(x), GPU_PTR(w),
                               GPU_INT(weighted != 0), GPU_PTR(y), GPU_PTR(rrms), GPU_INT(rows),
                               GPU_INT(cols), GPU_FLOAT(eps));
    return GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_rms_norm_forward, rows, GPU_PTR(x), GPU_PTR(w),
                           GPU_INT(weighted != 0), GPU_PTR(y), GPU_PTR(rrms), GPU_INT(rows), GPU_INT(cols),
                           GPU_FLOAT(eps));
}

/* ------------------------------------------------------------ batch norm
 *
 * Each primitive is the passes of struct ember_batch_norm: the planes'
 * sums into work, each channel's from its planes, then the elementwise
 * pass, one launch each, as norm.kc's batch_norm kernels describe. */

/* the planes' pass a work-item a plane on a CPU device and for short planes */
static bool planes_by_rows(const struct ember_gpu *gpu, const struct ember_batch_norm *b)
{
    return gpu->tuning.run > 1 || b->s <= LAYER_NORM_ROW_COLS;
}

static ember_status check_batch_norm(struct ember_gpu *gpu, const char *name,
                                     const struct ember_batch_norm *b, int nx, const ember_ptr *xs, int nc,
                                     const ember_ptr *cs, ember_ptr work)
{
    ember_status st = ember_gpu_check_extents(gpu, name, b->n * b->c * b->s, nx, xs);
    if (st == EMBER_OK)
        st = ember_gpu_check_extents(gpu, name, b->c, nc, cs);
    if (st == EMBER_OK && work.buf)
        st = ember_gpu_check_extent(gpu, name, work, 2 * b->n * b->c);
    return st;
}

ember_status ember_gpu_batch_norm_stats(void *dev, const struct ember_batch_norm *b, ember_ptr x,
                                        ember_ptr work, ember_ptr mean, ember_ptr invstd,
                                        ember_ptr running_mean, ember_ptr running_var)
{
    struct ember_gpu *gpu = dev;
    int64_t planes = b->n * b->c;
    ember_status st = check_batch_norm(gpu, "batch_norm_stats", b, 1, (ember_ptr[]){x}, 4,
                                       (ember_ptr[]){mean, invstd, running_mean, running_var}, work);
    if (st != EMBER_OK || planes * b->s == 0)
        return st;
    if (planes_by_rows(gpu, b))
        st = GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_batch_norm_planes_rows, planes, GPU_PTR(x), GPU_PTR(work),
                             GPU_INT(planes), GPU_INT(b->s));
    else
        st = GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_batch_norm_planes, planes, GPU_PTR(x), GPU_PTR(work),
                             GPU_INT(planes), GPU_INT(b->s));
    if (st != EMBER_OK)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_batch_norm_channels, b->c, GPU_PTR(work), GPU_PTR(mean),
                           GPU_PTR(invstd), GPU_PTR(running_mean), GPU_PTR(running_var), GPU_INT(b->n),
                           GPU_INT(b->c), GPU_INT(b->s), GPU_FLOAT(b->eps), GPU_FLOAT(b->momentum));
}

ember_status ember_gpu_batch_norm_forward(void *dev, const struct ember_batch_norm *b, ember_ptr x,
                                          ember_ptr mean, ember_ptr invstd, ember_ptr weight, ember_ptr bias,
                                          ember_ptr xhat, ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    int64_t total = b->n * b->c * b->s;
    ember_status st = check_batch_norm(gpu, "batch_norm_forward", b, 3, (ember_ptr[]){x, xhat, y}, 4,
                                       (ember_ptr[]){mean, invstd, weight, bias}, (ember_ptr){0});
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_batch_norm_apply, total, GPU_PTR(x), GPU_PTR(mean),
                           GPU_PTR(invstd), GPU_PTR(weight), GPU_PTR(bias), GPU_PTR(xhat), GPU_PTR(y),
                           GPU_INT(total), GPU_INT(b->c), GPU_INT(b->s), GPU_INT(b->relu));
}

ember_status ember_gpu_batch_norm_backward(void *dev, const struct ember_batch_norm *b, ember_ptr dy,
                                           ember_ptr xhat, ember_ptr weight, ember_ptr bias, ember_ptr invstd,
                                           ember_ptr work, ember_ptr dweight, ember_ptr dbias, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    int64_t planes = b->n * b->c, total = planes * b->s;
    ember_status st = check_batch_norm(gpu, "batch_norm_backward", b, 3, (ember_ptr[]){dy, xhat, dx}, 5,
                                       (ember_ptr[]){weight, bias, invstd, dweight, dbias}, work);
    if (st != EMBER_OK || total == 0)
        return st;
    if (planes_by_rows(gpu, b))
        st = GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_batch_norm_grad_planes_rows, planes, GPU_PTR(dy),
                             GPU_PTR(xhat), GPU_PTR(weight), GPU_PTR(bias), GPU_PTR(work), GPU_INT(planes),
                             GPU_INT(b->c), GPU_INT(b->s), GPU_INT(b->relu));
    else
        st = GPU_LAUNCH_ROWS(gpu, EMBER_KERNEL_batch_norm_grad_planes, planes, GPU_PTR(dy), GPU_PTR(xhat),
                             GPU_PTR(weight), GPU_PTR(bias), GPU_PTR(work), GPU_INT(planes), GPU_INT(b->c),
                             GPU_INT(b->s), GPU_INT(b->relu));
    if (st == EMBER_OK)
        st = GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_batch_norm_grad_channels, b->c, GPU_PTR(work),
                             GPU_PTR(dweight), GPU_PTR(dbias), GPU_INT(b->n), GPU_INT(b->c));
    if (st != EMBER_OK)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_batch_norm_dx, total, GPU_PTR(dy), GPU_PTR(xhat),
                           GPU_PTR(weight), GPU_PTR(bias), GPU_PTR(invstd), GPU_PTR(dweight), GPU_PTR(dbias),
                           GPU_PTR(dx), GPU_INT(total), GPU_INT(b->c), GPU_INT(b->s), GPU_INT(b->training),
                           GPU_INT(b->relu));
}
