/* SPDX-License-Identifier: MIT */
/* core/ops-view.c — reshape, flatten, transpose, narrow, contiguous, pad: views and copies. */
#include "ops-impl.h"
#include "profile-impl.h"
#include <string.h>

/* A contiguous copy of x, or x itself. Ops call it on their inputs before
 * their own work, so it gives the profile's label back to the op that
 * called it when it is done. */
ember_tensor *ember_contiguous(ember_tensor *x)
{
    if (!x)
        return NULL;
    struct ember_profile_mark caller = ember_profile_save(x->ctx);
    ember_ctx *ctx = ember_op_begin("ember_contiguous", x, NULL, NULL);
    struct ember_tensor *y = x;
    if (ctx && !ember_tensor_is_contiguous(x)) {
        y = ember_unary_new(EMBER_COPY, x, 0.0f);
        if (y && ember_grad_needed(ctx, x, NULL, NULL) &&
            !ember_record(EMBER_OP_CONTIGUOUS, y, x, NULL, NULL))
            y = NULL;
    }
    ember_profile_restore(x->ctx, caller);
    return ctx ? y : NULL;
}

/* dx = dy */
ember_status ember_backward_contiguous(struct ember_node *n)
{
    return ember_grad_commit(n->in[0], n->out->grad);
}

ember_tensor *ember_reshape(ember_tensor *x, int ndim, const int64_t *shape)
{
    ember_ctx *ctx = ember_op_begin("ember_reshape", x, NULL, NULL);
    if (!ctx)
        return NULL;
    if (ndim < 0 || ndim > EMBER_MAX_DIMS || (ndim > 0 && !shape)) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_reshape: bad shape (%d dimensions)", ndim);
        return NULL;
    }
    int64_t dims[EMBER_MAX_DIMS], known = 1;
    int infer = -1;
    for (int i = 0; i < ndim; i++) {
        dims[i] = shape[i];
        if (shape[i] == -1 && infer < 0) {
            infer = i;
        } else if (shape[i] < 0) {
            ember_fail(ctx, EMBER_ERR_ARG, "ember_reshape: dimension %d is %lld; only one -1 is allowed", i,
                       (long long)shape[i]);
            return NULL;
        } else {
            known *= shape[i];
        }
    }
    int64_t numel = ember_shape_numel(x->ndim, x->shape);
    if (infer >= 0)
        dims[infer] = known ? numel / known : 0;
    if (ember_shape_numel(ndim, dims) != numel) {
        char s[96];
        ember_fail(ctx, EMBER_ERR_ARG, "ember_reshape: cannot view %s (%lld elements) as %lld elements",
                   ember_shape_str(x, s, sizeof s), (long long)numel,
                   (long long)ember_shape_numel(ndim, dims));
        return NULL;
    }
    struct ember_tensor *src = ember_contiguous(x);
    if (!src)
        return NULL;
    int64_t stride[EMBER_MAX_DIMS];
    ember_contiguous_strides(ndim, dims, stride);
    struct ember_tensor *y = ember_tensor_view(src, ndim, dims, stride, src->offset, EMBER_OWNER_TAPE);
    if (y && ember_grad_needed(ctx, src, NULL, NULL) && !ember_record(EMBER_OP_RESHAPE, y, src, NULL, NULL))
        return NULL;
    return y;
}

/* dx = dy viewed in x's shape */
ember_status ember_backward_reshape(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *dy = n->out->grad;
    int64_t stride[EMBER_MAX_DIMS];
    ember_contiguous_strides(x->ndim, x->shape, stride);
    struct ember_tensor *dx = ember_tensor_view(dy, x->ndim, x->shape, stride, dy->offset, EMBER_OWNER_TAPE);
    return dx ? ember_grad_commit(x, dx) : x->ctx->status;
}

/* (N, d1, d2, ...) -> (N, d1 * d2 * ...) */
ember_tensor *ember_flatten(ember_tensor *x)
{
    if (!ember_op_begin("ember_flatten", x, NULL, NULL))
        return NULL;
    if (x->ndim < 1) {
        ember_fail(x->ctx, EMBER_ERR_ARG, "ember_flatten needs a batch axis; the tensor is a scalar");
        return NULL;
    }
    int64_t shape[2] = {x->shape[0], -1};
    if (x->shape[0] == 0)
        shape[1] = ember_shape_numel(x->ndim - 1, x->shape + 1);
    return ember_reshape(x, 2, shape);
}

/* y = x with axes axis0 and axis1 swapped: same storage, swapped strides */
ember_tensor *ember_transpose(ember_tensor *x, int axis0, int axis1)
{
    ember_ctx *ctx = ember_op_begin("ember_transpose", x, NULL, NULL);
    if (!ctx)
        return NULL;
    int a0 = ember_op_axis(ctx, "ember_transpose", axis0, x->ndim);
    int a1 = a0 < 0 ? -1 : ember_op_axis(ctx, "ember_transpose", axis1, x->ndim);
    if (a1 < 0)
        return NULL;
    int64_t shape[EMBER_MAX_DIMS], stride[EMBER_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        int from = i == a0 ? a1 : i == a1 ? a0 : i;
        shape[i] = x->shape[from];
        stride[i] = x->stride[from];
    }
    struct ember_tensor *y = ember_tensor_view(x, x->ndim, shape, stride, x->offset, EMBER_OWNER_TAPE);
    if (y && ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *n = ember_record(EMBER_OP_TRANSPOSE, y, x, NULL, NULL);
        if (!n)
            return NULL;
        n->arg[0] = a0;
        n->arg[1] = a1;
    }
    return y;
}

/* dx = dy with the two axes swapped back, made contiguous */
ember_status ember_backward_transpose(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *dy = n->out->grad;
    int a0 = (int)n->arg[0], a1 = (int)n->arg[1];
    int64_t stride[EMBER_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        stride[i] = dy->stride[i == a0 ? a1 : i == a1 ? a0 : i];
    struct ember_tensor *back =
        ember_tensor_view(dy, x->ndim, x->shape, stride, dy->offset, EMBER_OWNER_TAPE);
    if (!back)
        return x->ctx->status;
    struct ember_tensor *dx = ember_unary_new(EMBER_COPY, back, 0.0f);
    return dx ? ember_grad_commit(x, dx) : x->ctx->status;
}

/* y = x[..., start : start + length, ...] along `axis`: a view */
ember_tensor *ember_narrow(ember_tensor *x, int axis, int64_t start, int64_t length)
{
    ember_ctx *ctx = ember_op_begin("ember_narrow", x, NULL, NULL);
    if (!ctx)
        return NULL;
    int a = ember_op_axis(ctx, "ember_narrow", axis, x->ndim);
    if (a < 0)
        return NULL;
    if (start < 0 || length < 0 || start + length > x->shape[a]) {
        char sx[96];
        ember_fail(ctx, EMBER_ERR_ARG, "ember_narrow: positions %lld to %lld are not inside axis %d of %s",
                   (long long)start, (long long)(start + length), axis, ember_shape_str(x, sx, sizeof sx));
        return NULL;
    }
    int64_t shape[EMBER_MAX_DIMS];
    memcpy(shape, x->shape, sizeof shape);
    shape[a] = length;
    struct ember_tensor *y = ember_tensor_view(x, x->ndim, shape, x->stride,
                                               x->offset + (size_t)(start * x->stride[a]), EMBER_OWNER_TAPE);
    if (y && ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *n = ember_record(EMBER_OP_NARROW, y, x, NULL, NULL);
        if (!n)
            return NULL;
        n->arg[0] = a;
        n->arg[1] = start;
    }
    return y;
}

/* dx = dy in the narrowed part, 0 elsewhere; a leaf's gradient has dy added to that part in place */
ember_status ember_backward_narrow(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *dy = n->out->grad;
    int a = (int)n->arg[0];
    float beta;
    struct ember_tensor *dx = ember_grad_target(x, &beta);
    if (!dx || (beta == 0.0f && ember_tensor_fill(dx, 0.0f) != EMBER_OK))
        return x->ctx->status;
    struct ember_tensor *part =
        ember_tensor_view(dx, x->ndim, dy->shape, dx->stride,
                          dx->offset + (size_t)(n->arg[1] * dx->stride[a]), EMBER_OWNER_TAPE);
    if (!part || ember_binary_into(EMBER_ADD, part, part, dy, 0.0f) != EMBER_OK)
        return x->ctx->status;
    return ember_grad_commit(x, dx);
}

/* y = x with before[i] and after[i] positions of `value` around axis i: a
 * fill, then x copied into the view of y that it occupies */
ember_tensor *ember_pad(ember_tensor *x, const int64_t *before, const int64_t *after, float value)
{
    ember_ctx *ctx = ember_op_begin("ember_pad", x, NULL, NULL);
    if (!ctx)
        return NULL;
    int64_t shape[EMBER_MAX_DIMS], stride[EMBER_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        if (!before || !after || before[i] < 0 || after[i] < 0) {
            ember_fail(ctx, EMBER_ERR_ARG, "ember_pad: axis %d's padding must be given and not negative", i);
            return NULL;
        }
        shape[i] = x->shape[i] + before[i] + after[i];
    }
    ember_contiguous_strides(x->ndim, shape, stride);
    size_t corner = 0; /* x's first element in y */
    for (int i = 0; i < x->ndim; i++)
        corner += (size_t)(before[i] * stride[i]);
    struct ember_tensor *y = ember_op_out(ctx, x->ndim, shape);
    struct ember_tensor *inside =
        y && ember_tensor_fill(y, value) == EMBER_OK
            ? ember_tensor_view(y, x->ndim, x->shape, stride, y->offset + corner, EMBER_OWNER_TAPE)
            : NULL;
    if (!inside || ember_unary_into(EMBER_COPY, inside, x, 0.0f) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *n = ember_record(EMBER_OP_PAD, y, x, NULL, NULL);
        if (!n)
            return NULL;
        n->arg[0] = (int64_t)corner;
    }
    return y;
}

/* dx = the part of dy that x occupies */
ember_status ember_backward_pad(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *dy = ember_contiguous(n->out->grad);
    int64_t stride[EMBER_MAX_DIMS];
    if (!dy)
        return x->ctx->status;
    ember_contiguous_strides(dy->ndim, dy->shape, stride);
    struct ember_tensor *part =
        ember_tensor_view(dy, x->ndim, x->shape, stride, dy->offset + (size_t)n->arg[0], EMBER_OWNER_TAPE);
    struct ember_tensor *dx = part ? ember_unary_new(EMBER_COPY, part, 0.0f) : NULL;
    return dx ? ember_grad_commit(x, dx) : x->ctx->status;
}

/* y = a and b one after the other along `axis`, every other axis the same:
 * y filled once, a and b each copied into the view of y it occupies */
static ember_tensor *concat_pair(ember_ctx *ctx, ember_tensor *a, ember_tensor *b, int axis)
{
    int64_t shape[EMBER_MAX_DIMS], stride[EMBER_MAX_DIMS];
    bool fits = a->ndim == b->ndim;
    for (int i = 0; fits && i < a->ndim; i++)
        fits = i == axis || a->shape[i] == b->shape[i];
    if (!fits) {
        char sa[96], sb[96];
        ember_fail(ctx, EMBER_ERR_ARG, "ember_concat: %s and %s differ along an axis other than %d",
                   ember_shape_str(a, sa, sizeof sa), ember_shape_str(b, sb, sizeof sb), axis);
        return NULL;
    }
    memcpy(shape, a->shape, sizeof shape);
    shape[axis] += b->shape[axis];
    ember_contiguous_strides(a->ndim, shape, stride);
    struct ember_tensor *y = ember_op_out(ctx, a->ndim, shape);
    size_t second = (size_t)(a->shape[axis] * stride[axis]); /* b's first element in y */
    struct ember_tensor *into_a =
        y ? ember_tensor_view(y, a->ndim, a->shape, stride, y->offset, EMBER_OWNER_TAPE) : NULL;
    struct ember_tensor *into_b =
        y ? ember_tensor_view(y, b->ndim, b->shape, stride, y->offset + second, EMBER_OWNER_TAPE) : NULL;
    if (!into_a || !into_b || ember_unary_into(EMBER_COPY, into_a, a, 0.0f) != EMBER_OK ||
        ember_unary_into(EMBER_COPY, into_b, b, 0.0f) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, a, b, NULL)) {
        struct ember_node *n = ember_record(EMBER_OP_CONCAT, y, a, b, NULL);
        if (!n)
            return NULL;
        n->arg[0] = (int64_t)second;
    }
    return y;
}

/* More than two are concatenated two at a time: each step copies what the
 * ones before it made, which the few branches of a network's concat (two
 * in SqueezeNet and ShuffleNet, four in Inception) can afford. */
ember_tensor *ember_concat(ember_tensor *const *xs, int count, int axis)
{
    ember_ctx *ctx =
        count >= 1 && xs ? ember_op_begin("ember_concat", xs[0], count > 1 ? xs[1] : NULL, NULL) : NULL;
    if (!ctx)
        return NULL;
    int a = ember_op_axis(ctx, "ember_concat", axis, xs[0]->ndim);
    if (a < 0)
        return NULL;
    for (int i = 1; i < count; i++)
        if (!xs[i] || !ember_op_begin("ember_concat", xs[0], xs[i], NULL)) {
            if (!xs[i])
                ember_fail(ctx, EMBER_ERR_ARG, "ember_concat: tensor %d of %d is NULL", i + 1, count);
            return NULL;
        }
    ember_tensor *y = xs[0];
    for (int i = 1; y && i < count; i++)
        y = concat_pair(ctx, y, xs[i], a);
    return y;
}

/* each input's gradient is the part of dy it occupies */
ember_status ember_backward_concat(struct ember_node *n)
{
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    int64_t stride[EMBER_MAX_DIMS];
    if (!dy)
        return n->out->ctx->status;
    ember_contiguous_strides(dy->ndim, dy->shape, stride);
    for (int i = 0; i < 2; i++) {
        struct ember_tensor *x = n->in[i];
        if (!x->requires_grad)
            continue;
        size_t at = dy->offset + (i == 0 ? 0 : (size_t)n->arg[0]);
        struct ember_tensor *part = ember_tensor_view(dy, x->ndim, x->shape, stride, at, EMBER_OWNER_TAPE);
        struct ember_tensor *dx = part ? ember_unary_new(EMBER_COPY, part, 0.0f) : NULL;
        if (!dx || ember_grad_commit(x, dx) != EMBER_OK)
            return x->ctx->status;
    }
    return EMBER_OK;
}
