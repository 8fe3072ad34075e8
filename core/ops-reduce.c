/* SPDX-License-Identifier: MIT */
/* core/ops-reduce.c — sum, mean, softmax, log_softmax: forward and backward. */
#include "ops-impl.h"

/* x's shape with `axis` set to 1: the shape a reduction keeps */
static void kept_shape(const struct ember_tensor *x, int axis, int64_t *shape)
{
    for (int i = 0; i < x->ndim; i++)
        shape[i] = i == axis ? 1 : x->shape[i];
}

/* out (x's shape, axis kept as 1) = R over `axis` of x (contiguous) */
static struct ember_tensor *reduce_kept(enum ember_reduce_op op, const struct ember_tensor *x, int axis,
                                        float alpha)
{
    int64_t shape[EMBER_MAX_DIMS];
    kept_shape(x, axis, shape);
    struct ember_tensor *out = ember_op_out(x->ctx, x->ndim, shape);
    if (!out)
        return NULL;
    int64_t outer = ember_shape_numel(axis, x->shape),
            inner = ember_shape_numel(x->ndim - axis - 1, x->shape + axis + 1);
    if (ember_reduce_into(op, out, x, outer, x->shape[axis], inner, alpha, 0.0f) != EMBER_OK)
        return NULL;
    return out;
}

/* y = alpha * sum of x over axis (or all axes) */
static ember_tensor *sum_op(const char *name, ember_tensor *x, int axis, bool keepdim, bool mean)
{
    ember_ctx *ctx = ember_op_begin(name, x, NULL, NULL);
    if (!ctx)
        return NULL;
    bool all = axis == EMBER_ALL_AXES;
    int a = all ? 0 : ember_op_axis(ctx, name, axis, x->ndim);
    if (a < 0)
        return NULL;
    struct ember_tensor *src = ember_contiguous(x);
    if (!src)
        return NULL;

    int64_t numel = ember_shape_numel(src->ndim, src->shape);
    int64_t outer = 1, r = numel, inner = 1;
    int ndim = 0;
    int64_t shape[EMBER_MAX_DIMS];
    if (all) {
        if (keepdim)
            for (ndim = 0; ndim < src->ndim; ndim++)
                shape[ndim] = 1;
    } else {
        outer = ember_shape_numel(a, src->shape);
        r = src->shape[a];
        inner = ember_shape_numel(src->ndim - a - 1, src->shape + a + 1);
        for (int i = 0; i < src->ndim; i++)
            if (i != a || keepdim)
                shape[ndim++] = i == a ? 1 : src->shape[i];
    }
    float alpha = mean ? (r ? 1.0f / (float)r : 0.0f) : 1.0f;
    struct ember_tensor *y = ember_op_out(ctx, ndim, shape);
    if (!y || ember_reduce_into(EMBER_SUM, y, src, outer, r, inner, alpha, 0.0f) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, src, NULL, NULL)) {
        struct ember_node *n = ember_record(EMBER_OP_SUM, y, src, NULL, NULL);
        if (!n)
            return NULL;
        n->arg[0] = all ? -1 : a;
        n->farg = alpha;
    }
    return y;
}

ember_tensor *ember_sum(ember_tensor *x, int axis, bool keepdim)
{
    return sum_op("ember_sum", x, axis, keepdim, false);
}

ember_tensor *ember_mean(ember_tensor *x, int axis, bool keepdim)
{
    return sum_op("ember_mean", x, axis, keepdim, true);
}

/* dx = alpha * dy, repeated along the summed axes */
ember_status ember_backward_sum(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *dy = n->out->grad;
    int axis = (int)n->arg[0];
    int64_t shape[EMBER_MAX_DIMS], stride[EMBER_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = (axis < 0 || i == axis) ? 1 : x->shape[i];
    ember_contiguous_strides(x->ndim, shape, stride);
    struct ember_tensor *kept = ember_tensor_view(dy, x->ndim, shape, stride, dy->offset, EMBER_OWNER_TAPE);
    struct ember_tensor *dx = kept ? ember_op_out_like(x) : NULL;
    if (!dx || ember_unary_into(EMBER_SCALE, dx, kept, n->farg) != EMBER_OK)
        return x->ctx->status;
    return ember_grad_commit(x, dx);
}

/* softmax or log_softmax of x along axis, both from z = x - max x */
static ember_tensor *softmax_op(const char *name, ember_tensor *x, int axis, bool log)
{
    ember_ctx *ctx = ember_op_begin(name, x, NULL, NULL);
    if (!ctx)
        return NULL;
    int a = ember_op_axis(ctx, name, axis, x->ndim);
    struct ember_tensor *src = a < 0 ? NULL : ember_contiguous(x);
    if (!src)
        return NULL;
    struct ember_tensor *m = reduce_kept(EMBER_MAX, src, a, 1.0f);
    struct ember_tensor *z = m ? ember_binary_new(EMBER_SUB, src, m, 0.0f) : NULL;
    struct ember_tensor *e = z ? ember_unary_new(EMBER_EXP, z, 0.0f) : NULL;
    struct ember_tensor *s = e ? reduce_kept(EMBER_SUM, e, a, 1.0f) : NULL;
    if (!s)
        return NULL;
    struct ember_tensor *y;
    if (log) { /* y = z - ln s */
        if (ember_unary_into(EMBER_LOG, s, s, 0.0f) != EMBER_OK)
            return NULL;
        y = ember_binary_new(EMBER_SUB, z, s, 0.0f);
    } else { /* y = e / s */
        y = ember_binary_new(EMBER_DIV, e, s, 0.0f);
    }
    if (y && ember_grad_needed(ctx, src, NULL, NULL)) {
        struct ember_node *n =
            ember_record(log ? EMBER_OP_LOG_SOFTMAX : EMBER_OP_SOFTMAX, y, src, NULL, NULL);
        if (!n)
            return NULL;
        n->arg[0] = a;
    }
    return y;
}

ember_tensor *ember_softmax(ember_tensor *x, int axis) { return softmax_op("ember_softmax", x, axis, false); }

ember_tensor *ember_log_softmax(ember_tensor *x, int axis)
{
    return softmax_op("ember_log_softmax", x, axis, true);
}

/* dx = y * (dy - sum(dy * y)) */
ember_status ember_backward_softmax(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *y = n->out, *dy = n->out->grad;
    struct ember_tensor *t = ember_binary_new(EMBER_MUL, dy, y, 0.0f);
    struct ember_tensor *s = t ? reduce_kept(EMBER_SUM, t, (int)n->arg[0], 1.0f) : NULL;
    struct ember_tensor *u = s ? ember_binary_new(EMBER_SUB, dy, s, 0.0f) : NULL;
    struct ember_tensor *dx = u ? ember_binary_new(EMBER_MUL, y, u, 0.0f) : NULL;
    return dx ? ember_grad_commit(x, dx) : x->ctx->status;
}

/* dx = dy - e^y * sum(dy) */
ember_status ember_backward_log_softmax(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *y = n->out, *dy = n->out->grad;
    struct ember_tensor *s = reduce_kept(EMBER_SUM, dy, (int)n->arg[0], 1.0f);
    struct ember_tensor *p = s ? ember_unary_new(EMBER_EXP, y, 0.0f) : NULL;
    struct ember_tensor *t = p ? ember_binary_new(EMBER_MUL, p, s, 0.0f) : NULL;
    struct ember_tensor *dx = t ? ember_binary_new(EMBER_SUB, dy, t, 0.0f) : NULL;
    return dx ? ember_grad_commit(x, dx) : x->ctx->status;
}
