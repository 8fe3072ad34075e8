/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-layers.c — the ONNX import's layers
 * (model-onnx-import-impl.h): one node, or the pattern of nodes PyTorch
 * writes for one module, into one layer of a model file, its weights
 * taken from the graph's constants. model-onnx-import.c walks the graph
 * and makes the blocks; each node that is not a join comes here.
 *
 * Two patterns depend on a shape the walk does not know: x.chunk(2, dim=1),
 * which PyTorch writes as a Slice whose bounds it computes from Shape(x)
 * when the batch is dynamic, and ShuffleNet's channel shuffle,
 * x.view(N, g, C / g, H, W).transpose(1, 2).view(N, -1, H, W). Their
 * shapes are folded (imp_fold) with x's channel count set to a probe,
 * twice: bounds that are k/n and (k+1)/n of both probes are chunk n
 * index=k whatever the real count; anything else is refused, naming the
 * node.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise-impl.h"
#include "model-onnx-import-impl.h"

const char imp_supported[] =
    "Conv, Gemm, MatMul (+ Add), BatchNormalization, Relu, LeakyRelu, Sigmoid, Tanh and ember's other "
    "activations' operators, GELU (Div, Erf, Add, "
    "Mul), SiLU (Sigmoid, Mul), ReLU6 (Clip to [0, 6]), PyTorch's HardSigmoid, HardSwish (or HardSigmoid, "
    "Mul), "
    "Mish (or Softplus, Tanh, Mul), "
    "MaxPool, AveragePool, GlobalAveragePool, ReduceMean over H and W, Flatten, Reshape to (batch, -1), "
    "Squeeze, "
    "Resize and Upsample by a whole scale (nearest, bilinear), Softmax, LogSoftmax, Dropout, Identity, "
    "Constant, Pad alike around H and W, Add of two branches (residual blocks), "
    "Concat of channels "
    "(concat blocks), Mul of two branches (gate blocks: squeeze-and-excitation), Split or Slice into equal "
    "parts of the channels (x.chunk), and ShuffleNet's channel shuffle (Reshape, Transpose, Reshape)";

/* ------------------------------------------------------------ the layers */

struct imp_layer *imp_block_add(struct importer *im, struct imp_block *b, const char *type,
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

static void add_values(struct imp_layer *l, const float *values, int64_t count, float *owned)
{
    l->values[l->value_count] = values;
    l->counts[l->value_count] = count;
    l->owned[l->value_count++] = owned;
}

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
    struct imp_layer *l = imp_block_add(im, block, "linear", mm);
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
    struct imp_layer *l = imp_block_add(im, block, "conv2d", n);
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
    /* a training-mode export's (model.train(), TrainingMode.PRESERVE) also gives the batch's statistics,
     * which nothing may read: ember's layer keeps its running statistics itself, as PyTorch's */
    for (int i = 1; i < n->output_count; i++)
        for (int k = 0; n->outputs[i][0] && k < im->g->node_count; k++)
            for (int j = 0; j < im->g->nodes[k].input_count; j++)
                if (strcmp(im->g->nodes[k].inputs[j], n->outputs[i]) == 0)
                    return imp_fail_node(im, n,
                                         "its batch statistics (output %d) are read by node \"%.200s\"", i,
                                         im->g->nodes[k].name);
    for (int64_t c = 0; c < p[3]->numel; c++)
        if (p[3]->values[c] < 0.0f)
            return imp_fail_node(im, n, "channel %lld's variance is negative", (long long)c);
    struct imp_layer *l = imp_block_add(im, block, "batch_norm", n);
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

/* Pad in constant mode: of nothing (PyTorch writes one before AveragePool)
 * nothing; of the same count on each side of H and W alone, a pad layer
 * (nn.ZeroPad2d, nn.ConstantPad2d, F.pad) */
static ember_status pad_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                              const char **x)
{
    const struct onnx_attr *attr = onnx_attr_find(n, "pads");
    const struct onnx_tensor *pads =
        n->input_count > 1 && n->inputs[1][0] ? imp_constant(im, n->inputs[1]) : NULL;
    const int64_t *p = attr ? attr->ints : pads ? pads->ints : NULL;
    int64_t count = attr ? attr->int_count : pads && pads->ints ? pads->numel : -1;
    int64_t folded[IMP_FOLD_MAX]; /* F.pad's, which torch.onnx.export computes from PyTorch's order */
    if (!p && !pads && n->input_count > 1 && n->inputs[1][0] &&
        (count = imp_fold(im, n->inputs[1], folded, 0)) == 8)
        p = folded;
    const struct onnx_tensor *v =
        n->input_count > 2 && n->inputs[2][0] ? imp_constant(im, n->inputs[2]) : NULL;
    float value = v && v->values && v->numel == 1 ? v->values[0] : imp_attr_float(n, "value", 0.0f);
    bool none = p != NULL, planes = p && count == 8 && p[0] == 0 && p[1] == 0 && p[4] == 0 && p[5] == 0;
    for (int64_t i = 0; p && i < count; i++)
        none = none && p[i] == 0;
    for (int i = 3; planes && i < 8; i++)
        planes = i == 4 || i == 5 || p[i] == p[2];
    const struct onnx_attr *mode = onnx_attr_find(n, "mode");
    if ((mode && mode->s && strcmp(mode->s, "constant") != 0) || (!none && !planes) ||
        (n->input_count > 2 && n->inputs[2][0] && !(v && v->values)))
        return imp_fail_node(im, n,
                             "padding other than constant and alike on every side of H and W "
                             "(nn.ConstantPad2d(p, value))");
    *x = n->inputs[0];
    if (none)
        return EMBER_OK;
    struct imp_layer *l = imp_block_add(im, block, "pad", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    snprintf(l->options, sizeof l->options, "%lld value=%.9g", (long long)p[2], (double)value);
    return EMBER_OK;
}

/* Identity, and Dropout: nothing in an evaluation export; a training-mode
 * export's (its training_mode input true) a dropout layer of its ratio */
static ember_status dropout_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                  const char **x)
{
    *x = n->inputs[0];
    const struct onnx_tensor *mode =
        n->input_count > 2 && n->inputs[2][0] ? imp_constant(im, n->inputs[2]) : NULL;
    const struct onnx_tensor *ratio =
        n->input_count > 1 && n->inputs[1][0] ? imp_constant(im, n->inputs[1]) : NULL;
    bool training = mode && mode->numel == 1 &&
                    (mode->ints ? mode->ints[0] != 0 : mode->values && mode->values[0] != 0.0f);
    if (strcmp(n->op_type, "Dropout") != 0 || !training)
        return EMBER_OK;
    float p =
        ratio && ratio->numel == 1 && ratio->values ? ratio->values[0] : imp_attr_float(n, "ratio", 0.5f);
    if (!(p >= 0.0f && p <= 1.0f))
        return imp_fail_node(im, n, "a Dropout of ratio %g; it is a probability, 0 to 1", (double)p);
    struct imp_layer *l = imp_block_add(im, block, "dropout", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    snprintf(l->options, sizeof l->options, "%.7g", (double)p);
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
    struct imp_layer *l = imp_block_add(im, block, max ? "max_pool2d" : "avg_pool2d", n);
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

/* channel counts no network has, divisible by every count of parts up to 16 */
static const int64_t probes[2] = {720720, 1441440};

/* a folded value of one element, with the probe of `probe` channels on `of` */
static int64_t fold_one(struct importer *im, const char *name, const char *of, int64_t probe)
{
    int64_t v[IMP_FOLD_MAX];
    im->probe = of;
    im->probe_channels = probe;
    int count = name && name[0] ? imp_fold(im, name, v, 0) : -1;
    im->probe = NULL;
    return count == 1 ? v[0] : IMP_UNKNOWN;
}

static ember_status add_chunk(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                              int64_t chunks, int64_t index, const char **x)
{
    struct imp_layer *l = imp_block_add(im, block, "chunk", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    snprintf(l->options, sizeof l->options, "%lld index=%lld", (long long)chunks, (long long)index);
    *x = n->inputs[0];
    return EMBER_OK;
}

/* Slice(x, starts, ends, axes = [1], steps = [1]) whose bounds are a chunk's
 * under both probes */
static ember_status slice_chunk(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                const char **x)
{
    const char *why = "a Slice other than of the channels into equal parts (x.chunk(k, 1), or x[:, a:b] "
                      "with bounds ember cannot tell are a chunk's)";
    if (n->input_count < 4 || fold_one(im, n->inputs[3], NULL, 0) != 1 ||
        (n->input_count > 4 && n->inputs[4][0] && fold_one(im, n->inputs[4], NULL, 0) != 1))
        return imp_fail_node(im, n, "%s", why);
    int64_t chunks = -1, index = -1;
    for (int p = 0; p < 2; p++) {
        int64_t start = fold_one(im, n->inputs[1], n->inputs[0], probes[p]);
        int64_t end = fold_one(im, n->inputs[2], n->inputs[0], probes[p]);
        if (end > probes[p]) /* past the end: to the end */
            end = probes[p];
        int64_t size = end - start;
        if (start <= IMP_UNKNOWN || end <= IMP_UNKNOWN || start < 0 || size <= 0 || probes[p] % size ||
            start % size)
            return imp_fail_node(im, n, "%s", why);
        if (p == 1 && (chunks != probes[p] / size || index != start / size))
            return imp_fail_node(im, n, "%s", why);
        chunks = probes[p] / size, index = start / size;
    }
    return add_chunk(im, block, n, chunks, index, x);
}

/* Split into equal parts, or Slice of the channels in a chunk's bounds
 * (PyTorch's x.chunk(k, 1), written either way): a chunk layer; *x is the
 * output of n being followed on entry */
static ember_status chunk_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                const char **x)
{
    if (strcmp(n->op_type, "Slice") == 0)
        return slice_chunk(im, block, n, x);
    int at = 0; /* the output being followed */
    while (at < n->output_count && strcmp(n->outputs[at], *x) != 0)
        at++;
    if (imp_attr_int(n, "axis", 0) != 1 || at == n->output_count)
        return imp_fail_node(im, n, "a Split other than of the channels (axis 1)");
    const struct onnx_attr *attr = onnx_attr_find(n, "split");
    const struct onnx_tensor *sizes =
        n->input_count > 1 && n->inputs[1][0] ? imp_constant(im, n->inputs[1]) : NULL;
    const int64_t *s = attr ? attr->ints : sizes ? sizes->ints : NULL;
    int64_t count = attr ? attr->int_count : sizes && sizes->ints ? sizes->numel : 0;
    if ((attr || sizes) && (!s || count != n->output_count))
        return imp_fail_node(im, n, "a Split whose sizes are not constants, one for each output");
    for (int64_t i = 1; s && i < count; i++)
        if (s[i] != s[0])
            return imp_fail_node(im, n,
                                 "a Split into parts of different sizes; ember's chunk takes equal parts");
    return add_chunk(im, block, n, n->output_count, at, x);
}

/* whether a Reshape's shape is (batch, ...) with `count` values, into v under the probe on `of` */
static bool shape_under(struct importer *im, const struct onnx_node *r, const char *of, int64_t probe,
                        int count, int64_t *v)
{
    im->probe = of;
    im->probe_channels = probe;
    bool ok = r->input_count == 2 && imp_fold(im, r->inputs[1], v, 0) == count;
    im->probe = NULL;
    return ok && (v[0] == IMP_BATCH || v[0] == 0 || v[0] == -1 || (im->batch > 0 && v[0] == im->batch));
}

/* Reshape (N, g, C / g, H, W), Transpose (0, 2, 1, 3, 4), Reshape (N, C, H,
 * W) ending at Reshape n: a channel_shuffle layer; false (nothing taken)
 * when n ends no such pattern */
static bool channel_shuffle(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                            const char **x, ember_status *st)
{
    const struct onnx_node *t = imp_producer(im, n->inputs[0]);
    const struct onnx_attr *perm =
        t && strcmp(t->op_type, "Transpose") == 0 ? onnx_attr_find(t, "perm") : NULL;
    static const int64_t swap[5] = {0, 2, 1, 3, 4};
    if (!perm || perm->int_count != 5 || memcmp(perm->ints, swap, sizeof swap) != 0)
        return false;
    const struct onnx_node *r = imp_producer(im, t->inputs[0]);
    if (!r || strcmp(r->op_type, "Reshape") != 0)
        return false;
    const char *in = r->inputs[0];
    int64_t groups = -1, v[IMP_FOLD_MAX], w[IMP_FOLD_MAX];
    for (int p = 0; p < 2; p++) {
        /* (N, g, C / g, H, W) then (N, C or -1, H, W): the channels split into g groups and back */
        if (!shape_under(im, r, in, probes[p], 5, v) || !shape_under(im, n, in, probes[p], 4, w) ||
            v[1] <= 0 || (groups > 0 && v[1] != groups) || (v[2] != probes[p] / v[1] && v[2] <= 0) ||
            (w[1] != -1 && w[1] != probes[p] && (w[1] <= 0 || w[1] != v[1] * v[2])))
            return false;
        groups = v[1];
    }
    imp_take(im, t);
    imp_take(im, r);
    struct imp_layer *l = imp_block_add(im, block, "channel_shuffle", n);
    if (l)
        snprintf(l->options, sizeof l->options, "%lld", (long long)groups);
    *st = l ? EMBER_OK : EMBER_ERR_NOMEM;
    *x = in;
    return true;
}

static bool attr_is(const struct onnx_node *n, const char *name, const char *fallback, const char *want)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return strcmp(a && a->s ? a->s : fallback, want) == 0;
}

/* Resize (opset 11 on) or Upsample (opset 9) by an integer scale of H and
 * W, as PyTorch writes nn.Upsample: nearest (asymmetric, floor) or
 * bilinear (align_corners=False: half_pixel or pytorch_half_pixel) */
static ember_status upsample_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                   const char **x)
{
    bool resize = strcmp(n->op_type, "Resize") == 0;
    int at = resize ? 2 : 1; /* the scales: Resize's X, roi, scales, sizes; Upsample's X, scales */
    const struct onnx_tensor *scales =
        n->input_count > at && n->inputs[at][0] ? imp_constant(im, n->inputs[at]) : NULL;
    if (resize && n->input_count > 1 && n->inputs[1][0])
        imp_constant(im, n->inputs[1]); /* roi: only tf_crop_and_resize reads it */
    const float *s = scales ? scales->values : NULL;
    if (!s || scales->numel != 4 || s[0] != 1.0f || s[1] != 1.0f || s[2] != s[3] || s[2] != floorf(s[2]) ||
        s[2] < 1.0f || s[2] > 64.0f || (resize && n->input_count > 3 && n->inputs[3][0]))
        return imp_fail_node(im, n,
                             "a resize other than by constant scales [1, 1, s, s], s a whole number up to "
                             "64 (nn.Upsample(scale_factor=s))");
    bool nearest = attr_is(n, "mode", "nearest", "nearest");
    bool bilinear = attr_is(n, "mode", "nearest", "linear") || attr_is(n, "mode", "nearest", "bilinear");
    const char *ctm = "half_pixel";
    const struct onnx_attr *mode = onnx_attr_find(n, "coordinate_transformation_mode");
    if (mode && mode->s)
        ctm = mode->s;
    /* Upsample (opset 9) has no transformation: its nearest is asymmetric, its linear unlike PyTorch's */
    bool fits = nearest ? (!resize || (strcmp(ctm, "asymmetric") == 0 &&
                                       attr_is(n, "nearest_mode", "round_prefer_floor", "floor")))
                        : bilinear && resize &&
                              (strcmp(ctm, "half_pixel") == 0 || strcmp(ctm, "pytorch_half_pixel") == 0);
    if (!fits)
        return imp_fail_node(
            im, n,
            "a resize ember does not match: it takes nearest (asymmetric, floor) and bilinear "
            "(half_pixel, align_corners=False), as nn.Upsample writes them");
    struct imp_layer *l = imp_block_add(im, block, "upsample", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    snprintf(l->options, sizeof l->options, "%d%s", (int)s[2], bilinear ? " bilinear=true" : "");
    *x = n->inputs[0];
    return EMBER_OK;
}

/* ---------------------------------------------------- one node, one layer */

ember_status imp_convert_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                               const char **x)
{
    const char *op = n->op_type;
    struct imp_layer *l;
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0)
        return dropout_layer(im, block, n, x);
    if (strcmp(op, "Pad") == 0)
        return pad_layer(im, block, n, x);
    if (strcmp(op, "Conv") == 0)
        return conv_layer(im, block, n, x);
    if (strcmp(op, "Gemm") == 0 || strcmp(op, "MatMul") == 0)
        return linear_layer(im, block, n, NULL, x);
    if (strcmp(op, "BatchNormalization") == 0)
        return batch_norm_layer(im, block, n, x);
    if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0)
        return pool_layer(im, block, n, x);
    if (strcmp(op, "Add") == 0 && n->input_count == 2) { /* a linear layer's bias after its MatMul */
        bool c0 = imp_is_constant(im, n->inputs[0]), c1 = imp_is_constant(im, n->inputs[1]);
        const struct onnx_node *mm = imp_producer(im, n->inputs[c0 ? 1 : 0]);
        if (c0 != c1 && mm && strcmp(mm->op_type, "MatMul") == 0)
            return linear_layer(im, block, n, mm, x);
        return imp_fail_node(im, n, "adds a constant other than a MatMul's bias; ember supports %s",
                             imp_supported);
    }
    const char *act_x;
    if (match_gelu(im, n, &act_x)) {
        *x = act_x;
        return imp_block_add(im, block, "gelu", n) ? EMBER_OK : EMBER_ERR_NOMEM;
    }
    const char *gated;
    if (match_gated(im, n, &act_x, &gated)) {
        *x = act_x;
        return imp_block_add(im, block, gated, n) ? EMBER_OK : EMBER_ERR_NOMEM;
    }
    if (strcmp(op, "Split") == 0 || strcmp(op, "Slice") == 0)
        return chunk_layer(im, block, n, x);
    if (strcmp(op, "Transpose") == 0)
        return imp_fail_node(im, n,
                             "a Transpose that is not part of ShuffleNet's channel shuffle "
                             "(Reshape, Transpose (0, 2, 1, 3, 4), Reshape)");
    /* MobileNet's activations, as PyTorch writes them */
    if (strcmp(op, "Clip") == 0) {
        float low, high;
        if (!clip_bound(im, n, 1, "min", -INFINITY, &low) || !clip_bound(im, n, 2, "max", INFINITY, &high))
            return imp_fail_node(im, n, "a Clip whose bounds are not constants of one value");
        if (low != 0.0f || high != 6.0f)
            return imp_fail_node(im, n, "Clip to [%g, %g]; ember's clip is ReLU6's, to [0, 6]", low, high);
        *x = n->inputs[0];
        return imp_block_add(im, block, "relu6", n) ? EMBER_OK : EMBER_ERR_NOMEM;
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
        return imp_block_add(im, block, layer, n) ? EMBER_OK : EMBER_ERR_NOMEM;
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
        if (!(l = imp_block_add(im, block, simple[i].layer, n)))
            return EMBER_ERR_NOMEM;
        if (strcmp(op, "LeakyRelu") == 0)
            snprintf(l->options, sizeof l->options, "slope=%.7g", imp_attr_float(n, "alpha", 0.01f));
        if (strcmp(op, "GlobalAveragePool") == 0) /* (N, C, 1, 1); a Flatten after it is settled away */
            snprintf(l->options, sizeof l->options, "keepdim=true");
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "Resize") == 0 || strcmp(op, "Upsample") == 0)
        return upsample_layer(im, block, n, x);
    if (strcmp(op, "Softmax") == 0 || strcmp(op, "LogSoftmax") == 0) { /* its axis checked when settled */
        if (!(l = imp_block_add(im, block, op[0] == 'S' ? "softmax" : "log_softmax", n)))
            return EMBER_ERR_NOMEM;
        *x = n->inputs[0];
        return EMBER_OK;
    }
    ember_status shuffled;
    if (strcmp(op, "Reshape") == 0 && channel_shuffle(im, block, n, x, &shuffled))
        return shuffled;
    if (strcmp(op, "Reshape") == 0 || strcmp(op, "Squeeze") == 0) {
        if (strcmp(op, "Reshape") == 0 && !imp_reshape_is_flatten(im, n))
            return imp_fail_node(im, n, "%s",
                                 im->fold_budget < 0
                                     ? "its shape is computed by more nodes than ember folds"
                                     : "a Reshape ember cannot tell is (batch, -1); ember's flatten "
                                       "gives (N, C*H*W)");
        if (!imp_block_add(im, block, "flatten", n))
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
        if (!hw)
            return imp_fail_node(im, n, "ReduceMean other than over H and W (x.mean((2, 3)))");
        if (!(l = imp_block_add(im, block, "global_avg_pool2d", n)))
            return EMBER_ERR_NOMEM;
        if (imp_attr_int(n, "keepdims", 1))
            snprintf(l->options, sizeof l->options, "keepdim=true");
        *x = n->inputs[0];
        return EMBER_OK;
    }
    return imp_fail_node(im, n, "ember has no such layer; it supports %s", imp_supported);
}
