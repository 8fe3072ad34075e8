/* SPDX-License-Identifier: MIT */
/*
 * core/ops-impl.h — what the op files share: input checks, output tensors,
 * and thin calls of the backend's primitives on tensors.
 *
 * An op file holds the forward and the backward of one family of ops, each
 * written once in terms of these helpers, so that every backend runs the
 * same math.
 */
#ifndef EMBER_OPS_IMPL_H
#define EMBER_OPS_IMPL_H

#include "autograd-impl.h"

/* Checks the inputs of op `name`: a is present, the others are present or
 * optional, all live in one context and are F32. Returns that context, or
 * NULL (a NULL input means an earlier failure; the message stands). */
ember_ctx *ember_op_begin(const char *name, const struct ember_tensor *a, const struct ember_tensor *b,
                          const struct ember_tensor *c);

/* A new F32 tape tensor for an op's result. */
struct ember_tensor *ember_op_out(ember_ctx *ctx, int ndim, const int64_t *shape);
struct ember_tensor *ember_op_out_like(const struct ember_tensor *t);

/* Selective recomputation (core/ops-recompute.c), for a product of
 * `depth` multiply-adds an output value. ember_kept_product, before the
 * product: in a function's second run under ember_recompute_selective,
 * *y is the output its first run kept, and the product need not run;
 * otherwise *y is NULL. ember_keep_product, after it: in the first run,
 * keeps y (just made) for the second. */
ember_status ember_kept_product(ember_ctx *ctx, int ndim, const int64_t *shape, int64_t depth,
                                struct ember_tensor **y);
ember_status ember_keep_product(struct ember_tensor *y, int64_t depth);

/* Primitives on tensors (any strides where the primitive takes strides). */
ember_status ember_unary_into(enum ember_unary_op op, struct ember_tensor *out, const struct ember_tensor *a,
                              float alpha);
ember_status ember_binary_into(enum ember_binary_op op, struct ember_tensor *out,
                               const struct ember_tensor *a, const struct ember_tensor *b, float alpha);
/* in (contiguous) as (outer, r, inner) reduced over r into out */
ember_status ember_reduce_into(enum ember_reduce_op op, struct ember_tensor *out,
                               const struct ember_tensor *in, int64_t outer, int64_t r, int64_t inner,
                               float alpha, float beta);
/* the device's sgemm with the context's matmul precision stamped on g
 * (ember_ctx_set_matmul_precision): every product goes through it */
ember_status ember_ctx_sgemm(ember_ctx *ctx, const struct ember_gemm *g, ember_ptr a, ember_ptr b,
                             ember_ptr c);
/* C = alpha * op(A) @ op(B) + beta * C on tensors (see struct ember_gemm) */
ember_status ember_gemm_into(const struct ember_gemm *g, const struct ember_tensor *a,
                             const struct ember_tensor *b, struct ember_tensor *c);
/* new tape tensors of a's shape (or the broadcast shape of a and b) */
struct ember_tensor *ember_unary_new(enum ember_unary_op op, const struct ember_tensor *a, float alpha);
struct ember_tensor *ember_binary_new(enum ember_binary_op op, const struct ember_tensor *a,
                                      const struct ember_tensor *b, float alpha);

/* `axis` made non-negative and checked against ndim; -1 when out of range
 * (with the error recorded). */
int ember_op_axis(ember_ctx *ctx, const char *op, int axis, int ndim);

#endif /* EMBER_OPS_IMPL_H */
