/* SPDX-License-Identifier: MIT */
/* core/ops-elementwise.c — add, sub, mul, scale and the activations: forward and backward. */
#include "ops-impl.h"

static ember_tensor *binary_op(const char *name, enum ember_binary_op prim, enum ember_op op, ember_tensor *a,
                               ember_tensor *b)
{
    ember_ctx *ctx = ember_op_begin(name, a, b, NULL);
    if (!ctx || !b)
        return NULL;
    struct ember_tensor *y = ember_binary_new(prim, a, b, 0.0f);
    if (y && ember_grad_needed(ctx, a, b, NULL) && !ember_record(op, y, a, b, NULL))
        return NULL;
    return y;
}

/* y = a + b */
ember_tensor *ember_add(ember_tensor *a, ember_tensor *b)
{
    return binary_op("ember_add", EMBER_ADD, EMBER_OP_ADD, a, b);
}

/* y = a - b */
ember_tensor *ember_sub(ember_tensor *a, ember_tensor *b)
{
    return binary_op("ember_sub", EMBER_SUB, EMBER_OP_SUB, a, b);
}

/* y = a * b */
ember_tensor *ember_mul(ember_tensor *a, ember_tensor *b)
{
    return binary_op("ember_mul", EMBER_MUL, EMBER_OP_MUL, a, b);
}

/* da = dy, db = dy (each summed over the axes it was broadcast along) */
ember_status ember_backward_add(struct ember_node *n)
{
    struct ember_tensor *dy = n->out->grad, *a = n->in[0], *b = n->in[1];
    ember_status st = EMBER_OK;
    if (a->requires_grad)
        st = ember_grad_commit_reduced(a, dy);
    if (st == EMBER_OK && b->requires_grad)
        st = ember_grad_commit_reduced(b, dy);
    return st;
}

/* da = dy, db = -dy */
ember_status ember_backward_sub(struct ember_node *n)
{
    struct ember_tensor *dy = n->out->grad, *a = n->in[0], *b = n->in[1];
    ember_status st = EMBER_OK;
    if (a->requires_grad)
        st = ember_grad_commit_reduced(a, dy);
    if (st == EMBER_OK && b->requires_grad) {
        struct ember_tensor *neg = ember_unary_new(EMBER_NEG, dy, 0.0f);
        st = neg ? ember_grad_commit_reduced(b, neg) : dy->ctx->status;
    }
    return st;
}

/* da = dy * b, db = dy * a */
ember_status ember_backward_mul(struct ember_node *n)
{
    struct ember_tensor *dy = n->out->grad, *a = n->in[0], *b = n->in[1];
    ember_status st = EMBER_OK;
    if (a->requires_grad) {
        struct ember_tensor *da = ember_binary_new(EMBER_MUL, dy, b, 0.0f);
        st = da ? ember_grad_commit_reduced(a, da) : dy->ctx->status;
    }
    if (st == EMBER_OK && b->requires_grad) {
        struct ember_tensor *db = ember_binary_new(EMBER_MUL, dy, a, 0.0f);
        st = db ? ember_grad_commit_reduced(b, db) : dy->ctx->status;
    }
    return st;
}

/* y = alpha * x */
ember_tensor *ember_scale(ember_tensor *x, float alpha)
{
    ember_ctx *ctx = ember_op_begin("ember_scale", x, NULL, NULL);
    if (!ctx)
        return NULL;
    struct ember_tensor *y = ember_unary_new(EMBER_SCALE, x, alpha);
    if (y && ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *n = ember_record(EMBER_OP_SCALE, y, x, NULL, NULL);
        if (!n)
            return NULL;
        n->farg = alpha;
    }
    return y;
}

/* dx = alpha * dy */
ember_status ember_backward_scale(struct ember_node *n)
{
    struct ember_tensor *dx = ember_unary_new(EMBER_SCALE, n->out->grad, n->farg);
    return dx ? ember_grad_commit(n->in[0], dx) : n->out->ctx->status;
}

/* ------------------------------------------------------------ activations
 * Each row of base/elementwise-impl.h's EMBER_ACTIVATIONS is a public op,
 * ember_<name>(x) (with its parameter, ember_leaky_relu(x, slope)), made
 * here: its forward runs the unary primitive EMBER_<NAME> and records what
 * the backward reads, x or y, and the parameter; its backward,
 * ember_backward_<name>, runs the binary primitive EMBER_<NAME>_BACKWARD on
 * dy and that. The formulas are the rows'; include/ember.h declares each op
 * with its math. */

static ember_tensor *activation(const char *name, enum ember_unary_op prim, enum ember_op op, ember_tensor *x,
                                float alpha)
{
    ember_ctx *ctx = ember_op_begin(name, x, NULL, NULL);
    if (!ctx)
        return NULL;
    struct ember_tensor *y = ember_unary_new(prim, x, alpha);
    if (y && ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *n = ember_record(op, y, x, NULL, NULL);
        if (!n)
            return NULL;
        n->farg = alpha;
    }
    return y;
}

/* dx = backward(dy, b) where b is the forward's input x or output y */
static ember_status activation_backward(struct ember_node *n, enum ember_binary_op prim, bool reads_y)
{
    struct ember_tensor *dx = ember_binary_new(prim, n->out->grad, reads_y ? n->out : n->in[0], n->farg);
    return dx ? ember_grad_commit(n->in[0], dx) : n->out->ctx->status;
}

#define ACTIVATION_OP(NAME, name, param, f, fmath, saves, ...)                                               \
    ember_tensor *ember_##name(ember_tensor *x EMBER_ACTIVATION_PARAMS_##param)                              \
    {                                                                                                        \
        return activation("ember_" #name, EMBER_##NAME, EMBER_OP_##NAME, x, EMBER_ACTIVATION_ALPHA_##param); \
    }                                                                                                        \
    ember_status ember_backward_##name(struct ember_node *n)                                                 \
    {                                                                                                        \
        return activation_backward(n, EMBER_##NAME##_BACKWARD, EMBER_ACTIVATION_READS_##saves);              \
    }
EMBER_ACTIVATIONS(ACTIVATION_OP)
#undef ACTIVATION_OP
