/* SPDX-License-Identifier: MIT */
/*
 * core/ops-recompute.c — activations recomputed in the backward pass
 * instead of kept (gradient checkpointing, as PyTorch's
 * torch.utils.checkpoint): the memory of a deep network's step for one
 * more forward pass of the parts wrapped.
 *
 * Forward, fn runs with grad off, so nothing it makes is recorded or kept
 * but its output; one node is recorded, holding fn and its input. When
 * the backward pass reaches that node it runs fn again on a copy of the
 * input with grad on, walks the few nodes that records from the output's
 * gradient back (its parameters' gradients add up as any other's), hands
 * the copy's gradient to the input, and drops what it made.
 *
 * fn must compute the same thing both times: what it draws at random
 * (dropout) it must draw from a seed it is given, not from a running
 * generator. A grad-ready callback (ember_set_grad_ready, data-parallel
 * training) hears of no parameter used only inside fn.
 */
#include <stdint.h>

#include "ops-impl.h"

ember_tensor *ember_recompute(ember_tensor *x, ember_recompute_fn fn, void *user)
{
    if (!x)
        return NULL;
    ember_ctx *ctx = x->ctx;
    if (!fn) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_recompute: no function");
        return NULL;
    }
    if (!ctx->grad_enabled) /* nothing will be differentiated: nothing to keep */
        return fn(user, x);
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    ember_set_grad_enabled(ctx, false);
    ember_tensor *y = fn(user, x);
    ember_set_grad_enabled(ctx, true);
    if (!y || ember_tape_release_since(ctx, mark, y) != EMBER_OK)
        return NULL;
    if (y->owner != EMBER_OWNER_TAPE) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_recompute: the function must return a tensor an op made");
        return NULL;
    }
    /* recorded whether or not x needs a gradient: the parameters inside fn may */
    struct ember_node *n = ember_record(EMBER_OP_RECOMPUTE, y, x, NULL, NULL);
    if (!n)
        return NULL;
    n->arg[0] = (int64_t)(uintptr_t)fn;
    n->arg[1] = (int64_t)(uintptr_t)user;
    return y;
}

struct ember_tensor *ember_recompute_again(struct ember_node *n, ember_tape_mark *mark)
{
    struct ember_tensor *x = n->in[0], *y = n->out, *dy = y->grad;
    ember_recompute_fn fn = (ember_recompute_fn)(uintptr_t)n->arg[0];
    void *user = (void *)(uintptr_t)n->arg[1];
    ember_ctx *ctx = x->ctx;
    *mark = ember_tape_mark_now(ctx);
    /* x again, on its own, so that the walk stops at it */
    struct ember_tensor *again = ember_tensor_alloc(ctx, EMBER_F32, x->ndim, x->shape, EMBER_OWNER_TAPE);
    if (!again || ember_unary_into(EMBER_COPY, again, x, 0.0f) != EMBER_OK)
        return NULL;
    again->requires_grad = x->requires_grad;
    struct ember_tensor *y2 = fn(user, again);
    if (!y2) {
        if (ctx->status == EMBER_OK)
            ember_fail(ctx, EMBER_ERR_DEVICE, "ember_recompute: the function failed the second time");
        return NULL;
    }
    if (!ember_same_shape(y2, y)) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_recompute: the function's output changed shape");
        return NULL;
    }
    if (y2->requires_grad) { /* the output's gradient seeds the walk over what was recorded */
        y2->grad = dy;
        dy->grad_holders++;
    }
    return again;
}

ember_status ember_recompute_done(struct ember_node *n, ember_tape_mark mark, struct ember_tensor *again,
                                  ember_status st)
{
    struct ember_tensor *x = n->in[0];
    ember_ctx *ctx = x->ctx;
    if (st == EMBER_OK && again && again->grad) {
        st = ember_grad_commit(x, again->grad);
        ember_grad_spent(again->grad); /* the copy is done with it; x may hold it on */
    }
    /* what the recomputation made goes, but for x's gradient if it is one of them */
    ctx->node_len = mark.nodes;
    ember_status released = ember_tape_release_since(ctx, mark, x->grad);
    return st != EMBER_OK ? st : released;
}

/* The walk (core/backward.c) runs a recomputation itself, between
 * ember_recompute_again and ember_recompute_done, so that this file does
 * not call back into it; the table's entry is never reached. */
ember_status ember_backward_recompute(struct ember_node *n)
{
    return ember_fail(n->out->ctx, EMBER_ERR_ARG, "ember_recompute's node outside the backward walk");
}
