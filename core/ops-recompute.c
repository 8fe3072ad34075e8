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
 * Selective (ember_recompute_selective, PyTorch's selective activation
 * checkpointing with a policy of keeping matrix products): the first run
 * also keeps the output of every product ember_linear makes of depth
 * KEEP_DEPTH or more, off the tape (ctx->kept), and the second run's
 * products take those outputs back in the same order instead of
 * multiplying again; only the cheap ops between them (norms, activations,
 * attention's small products, an adapter's rank-r factor) run twice. A
 * LoRA step of SmolLM2 at 4 x 128 tokens keeps 0.3 GB more so and
 * multiplies a third less than recomputing everything (142 tokens a second
 * against 115 at one thread, docs/models.md). The products' nodes are
 * recorded in the second run as in any other, so their backward passes are
 * unchanged.
 *
 * fn must compute the same thing both times: what it draws at random
 * (dropout) it must draw from a seed it is given, not from a running
 * generator. A grad-ready callback (ember_set_grad_ready, data-parallel
 * training) hears of no parameter used only inside fn.
 */
#include <stdint.h>
#include <string.h>

#include "ops-impl.h"

/* Kept: a product's output of at least this many multiply-adds a value
 * (its input's width). Recomputing one costs that many a value kept, so a
 * layer's projections (576 and more in SmolLM2) are kept and a rank-8
 * adapter's second factor (8) is made again. */
#define KEEP_DEPTH 64

ember_status ember_keep_product(struct ember_tensor *y, int64_t depth)
{
    ember_ctx *ctx = y->ctx;
    if (ctx->keeping != EMBER_KEEPING_FIRST_RUN || depth < KEEP_DEPTH)
        return EMBER_OK;
    if (ember_host_grow(ctx, (void **)&ctx->kept, &ctx->kept_cap, ctx->kept_len + 1, sizeof *ctx->kept) !=
        EMBER_OK)
        return ctx->status;
    if (ember_tape_take(y))
        ctx->kept[ctx->kept_len++] = y;
    return EMBER_OK;
}

ember_status ember_kept_product(ember_ctx *ctx, int ndim, const int64_t *shape, int64_t depth,
                                struct ember_tensor **y)
{
    *y = NULL;
    if (ctx->keeping != EMBER_KEEPING_SECOND_RUN || depth < KEEP_DEPTH || ctx->kept_next == ctx->kept_end)
        return EMBER_OK; /* past the end: the function's output was a product, and went back to the tape */
    struct ember_tensor *t = ctx->kept[ctx->kept_next];
    if (t->ndim != ndim || memcmp(t->shape, shape, (size_t)ndim * sizeof *shape) != 0) {
        char was[96];
        return ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_recompute_selective: the function's products changed between its two runs (the "
            "first run's next one made %s, the second's another shape)",
            ember_shape_str(t, was, sizeof was));
    }
    ctx->kept_next++;
    *y = t;
    return EMBER_OK;
}

static ember_tensor *recompute(const char *name, ember_tensor *x, ember_recompute_fn fn, void *user,
                               bool selective)
{
    if (!x)
        return NULL;
    ember_ctx *ctx = x->ctx;
    if (!fn) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s: no function", name);
        return NULL;
    }
    if (!ctx->grad_enabled) /* nothing will be differentiated: nothing to keep */
        return fn(user, x);
    if (ctx->keeping != EMBER_KEEPING_OFF) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s inside a function that ember_recompute_selective runs", name);
        return NULL;
    }
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    int64_t first_kept = ctx->kept_len;
    ember_set_grad_enabled(ctx, false);
    ctx->keeping = selective ? EMBER_KEEPING_FIRST_RUN : EMBER_KEEPING_OFF;
    ember_tensor *y = fn(user, x);
    ctx->keeping = EMBER_KEEPING_OFF;
    ember_set_grad_enabled(ctx, true);
    /* an output that is itself a kept product goes back on the tape, as any output: the second run makes
     * it again */
    if (y && ctx->kept_len > first_kept && ctx->kept[ctx->kept_len - 1] == y &&
        ember_tape_put(ctx->kept[--ctx->kept_len]) != EMBER_OK)
        return NULL;
    if (!y || ember_tape_release_since(ctx, mark, y) != EMBER_OK)
        return NULL;
    if (y->owner != EMBER_OWNER_TAPE) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s: the function must return a tensor an op made", name);
        return NULL;
    }
    /* recorded whether or not x needs a gradient: the parameters inside fn may */
    struct ember_node *n = ember_record(EMBER_OP_RECOMPUTE, y, x, NULL, NULL);
    if (!n)
        return NULL;
    n->arg[0] = (int64_t)(uintptr_t)fn;
    n->arg[1] = (int64_t)(uintptr_t)user;
    n->arg[2] = first_kept, n->arg[3] = ctx->kept_len; /* the products kept for the second run */
    return y;
}

ember_tensor *ember_recompute(ember_tensor *x, ember_recompute_fn fn, void *user)
{
    return recompute("ember_recompute", x, fn, user, false);
}

ember_tensor *ember_recompute_selective(ember_tensor *x, ember_recompute_fn fn, void *user)
{
    return recompute("ember_recompute_selective", x, fn, user, true);
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
    if (n->arg[3] > n->arg[2]) /* products kept: hand them back */
        ctx->keeping = EMBER_KEEPING_SECOND_RUN, ctx->kept_next = n->arg[2], ctx->kept_end = n->arg[3];
    struct ember_tensor *y2 = fn(user, again);
    bool all_taken = ctx->keeping == EMBER_KEEPING_OFF || ctx->kept_next == ctx->kept_end;
    ctx->keeping = EMBER_KEEPING_OFF;
    if (y2 && !all_taken) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_recompute_selective: the function made fewer products the second time (%lld of "
                   "%lld)",
                   (long long)(ctx->kept_next - n->arg[2]), (long long)(n->arg[3] - n->arg[2]));
        return NULL;
    }
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
    /* what the recomputation made goes, but for x's gradient if it is one of them; and the products the
     * first run kept (the last ones on the list, the walk going backwards) */
    ctx->node_len = mark.nodes;
    for (int64_t i = n->arg[2]; i < n->arg[3] && i < ctx->kept_len; i++) {
        ember_tensor_release(ctx->kept[i]);
        ctx->kept[i] = NULL;
    }
    while (ctx->kept_len > 0 && !ctx->kept[ctx->kept_len - 1])
        ctx->kept_len--;
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
