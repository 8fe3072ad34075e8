/* SPDX-License-Identifier: MIT */
/*
 * core/autograd.c — recording the tape, and the helpers each op's backward
 * function writes its gradients through. The ops call this file; the walk
 * that calls the ops' backward functions is core/backward.c, so that the
 * two never call each other.
 */
#include <string.h>

#include "autograd-impl.h"

#define EMBER_OP_NAME(NAME, name, ...) #name,
static const char *const op_names[] = {EMBER_OPS(EMBER_OP_NAME)};
#undef EMBER_OP_NAME

const char *ember_op_name(enum ember_op op) { return op < EMBER_OP_COUNT ? op_names[op] : "?"; }

bool ember_grad_enabled(const ember_ctx *ctx) { return ctx && ctx->grad_enabled; }

bool ember_set_grad_enabled(ember_ctx *ctx, bool enabled)
{
    if (!ctx)
        return false;
    bool was = ctx->grad_enabled;
    ctx->grad_enabled = enabled;
    return was;
}

bool ember_grad_needed(ember_ctx *ctx, const struct ember_tensor *a, const struct ember_tensor *b,
                       const struct ember_tensor *c)
{
    return ctx->grad_enabled &&
           ((a && a->requires_grad) || (b && b->requires_grad) || (c && c->requires_grad));
}

struct ember_node *ember_record(enum ember_op op, struct ember_tensor *out, struct ember_tensor *a,
                                struct ember_tensor *b, struct ember_tensor *c)
{
    ember_ctx *ctx = out->ctx;
    if (ember_host_grow(ctx, (void **)&ctx->nodes, &ctx->node_cap, ctx->node_len + 1, sizeof *ctx->nodes) !=
        EMBER_OK)
        return NULL;
    struct ember_node *n = &ctx->nodes[ctx->node_len++];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->out = out;
    n->in[0] = a;
    n->in[1] = b;
    n->in[2] = c;
    out->requires_grad = true;
    return n;
}

struct ember_node *ember_record_saving(enum ember_op op, struct ember_tensor *out, struct ember_tensor *a,
                                       struct ember_tensor *b, struct ember_tensor *c,
                                       struct ember_tensor *saved0, struct ember_tensor *saved1)
{
    struct ember_node *n = ember_record(op, out, a, b, c);
    if (n) {
        n->saved[0] = saved0;
        n->saved[1] = saved1;
    }
    return n;
}

/* A leaf's gradient lives as long as the leaf. Parameters have theirs made
 * with them; any other leaf gets a zero-filled one on first need. */
static struct ember_tensor *leaf_grad(struct ember_tensor *t)
{
    if (!t->grad) {
        t->grad = ember_tensor_alloc(t->ctx, EMBER_F32, t->ndim, t->shape, t->owner);
        if (t->grad && ember_tensor_fill(t->grad, 0.0f) != EMBER_OK) {
            ember_tensor_release(t->grad);
            t->grad = NULL;
        }
    }
    return t->grad;
}

struct ember_tensor *ember_grad_target(struct ember_tensor *t, float *beta)
{
    if (ember_is_leaf(t)) {
        *beta = 1.0f;
        return leaf_grad(t);
    }
    *beta = 0.0f;
    return ember_tensor_alloc(t->ctx, EMBER_F32, t->ndim, t->shape, EMBER_OWNER_TAPE);
}

static ember_status add_into(struct ember_tensor *out, struct ember_tensor *a, struct ember_tensor *b)
{
    ember_ctx *ctx = out->ctx;
    struct ember_ewise e;
    ember_ewise_init(&e, out, a, b);
    return ctx->ops->binary(ctx->dev, EMBER_ADD, &e, ember_tensor_ptr(out), ember_tensor_ptr(a),
                            ember_tensor_ptr(b), 0.0f);
}

void ember_grad_spent(struct ember_tensor *g)
{
    if (g && --g->grad_holders == 0) /* no tensor still to be differentiated reads it */
        ember_tensor_drop_storage(g);
}

ember_status ember_grad_commit(struct ember_tensor *t, struct ember_tensor *g)
{
    if (!g)
        return t->ctx->status;
    if (g == t->grad)
        return EMBER_OK; /* written in place through ember_grad_target */
    if (ember_is_leaf(t)) {
        struct ember_tensor *grad = leaf_grad(t);
        return grad ? add_into(grad, grad, g) : t->ctx->status;
    }
    if (!t->grad) {
        t->grad = g;
        g->grad_holders++;
        return EMBER_OK;
    }
    /* another contribution: a new sum, so that a gradient shared with
     * another tensor is never changed under it */
    struct ember_tensor *sum = ember_tensor_alloc(t->ctx, EMBER_F32, t->ndim, t->shape, EMBER_OWNER_TAPE);
    if (!sum)
        return t->ctx->status;
    ember_status st = add_into(sum, t->grad, g);
    ember_grad_spent(t->grad);
    t->grad = sum;
    sum->grad_holders++;
    return st;
}

ember_status ember_grad_commit_reduced(struct ember_tensor *t, struct ember_tensor *g)
{
    ember_ctx *ctx = t->ctx;
    /* Walk g's axes aligned with t's from the right; every axis where t is
     * missing or has size 1 but g does not is summed away, one reduce each,
     * merging neighbouring axes to be summed into a single pass. */
    int gd = g->ndim, off = g->ndim - t->ndim;
    int64_t shape[EMBER_MAX_DIMS];
    for (int i = 0; i < gd; i++)
        shape[i] = g->shape[i];
    struct ember_tensor *cur = g;
    int i = 0;
    while (i < gd) {
        bool summed = shape[i] > 1 && (i < off || t->shape[i - off] == 1);
        if (!summed) {
            i++;
            continue;
        }
        int j = i + 1;
        while (j < gd && (shape[j] == 1 || j < off || t->shape[j - off] == 1))
            j++;
        struct ember_reduce r = {.outer = ember_shape_numel(i, shape),
                                 .r = ember_shape_numel(j - i, shape + i),
                                 .inner = ember_shape_numel(gd - j, shape + j),
                                 .alpha = 1.0f};
        for (int k = i; k < j; k++)
            shape[k] = 1;
        struct ember_tensor *next = ember_tensor_alloc(ctx, EMBER_F32, gd, shape, EMBER_OWNER_TAPE);
        if (!next)
            return ctx->status;
        ember_status st =
            ctx->ops->reduce(ctx->dev, EMBER_SUM, &r, ember_tensor_ptr(next), ember_tensor_ptr(cur));
        if (st != EMBER_OK)
            return st;
        cur = next;
        i = j;
    }
    /* cur now has t's numel; give it t's shape */
    if (!ember_same_shape(cur, t)) {
        int64_t stride[EMBER_MAX_DIMS];
        ember_contiguous_strides(t->ndim, t->shape, stride);
        cur = ember_tensor_view(cur, t->ndim, t->shape, stride, cur->offset, EMBER_OWNER_TAPE);
        if (!cur)
            return ctx->status;
    }
    return ember_grad_commit(t, cur);
}
