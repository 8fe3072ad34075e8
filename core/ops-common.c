/* SPDX-License-Identifier: MIT */
/* core/ops-common.c — helpers every op file uses (see ops-impl.h). */
#include <string.h>

#include "ops-impl.h"
#include "profile-impl.h"

ember_ctx *ember_op_begin(const char *name, const struct ember_tensor *a, const struct ember_tensor *b,
                          const struct ember_tensor *c)
{
    if (!a)
        return NULL;
    ember_ctx *ctx = a->ctx;
    const struct ember_tensor *in[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        if (!in[i])
            continue;
        if (in[i]->ctx != ctx) {
            ember_fail(ctx, EMBER_ERR_ARG, "%s: inputs belong to different contexts", name);
            return NULL;
        }
        if (in[i]->dtype != EMBER_F32) {
            ember_fail(ctx, EMBER_ERR_ARG, "%s: input %d is %s; this op takes F32", name, i + 1,
                       ember_dtype_name(in[i]->dtype));
            return NULL;
        }
    }
    /* the profile's op rows: what follows is this op's work ("ember_conv2d" -> "conv2d forward") */
    ember_profile_label(ctx, strncmp(name, "ember_", 6) == 0 ? name + 6 : name, "forward");
    ember_profile_inputs(ctx, in);
    return ctx;
}

struct ember_tensor *ember_op_out(ember_ctx *ctx, int ndim, const int64_t *shape)
{
    return ember_tensor_alloc(ctx, EMBER_F32, ndim, shape, EMBER_OWNER_TAPE);
}

struct ember_tensor *ember_op_out_like(const struct ember_tensor *t)
{
    return ember_tensor_alloc(t->ctx, EMBER_F32, t->ndim, t->shape, EMBER_OWNER_TAPE);
}

ember_status ember_unary_into(enum ember_unary_op op, struct ember_tensor *out, const struct ember_tensor *a,
                              float alpha)
{
    ember_ctx *ctx = out->ctx;
    struct ember_ewise e;
    ember_ewise_init(&e, out, a, NULL);
    return ctx->ops->unary(ctx->dev, op, &e, ember_tensor_ptr(out), ember_tensor_ptr(a), alpha);
}

ember_status ember_binary_into(enum ember_binary_op op, struct ember_tensor *out,
                               const struct ember_tensor *a, const struct ember_tensor *b, float alpha)
{
    ember_ctx *ctx = out->ctx;
    struct ember_ewise e;
    ember_ewise_init(&e, out, a, b);
    return ctx->ops->binary(ctx->dev, op, &e, ember_tensor_ptr(out), ember_tensor_ptr(a), ember_tensor_ptr(b),
                            alpha);
}

ember_status ember_reduce_into(enum ember_reduce_op op, struct ember_tensor *out,
                               const struct ember_tensor *in, int64_t outer, int64_t r, int64_t inner,
                               float alpha, float beta)
{
    ember_ctx *ctx = out->ctx;
    struct ember_reduce red = {.outer = outer, .r = r, .inner = inner, .alpha = alpha, .beta = beta};
    return ctx->ops->reduce(ctx->dev, op, &red, ember_tensor_ptr(out), ember_tensor_ptr(in));
}

ember_status ember_ctx_sgemm(ember_ctx *ctx, const struct ember_gemm *g, ember_ptr a, ember_ptr b,
                             ember_ptr c)
{
    struct ember_gemm with = *g;
    with.precision = ctx->matmul_precision;
    return ctx->ops->sgemm(ctx->dev, &with, a, b, c);
}

ember_status ember_gemm_into(const struct ember_gemm *g, const struct ember_tensor *a,
                             const struct ember_tensor *b, struct ember_tensor *c)
{
    return ember_ctx_sgemm(c->ctx, g, ember_tensor_ptr(a), ember_tensor_ptr(b), ember_tensor_ptr(c));
}

struct ember_tensor *ember_unary_new(enum ember_unary_op op, const struct ember_tensor *a, float alpha)
{
    struct ember_tensor *out = ember_op_out_like(a);
    if (out && ember_unary_into(op, out, a, alpha) != EMBER_OK)
        return NULL;
    return out;
}

/* The NumPy broadcast of two shapes, or false when they do not broadcast. */
static bool broadcast_shape(const struct ember_tensor *a, const struct ember_tensor *b, int *ndim,
                            int64_t *shape)
{
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return false;
        shape[i] = da == 1 ? db : da;
    }
    *ndim = nd;
    return true;
}

struct ember_tensor *ember_binary_new(enum ember_binary_op op, const struct ember_tensor *a,
                                      const struct ember_tensor *b, float alpha)
{
    int ndim;
    int64_t shape[EMBER_MAX_DIMS];
    if (!broadcast_shape(a, b, &ndim, shape)) {
        char sa[96], sb[96];
        ember_fail(a->ctx, EMBER_ERR_ARG, "shapes %s and %s do not broadcast",
                   ember_shape_str(a, sa, sizeof sa), ember_shape_str(b, sb, sizeof sb));
        return NULL;
    }
    struct ember_tensor *out = ember_op_out(a->ctx, ndim, shape);
    if (out && ember_binary_into(op, out, a, b, alpha) != EMBER_OK)
        return NULL;
    return out;
}

int ember_op_axis(ember_ctx *ctx, const char *op, int axis, int ndim)
{
    int a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s: axis %d is out of range for %d dimensions", op, axis, ndim);
        return -1;
    }
    return a;
}
