/* SPDX-License-Identifier: MIT */
/*
 * core/ops-attention.c — batched matrix products, and causal multi-head
 * self-attention from them: no primitive of its own, only sgemm (batched,
 * with transposes), softmax with its causal mask, dropout's mask and
 * strided copies.
 *
 * Attention, for x (B, T, 3C) = the concatenated queries, keys and values
 * of a GPT block (its c_attn layer's output), H heads of D = C / H:
 *
 *   q, k, v   (B, H, T, D)     each head's slice of x, moved together
 *   s = q k^T / sqrt(D)        (B*H, T, T): one batched product
 *   p = causal_softmax(s)      each query sees itself and the keys before it
 *   p = dropout(p)             in training, when asked
 *   y = p v                    (B*H, T, D): one batched product
 *   y (B, T, C)                the heads side by side again
 *
 * The backward pass, with dy (B, T, C) split into heads the same way:
 *
 *   dv = p^T dy,  dp = dy v^T,  ds = softmax'(p, dp) / sqrt(D)
 *   dq = ds k,    dk = ds^T q
 *
 * every product one sgemm launch over all B*H heads, transposes read in
 * place. It is one node on the tape: the scores and probabilities are
 * (B*H, T, T), the largest tensors of a GPT step, and are made once
 * (the softmax runs in place over the scores) instead of a node each.
 */
#include <math.h>

#include "ops-impl.h"

/* ------------------------------------------------------------ products */

/* A matrix operand of a batched product: op(X) read from `t`'s memory,
 * transposed or not; packed either way, so its row stride follows from
 * the product's shape (ember_gemm_packed). */
struct operand {
    struct ember_tensor *t;
    bool trans;
};

/* x (B, R, C) as an operand: contiguous as it is, the transpose of the
 * last two axes of a contiguous tensor (ember_transpose(y, 1, 2)) read
 * transposed, anything else copied first. */
static bool as_operand(struct ember_tensor *x, struct operand *o)
{
    int64_t r = x->shape[1], c = x->shape[2];
    if (!ember_tensor_is_contiguous(x) && x->stride[1] == 1 && x->stride[2] == r && x->stride[0] == r * c) {
        *o = (struct operand){.t = x, .trans = true};
        return true;
    }
    *o = (struct operand){.t = ember_contiguous(x), .trans = false};
    return o->t != NULL;
}

/* the operand read the other way: op(X)^T */
static struct operand flipped(struct operand o)
{
    o.trans = !o.trans;
    return o;
}

/* c (batch, m, n) = alpha * op(a) op(b) + beta * c, each matrix of a and
 * b m * k and k * n elements after the one before */
static ember_status batched_product(struct operand a, struct operand b, struct ember_tensor *c, int64_t batch,
                                    int64_t m, int64_t n, int64_t k, float alpha, float beta)
{
    struct ember_gemm g =
        ember_gemm_batched(ember_gemm_packed(a.trans, b.trans, m, n, k), batch, m * k, k * n, m * n);
    g.alpha = alpha;
    g.beta = beta;
    return ember_gemm_into(&g, a.t, b.t, c);
}

/* y = a @ b for a (B, M, K), b (B, K, N): y (B, M, N) */
ember_tensor *ember_bmm(ember_tensor *a, ember_tensor *b)
{
    ember_ctx *ctx = ember_op_begin("ember_bmm", a, b, NULL);
    if (!ctx || !b)
        return NULL;
    if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) {
        char sa[96], sb[96];
        ember_fail(ctx, EMBER_ERR_ARG, "ember_bmm takes (B, M, K) and (B, K, N); got %s and %s",
                   ember_shape_str(a, sa, sizeof sa), ember_shape_str(b, sb, sizeof sb));
        return NULL;
    }
    struct operand oa, ob;
    if (!as_operand(a, &oa) || !as_operand(b, &ob))
        return NULL;
    int64_t batch = a->shape[0], m = a->shape[1], k = a->shape[2], n = b->shape[2], shape[3] = {batch, m, n};
    struct ember_tensor *y = ember_op_out(ctx, 3, shape);
    if (!y || batched_product(oa, ob, y, batch, m, n, k, 1.0f, 0.0f) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, oa.t, ob.t, NULL) && !ember_record(EMBER_OP_BMM, y, oa.t, ob.t, NULL))
        return NULL;
    return y;
}

/* da = dy b^T, db = a^T dy, each reading a and b as the forward pass did */
ember_status ember_backward_bmm(struct ember_node *n)
{
    struct ember_tensor *a = n->in[0], *b = n->in[1];
    ember_ctx *ctx = a->ctx;
    struct operand oa, ob, dy;
    if (!as_operand(a, &oa) || !as_operand(b, &ob) || !as_operand(n->out->grad, &dy))
        return ctx->status;
    int64_t batch = a->shape[0], m = a->shape[1], k = a->shape[2], cols = b->shape[2];
    float beta;
    if (a->requires_grad) {
        struct ember_tensor *da = ember_grad_target(a, &beta);
        if (!da || batched_product(dy, flipped(ob), da, batch, m, k, cols, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(a, da) != EMBER_OK)
            return ctx->status;
    }
    if (b->requires_grad) {
        struct ember_tensor *db = ember_grad_target(b, &beta);
        if (!db || batched_product(flipped(oa), dy, db, batch, k, cols, m, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(b, db) != EMBER_OK)
            return ctx->status;
    }
    return EMBER_OK;
}

/* ------------------------------------------------------------ attention */

/* Parts [first, first + count) of t (B, T, parts * C), contiguous, as a
 * view (count, B, H, T, D): each head's (T, D) matrix of each part, where
 * element (p, b, h, t, d) is t[b, t, (first + p) * C + h * D + d]. */
static struct ember_tensor *heads_of(struct ember_tensor *t, int64_t parts, int64_t first, int64_t count,
                                     int64_t heads)
{
    int64_t b = t->shape[0], len = t->shape[1], c = t->shape[2] / parts, d = c / heads;
    int64_t shape[5] = {count, b, heads, len, d}, stride[5] = {c, len * parts * c, d, parts * c, 1};
    return ember_tensor_view(t, 5, shape, stride, t->offset + (size_t)(first * c), EMBER_OWNER_TAPE);
}

/* The `index`th (rows, cols) matrices of a contiguous (parts, batch, rows, cols) t, as a view (batch, rows,
 * cols). */
static struct ember_tensor *part_of(struct ember_tensor *t, int64_t index, int64_t batch, int64_t rows,
                                    int64_t cols)
{
    int64_t shape[3] = {batch, rows, cols}, stride[3] = {rows * cols, cols, 1};
    return ember_tensor_view(t, 3, shape, stride, t->offset + (size_t)(index * batch * rows * cols),
                             EMBER_OWNER_TAPE);
}

/* x (B, T, 3C) -> (B, H, T, D) checks; heads' count and size into *h, *d */
static bool attention_check(ember_ctx *ctx, const char *name, const struct ember_tensor *x, int heads,
                            int64_t *d)
{
    int64_t c = x->ndim == 3 ? x->shape[2] / 3 : 0;
    if (x->ndim != 3 || x->shape[2] % 3 != 0 || heads < 1 || c % heads != 0 || c == 0) {
        char sx[96];
        ember_fail(ctx, EMBER_ERR_ARG,
                   "%s takes queries, keys and values side by side, x (B, T, 3C), and heads that divide C; "
                   "got x %s and %d heads",
                   name, ember_shape_str(x, sx, sizeof sx), heads);
        return false;
    }
    *d = c / heads;
    return true;
}

/* the heads' outputs yh (1, B, H, T, D) side by side into y (B, T, C) */
static struct ember_tensor *merge_heads(ember_ctx *ctx, struct ember_tensor *yh, int64_t b, int64_t t,
                                        int64_t c, int64_t heads)
{
    int64_t shape[3] = {b, t, c};
    struct ember_tensor *y = ember_op_out(ctx, 3, shape);
    struct ember_tensor *y_heads = y ? heads_of(y, 1, 0, 1, heads) : NULL;
    return y_heads && ember_unary_into(EMBER_COPY, y_heads, yh, 0.0f) == EMBER_OK ? y : NULL;
}

ember_tensor *ember_attention(ember_tensor *x, int heads, float dropout, bool training, uint64_t seed)
{
    ember_ctx *ctx = ember_op_begin("ember_attention", x, NULL, NULL);
    int64_t d;
    if (!ctx || !attention_check(ctx, "ember_attention", x, heads, &d))
        return NULL;
    if (!(dropout >= 0.0f && dropout < 1.0f)) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_attention: dropout %g is not in [0, 1)", dropout);
        return NULL;
    }
    int64_t b = x->shape[0], t = x->shape[1], c = x->shape[2] / 3, bh = b * heads;
    float scale = 1.0f / sqrtf((float)d);
    bool drop = training && dropout > 0.0f;
    struct ember_tensor *cx = ember_contiguous(x);
    /* q, k, v: (3, B, H, T, D), one strided copy */
    struct ember_tensor *split = cx ? heads_of(cx, 3, 0, 3, heads) : NULL;
    struct ember_tensor *qkv = split ? ember_unary_new(EMBER_COPY, split, 0.0f) : NULL;
    struct ember_tensor *q = qkv ? part_of(qkv, 0, bh, t, d) : NULL,
                        *k = q ? part_of(qkv, 1, bh, t, d) : NULL;
    struct ember_tensor *v = k ? part_of(qkv, 2, bh, t, d) : NULL;
    int64_t score_shape[3] = {bh, t, t}, yh_shape[5] = {1, b, heads, t, d};
    struct ember_tensor *p = v ? ember_op_out(ctx, 3, score_shape) : NULL;
    if (!p)
        return NULL;
    /* s = q k^T / sqrt(D), then p = causal_softmax(s) in place */
    struct operand oq = {q, false}, ok = {k, true}, ov = {v, false};
    if (batched_product(oq, ok, p, bh, t, t, d, scale, 0.0f) != EMBER_OK ||
        ctx->ops->softmax_forward(ctx->dev, bh * t, t, t, ember_tensor_ptr(p), ember_tensor_ptr(p)) !=
            EMBER_OK)
        return NULL;
    struct ember_tensor *kept = p;
    if (drop) { /* p kept with its mask, the same on every backend for the seed */
        struct ember_tensor *mask = ember_op_out(ctx, 3, score_shape);
        if (!mask ||
            ctx->ops->dropout_mask(ctx->dev, ember_tensor_ptr(mask), (size_t)(bh * t * t), dropout, seed) !=
                EMBER_OK ||
            !(kept = ember_binary_new(EMBER_MUL, p, mask, 0.0f)))
            return NULL;
    }
    /* y = p v, then the heads side by side */
    struct ember_tensor *yh = ember_op_out(ctx, 5, yh_shape), *y;
    if (!yh || batched_product((struct operand){kept, false}, ov, yh, bh, t, d, t, 1.0f, 0.0f) != EMBER_OK ||
        !(y = merge_heads(ctx, yh, b, t, c, heads)))
        return NULL;
    if (ember_grad_needed(ctx, cx, NULL, NULL)) {
        struct ember_node *n = ember_record_saving(EMBER_OP_ATTENTION, y, cx, NULL, NULL, qkv, p);
        if (!n)
            return NULL;
        n->arg[0] = heads;
        n->arg[1] = drop;
        n->arg[2] = (int64_t)seed;
        n->farg = dropout;
    }
    return y;
}

ember_status ember_backward_attention(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *qkv = n->saved[0], *p = n->saved[1];
    ember_ctx *ctx = x->ctx;
    int64_t heads = n->arg[0], b = x->shape[0], t = x->shape[1], c = x->shape[2] / 3, d = c / heads,
            bh = b * heads;
    float scale = 1.0f / sqrtf((float)d);
    struct ember_tensor *q = part_of(qkv, 0, bh, t, d), *k = q ? part_of(qkv, 1, bh, t, d) : NULL;
    struct ember_tensor *v = k ? part_of(qkv, 2, bh, t, d) : NULL;
    /* dy's heads, (1, B, H, T, D) like the forward's y */
    struct ember_tensor *dy = v ? ember_contiguous(n->out->grad) : NULL;
    struct ember_tensor *dy_split = dy ? heads_of(dy, 1, 0, 1, heads) : NULL;
    struct ember_tensor *dyh = dy_split ? ember_unary_new(EMBER_COPY, dy_split, 0.0f) : NULL;
    struct ember_tensor *dqkv = dyh ? ember_op_out_like(qkv) : NULL, *dp = dqkv ? ember_op_out_like(p) : NULL;
    struct ember_tensor *dq = dp ? part_of(dqkv, 0, bh, t, d) : NULL,
                        *dk = dq ? part_of(dqkv, 1, bh, t, d) : NULL;
    struct ember_tensor *dv = dk ? part_of(dqkv, 2, bh, t, d) : NULL;
    if (!dv)
        return ctx->status;
    struct operand ody = {dyh, false};
    /* dp = dy v^T */
    if (batched_product(ody, (struct operand){v, true}, dp, bh, t, t, d, 1.0f, 0.0f) != EMBER_OK)
        return ctx->status;
    struct ember_tensor *kept = p;
    if (n->arg[1]) { /* dropout: the same mask again from its seed; dp = dp * mask */
        struct ember_tensor *mask = ember_op_out_like(p);
        if (!mask ||
            ctx->ops->dropout_mask(ctx->dev, ember_tensor_ptr(mask), (size_t)(bh * t * t), n->farg,
                                   (uint64_t)n->arg[2]) != EMBER_OK ||
            !(kept = ember_binary_new(EMBER_MUL, p, mask, 0.0f)) ||
            ember_binary_into(EMBER_MUL, dp, dp, mask, 0.0f) != EMBER_OK)
            return ctx->status;
    }
    /* dv = p^T dy; ds = softmax'(p, dp) in place; dq = ds k / sqrt(D); dk = ds^T q / sqrt(D) */
    struct operand ods = {dp, false};
    if (batched_product((struct operand){kept, true}, ody, dv, bh, t, d, t, 1.0f, 0.0f) != EMBER_OK ||
        ctx->ops->softmax_backward(ctx->dev, bh * t, t, ember_tensor_ptr(p), ember_tensor_ptr(dp),
                                   ember_tensor_ptr(dp)) != EMBER_OK ||
        batched_product(ods, (struct operand){k, false}, dq, bh, t, d, t, scale, 0.0f) != EMBER_OK ||
        batched_product(flipped(ods), (struct operand){q, false}, dk, bh, t, d, t, scale, 0.0f) != EMBER_OK)
        return ctx->status;
    /* dx: the parts back side by side, (3, B, H, T, D) -> (B, T, 3C) */
    float beta;
    struct ember_tensor *dx = ember_grad_target(x, &beta);
    struct ember_tensor *dx_split = dx ? heads_of(dx, 3, 0, 3, heads) : NULL;
    if (!dx_split ||
        (beta == 0.0f ? ember_unary_into(EMBER_COPY, dx_split, dqkv, 0.0f)
                      : ember_binary_into(EMBER_ADD, dx_split, dx_split, dqkv, 0.0f)) != EMBER_OK)
        return ctx->status;
    return ember_grad_commit(x, dx);
}

/* Attention for generation: x (B, n, 3C) holds n new positions, whose keys
 * and values go into the cache (2, B, H, L, D) at [position, position + n);
 * each new query attends over the cache's first position + n keys, the
 * earlier ones and the new ones up to itself. No gradient. */
ember_tensor *ember_attention_cached(ember_tensor *x, int heads, ember_tensor *cache, int64_t position)
{
    ember_ctx *ctx = ember_op_begin("ember_attention_cached", x, cache, NULL);
    int64_t d;
    if (!ctx || !cache || !attention_check(ctx, "ember_attention_cached", x, heads, &d))
        return NULL;
    int64_t b = x->shape[0], len = x->shape[1], c = x->shape[2] / 3, bh = b * heads, seen = position + len;
    int64_t l = cache->ndim == 5 ? cache->shape[3] : 0;
    if (cache->ndim != 5 || cache->shape[0] != 2 || cache->shape[1] != b || cache->shape[2] != heads ||
        cache->shape[4] != d || !ember_tensor_is_contiguous(cache) || position < 0 || seen > l) {
        char sc[96];
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_attention_cached: the cache must be a contiguous (2, %lld, %d, L, %lld) with room for "
            "positions %lld to %lld; it is %s",
            (long long)b, heads, (long long)d, (long long)position, (long long)seen,
            ember_shape_str(cache, sc, sizeof sc));
        return NULL;
    }
    struct ember_tensor *cx = ember_contiguous(x);
    /* the new keys and values into their places in the cache */
    int64_t slot_shape[5] = {2, b, heads, len, d},
            slot_stride[5] = {b * heads * l * d, heads * l * d, l * d, d, 1};
    struct ember_tensor *slot =
        cx ? ember_tensor_view(cache, 5, slot_shape, slot_stride, cache->offset + (size_t)(position * d),
                               EMBER_OWNER_TAPE)
           : NULL;
    struct ember_tensor *kv = slot ? heads_of(cx, 3, 1, 2, heads) : NULL;
    struct ember_tensor *split =
        kv && ember_unary_into(EMBER_COPY, slot, kv, 0.0f) == EMBER_OK ? heads_of(cx, 3, 0, 1, heads) : NULL;
    struct ember_tensor *q = split ? ember_unary_new(EMBER_COPY, split, 0.0f) : NULL;
    int64_t score_shape[3] = {bh, len, seen}, yh_shape[5] = {1, b, heads, len, d};
    struct ember_tensor *p = q ? ember_op_out(ctx, 3, score_shape) : NULL;
    struct ember_tensor *yh = p ? ember_op_out(ctx, 5, yh_shape) : NULL;
    if (!yh)
        return NULL;
    /* the cache's keys and values: (B*H) matrices of L rows, the first `seen` of them used */
    struct ember_ptr keys = ember_tensor_ptr(cache), values = keys;
    values.off += (size_t)(b * heads * l * d);
    struct ember_gemm scores =
        ember_gemm_batched(ember_gemm_packed(false, true, len, seen, d), bh, len * d, l * d, len * seen);
    scores.alpha = 1.0f / sqrtf((float)d);
    struct ember_gemm mix =
        ember_gemm_batched(ember_gemm_packed(false, false, len, d, seen), bh, len * seen, l * d, len * d);
    if (ember_ctx_sgemm(ctx, &scores, ember_tensor_ptr(q), keys, ember_tensor_ptr(p)) != EMBER_OK ||
        ctx->ops->softmax_forward(ctx->dev, bh * len, seen, len, ember_tensor_ptr(p), ember_tensor_ptr(p)) !=
            EMBER_OK ||
        ember_ctx_sgemm(ctx, &mix, ember_tensor_ptr(p), values, ember_tensor_ptr(yh)) != EMBER_OK)
        return NULL;
    return merge_heads(ctx, yh, b, len, c, heads);
}
