/* SPDX-License-Identifier: MIT */
/*
 * models/model-layers.c — the layer types a model file may use: their
 * options, the shapes they take and give, their parameters (named and
 * initialised as PyTorch's modules are) and their forward pass, one public
 * op or two each.
 *
 * Shapes here are one sample's, without the batch axis: images (C, H, W),
 * vectors (features).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise-impl.h"
#include "models-impl.h"

#define WHY(...) (snprintf(why, why_len, __VA_ARGS__), false)

/* snprintf at out + *at, never past len; *at stops at len - 1 */
static void append(char *out, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *out, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + *at, len - *at, fmt, ap);
    va_end(ap);
    *at = n < 0 ? *at : *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

static int64_t numel_of(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

static int64_t out_numel(const struct model_layer *l) { return numel_of(l->out_ndim, l->out_shape); }

/* "(16, 1, 3, 3)", as PyTorch prints a size and safetensors' messages do */
static const char *tuple_str(int ndim, const int64_t *shape, char *out, size_t len)
{
    size_t at = 0;
    append(out, len, &at, "(");
    for (int d = 0; d < ndim; d++)
        append(out, len, &at, "%s%lld", d ? ", " : "", (long long)shape[d]);
    append(out, len, &at, ")");
    return out;
}

/* A parameter or buffer `prefix.name` (or `name` when prefix is empty).
 * A name already taken is the file's mistake (b->taken says which; the
 * builder names the layer that has it); when the model is built to load
 * a checkpoint, the checkpoint must hold the tensor with this shape, which
 * is checked before anything is allocated for it. */
static ember_tensor *add(struct model_build *b, const char *prefix, const char *name, bool buffer, int ndim,
                         const int64_t *shape)
{
    char full[MODEL_NAME_MAX + 32], want[160], have[160];
    snprintf(full, sizeof full, "%s%s%s", prefix, *prefix ? "." : "", name);
    if (ember_params_find(b->params, full)) {
        snprintf(b->taken, sizeof b->taken, "%s", full);
        ember_set_error(b->ctx, EMBER_ERR_FORMAT, "the name \"%s\" is taken", full);
        return NULL;
    }
    if (b->expect) {
        int64_t in_file[EMBER_MAX_DIMS];
        int file_ndim = ember_checkpoint_tensor_shape(b->expect, full, in_file);
        tuple_str(ndim, shape, want, sizeof want);
        if (file_ndim < 0) {
            ember_set_error(b->ctx, EMBER_ERR_FORMAT,
                            "%s has no tensor \"%s\" %s, which the model it describes has", b->expect_path,
                            full, want);
            return NULL;
        }
        if (file_ndim != ndim || (ndim && memcmp(in_file, shape, (size_t)ndim * sizeof *shape) != 0)) {
            ember_set_error(b->ctx, EMBER_ERR_FORMAT,
                            "%s holds \"%s\" as %s, but the model it describes makes it %s", b->expect_path,
                            full, tuple_str(file_ndim, in_file, have, sizeof have), want);
            return NULL;
        }
    }
    return buffer ? ember_params_add_buffer(b->params, full, ndim, shape)
                  : ember_params_add(b->params, full, ndim, shape);
}

static ember_status fill(ember_tensor *t, float value)
{
    int64_t n = ember_tensor_numel(t);
    float *host = malloc((size_t)(n ? n : 1) * sizeof *host);
    if (!host)
        return ember_set_error(ember_tensor_ctx(t), EMBER_ERR_NOMEM,
                               "out of host memory initialising a layer");
    for (int64_t i = 0; i < n; i++)
        host[i] = value;
    ember_status st = ember_tensor_write(t, host, (size_t)n * sizeof *host);
    free(host);
    return st;
}

/* ------------------------------------------------------------------ conv2d */

enum { CONV_OUT, CONV_KERNEL, CONV_STRIDE, CONV_PADDING, CONV_BIAS, CONV_GROUPS };
#define PADDING_SAME (-1.0)

static int conv_padding(const struct model_layer *l)
{
    return l->value[CONV_PADDING] == PADDING_SAME ? (int)(l->value[CONV_KERNEL] - 1) / 2
                                                  : (int)l->value[CONV_PADDING];
}

/* y (OC, OH, OW), OH = (H + 2 padding - K) / stride + 1 */
static bool conv_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                       char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("conv2d takes images (C, H, W)");
    int64_t k = (int64_t)l->value[CONV_KERNEL], s = (int64_t)l->value[CONV_STRIDE];
    if (l->value[CONV_PADDING] == PADDING_SAME && (s != 1 || k % 2 == 0))
        return WHY("padding=same needs stride 1 and an odd kernel");
    int64_t p = conv_padding(l), groups = (int64_t)l->value[CONV_GROUPS];
    if (in[0] % groups != 0 || (int64_t)l->value[CONV_OUT] % groups != 0)
        return WHY("groups=%lld must divide the %lld input and %lld output channels", (long long)groups,
                   (long long)in[0], (long long)l->value[CONV_OUT]);
    if (in[1] + 2 * p < k || in[2] + 2 * p < k)
        return WHY("the %lldx%lld kernel is larger than the %lldx%lld image%s", (long long)k, (long long)k,
                   (long long)(in[1] + 2 * p), (long long)(in[2] + 2 * p), p ? " with its padding" : "");
    *out_ndim = 3;
    out[0] = (int64_t)l->value[CONV_OUT];
    out[1] = (in[1] + 2 * p - k) / s + 1;
    out[2] = (in[2] + 2 * p - k) / s + 1;
    return true;
}

/* weight (OC, C / groups, K, K) and bias (OC): kaiming-uniform, as nn.Conv2d */
static ember_status conv_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    int64_t k = (int64_t)l->value[CONV_KERNEL],
            wshape[4] = {l->out_shape[0], l->in_shape[0] / (int64_t)l->value[CONV_GROUPS], k, k};
    bool bias = l->value[CONV_BIAS] != 0.0;
    l->t[0] = add(b, prefix, "weight", false, 4, wshape);
    l->t[1] = bias && l->t[0] ? add(b, prefix, "bias", false, 1, wshape) : NULL;
    if (!l->t[0] || (bias && !l->t[1]))
        return ember_last_status(b->ctx);
    return ember_init_default(l->t[0], l->t[1], &b->rng);
}

static ember_tensor *conv_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_conv2d_grouped(x, l->t[0], l->t[1], (int)l->value[CONV_STRIDE], conv_padding(l),
                                (int)l->value[CONV_GROUPS]); /* (N, OC, OH, OW) */
}

static double conv_flops(const struct model_layer *l)
{
    double k = l->value[CONV_KERNEL], positions = (double)out_numel(l);
    double channels = (double)l->in_shape[0] / l->value[CONV_GROUPS];
    return positions * (2.0 * channels * k * k + (l->value[CONV_BIAS] != 0.0));
}

static void conv_describe(const struct model_layer *l, char *out, size_t len)
{
    size_t at = 0;
    append(out, len, &at, "Conv2d(%lld, %lld, %d", (long long)l->in_shape[0], (long long)l->out_shape[0],
           (int)l->value[CONV_KERNEL]);
    if (l->value[CONV_STRIDE] != 1)
        append(out, len, &at, ", stride=%d", (int)l->value[CONV_STRIDE]);
    if (conv_padding(l))
        append(out, len, &at, ", padding=%d", conv_padding(l));
    if (l->value[CONV_GROUPS] != 1)
        append(out, len, &at, ", groups=%d", (int)l->value[CONV_GROUPS]);
    append(out, len, &at, "%s)", l->value[CONV_BIAS] != 0.0 ? "" : ", bias=False");
}

/* ------------------------------------------------------------------ linear */

enum { LINEAR_OUT, LINEAR_BIAS };

/* (in) -> (out), or a sequence's (T, in) -> (T, out), every position alike */
static bool linear_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                         int64_t *out, char *why, size_t why_len)
{
    if (ndim == 3)
        return WHY("linear takes features (a vector per sample): put flatten or global_avg_pool2d before it");
    *out_ndim = ndim;
    out[0] = in[0];
    out[ndim - 1] = (int64_t)l->value[LINEAR_OUT];
    return true;
}

/* weight (out, in) and bias (out), as nn.Linear */
static ember_status linear_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    int64_t wshape[2] = {l->out_shape[l->out_ndim - 1], l->in_shape[l->in_ndim - 1]};
    bool bias = l->value[LINEAR_BIAS] != 0.0;
    l->t[0] = add(b, prefix, "weight", false, 2, wshape);
    l->t[1] = bias && l->t[0] ? add(b, prefix, "bias", false, 1, wshape) : NULL;
    if (!l->t[0] || (bias && !l->t[1]))
        return ember_last_status(b->ctx);
    return ember_init_default(l->t[0], l->t[1], &b->rng);
}

static ember_tensor *linear_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_linear(x, l->t[0], l->t[1]); /* (N, out) or (N, T, out) */
}

static double linear_flops(const struct model_layer *l)
{
    double in = (double)l->in_shape[l->in_ndim - 1],
           positions = l->in_ndim == 2 ? (double)l->in_shape[0] : 1.0;
    return positions * (double)l->value[LINEAR_OUT] * (2.0 * in + (l->value[LINEAR_BIAS] != 0.0));
}

static void linear_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "Linear(%lld, %lld%s)", (long long)l->in_shape[l->in_ndim - 1],
             (long long)l->out_shape[l->out_ndim - 1], l->value[LINEAR_BIAS] != 0.0 ? "" : ", bias=False");
}

/* -------------------------------------------------------------- batch norm */

enum { BN_MOMENTUM, BN_EPS, BN_AFFINE };
enum { BN_WEIGHT, BN_BIAS, BN_MEAN, BN_VAR, BN_COUNT };

static bool bn2d_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                       char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("batch_norm2d takes images (C, H, W); on features use batch_norm1d");
    *out_ndim = ndim;
    memcpy(out, in, (size_t)ndim * sizeof *in);
    return true;
}

static bool bn1d_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                       char *why, size_t why_len)
{
    if (ndim != 1)
        return WHY("batch_norm1d takes features (a vector per sample); on images use batch_norm2d");
    *out_ndim = 1;
    out[0] = in[0];
    return true;
}

/* weight (C) = 1 and bias (C) = 0 when affine; buffers running_mean (C) = 0,
 * running_var (C) = 1 and num_batches_tracked () = 0: nn.BatchNorm's state,
 * in its order */
static ember_status bn_add_params(struct model_layer *l, struct model_build *b, const char *prefix)
{
    const int64_t c[1] = {l->in_shape[0]};
    bool affine = l->value[BN_AFFINE] != 0.0;
    if (affine) {
        if (!(l->t[BN_WEIGHT] = add(b, prefix, "weight", false, 1, c)) ||
            !(l->t[BN_BIAS] = add(b, prefix, "bias", false, 1, c)))
            return ember_last_status(b->ctx);
    }
    if (!(l->t[BN_MEAN] = add(b, prefix, "running_mean", true, 1, c)) ||
        !(l->t[BN_VAR] = add(b, prefix, "running_var", true, 1, c)) ||
        !(l->t[BN_COUNT] = add(b, prefix, "num_batches_tracked", true, 0, NULL)))
        return ember_last_status(b->ctx);
    ember_status st = affine ? fill(l->t[BN_WEIGHT], 1.0f) : EMBER_OK;
    return st == EMBER_OK ? fill(l->t[BN_VAR], 1.0f) : st; /* the rest starts at zero */
}

static ember_tensor *bn_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    if (training)
        l->batches_tracked++;
    return ember_batch_norm(x, l->t[BN_WEIGHT], l->t[BN_BIAS], l->t[BN_MEAN], l->t[BN_VAR], training,
                            (float)l->value[BN_MOMENTUM], (float)l->value[BN_EPS]);
}

ember_tensor *model_batch_norm_relu_forward(struct model_layer *l, ember_tensor *x, bool training)
{
    if (training)
        l->batches_tracked++;
    return ember_batch_norm_relu(x, l->t[BN_WEIGHT], l->t[BN_BIAS], l->t[BN_MEAN], l->t[BN_VAR], training,
                                 (float)l->value[BN_MOMENTUM], (float)l->value[BN_EPS]);
}

/* A conv2d or linear layer and the batch norm after it, in evaluation: the
 * layer alone, with the batch norm folded into its weight and bias
 * (ember_batch_norm_fold), and with `relu` the relu layer after them */
/* the writes so far into what a fold reads: the layer's weight and bias and
 * the batch norm's four tensors (a count that only grows, so a sum that
 * moves with any of them) */
static uint64_t fold_sources_writes(const struct model_layer *layer, const struct model_layer *bn)
{
    uint64_t n = 0;
    for (int k = 0; k < 2; k++)
        n += ember_tensor_writes(layer->t[k]);
    for (int k = BN_WEIGHT; k <= BN_VAR; k++)
        n += ember_tensor_writes(bn->t[k]);
    return n;
}

/* The fold, or, with gradients off (prediction, evaluation), the one kept
 * from the last forward while nothing it was made from has been written
 * since: recomputed every call, the fold scaled every weight of the network
 * anew, 40% of ResNet-18's prediction of one image. With gradients on the
 * fold is recorded on the tape, so that they reach the weights. */
static ember_status fold(struct model_layer *layer, struct model_layer *bn, ember_tensor **w,
                         ember_tensor **b)
{
    bool keep = !ember_grad_enabled(ember_tensor_ctx(layer->t[0]));
    uint64_t writes = keep ? fold_sources_writes(layer, bn) : 0;
    if (keep && layer->folded[0] && layer->folded_writes == writes) {
        *w = layer->folded[0], *b = layer->folded[1];
        return EMBER_OK;
    }
    ember_status st = ember_batch_norm_fold(layer->t[0], layer->t[1], bn->t[BN_WEIGHT], bn->t[BN_BIAS],
                                            bn->t[BN_MEAN], bn->t[BN_VAR], (float)bn->value[BN_EPS], w, b);
    if (st != EMBER_OK || !keep)
        return st;
    for (int k = 0; k < 2; k++) {
        ember_tensor_free(layer->folded[k]);
        layer->folded[k] = ember_tensor_copy(k ? *b : *w); /* the caller's, not the tape's */
    }
    if (!layer->folded[0] || !layer->folded[1])
        return ember_last_status(ember_tensor_ctx(layer->t[0]));
    layer->folded_writes = writes;
    *w = layer->folded[0], *b = layer->folded[1];
    return EMBER_OK;
}

ember_tensor *model_folded_batch_norm_forward(struct model_layer *layer, struct model_layer *bn,
                                              ember_tensor *x, bool relu)
{
    ember_tensor *w, *b;
    if (fold(layer, bn, &w, &b) != EMBER_OK)
        return NULL;
    ember_tensor *y = layer->type->forward == conv_forward
                          ? ember_conv2d_grouped(x, w, b, (int)layer->value[CONV_STRIDE], conv_padding(layer),
                                                 (int)layer->value[CONV_GROUPS])
                          : ember_linear(x, w, b);
    return relu && y ? ember_relu(y) : y;
}

/* normalise and scale: (x - mean) * inv_std * weight + bias */
static double bn_flops(const struct model_layer *l) { return 4.0 * (double)out_numel(l); }

static void bn_describe(const struct model_layer *l, char *out, size_t len)
{
    size_t at = 0;
    append(out, len, &at, "BatchNorm%s(%lld", l->in_ndim == 3 ? "2d" : "1d", (long long)l->in_shape[0]);
    if (l->value[BN_EPS] != 1e-5)
        append(out, len, &at, ", eps=%g", l->value[BN_EPS]);
    if (l->value[BN_MOMENTUM] != 0.1)
        append(out, len, &at, ", momentum=%g", l->value[BN_MOMENTUM]);
    append(out, len, &at, "%s)", l->value[BN_AFFINE] != 0.0 ? "" : ", affine=False");
}

/* ------------------------------------------------------------- activations */

static bool same_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                       char *why, size_t why_len)
{
    *out_ndim = ndim;
    memcpy(out, in, (size_t)ndim * sizeof *in);
    return true;
}

/* one operation per element: activations are memory-bound */
static double elementwise_flops(const struct model_layer *l) { return (double)out_numel(l); }

/* The activations whose rows say LAYER (base/elementwise-impl.h): a layer
 * of the row's name with no options, which runs ember_<name> and is
 * described as PyTorch's module. The rows that say HAND (an option: the
 * slope, GELU's tanh form) are written below by hand. */
#define ACTIVATION_LAYER(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, ...)                    \
    MADE_BY_##layer(name, torch)
#define MADE_BY_HAND(name, torch)
#define MADE_BY_LAYER(name, torch)                                                                           \
    static ember_tensor *name##_forward(struct model_layer *l, ember_tensor *x, bool training,               \
                                        uint64_t seed)                                                       \
    {                                                                                                        \
        return ember_##name(x);                                                                              \
    }                                                                                                        \
    static void name##_describe(const struct model_layer *l, char *out, size_t len)                          \
    {                                                                                                        \
        snprintf(out, len, "%s", &(torch)[strlen("nn.")]);                                                   \
    }
EMBER_ACTIVATIONS(ACTIVATION_LAYER)
#undef MADE_BY_LAYER
#undef ACTIVATION_LAYER
#define ROW_BY_HAND(name, f, torch)

static ember_tensor *leaky_relu_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_leaky_relu(x, (float)l->value[0]);
}
static ember_tensor *gelu_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return l->value[0] != 0.0 ? ember_gelu_tanh(x) : ember_gelu(x);
}
static ember_tensor *silu_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_silu(x);
}

static void leaky_relu_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "LeakyReLU(%g)", l->value[0]);
}
/* clang-format off */
static void silu_describe(const struct model_layer *l, char *out, size_t len) { snprintf(out, len, "SiLU()"); }
/* clang-format on */
static void gelu_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "GELU(%s)", l->value[0] != 0.0 ? "approximate='tanh'" : "");
}

/* ------------------------------------------------------------------- pools */

enum { POOL_KERNEL, POOL_STRIDE, POOL_PADDING, POOL_CEIL, POOL_COUNT_PAD };

static int pool_stride(const struct model_layer *l)
{
    return l->value[POOL_STRIDE] ? (int)l->value[POOL_STRIDE] : (int)l->value[POOL_KERNEL];
}

/* an output side, as PyTorch's (ember_max_pool2d_padded in ember.h) */
static int64_t pool_side(const struct model_layer *l, int64_t in)
{
    int64_t k = (int64_t)l->value[POOL_KERNEL], s = pool_stride(l), p = (int64_t)l->value[POOL_PADDING];
    bool ceil_mode = l->value[POOL_CEIL] != 0.0;
    int64_t out = (ceil_mode ? (in + 2 * p - k + s - 1) / s : (in + 2 * p - k) / s) + 1;
    return ceil_mode && (out - 1) * s >= in + p ? out - 1 : out;
}

/* y (C, OH, OW): OH = (H + 2 padding - K) / stride + 1, rounded down, or up with ceil_mode */
static bool pool_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                       char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("%s takes images (C, H, W)", l->type->name);
    int64_t k = (int64_t)l->value[POOL_KERNEL], p = (int64_t)l->value[POOL_PADDING];
    if (p > k / 2)
        return WHY("padding=%lld is more than half the %lldx%lld window", (long long)p, (long long)k,
                   (long long)k);
    if (in[1] + 2 * p < k || in[2] + 2 * p < k)
        return WHY("the %lldx%lld window is larger than the %lldx%lld image%s", (long long)k, (long long)k,
                   (long long)(in[1] + 2 * p), (long long)(in[2] + 2 * p), p ? " with its padding" : "");
    *out_ndim = 3;
    out[0] = in[0];
    out[1] = pool_side(l, in[1]);
    out[2] = pool_side(l, in[2]);
    return true;
}

static bool pool_padded(const struct model_layer *l)
{
    return l->value[POOL_PADDING] != 0.0 || l->value[POOL_CEIL] != 0.0;
}

static ember_tensor *max_pool_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    int k = (int)l->value[POOL_KERNEL];
    return pool_padded(l) ? ember_max_pool2d_padded(x, k, pool_stride(l), (int)l->value[POOL_PADDING],
                                                    l->value[POOL_CEIL] != 0.0)
                          : ember_max_pool2d(x, k, pool_stride(l));
}
static ember_tensor *avg_pool_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    int k = (int)l->value[POOL_KERNEL];
    return pool_padded(l)
               ? ember_avg_pool2d_padded(x, k, pool_stride(l), (int)l->value[POOL_PADDING],
                                         l->value[POOL_CEIL] != 0.0, l->value[POOL_COUNT_PAD] != 0.0)
               : ember_avg_pool2d(x, k, pool_stride(l));
}

/* one operation per element of each window */
static double pool_flops(const struct model_layer *l)
{
    return (double)out_numel(l) * l->value[POOL_KERNEL] * l->value[POOL_KERNEL];
}

static void pool_describe(const struct model_layer *l, char *out, size_t len)
{
    const char *name = strcmp(l->type->name, "max_pool2d") == 0 ? "MaxPool2d" : "AvgPool2d";
    size_t at = 0;
    append(out, len, &at, "%s(%d", name, (int)l->value[POOL_KERNEL]);
    if (pool_stride(l) != (int)l->value[POOL_KERNEL])
        append(out, len, &at, ", stride=%d", pool_stride(l));
    if (l->value[POOL_PADDING] != 0.0)
        append(out, len, &at, ", padding=%d", (int)l->value[POOL_PADDING]);
    if (l->value[POOL_CEIL] != 0.0)
        append(out, len, &at, ", ceil_mode=True");
    if (name[0] == 'A' && l->value[POOL_COUNT_PAD] == 0.0)
        append(out, len, &at, ", count_include_pad=False");
    append(out, len, &at, ")");
}

/* y (C): the mean of each plane; (C, 1, 1) with keepdim, as a
 * squeeze-and-excitation gate's 1x1 convolutions take it */
static bool global_pool_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                              int64_t *out, char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("global_avg_pool2d takes images (C, H, W)");
    bool keep = l->value[0] != 0.0;
    *out_ndim = keep ? 3 : 1;
    out[0] = in[0];
    out[1] = out[2] = 1;
    return true;
}

static ember_tensor *global_pool_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    ember_tensor *y = ember_global_avg_pool2d(x); /* (N, C) */
    int64_t kept[4] = {ember_tensor_dim(x, 0), ember_tensor_dim(x, 1), 1, 1};
    return l->value[0] != 0.0 && y ? ember_reshape(y, 4, kept) : y;
}

static double global_pool_flops(const struct model_layer *l)
{
    return (double)numel_of(l->in_ndim, l->in_shape);
}

static void global_pool_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "%s", l->value[0] != 0.0 ? "AdaptiveAvgPool2d(1)" : "AdaptiveAvgPool2d(1), Flatten()");
}

/* --------------------------------------------------------------------- pad */

/* `padding` positions of `value` on each side of H and W (nn.ConstantPad2d, nn.ZeroPad2d) */
static bool pad_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                      char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("pad takes images (C, H, W)");
    int64_t p = (int64_t)l->value[0];
    if (in[1] + 2 * p > EMBER_MAX_SAMPLE_SIDE || in[2] + 2 * p > EMBER_MAX_SAMPLE_SIDE)
        return WHY("%lldx%lld padded by %lld is over %d a side", (long long)in[1], (long long)in[2],
                   (long long)p, EMBER_MAX_SAMPLE_SIDE);
    *out_ndim = 3;
    out[0] = in[0], out[1] = in[1] + 2 * p, out[2] = in[2] + 2 * p;
    return true;
}

static ember_tensor *pad_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    int64_t p = (int64_t)l->value[0], sides[4] = {0, 0, p, p};
    return ember_pad(x, sides, sides, (float)l->value[1]);
}

static void pad_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "ConstantPad2d(%g, %g)", l->value[0], l->value[1]);
}

/* ----------------------------------------------------------------- upsample */

static bool upsample_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                           int64_t *out, char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("upsample takes images (C, H, W)");
    int64_t s = (int64_t)l->value[0];
    if (in[1] * s > EMBER_MAX_SAMPLE_SIDE || in[2] * s > EMBER_MAX_SAMPLE_SIDE)
        return WHY("%lldx%lld made %lld times larger is over %d a side", (long long)in[1], (long long)in[2],
                   (long long)s, EMBER_MAX_SAMPLE_SIDE);
    *out_ndim = 3;
    out[0] = in[0], out[1] = in[1] * s, out[2] = in[2] * s;
    return true;
}

static ember_tensor *upsample_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_upsample2d(x, (int)l->value[0], l->value[1] != 0.0);
}

/* two products: s H W (H + W)-ish multiply-adds an output element, counted as the sum of its taps */
static double upsample_flops(const struct model_layer *l)
{
    return 2.0 * (double)out_numel(l) * (l->value[1] != 0.0 ? 4.0 : 1.0);
}

static void upsample_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "Upsample(scale_factor=%g, mode='%s')", l->value[0],
             l->value[1] != 0.0 ? "bilinear" : "nearest");
}

/* ------------------------------------------------- softmax, log_softmax */

/* over the channels of images, the features of vectors, the last axis of a sequence */
static int softmax_axis(const struct model_layer *l) { return l->in_ndim == 2 ? -1 : 1; }

static ember_tensor *softmax_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_softmax(x, softmax_axis(l));
}

static ember_tensor *log_softmax_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_log_softmax(x, softmax_axis(l));
}

static double softmax_flops(const struct model_layer *l) { return 5.0 * (double)out_numel(l); }

static void softmax_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "%s(dim=%d)", l->type->forward == softmax_forward ? "Softmax" : "LogSoftmax",
             softmax_axis(l));
}

/* ------------------------------------------------- chunk, channel_shuffle */

enum { CHUNK_CHUNKS, CHUNK_INDEX };

/* one of `chunks` equal parts of the channels (or features): x.chunk(chunks, 1)[index] */
static bool chunk_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                        char *why, size_t why_len)
{
    int64_t chunks = (int64_t)l->value[CHUNK_CHUNKS];
    if (ndim == 2)
        return WHY("chunk takes images (C, H, W) or vectors, not sequences");
    if (in[0] % chunks != 0)
        return WHY("%lld channels do not split into %lld equal chunks", (long long)in[0], (long long)chunks);
    if (l->value[CHUNK_INDEX] >= (double)chunks)
        return WHY("index=%g: the chunks are numbered 0 to %lld", l->value[CHUNK_INDEX],
                   (long long)chunks - 1);
    *out_ndim = ndim;
    memcpy(out, in, (size_t)ndim * sizeof *in);
    out[0] = in[0] / chunks;
    return true;
}

static ember_tensor *chunk_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    int64_t size = l->out_shape[0];
    return ember_narrow(x, 1, (int64_t)l->value[CHUNK_INDEX] * size, size); /* a view */
}

static void chunk_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "chunk(%g, dim=1)[%g]", l->value[CHUNK_CHUNKS], l->value[CHUNK_INDEX]);
}

/* ShuffleNet's channel shuffle: channel g * (C / groups) + k goes to k * groups + g */
static bool shuffle_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                          int64_t *out, char *why, size_t why_len)
{
    if (ndim != 3)
        return WHY("channel_shuffle takes images (C, H, W)");
    if (in[0] % (int64_t)l->value[0] != 0)
        return WHY("%lld channels do not split into %g groups", (long long)in[0], l->value[0]);
    return same_infer(l, ndim, in, out_ndim, out, why, why_len);
}

/* (N, groups, C / groups, H * W), its two middle axes swapped, made contiguous: (N, C, H, W) */
static ember_tensor *shuffle_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    int64_t groups = (int64_t)l->value[0], n = ember_tensor_dim(x, 0), c = l->in_shape[0];
    int64_t split[4] = {n, groups, c / groups, l->in_shape[1] * l->in_shape[2]};
    int64_t back[4] = {n, c, l->in_shape[1], l->in_shape[2]};
    return ember_reshape(ember_contiguous(ember_transpose(ember_reshape(x, 4, split), 1, 2)), 4, back);
}

static void shuffle_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "channel_shuffle(groups=%g)", l->value[0]);
}

/* ----------------------------------------------------------- dropout, flatten */

static ember_tensor *dropout_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_dropout(x, (float)l->value[0], training, seed);
}

static void dropout_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "Dropout(p=%g)", l->value[0]);
}

static bool flatten_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                          int64_t *out, char *why, size_t why_len)
{
    *out_ndim = 1;
    out[0] = numel_of(ndim, in);
    return true;
}

static ember_tensor *flatten_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed)
{
    return ember_tensor_ndim(x) > 2 ? ember_flatten(x) : x; /* (N, C * H * W) */
}

static double no_flops(const struct model_layer *l) { return 0.0; }
static void flatten_describe(const struct model_layer *l, char *out, size_t len)
{
    snprintf(out, len, "Flatten()");
}

/* ------------------------------------------------------------------- table */

/* clang-format off */
#define INT_OPTION(n, req, def, lo, hi, w, wv, text) {n, VALUE_INT, req, def, lo, hi, w, wv, text}
#define FLOAT_OPTION(n, def, lo, hi, text) {n, VALUE_FLOAT, false, def, lo, hi, NULL, 0, text}
#define BOOL_OPTION(n, def, text) {n, VALUE_BOOL, false, def, 0, 1, NULL, 0, text}
#define BN_OPTIONS                                                                                     \
    {FLOAT_OPTION("momentum", 0.1, 0.0, 1.0, "how far the running statistics move each batch"),     \
     FLOAT_OPTION("eps", 1e-5, 1e-12, 1.0, "added to the variance"),                                 \
     BOOL_OPTION("affine", 1, "learn a weight and bias per channel")}
#define POOL_OPTIONS                                                                                   \
    INT_OPTION("kernel", true, 0, 1, 1024, NULL, 0, "the square window's size"),                       \
    INT_OPTION("stride", false, 0, 1, 1024, NULL, 0, "the step between windows, the kernel's size if not given"), \
    INT_OPTION("padding", false, 0, 0, 512, NULL, 0, "positions added on each side (at most half the window)"), \
    BOOL_OPTION("ceil_mode", 0, "a last window for what the others leave over")
/* clang-format on */

const struct model_layer_type model_layer_types[] = {
    {"conv2d",
     "2-d convolution (PyTorch's Conv2d): conv2d OUT|classes kernel=K [stride=1] [padding=0|same] "
     "[bias=true] "
     "[groups=1]",
     "out",
     {INT_OPTION("out", true, 0, 1, 65536, "classes", -1, "the output channels"),
      INT_OPTION("kernel", true, 0, 1, 1024, NULL, 0, "the square kernel's size"),
      INT_OPTION("stride", false, 1, 1, 1024, NULL, 0, "the step between windows"),
      INT_OPTION("padding", false, 0, 0, 1024, "same", PADDING_SAME, "zeros added on each side"),
      BOOL_OPTION("bias", 1, "add a learned bias per channel"),
      INT_OPTION("groups", false, 1, 1, 65536, NULL, 0,
                 "channel groups: each output sees its group's inputs only (the channels: depthwise)")},
     /* clang-format off */
     conv_infer, conv_add_params, conv_forward, conv_flops, conv_describe},
    {"linear", "fully connected (Linear): linear OUT|classes [bias=true]", "out",
     /* clang-format on */
     {INT_OPTION("out", true, 0, 1, 1 << 20, "classes", -1, "the output features"),
      BOOL_OPTION("bias", 1, "add a learned bias")},
     linear_infer,
     linear_add_params,
     linear_forward,
     linear_flops,
     linear_describe},
    {"batch_norm2d", "batch normalization of images (BatchNorm2d): [momentum=0.1] [eps=1e-5] [affine=true]",
     NULL, BN_OPTIONS, bn2d_infer, bn_add_params, bn_forward, bn_flops, bn_describe},
    {"batch_norm1d", "batch normalization of features (BatchNorm1d): [momentum=0.1] [eps=1e-5] [affine=true]",
     NULL, BN_OPTIONS, bn1d_infer, bn_add_params, bn_forward, bn_flops, bn_describe},
/* the activations whose rows say LAYER: relu, sigmoid, tanh, ... */
#define ACTIVATION_ROW(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, ...)                      \
    ROW_BY_##layer(name, f, torch)
#define ROW_BY_LAYER(name, f, torch)                                                                         \
    {#name,          "y = " #f ", as PyTorch's " torch,                                                      \
     NULL,           {{NULL}},                                                                               \
     same_infer,     NULL,                                                                                   \
     name##_forward, elementwise_flops,                                                                      \
     name##_describe},
    EMBER_ACTIVATIONS(ACTIVATION_ROW)
#undef ACTIVATION_ROW
#undef ROW_BY_LAYER
        {"leaky_relu",
         "x > 0 ? x : slope * x: leaky_relu [slope=0.01]",
         "slope",
         {FLOAT_OPTION("slope", 0.01, -1000.0, 1000.0, "the slope below zero")},
         /* clang-format off */
     same_infer, NULL, leaky_relu_forward, elementwise_flops, leaky_relu_describe},
    {"gelu",
     "x * Phi(x), exact, or GPT-2's tanh form: gelu [tanh=false]",
     "tanh",
     {BOOL_OPTION("tanh", 0, "the tanh approximation, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))")},
     /* clang-format off */
     same_infer, NULL, gelu_forward, elementwise_flops, gelu_describe},
    {"silu", "x * sigmoid(x) (SiLU, or swish)", NULL, {{NULL}}, same_infer, NULL, silu_forward, elementwise_flops,
     silu_describe},
    {"max_pool2d", "the maximum of each window: max_pool2d K [stride=K] [padding=0] [ceil_mode=false]", "kernel",
     {POOL_OPTIONS}, pool_infer, NULL, max_pool_forward, pool_flops, pool_describe},
    {"avg_pool2d", "the mean of each window: avg_pool2d K [stride=K] [padding=0] [ceil_mode=false] "
     "[count_include_pad=true]", "kernel",
     {POOL_OPTIONS, BOOL_OPTION("count_include_pad", 1, "the padding counts in each window's mean")},
     pool_infer, NULL, avg_pool_forward, pool_flops, pool_describe},
    {"global_avg_pool2d", "the mean of each channel's plane: (C, H, W) -> (C), or (C, 1, 1) with keepdim=true",
     NULL, {BOOL_OPTION("keepdim", 0, "keep H and W, as 1 and 1")}, global_pool_infer,
     NULL, global_pool_forward, global_pool_flops, global_pool_describe},
    {"pad", "PADDING positions of VALUE around each plane: pad PADDING [value=0]", "padding",
     {INT_OPTION("padding", true, 0, 0, 4096, NULL, 0, "positions added on each side of H and W"),
      FLOAT_OPTION("value", 0.0, -1e30, 1e30, "what the added positions hold")},
     pad_infer, NULL, pad_forward, no_flops, pad_describe},
    {"upsample", "each plane made SCALE times larger: upsample SCALE [bilinear=false] (nearest otherwise)", "scale",
     {INT_OPTION("scale", true, 0, 1, 64, NULL, 0, "how many times larger"),
      BOOL_OPTION("bilinear", 0, "mix the two nearest inputs on each axis (align_corners=False)")},
     upsample_infer, NULL, upsample_forward, upsample_flops, upsample_describe},
    {"softmax", "e^x / sum e^x over the channels (or features; a sequence's last axis)", NULL, {{NULL}},
     same_infer, NULL, softmax_forward, softmax_flops, softmax_describe},
    {"log_softmax", "x - ln sum e^x over the channels (or features; a sequence's last axis)", NULL, {{NULL}},
     same_infer, NULL, log_softmax_forward, softmax_flops, softmax_describe},
    {"chunk", "one of equal parts of the channels (or features): chunk CHUNKS [index=0]", "chunks",
     {INT_OPTION("chunks", true, 0, 1, 1 << 20, NULL, 0, "how many equal parts"),
      INT_OPTION("index", false, 0, 0, 1 << 20, NULL, 0, "which part, from 0")},
     chunk_infer, NULL, chunk_forward, no_flops, chunk_describe},
    {"channel_shuffle", "ShuffleNet's shuffle of the channels between groups: channel_shuffle GROUPS", "groups",
     {INT_OPTION("groups", true, 0, 1, 1 << 20, NULL, 0, "the groups the channels are in")},
     shuffle_infer, NULL, shuffle_forward, no_flops, shuffle_describe},
    {"dropout", "zeroes each value with probability p in training, scaling the rest by 1/(1-p): dropout [p=0.5]", "p",
     {FLOAT_OPTION("p", 0.5, 0.0, 1.0, "the probability of zeroing a value")},
     same_infer, NULL, dropout_forward, no_flops, dropout_describe},
    {"flatten", "(C, H, W) -> (C * H * W)", NULL, {{NULL}}, flatten_infer, NULL, flatten_forward, no_flops,
     /* clang-format on */
     flatten_describe},
    /* the layers of a GPT (model-layers-text.c) */
    {"embedding",
     "a learned vector per token (Embedding): (T) tokens -> (T, DIM): embedding DIM [vocab=classes]",
     "dim",
     {INT_OPTION("dim", true, 0, 1, 1 << 20, NULL, 0, "the vectors' size"),
      INT_OPTION("vocab", false, -1, 1, 1 << 24, "classes", -1,
                 "the tokens, the data's classes if not given")},
     model_embedding_infer,
     model_embedding_add_params,
     model_embedding_forward,
     no_flops,
     model_embedding_describe},
    /* clang-format off */
    {"position_embedding", "a learned vector per position, added: (T, C) -> (T, C)", NULL, {{NULL}},
     model_position_infer, model_position_add_params, model_position_forward, elementwise_flops,
     /* clang-format on */
     model_position_describe},
    {"layer_norm",
     "normalises each position's vector (LayerNorm): [eps=1e-5] [bias=true]",
     NULL,
     {FLOAT_OPTION("eps", 1e-5, 1e-12, 1.0, "added to the variance"), BOOL_OPTION("bias", 1, "learn a bias")},
     model_layer_norm_infer,
     model_layer_norm_add_params,
     model_layer_norm_forward,
     model_layer_norm_flops,
     model_layer_norm_describe},
    {"rms_norm",
     "divides each position's vector by its root mean square (Llama's RMSNorm): [eps=1e-5]",
     NULL,
     {FLOAT_OPTION("eps", 1e-5, 1e-12, 1.0, "added to the mean square")},
     model_layer_norm_infer,
     model_rms_norm_add_params,
     model_rms_norm_forward,
     model_rms_norm_flops,
     model_rms_norm_describe},
    {"attention",
     "causal multi-head self-attention with its projections c_attn and c_proj (nanoGPT's): "
     "attention heads=H [dropout=0] [bias=true]",
     "heads",
     {INT_OPTION("heads", true, 0, 1, 4096, NULL, 0, "the heads, which divide the features"),
      FLOAT_OPTION("dropout", 0.0, 0.0, 0.99, "dropout on the attention weights and the output, in training"),
      BOOL_OPTION("bias", 1, "the projections learn a bias")},
     model_attention_infer,
     model_attention_add_params,
     model_attention_forward,
     model_attention_flops,
     model_attention_describe},
};
const int model_layer_type_count = sizeof model_layer_types / sizeof model_layer_types[0];

const struct model_layer_type *model_layer_type_find(const char *name)
{
    for (int i = 0; i < model_layer_type_count; i++)
        if (strcmp(model_layer_types[i].name, name) == 0)
            return &model_layer_types[i];
    return NULL;
}

double model_layer_option(const struct model_layer *layer, const char *name)
{
    for (int k = 0; layer->type && k < MODEL_MAX_OPTIONS && layer->type->options[k].name; k++)
        if (strcmp(layer->type->options[k].name, name) == 0)
            return layer->value[k];
    return NAN;
}

int ember_model_layer_type_count(void) { return model_layer_type_count; }

const char *ember_model_layer_type_at(int index, const char **about)
{
    if (index < 0 || index >= model_layer_type_count)
        return NULL;
    if (about)
        *about = model_layer_types[index].about;
    return model_layer_types[index].name;
}
