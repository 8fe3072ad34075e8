/* SPDX-License-Identifier: MIT */
/*
 * core/ops-conv.c — conv2d as im2col + sgemm.
 *
 * Convolution, for each image b of the batch:
 *   col[b] (C*KH*KW, OH*OW) = im2col(x[b])
 *   y[b]   (OC, OH*OW)      = w (OC, C*KH*KW) @ col[b] + bias
 * a batched sgemm with w shared (stride 0), over a group of images at a
 * time. The columns are nine times the input for a 3x3 kernel (29 MB for
 * one of ResNet-8's layers at batch 64): kept for the backward pass they
 * made most of a ResNet's memory, so they are made again there, group by
 * group. On the CPU, made for the whole batch they would leave the caches
 * before the product reads them: a group there is about 2 MiB of columns,
 * used while still in the cache. A GPU pays a launch per group instead and
 * says how large its groups may be (conv_columns_bytes in its table). A 1x1
 * kernel at stride 1 without padding has the input for its columns: no
 * copy is made (columns_are_input).
 *
 * Or, where core/conv-algo.c picks it, a primitive that computes each pass
 * with no columns at all: the CPU's conv_winograd in 2x2 or 4x4 tiles (3x3
 * at stride 1, with channels and output enough), or conv_direct (any shape;
 * the GPUs' layers, and the CPU's for a first layer's one channel). The
 * profile's op rows say which ran: "conv2d forward [winograd4]".
 *
 * Planes of few positions (ResNet-18's last stages on a small image: 4x4,
 * 2x2) would make each image's products a few columns wide, its weight
 * gradient a sum of per-image matrices as large as w: there a group's
 * images stand side by side instead, their columns one (C*KH*KW, G*OH*OW)
 * matrix, so that each pass is one product over the whole group
 * (SIDE_BY_SIDE_POSITIONS).
 *
 * A grouped convolution (groups > 1: a MobileNet's depthwise layers) always
 * runs conv_grouped, each output summed from its own group's channels.
 */
#include "conv-algo-impl.h"
#include "ops-impl.h"
#include "profile-impl.h"

/* bytes of columns in one group of images where the backend does not say:
 * a CPU's cache */
#define CONV_COLUMNS_BYTES_CACHED ((size_t)2 << 20)

/* images in one group (at least one) */
static int64_t group_images(const ember_ctx *ctx, const struct ember_conv_geom *g)
{
    size_t bytes = ctx->ops->conv_columns_bytes ? ctx->ops->conv_columns_bytes : CONV_COLUMNS_BYTES_CACHED;
    int64_t per_image = g->c * g->kh * g->kw * g->oh * g->ow;
    int64_t group = per_image > 0 ? (int64_t)(bytes / sizeof(float)) / per_image : g->n;
    return group < 1 ? 1 : group > g->n ? g->n : group;
}

/* A 1x1 kernel at stride 1 without padding: an image's columns are the
 * image itself (row c, position p is x[c, p]), so nothing is copied: the
 * products read x, and the input gradient's product writes dx, where
 * col2im would only have copied (a MobileNet's or a bottleneck's pointwise
 * layers). */
static bool columns_are_input(const struct ember_conv_geom *g)
{
    return g->kh == 1 && g->kw == 1 && g->stride == 1 && g->pad == 0;
}

/* one pass of a convolution by the columnless primitive `algo` names */
static ember_status conv_pass(ember_ctx *ctx, enum ember_conv_algo algo, const struct ember_conv_job *job,
                              const struct ember_tensor *x, const struct ember_tensor *w,
                              const struct ember_tensor *y)
{
    return (algo == EMBER_CONV_DIRECT    ? ctx->ops->conv_direct
            : algo == EMBER_CONV_GROUPED ? ctx->ops->conv_grouped
                                         : ctx->ops->conv_winograd)(ctx->dev, job, ember_tensor_ptr(x),
                                                                    ember_tensor_ptr(w), ember_tensor_ptr(y));
}

/* t's memory from element `at` on: image `at / image size` of a batch */
static ember_ptr ptr_at(const struct ember_tensor *t, int64_t at)
{
    ember_ptr p = ember_tensor_ptr(t);
    p.off += (size_t)at;
    return p;
}

/* Output planes of at most this many positions put a group's images side
 * by side (the top): the products then have G*OH*OW columns, not OH*OW,
 * and the weight gradient is summed inside one product rather than from a
 * matrix as large as w per image (302 MB for ResNet-18's last stage at
 * batch 32). Measured at batch 32, forward and backward on 2 threads
 * (2026-12-03, docs/benchmarks.md): 2x2 planes of 512 channels 5x faster,
 * 4x4 of 256 1.5x; 7x7 and 8x8 planes of 32 to 128 channels 0 to 25%
 * slower, their images' products wide enough already. */
#define SIDE_BY_SIDE_POSITIONS 16

static bool side_by_side(const struct ember_conv_geom *g)
{
    return g->n > 1 && g->oh * g->ow <= SIDE_BY_SIDE_POSITIONS;
}

/* The contiguous (a, b, c) block of t from element `at`, seen as (b, a, c):
 * a group's images (G, rows, positions) as rows of images side by side
 * (rows, G, positions), or back */
static struct ember_tensor *swapped(struct ember_tensor *t, int64_t at, int64_t a, int64_t b, int64_t c)
{
    int64_t shape[3] = {b, a, c}, stride[3] = {c, b * c, 1};
    return ember_tensor_view(t, 3, shape, stride, t->offset + (size_t)at, EMBER_OWNER_TAPE);
}

/* t's first a*b*c elements as a contiguous (a, b, c) tensor */
static struct ember_tensor *block(struct ember_tensor *t, int64_t at, int64_t a, int64_t b, int64_t c)
{
    int64_t shape[3] = {a, b, c}, stride[3] = {b * c, c, 1};
    return ember_tensor_view(t, 3, shape, stride, t->offset + (size_t)at, EMBER_OWNER_TAPE);
}

static ember_status copy_into(ember_ctx *ctx, struct ember_tensor *out, const struct ember_tensor *in)
{
    return out && in ? ember_unary_into(EMBER_COPY, out, in, 0.0f) : ctx->status;
}

/* y = the convolution, a group's images side by side: their columns as one
 * matrix (wide), one product with w into yw (the bias first), and y's planes
 * put back image by image */
static ember_status forward_side_by_side(ember_ctx *ctx, const struct ember_conv_geom *g,
                                         struct ember_tensor *x, struct ember_tensor *w,
                                         struct ember_tensor *b, struct ember_tensor *y)
{
    bool same = columns_are_input(g);
    int64_t oc = w->shape[0], ckk = g->c * g->kh * g->kw, hw = g->oh * g->ow;
    int64_t group = same ? g->n : group_images(ctx, g);
    int64_t col_shape[3] = {group, ckk, hw}, wide_shape[3] = {ckk, group, hw}, yw_shape[3] = {oc, group, hw};
    struct ember_tensor *col = same ? x : ember_op_out(ctx, 3, col_shape);
    struct ember_tensor *wide = col ? ember_op_out(ctx, 3, wide_shape) : NULL;
    struct ember_tensor *yw = wide ? ember_op_out(ctx, 3, yw_shape) : NULL;
    if (!yw)
        return ctx->status;
    for (int64_t at = 0; at < g->n; at += group) {
        struct ember_conv_geom part = *g;
        part.n = g->n - at < group ? g->n - at : group;
        int64_t cols = part.n * hw, col_at = same ? at * ckk * hw : 0;
        if (!same && ctx->ops->im2col(ctx->dev, &part, ptr_at(x, at * g->c * g->h * g->w),
                                      ember_tensor_ptr(col)) != EMBER_OK)
            return ctx->status;
        if (copy_into(ctx, block(wide, 0, ckk, part.n, hw), swapped(col, col_at, part.n, ckk, hw)) !=
            EMBER_OK)
            return ctx->status;
        if (b) { /* yw starts as the bias, repeated over the group's positions */
            int64_t shape[3] = {oc, part.n, hw}, stride[3] = {b->stride[0], 0, 0};
            struct ember_tensor *bias = ember_tensor_view(b, 3, shape, stride, b->offset, EMBER_OWNER_TAPE);
            if (copy_into(ctx, block(yw, 0, oc, part.n, hw), bias) != EMBER_OK)
                return ctx->status;
        }
        struct ember_gemm gm = ember_gemm_packed(false, false, oc, cols, ckk);
        gm.beta = b ? 1.0f : 0.0f;
        if (ember_ctx_sgemm(ctx, &gm, ember_tensor_ptr(w), ember_tensor_ptr(wide), ember_tensor_ptr(yw)) !=
                EMBER_OK ||
            copy_into(ctx, block(y, at * oc * hw, part.n, oc, hw), swapped(yw, 0, oc, part.n, hw)) !=
                EMBER_OK)
            return ctx->status;
    }
    return EMBER_OK;
}

static bool conv_geometry(ember_ctx *ctx, const struct ember_tensor *x, const struct ember_tensor *w,
                          const struct ember_tensor *b, int stride, int padding, int groups,
                          struct ember_conv_geom *g)
{
    char sx[96], sw[96];
    if (groups < 1) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_conv2d_grouped: groups %d must be at least 1", groups);
        return false;
    }
    if (x->ndim != 4 || w->ndim != 4 || x->shape[1] != w->shape[1] * groups || w->shape[0] % groups != 0 ||
        (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))) {
        if (groups == 1)
            ember_fail(ctx, EMBER_ERR_ARG,
                       "ember_conv2d takes x (N, C, H, W), w (OC, C, KH, KW) and b (OC); got x %s, w %s",
                       ember_shape_str(x, sx, sizeof sx), ember_shape_str(w, sw, sizeof sw));
        else
            ember_fail(
                ctx, EMBER_ERR_ARG,
                "ember_conv2d_grouped takes x (N, C, H, W), w (OC, C / groups, KH, KW) with OC a multiple "
                "of groups, and b (OC); got x %s, w %s, groups %d",
                ember_shape_str(x, sx, sizeof sx), ember_shape_str(w, sw, sizeof sw), groups);
        return false;
    }
    if (stride < 1 || padding < 0) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_conv2d: stride %d must be at least 1 and padding %d not negative", stride, padding);
        return false;
    }
    *g = (struct ember_conv_geom){.n = x->shape[0],
                                  .c = x->shape[1],
                                  .h = x->shape[2],
                                  .w = x->shape[3],
                                  .kh = w->shape[2],
                                  .kw = w->shape[3],
                                  .stride = stride,
                                  .pad = padding};
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
    return ember_conv2d_grouped(x, w, b, stride, padding, 1);
}

ember_tensor *ember_conv2d_grouped(ember_tensor *x, ember_tensor *w, ember_tensor *b, int stride, int padding,
                                   int groups)
{
    ember_ctx *ctx = ember_op_begin(groups == 1 ? "ember_conv2d" : "ember_conv2d_grouped", x, w, b);
    struct ember_conv_geom g;
    if (!ctx || !w || !conv_geometry(ctx, x, w, b, stride, padding, groups, &g))
        return NULL;
    struct ember_tensor *cx = ember_contiguous(x), *cw = cx ? ember_contiguous(w) : NULL;
    if (!cw)
        return NULL;
    enum ember_conv_algo algo = EMBER_CONV_GROUPED;
    if (groups == 1 && !ember_conv_algo_choose(ctx, &g, cw->shape[0], &algo))
        return NULL;
    ember_profile_label(ctx, "conv2d", ember_conv_algo_phase(algo, true));
    bool columnless = algo != EMBER_CONV_IM2COL, same = columns_are_input(&g);
    bool wide = !columnless && side_by_side(&g);
    int64_t ckk = g.c * g.kh * g.kw, hw = g.oh * g.ow, group = same ? g.n : group_images(ctx, &g);
    int64_t col_shape[3] = {group, ckk, hw}, y_shape[4] = {g.n, cw->shape[0], g.oh, g.ow};
    struct ember_tensor *col = columnless || same || wide ? NULL : ember_op_out(ctx, 3, col_shape);
    struct ember_tensor *y = col || columnless || same || wide ? ember_op_out(ctx, 4, y_shape) : NULL;
    if (!y || (wide && forward_side_by_side(ctx, &g, cx, cw, b, y) != EMBER_OK))
        return NULL;
    if (b && !wide) { /* y starts as the bias, repeated over each plane */
        int64_t bias_shape[3] = {1, b->shape[0], 1}, bias_stride[3] = {0, b->stride[0], 0};
        int64_t planes[3] = {g.n, y_shape[1], hw}, plane_stride[3];
        ember_contiguous_strides(3, planes, plane_stride);
        struct ember_tensor *bias =
            ember_tensor_view(b, 3, bias_shape, bias_stride, b->offset, EMBER_OWNER_TAPE);
        struct ember_tensor *y3 =
            bias ? ember_tensor_view(y, 3, planes, plane_stride, y->offset, EMBER_OWNER_TAPE) : NULL;
        if (!y3 || ember_unary_into(EMBER_COPY, y3, bias, 0.0f) != EMBER_OK)
            return NULL;
    }
    if (columnless) {
        struct ember_conv_job job = {.g = g,
                                     .oc = y_shape[1],
                                     .pass = EMBER_CONV_FORWARD,
                                     .beta = b ? 1.0f : 0.0f,
                                     .tile = ember_conv_algo_tile(algo),
                                     .groups = groups};
        if (conv_pass(ctx, algo, &job, cx, cw, y) != EMBER_OK)
            return NULL;
    }
    struct ember_gemm gm = ember_gemm_batched(ember_gemm_packed(false, false, y_shape[1], hw, ckk), 0, 0,
                                              ckk * hw, y_shape[1] * hw);
    gm.beta = b ? 1.0f : 0.0f;
    for (int64_t at = 0; at < g.n && !columnless && !wide;
         at += group) { /* the columns of a group, then their product */
        struct ember_conv_geom part = g;
        part.n = gm.batch = g.n - at < group ? g.n - at : group;
        ember_ptr x_at = ptr_at(cx, at * g.c * g.h * g.w);
        if ((!same && ctx->ops->im2col(ctx->dev, &part, x_at, ember_tensor_ptr(col)) != EMBER_OK) ||
            ember_ctx_sgemm(ctx, &gm, ember_tensor_ptr(cw), same ? x_at : ember_tensor_ptr(col),
                            ptr_at(y, at * y_shape[1] * hw)) != EMBER_OK)
            return NULL;
    }
    if (ember_grad_needed(ctx, cx, cw, b)) { /* the backward pass makes the columns again */
        struct ember_node *n = ember_record(EMBER_OP_CONV2D, y, cx, cw, b);
        if (!n)
            return NULL;
        n->arg[0] = stride;
        n->arg[1] = padding;
        n->arg[2] = algo; /* the backward pass runs the same algorithm */
        n->arg[3] = groups;
    }
    return y;
}

/* db += sum over b and positions of dy */
static ember_status backward_bias(struct ember_node *n, const struct ember_conv_geom *g)
{
    struct ember_tensor *b = n->in[2], *dy = n->out->grad;
    ember_ctx *ctx = b->ctx;
    int64_t oc = n->in[1]->shape[0], per_plane[2] = {g->n, oc};
    float beta;
    struct ember_tensor *sums = ember_op_out(ctx, 2, per_plane);
    struct ember_tensor *db = sums ? ember_grad_target(b, &beta) : NULL;
    if (!db || ember_reduce_into(EMBER_SUM, sums, dy, g->n * oc, g->oh * g->ow, 1, 1.0f, 0.0f) != EMBER_OK ||
        ember_reduce_into(EMBER_SUM, db, sums, 1, g->n, oc, 1.0f, beta) != EMBER_OK ||
        ember_grad_commit(b, db) != EMBER_OK)
        return ctx->status;
    return EMBER_OK;
}

/* conv_direct's weight gradient is a sum over the batch's positions for
 * few weights: cut into slices of at least this many positions (whole
 * images), summed side by side and then added up, it keeps a GPU busy
 * (ResNet-8's 16-channel layers at batch 256: 43 slices of 6 images, each
 * work-item of a 64-wide work-group then summing some 70 positions). The
 * slices' partial sums take at most DIRECT_SLICES_BYTES: a layer with more
 * weights than that allows makes work-groups enough without slices. */
#define DIRECT_SLICE_POSITIONS 4096
#define DIRECT_MAX_SLICES      4096
#define DIRECT_SLICES_BYTES    ((int64_t)16 << 20)

static int64_t direct_slices(const struct ember_conv_geom *g, int64_t weights)
{
    int64_t slices = g->n * g->oh * g->ow / DIRECT_SLICE_POSITIONS;
    int64_t room = DIRECT_SLICES_BYTES / (int64_t)sizeof(float) / (weights > 0 ? weights : 1);
    slices = slices > g->n ? g->n : slices;
    slices = slices > room ? room : slices > DIRECT_MAX_SLICES ? DIRECT_MAX_SLICES : slices;
    if (slices < 2)
        return 1;
    int64_t per = (g->n + slices - 1) / slices;
    return (g->n + per - 1) / per; /* none of them empty */
}

/* dw += the weight gradient: by conv_direct in slices into `parts`, then
 * their sum, or straight into dw */
static ember_status backward_weights(ember_ctx *ctx, enum ember_conv_algo algo, struct ember_conv_job *job,
                                     struct ember_tensor *x, struct ember_tensor *w, struct ember_tensor *dy)
{
    struct ember_tensor *dw = ember_grad_target(w, &job->beta);
    job->pass = EMBER_CONV_WEIGHT_GRAD;
    int64_t weights = ember_tensor_numel(w);
    job->slices =
        algo == EMBER_CONV_DIRECT || algo == EMBER_CONV_GROUPED ? direct_slices(&job->g, weights) : 1;
    int64_t part_shape[2] = {job->slices, weights};
    struct ember_tensor *parts = dw && job->slices > 1 ? ember_op_out(ctx, 2, part_shape) : dw;
    if (!parts || conv_pass(ctx, algo, job, x, parts, dy) != EMBER_OK ||
        (parts != dw &&
         ember_reduce_into(EMBER_SUM, dw, parts, 1, job->slices, weights, 1.0f, job->beta) != EMBER_OK) ||
        ember_grad_commit(w, dw) != EMBER_OK)
        return ctx->status;
    return EMBER_OK;
}

/* dw and dx by the backend's columnless passes, straight into their targets */
static ember_status backward_columnless(struct ember_node *n, const struct ember_conv_geom *g)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *dy = n->out->grad;
    ember_ctx *ctx = x->ctx;
    enum ember_conv_algo algo = (enum ember_conv_algo)n->arg[2];
    struct ember_conv_job job = {
        .g = *g, .oc = w->shape[0], .tile = ember_conv_algo_tile(algo), .groups = n->arg[3]};
    if (w->requires_grad && backward_weights(ctx, algo, &job, x, w, dy) != EMBER_OK)
        return ctx->status;
    job.slices = 0;
    if (x->requires_grad) {
        struct ember_tensor *dx = ember_op_out_like(x);
        job.pass = EMBER_CONV_INPUT_GRAD, job.beta = 0.0f;
        if (!dx || conv_pass(ctx, algo, &job, dx, w, dy) != EMBER_OK || ember_grad_commit(x, dx) != EMBER_OK)
            return ctx->status;
    }
    return EMBER_OK;
}

/* dw, dx and db with a group's images side by side (forward_side_by_side):
 * dyw (OC, G*OH*OW) is dy's planes side by side, wide the columns likewise;
 * dw += dyw @ wide^T, summed over the group's positions in the product
 * itself, and w^T @ dyw back into wide, put back image by image into the
 * columns for col2im (or into dx where the columns are x) */
static ember_status backward_side_by_side(struct ember_node *n, const struct ember_conv_geom *g)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2], *dy = n->out->grad;
    ember_ctx *ctx = x->ctx;
    bool same = columns_are_input(g);
    int64_t oc = w->shape[0], ckk = g->c * g->kh * g->kw, hw = g->oh * g->ow;
    int64_t group = same ? g->n : group_images(ctx, g);
    int64_t col_shape[3] = {group, ckk, hw}, wide_shape[3] = {ckk, group, hw}, dyw_shape[3] = {oc, group, hw};
    struct ember_tensor *col = same ? NULL : ember_op_out(ctx, 3, col_shape);
    struct ember_tensor *wide = same || col ? ember_op_out(ctx, 3, wide_shape) : NULL;
    struct ember_tensor *dyw = wide ? ember_op_out(ctx, 3, dyw_shape) : NULL;
    float beta = 0.0f;
    struct ember_tensor *dw = dyw && w->requires_grad ? ember_grad_target(w, &beta) : NULL;
    struct ember_tensor *dx = dyw && x->requires_grad ? ember_op_out_like(x) : NULL;
    if (!dyw || (w->requires_grad && !dw) || (x->requires_grad && !dx))
        return ctx->status;
    for (int64_t at = 0; at < g->n; at += group) {
        struct ember_conv_geom part = *g;
        part.n = g->n - at < group ? g->n - at : group;
        int64_t cols = part.n * hw, x_at = at * g->c * g->h * g->w;
        if (copy_into(ctx, block(dyw, 0, oc, part.n, hw), swapped(dy, at * oc * hw, part.n, oc, hw)) !=
            EMBER_OK)
            return ctx->status;
        if (w->requires_grad) {
            struct ember_gemm gw = ember_gemm_packed(false, true, oc, ckk, cols);
            gw.beta = at ? 1.0f : beta;
            if ((!same &&
                 ctx->ops->im2col(ctx->dev, &part, ptr_at(x, x_at), ember_tensor_ptr(col)) != EMBER_OK) ||
                copy_into(ctx, block(wide, 0, ckk, part.n, hw),
                          same ? swapped(x, x_at, part.n, ckk, hw) : swapped(col, 0, part.n, ckk, hw)) !=
                    EMBER_OK ||
                ember_ctx_sgemm(ctx, &gw, ember_tensor_ptr(dyw), ember_tensor_ptr(wide),
                                ember_tensor_ptr(dw)) != EMBER_OK)
                return ctx->status;
        }
        if (x->requires_grad) {
            struct ember_gemm gx = ember_gemm_packed(true, false, ckk, cols, oc);
            if (ember_ctx_sgemm(ctx, &gx, ember_tensor_ptr(w), ember_tensor_ptr(dyw),
                                ember_tensor_ptr(wide)) != EMBER_OK ||
                copy_into(ctx, same ? block(dx, x_at, part.n, ckk, hw) : block(col, 0, part.n, ckk, hw),
                          swapped(wide, 0, ckk, part.n, hw)) != EMBER_OK ||
                (!same &&
                 ctx->ops->col2im(ctx->dev, &part, ember_tensor_ptr(col), ptr_at(dx, x_at)) != EMBER_OK))
                return ctx->status;
        }
    }
    if ((dw && ember_grad_commit(w, dw) != EMBER_OK) ||
        (b && b->requires_grad && backward_bias(n, g) != EMBER_OK) ||
        (dx && ember_grad_commit(x, dx) != EMBER_OK))
        return ctx->status;
    return EMBER_OK;
}

/*
 * dw   += sum over b of dy[b] (OC, OH*OW) @ col[b]^T   (a batched product, then a sum over b)
 * db   += sum over b and positions of dy
 * dcol[b] = w^T @ dy[b], dx = col2im(dcol)             (only when x needs it)
 * group by group, the columns made again from x (see the top).
 */
ember_status ember_backward_conv2d(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *w = n->in[1], *b = n->in[2];
    struct ember_tensor *dy = n->out->grad;
    ember_ctx *ctx = x->ctx;
    struct ember_conv_geom g;
    conv_geometry(ctx, x, w, b, (int)n->arg[0], (int)n->arg[1], (int)n->arg[3], &g);
    bool same = columns_are_input(&g);
    int64_t oc = w->shape[0], ckk = g.c * g.kh * g.kw, hw = g.oh * g.ow;
    int64_t group = same ? g.n : group_images(ctx, &g);
    float beta;
    enum ember_conv_algo algo = (enum ember_conv_algo)n->arg[2];
    ember_profile_label(ctx, "conv2d", ember_conv_algo_phase(algo, false));
    if (algo != EMBER_CONV_IM2COL) {
        ember_status st = backward_columnless(n, &g);
        if (st != EMBER_OK)
            return st;
        return b && b->requires_grad ? backward_bias(n, &g) : EMBER_OK;
    }

    if (side_by_side(&g))
        return backward_side_by_side(n, &g);

    /* per group: its columns, their part of dw; then w^T dy into the same
     * buffer and col2im into dx (x itself and dx itself where the columns
     * are the input) */
    int64_t col_shape[3] = {group, ckk, hw}, per_image[3] = {g.n, oc, ckk};
    struct ember_tensor *col = same ? NULL : ember_op_out(ctx, 3, col_shape);
    bool ready = same || col;
    struct ember_tensor *parts = ready && w->requires_grad ? ember_op_out(ctx, 3, per_image) : NULL;
    struct ember_tensor *dx = ready && x->requires_grad ? ember_op_out_like(x) : NULL;
    if (!ready || (w->requires_grad && !parts) || (x->requires_grad && !dx))
        return ctx->status;
    struct ember_gemm gw =
        ember_gemm_batched(ember_gemm_packed(false, true, oc, ckk, hw), 0, oc * hw, ckk * hw, oc * ckk);
    struct ember_gemm gx =
        ember_gemm_batched(ember_gemm_packed(true, false, ckk, hw, oc), 0, 0, oc * hw, ckk * hw);
    for (int64_t at = 0; at < g.n; at += group) {
        struct ember_conv_geom part = g;
        part.n = gw.batch = gx.batch = g.n - at < group ? g.n - at : group;
        ember_ptr dy_at = ptr_at(dy, at * oc * hw), x_at = ptr_at(x, at * g.c * g.h * g.w);
        ember_ptr cols = same ? x_at : ember_tensor_ptr(col);
        if (w->requires_grad &&
            ((!same && ctx->ops->im2col(ctx->dev, &part, x_at, cols) != EMBER_OK) ||
             ember_ctx_sgemm(ctx, &gw, dy_at, cols, ptr_at(parts, at * oc * ckk)) != EMBER_OK))
            return ctx->status;
        if (x->requires_grad) {
            ember_ptr dx_at = ptr_at(dx, at * g.c * g.h * g.w);
            if (ember_ctx_sgemm(ctx, &gx, ember_tensor_ptr(w), dy_at, same ? dx_at : cols) != EMBER_OK ||
                (!same && ctx->ops->col2im(ctx->dev, &part, cols, dx_at) != EMBER_OK))
                return ctx->status;
        }
    }
    if (w->requires_grad) {
        struct ember_tensor *dw = ember_grad_target(w, &beta);
        if (!dw || ember_reduce_into(EMBER_SUM, dw, parts, 1, g.n, oc * ckk, 1.0f, beta) != EMBER_OK ||
            ember_grad_commit(w, dw) != EMBER_OK)
            return ctx->status;
    }
    if (b && b->requires_grad && backward_bias(n, &g) != EMBER_OK)
        return ctx->status;
    if (x->requires_grad && ember_grad_commit(x, dx) != EMBER_OK)
        return ctx->status;
    return EMBER_OK;
}
