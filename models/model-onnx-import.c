/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-import.c — an ONNX file as an ember model: a model
 * file's text and the weights for it (docs/interop.md).
 *
 * ember's networks are model files, so an ONNX graph is read back into
 * one: a chain of layers from the input to the output, with residual
 * blocks where the chain splits and meets again at an Add. The walk starts
 * at the output and follows each node to the value it was computed from;
 * at an Add of two computed values, the two sides are followed back to
 * the value both come from (the block's input), and each side becomes the
 * block's body or its shortcut. Operators are taken as torch.onnx.export
 * writes them:
 *
 *   Conv                         conv2d (square kernel, equal strides and pads,
 *                                no dilation; any group)
 *   Gemm, MatMul + Add, MatMul   linear (the weight a constant; a bias of
 *                                one value is broadcast, as Gemm allows)
 *   BatchNormalization           batch_norm2d, or batch_norm1d on features
 *   Relu, LeakyRelu, Sigmoid,    the activation whose row names the operator
 *   Tanh, ...                    (base/elementwise-impl.h): relu, ...
 *   Div, Erf, Add, Mul, Mul      gelu (PyTorch's exact GELU, spelt out)
 *   Sigmoid, Mul                 silu (x * Sigmoid(x), PyTorch's SiLU)
 *   Clip to [0, 6]               relu6
 *   HardSigmoid (1/6, 0.5)       hardsigmoid (PyTorch's)
 *   HardSwish, or HardSigmoid    hardswish
 *   and Mul
 *   Mish, or Softplus, Tanh,     mish
 *   Mul
 *   MaxPool, AveragePool         max_pool2d, avg_pool2d (padding, ceil_mode,
 *                                count_include_pad)
 *   GlobalAveragePool,           global_avg_pool2d
 *   ReduceMean over H and W
 *   Flatten, Reshape to          flatten (a Reshape's shape may be computed
 *   (batch, -1), Squeeze          by Shape, Gather, Unsqueeze, Concat: the
 *                                 constants are folded here)
 *   Dropout, Identity, Pad of 0  nothing
 *   Add of two branches          a residual block
 *
 * Every node must be on that walk exactly once; anything else (an operator
 * ember lacks, an attribute it cannot honour, a graph that is not a chain
 * of blocks) is an error that names the node, its operator and what is
 * supported. Layers are named after their weights ("fc.weight" gives
 * "fc") or else their node's scope ("/layer1/layer1.0/conv1/Conv" gives
 * "layer1.0.conv1"), so `ember summary` and --init-skip speak PyTorch's
 * names. The result is a checkpoint in memory (ember_onnx_to_checkpoint):
 * the generated model file in its metadata, with the ONNX file's own
 * metadata_props (class names, normalisation) carried over.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise-impl.h"
#include "model-onnx-import-impl.h"

static const char supported[] =
    "Conv, Gemm, MatMul (+ Add), BatchNormalization, Relu, LeakyRelu, Sigmoid, Tanh and ember's other "
    "activations' operators, GELU (Div, Erf, Add, "
    "Mul), SiLU (Sigmoid, Mul), ReLU6 (Clip to [0, 6]), PyTorch's HardSigmoid, HardSwish (or HardSigmoid, "
    "Mul), "
    "Mish (or Softplus, Tanh, Mul), "
    "MaxPool, AveragePool, GlobalAveragePool, ReduceMean over H and W, Flatten, Reshape to (batch, -1), "
    "Squeeze, "
    "Dropout, Identity, Constant, Pad of zeros, and Add of two branches (residual blocks)";

/* ------------------------------------------------------------ the layers */

static struct imp_layer *block_add(struct importer *im, struct imp_block *b, const char *type,
                                   const struct onnx_node *n)
{
    if (b->count == b->cap) {
        int cap = b->cap ? 2 * b->cap : 16;
        struct imp_layer *more = realloc(b->items, (size_t)cap * sizeof *more);
        if (!more) {
            ember_set_error(im->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", im->what);
            return NULL;
        }
        b->items = more;
        b->cap = cap;
    }
    struct imp_layer *l = &b->items[b->count++];
    memset(l, 0, sizeof *l);
    snprintf(l->type, sizeof l->type, "%s", type);
    l->node = n;
    return l;
}

static void block_free(struct imp_block *b)
{
    for (int i = 0; i < b->count; i++) {
        for (int k = 0; k < 4; k++)
            free(b->items[i].owned[k]);
        block_free(&b->items[i].body);
        block_free(&b->items[i].shortcut);
    }
    free(b->items);
    *b = (struct imp_block){0};
}

/* the walk goes from the output back, so each block is built in reverse */
static void block_reverse(struct imp_block *b)
{
    for (int i = 0, j = b->count - 1; i < j; i++, j--) {
        struct imp_layer t = b->items[i];
        b->items[i] = b->items[j];
        b->items[j] = t;
    }
}

static void add_values(struct imp_layer *l, const float *values, int64_t count, float *owned)
{
    l->values[l->value_count] = values;
    l->counts[l->value_count] = count;
    l->owned[l->value_count++] = owned;
}

/* ----------------------------------------------------------- the walk */

static ember_status walk(struct importer *im, const char *out, const char *stop, struct imp_block *block);

/* x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch writes GELU: Mul(Mul(x, Add(Erf(Div(x, c)), 1)), 0.5), either
 * order within each Mul; on success *x is the GELU's input and the nodes are taken */
static bool match_gelu(struct importer *im, const struct onnx_node *outer, const char **x)
{
    if (strcmp(outer->op_type, "Mul") != 0 || outer->input_count != 2)
        return false;
    int half_at = imp_is_constant(im, outer->inputs[1]) ? 1 : imp_is_constant(im, outer->inputs[0]) ? 0 : -1;
    if (half_at < 0)
        return false;
    const struct onnx_tensor *half = imp_constant(im, outer->inputs[half_at]);
    const struct onnx_node *inner = imp_producer(im, outer->inputs[1 - half_at]);
    if (!half || !half->values || half->numel != 1 || fabsf(half->values[0] - 0.5f) > 1e-6f || !inner ||
        strcmp(inner->op_type, "Mul") != 0 || inner->input_count != 2)
        return false;
    for (int side = 0; side < 2; side++) {
        const struct onnx_node *add = imp_producer(im, inner->inputs[side]);
        const char *xx = inner->inputs[1 - side];
        if (!add || strcmp(add->op_type, "Add") != 0 || add->input_count != 2)
            continue;
        int one_at = imp_is_constant(im, add->inputs[1]) ? 1 : 0;
        const struct onnx_tensor *one = imp_constant(im, add->inputs[one_at]);
        const struct onnx_node *erf = imp_producer(im, add->inputs[1 - one_at]);
        if (!one || !one->values || one->numel != 1 || one->values[0] != 1.0f || !erf ||
            strcmp(erf->op_type, "Erf") != 0)
            continue;
        const struct onnx_node *div = imp_producer(im, erf->inputs[0]);
        if (!div || strcmp(div->op_type, "Div") != 0 || div->input_count != 2 ||
            strcmp(div->inputs[0], xx) != 0)
            continue;
        const struct onnx_tensor *root2 = imp_constant(im, div->inputs[1]);
        if (!root2 || !root2->values || root2->numel != 1 || fabsf(root2->values[0] - 1.41421356f) > 1e-5f)
            continue;
        imp_take(im, inner);
        imp_take(im, add);
        imp_take(im, erf);
        imp_take(im, div);
        *x = xx;
        return true;
    }
    return false;
}

/* x * gate(x), as torch.onnx.export writes SiLU (Sigmoid), HardSwish
 * before opset 14 (HardSigmoid) and Mish before opset 18 (Tanh(Softplus)):
 * Mul(x, gate(x)), either order; on success *x is the input, *layer the
 * layer, and the gate's nodes are taken. GELU's own form is match_gelu's. */
static bool match_gated(struct importer *im, const struct onnx_node *mul, const char **x, const char **layer)
{
    if (strcmp(mul->op_type, "Mul") != 0 || mul->input_count != 2)
        return false;
    for (int side = 0; side < 2; side++) {
        const struct onnx_node *gate[2];
        const char *from, *kind = imp_gate(im, mul->inputs[side], &from, gate);
        if (kind && strcmp(kind, "gelu") != 0 && strcmp(from, mul->inputs[1 - side]) == 0) {
            imp_take(im, gate[0]);
            imp_take(im, gate[1]);
            *x = from;
            *layer = kind;
            return true;
        }
    }
    return false;
}

/* Clip's bound: an input (opset 11 on) or an attribute (before), or `fallback` where absent */
static bool clip_bound(struct importer *im, const struct onnx_node *n, int input, const char *attr,
                       float fallback, float *bound)
{
    *bound = fallback;
    if (input < n->input_count && n->inputs[input][0]) {
        const struct onnx_tensor *t = imp_constant(im, n->inputs[input]);
        if (!t || t->numel != 1 || !t->values)
            return false;
        *bound = t->values[0];
        return true;
    }
    *bound = imp_attr_float(n, attr, fallback);
    return true;
}

/* A weight (out, in) from a MatMul's (in, out) constant, transposed into an owned copy. */
static float *transposed(const struct onnx_tensor *w)
{
    int64_t rows = w->dims[0], cols = w->dims[1];
    float *t = malloc((size_t)(rows * cols) * sizeof *t + 1);
    for (int64_t i = 0; t && i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            t[j * rows + i] = w->values[i * cols + j];
    return t;
}

/* Gemm, MatMul (+ Add): a linear layer with the constant weight and bias */
static ember_status linear_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                 const struct onnx_node *matmul, const char **x)
{
    const struct onnx_node *mm = matmul ? matmul : n;
    bool gemm = strcmp(mm->op_type, "Gemm") == 0;
    const struct onnx_tensor *w = mm->input_count >= 2 ? imp_constant(im, mm->inputs[1]) : NULL;
    const struct onnx_tensor *b = NULL;
    if (matmul) {
        int bias_at = imp_is_constant(im, n->inputs[1]) ? 1 : 0;
        b = imp_constant(im, n->inputs[bias_at]);
    } else if (gemm && mm->input_count >= 3 && mm->inputs[2][0]) {
        b = imp_constant(im, mm->inputs[2]);
        if (!b)
            return imp_fail_node(im, mm,
                                 "its bias C is computed; ember's linear layer takes a constant bias");
    }
    if (!w || !w->values || w->ndim != 2)
        return imp_fail_node(
            im, mm, "the weight must be a constant float matrix; ember's linear layer learns its own");
    bool trans_b = gemm && imp_attr_int(mm, "transB", 0);
    if (gemm && (imp_attr_int(mm, "transA", 0) || imp_attr_float(mm, "alpha", 1.0f) != 1.0f ||
                 (b && imp_attr_float(mm, "beta", 1.0f) != 1.0f)))
        return imp_fail_node(im, mm,
                             "transA, alpha or beta other than Gemm's defaults; ember's linear layer is "
                             "y = x W^T + b");
    int64_t out = trans_b ? w->dims[0] : w->dims[1];
    if (b && (!b->values || (b->numel != out && b->numel != 1)))
        return imp_fail_node(im, n, "the bias has %lld values for %lld outputs",
                             (long long)(b ? b->numel : 0), (long long)out);
    struct imp_layer *l = block_add(im, block, "linear", mm);
    if (!l)
        return EMBER_ERR_NOMEM;
    snprintf(l->options, sizeof l->options, "%lld%s", (long long)out, b ? "" : " bias=false");
    float *owned = trans_b ? NULL : transposed(w);
    if (!trans_b && !owned)
        return ember_set_error(im->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", im->what);
    add_values(l, trans_b ? w->values : owned, w->numel, owned);
    if (b && b->numel == out) {
        add_values(l, b->values, b->numel, NULL);
    } else if (b) { /* one value broadcast to every output, as Gemm allows */
        float *bias = malloc((size_t)out * sizeof *bias);
        if (!bias)
            return ember_set_error(im->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", im->what);
        for (int64_t i = 0; i < out; i++)
            bias[i] = b->values[0];
        add_values(l, bias, out, bias);
    }
    onnx_name_layer(l, w->name);
    imp_take(im, mm);
    imp_take(im, n);
    *x = mm->inputs[0];
    return EMBER_OK;
}

static ember_status conv_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                               const char **x)
{
    const struct onnx_tensor *w = n->input_count >= 2 ? imp_constant(im, n->inputs[1]) : NULL;
    const struct onnx_tensor *b =
        n->input_count >= 3 && n->inputs[2][0] ? imp_constant(im, n->inputs[2]) : NULL;
    if (!w || !w->values || w->ndim != 4)
        return imp_fail_node(im, n, "the weight must be a constant (out, in, k, k) tensor");
    if (n->input_count >= 3 && n->inputs[2][0] && (!b || !b->values || b->numel != w->dims[0]))
        return imp_fail_node(im, n, "the bias must be a constant of one value per output channel");
    int64_t stride, pad, dilation, k = w->dims[2], groups = imp_attr_int(n, "group", 1);
    const struct onnx_attr *auto_pad = onnx_attr_find(n, "auto_pad");
    bool same = auto_pad && auto_pad->s && strncmp(auto_pad->s, "SAME", 4) == 0;
    if (groups < 1 || w->dims[0] % groups != 0)
        return imp_fail_node(im, n, "group %lld does not divide the %lld output channels", (long long)groups,
                             (long long)w->dims[0]);
    if (w->dims[2] != w->dims[3] || !imp_attr_uniform(n, "strides", 1, &stride) ||
        !imp_attr_uniform(n, "pads", 0, &pad) || !imp_attr_uniform(n, "dilations", 1, &dilation) ||
        dilation != 1 ||
        (auto_pad && auto_pad->s && strcmp(auto_pad->s, "NOTSET") != 0 && strcmp(auto_pad->s, "VALID") != 0 &&
         !(same && stride == 1 && k % 2 == 1)))
        return imp_fail_node(im, n,
                             "ember's conv2d has a square kernel, the same stride and padding on every side, "
                             "and no dilation");
    struct imp_layer *l = block_add(im, block, "conv2d", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    int at = snprintf(l->options, sizeof l->options, "%lld kernel=%lld", (long long)w->dims[0], (long long)k);
    if (stride != 1)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " stride=%lld", (long long)stride);
    if (same || pad)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " padding=%lld",
                       (long long)(same ? (k - 1) / 2 : pad));
    if (groups != 1)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " groups=%lld", (long long)groups);
    snprintf(l->options + at, sizeof l->options - (size_t)at, "%s", b ? "" : " bias=false");
    add_values(l, w->values, w->numel, NULL);
    if (b)
        add_values(l, b->values, b->numel, NULL);
    onnx_name_layer(l, w->name);
    *x = n->inputs[0];
    return EMBER_OK;
}

static ember_status batch_norm_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                     const char **x)
{
    const struct onnx_tensor *p[4] = {NULL};
    for (int i = 0; i < 4; i++)
        if (n->input_count < 5 || !(p[i] = imp_constant(im, n->inputs[i + 1])) || !p[i]->values ||
            p[i]->numel != p[0]->numel)
            return imp_fail_node(im, n, "scale, B, mean and var must be constants of one value per channel");
    if (imp_attr_int(n, "training_mode", 0) || n->output_count > 1)
        return imp_fail_node(im, n, "in training mode; export the model in evaluation mode (model.eval())");
    for (int64_t c = 0; c < p[3]->numel; c++)
        if (p[3]->values[c] < 0.0f)
            return imp_fail_node(im, n, "channel %lld's variance is negative", (long long)c);
    struct imp_layer *l = block_add(im, block, "batch_norm", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    /* float32 attributes, printed as the decimals they were written as */
    snprintf(l->options, sizeof l->options, "eps=%.7g momentum=%.7g", imp_attr_float(n, "epsilon", 1e-5f),
             1.0f - imp_attr_float(n, "momentum", 0.9f));
    for (int i = 0; i < 4; i++)
        add_values(l, p[i]->values, p[i]->numel, NULL);
    onnx_name_layer(l, p[0]->name);
    *x = n->inputs[0];
    return EMBER_OK;
}

static ember_status pool_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                               const char **x)
{
    const struct onnx_attr *kernel = onnx_attr_find(n, "kernel_shape");
    int64_t stride, pad, dilation;
    const struct onnx_attr *auto_pad = onnx_attr_find(n, "auto_pad");
    if (!kernel || kernel->int_count != 2 || kernel->ints[0] != kernel->ints[1] ||
        !imp_attr_uniform(n, "strides", 1, &stride) || !imp_attr_uniform(n, "pads", 0, &pad) ||
        pad > kernel->ints[0] / 2 || !imp_attr_uniform(n, "dilations", 1, &dilation) || dilation != 1 ||
        (auto_pad && auto_pad->s && strcmp(auto_pad->s, "NOTSET") != 0 &&
         strcmp(auto_pad->s, "VALID") != 0) ||
        n->output_count > 1)
        return imp_fail_node(im, n,
                             "ember's pools take a square window of 2-d images, the same stride both ways "
                             "and the same padding "
                             "on every side (at most half the window), no dilation");
    bool max = n->op_type[0] == 'M', ceil_mode = imp_attr_int(n, "ceil_mode", 0) != 0;
    bool count_pad = imp_attr_int(n, "count_include_pad", 0) != 0; /* ONNX's default: 0 */
    struct imp_layer *l = block_add(im, block, max ? "max_pool2d" : "avg_pool2d", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    int at = snprintf(l->options, sizeof l->options, "%lld", (long long)kernel->ints[0]);
    if (stride != kernel->ints[0])
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " stride=%lld", (long long)stride);
    if (pad)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " padding=%lld", (long long)pad);
    if (ceil_mode)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " ceil_mode=true");
    if (!max && !count_pad && (pad || ceil_mode))
        snprintf(l->options + at, sizeof l->options - (size_t)at, " count_include_pad=false");
    *x = n->inputs[0];
    return EMBER_OK;
}

/* One node (or the pattern it ends) into layers of `block`, in reverse;
 * *x is then the value it was computed from. */
static ember_status convert_node(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                 const char **x)
{
    const char *op = n->op_type;
    struct imp_layer *l;
    if (n->input_count < 1 || !n->inputs[0][0])
        return imp_fail_node(im, n, "it has no input to compute from");
    imp_take(im, n);
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0) {
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "Pad") == 0) { /* PyTorch writes a Pad of zeros before AveragePool: nothing */
        const struct onnx_attr *attr = onnx_attr_find(n, "pads");
        const struct onnx_tensor *pads = n->input_count > 1 ? imp_constant(im, n->inputs[1]) : NULL;
        const int64_t *p = attr ? attr->ints : pads ? pads->ints : NULL;
        int64_t count = attr ? attr->int_count : pads && pads->ints ? pads->numel : -1;
        for (int64_t i = 0; p && i < count; i++)
            if (p[i] != 0)
                p = NULL;
        if (!p)
            return imp_fail_node(im, n, "padding other than zeros of nothing; ember pads only inside conv2d");
        for (int i = 2; i < n->input_count; i++) /* the constant value */
            if (n->inputs[i][0])
                imp_constant(im, n->inputs[i]);
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "Conv") == 0)
        return conv_layer(im, block, n, x);
    if (strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0)
        return linear_layer(im, block, n, NULL, x);
    if (strcmp(op, "BatchNormalization") == 0)
        return batch_norm_layer(im, block, n, x);
    if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0)
        return pool_layer(im, block, n, x);
    if (strcmp(op, "Add") == 0 && n->input_count == 2) {
        bool c0 = imp_is_constant(im, n->inputs[0]), c1 = imp_is_constant(im, n->inputs[1]);
        const struct onnx_node *mm = imp_producer(im, n->inputs[c0 ? 1 : 0]);
        if (c0 != c1 && mm && strcmp(mm->op_type, "MatMul") == 0)
            return linear_layer(im, block, n, mm, x);
        if (c0 || c1)
            return imp_fail_node(im, n, "adds a constant other than a MatMul's bias; ember supports %s",
                                 supported);
        /* a residual block: body and shortcut from where they split */
        const char *split = imp_residual_split(im, n);
        if (!split && im->tangled)
            return imp_fail_node(
                im, n,
                "the graph's branches cross more often than any chain of layers and residual "
                "blocks can");
        if (!split)
            return imp_fail_node(im, n,
                                 "its two inputs do not come from one value; ember's residual blocks add two "
                                 "branches of the same input");
        if (++im->depth > MODEL_MAX_DEPTH)
            return imp_fail_node(im, n, "residual blocks nested over %d deep", MODEL_MAX_DEPTH);
        if (!(l = block_add(im, block, "residual", n)))
            return EMBER_ERR_NOMEM;
        /* the side that is the split itself is the identity shortcut; else input 0 is the body */
        int body = strcmp(n->inputs[0], split) == 0 ? 1 : 0;
        ember_status st = walk(im, n->inputs[body], split, &l->body);
        if (st == EMBER_OK)
            st = walk(im, n->inputs[1 - body], split, &l->shortcut);
        im->depth--;
        *x = split;
        return st;
    }
    const char *act_x;
    if (match_gelu(im, n, &act_x)) {
        *x = act_x;
        return block_add(im, block, "gelu", n) ? EMBER_OK : EMBER_ERR_NOMEM;
    }
    const char *gated;
    if (match_gated(im, n, &act_x, &gated)) {
        *x = act_x;
        return block_add(im, block, gated, n) ? EMBER_OK : EMBER_ERR_NOMEM;
    }
    /* MobileNet's activations, as PyTorch writes them */
    if (strcmp(op, "Clip") == 0) {
        float low, high;
        if (!clip_bound(im, n, 1, "min", -INFINITY, &low) || !clip_bound(im, n, 2, "max", INFINITY, &high))
            return imp_fail_node(im, n, "a Clip whose bounds are not constants of one value");
        if (low != 0.0f || high != 6.0f)
            return imp_fail_node(im, n, "Clip to [%g, %g]; ember's clip is ReLU6's, to [0, 6]", low, high);
        *x = n->inputs[0];
        return block_add(im, block, "relu6", n) ? EMBER_OK : EMBER_ERR_NOMEM;
    }
    if (strcmp(op, "HardSigmoid") == 0 || strcmp(op, "HardSwish") == 0 || strcmp(op, "Mish") == 0) {
        if (strcmp(op, "HardSigmoid") == 0 && !imp_is_pytorch_hardsigmoid(n))
            return imp_fail_node(im, n,
                                 "HardSigmoid with alpha %g and beta %g; ember's is PyTorch's, 1/6 and 0.5",
                                 imp_attr_float(n, "alpha", 0.2f), imp_attr_float(n, "beta", 0.5f));
        const char *layer = strcmp(op, "Mish") == 0        ? "mish"
                            : strcmp(op, "HardSwish") == 0 ? "hardswish"
                                                           : "hardsigmoid";
        *x = n->inputs[0];
        return block_add(im, block, layer, n) ? EMBER_OK : EMBER_ERR_NOMEM;
    }
    /* an activation's operator from its row (base/elementwise-impl.h; NULL: ONNX has none) */
#define ACTIVATION_OPERATOR(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, ...)           \
    {onnx, #name},
    static const struct {
        const char *op, *layer;
    } simple[] = {EMBER_ACTIVATIONS(ACTIVATION_OPERATOR){"Flatten", "flatten"},
                  {"GlobalAveragePool", "global_avg_pool2d"}};
#undef ACTIVATION_OPERATOR
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
        if (!simple[i].op || strcmp(op, simple[i].op) != 0)
            continue;
        if (strcmp(op, "Flatten") == 0 && imp_attr_int(n, "axis", 1) != 1)
            return imp_fail_node(im, n, "Flatten with axis %lld; ember flattens from axis 1",
                                 (long long)imp_attr_int(n, "axis", 1));
        if (!(l = block_add(im, block, simple[i].layer, n)))
            return EMBER_ERR_NOMEM;
        if (strcmp(op, "LeakyRelu") == 0)
            snprintf(l->options, sizeof l->options, "slope=%.7g", imp_attr_float(n, "alpha", 0.01f));
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "Reshape") == 0 || strcmp(op, "Squeeze") == 0) {
        if (strcmp(op, "Reshape") == 0 && !imp_reshape_is_flatten(im, n))
            return imp_fail_node(im, n, "%s",
                                 im->fold_budget < 0
                                     ? "its shape is computed by more nodes than ember folds"
                                     : "a Reshape ember cannot tell is (batch, -1); ember's flatten "
                                       "gives (N, C*H*W)");
        if (!block_add(im, block, "flatten", n))
            return EMBER_ERR_NOMEM;
        for (int i = 1; i < n->input_count; i++) /* the shape or axes: folded, taken */
            if (imp_is_constant(im, n->inputs[i]))
                imp_constant(im, n->inputs[i]);
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "ReduceMean") == 0) {
        const struct onnx_attr *axes = onnx_attr_find(n, "axes");
        int64_t folded[IMP_FOLD_MAX];
        int count = axes ? axes->int_count : n->input_count > 1 ? imp_fold(im, n->inputs[1], folded, 0) : 0;
        const int64_t *a = axes ? axes->ints : folded;
        bool hw = count == 2 && ((a[0] == 2 && a[1] == 3) || (a[0] == -2 && a[1] == -1));
        if (!hw || imp_attr_int(n, "keepdims", 1))
            return imp_fail_node(im, n,
                                 "ReduceMean other than over H and W with keepdims=0 (x.mean((2, 3)))");
        if (!block_add(im, block, "global_avg_pool2d", n))
            return EMBER_ERR_NOMEM;
        *x = n->inputs[0];
        return EMBER_OK;
    }
    return imp_fail_node(im, n, "ember has no such layer; it supports %s", supported);
}

static ember_status walk(struct importer *im, const char *out, const char *stop, struct imp_block *block)
{
    const char *x = out;
    int steps = 0;
    while (strcmp(x, stop) != 0) {
        const struct onnx_node *n = imp_producer(im, x);
        if (!n)
            return imp_fail_node(im, NULL,
                                 "value \"%.200s\" comes from no node and is not the input \"%.200s\": the "
                                 "graph is not one chain from the input to the output",
                                 x, im->input);
        if (im->used[imp_node_index(im, n)] || ++steps > ONNX_MAX_NODES)
            return imp_fail_node(im, n,
                                 "its output is used by two branches that do not rejoin as a residual block "
                                 "(ember's networks are chains of layers and residual blocks)");
        ember_status st = convert_node(im, block, n, &x);
        if (st != EMBER_OK)
            return st;
    }
    block_reverse(block);
    return EMBER_OK;
}

/* ------------------------------------------------- settling the layers */

/* batch_norm on images or features, as the rank at that point says */
static ember_status settle(struct importer *im, struct imp_block *b, int *rank)
{
    for (int i = 0; i < b->count; i++) {
        struct imp_layer *l = &b->items[i];
        if (strcmp(l->type, "residual") == 0) {
            int body = *rank, shortcut = *rank;
            ember_status st = settle(im, &l->body, &body);
            if (st == EMBER_OK)
                st = settle(im, &l->shortcut, &shortcut);
            if (st != EMBER_OK)
                return st;
            if (body != shortcut)
                return imp_fail_node(im, l->node, "adds an image to a vector");
            *rank = body;
        } else if (strcmp(l->type, "batch_norm") == 0) {
            snprintf(l->type, sizeof l->type, "%s", *rank == 3 ? "batch_norm2d" : "batch_norm1d");
        } else if (strcmp(l->type, "flatten") == 0 &&
                   *rank == 1) { /* Flatten after GlobalAveragePool: nothing */
            for (int k = 0; k < 4; k++)
                free(l->owned[k]);
            memmove(l, l + 1, (size_t)(b->count - i - 1) * sizeof *l);
            b->count--;
            i--;
        } else if (strcmp(l->type, "flatten") == 0 || strcmp(l->type, "global_avg_pool2d") == 0 ||
                   strcmp(l->type, "linear") == 0) {
            *rank = 1;
        }
    }
    return EMBER_OK;
}

/* ------------------------------------------------ building and loading */

/* The model's layers, as built, take the weights of the importer's: the
 * two trees have the same shape, since one was written from the other. */
static ember_status load_weights(struct importer *im, struct model_block *mb, const struct imp_block *ib)
{
    for (int i = 0; i < mb->count && i < ib->count; i++) {
        struct model_layer *l = &mb->layers[i];
        const struct imp_layer *il = &ib->items[i];
        ember_status st = EMBER_OK;
        if (!l->type) {
            st = load_weights(im, &l->body, &il->body);
            if (st == EMBER_OK)
                st = load_weights(im, &l->shortcut, &il->shortcut);
        }
        for (int k = 0; st == EMBER_OK && k < il->value_count; k++) {
            if (!l->t[k] || ember_tensor_numel(l->t[k]) != il->counts[k])
                return imp_fail_node(
                    im, il->node, "its weights (%lld values) do not fit the layer ember built (%lld)",
                    (long long)il->counts[k], (long long)(l->t[k] ? ember_tensor_numel(l->t[k]) : 0));
            st = ember_tensor_write(l->t[k], il->values[k], (size_t)il->counts[k] * sizeof(float));
        }
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

/* The graph's one data input (the inputs that are not initializers) and
 * its sample shape. */
static ember_status find_input(struct importer *im, int *ndim, int64_t *shape)
{
    const struct onnx_value *in = NULL;
    for (int i = 0; i < im->g->input_count; i++) {
        const struct value_ref *v = imp_value_find(im, im->g->inputs[i].name);
        if (v && v->node == -2)
            continue; /* an initializer listed as an input, as IR version 3 did */
        if (in)
            return imp_fail_node(im, NULL, "the graph has several inputs (%s, %s); ember's models take one",
                                 in->name, im->g->inputs[i].name);
        in = &im->g->inputs[i];
    }
    if (!in)
        return imp_fail_node(im, NULL, "the graph has no input");
    if (in->type != ONNX_FLOAT || (in->ndim != 4 && in->ndim != 2))
        return imp_fail_node(
            im, NULL, "the input \"%s\" is not float32 (batch, C, H, W) or (batch, features)", in->name);
    *ndim = in->ndim - 1;
    for (int i = 0; i < *ndim; i++) {
        shape[i] = in->dims[i + 1];
        if (shape[i] < 1 || shape[i] > (1 << 20))
            return imp_fail_node(im, NULL,
                                 "the input \"%s\" has no fixed size in dimension %d; export it with a fixed "
                                 "sample shape (only the batch may vary)",
                                 in->name, i + 1);
    }
    im->input = in->name;
    im->batch = in->dims[0] > 0 ? in->dims[0] : -1;
    return EMBER_OK;
}

/* Every operator the walk reads somewhere: as a layer, inside a pattern
 * (GELU's, the gated products), in shape arithmetic it folds, or as the
 * standardisation ember's own export writes; an activation's from its row. */
static bool operator_known(const char *op)
{
    static const char *const known[] = {"Conv",        "Gemm",        "MatMul",
                                        "Add",         "Sub",         "Mul",
                                        "Div",         "Erf",         "BatchNormalization",
                                        "MaxPool",     "AveragePool", "GlobalAveragePool",
                                        "ReduceMean",  "Flatten",     "Reshape",
                                        "Squeeze",     "Shape",       "Gather",
                                        "Unsqueeze",   "Concat",      "Cast",
                                        "Slice",       "Dropout",     "Identity",
                                        "Constant",    "Pad",         "Clip",
                                        "HardSigmoid", "HardSwish",   "Mish"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(op, known[i]) == 0)
            return true;
#define ACTIVATION_KNOWN(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, ...) onnx,
    static const char *const activations[] = {EMBER_ACTIVATIONS(ACTIVATION_KNOWN)};
#undef ACTIVATION_KNOWN
    for (size_t i = 0; i < sizeof activations / sizeof activations[0]; i++)
        if (activations[i] && strcmp(op, activations[i]) == 0)
            return true;
    return false;
}

/* What PyTorch calls the modules whose ONNX operators ember lacks, for the
 * message: a user knows nn.ConvTranspose2d, not ConvTranspose. */
static const char *pytorch_name(const char *op)
{
    static const char *const names[][2] = {
        {"ConvTranspose", "nn.ConvTranspose2d"},
        {"Resize", "nn.Upsample or F.interpolate"},
        {"Upsample", "nn.Upsample"},
        {"Softmax", "nn.Softmax"},
        {"LogSoftmax", "nn.LogSoftmax"},
        {"Transpose", "permute or transpose"},
        {"LayerNormalization", "nn.LayerNorm"},
        {"InstanceNormalization", "nn.InstanceNorm2d"},
        {"LSTM", "nn.LSTM"},
        {"GRU", "nn.GRU"},
        {"Elu", "nn.ELU"},
        {"Selu", "nn.SELU"},
        {"PRelu", "nn.PReLU"},
        {"Split", "torch.split or chunk"},
        {"Einsum", "torch.einsum"},
        {"Where", "torch.where or masked_fill"},
        {"Expand", "expand"},
        {"Tile", "repeat"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(op, names[i][0]) == 0)
            return names[i][1];
    return NULL;
}

/* Every node whose operator ember has no layer for, listed at once (not
 * only the first the walk meets), each with its PyTorch scope and, where
 * ONNX renamed the module, PyTorch's name. EMBER_OK when there is none. */
static ember_status unknown_operators(struct importer *im)
{
    enum { LISTED = 12 };
    char list[2048] = "";
    size_t len = 0;
    int count = 0;
    const struct onnx_node *first = NULL;
    for (int i = 0; i < im->g->node_count; i++) {
        const struct onnx_node *n = &im->g->nodes[i];
        bool foreign = n->domain[0] && strcmp(n->domain, "ai.onnx") != 0;
        if (!foreign && operator_known(n->op_type))
            continue;
        first = first ? first : n;
        if (count++ >= LISTED || len >= sizeof list)
            continue;
        struct imp_layer scope = {.node = n};
        onnx_name_layer(&scope, NULL);
        const char *torch = pytorch_name(n->op_type);
        len += (size_t)snprintf(list + len, sizeof list - len, "%s\"%.120s\" (%s%s%.40s%s%s%s%s)",
                                count > 1 ? "; " : "", n->name[0] ? n->name : "(unnamed)", n->op_type,
                                foreign ? " of domain " : "", foreign ? n->domain : "",
                                torch ? ", PyTorch's " : "", torch ? torch : "", scope.name[0] ? ", in " : "",
                                scope.name);
    }
    if (!count)
        return EMBER_OK;
    const char *torch = pytorch_name(first->op_type);
    if (count == 1 && first->domain[0] && strcmp(first->domain, "ai.onnx") != 0)
        return imp_fail_node(im, first, "an operator of domain %.40s; ember supports %s", first->domain,
                             supported);
    if (count == 1)
        return imp_fail_node(im, first, "ember has no such layer%s%s%s; it supports %s",
                             torch ? " (PyTorch's " : "", torch ? torch : "", torch ? ")" : "", supported);
    return imp_fail_node(im, NULL, "%d nodes have operators ember has no layer for: %s%s; ember supports %s",
                         count, list, count > LISTED ? "; ..." : "", supported);
}

/* ember's export of a model trained on a CSV table begins with the
 * table's standardisation, Sub(input, ember.feature_mean) and then
 * Div(that, ember.feature_std) (model-onnx-export.c), whose numbers the
 * metadata also carries; ember standardises a table's rows itself from
 * those, so the walk starts after the two nodes, which are taken. True
 * when it found them. */
static bool skip_standardization(struct importer *im, const struct onnx_model *om)
{
    bool carried = false;
    for (int i = 0; i < om->meta_count; i++)
        carried |= strcmp(om->meta_keys[i], "ember.feature_mean") == 0;
    for (int i = 0; carried && i < im->g->node_count; i++) {
        const struct onnx_node *sub = &im->g->nodes[i];
        if (strcmp(sub->op_type, "Sub") != 0 || sub->input_count != 2 ||
            strcmp(sub->inputs[0], im->input) != 0 || strcmp(sub->inputs[1], "ember.feature_mean") != 0 ||
            sub->output_count < 1)
            continue;
        for (int j = 0; j < im->g->node_count; j++) {
            const struct onnx_node *div = &im->g->nodes[j];
            if (strcmp(div->op_type, "Div") == 0 && div->input_count == 2 && div->output_count >= 1 &&
                strcmp(div->inputs[0], sub->outputs[0]) == 0 &&
                strcmp(div->inputs[1], "ember.feature_std") == 0) {
                imp_take(im, sub);
                imp_take(im, div);
                im->input = div->outputs[0];
                return true;
            }
        }
    }
    return false;
}

static const char *const own_keys[] = {
    "ember.model",    "ember.input",      "ember.classes", "ember.model_text",
    "ember.forwards", "ember.model_seed", "format"};

static ember_status import(ember_ctx *ctx, const char *what, const struct onnx_model *om, void **data,
                           size_t *size)
{
    struct importer im = {.ctx = ctx, .what = what, .g = &om->graph};
    im.fold_budget = 16 * (int64_t)om->graph.node_count + 4096;
    struct imp_block root = {0};
    struct onnx_names ns = {0};
    struct onnx_text t = {0};
    ember_model *model = NULL;
    const char **meta = NULL;
    int ndim = 0;
    int64_t shape[3];
    ember_status st = EMBER_OK;
    /* every operator ember reads computes from an input: the walk may take inputs[0] of any node */
    for (int i = 0; i < im.g->node_count && st == EMBER_OK; i++)
        if (im.g->nodes[i].input_count < 1 && strcmp(im.g->nodes[i].op_type, "Constant") != 0)
            st = imp_fail_node(&im, &im.g->nodes[i], "it has no input; ember supports %s", supported);
    if (st == EMBER_OK)
        st = unknown_operators(&im);
    if (st == EMBER_OK)
        st = imp_index_values(&im);
    if (st == EMBER_OK)
        st = find_input(&im, &ndim, shape);
    bool standardized = st == EMBER_OK && skip_standardization(&im, om);
    if (st == EMBER_OK)
        st = imp_trace_ways(&im);
    if (st == EMBER_OK && om->graph.output_count != 1)
        st = imp_fail_node(&im, NULL, "the graph has %d outputs; ember's models give one, the logits",
                           om->graph.output_count);
    if (st == EMBER_OK)
        st = walk(&im, om->graph.outputs[0].name, im.input, &root);
    for (int i = 0; st == EMBER_OK && i < om->graph.node_count; i++)
        if (!im.used[i] &&
            strcmp(om->graph.nodes[i].op_type, "Constant") != 0) /* an unused constant does nothing */
            st = imp_fail_node(&im, &om->graph.nodes[i],
                               "it is not on the way from the input to the output (ember's "
                               "networks are chains of layers and residual blocks)");
    int rank = ndim;
    if (st == EMBER_OK)
        st = settle(&im, &root, &rank);
    const struct imp_layer *last = root.count ? &root.items[root.count - 1] : NULL;
    if (st == EMBER_OK && (!last || strcmp(last->type, "linear") != 0))
        st = imp_fail_node(&im, last ? last->node : NULL,
                           "the model must end with a linear layer giving the class "
                           "scores (logits); ember adds the softmax itself");
    int classes = 0;
    if (st ==
        EMBER_OK) { /* the head gives as many outputs as the data has classes: another data set can take it */
        struct imp_layer *head = &root.items[root.count - 1];
        char rest[sizeof head->options];
        classes = atoi(head->options);
        snprintf(rest, sizeof rest, "%s", head->options + strcspn(head->options, " "));
        if (snprintf(head->options, sizeof head->options, "classes%s", rest) >= (int)sizeof head->options)
            st = imp_fail_node(&im, head->node, "options too long");
    }
    if (st == EMBER_OK && !onnx_unique_names(&root, &ns))
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", what);
    if (st == EMBER_OK) {
        char input[64];
        onnx_text_add(&t, "# imported from %s (%s, opset %lld) by ember\n", what,
                      om->producer[0] ? om->producer : "ONNX", (long long)om->opset);
        onnx_text_add(&t, "input %s\n", model_shape_str(ndim, shape, input, sizeof input));
        onnx_emit(&t, &root, "", false, 0, &ns);
        if (t.failed)
            st = ember_set_error(ctx, EMBER_ERR_NOMEM, "%s: the model file would be over 1 MiB", what);
    }
    if (st == EMBER_OK) {
        if (!(model = ember_model_parse(ctx, what, t.s, ndim, shape, classes, 0)))
            st = ember_last_status(ctx);
    }
    if (st == EMBER_OK)
        st = load_weights(&im, &model->file.root, &root);
    if (st == EMBER_OK) { /* the file's own metadata (class names, scaling) goes along */
        if (!(meta = calloc(2 * (size_t)om->meta_count + 1, sizeof *meta)))
            st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", what);
        int k = 0;
        for (int i = 0; meta && i < om->meta_count; i++) {
            bool own = false;
            for (size_t j = 0; j < sizeof own_keys / sizeof own_keys[0]; j++)
                own |= strcmp(om->meta_keys[i], own_keys[j]) == 0;
            for (int j = 0; j < i; j++) /* the first of a repeated key */
                own |= strcmp(om->meta_keys[i], om->meta_keys[j]) == 0;
            /* the standardisation the walk skipped is the checkpoint's to apply again */
            bool normalize = standardized && strcmp(om->meta_keys[i], "ember.normalize") == 0;
            if (!own)
                meta[k++] = om->meta_keys[i],
                meta[k++] =
                    normalize ? "(value - ember.feature_mean) / ember.feature_std" : om->meta_values[i];
        }
    }
    if (st == EMBER_OK)
        st = ember_model_save_memory(model, meta, data, size);
    free(meta);
    ember_model_free(model);
    free(t.s);
    onnx_names_free(&ns);
    block_free(&root);
    free(im.values);
    free(im.used);
    free(im.split);
    free(im.parent);
    free(im.depth_of);
    free(im.way_state);
    return st;
}

ember_status ember_onnx_to_checkpoint_memory(ember_ctx *ctx, const char *name, const void *onnx,
                                             size_t onnx_size, void **data, size_t *size)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!name || !onnx || !data || !size)
        return ember_set_error(ctx, EMBER_ERR_ARG, "ember_onnx_to_checkpoint_memory: a NULL argument");
    *data = NULL;
    *size = 0;
    struct onnx_model om;
    ember_status st = onnx_model_read(ctx, name, onnx, onnx_size, &om);
    if (st != EMBER_OK)
        return st;
    st = import(ctx, name, &om, data, size);
    onnx_model_free(&om);
    return st;
}

ember_status ember_onnx_to_checkpoint(ember_ctx *ctx, const char *path, void **data, size_t *size)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!path || !data || !size)
        return ember_set_error(ctx, EMBER_ERR_ARG, "ember_onnx_to_checkpoint: a NULL argument");
    void *bytes;
    size_t n;
    ember_status st = onnx_file_slurp(ctx, path, &bytes, &n);
    if (st != EMBER_OK)
        return st;
    st = ember_onnx_to_checkpoint_memory(ctx, path, bytes, n, data, size);
    free(bytes);
    return st;
}

ember_model *ember_model_from_onnx(ember_ctx *ctx, const char *path)
{
    void *data;
    size_t size;
    if (ember_onnx_to_checkpoint(ctx, path, &data, &size) != EMBER_OK)
        return NULL;
    ember_model *m = ember_model_from_checkpoint_memory(ctx, data, size);
    free(data);
    return m;
}
