/*
 * backends/opencl/opencl-conv.c — im2col, col2im and max-pooling through
 * backends/kernels/conv.kc and pool.kc: one work-item per output element,
 * in grid-stride launches.
 */
#include "opencl-impl.h"

static ember_status opencl_conv_check(struct opencl_device *d, const char *primitive,
                                      const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    ember_status st = opencl_check_extent(d, primitive, x, g->n * g->c * g->h * g->w);
    return st != EMBER_OK
               ? st
               : opencl_check_extent(d, primitive, col, g->n * g->c * g->kh * g->kw * g->oh * g->ow);
}

#define CONV_GEOMETRY(g)                                                                                     \
    OPENCL_INT((g)->n), OPENCL_INT((g)->c), OPENCL_INT((g)->h), OPENCL_INT((g)->w), OPENCL_INT((g)->kh),     \
        OPENCL_INT((g)->kw), OPENCL_INT((g)->stride), OPENCL_INT((g)->pad), OPENCL_INT((g)->oh),             \
        OPENCL_INT((g)->ow)

ember_status opencl_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    struct opencl_device *d = dev;
    ember_status st = opencl_conv_check(d, "im2col", g, x, col);
    int64_t total = g->n * g->c * g->kh * g->kw * g->oh * g->ow;
    if (st != EMBER_OK || total == 0)
        return st;
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_im2col, total, OPENCL_PTR(x), OPENCL_PTR(col), CONV_GEOMETRY(g));
}

ember_status opencl_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx)
{
    struct opencl_device *d = dev;
    ember_status st = opencl_conv_check(d, "col2im", g, dx, col);
    int64_t total = g->n * g->c * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_col2im, total, OPENCL_PTR(col), OPENCL_PTR(dx), CONV_GEOMETRY(g));
}

static ember_status opencl_pool_check(struct opencl_device *d, const char *primitive,
                                      const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                      ember_ptr argmax)
{
    int64_t planes = g->n * g->c;
    ember_status st = opencl_check_extent(d, primitive, x, planes * g->h * g->w);
    if (st == EMBER_OK)
        st = opencl_check_extent(d, primitive, y, planes * g->oh * g->ow);
    if (st == EMBER_OK)
        st = opencl_check_extent(d, primitive, argmax, planes * g->oh * g->ow);
    return st;
}

#define POOL_GEOMETRY(g)                                                                                     \
    OPENCL_INT((g)->n *(g)->c), OPENCL_INT((g)->h), OPENCL_INT((g)->w), OPENCL_INT((g)->k),                  \
        OPENCL_INT((g)->stride), OPENCL_INT((g)->oh), OPENCL_INT((g)->ow)

ember_status opencl_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                    ember_ptr argmax)
{
    struct opencl_device *d = dev;
    ember_status st = opencl_pool_check(d, "maxpool_forward", g, x, y, argmax);
    int64_t total = g->n * g->c * g->oh * g->ow;
    if (st != EMBER_OK || total == 0)
        return st;
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_maxpool_forward, total, OPENCL_PTR(x), OPENCL_PTR(y),
                            OPENCL_PTR(argmax), POOL_GEOMETRY(g));
}

ember_status opencl_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                     ember_ptr argmax, ember_ptr dx)
{
    struct opencl_device *d = dev;
    ember_status st = opencl_pool_check(d, "maxpool_backward", g, dx, dy, argmax);
    int64_t total = g->n * g->c * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_maxpool_backward, total, OPENCL_PTR(dy), OPENCL_PTR(argmax),
                            OPENCL_PTR(dx), POOL_GEOMETRY(g));
}
