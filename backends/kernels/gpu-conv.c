/*
 * backends/kernels/gpu-conv.c — im2col, col2im and max-pooling through
 * conv.kc and pool.kc, for every GPU backend: one work-item per output
 * element, in grid-stride launches.
 */
#include "gpu.h"

static ember_status gpu_conv_check(struct ember_gpu *gpu, const char *primitive,
                                   const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    ember_status st = ember_gpu_check_extent(gpu, primitive, x, g->n * g->c * g->h * g->w);
    return st != EMBER_OK
               ? st
               : ember_gpu_check_extent(gpu, primitive, col, g->n * g->c * g->kh * g->kw * g->oh * g->ow);
}

#define CONV_GEOMETRY(g)                                                                                     \
    GPU_INT((g)->n), GPU_INT((g)->c), GPU_INT((g)->h), GPU_INT((g)->w), GPU_INT((g)->kh), GPU_INT((g)->kw),  \
        GPU_INT((g)->stride), GPU_INT((g)->pad), GPU_INT((g)->oh), GPU_INT((g)->ow)

ember_status ember_gpu_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_conv_check(gpu, "im2col", g, x, col);
    int64_t total = g->n * g->c * g->kh * g->kw * g->oh * g->ow;
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_im2col, total, GPU_PTR(x), GPU_PTR(col), CONV_GEOMETRY(g));
}

ember_status ember_gpu_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_conv_check(gpu, "col2im", g, dx, col);
    int64_t total = g->n * g->c * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_col2im, total, GPU_PTR(col), GPU_PTR(dx), CONV_GEOMETRY(g));
}

static ember_status gpu_pool_check(struct ember_gpu *gpu, const char *primitive,
                                   const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                   ember_ptr argmax)
{
    int64_t planes = g->n * g->c;
    ember_status st = ember_gpu_check_extent(gpu, primitive, x, planes * g->h * g->w);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, primitive, y, planes * g->oh * g->ow);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, primitive, argmax, planes * g->oh * g->ow);
    return st;
}

#define POOL_GEOMETRY(g)                                                                                     \
    GPU_INT((g)->n *(g)->c), GPU_INT((g)->h), GPU_INT((g)->w), GPU_INT((g)->k), GPU_INT((g)->stride),        \
        GPU_INT((g)->oh), GPU_INT((g)->ow)

ember_status ember_gpu_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                       ember_ptr argmax)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_pool_check(gpu, "maxpool_forward", g, x, y, argmax);
    int64_t total = g->n * g->c * g->oh * g->ow;
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_maxpool_forward, total, GPU_PTR(x), GPU_PTR(y), GPU_PTR(argmax),
                         POOL_GEOMETRY(g));
}

ember_status ember_gpu_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                        ember_ptr argmax, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_pool_check(gpu, "maxpool_backward", g, dx, dy, argmax);
    int64_t total = g->n * g->c * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_maxpool_backward, total, GPU_PTR(dy), GPU_PTR(argmax), GPU_PTR(dx),
                         POOL_GEOMETRY(g));
}
