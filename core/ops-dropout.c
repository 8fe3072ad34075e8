/* SPDX-License-Identifier: MIT */
/*
 * core/ops-dropout.c — dropout: in training, y = x * mask with
 * mask[i] = 1 / (1 - p) with probability 1 - p and 0 otherwise, drawn by
 * the dropout_mask primitive from a seed (the same mask on every backend
 * for the same seed); otherwise y = x. The backward pass is dx = dy * mask.
 */
#include "ops-impl.h"

ember_tensor *ember_dropout(ember_tensor *x, float p, bool training, uint64_t seed)
{
    ember_ctx *ctx = ember_op_begin("ember_dropout", x, NULL, NULL);
    if (!ctx)
        return NULL;
    if (!(p >= 0.0f && p <= 1.0f)) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_dropout: p = %g is not a probability", (double)p);
        return NULL;
    }
    if (!training || p == 0.0f)
        return x; /* as PyTorch's: the input itself */
    struct ember_tensor *mask = ember_op_out_like(x);
    if (!mask)
        return NULL;
    ember_status st = p >= 1.0f ? ember_tensor_fill(mask, 0.0f) /* everything dropped */
                                : ctx->ops->dropout_mask(ctx->dev, ember_tensor_ptr(mask),
                                                         (size_t)ember_tensor_numel(mask), p, seed);
    struct ember_tensor *y = st == EMBER_OK ? ember_binary_new(EMBER_MUL, x, mask, 0.0f) : NULL;
    if (y && ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *n = ember_record_saving(EMBER_OP_DROPOUT, y, x, NULL, NULL, mask, NULL);
        if (!n)
            return NULL;
    }
    return y;
}

/* dx = dy * mask */
ember_status ember_backward_dropout(struct ember_node *n)
{
    struct ember_tensor *dx = ember_binary_new(EMBER_MUL, n->out->grad, n->saved[0], 0.0f);
    return dx ? ember_grad_commit(n->in[0], dx) : n->out->ctx->status;
}
