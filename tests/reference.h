/*
 * tests/reference.h — the readable reference of every backend primitive.
 *
 * Plain loops straight from the definitions in core/backend.h, summing in
 * double, with no threads and no tricks: the truth that every backend is
 * held to by tests/test_parity.c. Arguments mirror the primitives', with
 * host pointers in place of ember_ptr.
 */
#ifndef EMBER_REFERENCE_H
#define EMBER_REFERENCE_H

#include "backend.h"

void ref_fill(float *out, size_t n, float value);
void ref_unary(enum ember_unary_op op, const struct ember_ewise *e, float *out, const float *a, float alpha);
void ref_binary(enum ember_binary_op op, const struct ember_ewise *e, float *out, const float *a, const float *b);
void ref_reduce(enum ember_reduce_op op, const struct ember_reduce *r, float *out, const float *in);
void ref_sgemm(const struct ember_gemm *g, const float *a, const float *b, float *c);
void ref_im2col(const struct ember_conv_geom *g, const float *x, float *col);
void ref_col2im(const struct ember_conv_geom *g, const float *col, float *dx);
void ref_maxpool_forward(const struct ember_pool_geom *g, const float *x, float *y, int32_t *argmax);
void ref_maxpool_backward(const struct ember_pool_geom *g, const float *dy, const int32_t *argmax, float *dx);
void ref_softmax_xent_forward(int64_t n, int64_t classes, const float *logits, const int32_t *target, float *prob,
                              float *loss);
void ref_softmax_xent_backward(int64_t n, int64_t classes, const float *prob, const int32_t *target,
                               const float *dloss, float scale, float *dlogits);
void ref_adam_step(size_t n, const struct ember_adam_step *s, float *param, const float *grad, float *m, float *v);
void ref_sgd_step(size_t n, const struct ember_sgd_step *s, float *param, const float *grad, float *velocity);

#endif /* EMBER_REFERENCE_H */
