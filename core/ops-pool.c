/* SPDX-License-Identifier: MIT */
/*
 * core/ops-pool.c — max_pool2d through the max_pool2d primitives, which
 * also keep each window's argmax for the backward pass; avg_pool2d through
 * the avg_pool2d ones; global_avg_pool2d as a mean. With padding or
 * ceil_mode (PyTorch's MaxPool2d and AvgPool2d, ONNX's pools) x is padded
 * first (ember_pad: -inf for a max, zeros for a mean) and the mean's
 * windows that hold fewer elements than the kernel's (the padding left
 * out of the count, or a ceil_mode window that overhangs it) rescaled.
 */
#include <math.h>
#include <stdlib.h>

#include "ops-impl.h"

/* The geometry of a pooling of x, or false with the error recorded. */
static bool pool_geometry(ember_ctx *ctx, const char *name, const struct ember_tensor *x, int kernel,
                          int stride, struct ember_pool_geom *g)
{
    char sx[96];
    if (x->ndim != 4 || kernel < 1 || stride < 1 || x->shape[2] < kernel || x->shape[3] < kernel) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "%s takes x (N, C, H, W) with H and W at least the kernel; got x %s, kernel %d, stride %d",
                   name, ember_shape_str(x, sx, sizeof sx), kernel, stride);
        return false;
    }
    *g = (struct ember_pool_geom){.n = x->shape[0],
                                  .c = x->shape[1],
                                  .h = x->shape[2],
                                  .w = x->shape[3],
                                  .k = kernel,
                                  .stride = stride,
                                  .oh = (x->shape[2] - kernel) / stride + 1,
                                  .ow = (x->shape[3] - kernel) / stride + 1};
    return true;
}

/* The geometry a pooling node was recorded with: its kernel and stride in
 * arg[0] and arg[1], the sizes from its input and output */
static struct ember_pool_geom recorded_geometry(const struct ember_node *n)
{
    const struct ember_tensor *x = n->in[0], *y = n->out;
    return (struct ember_pool_geom){.n = x->shape[0],
                                    .c = x->shape[1],
                                    .h = x->shape[2],
                                    .w = x->shape[3],
                                    .k = n->arg[0],
                                    .stride = n->arg[1],
                                    .oh = y->shape[2],
                                    .ow = y->shape[3]};
}

/* y = the maximum (op EMBER_OP_MAX_POOL2D, each window's argmax kept for
 * the backward pass) or the mean (EMBER_OP_AVG_POOL2D) of each kernel x
 * kernel window */
static ember_tensor *pool2d(const char *name, enum ember_op op, ember_tensor *x, int kernel, int stride)
{
    ember_ctx *ctx = ember_op_begin(name, x, NULL, NULL);
    struct ember_pool_geom g;
    if (!ctx || !pool_geometry(ctx, name, x, kernel, stride, &g))
        return NULL;
    bool max = op == EMBER_OP_MAX_POOL2D;
    int64_t shape[4] = {g.n, g.c, g.oh, g.ow};
    struct ember_tensor *cx = ember_contiguous(x);
    struct ember_tensor *y = cx ? ember_op_out(ctx, 4, shape) : NULL;
    struct ember_tensor *argmax =
        y && max ? ember_tensor_alloc(ctx, EMBER_I32, 4, shape, EMBER_OWNER_TAPE) : NULL;
    if (!y || (max && !argmax))
        return NULL;
    ember_status st =
        max ? ctx->ops->max_pool2d_forward(ctx->dev, &g, ember_tensor_ptr(cx), ember_tensor_ptr(y),
                                           ember_tensor_ptr(argmax))
            : ctx->ops->avg_pool2d_forward(ctx->dev, &g, ember_tensor_ptr(cx), ember_tensor_ptr(y));
    if (st != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, NULL, NULL)) {
        struct ember_node *n = ember_record_saving(op, y, cx, NULL, NULL, argmax, NULL);
        if (!n)
            return NULL;
        n->arg[0] = kernel;
        n->arg[1] = stride;
    }
    return y;
}

ember_tensor *ember_max_pool2d(ember_tensor *x, int kernel, int stride)
{
    return pool2d("ember_max_pool2d", EMBER_OP_MAX_POOL2D, x, kernel, stride);
}

/* dx[p] = sum of dy over the windows whose maximum was at p */
ember_status ember_backward_max_pool2d(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *y = n->out, *argmax = n->saved[0];
    ember_ctx *ctx = x->ctx;
    struct ember_pool_geom g = recorded_geometry(n);
    struct ember_tensor *dx = ember_op_out_like(x);
    if (!dx || ctx->ops->max_pool2d_backward(ctx->dev, &g, ember_tensor_ptr(y->grad),
                                             ember_tensor_ptr(argmax), ember_tensor_ptr(dx)) != EMBER_OK)
        return ctx->status;
    return ember_grad_commit(x, dx);
}

ember_tensor *ember_avg_pool2d(ember_tensor *x, int kernel, int stride)
{
    return pool2d("ember_avg_pool2d", EMBER_OP_AVG_POOL2D, x, kernel, stride);
}

/* dx[p] = the sum of dy / kernel^2 over the windows holding p */
ember_status ember_backward_avg_pool2d(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *y = n->out;
    ember_ctx *ctx = x->ctx;
    struct ember_pool_geom g = recorded_geometry(n);
    struct ember_tensor *dy = ember_contiguous(y->grad);
    struct ember_tensor *dx = dy ? ember_op_out_like(x) : NULL;
    if (!dx ||
        ctx->ops->avg_pool2d_backward(ctx->dev, &g, ember_tensor_ptr(dy), ember_tensor_ptr(dx)) != EMBER_OK)
        return ctx->status;
    return ember_grad_commit(x, dx);
}

/* y (N, C) = the mean of each (H, W) plane of x (N, C, H, W): a reshape and
 * a mean, which the tape differentiates as they are */
ember_tensor *ember_global_avg_pool2d(ember_tensor *x)
{
    ember_ctx *ctx = ember_op_begin("ember_global_avg_pool2d", x, NULL, NULL);
    if (!ctx)
        return NULL;
    char sx[96];
    if (x->ndim != 4) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_global_avg_pool2d takes x (N, C, H, W); got x %s",
                   ember_shape_str(x, sx, sizeof sx));
        return NULL;
    }
    int64_t planes[3] = {x->shape[0], x->shape[1], x->shape[2] * x->shape[3]};
    return ember_mean(ember_reshape(x, 3, planes), -1, false);
}

/* An output side of a padded pooling, as PyTorch's: floor or ceil, and a
 * ceil_mode window that would start past the input and its padding dropped */
static int64_t pooled_side(int64_t in, int kernel, int stride, int padding, bool ceil_mode)
{
    int64_t span = in + 2 * (int64_t)padding - kernel;
    int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    return ceil_mode && (out - 1) * stride >= in + padding ? out - 1 : out;
}

/* x padded with `value` for a pooling: `padding` before H and W, and after
 * them what the last window reaches (nothing past what it reads), so the
 * unpadded pooling of the result has the padded one's outputs; x itself
 * when nothing is added */
static ember_tensor *pool_padded(ember_ctx *ctx, const char *name, ember_tensor *x, int kernel, int stride,
                                 int padding, bool ceil_mode, float value, int64_t *oh, int64_t *ow)
{
    char sx[96];
    if (x->ndim != 4 || kernel < 1 || stride < 1 || padding < 0 || padding > kernel / 2 ||
        x->shape[2] + 2 * (int64_t)padding < kernel || x->shape[3] + 2 * (int64_t)padding < kernel) {
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "%s takes x (N, C, H, W) with H and W and their padding at least the kernel, and padding at "
            "most half the kernel; got x %s, kernel %d, stride %d, padding %d",
            name, ember_shape_str(x, sx, sizeof sx), kernel, stride, padding);
        return NULL;
    }
    *oh = pooled_side(x->shape[2], kernel, stride, padding, ceil_mode);
    *ow = pooled_side(x->shape[3], kernel, stride, padding, ceil_mode);
    int64_t below = (*oh - 1) * stride + kernel - x->shape[2] - padding,
            right = (*ow - 1) * stride + kernel - x->shape[3] - padding;
    int64_t before[4] = {0, 0, padding, padding},
            after[4] = {0, 0, below > 0 ? below : 0, right > 0 ? right : 0};
    if (padding == 0 && after[2] == 0 && after[3] == 0)
        return x;
    return ember_pad(x, before, after, value);
}

ember_tensor *ember_max_pool2d_padded(ember_tensor *x, int kernel, int stride, int padding, bool ceil_mode)
{
    ember_ctx *ctx = ember_op_begin("ember_max_pool2d_padded", x, NULL, NULL);
    int64_t oh, ow;
    ember_tensor *padded = ctx ? pool_padded(ctx, "ember_max_pool2d_padded", x, kernel, stride, padding,
                                             ceil_mode, -INFINITY, &oh, &ow)
                               : NULL;
    return padded ? ember_max_pool2d(padded, kernel, stride) : NULL;
}

/* The mean of each window over what PyTorch's AvgPool2d counts: the kernel's
 * size less what overhangs the padding (ceil_mode), and less the padding
 * too unless count_include_pad. The zero-padded pooling divides by the
 * kernel's size: its windows that count fewer are multiplied by a
 * constant (1, 1, OH, OW) of kernel^2 / count. */
ember_tensor *ember_avg_pool2d_padded(ember_tensor *x, int kernel, int stride, int padding, bool ceil_mode,
                                      bool count_include_pad)
{
    ember_ctx *ctx = ember_op_begin("ember_avg_pool2d_padded", x, NULL, NULL);
    int64_t oh, ow;
    ember_tensor *padded = ctx ? pool_padded(ctx, "ember_avg_pool2d_padded", x, kernel, stride, padding,
                                             ceil_mode, 0.0f, &oh, &ow)
                               : NULL;
    ember_tensor *y = padded ? ember_avg_pool2d(padded, kernel, stride) : NULL;
    if (!y)
        return NULL;
    float *scale = malloc((size_t)(oh * ow) * sizeof *scale);
    if (!scale) {
        ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for an average pool's divisors");
        return NULL;
    }
    int64_t h = x->shape[2], w = x->shape[3], p = padding;
    bool uneven = false;
    for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t y0 = oy * stride - p, x0 = ox * stride - p;
            int64_t y1 = y0 + kernel < h + p ? y0 + kernel : h + p,
                    x1 = x0 + kernel < w + p ? x0 + kernel : w + p;
            int64_t count = (y1 - y0) * (x1 - x0);
            if (!count_include_pad) {
                y0 = y0 < 0 ? 0 : y0, x0 = x0 < 0 ? 0 : x0;
                y1 = y1 > h ? h : y1, x1 = x1 > w ? w : x1;
                count = (y1 - y0) * (x1 - x0);
            }
            scale[oy * ow + ox] = (float)(kernel * kernel) / (float)count;
            uneven = uneven || count != (int64_t)kernel * kernel;
        }
    int64_t shape[4] = {1, 1, oh, ow};
    ember_tensor *divisors = uneven ? ember_op_out(ctx, 4, shape) : NULL;
    ember_status st =
        divisors ? ember_tensor_write(divisors, scale, (size_t)(oh * ow) * sizeof *scale) : EMBER_OK;
    free(scale);
    if (!uneven)
        return y;
    return st == EMBER_OK && divisors ? ember_mul(y, divisors) : NULL;
}
