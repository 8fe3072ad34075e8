/* SPDX-License-Identifier: MIT */
/*
 * core/ops-rope.c — rotary position embedding (RoPE), as LLaMA-family
 * models turn their queries and keys by position, forward and backward
 * through the rope primitive (backends/backend.h has the math).
 *
 *   table (L, R / 2, 2)        cos and sin of p * base^(-2j / R) (/ divisor j), for p < L, j < R / 2
 *   x (B, T, H, D) -> y        each head's first R values turned pairwise
 *   dx = y's turn backwards applied to dy (a rotation's inverse is its transpose)
 *
 * The angles are computed once, in double, on the host: every device then
 * turns by the same float cos and sin, and no kernel needs sin or cos.
 */
#include <math.h>
#include <stdlib.h>

#include "ops-impl.h"

ember_tensor *ember_rope_table(ember_ctx *ctx, int64_t positions, int64_t dims, float base,
                               const float *divisors)
{
    if (!ctx)
        return NULL;
    if (positions < 1 || positions > (1 << 24) || dims < 2 || dims % 2 != 0 || dims > 65536 ||
        !(base > 1.0f)) {
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_rope_table takes 1 to 2^24 positions, an even number of dimensions and a base above "
            "1; got %lld, %lld and %g",
            (long long)positions, (long long)dims, base);
        return NULL;
    }
    int64_t pairs = dims / 2, shape[3] = {positions, pairs, 2};
    float *host = malloc((size_t)(positions * pairs * 2) * sizeof *host);
    if (!host) {
        ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a RoPE table of %lld positions",
                   (long long)positions);
        return NULL;
    }
    for (int64_t j = 0; j < pairs; j++) {
        double theta =
            pow((double)base, -2.0 * (double)j / (double)dims) / (divisors ? (double)divisors[j] : 1.0);
        for (int64_t p = 0; p < positions; p++) {
            double angle = (double)p * theta;
            host[(p * pairs + j) * 2] = (float)cos(angle);
            host[(p * pairs + j) * 2 + 1] = (float)sin(angle);
        }
    }
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, 3, shape);
    if (t && ember_tensor_write(t, host, (size_t)(positions * pairs * 2) * sizeof *host) != EMBER_OK) {
        ember_tensor_free(t);
        t = NULL;
    }
    free(host);
    return t;
}

static ember_status rope_run(struct ember_tensor *x, struct ember_tensor *table, struct ember_tensor *y,
                             int64_t position, bool neox, bool inverse)
{
    ember_ctx *ctx = x->ctx;
    struct ember_rope r = {.batch = x->shape[0],
                           .seq = x->shape[1],
                           .heads = x->shape[2],
                           .dim = x->shape[3],
                           .rot = 2 * table->shape[1],
                           .position = position,
                           .neox = neox,
                           .inverse = inverse};
    return ctx->ops->rope(ctx->dev, &r, ember_tensor_ptr(x), ember_tensor_ptr(table), ember_tensor_ptr(y));
}

ember_tensor *ember_rope(ember_tensor *x, ember_tensor *table, int64_t position, bool neox)
{
    ember_ctx *ctx = ember_op_begin("ember_rope", x, table, NULL);
    if (!ctx || !table)
        return NULL;
    if (x->ndim != 4 || table->ndim != 3 || table->shape[2] != 2 || 2 * table->shape[1] > x->shape[3] ||
        position < 0 || position + x->shape[1] > table->shape[0]) {
        char sx[96], st[96];
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_rope takes x (B, T, heads, dim) and a table (positions, pairs, 2) with pairs * 2 <= dim "
            "and room for positions %lld to %lld; got %s and %s",
            (long long)position, (long long)(position + (x->ndim == 4 ? x->shape[1] : 0)),
            ember_shape_str(x, sx, sizeof sx), ember_shape_str(table, st, sizeof st));
        return NULL;
    }
    struct ember_tensor *cx = ember_contiguous(x), *ct = cx ? ember_contiguous(table) : NULL;
    struct ember_tensor *y = ct ? ember_op_out_like(cx) : NULL;
    if (!y || rope_run(cx, ct, y, position, neox, false) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, NULL, NULL)) {
        struct ember_node *n = ember_record_saving(EMBER_OP_ROPE, y, cx, NULL, NULL, ct, NULL);
        if (!n)
            return NULL;
        n->arg[0] = position;
        n->arg[1] = neox;
    }
    return y;
}

/* dx = dy turned back by the same angles */
ember_status ember_backward_rope(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *dy = ember_contiguous(n->out->grad);
    ember_ctx *ctx = x->ctx;
    struct ember_tensor *dx = dy ? ember_op_out_like(dy) : NULL;
    if (!dx || rope_run(dy, n->saved[0], dx, n->arg[0], n->arg[1] != 0, true) != EMBER_OK)
        return ctx->status;
    return ember_grad_commit(x, dx);
}
