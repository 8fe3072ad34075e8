/* SPDX-License-Identifier: MIT */
/*
 * tests/ops/test_gradcheck.c — every differentiable op's backward against
 * central finite differences.
 *
 * For each case, inputs x_k are random leaves, the op gives y, and the
 * objective is L = sum(W * y) with fixed random weights W. ember_backward
 * gives dL/dx_k; the check compares it with (L(x + h e_i) - L(x - h e_i)) / 2h
 * for every element i, L being summed on the host in double.
 *
 * Why float32 suffices (there is no float64 path): with h = 1e-2 and inputs
 * of order 1, the truncation error of the central difference is O(h^2) ~ 1e-4
 * for these smooth ops, and float32 rounding of y adds about
 * 6e-8 * sum|W y| / 2h ~ 1e-5 per output, so an honest gradient lands well
 * within 1e-3 of the numeric one, relative to the gradient's size (the
 * worst case here measures 3e-5, and 1.3e-4 for the convolution in
 * Winograd's 4x4 tiles, whose constants round more; GRADCHECK_VERBOSE=1
 * prints them all). A
 * real backward bug (a wrong index, a missing term, a wrong factor) is off
 * by O(1). The test requires the relative L2 error of each input's gradient
 * to be under 1e-3 and each element within 1e-3 of the largest gradient
 * magnitude.
 * Kinks are kept away from: relu inputs have |x| >= 0.1 > h, and max-pool
 * inputs are distinct values at least 0.05 apart. Batch norm with its ReLU
 * in training cannot be kept so (a step in one x moves every value of its
 * channel): its case has a shape whose seeded values leave no output
 * within a step of 0 (2x3x2x3's do not, and fail by 10%).
 *
 *   test_gradcheck [-o CASE]     runs every case, or those whose name contains CASE
 * Every op of EMBER_OPS (core/autograd-impl.h) must be recorded by some
 * case's forward pass: an op added without a case fails the whole run.
 * Every activation (base/elementwise-impl.h) has a case made from its row,
 * and a check of its value and gradient at NaN, Inf and zeros.
 * The device is cpu, or $EMBER_TEST_DEVICE.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "ctx-impl.h"
#include "platform.h"
#include "reference.h"
#include "test-util.h"

#define MAX_INPUTS 5
#define H          1e-2

/* FILL_REAL and FILL_PIECEWISE: an activation's test domain (base/elementwise-impl.h), [-4, 4], and
 * [-7, 7] kept 0.1 away from the whole numbers, where its kinks are */
enum fill { FILL_UNIFORM, FILL_AWAY_FROM_ZERO, FILL_DISTINCT, FILL_TARGETS, FILL_REAL, FILL_PIECEWISE };

struct input_spec {
    int ndim;
    int64_t shape[4];
    enum fill fill;
    bool no_grad; /* an input that is not differentiated (targets) */
};

struct gcase {
    const char *name;
    int ninputs;
    struct input_spec in[MAX_INPUTS];
    ember_tensor *(*forward)(ember_tensor **x);
};

/* ------------------------------------------------------------------ cases */

static ember_tensor *f_add(ember_tensor **x) { return ember_add(x[0], x[1]); }
static ember_tensor *f_sub(ember_tensor **x) { return ember_sub(x[0], x[1]); }
static ember_tensor *f_mul(ember_tensor **x) { return ember_mul(x[0], x[1]); }
static ember_tensor *f_scale(ember_tensor **x) { return ember_scale(x[0], -2.5f); }
/* strided: a transposed view as an input of elementwise ops */
/* clang-format off */
static ember_tensor *f_add_transposed(ember_tensor **x) { return ember_add(ember_transpose(x[0], 0, 1), x[1]); }
static ember_tensor *f_mul_transposed(ember_tensor **x) { return ember_mul(x[0], ember_transpose(x[1], 1, 2)); }
/* clang-format on */
static ember_tensor *f_relu_transposed(ember_tensor **x) { return ember_relu(ember_transpose(x[0], 0, 2)); }
/* one tensor used twice: y = x * x + x, gradients must accumulate */
static ember_tensor *f_reuse(ember_tensor **x) { return ember_add(ember_mul(x[0], x[0]), x[0]); }
static ember_tensor *f_sum_all(ember_tensor **x) { return ember_sum(x[0], EMBER_ALL_AXES, false); }
static ember_tensor *f_sum_axis0(ember_tensor **x) { return ember_sum(x[0], 0, false); }
static ember_tensor *f_sum_axis1_keep(ember_tensor **x) { return ember_sum(x[0], 1, true); }
static ember_tensor *f_mean_last(ember_tensor **x) { return ember_mean(x[0], -1, false); }
static ember_tensor *f_sum_transposed(ember_tensor **x)
{
    return ember_sum(ember_transpose(x[0], 0, 1), 1, false);
}
static ember_tensor *f_softmax_last(ember_tensor **x) { return ember_softmax(x[0], -1); }
static ember_tensor *f_softmax_axis0(ember_tensor **x) { return ember_softmax(x[0], 0); }
static ember_tensor *f_log_softmax_last(ember_tensor **x) { return ember_log_softmax(x[0], -1); }
static ember_tensor *f_log_softmax_mid(ember_tensor **x) { return ember_log_softmax(x[0], 1); }
static ember_tensor *f_cross_entropy(ember_tensor **x) { return ember_cross_entropy(x[0], x[1]); }
/* the targets at odd positions (or all of them) ignored, as a chat's prompt is: written into the
 * targets in place, the same each call */
static ember_tensor *cross_entropy_ignoring(ember_tensor **x, bool all)
{
    int32_t t[16];
    int64_t n = ember_tensor_numel(x[1]);
    if (n > 16 || ember_tensor_read(x[1], t, (size_t)n * sizeof *t) != EMBER_OK)
        return NULL;
    for (int64_t i = all ? 0 : 1; i < n; i += all ? 1 : 2)
        t[i] = EMBER_IGNORE_INDEX;
    return ember_tensor_write(x[1], t, (size_t)n * sizeof *t) == EMBER_OK
               ? ember_cross_entropy_ignore(x[0], x[1])
               : NULL;
}
static ember_tensor *f_cross_entropy_ignore(ember_tensor **x) { return cross_entropy_ignoring(x, false); }
static ember_tensor *f_cross_entropy_ignore_all(ember_tensor **x) { return cross_entropy_ignoring(x, true); }
static ember_tensor *f_matmul(ember_tensor **x) { return ember_matmul(x[0], x[1]); }
static ember_tensor *f_matmul_transposed(ember_tensor **x)
{
    return ember_matmul(ember_transpose(x[0], 0, 1), x[1]);
}
static ember_tensor *f_linear(ember_tensor **x) { return ember_linear(x[0], x[1], x[2]); }
/* tanh(x w^T + b) twice, recomputed in the backward pass: x's gradient and w's and b's (used inside
 * alone) as without it */
static ember_tensor *recomputed(void *user, ember_tensor *x)
{
    ember_tensor **wb = user;
    return ember_tanh(ember_linear(ember_tanh(ember_linear(x, wb[0], wb[1])), wb[0], wb[1]));
}
static ember_tensor *f_recompute(ember_tensor **x)
{
    static ember_tensor *wb[2];
    wb[0] = x[1], wb[1] = x[2];
    return ember_recompute(ember_scale(x[0], 2.0f), recomputed, wb);
}
/* tanh(w2 tanh(x w1^T + b1) + b2), selectively: the first product (of depth 64) kept from the forward pass,
 * the second (of depth 3) made again */
static ember_tensor *recomputed_selectively(void *user, ember_tensor *x)
{
    ember_tensor **w = user;
    return ember_tanh(ember_linear(ember_tanh(ember_linear(x, w[0], w[1])), w[2], w[3]));
}
static ember_tensor *f_recompute_selective(ember_tensor **x)
{
    static ember_tensor *w[4];
    memcpy(w, x + 1, sizeof w);
    return ember_recompute_selective(ember_scale(x[0], 2.0f), recomputed_selectively, w);
}
static ember_tensor *f_linear_nobias(ember_tensor **x) { return ember_linear(x[0], x[1], NULL); }
static ember_tensor *f_conv_pad1(ember_tensor **x) { return ember_conv2d(x[0], x[1], x[2], 1, 1); }
static ember_tensor *f_conv_stride2(ember_tensor **x) { return ember_conv2d(x[0], x[1], x[2], 2, 0); }
static ember_tensor *f_conv_nobias(ember_tensor **x) { return ember_conv2d(x[0], x[1], NULL, 1, 2); }
/* 1x1 at stride 1 without padding: the products read x and write dx, no columns (core/ops-conv.c) */
static ember_tensor *f_conv_pointwise(ember_tensor **x) { return ember_conv2d(x[0], x[1], x[2], 1, 0); }
/* conv_grouped: depthwise (a group a channel) at stride 2, and groups of two channels */
static ember_tensor *f_conv_depthwise(ember_tensor **x)
{
    return ember_conv2d_grouped(x[0], x[1], x[2], 2, 1, 4);
}
static ember_tensor *f_conv_groups2(ember_tensor **x)
{
    return ember_conv2d_grouped(x[0], x[1], NULL, 1, 1, 2);
}
static ember_tensor *f_conv_pointwise_nobias(ember_tensor **x)
{
    return ember_conv2d(x[0], x[1], NULL, 1, 0);
}
/* conv2d by Winograd, which auto's table gives no shape this small:
 * forced where the device has it (the CPU), for this call alone (the
 * backward pass runs what the forward pass ran) */
static ember_tensor *conv_forced(ember_tensor **x, const char *algo, bool bias, int padding)
{
    bool cpu = strcmp(ember_tensor_ctx(x[0])->ops->name, "cpu") == 0;
    if (cpu)
        ember_set_env("EMBER_CONV_ALGO", algo);
    ember_tensor *y = ember_conv2d(x[0], x[1], bias ? x[2] : NULL, 1, padding);
    if (cpu)
        ember_set_env("EMBER_CONV_ALGO", NULL);
    return y;
}
static ember_tensor *f_winograd_pad1(ember_tensor **x) { return conv_forced(x, "winograd", true, 1); }
static ember_tensor *f_winograd_pad0(ember_tensor **x) { return conv_forced(x, "winograd", true, 0); }
static ember_tensor *f_winograd_nobias_pad2(ember_tensor **x) { return conv_forced(x, "winograd", false, 2); }
static ember_tensor *f_winograd4_pad1(ember_tensor **x) { return conv_forced(x, "winograd4", true, 1); }
static ember_tensor *f_winograd4_nobias_pad2(ember_tensor **x)
{
    return conv_forced(x, "winograd4", false, 2);
}
/* conv2d by conv_direct, which every backend has: forced for this call */
static ember_tensor *conv_direct(ember_tensor **x, int stride, int padding)
{
    ember_set_env("EMBER_CONV_ALGO", "direct");
    ember_tensor *y = ember_conv2d(x[0], x[1], x[2], stride, padding);
    ember_set_env("EMBER_CONV_ALGO", NULL);
    return y;
}
static ember_tensor *f_direct_pad1(ember_tensor **x) { return conv_direct(x, 1, 1); }
static ember_tensor *f_direct_stride2(ember_tensor **x) { return conv_direct(x, 2, 1); }
static ember_tensor *f_pool2(ember_tensor **x) { return ember_max_pool2d(x[0], 2, 2); }
static ember_tensor *f_pool3s2(ember_tensor **x) { return ember_max_pool2d(x[0], 3, 2); }
static ember_tensor *f_reshape(ember_tensor **x)
{
    int64_t shape[3] = {3, -1, 2};
    return ember_mul(ember_reshape(x[0], 3, shape), x[1]);
}
static ember_tensor *f_flatten_transposed(ember_tensor **x)
{
    return ember_flatten(ember_transpose(x[0], 1, 2));
}
static ember_tensor *f_contiguous(ember_tensor **x) { return ember_contiguous(ember_transpose(x[0], 0, 1)); }
static ember_tensor *f_tanh_transposed(ember_tensor **x) { return ember_tanh(ember_transpose(x[0], 0, 1)); }
static ember_tensor *f_avg_pool2(ember_tensor **x) { return ember_avg_pool2d(x[0], 2, 2); }
static ember_tensor *f_avg_pool3s1(ember_tensor **x) { return ember_avg_pool2d(x[0], 3, 1); }
static ember_tensor *f_global_avg_pool(ember_tensor **x) { return ember_global_avg_pool2d(x[0]); }
/* the padded pools (ResNet's stem: 3, stride 2, padding 1; SqueezeNet's ceil_mode) and ember_pad */
static ember_tensor *f_max_pool_padded(ember_tensor **x)
{
    return ember_max_pool2d_padded(x[0], 3, 2, 1, false);
}
static ember_tensor *f_max_pool_ceil(ember_tensor **x)
{
    return ember_max_pool2d_padded(x[0], 3, 2, 0, true);
}
static ember_tensor *f_avg_pool_excl(ember_tensor **x)
{
    return ember_avg_pool2d_padded(x[0], 3, 2, 1, true, false);
}
static ember_tensor *f_pad(ember_tensor **x)
{
    return ember_pad(x[0], (const int64_t[]){0, 1, 2}, (const int64_t[]){1, 0, 3}, 0.5f);
}
/* SqueezeNet's and ShuffleNet's joins: channels of two maps, and three along the last axis */
static ember_tensor *f_concat(ember_tensor **x) { return ember_concat(x, 2, 1); }
static ember_tensor *f_concat3(ember_tensor **x) { return ember_concat(x, 3, -1); }
/* a U-Net's or an FPN's upsampling, nearest and bilinear */
static ember_tensor *f_upsample_nearest(ember_tensor **x) { return ember_upsample2d(x[0], 2, false); }
static ember_tensor *f_upsample_bilinear(ember_tensor **x) { return ember_upsample2d(x[0], 3, true); }
static ember_tensor *f_dropout(ember_tensor **x) { return ember_dropout(x[0], 0.3f, true, 1234); }
/* a residual block: y = relu(conv(x) + x) */
static ember_tensor *f_residual(ember_tensor **x)
{
    return ember_relu(ember_add(ember_conv2d(x[0], x[1], x[2], 1, 1), x[0]));
}

/* Batch norm's running statistics: buffers of 3 channels, kept across calls
 * (training moves them, which does not change y; evaluation reads them). */
static ember_tensor *running[2];
static ember_tensor *running_stat(ember_tensor *x, int which, float start)
{
    if (!running[which]) {
        int64_t c[1] = {3};
        running[which] = ember_tensor_new(ember_tensor_ctx(x), EMBER_F32, 1, c);
        float values[3] = {start, start * 0.5f, start * 2.0f};
        ember_tensor_write(running[which], values, sizeof values);
    }
    return running[which];
}
static ember_tensor *batch_norm(ember_tensor **x, bool training, bool affine, bool relu)
{
    ember_tensor *rm = running_stat(x[0], 0, 0.1f), *rv = running_stat(x[0], 1, 0.8f);
    return (relu ? ember_batch_norm_relu : ember_batch_norm)(x[0], affine ? x[1] : NULL, affine ? x[2] : NULL,
                                                             rm, rv, training, 0.1f, 1e-5f);
}
static ember_tensor *f_batch_norm_train(ember_tensor **x) { return batch_norm(x, true, true, false); }
static ember_tensor *f_batch_norm_eval(ember_tensor **x) { return batch_norm(x, false, true, false); }
static ember_tensor *f_batch_norm_plain(ember_tensor **x) { return batch_norm(x, true, false, false); }
static ember_tensor *f_batch_norm_relu_train(ember_tensor **x) { return batch_norm(x, true, true, true); }
static ember_tensor *f_batch_norm_relu_eval(ember_tensor **x) { return batch_norm(x, false, true, true); }
/* batch norm folded into the convolution (x, w, b, weight, bias) or the linear layer (x, w; no bias, no
 * affine part) before it */
static ember_tensor *f_fold_conv(ember_tensor **x)
{
    ember_tensor *w = NULL, *b = NULL;
    ember_batch_norm_fold(x[1], x[2], x[3], x[4], running_stat(x[0], 0, 0.1f), running_stat(x[0], 1, 0.8f),
                          1e-5f, &w, &b);
    return w ? ember_conv2d(x[0], w, b, 1, 1) : NULL;
}
static ember_tensor *f_fold_linear_plain(ember_tensor **x)
{
    ember_tensor *w = NULL, *b = NULL;
    ember_batch_norm_fold(x[1], NULL, NULL, NULL, running_stat(x[0], 0, 0.1f), running_stat(x[0], 1, 0.8f),
                          1e-5f, &w, &b);
    return w ? ember_linear(x[0], w, b) : NULL;
}
/* sequences and attention */
static ember_tensor *f_narrow(ember_tensor **x) { return ember_mul(ember_narrow(x[0], 1, 1, 2), x[1]); }
static ember_tensor *f_embedding(ember_tensor **x) { return ember_embedding(x[1], x[0]); }
static ember_tensor *f_layer_norm(ember_tensor **x) { return ember_layer_norm(x[0], x[1], x[2], 1e-5f); }
static ember_tensor *f_layer_norm_plain(ember_tensor **x)
{
    return ember_layer_norm(ember_transpose(x[0], 0, 1), NULL, NULL, 1e-5f);
}
static ember_tensor *f_rms_norm(ember_tensor **x) { return ember_rms_norm(x[0], x[1], 1e-5f); }
static ember_tensor *f_rms_norm_plain(ember_tensor **x)
{
    return ember_rms_norm(ember_transpose(x[0], 0, 1), NULL, 1e-5f);
}
static ember_tensor *f_causal_softmax(ember_tensor **x) { return ember_causal_softmax(x[0]); }
static ember_tensor *f_bmm(ember_tensor **x) { return ember_bmm(x[0], x[1]); }
static ember_tensor *f_bmm_transposed(ember_tensor **x)
{
    return ember_bmm(ember_transpose(x[0], 1, 2), ember_transpose(x[1], 1, 2));
}
static ember_tensor *f_attention(ember_tensor **x) { return ember_attention(x[0], 2, 0.0f, true, 0); }
static ember_tensor *f_attention_dropout(ember_tensor **x)
{
    return ember_attention(x[0], 3, 0.3f, true, 77);
}
static ember_tensor *f_attention_leaf_twice(ember_tensor **x)
{
    /* the gradient of one leaf from two attentions: the second adds to the first */
    return ember_add(ember_attention(x[0], 1, 0.0f, true, 0), ember_attention(x[0], 2, 0.0f, true, 0));
}
/* every activation of base/elementwise-impl.h, ember_<name>(x), with a slope of 0.1 where it takes one */
#define TEST_ARG_none
#define TEST_ARG_slope , 0.1f
#define ACTIVATION_FORWARD(NAME, name, param, ...)                                                           \
    static ember_tensor *f_##name(ember_tensor **x) { return ember_##name(x[0] TEST_ARG_##param); }
EMBER_ACTIVATIONS(ACTIVATION_FORWARD)
#undef ACTIVATION_FORWARD

/* rotary positions: x (B, T, heads, dim) turned by a table (positions, pairs, 2) that is not
 * differentiated (any values: the backward pass is the forward's transpose for any cos and sin) */
static ember_tensor *f_rope(ember_tensor **x) { return ember_rope(x[0], x[1], 1, false); }
static ember_tensor *f_rope_neox(ember_tensor **x) { return ember_rope(x[0], x[1], 0, true); }
/* a linear layer whose weight is quantised (Q8_0, 5 rows of 64; made once, freed in main): dx and db */
static ember_tensor *quantised;
static ember_tensor *f_linear_quant(ember_tensor **x)
{
    if (!quantised) {
        uint8_t blocks[5 * 2 * 34];
        ember_rng rng = ember_rng_seed(5);
        for (size_t i = 0; i < sizeof blocks; i++)
            blocks[i] = (uint8_t)ember_rng_u32(&rng);
        for (int b = 0; b < 10; b++) /* each scale a normal half near 0.01 */
            blocks[34 * b] = (uint8_t)ember_rng_u32(&rng), blocks[34 * b + 1] = 0x20;
        quantised = ember_tensor_new(ember_tensor_ctx(x[0]), EMBER_Q8_0, 2, (const int64_t[]){5, 64});
        if (!quantised || ember_tensor_write(quantised, blocks, sizeof blocks) != EMBER_OK)
            return NULL;
    }
    return ember_linear(x[0], quantised, x[1]);
}
#define T(...)                                                                                               \
    {                                                                                                        \
        __VA_ARGS__                                                                                          \
    }
static const struct gcase cases[] = {
/* every activation, over its test domain, from its row: a row added there is checked here */
#define ACTIVATION_CASE(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, domain)            \
    {#name, 1, {{3, T(2, 3, 4), FILL_##domain}}, f_##name},
    EMBER_ACTIVATIONS(ACTIVATION_CASE)
#undef ACTIVATION_CASE
        {"add", 2, {{2, T(3, 4)}, {2, T(3, 4)}}, f_add},
    {"add_broadcast_row", 2, {{2, T(3, 4)}, {1, T(4)}}, f_add},
    {"add_broadcast_both", 2, {{3, T(2, 1, 4)}, {2, T(3, 1)}}, f_add},
    {"add_transposed", 2, {{2, T(4, 3)}, {2, T(3, 4)}}, f_add_transposed},
    {"sub_broadcast", 2, {{2, T(3, 4)}, {2, T(3, 1)}}, f_sub},
    {"mul", 2, {{2, T(3, 4)}, {2, T(3, 4)}}, f_mul},
    {"mul_broadcast", 2, {{3, T(2, 3, 4)}, {1, T(4)}}, f_mul},
    {"mul_transposed", 2, {{3, T(2, 3, 4)}, {3, T(2, 4, 3)}}, f_mul_transposed},
    {"scale", 1, {{2, T(3, 5)}}, f_scale},
    {"relu_transposed", 1, {{3, T(2, 3, 4), FILL_AWAY_FROM_ZERO}}, f_relu_transposed},
    {"reuse", 1, {{2, T(3, 4)}}, f_reuse},
    {"sum_all", 1, {{3, T(2, 3, 4)}}, f_sum_all},
    {"sum_axis0", 1, {{2, T(3, 4)}}, f_sum_axis0},
    {"sum_axis1_keepdim", 1, {{3, T(2, 3, 4)}}, f_sum_axis1_keep},
    {"mean_last", 1, {{3, T(2, 3, 4)}}, f_mean_last},
    {"sum_transposed", 1, {{2, T(3, 4)}}, f_sum_transposed},
    {"softmax_last", 1, {{2, T(3, 5)}}, f_softmax_last},
    {"softmax_axis0", 1, {{2, T(4, 3)}}, f_softmax_axis0},
    {"log_softmax_last", 1, {{2, T(3, 5)}}, f_log_softmax_last},
    {"log_softmax_mid", 1, {{3, T(2, 4, 3)}}, f_log_softmax_mid},
    {"cross_entropy", 2, {{2, T(5, 4)}, {1, T(5), FILL_TARGETS, true}}, f_cross_entropy},
    {"matmul", 2, {{2, T(3, 4)}, {2, T(4, 5)}}, f_matmul},
    {"matmul_transposed", 2, {{2, T(4, 3)}, {2, T(4, 5)}}, f_matmul_transposed},
    {"linear", 3, {{2, T(3, 4)}, {2, T(5, 4)}, {1, T(5)}}, f_linear},
    {"linear_nobias", 2, {{2, T(3, 4)}, {2, T(5, 4)}}, f_linear_nobias},
    {"linear_sequence", 3, {{3, T(2, 3, 4)}, {2, T(5, 4)}, {1, T(5)}}, f_linear},
    {"conv2d_pad1", 3, {{4, T(2, 2, 5, 5)}, {4, T(3, 2, 3, 3)}, {1, T(3)}}, f_conv_pad1},
    /* 81 positions a plane: im2col's images apart, not side by side (core/ops-conv.c) */
    {"conv2d_planes_apart", 3, {{4, T(2, 2, 9, 9)}, {4, T(3, 2, 3, 3)}, {1, T(3)}}, f_conv_pad1},
    {"conv2d_stride2", 3, {{4, T(2, 2, 7, 6)}, {4, T(3, 2, 3, 3)}, {1, T(3)}}, f_conv_stride2},
    {"conv2d_nobias_pad2_rect", 2, {{4, T(1, 2, 4, 5)}, {4, T(2, 2, 3, 2)}}, f_conv_nobias},
    {"conv2d_pointwise", 3, {{4, T(3, 5, 4, 3)}, {4, T(2, 5, 1, 1)}, {1, T(2)}}, f_conv_pointwise},
    {"conv2d_depthwise_stride2", 3, {{4, T(2, 4, 6, 5)}, {4, T(4, 1, 3, 3)}, {1, T(4)}}, f_conv_depthwise},
    {"conv2d_groups2_nobias", 2, {{4, T(2, 4, 5, 4)}, {4, T(6, 2, 3, 3)}}, f_conv_groups2},
    {"conv2d_pointwise_nobias", 2, {{4, T(2, 3, 1, 7)}, {4, T(4, 3, 1, 1)}}, f_conv_pointwise_nobias},
    /* Winograd in 2x2 and 4x4 tiles, forced on the CPU (conv_forced), at
     * each padding it takes and odd sizes that leave part tiles */
    {"conv2d_winograd_pad1", 3, {{4, T(2, 3, 5, 7)}, {4, T(4, 3, 3, 3)}, {1, T(4)}}, f_winograd_pad1},
    {"conv2d_winograd_pad0", 3, {{4, T(2, 2, 6, 5)}, {4, T(3, 2, 3, 3)}, {1, T(3)}}, f_winograd_pad0},
    {"conv2d_winograd_nobias_pad2", 2, {{4, T(1, 3, 3, 4)}, {4, T(2, 3, 3, 3)}}, f_winograd_nobias_pad2},
    {"conv2d_winograd4_pad1", 3, {{4, T(2, 3, 9, 6)}, {4, T(4, 3, 3, 3)}, {1, T(4)}}, f_winograd4_pad1},
    {"conv2d_winograd4_nobias_pad2", 2, {{4, T(1, 2, 5, 3)}, {4, T(3, 2, 3, 3)}}, f_winograd4_nobias_pad2},
    /* a first layer's one channel (the CPU's vector kernels, 5 channels out: a block and a part) */
    {"conv2d_direct_one_channel", 3, {{4, T(2, 1, 6, 7)}, {4, T(5, 1, 3, 3)}, {1, T(5)}}, f_direct_pad1},
    {"conv2d_direct_stride2", 3, {{4, T(2, 3, 7, 6)}, {4, T(4, 3, 3, 2)}, {1, T(4)}}, f_direct_stride2},
    {"max_pool2d", 1, {{4, T(2, 2, 4, 6), FILL_DISTINCT}}, f_pool2},
    {"max_pool2d_overlap", 1, {{4, T(1, 2, 7, 7), FILL_DISTINCT}}, f_pool3s2},
    {"reshape", 2, {{2, T(4, 6)}, {3, T(3, 4, 2)}}, f_reshape},
    {"flatten_transposed", 1, {{3, T(2, 3, 4)}}, f_flatten_transposed},
    {"contiguous", 1, {{2, T(3, 4)}}, f_contiguous},
    {"tanh_transposed", 1, {{2, T(4, 5)}}, f_tanh_transposed},
    {"avg_pool2d", 1, {{4, T(2, 2, 4, 6)}}, f_avg_pool2},
    {"avg_pool2d_overlap", 1, {{4, T(1, 2, 5, 5)}}, f_avg_pool3s1},
    {"global_avg_pool2d", 1, {{4, T(2, 3, 3, 4)}}, f_global_avg_pool},
    {"max_pool2d_padded", 1, {{4, T(1, 2, 7, 6), FILL_DISTINCT}}, f_max_pool_padded},
    {"max_pool2d_ceil_mode", 1, {{4, T(1, 2, 6, 8), FILL_DISTINCT}}, f_max_pool_ceil},
    {"avg_pool2d_ceil_exclude_pad", 1, {{4, T(2, 2, 6, 7)}}, f_avg_pool_excl},
    {"pad", 1, {{3, T(2, 3, 4)}}, f_pad},
    {"upsample2d_nearest", 1, {{4, T(2, 2, 3, 4)}}, f_upsample_nearest},
    {"upsample2d_bilinear", 1, {{4, T(1, 2, 3, 2)}}, f_upsample_bilinear},
    {"concat_channels", 2, {{4, T(2, 3, 2, 3)}, {4, T(2, 2, 2, 3)}}, f_concat},
    {"concat_three_last_axis", 3, {{2, T(3, 2)}, {2, T(3, 1)}, {2, T(3, 4)}}, f_concat3},
    {"dropout", 1, {{2, T(6, 7)}}, f_dropout},
    {"residual_block", 3, {{4, T(2, 3, 4, 4)}, {4, T(3, 3, 3, 3)}, {1, T(3)}}, f_residual},
    {"batch_norm2d_train", 3, {{4, T(2, 3, 3, 2)}, {1, T(3)}, {1, T(3)}}, f_batch_norm_train},
    {"batch_norm1d_train", 3, {{2, T(5, 3)}, {1, T(3)}, {1, T(3)}}, f_batch_norm_train},
    {"batch_norm2d_eval", 3, {{4, T(2, 3, 2, 2)}, {1, T(3)}, {1, T(3)}}, f_batch_norm_eval},
    {"batch_norm2d_no_affine", 1, {{4, T(2, 3, 2, 3)}}, f_batch_norm_plain},
    {"batch_norm2d_relu_train", 3, {{4, T(3, 3, 2, 2)}, {1, T(3)}, {1, T(3)}}, f_batch_norm_relu_train},
    {"batch_norm2d_relu_eval", 3, {{4, T(2, 3, 2, 2)}, {1, T(3)}, {1, T(3)}}, f_batch_norm_relu_eval},
    {"batch_norm_fold_conv",
     5,
     {{4, T(2, 2, 4, 4)}, {4, T(3, 2, 3, 3)}, {1, T(3)}, {1, T(3)}, {1, T(3)}},
     f_fold_conv},
    {"batch_norm_fold_linear", 2, {{2, T(4, 5)}, {2, T(3, 5)}}, f_fold_linear_plain},
    {"narrow", 2, {{2, T(3, 4)}, {2, T(3, 2)}}, f_narrow},
    /* a square table, so that the targets' fill draws indices over all its rows; 8 indices, repeats */
    {"embedding", 2, {{2, T(5, 5)}, {2, T(2, 4), FILL_TARGETS, true}}, f_embedding},
    {"layer_norm", 3, {{3, T(2, 3, 5)}, {1, T(5)}, {1, T(5)}}, f_layer_norm},
    {"layer_norm_transposed_no_affine", 1, {{3, T(4, 2, 3)}}, f_layer_norm_plain},
    {"rms_norm", 2, {{3, T(2, 3, 5)}, {1, T(5)}}, f_rms_norm},
    {"rope", 2, {{4, T(2, 3, 2, 8)}, {3, T(4, 3, 2), FILL_UNIFORM, true}}, f_rope},
    {"rope_neox_partial", 2, {{4, T(1, 4, 3, 6)}, {3, T(4, 2, 2), FILL_UNIFORM, true}}, f_rope_neox},
    {"linear_quantised_weight", 2, {{3, T(2, 3, 64)}, {1, T(5)}}, f_linear_quant},
    {"rms_norm_transposed_no_weight", 1, {{3, T(4, 2, 3)}}, f_rms_norm_plain},
    {"causal_softmax", 1, {{3, T(2, 4, 4)}}, f_causal_softmax},
    {"causal_softmax_fewer_queries", 1, {{3, T(2, 3, 5)}}, f_causal_softmax},
    {"bmm", 2, {{3, T(2, 3, 4)}, {3, T(2, 4, 5)}}, f_bmm},
    {"bmm_transposed", 2, {{3, T(2, 4, 3)}, {3, T(2, 5, 4)}}, f_bmm_transposed},
    {"attention", 1, {{3, T(2, 4, 12)}}, f_attention},
    {"attention_dropout", 1, {{3, T(2, 5, 18)}}, f_attention_dropout},
    {"attention_leaf_twice", 1, {{3, T(1, 3, 12)}}, f_attention_leaf_twice},
    {"cross_entropy_sequence", 2, {{3, T(2, 3, 4)}, {2, T(2, 3), FILL_TARGETS, true}}, f_cross_entropy},
    {"recompute", 3, {{2, T(3, 4)}, {2, T(4, 4)}, {1, T(4)}}, f_recompute},
    {"recompute_selective",
     5,
     {{2, T(2, 64)}, {2, T(3, 64)}, {1, T(3)}, {2, T(4, 3)}, {1, T(4)}},
     f_recompute_selective},
    {"cross_entropy_ignore", 2, {{3, T(2, 3, 4)}, {2, T(2, 3), FILL_TARGETS, true}}, f_cross_entropy_ignore},
    {"cross_entropy_ignore_all",
     2,
     {{2, T(3, 4)}, {1, T(3), FILL_TARGETS, true}},
     f_cross_entropy_ignore_all},
};
#undef T

/* --------------------------------------------------------------- machinery */

static double uniform(ember_rng *rng, double lo, double hi)
{
    return ember_rng_uniform(rng, (float)lo, (float)hi);
}

static void fill_values(const struct input_spec *s, float *v, int64_t n, int64_t classes, ember_rng *rng)
{
    switch (s->fill) {
    case FILL_UNIFORM:
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)uniform(rng, -1, 1);
        break;
    case FILL_AWAY_FROM_ZERO:
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)((ember_rng_u32(rng) & 1 ? 1 : -1) * uniform(rng, 0.1, 1));
        break;
    case FILL_REAL:
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)uniform(rng, -4, 4);
        break;
    case FILL_PIECEWISE:
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)(floor(uniform(rng, -7, 7)) + uniform(rng, 0.1, 0.9));
        break;
    case FILL_DISTINCT: /* a shuffled ladder: distinct values 0.05 apart */
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)(-1.0 + 0.05 * (double)i);
        for (int64_t i = n - 1; i > 0; i--) {
            int64_t j = ember_rng_u32(rng) % (uint32_t)(i + 1);
            float t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        break;
    case FILL_TARGETS:
        for (int64_t i = 0; i < n; i++) {
            int32_t t = (int32_t)(ember_rng_u32(rng) % (uint32_t)classes);
            memcpy(&v[i], &t, sizeof t);
        }
        break;
    }
}

/* L = sum(W * y), on the host in double */
static bool objective(ember_ctx *ctx, ember_tensor *y, const float *w, float *scratch, double *value)
{
    int64_t n = ember_tensor_numel(y);
    if (ember_tensor_read(y, scratch, (size_t)n * sizeof *scratch) != EMBER_OK)
        return false;
    double l = 0.0;
    for (int64_t i = 0; i < n; i++)
        l += (double)w[i] * scratch[i];
    *value = l;
    (void)ctx;
    return true;
}

/* the ops some case's forward pass recorded: every op of EMBER_OPS must be one */
static bool op_checked[EMBER_OP_COUNT];

static void run_case(ember_ctx *ctx, const struct gcase *c)
{
    ember_tensor *(*forward)(ember_tensor **) = c->forward;
    ember_rng rng = ember_rng_seed(42);
    ember_tensor *x[MAX_INPUTS] = {0};
    float *values[MAX_INPUTS] = {0};
    int64_t classes = c->in[0].ndim == 2 ? c->in[0].shape[1] : 2;
    for (int k = 0; k < c->ninputs; k++) {
        const struct input_spec *s = &c->in[k];
        x[k] = ember_tensor_new(ctx, s->fill == FILL_TARGETS ? EMBER_I32 : EMBER_F32, s->ndim, s->shape);
        int64_t n = ember_tensor_numel(x[k]);
        values[k] = malloc((size_t)n * sizeof(float));
        fill_values(s, values[k], n, classes, &rng);
        CHECK_OK(ctx, ember_tensor_write(x[k], values[k], (size_t)n * sizeof(float)));
        if (!s->no_grad)
            CHECK_OK(ctx, ember_tensor_set_requires_grad(x[k], true));
    }

    /* analytic: L = sum(W * y) through ember, then backward */
    ember_tensor *y = forward(x);
    CHECK(y != NULL, "%s: forward failed: %s", c->name, ember_last_error(ctx));
    if (!y)
        goto done;
    int64_t ny = ember_tensor_numel(y);
    float *w = malloc((size_t)ny * sizeof *w), *scratch = malloc((size_t)ny * sizeof *scratch);
    for (int64_t i = 0; i < ny; i++)
        w[i] = (float)uniform(&rng, -1, 1);
    int64_t yshape[EMBER_MAX_DIMS];
    for (int i = 0; i < ember_tensor_ndim(y); i++)
        yshape[i] = ember_tensor_dim(y, i);
    for (int64_t i = 0; i < ctx->node_len; i++)
        op_checked[ctx->nodes[i].op] = true;
    ember_tensor *wt = ember_tensor_new(ctx, EMBER_F32, ember_tensor_ndim(y), yshape);
    CHECK_OK(ctx, ember_tensor_write(wt, w, (size_t)ny * sizeof *w));
    CHECK_OK(ctx, ember_backward(ember_sum(ember_mul(y, wt), EMBER_ALL_AXES, false)));
    ember_tape_clear(ctx);

    for (int k = 0; k < c->ninputs; k++) {
        if (c->in[k].no_grad)
            continue;
        int64_t n = ember_tensor_numel(x[k]);
        float *analytic = malloc((size_t)n * sizeof *analytic);
        ember_tensor *g = ember_tensor_grad(x[k]);
        CHECK(g != NULL, "%s: input %d got no gradient", c->name, k);
        if (!g || ember_tensor_read(g, analytic, (size_t)n * sizeof *analytic) != EMBER_OK) {
            free(analytic);
            continue;
        }
        double diff2 = 0, num2 = 0, ana2 = 0, max_abs = 0, worst = 0;
        int64_t worst_i = 0;
        double *numeric = malloc((size_t)n * sizeof *numeric);
        for (int64_t i = 0; i < n; i++) {
            float saved = values[k][i];
            double lp = 0, lm = 0;
            values[k][i] = (float)(saved + H);
            ember_tensor_write(x[k], values[k], (size_t)n * sizeof(float));
            bool ok = objective(ctx, forward(x), w, scratch, &lp);
            values[k][i] = (float)(saved - H);
            ember_tensor_write(x[k], values[k], (size_t)n * sizeof(float));
            ok = ok && objective(ctx, forward(x), w, scratch, &lm);
            values[k][i] = saved;
            ember_tensor_write(x[k], values[k], (size_t)n * sizeof(float));
            ember_tape_clear(ctx);
            CHECK(ok, "%s: forward failed during differencing: %s", c->name, ember_last_error(ctx));
            /* the perturbation actually applied, in float */
            double step = (double)(float)(saved + H) - (double)(float)(saved - H);
            numeric[i] = (lp - lm) / step;
        }
        for (int64_t i = 0; i < n; i++) {
            double d = numeric[i] - analytic[i];
            diff2 += d * d;
            num2 += numeric[i] * numeric[i];
            ana2 += (double)analytic[i] * analytic[i];
            max_abs = fmax(max_abs, fabs(analytic[i]));
            if (fabs(d) > worst) {
                worst = fabs(d);
                worst_i = i;
            }
        }
        double rel = sqrt(diff2) / fmax(fmax(sqrt(num2), sqrt(ana2)), 1e-6);
        if (getenv("GRADCHECK_VERBOSE"))
            printf("  %s input %d: rel %.2e worst %.2e of %.2e\n", c->name, k, rel, worst, max_abs);
        CHECK(rel < 1e-3 && worst <= 1e-3 * fmax(max_abs, 1e-3),
              "%s: input %d: relative L2 error %.2e, worst element %lld: numeric %.6f analytic %.6f", c->name,
              k, rel, (long long)worst_i, numeric[worst_i], analytic[worst_i]);
        free(numeric);
        free(analytic);
    }
    ember_tensor_free(wt);
    free(w);
    free(scratch);
done:
    for (int k = 0; k < c->ninputs; k++) {
        ember_tensor_free(x[k]);
        free(values[k]);
    }
}

/* ------------------------------------------------ NaN, Inf and zeros
 * Each activation at the values a gradient check cannot difference: y, and
 * dx for dy = 1 through ember_backward, as the reference gives them from
 * the row's formulas (tests/ops/reference.c), NaN for NaN and Inf for Inf.
 * This holds the backward to reading what its row says (x or y) on every
 * backend; tests/interop/test_ops_vs_torch.py holds the formulas to
 * PyTorch's at the same values. */
static const float specials[] = {NAN,   INFINITY, -INFINITY, 0.0f,  -0.0f, 0.5f,
                                 -2.5f, 3.0f,     7.0f,      30.0f, -30.0f};
#define N_SPECIALS ((int64_t)(sizeof specials / sizeof specials[0]))

#define TEST_ALPHA_none  0.0f
#define TEST_ALPHA_slope 0.1f
static const struct activation {
    const char *name;
    ember_tensor *(*forward)(ember_tensor **x);
    enum ember_unary_op op;
    enum ember_binary_op backward;
    bool reads_y;
    float alpha;
} activations[] = {
#define ACTIVATION_ENTRY(NAME, name, param, f, fmath, saves, ...)                                            \
    {#name,                                                                                                  \
     f_##name,                                                                                               \
     EMBER_##NAME,                                                                                           \
     EMBER_##NAME##_BACKWARD,                                                                                \
     EMBER_ACTIVATION_READS_##saves,                                                                         \
     TEST_ALPHA_##param},
    EMBER_ACTIVATIONS(ACTIVATION_ENTRY)
#undef ACTIVATION_ENTRY
};

static bool same_value(float got, float want)
{
    if (isnan(want) || isnan(got) || isinf(want) || isinf(got))
        return (isnan(want) && isnan(got)) || got == want;
    return fabs((double)got - want) <= 1e-5 * fmax(1.0, fabs(want));
}

static void check_specials(ember_ctx *ctx, const struct activation *a)
{
    const int64_t shape[1] = {N_SPECIALS};
    struct ember_ewise e = {.ndim = 1,
                            .dense = true,
                            .numel = N_SPECIALS,
                            .shape = {N_SPECIALS},
                            .stride_out = {1},
                            .stride_a = {1},
                            .stride_b = {1}};
    float want_y[N_SPECIALS], want_dx[N_SPECIALS], ones[N_SPECIALS], got_y[N_SPECIALS], got_dx[N_SPECIALS];
    for (int64_t i = 0; i < N_SPECIALS; i++)
        ones[i] = 1.0f;
    ref_unary(NULL, a->op, &e, REF_PTR(want_y), REF_PTR(specials), a->alpha);
    ref_binary(NULL, a->backward, &e, REF_PTR(want_dx), REF_PTR(ones),
               REF_PTR(a->reads_y ? want_y : specials), a->alpha);

    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 1, shape);
    CHECK_OK(ctx, ember_tensor_write(x, specials, sizeof specials));
    CHECK_OK(ctx, ember_tensor_set_requires_grad(x, true));
    ember_tensor *y = a->forward(&x);
    CHECK(y != NULL, "%s at NaN and Inf: %s", a->name, ember_last_error(ctx));
    if (y) {
        CHECK_OK(ctx, ember_tensor_read(y, got_y, sizeof got_y));
        CHECK_OK(ctx, ember_backward(ember_sum(y, EMBER_ALL_AXES, false)));
        ember_tensor *g = ember_tensor_grad(x);
        CHECK(g && ember_tensor_read(g, got_dx, sizeof got_dx) == EMBER_OK, "%s: no gradient", a->name);
        for (int64_t i = 0; g && i < N_SPECIALS; i++) {
            CHECK(same_value(got_y[i], want_y[i]), "%s(%g) is %g, the reference's %g", a->name, specials[i],
                  got_y[i], want_y[i]);
            CHECK(same_value(got_dx[i], want_dx[i]), "%s's gradient at %g is %g, the reference's %g", a->name,
                  specials[i], got_dx[i], want_dx[i]);
        }
    }
    ember_tape_clear(ctx);
    ember_tensor_free(x);
}

int main(int argc, char **argv)
{
    const char *filter = argc == 3 && strcmp(argv[1], "-o") == 0 ? argv[2] : NULL;
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (filter && !strstr(cases[i].name, filter))
            continue;
        int before = test_failures;
        run_case(ctx, &cases[i]);
        printf("%-28s %s\n", cases[i].name, test_failures == before ? "ok" : "FAILED");
        ran++;
    }
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++) {
        if (filter && !strstr(activations[i].name, filter))
            continue;
        int before = test_failures;
        check_specials(ctx, &activations[i]);
        printf("%-28s %s\n", activations[i].name,
               test_failures == before ? "ok at NaN, Inf and zeros" : "FAILED");
        ran++;
    }
    CHECK(ran > 0, "no case matches \"%s\"", filter ? filter : "");
    for (int op = 0; op < EMBER_OP_COUNT && !filter; op++) /* an op added without a case fails here */
        CHECK(op_checked[op], "op %s has no gradcheck case", ember_op_name((enum ember_op)op));
    ember_tensor_free(running[0]);
    ember_tensor_free(running[1]);
    ember_tensor_free(quantised);
    ember_ctx_free(ctx);
    return test_finish("test_gradcheck");
}
