/* SPDX-License-Identifier: MIT */
/* core/ops-elementwise.c — add, sub, mul, scale, relu: forward and backward. */
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

/* y = max(x, 0) */
ember_tensor *ember_relu(ember_tensor *x)
{
    ember_ctx *ctx = ember_op_begin("ember_relu", x, NULL, NULL);
    if (!ctx)
        return NULL;
    struct ember_tensor *y = ember_unary_new(EMBER_RELU, x, 0.0f);
    if (y && ember_grad_needed(ctx, x, NULL, NULL) && !ember_record(EMBER_OP_RELU, y, x, NULL, NULL))
        return NULL;
    return y;
}

/* dx = dy where y > 0, else 0 (y > 0 exactly where x > 0) */
ember_status ember_backward_relu(struct ember_node *n)
{
    struct ember_tensor *dx = ember_binary_new(EMBER_RELU_BACKWARD, n->out->grad, n->out, 0.0f);
    return dx ? ember_grad_commit(n->in[0], dx) : n->out->ctx->status;
}

/* The activations whose backward pass is one binary primitive of dy and
 * either the input or the output: the forward records which. */
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
static ember_status activation_backward(struct ember_node *n, enum ember_binary_op prim, bool from_output)
{
    struct ember_tensor *dx = ember_binary_new(prim, n->out->grad, from_output ? n->out : n->in[0], n->farg);
    return dx ? ember_grad_commit(n->in[0], dx) : n->out->ctx->status;
}

/* y = x > 0 ? x : slope * x */
ember_tensor *ember_leaky_relu(ember_tensor *x, float slope)
{
    return activation("ember_leaky_relu", EMBER_LEAKY_RELU, EMBER_OP_LEAKY_RELU, x, slope);
}

/* dx = x > 0 ? dy : slope * dy */
ember_status ember_backward_leaky_relu(struct ember_node *n)
{
    return activation_backward(n, EMBER_LEAKY_RELU_BACKWARD, false);
}

/* y = 1 / (1 + e^-x) */
ember_tensor *ember_sigmoid(ember_tensor *x)
{
    return activation("ember_sigmoid", EMBER_SIGMOID, EMBER_OP_SIGMOID, x, 0.0f);
}

/* dx = dy * y * (1 - y) */
ember_status ember_backward_sigmoid(struct ember_node *n)
{
    return activation_backward(n, EMBER_SIGMOID_BACKWARD, true);
}

/* y = tanh x */
ember_tensor *ember_tanh(ember_tensor *x)
{
    return activation("ember_tanh", EMBER_TANH, EMBER_OP_TANH, x, 0.0f);
}

/* dx = dy * (1 - y^2) */
ember_status ember_backward_tanh(struct ember_node *n)
{
    return activation_backward(n, EMBER_TANH_BACKWARD, true);
}

/* y = x * Phi(x) */
ember_tensor *ember_gelu(ember_tensor *x)
{
    return activation("ember_gelu", EMBER_GELU, EMBER_OP_GELU, x, 0.0f);
}

/* dx = dy * (Phi(x) + x * phi(x)) */
ember_status ember_backward_gelu(struct ember_node *n)
{
    return activation_backward(n, EMBER_GELU_BACKWARD, false);
}

/* y = x * sigmoid(x), by composition: no backward of its own, the tape's
 * sigmoid and product give dx = dy * (s + x * s * (1 - s)). A primitive of
 * its own would save one pass over x; measure before adding it. */
ember_tensor *ember_silu(ember_tensor *x)
{
    if (!ember_op_begin("ember_silu", x, NULL, NULL))
        return NULL;
    ember_tensor *s = ember_sigmoid(x);
    return s ? ember_mul(x, s) : NULL;
}

/* y = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): GPT-2's GELU */
ember_tensor *ember_gelu_tanh(ember_tensor *x)
{
    return activation("ember_gelu_tanh", EMBER_GELU_TANH, EMBER_OP_GELU_TANH, x, 0.0f);
}

/* dx = dy * gelu_tanh'(x) */
ember_status ember_backward_gelu_tanh(struct ember_node *n)
{
    return activation_backward(n, EMBER_GELU_TANH_BACKWARD, false);
}
