/* SPDX-License-Identifier: MIT */
/*
 * core/ops-norm.c — batch normalization, forward and backward, from the
 * elementwise and reduce primitives (no primitive of its own); and layer
 * normalization, through its fused primitives (at the end).
 *
 * x is (N, C) or (N, C, H, W); each channel c is normalized over the batch
 * and the positions, m = N * H * W values. With xhat = (x - mean) * invstd,
 * invstd = 1 / sqrt(var + eps):
 *
 *   training    mean, var over the batch (var biased); y = xhat * weight + bias;
 *               running_mean = (1 - momentum) running_mean + momentum mean,
 *               running_var = (1 - momentum) running_var + momentum var m / (m - 1)
 *   evaluation  the same y from running_mean and running_var, which stay
 *
 * as PyTorch's BatchNorm1d and BatchNorm2d compute it. The backward pass,
 * with dbias = sum dy and dweight = sum dy xhat over each channel:
 *
 *   training    dx = weight invstd (dy - dbias / m - xhat dweight / m)
 *   evaluation  dx = weight invstd dy
 *
 * Per-channel values (C) take part in the elementwise primitives as views
 * of x's rank with 1 everywhere but C, (1, C, 1, 1), which broadcast over x.
 */
#include "ops-impl.h"

/* A per-channel tensor t (C, contiguous) seen as (1, C) or (1, C, 1, 1) for x. */
static struct ember_tensor *channel_view(const struct ember_tensor *x, struct ember_tensor *t)
{
    int64_t shape[EMBER_MAX_DIMS], stride[EMBER_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = d == 1 ? x->shape[1] : 1;
        stride[d] = d == 1 ? 1 : x->shape[1];
    }
    return ember_tensor_view(t, x->ndim, shape, stride, t->offset, EMBER_OWNER_TAPE);
}

/* A new per-channel tensor (C) and its view for x. */
static struct ember_tensor *channel_new(const struct ember_tensor *x, struct ember_tensor **view)
{
    int64_t c[1] = {x->shape[1]};
    struct ember_tensor *t = ember_op_out(x->ctx, 1, c);
    *view = t ? channel_view(x, t) : NULL;
    return *view ? t : NULL;
}

/* out (C) = alpha * the sum of t (contiguous, x's shape) over all but axis
 * 1: over each plane, then over the batch */
static ember_status channel_sum(const struct ember_tensor *t, struct ember_tensor *out, float alpha)
{
    int64_t n = t->shape[0], c = t->shape[1], s = ember_tensor_numel(t) / (n * c);
    if (s == 1)
        return ember_reduce_into(EMBER_SUM, out, t, 1, n, c, alpha, 0.0f);
    int64_t planes[1] = {n * c};
    struct ember_tensor *per_plane = ember_op_out(t->ctx, 1, planes);
    if (!per_plane || ember_reduce_into(EMBER_SUM, per_plane, t, n * c, s, 1, 1.0f, 0.0f) != EMBER_OK)
        return t->ctx->status;
    return ember_reduce_into(EMBER_SUM, out, per_plane, 1, n, c, alpha, 0.0f);
}

/* a = keep * a + take * b, in place: a running statistic */
static ember_status blend(struct ember_tensor *a, const struct ember_tensor *b, float keep, float take)
{
    struct ember_tensor *part = ember_unary_new(EMBER_SCALE, b, take);
    if (!part || ember_unary_into(EMBER_SCALE, a, a, keep) != EMBER_OK ||
        ember_binary_into(EMBER_ADD, a, a, part, 0.0f) != EMBER_OK)
        return a->ctx->status;
    return EMBER_OK;
}

static bool batch_norm_check(ember_ctx *ctx, const struct ember_tensor *x,
                             struct ember_tensor *const *per_channel, bool training)
{
    static const char *const names[4] = {"weight", "bias", "running_mean", "running_var"};
    char sx[96];
    if (x->ndim != 2 && x->ndim != 4) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_batch_norm takes x (N, C) or (N, C, H, W); got x %s",
                   ember_shape_str(x, sx, sizeof sx));
        return false;
    }
    for (int i = 0; i < 4; i++) {
        const struct ember_tensor *t = per_channel[i];
        if (!t && i < 2)
            continue; /* no affine part */
        if (!t || t->ctx != ctx || t->dtype != EMBER_F32 || t->ndim != 1 || t->shape[0] != x->shape[1] ||
            !ember_tensor_is_contiguous(t)) {
            ember_fail(ctx, EMBER_ERR_ARG,
                       "ember_batch_norm: %s must be a contiguous F32 tensor (%lld), one "
                       "value for each channel of x %s",
                       names[i], (long long)x->shape[1], ember_shape_str(x, sx, sizeof sx));
            return false;
        }
    }
    if (training && ember_tensor_numel(x) <= x->shape[1]) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_batch_norm in training needs more than one value per channel; "
                   "x is %s",
                   ember_shape_str(x, sx, sizeof sx));
        return false;
    }
    return true;
}

ember_tensor *ember_batch_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                               ember_tensor *running_mean, ember_tensor *running_var, bool training,
                               float momentum, float eps)
{
    ember_ctx *ctx = ember_op_begin("ember_batch_norm", x, weight, bias);
    struct ember_tensor *per_channel[4] = {weight, bias, running_mean, running_var};
    if (!ctx || !batch_norm_check(ctx, x, per_channel, training))
        return NULL;
    int64_t m = ember_tensor_numel(x) / x->shape[1];
    struct ember_tensor *cx = ember_contiguous(x), *mean_v, *invstd_v, *var_v;
    struct ember_tensor *mean = cx ? channel_new(x, &mean_v) : NULL;
    struct ember_tensor *invstd = mean ? channel_new(x, &invstd_v) : NULL;
    struct ember_tensor *xhat = invstd ? ember_op_out_like(x) : NULL;
    struct ember_tensor *rm_v = xhat ? channel_view(x, running_mean) : NULL;
    if (!rm_v)
        return NULL;
    if (training) {
        struct ember_tensor *var = channel_new(x, &var_v), *square;
        if (!var || channel_sum(cx, mean, 1.0f / (float)m) != EMBER_OK ||
            ember_binary_into(EMBER_SUB, xhat, cx, mean_v, 0.0f) != EMBER_OK ||
            !(square = ember_binary_new(EMBER_MUL, xhat, xhat, 0.0f)) ||
            channel_sum(square, var, 1.0f / (float)m) != EMBER_OK ||
            ember_unary_into(EMBER_RSQRT, invstd, var, eps) != EMBER_OK ||
            ember_binary_into(EMBER_MUL, xhat, xhat, invstd_v, 0.0f) != EMBER_OK ||
            blend(running_mean, mean, 1.0f - momentum, momentum) != EMBER_OK ||
            blend(running_var, var, 1.0f - momentum, momentum * (float)m / (float)(m - 1)) != EMBER_OK)
            return NULL;
    } else if (ember_unary_into(EMBER_RSQRT, invstd, running_var, eps) != EMBER_OK ||
               ember_binary_into(EMBER_SUB, xhat, cx, rm_v, 0.0f) != EMBER_OK ||
               ember_binary_into(EMBER_MUL, xhat, xhat, invstd_v, 0.0f) != EMBER_OK) {
        return NULL;
    }
    /* y = xhat * weight + bias; xhat itself is kept for the backward pass */
    struct ember_tensor *weight_v = weight ? channel_view(x, weight) : NULL;
    struct ember_tensor *bias_v = bias ? channel_view(x, bias) : NULL;
    struct ember_tensor *y = ember_op_out_like(x);
    if (!y || (weight && !weight_v) || (bias && !bias_v))
        return NULL;
    ember_status st = weight ? ember_binary_into(EMBER_MUL, y, xhat, weight_v, 0.0f)
                             : ember_unary_into(EMBER_COPY, y, xhat, 0.0f);
    if (st == EMBER_OK && bias)
        st = ember_binary_into(EMBER_ADD, y, y, bias_v, 0.0f);
    if (st != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, weight, bias)) {
        struct ember_node *n = ember_record(EMBER_OP_BATCH_NORM, y, cx, weight, bias);
        if (!n)
            return NULL;
        n->saved[0] = xhat;
        n->saved[1] = invstd;
        n->arg[0] = training;
        n->arg[1] = m;
    }
    return y;
}

ember_status ember_backward_batch_norm(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *weight = n->in[1], *bias = n->in[2];
    struct ember_tensor *xhat = n->saved[0], *invstd = n->saved[1], *dbias_v, *dweight_v;
    ember_ctx *ctx = x->ctx;
    bool training = n->arg[0];
    float m = (float)n->arg[1];
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    struct ember_tensor *dbias = dy ? channel_new(x, &dbias_v) : NULL;
    struct ember_tensor *dweight = dbias ? channel_new(x, &dweight_v) : NULL;
    struct ember_tensor *dy_xhat = dweight ? ember_binary_new(EMBER_MUL, dy, xhat, 0.0f) : NULL;
    if (!dy_xhat || channel_sum(dy, dbias, 1.0f) != EMBER_OK ||
        channel_sum(dy_xhat, dweight, 1.0f) != EMBER_OK)
        return ctx->status;
    if (bias && bias->requires_grad && ember_grad_commit(bias, dbias) != EMBER_OK)
        return ctx->status;
    if (weight && weight->requires_grad && ember_grad_commit(weight, dweight) != EMBER_OK)
        return ctx->status;
    if (!x->requires_grad)
        return EMBER_OK;
    /* scale = weight * invstd, per channel */
    struct ember_tensor *scale = weight ? ember_binary_new(EMBER_MUL, invstd, weight, 0.0f) : invstd;
    struct ember_tensor *scale_v = scale ? channel_view(x, scale) : NULL;
    struct ember_tensor *dx = scale_v ? ember_op_out_like(x) : NULL;
    if (!dx)
        return ctx->status;
    if (training) { /* (dy - dbias / m - xhat dweight / m) scale */
        struct ember_tensor *k1 = ember_unary_new(EMBER_SCALE, dbias_v, 1.0f / m);
        struct ember_tensor *k2 = k1 ? ember_unary_new(EMBER_SCALE, dweight_v, 1.0f / m) : NULL;
        if (!k2 || ember_binary_into(EMBER_MUL, dx, xhat, k2, 0.0f) != EMBER_OK ||
            ember_binary_into(EMBER_SUB, dx, dy, dx, 0.0f) != EMBER_OK ||
            ember_binary_into(EMBER_SUB, dx, dx, k1, 0.0f) != EMBER_OK ||
            ember_binary_into(EMBER_MUL, dx, dx, scale_v, 0.0f) != EMBER_OK)
            return ctx->status;
    } else if (ember_binary_into(EMBER_MUL, dx, dy, scale_v, 0.0f) != EMBER_OK) {
        return ctx->status;
    }
    return ember_grad_commit(x, dx);
}

/* ------------------------------------------------------------ layer norm
 *
 * Each row of x (..., C) normalised over its C values, as PyTorch's
 * LayerNorm(C): y = (x - mean) * rstd * weight + bias, rstd = 1 / sqrt(var
 * + eps), var biased. One primitive launch each way; the backward pass of
 * weight and bias is a sum over the rows:
 *
 *   dx = rstd (g - mean g - xhat mean(g xhat)), g = dy weight     (the primitive)
 *   dweight = sum over rows of dy xhat,  dbias = sum over rows of dy
 */

/* a (C) tensor of `value`, standing in for a missing weight or bias */
static struct ember_tensor *constant_row(ember_ctx *ctx, int64_t c, float value)
{
    struct ember_tensor *t = ember_op_out(ctx, 1, &c);
    return t && ember_tensor_fill(t, value) == EMBER_OK ? t : NULL;
}

ember_tensor *ember_layer_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias, float eps)
{
    ember_ctx *ctx = ember_op_begin("ember_layer_norm", x, weight, bias);
    if (!ctx)
        return NULL;
    int64_t c = x->ndim ? x->shape[x->ndim - 1] : 0;
    char sx[96];
    for (int i = 0; i < 2; i++) {
        struct ember_tensor *t = i ? bias : weight;
        if (t && (t->ndim != 1 || t->shape[0] != c)) {
            ember_fail(ctx, EMBER_ERR_ARG,
                       "ember_layer_norm: %s must have one value for each of the %lld of x %s's "
                       "last axis",
                       i ? "bias" : "weight", (long long)c, ember_shape_str(x, sx, sizeof sx));
            return NULL;
        }
    }
    if (c == 0 || !(eps >= 0.0f)) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_layer_norm normalises x's last axis with eps >= 0; got x %s, eps %g",
                   ember_shape_str(x, sx, sizeof sx), eps);
        return NULL;
    }
    struct ember_tensor *cx = ember_contiguous(x);
    struct ember_tensor *w = cx ? (weight ? ember_contiguous(weight) : constant_row(ctx, c, 1.0f)) : NULL;
    struct ember_tensor *b = w ? (bias ? ember_contiguous(bias) : constant_row(ctx, c, 0.0f)) : NULL;
    int64_t rows = ember_tensor_numel(x) / c;
    struct ember_tensor *y = b ? ember_op_out_like(x) : NULL, *xhat = y ? ember_op_out_like(x) : NULL;
    struct ember_tensor *rstd = xhat ? ember_op_out(ctx, 1, &rows) : NULL;
    if (!rstd || ctx->ops->layer_norm_forward(ctx->dev, rows, c, eps, ember_tensor_ptr(cx),
                                              ember_tensor_ptr(w), ember_tensor_ptr(b), ember_tensor_ptr(y),
                                              ember_tensor_ptr(xhat), ember_tensor_ptr(rstd)) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, weight, bias)) {
        struct ember_node *n = ember_record(EMBER_OP_LAYER_NORM, y, cx, w, b);
        if (!n)
            return NULL;
        n->saved[0] = xhat;
        n->saved[1] = rstd;
    }
    return y;
}

ember_status ember_backward_layer_norm(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2], *xhat = n->saved[0], *rstd = n->saved[1];
    ember_ctx *ctx = x->ctx;
    int64_t c = w->shape[0], rows = ember_tensor_numel(x) / c;
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    if (!dy)
        return ctx->status;
    float beta;
    if (b->requires_grad) {
        struct ember_tensor *db = ember_grad_target(b, &beta);
        if (!db || ember_reduce_into(EMBER_SUM, db, dy, 1, rows, c, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(b, db) != EMBER_OK)
            return ctx->status;
    }
    if (w->requires_grad) {
        struct ember_tensor *dy_xhat = ember_binary_new(EMBER_MUL, dy, xhat, 0.0f);
        struct ember_tensor *dw = dy_xhat ? ember_grad_target(w, &beta) : NULL;
        if (!dw || ember_reduce_into(EMBER_SUM, dw, dy_xhat, 1, rows, c, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(w, dw) != EMBER_OK)
            return ctx->status;
    }
    if (!x->requires_grad)
        return EMBER_OK;
    struct ember_tensor *dx = ember_op_out_like(x);
    if (!dx || ctx->ops->layer_norm_backward(ctx->dev, rows, c, ember_tensor_ptr(dy), ember_tensor_ptr(xhat),
                                             ember_tensor_ptr(w), ember_tensor_ptr(rstd),
                                             ember_tensor_ptr(dx)) != EMBER_OK)
        return ctx->status;
    return ember_grad_commit(x, dx);
}
