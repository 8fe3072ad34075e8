/*
 * core/ops-conv.c — conv2d as im2col + sgemm.
 *
 * Convolution, for each image b of the batch:
 *   col[b] (C*KH*KW, OH*OW) = im2col(x[b])
 *   y[b]   (OC, OH*OW)      = w (OC, C*KH*KW) @ col[b] + bias
 * one batched sgemm over the whole batch, with w shared (stride 0).
 */
#include "ops-impl.h"

static bool conv_geometry(ember_ctx *ctx, const struct ember_tensor *x, const struct ember_tensor *w,
                          const struct ember_tensor *b, int stride, int padding,
                          struct ember_conv_geom *g)
{
    char sx[96], sw[96];
    if (x->ndim != 4 || w->ndim != 4 || x->shape[1] != w->shape[1] ||
        (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_conv2d takes x (N, C, H, W), w (OC, C, KH, KW) and b (OC); got x %s, w %s",
                   ember_shape_str(x, sx, sizeof sx), ember_shape_str(w, sw, sizeof sw));
        return false;
    }
    if (stride < 1 || padding < 0) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_conv2d: stride %d must be at least 1 and padding %d not negative",
                   stride, padding);
        return false;
    }
    *g = (struct ember_conv_geom){
        .n = x->shape[0], .c = x->shape[1], .h = x->shape[2], .w = x->shape[3],
        .kh = w->shape[2], .kw = w->shape[3], .stride = stride, .pad = padding};
    int64_t ph = g->h + 2 * g->pad - g->kh, pw = g->w + 2 * g->pad - g->kw;
    if (g->kh < 1 || g->kw < 1 || ph < 0 || pw < 0) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_conv2d: kernel %lldx%lld does not fit the padded input of x %s",
                   (long long)g->kh, (long long)g->kw, ember_shape_str(x, sx, sizeof sx));
        return false;
    }
    g->oh = ph / stride + 1;
    g->ow = pw / stride + 1;
    return true;
}

ember_tensor *ember_conv2d(ember_tensor *x, ember_tensor *w, ember_tensor *b, int stride, int padding)
{
    ember_ctx *ctx = ember_op_begin("ember_conv2d", x, w, b);
    struct ember_conv_geom g;
    if (!ctx || !w || !conv_geometry(ctx, x, w, b, stride, padding, &g))
        return NULL;
    struct ember_tensor *cx = ember_contiguous(x), *cw = cx ? ember_contiguous(w) : NULL;
    if (!cw)
        return NULL;
    int64_t ckk = g.c * g.kh * g.kw, hw = g.oh * g.ow;
    int64_t col_shape[3] = {g.n, ckk, hw}, y_shape[4] = {g.n, cw->shape[0], g.oh, g.ow};
    struct ember_tensor *col = ember_op_out(ctx, 3, col_shape);
    struct ember_tensor *y = col ? ember_op_out(ctx, 4, y_shape) : NULL;
    if (!y || ctx->ops->im2col(ctx->dev, &g, ember_tensor_ptr(cx), ember_tensor_ptr(col)) != EMBER_OK)
        return NULL;
    if (b) { /* y starts as the bias, repeated over each plane */
        int64_t bias_shape[3] = {1, b->shape[0], 1}, bias_stride[3] = {0, b->stride[0], 0};
        int64_t planes[3] = {g.n, y_shape[1], hw}, plane_stride[3];
        ember_contiguous_strides(3, planes, plane_stride);
        struct ember_tensor *bias = ember_tensor_view(b, 3, bias_shape, bias_stride, b->offset, EMBER_OWNER_TAPE);
        struct ember_tensor *y3 = bias ? ember_tensor_view(y, 3, planes, plane_stride, y->offset, EMBER_OWNER_TAPE) : NULL;
        if (!y3 || ember_unary_into(EMBER_COPY, y3, bias, 0.0f) != EMBER_OK)
            return NULL;
    }
    struct ember_gemm gm = {
        .m = y_shape[1], .n = hw, .k = ckk, .lda = ckk, .ldb = hw, .ldc = hw,
        .batch = g.n, .stride_a = 0, .stride_b = ckk * hw, .stride_c = y_shape[1] * hw,
        .alpha = 1.0f, .beta = b ? 1.0f : 0.0f};
    if (ember_gemm_into(&gm, cw, col, y) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, cx, cw, b)) {
        struct ember_node *n = ember_record(EMBER_OP_CONV2D, y, cx, cw, b);
        if (!n)
            return NULL;
        n->saved[0] = col;
        n->arg[0] = stride;
        n->arg[1] = padding;
    }
    return y;
}

/*
 * dw   += sum over b of dy[b] (OC, OH*OW) @ col[b]^T   (a batched product, then a sum over b)
 * db   += sum over b and positions of dy
 * dcol[b] = w^T @ dy[b], dx = col2im(dcol)             (only when x needs it)
 */
ember_status ember_backward_conv2d(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2], *col = n->saved[0];
    struct ember_tensor *dy = n->out->grad;
    ember_ctx *ctx = x->ctx;
    struct ember_conv_geom g;
    conv_geometry(ctx, x, w, b, (int)n->arg[0], (int)n->arg[1], &g);
    int64_t oc = w->shape[0], ckk = g.c * g.kh * g.kw, hw = g.oh * g.ow;
    float beta;

    if (w->requires_grad) {
        int64_t per_image[3] = {g.n, oc, ckk};
        struct ember_tensor *parts = ember_op_out(ctx, 3, per_image);
        struct ember_gemm gm = {
            .trans_b = true, .m = oc, .n = ckk, .k = hw, .lda = hw, .ldb = hw, .ldc = ckk,
            .batch = g.n, .stride_a = oc * hw, .stride_b = ckk * hw, .stride_c = oc * ckk,
            .alpha = 1.0f, .beta = 0.0f};
        struct ember_tensor *dw = parts ? ember_grad_target(w, &beta) : NULL;
        if (!dw || ember_gemm_into(&gm, dy, col, parts) != EMBER_OK ||
            ember_reduce_into(EMBER_SUM, dw, parts, 1, g.n, oc * ckk, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(w, dw) != EMBER_OK)
            return ctx->status;
    }
    if (b && b->requires_grad) {
        int64_t per_image[2] = {g.n, oc};
        struct ember_tensor *sums = ember_op_out(ctx, 2, per_image);
        struct ember_tensor *db = sums ? ember_grad_target(b, &beta) : NULL;
        if (!db || ember_reduce_into(EMBER_SUM, sums, dy, g.n * oc, hw, 1, 1.0f, 0.0f) != EMBER_OK ||
            ember_reduce_into(EMBER_SUM, db, sums, 1, g.n, oc, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(b, db) != EMBER_OK)
            return ctx->status;
    }
    if (x->requires_grad) {
        struct ember_tensor *dcol = ember_op_out_like(col), *dx = dcol ? ember_op_out_like(x) : NULL;
        struct ember_gemm gm = {
            .trans_a = true, .m = ckk, .n = hw, .k = oc, .lda = ckk, .ldb = hw, .ldc = hw,
            .batch = g.n, .stride_a = 0, .stride_b = oc * hw, .stride_c = ckk * hw,
            .alpha = 1.0f, .beta = 0.0f};
        if (!dx || ember_gemm_into(&gm, w, dy, dcol) != EMBER_OK ||
            ctx->ops->col2im(ctx->dev, &g, ember_tensor_ptr(dcol), ember_tensor_ptr(dx)) != EMBER_OK ||
            ember_grad_commit(x, dx) != EMBER_OK)
            return ctx->status;
    }
    return EMBER_OK;
}
