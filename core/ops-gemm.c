/* SPDX-License-Identifier: MIT */
/* core/ops-gemm.c — matmul and linear: forward and backward through sgemm. */
#include <string.h>

#include "ops-impl.h"

/* One (m, k) @ (k, n) product of contiguous row-major matrices, with the
 * leading dimensions that follow from the stored shapes. */
static struct ember_gemm gemm2d(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float beta)
{
    return (struct ember_gemm){.trans_a = trans_a,
                               .trans_b = trans_b,
                               .m = m,
                               .n = n,
                               .k = k,
                               .lda = trans_a ? m : k,
                               .ldb = trans_b ? k : n,
                               .ldc = n,
                               .batch = 1,
                               .alpha = 1.0f,
                               .beta = beta};
}

/* y = a @ b: a is (M, K), b is (K, N) */
ember_tensor *ember_matmul(ember_tensor *a, ember_tensor *b)
{
    ember_ctx *ctx = ember_op_begin("ember_matmul", a, b, NULL);
    if (!ctx || !b)
        return NULL;
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) {
        char sa[96], sb[96];
        ember_fail(ctx, EMBER_ERR_ARG, "ember_matmul takes (M, K) and (K, N); got %s and %s",
                   ember_shape_str(a, sa, sizeof sa), ember_shape_str(b, sb, sizeof sb));
        return NULL;
    }
    struct ember_tensor *ca = ember_contiguous(a), *cb = ca ? ember_contiguous(b) : NULL;
    if (!cb)
        return NULL;
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1], shape[2] = {m, n};
    struct ember_tensor *y = ember_op_out(ctx, 2, shape);
    struct ember_gemm g = gemm2d(false, false, m, n, k, 0.0f);
    if (!y || ember_gemm_into(&g, ca, cb, y) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, ca, cb, NULL) && !ember_record(EMBER_OP_MATMUL, y, ca, cb, NULL))
        return NULL;
    return y;
}

/* da += dy @ b^T, db += a^T @ dy */
ember_status ember_backward_matmul(struct ember_node *n)
{
    struct ember_tensor *a = n->in[0], *b = n->in[1], *dy = n->out->grad;
    int64_t m = a->shape[0], k = a->shape[1], cols = b->shape[1];
    float beta;
    if (a->requires_grad) {
        struct ember_tensor *da = ember_grad_target(a, &beta);
        struct ember_gemm g = gemm2d(false, true, m, k, cols, beta);
        if (!da || ember_gemm_into(&g, dy, b, da) != EMBER_OK || ember_grad_commit(a, da) != EMBER_OK)
            return a->ctx->status;
    }
    if (b->requires_grad) {
        struct ember_tensor *db = ember_grad_target(b, &beta);
        struct ember_gemm g = gemm2d(true, false, k, cols, m, beta);
        if (!db || ember_gemm_into(&g, a, dy, db) != EMBER_OK || ember_grad_commit(b, db) != EMBER_OK)
            return b->ctx->status;
    }
    return EMBER_OK;
}

/* x (..., in) with more than one leading axis: the rows of every
 * position, (-1, in), through the layer, and back to (..., out) */
static ember_tensor *linear_positions(ember_tensor *x, ember_tensor *w, ember_tensor *b)
{
    int64_t rows[2] = {-1, x->shape[x->ndim - 1]}, shape[EMBER_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = w->shape[0];
    return ember_reshape(ember_linear(ember_reshape(x, 2, rows), w, b), x->ndim, shape);
}

/* From this many rows of x on, a quantised product dequantises its weights
 * and runs an sgemm (a prompt, a training batch): the dequantising is then
 * shared by all the rows, and an sgemm's blocking beats quant_matmul's
 * single pass. Below it (generation's one row a token) quant_matmul reads
 * each block once and nothing else. */
#define QUANT_SGEMM_ROWS 16

/* w (out, in) quantised, as floats in a tensor of its own (not the
 * tape's), which the caller releases as soon as it is used */
static struct ember_tensor *dequantised(struct ember_tensor *w)
{
    ember_ctx *ctx = w->ctx;
    struct ember_tensor *wf = ember_tensor_alloc(ctx, EMBER_F32, 2, w->shape, EMBER_OWNER_USER);
    if (wf && ctx->ops->dequantize(ctx->dev, w->dtype, w->shape[0], w->shape[1], w->shape[0], (ember_ptr){0},
                                   ember_tensor_ptr(w), ember_tensor_ptr(wf)) != EMBER_OK) {
        ember_tensor_release(wf);
        return NULL;
    }
    return wf;
}

/* y = cx @ dequantised(w)^T + b, a new tape tensor */
static struct ember_tensor *quantised_product(ember_ctx *ctx, struct ember_tensor *cx, struct ember_tensor *w,
                                              struct ember_tensor *b, int ndim, const int64_t *shape)
{
    int64_t in = w->shape[1], out = w->shape[0], rows = ember_tensor_numel(cx) / in;
    struct ember_tensor *y = ember_op_out(ctx, ndim, shape);
    if (!y || (b && ember_unary_into(EMBER_COPY, y, b, 0.0f) != EMBER_OK))
        return NULL;
    if (rows >= QUANT_SGEMM_ROWS) {
        /* the floats live only for this product (not on the tape): a model's
         * matrices are dequantised one at a time, into one reused buffer */
        struct ember_tensor *wf = dequantised(w);
        struct ember_gemm g = gemm2d(false, true, rows, out, in, b ? 1.0f : 0.0f);
        ember_status st = wf ? ember_gemm_into(&g, cx, wf, y) : ctx->status;
        if (wf)
            ember_tensor_release(wf);
        if (st != EMBER_OK)
            return NULL;
    } else {
        struct ember_quant_gemm q = {.type = w->dtype,
                                     .m = rows,
                                     .n = out,
                                     .k = in,
                                     .beta = b ? 1.0f : 0.0f,
                                     .precision = ctx->matmul_precision};
        if (ctx->ops->quant_matmul(ctx->dev, &q, ember_tensor_ptr(cx), ember_tensor_ptr(w),
                                   ember_tensor_ptr(y)) != EMBER_OK)
            return NULL;
    }
    return y;
}

/* y = x @ dequantised(w)^T + b, w quantised (out, in); the tape's node
 * keeps w for dx = dy @ w (no gradient for w: a quantised tensor cannot
 * require one) */
static ember_tensor *linear_quantised(ember_tensor *x, ember_tensor *w, ember_tensor *b)
{
    ember_ctx *ctx = ember_op_begin("ember_linear", x, b, NULL);
    if (!ctx)
        return NULL;
    if (w->ctx != ctx || w->ndim != 2 || x->shape[x->ndim - 1] != w->shape[1] ||
        (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))) {
        char sx[96], sw[96], sb[96] = "none";
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_linear takes x (..., in), w (out, in), b (out) from one context; got %s, %s %s, %s",
                   ember_shape_str(x, sx, sizeof sx), ember_shape_str(w, sw, sizeof sw),
                   ember_dtype_name(w->dtype), b ? ember_shape_str(b, sb, sizeof sb) : sb);
        return NULL;
    }
    struct ember_tensor *cx = ember_contiguous(x);
    if (!cx)
        return NULL;
    int64_t in = w->shape[1], shape[EMBER_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[x->ndim - 1] = w->shape[0];
    struct ember_tensor *y; /* the product, or the one a selective recomputation's first run kept */
    if (ember_kept_product(ctx, x->ndim, shape, in, &y) != EMBER_OK)
        return NULL;
    if (!y &&
        (!(y = quantised_product(ctx, cx, w, b, x->ndim, shape)) || ember_keep_product(y, in) != EMBER_OK))
        return NULL;
    if (ember_grad_needed(ctx, cx, b, NULL) && !ember_record(EMBER_OP_LINEAR_QUANT, y, cx, w, b))
        return NULL;
    return y;
}

/* dx = dy @ dequantised(w), db += the sum of dy's rows; w has no gradient */
ember_status ember_backward_linear_quant(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2], *dy = ember_contiguous(n->out->grad);
    ember_ctx *ctx = x->ctx;
    int64_t in = w->shape[1], out = w->shape[0], rows = ember_tensor_numel(x) / in;
    float beta = 0.0f;
    if (!dy)
        return ctx->status;
    if (x->requires_grad) {
        struct ember_tensor *wf = dequantised(w), *dx = wf ? ember_grad_target(x, &beta) : NULL;
        struct ember_gemm g = gemm2d(false, false, rows, in, out, beta);
        ember_status st = dx ? ember_gemm_into(&g, dy, wf, dx) : ctx->status;
        if (wf)
            ember_tensor_release(wf);
        if (st != EMBER_OK || ember_grad_commit(x, dx) != EMBER_OK)
            return ctx->status;
    }
    if (b && b->requires_grad) { /* dy as (rows, out), summed over the rows it was broadcast along */
        const int64_t rows_out[2] = {rows, out};
        struct ember_tensor *dy2 =
            ember_tensor_view(dy, 2, rows_out, (const int64_t[]){out, 1}, dy->offset, EMBER_OWNER_TAPE);
        if (!dy2 || ember_grad_commit_reduced(b, dy2) != EMBER_OK)
            return ctx->status;
    }
    return EMBER_OK;
}

/* y = x @ w^T + b: x is (N, in) or (..., in), w is (out, in), b is (out) or NULL */
ember_tensor *ember_linear(ember_tensor *x, ember_tensor *w, ember_tensor *b)
{
    if (x && w && ember_dtype_quantised(w->dtype))
        return linear_quantised(x, w, b);
    ember_ctx *ctx = ember_op_begin("ember_linear", x, w, b);
    if (!ctx || !w)
        return NULL;
    if (x->ndim > 2 && w->ndim == 2 && x->shape[x->ndim - 1] == w->shape[1])
        return linear_positions(x, w, b);
    if (x->ndim != 2 || w->ndim != 2 || x->shape[1] != w->shape[1] ||
        (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))) {
        char sx[96], sw[96], sb[96] = "none";
        ember_fail(ctx, EMBER_ERR_ARG, "ember_linear takes x (N, in), w (out, in), b (out); got %s, %s, %s",
                   ember_shape_str(x, sx, sizeof sx), ember_shape_str(w, sw, sizeof sw),
                   b ? ember_shape_str(b, sb, sizeof sb) : sb);
        return NULL;
    }
    struct ember_tensor *cx = ember_contiguous(x), *cw = cx ? ember_contiguous(w) : NULL;
    if (!cw)
        return NULL;
    int64_t rows = x->shape[0], in = x->shape[1], out = w->shape[0], shape[2] = {rows, out};
    struct ember_tensor *y; /* the product, or the one a selective recomputation's first run kept */
    if (ember_kept_product(ctx, 2, shape, in, &y) != EMBER_OK)
        return NULL;
    if (!y) {
        /* y starts as b repeated on every row, and the product adds to it */
        struct ember_gemm g = gemm2d(false, true, rows, out, in, b ? 1.0f : 0.0f);
        if (!(y = ember_op_out(ctx, 2, shape)) ||
            (b && ember_unary_into(EMBER_COPY, y, b, 0.0f) != EMBER_OK) ||
            ember_gemm_into(&g, cx, cw, y) != EMBER_OK || ember_keep_product(y, in) != EMBER_OK)
            return NULL;
    }
    if (ember_grad_needed(ctx, cx, cw, b) && !ember_record(EMBER_OP_LINEAR, y, cx, cw, b))
        return NULL;
    return y;
}

/* dx = dy @ w, dw += dy^T @ x, db += sum over rows of dy */
ember_status ember_backward_linear(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2], *dy = n->out->grad;
    int64_t rows = x->shape[0], in = x->shape[1], out = w->shape[0];
    float beta;
    if (x->requires_grad) {
        struct ember_tensor *dx = ember_grad_target(x, &beta);
        struct ember_gemm g = gemm2d(false, false, rows, in, out, beta);
        if (!dx || ember_gemm_into(&g, dy, w, dx) != EMBER_OK || ember_grad_commit(x, dx) != EMBER_OK)
            return x->ctx->status;
    }
    if (w->requires_grad) {
        struct ember_tensor *dw = ember_grad_target(w, &beta);
        struct ember_gemm g = gemm2d(true, false, out, in, rows, beta);
        if (!dw || ember_gemm_into(&g, dy, x, dw) != EMBER_OK || ember_grad_commit(w, dw) != EMBER_OK)
            return w->ctx->status;
    }
    if (b && b->requires_grad) {
        struct ember_tensor *db = ember_grad_target(b, &beta);
        if (!db || ember_reduce_into(EMBER_SUM, db, dy, 1, rows, out, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(b, db) != EMBER_OK)
            return b->ctx->status;
    }
    return EMBER_OK;
}
