/* SPDX-License-Identifier: MIT */
/*
 * core/backward.c — ember_backward: the walk from the loss back along the
 * tape, calling each node's backward function from the table EMBER_OPS
 * makes (a missing ember_backward_<name> fails the link).
 */
#include "autograd-impl.h"
#include "profile-impl.h"

#define EMBER_OP_BACKWARD(NAME, name, ...) ember_backward_##name,
static ember_status (*const op_backward[])(struct ember_node *) = {EMBER_OPS(EMBER_OP_BACKWARD)};
#undef EMBER_OP_BACKWARD

/* the backward pass over the nodes from the last down to `first`: each
 * whose output has a gradient runs its backward function, then that
 * gradient is spent; ember_backward walks the whole tape, a recomputation
 * the nodes it has just recorded */
static ember_status walk(ember_ctx *ctx, int64_t first);

void ember_set_grad_ready(ember_ctx *ctx, ember_grad_ready_fn fn, void *user)
{
    if (!ctx)
        return;
    ctx->grad_ready = fn;
    ctx->grad_ready_user = user;
}

/* For the grad-ready callback: a leaf's gradient is final once the
 * backward pass has passed the earliest node that uses it (the pass runs
 * from the last node to the first). Marks, in each node, the leaves it is
 * the earliest user of. */
static void mark_final_inputs(ember_ctx *ctx)
{
    for (int64_t i = 0; i < ctx->node_len; i++) {
        struct ember_node *n = &ctx->nodes[i];
        n->final_inputs = 0;
        for (int k = 0; k < 3; k++) {
            struct ember_tensor *t = n->in[k];
            if (t && ember_is_leaf(t) && t->requires_grad && !t->grad_seen) {
                t->grad_seen = true;
                n->final_inputs |= (uint8_t)(1u << k);
            }
        }
    }
    for (int64_t i = 0; i < ctx->node_len; i++) /* the scratch flag back, for the next pass */
        for (int k = 0; k < 3; k++)
            if (ctx->nodes[i].in[k])
                ctx->nodes[i].in[k]->grad_seen = false;
}

ember_status ember_backward(ember_tensor *loss)
{
    if (!loss)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = loss->ctx;
    if (ember_shape_numel(loss->ndim, loss->shape) != 1)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "ember_backward needs a one-element loss; reduce it with ember_sum or "
                          "ember_mean first");
    if (!loss->requires_grad)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "the loss does not require grad: no parameter it depends on requires "
                          "grad, or grad was disabled when it was computed");

    /* interior gradients from an earlier pass over this tape are stale */
    for (int64_t i = 0; i < ctx->tape_len; i++)
        ctx->tape_tensors[i]->grad = NULL, ctx->tape_tensors[i]->grad_holders = 0;

    /* d loss / d loss = 1 */
    ember_profile_label(ctx, "backward", "seed");
    struct ember_tensor *seed = ember_tensor_alloc(ctx, EMBER_F32, loss->ndim, loss->shape, EMBER_OWNER_TAPE);
    if (!seed)
        return ctx->status;
    ember_status st = ember_tensor_fill(seed, 1.0f);
    if (st == EMBER_OK)
        st = ember_grad_commit(loss, seed);

    if (ctx->grad_ready)
        mark_final_inputs(ctx);
    return st == EMBER_OK ? walk(ctx, 0) : st;
}

/* node i an ember_recompute: its function run again, then a walk over
 * what that recorded */
static ember_status recompute(ember_ctx *ctx, int64_t i)
{
    ember_tape_mark mark;
    struct ember_tensor *again = ember_recompute_again(&ctx->nodes[i], &mark);
    ember_status st = again ? walk(ctx, mark.nodes) : ctx->status;
    return ember_recompute_done(&ctx->nodes[i], mark, again, st);
}

static ember_status walk(ember_ctx *ctx, int64_t first)
{
    ember_status st = EMBER_OK;
    for (int64_t i = ctx->node_len - 1; i >= first && st == EMBER_OK; i--) {
        struct ember_node *n = &ctx->nodes[i];
        if (n->out->grad) { /* else the loss does not depend on this node */
            ember_profile_label(ctx, ember_op_name(n->op), "backward");
            ember_profile_inputs(ctx, (const struct ember_tensor *const *)n->in);
            st = n->op == EMBER_OP_RECOMPUTE ? recompute(ctx, i) : op_backward[n->op](n);
            if (st != EMBER_OK && ctx->status == EMBER_OK)
                st = ember_fail(ctx, st, "backward of %s failed", ember_op_name(n->op));
            n = &ctx->nodes[i]; /* a recomputation records nodes, and the array may have moved */
            /* its output's gradient is used up: its memory serves the gradients still to come (a
             * language model's step holds one block's, not thirty's) */
            if (st == EMBER_OK && !ember_is_leaf(n->out)) {
                ember_grad_spent(n->out->grad);
                n->out->grad = NULL;
            }
        }
        for (int k = 0; k < 3 && st == EMBER_OK && ctx->grad_ready; k++)
            if ((n->final_inputs >> k & 1) && n->in[k]->grad)
                ctx->grad_ready(ctx->grad_ready_user, n->in[k]);
    }
    return st;
}
