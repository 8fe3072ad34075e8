/* SPDX-License-Identifier: MIT */
/*
 * core/ops-norm.c — batch normalization, layer normalization and RMS
 * normalization, forward and backward, the first two through their own
 * primitives: batch norm's statistics
 * (by planes, then channels: struct ember_batch_norm in backends/backend.h),
 * its elementwise pass, and its backward pass, three launches where the
 * composition of elementwise and reduce primitives took about twenty;
 * ember_batch_norm_relu adds the ReLU that follows most batch norms to the
 * same passes (the model runs a batch norm layer and a relu layer after it
 * so). ember_batch_norm_fold turns a batch norm in evaluation into the
 * weights of the convolution before it, from public ops.
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
 */
#include "ops-impl.h"

/* a (C) tensor of `value`, standing in for a missing weight or bias */
static struct ember_tensor *constant_row(ember_ctx *ctx, int64_t c, float value)
{
    struct ember_tensor *t = ember_op_out(ctx, 1, &c);
    return t && ember_tensor_fill(t, value) == EMBER_OK ? t : NULL;
}

/* a new per-channel tensor (C) */
static struct ember_tensor *channel_new(const struct ember_tensor *x)
{
    int64_t c[1] = {x->shape[1]};
    return ember_op_out(x->ctx, 1, c);
}

/* the primitives' scratch for the planes' partial sums (backends/backend.h) */
static struct ember_tensor *plane_work(const struct ember_tensor *x)
{
    int64_t n[1] = {2 * x->shape[0] * x->shape[1]};
    return ember_op_out(x->ctx, 1, n);
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

/* x's shape as the primitives see it: (n, c, s) */
static struct ember_batch_norm batch_norm_shape(const struct ember_tensor *x, bool training, bool relu,
                                                float momentum, float eps)
{
    int64_t n = x->shape[0], c = x->shape[1];
    return (struct ember_batch_norm){.n = n,
                                     .c = c,
                                     .s = ember_tensor_numel(x) / (n * c),
                                     .eps = eps,
                                     .momentum = momentum,
                                     .training = training,
                                     .relu = relu};
}

/* ember_batch_norm, and with `relu` the ReLU after it in the same passes */
static ember_tensor *batch_norm(const char *name, ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                ember_tensor *running_mean, ember_tensor *running_var, bool training,
                                float momentum, float eps, bool relu)
{
    ember_ctx *ctx = ember_op_begin(name, x, weight, bias);
    struct ember_tensor *per_channel[4] = {weight, bias, running_mean, running_var};
    if (!ctx || !batch_norm_check(ctx, x, per_channel, training))
        return NULL;
    struct ember_batch_norm b = batch_norm_shape(x, training, relu, momentum, eps);
    struct ember_tensor *cx = ember_contiguous(x);
    struct ember_tensor *w = cx ? (weight ? weight : constant_row(ctx, b.c, 1.0f)) : NULL;
    struct ember_tensor *bb = w ? (bias ? bias : constant_row(ctx, b.c, 0.0f)) : NULL;
    struct ember_tensor *invstd = bb ? channel_new(x) : NULL, *mean = running_mean;
    if (!invstd)
        return NULL;
    if (training) { /* the batch's statistics; the running ones blended in place */
        struct ember_tensor *work = plane_work(x);
        running_mean->storage->writes++;
        running_var->storage->writes++;
        mean = work ? channel_new(x) : NULL;
        if (!mean || ctx->ops->batch_norm_stats(ctx->dev, &b, ember_tensor_ptr(cx), ember_tensor_ptr(work),
                                                ember_tensor_ptr(mean), ember_tensor_ptr(invstd),
                                                ember_tensor_ptr(running_mean),
                                                ember_tensor_ptr(running_var)) != EMBER_OK)
            return NULL;
    } else if (ember_unary_into(EMBER_RSQRT, invstd, running_var, eps) != EMBER_OK) {
        return NULL;
    }
    /* y = xhat * weight + bias; xhat itself is kept for the backward pass */
    struct ember_tensor *xhat = ember_op_out_like(x), *y = xhat ? ember_op_out_like(x) : NULL;
    if (!y ||
        ctx->ops->batch_norm_forward(ctx->dev, &b, ember_tensor_ptr(cx), ember_tensor_ptr(mean),
                                     ember_tensor_ptr(invstd), ember_tensor_ptr(w), ember_tensor_ptr(bb),
                                     ember_tensor_ptr(xhat), ember_tensor_ptr(y)) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, weight, bias)) {
        struct ember_node *n = ember_record_saving(EMBER_OP_BATCH_NORM, y, cx, weight, bias, xhat, invstd);
        if (!n)
            return NULL;
        n->arg[0] = training;
        n->arg[1] = relu;
    }
    return y;
}

ember_tensor *ember_batch_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                               ember_tensor *running_mean, ember_tensor *running_var, bool training,
                               float momentum, float eps)
{
    return batch_norm("ember_batch_norm", x, weight, bias, running_mean, running_var, training, momentum, eps,
                      false);
}

ember_tensor *ember_batch_norm_relu(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                    ember_tensor *running_mean, ember_tensor *running_var, bool training,
                                    float momentum, float eps)
{
    return batch_norm("ember_batch_norm_relu", x, weight, bias, running_mean, running_var, training, momentum,
                      eps, true);
}

/* Batch normalization in evaluation folded into the layer before it
 * (include/ember.h): w' = w * s, b' = (b - running_mean) * s + bias,
 * s = weight * invstd. invstd comes from the primitive as in evaluation
 * above (the running statistics are constants, never on the tape); the
 * rest is public ops, which the tape records. */
ember_status ember_batch_norm_fold(ember_tensor *w, ember_tensor *b, ember_tensor *weight, ember_tensor *bias,
                                   ember_tensor *running_mean, ember_tensor *running_var, float eps,
                                   ember_tensor **folded_w, ember_tensor **folded_b)
{
    if (!folded_w || !folded_b)
        return w ? ember_fail(w->ctx, EMBER_ERR_ARG,
                              "ember_batch_norm_fold: folded_w and folded_b are needed")
                 : EMBER_ERR_ARG;
    *folded_w = *folded_b = NULL;
    ember_ctx *ctx = ember_op_begin("ember_batch_norm_fold", w, b, running_var);
    if (!ctx)
        return w ? ember_last_status(w->ctx) : EMBER_ERR_ARG;
    char sw[96];
    if (w->ndim < 2)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "ember_batch_norm_fold takes a layer's weight (OC, ...), a filter or a row per "
                          "output channel; got w %s",
                          ember_shape_str(w, sw, sizeof sw));
    static const char *const names[5] = {"b", "weight", "bias", "running_mean", "running_var"};
    struct ember_tensor *per_channel[5] = {b, weight, bias, running_mean, running_var};
    for (int i = 0; i < 5; i++) {
        const struct ember_tensor *t = per_channel[i];
        if (!t && i < 3)
            continue; /* no bias, no affine part */
        if (!t || t->ctx != ctx || t->dtype != EMBER_F32 || t->ndim != 1 || t->shape[0] != w->shape[0])
            return ember_fail(ctx, EMBER_ERR_ARG,
                              "ember_batch_norm_fold: %s must be an F32 tensor (%lld), one value for each "
                              "output channel of w %s",
                              names[i], (long long)w->shape[0], ember_shape_str(w, sw, sizeof sw));
    }
    struct ember_tensor *s = ember_op_out(ctx, 1, w->shape);
    if (!s || ember_unary_into(EMBER_RSQRT, s, running_var, eps) != EMBER_OK)
        return ember_last_status(ctx);
    if (weight && !(s = ember_mul(weight, s)))
        return ember_last_status(ctx);
    /* s as (OC, 1, ...) against w's filters */
    int64_t column[EMBER_MAX_DIMS] = {w->shape[0]};
    for (int d = 1; d < w->ndim; d++)
        column[d] = 1;
    struct ember_tensor *fw = ember_mul(w, ember_reshape(s, w->ndim, column));
    struct ember_tensor *centred = b ? ember_sub(b, running_mean) : ember_scale(running_mean, -1.0f);
    struct ember_tensor *fb = fw && centred ? ember_mul(centred, s) : NULL;
    if (fb && bias)
        fb = ember_add(fb, bias);
    if (!fb)
        return ember_last_status(ctx);
    *folded_w = fw;
    *folded_b = fb;
    return EMBER_OK;
}

ember_status ember_backward_batch_norm(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *weight = n->in[1], *bias = n->in[2];
    struct ember_tensor *xhat = n->saved[0], *invstd = n->saved[1];
    ember_ctx *ctx = x->ctx;
    struct ember_batch_norm b = batch_norm_shape(x, n->arg[0], n->arg[1], 0.0f, 0.0f);
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    struct ember_tensor *w = dy ? (weight ? weight : constant_row(ctx, b.c, 1.0f)) : NULL;
    struct ember_tensor *bb = w ? (bias ? bias : constant_row(ctx, b.c, 0.0f)) : NULL;
    struct ember_tensor *work = bb ? plane_work(x) : NULL;
    struct ember_tensor *dbias = work ? channel_new(x) : NULL, *dweight = dbias ? channel_new(x) : NULL;
    struct ember_tensor *dx = dweight ? ember_op_out_like(x) : NULL;
    if (!dx || ctx->ops->batch_norm_backward(
                   ctx->dev, &b, ember_tensor_ptr(dy), ember_tensor_ptr(xhat), ember_tensor_ptr(w),
                   ember_tensor_ptr(bb), ember_tensor_ptr(invstd), ember_tensor_ptr(work),
                   ember_tensor_ptr(dweight), ember_tensor_ptr(dbias), ember_tensor_ptr(dx)) != EMBER_OK)
        return ctx->status;
    if (bias && bias->requires_grad && ember_grad_commit(bias, dbias) != EMBER_OK)
        return ctx->status;
    if (weight && weight->requires_grad && ember_grad_commit(weight, dweight) != EMBER_OK)
        return ctx->status;
    return x->requires_grad ? ember_grad_commit(x, dx) : EMBER_OK;
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

/* The gradient of a per-feature weight w (C) that scaled xhat (rows, C):
 * the sum over the rows of dy xhat, committed to w (layer and RMS norm) */
static ember_status row_weight_grad(struct ember_tensor *w, struct ember_tensor *dy,
                                    struct ember_tensor *xhat, int64_t rows, int64_t c)
{
    float beta;
    struct ember_tensor *dy_xhat = ember_binary_new(EMBER_MUL, dy, xhat, 0.0f);
    struct ember_tensor *dw = dy_xhat ? ember_grad_target(w, &beta) : NULL;
    if (!dw || ember_reduce_into(EMBER_SUM, dw, dy_xhat, 1, rows, c, 1.0f, beta) != EMBER_OK)
        return w->ctx->status;
    return ember_grad_commit(w, dw);
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
        struct ember_node *n = ember_record_saving(EMBER_OP_LAYER_NORM, y, cx, w, b, xhat, rstd);
        if (!n)
            return NULL;
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
    if (w->requires_grad && row_weight_grad(w, dy, xhat, rows, c) != EMBER_OK)
        return ctx->status;
    if (!x->requires_grad)
        return EMBER_OK;
    struct ember_tensor *dx = ember_op_out_like(x);
    if (!dx || ctx->ops->layer_norm_backward(ctx->dev, rows, c, ember_tensor_ptr(dy), ember_tensor_ptr(xhat),
                                             ember_tensor_ptr(w), ember_tensor_ptr(rstd),
                                             ember_tensor_ptr(dx)) != EMBER_OK)
        return ctx->status;
    return ember_grad_commit(x, dx);
}

/* ------------------------------------------------------------ RMS norm
 *
 * Each row of x (..., C) divided by its root mean square, as Llama's
 * RMSNorm: y = xhat * weight, xhat = x * rrms, rrms = 1 / sqrt(mean(x^2) +
 * eps). The forward pass is one primitive, rms_norm_forward: composed of
 * the elementwise and reduce primitives it was five launches, and a
 * language model's token meets it twice a block (on an H200, 2026-12-04,
 * generation was launch-bound, 980 kernels a token, 305 of them the norms':
 * docs/gpu-validation.md). Only rrms is kept; the backward pass, composed
 * (six launches, a step's small share), makes xhat again from x and rrms.
 * One node on the tape with the short backward formula, rather than the
 * eight nodes and their intermediate tensors that composing it from public
 * ops records:
 *
 *   dx = rrms (g - xhat mean(g xhat)), g = dy weight
 *   dweight = sum over rows of dy xhat
 */

/* x's shape with its last axis 1: one value per row */
static struct ember_tensor *per_row(const struct ember_tensor *x)
{
    int64_t shape[EMBER_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = i + 1 < x->ndim ? x->shape[i] : 1;
    return ember_op_out(x->ctx, x->ndim, shape);
}

ember_tensor *ember_rms_norm(ember_tensor *x, ember_tensor *weight, float eps)
{
    ember_ctx *ctx = ember_op_begin("ember_rms_norm", x, weight, NULL);
    if (!ctx)
        return NULL;
    int64_t c = x->ndim ? x->shape[x->ndim - 1] : 0;
    char sx[96];
    if (weight && (weight->ndim != 1 || weight->shape[0] != c)) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_rms_norm: weight must have one value for each of the %lld of x %s's last axis",
                   (long long)c, ember_shape_str(x, sx, sizeof sx));
        return NULL;
    }
    if (c == 0 || !(eps >= 0.0f)) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_rms_norm normalises x's last axis with eps >= 0; got x %s, eps %g",
                   ember_shape_str(x, sx, sizeof sx), eps);
        return NULL;
    }
    int64_t rows = ember_tensor_numel(x) / c;
    struct ember_tensor *cx = ember_contiguous(x);
    struct ember_tensor *w = cx && weight ? ember_contiguous(weight) : NULL;
    struct ember_tensor *rrms = cx && (w || !weight) ? per_row(x) : NULL;
    struct ember_tensor *y = rrms ? ember_op_out_like(x) : NULL;
    if (!y ||
        ctx->ops->rms_norm_forward(ctx->dev, rows, c, eps, ember_tensor_ptr(cx), ember_tensor_ptr(w ? w : cx),
                                   w != NULL, ember_tensor_ptr(y), ember_tensor_ptr(rrms)) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, weight, NULL)) {
        struct ember_node *n = ember_record_saving(EMBER_OP_RMS_NORM, y, cx, weight, NULL, rrms, NULL);
        if (!n)
            return NULL;
    }
    return y;
}

ember_status ember_backward_rms_norm(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *rrms = n->saved[0];
    ember_ctx *ctx = x->ctx;
    int64_t c = x->shape[x->ndim - 1], rows = ember_tensor_numel(x) / c;
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    struct ember_tensor *xhat = dy ? ember_binary_new(EMBER_MUL, x, rrms, 0.0f) : NULL;
    if (!xhat)
        return ctx->status;
    if (w && w->requires_grad && row_weight_grad(w, dy, xhat, rows, c) != EMBER_OK)
        return ctx->status;
    if (!x->requires_grad)
        return EMBER_OK;
    struct ember_tensor *g = w ? ember_binary_new(EMBER_MUL, dy, w, 0.0f) : dy;
    struct ember_tensor *g_xhat = g ? ember_binary_new(EMBER_MUL, g, xhat, 0.0f) : NULL;
    struct ember_tensor *mean = g_xhat ? per_row(x) : NULL; /* mean(g xhat) over each row */
    if (!mean || ember_reduce_into(EMBER_SUM, mean, g_xhat, rows, c, 1, 1.0f / (float)c, 0.0f) != EMBER_OK)
        return ctx->status;
    struct ember_tensor *along = ember_binary_new(EMBER_MUL, xhat, mean, 0.0f);
    struct ember_tensor *rest = along ? ember_binary_new(EMBER_SUB, g, along, 0.0f) : NULL;
    struct ember_tensor *dx = rest ? ember_binary_new(EMBER_MUL, rest, rrms, 0.0f) : NULL;
    return dx ? ember_grad_commit(x, dx) : ctx->status;
}
