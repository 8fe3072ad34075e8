/* SPDX-License-Identifier: MIT */
/*
 * core/ops-softmax.c — softmax over the last axis with a causal mask, in
 * one primitive launch each way.
 *
 * x (..., Tq, Tk) holds scores of Tq queries against Tk keys, the queries
 * being the last Tq positions of the Tk (Tq == Tk in training; fewer when
 * a key/value cache holds the earlier ones). Query i sits at position
 * i + Tk - Tq and sees the keys up to it:
 *
 *   y[..., i, j] = e^(x_ij - m_i) / sum over j' <= i + Tk - Tq of e^(x_ij' - m_i)   for j <= i + Tk - Tq
 *                = 0                                                              after it
 *
 * with m_i the row's largest visible score, so no exponential overflows.
 * The backward pass is softmax's, dx = y (dy - sum_j dy y): the masked
 * places have y = 0 and so get no gradient, with no mask of their own.
 */
#include "ops-impl.h"

ember_tensor *ember_causal_softmax(ember_tensor *x)
{
    ember_ctx *ctx = ember_op_begin("ember_causal_softmax", x, NULL, NULL);
    if (!ctx)
        return NULL;
    if (x->ndim < 2 || x->shape[x->ndim - 2] > x->shape[x->ndim - 1]) {
        char sx[96];
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_causal_softmax takes scores (..., queries, keys) with no more queries than keys; got %s",
            ember_shape_str(x, sx, sizeof sx));
        return NULL;
    }
    struct ember_tensor *cx = ember_contiguous(x);
    struct ember_tensor *y = cx ? ember_op_out_like(x) : NULL;
    int64_t cols = x->shape[x->ndim - 1], rows = ember_tensor_numel(x) / (cols ? cols : 1);
    if (!y ||
        (rows * cols > 0 && ctx->ops->softmax_forward(ctx->dev, rows, cols, x->shape[x->ndim - 2],
                                                      ember_tensor_ptr(cx), ember_tensor_ptr(y)) != EMBER_OK))
        return NULL;
    if (ember_grad_needed(ctx, cx, NULL, NULL) && !ember_record(EMBER_OP_CAUSAL_SOFTMAX, y, cx, NULL, NULL))
        return NULL;
    return y;
}

/* dx = y (dy - sum over the row of dy y) */
ember_status ember_backward_causal_softmax(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *y = n->out;
    ember_ctx *ctx = x->ctx;
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    struct ember_tensor *dx = dy ? ember_op_out_like(x) : NULL;
    int64_t cols = x->shape[x->ndim - 1], rows = ember_tensor_numel(x) / (cols ? cols : 1);
    if (!dx || (rows * cols > 0 &&
                ctx->ops->softmax_backward(ctx->dev, rows, cols, ember_tensor_ptr(y), ember_tensor_ptr(dy),
                                           ember_tensor_ptr(dx)) != EMBER_OK))
        return ctx->status;
    return ember_grad_commit(x, dx);
}
