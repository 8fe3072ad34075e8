/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/ops-export.c — the layers' ops on fixed inputs, written to one
 * safetensors file for tests/interop/test_ops_vs_torch.py to hold against PyTorch.
 *
 *   ops-export OUT.safetensors
 *
 * The device is cpu, or $EMBER_TEST_DEVICE. Inputs are a seeded draw;
 * each result is saved under a name that says what made it:
 *
 *   x4 (2, 3, 5, 6), x2 (8, 3)       inputs
 *   xa (58)                          [-8, 8], NaN, Inf, zeros and kinks
 *   act.<name>, act.<name>.dx        every activation of xa (base/elementwise-impl.h),
 *                                    and the gradient of sum(y); a line on stdout each:
 *                                    "activation NAME MODULE ALPHA" (MODULE: PyTorch's)
 *   silu                             of x4
 *   avg_pool2d                       3x3 windows at stride 2 of x4
 *   max_pool2d_padded, avg_pool2d_padded, avg_pool2d_padded_excl, max_pool2d_ceil
 *                                    3x3 windows at stride 2 of x4, padding 1 (the
 *                                    mean counting the padding, then not), and ceil_mode
 *   upsample_nearest, upsample_bilinear   x4 made 2x larger (nearest) and 3x (bilinear)
 *   concat                           x4 and 2 x4 along the channels
 *   pad                              x4 padded by (0, 1), (1, 0), (2, 1), (0, 3) with 0.25
 *   grouped.w (6, 1, 3, 3), grouped.b (6)   a depthwise convolution's weight and bias,
 *                                    two outputs a channel of x4
 *   grouped, .dx, .dw, .db           conv2d_grouped(x4, grouped.w, grouped.b, 2, 1, 3), and the
 *                                    gradients of sum(y * c), c a copy of y (a constant)
 *   global_avg_pool2d                of x4
 *   bn.weight, bn.bias, bn.running_mean, bn.running_var   the state before
 *   bn2d_train, bn2d_train.mean, bn2d_train.var           y and the running statistics after
 *   bn2d_eval                        y in evaluation, from the state before
 *   bn1d_train, bn1d_eval            the same on x2
 *   bn2d_train.dx, .dweight, .dbias  gradients of sum(y * x4) in training
 *   dropout_eval, dropout_train      p 0.5, seed 7
 *   rms.weight; rms_norm, .dx, .dweight   RMS norm of x4's last axis (eps 1e-5) and
 *                                    the gradients of sum(y * x4)
 *   fold.w (3, 3, 3, 3), fold.b (3)  a convolution's weight and bias
 *   fold.weight, fold.bias           the batch norm's state (eps 1e-5) folded into them
 *   fold.dw, .db, .dweight, .dbias   gradients of sum(conv2d(x4, fold.weight, fold.bias, 1, 1) * c),
 *                                    c = the convolution with the unfolded weights
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise-impl.h"
#include "test-util.h"

static ember_params *out;

/* adds `t` to the file under `name` (a copy: the set owns its values) */
static void keep(const char *name, ember_tensor *t)
{
    CHECK(t != NULL, "%s: %s", name, ember_last_error(ember_tensor_ctx(t)));
    if (!t)
        return;
    int64_t shape[EMBER_MAX_DIMS];
    int ndim = ember_tensor_ndim(t);
    for (int d = 0; d < ndim; d++)
        shape[d] = ember_tensor_dim(t, d);
    ember_tensor *p = ember_params_add(out, name, ndim, shape);
    size_t bytes = (size_t)ember_tensor_numel(t) * sizeof(float);
    float *values = malloc(bytes);
    CHECK(p && values && ember_tensor_read(t, values, bytes) == EMBER_OK &&
              ember_tensor_write(p, values, bytes) == EMBER_OK,
          "keeping %s", name);
    free(values);
}

static ember_tensor *seeded(ember_ctx *ctx, int ndim, const int64_t *shape, float low, float high,
                            uint64_t seed)
{
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, ndim, shape);
    int64_t n = ember_tensor_numel(t);
    float *v = malloc((size_t)n * sizeof *v);
    ember_rng rng = ember_rng_seed(seed);
    for (int64_t i = 0; i < n; i++)
        v[i] = ember_rng_uniform(&rng, low, high);
    ember_tensor_write(t, v, (size_t)n * sizeof *v);
    free(v);
    return t;
}

/* weight, bias and running statistics of a batch norm over 3 channels */
struct bn {
    ember_tensor *weight, *bias, *mean, *var;
};

static struct bn bn_state(ember_ctx *ctx)
{
    int64_t c[1] = {3};
    struct bn b = {seeded(ctx, 1, c, 0.5f, 1.5f, 11), seeded(ctx, 1, c, -0.5f, 0.5f, 12),
                   seeded(ctx, 1, c, -0.2f, 0.2f, 13), seeded(ctx, 1, c, 0.5f, 2.0f, 14)};
    return b;
}

static void bn_free(struct bn *b)
{
    ember_tensor_free(b->weight), ember_tensor_free(b->bias), ember_tensor_free(b->mean),
        ember_tensor_free(b->var);
}

/* Every activation of base/elementwise-impl.h on xa, 48 values over [-8, 8]
 * and NaN, Inf, zeros of both signs and the hard activations' kinks: y and
 * the gradient of sum(y), kept as act.<name> and act.<name>.dx; and on
 * stdout, for the test, a line per row with PyTorch's module and the
 * parameter it was run with. */
#define ARG_none
#define ARG_slope   , 0.1f
#define ALPHA_none  0.0f
#define ALPHA_slope 0.1f
static void activations(ember_ctx *ctx)
{
    static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0f, -3.0f, 6.0f, 20.5f, -20.5f};
    enum { N_RANDOM = 48, N = N_RANDOM + sizeof specials / sizeof specials[0] };
    int64_t shape[1] = {N};
    float v[N];
    ember_rng rng = ember_rng_seed(5);
    for (int i = 0; i < N_RANDOM; i++)
        v[i] = ember_rng_uniform(&rng, -8.0f, 8.0f);
    memcpy(v + N_RANDOM, specials, sizeof specials);
    ember_tensor *xa = ember_tensor_new(ctx, EMBER_F32, 1, shape);
    CHECK_OK(ctx, ember_tensor_write(xa, v, sizeof v));
    keep("xa", xa);
    char name[64];
#define ACTIVATION_RUN(NAME, act, param, f, fmath, saves, g, gmath, layer, torch, ...)                       \
    {                                                                                                        \
        ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 1, shape);                                        \
        CHECK_OK(ctx, ember_tensor_write(x, v, sizeof v));                                                   \
        CHECK_OK(ctx, ember_tensor_set_requires_grad(x, true));                                              \
        ember_tensor *y = ember_##act(x ARG_##param);                                                        \
        keep("act." #act, y);                                                                                \
        CHECK_OK(ctx, ember_backward(ember_sum(y, EMBER_ALL_AXES, false)));                                  \
        snprintf(name, sizeof name, "act.%s.dx", #act);                                                      \
        keep(name, ember_tensor_grad(x));                                                                    \
        ember_tape_clear(ctx);                                                                               \
        ember_tensor_free(x);                                                                                \
        printf("activation %s %s %g\n", #act, torch, (double)ALPHA_##param);                                 \
    }
    EMBER_ACTIVATIONS(ACTIVATION_RUN)
#undef ACTIVATION_RUN
    ember_tensor_free(xa);
}

/* a depthwise convolution with two outputs a channel, and its gradients */
static void grouped(ember_ctx *ctx, ember_tensor *x4)
{
    int64_t sw[4] = {6, 1, 3, 3}, sb = 6;
    ember_tensor *w = seeded(ctx, 4, sw, -1.0f, 1.0f, 31), *b = seeded(ctx, 1, &sb, -1.0f, 1.0f, 32);
    ember_tensor *x = ember_tensor_copy(x4);
    keep("grouped.w", w), keep("grouped.b", b);
    CHECK_OK(ctx, ember_tensor_set_requires_grad(x, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(w, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(b, true));
    ember_tensor *y = ember_conv2d_grouped(x, w, b, 2, 1, 3);
    keep("grouped", y);
    ember_tensor *fixed = ember_tensor_copy(y); /* a constant: the gradient of sum(y * fixed) is fixed */
    CHECK_OK(ctx, ember_backward(ember_sum(ember_mul(y, fixed), EMBER_ALL_AXES, false)));
    keep("grouped.dx", ember_tensor_grad(x));
    keep("grouped.dw", ember_tensor_grad(w));
    keep("grouped.db", ember_tensor_grad(b));
    ember_tape_clear(ctx);
    ember_tensor_free(fixed), ember_tensor_free(x), ember_tensor_free(w), ember_tensor_free(b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ops-export OUT.safetensors\n");
        return 2;
    }
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    out = ember_params_new(ctx);
    int64_t s4[4] = {2, 3, 5, 6}, s2[2] = {8, 3};
    ember_tensor *x4 = seeded(ctx, 4, s4, -3.0f, 3.0f, 1), *x2 = seeded(ctx, 2, s2, -2.0f, 2.0f, 2);
    keep("x4", x4);
    keep("x2", x2);
    activations(ctx);
    keep("silu", ember_silu(x4));
    keep("avg_pool2d", ember_avg_pool2d(x4, 3, 2));
    keep("max_pool2d_padded", ember_max_pool2d_padded(x4, 3, 2, 1, false));
    keep("avg_pool2d_padded", ember_avg_pool2d_padded(x4, 3, 2, 1, false, true));
    keep("avg_pool2d_padded_excl", ember_avg_pool2d_padded(x4, 3, 2, 1, true, false));
    keep("max_pool2d_ceil", ember_max_pool2d_padded(x4, 3, 2, 0, true));
    keep("upsample_nearest", ember_upsample2d(x4, 2, false));
    keep("upsample_bilinear", ember_upsample2d(x4, 3, true));
    keep("concat", ember_concat((ember_tensor *[]){x4, ember_scale(x4, 2.0f)}, 2, 1));
    keep("pad", ember_pad(x4, (const int64_t[]){0, 1, 2, 0}, (const int64_t[]){1, 0, 1, 3}, 0.25f));
    grouped(ctx, x4);
    keep("global_avg_pool2d", ember_global_avg_pool2d(x4));
    keep("dropout_eval", ember_dropout(x4, 0.5f, false, 7));
    keep("dropout_train", ember_dropout(x4, 0.5f, true, 7));

    struct bn b = bn_state(ctx);
    keep("bn.weight", b.weight), keep("bn.bias", b.bias), keep("bn.running_mean", b.mean);
    keep("bn.running_var", b.var);
    keep("bn2d_eval", ember_batch_norm(x4, b.weight, b.bias, b.mean, b.var, false, 0.1f, 1e-5f));
    keep("bn1d_eval", ember_batch_norm(x2, b.weight, b.bias, b.mean, b.var, false, 0.1f, 1e-5f));
    /* training, with gradients of sum(y * x4) */
    ember_tensor *xg = ember_tensor_copy(x4);
    CHECK_OK(ctx, ember_tensor_set_requires_grad(xg, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(b.weight, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(b.bias, true));
    ember_tensor *y = ember_batch_norm(xg, b.weight, b.bias, b.mean, b.var, true, 0.1f, 1e-5f);
    keep("bn2d_train", y);
    keep("bn2d_train.mean", b.mean);
    keep("bn2d_train.var", b.var);
    CHECK_OK(ctx, ember_backward(ember_sum(ember_mul(y, x4), EMBER_ALL_AXES, false)));
    keep("bn2d_train.dx", ember_tensor_grad(xg));
    keep("bn2d_train.dweight", ember_tensor_grad(b.weight));
    keep("bn2d_train.dbias", ember_tensor_grad(b.bias));
    bn_free(&b);
    b = bn_state(ctx);
    keep("bn1d_train", ember_batch_norm(x2, b.weight, b.bias, b.mean, b.var, true, 0.1f, 1e-5f));
    bn_free(&b);
    /* batch norm and ReLU in one op, training, with gradients of sum(y * x4) */
    b = bn_state(ctx);
    ember_tensor *xr = ember_tensor_copy(x4);
    CHECK_OK(ctx, ember_tensor_set_requires_grad(xr, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(b.weight, true));
    y = ember_batch_norm_relu(xr, b.weight, b.bias, b.mean, b.var, true, 0.1f, 1e-5f);
    keep("bn2d_relu_train", y);
    CHECK_OK(ctx, ember_backward(ember_sum(ember_mul(y, x4), EMBER_ALL_AXES, false)));
    keep("bn2d_relu_train.dx", ember_tensor_grad(xr));
    keep("bn2d_relu_train.dweight", ember_tensor_grad(b.weight));
    bn_free(&b);

    /* RMS norm over x4's last axis, with gradients of sum(y * x4) */
    int64_t six = 6;
    ember_tensor *rw = seeded(ctx, 1, &six, 0.5f, 1.5f, 23), *xn = ember_tensor_copy(x4);
    CHECK_OK(ctx, ember_tensor_set_requires_grad(xn, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(rw, true));
    keep("rms.weight", rw);
    y = ember_rms_norm(xn, rw, 1e-5f);
    keep("rms_norm", y);
    CHECK_OK(ctx, ember_backward(ember_sum(ember_mul(y, x4), EMBER_ALL_AXES, false)));
    keep("rms_norm.dx", ember_tensor_grad(xn));
    keep("rms_norm.dweight", ember_tensor_grad(rw));

    /* batch norm folded into a convolution, with gradients of sum(conv2d(x4, w', b') * c) */
    b = bn_state(ctx);
    int64_t ws[4] = {3, 3, 3, 3}, three = 3;
    ember_tensor *fw = seeded(ctx, 4, ws, -0.5f, 0.5f, 31), *fb = seeded(ctx, 1, &three, -0.5f, 0.5f, 32);
    keep("fold.w", fw), keep("fold.b", fb);
    CHECK_OK(ctx, ember_tensor_set_requires_grad(fw, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(fb, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(b.weight, true));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(b.bias, true));
    ember_tensor *folded_w = NULL, *folded_b = NULL;
    CHECK_OK(ctx,
             ember_batch_norm_fold(fw, fb, b.weight, b.bias, b.mean, b.var, 1e-5f, &folded_w, &folded_b));
    keep("fold.weight", folded_w), keep("fold.bias", folded_b);
    bool was = ember_set_grad_enabled(ctx, false);
    ember_tensor *c = ember_conv2d(x4, fw, fb, 1, 1);
    ember_set_grad_enabled(ctx, was);
    y = ember_conv2d(x4, folded_w, folded_b, 1, 1);
    CHECK_OK(ctx, ember_backward(ember_sum(ember_mul(y, c), EMBER_ALL_AXES, false)));
    keep("fold.dw", ember_tensor_grad(fw)), keep("fold.db", ember_tensor_grad(fb));
    keep("fold.dweight", ember_tensor_grad(b.weight)), keep("fold.dbias", ember_tensor_grad(b.bias));
    bn_free(&b);

    CHECK_OK(ctx, ember_params_save(out, argv[1], NULL));
    ember_tape_clear(ctx);
    ember_tensor_free(xg), ember_tensor_free(xr), ember_tensor_free(x4), ember_tensor_free(x2);
    ember_tensor_free(xn), ember_tensor_free(rw), ember_tensor_free(fw), ember_tensor_free(fb);
    ember_params_free(out);
    ember_ctx_free(ctx);
    return test_finish("ops-export");
}
