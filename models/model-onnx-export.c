/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-export.c — a model to an ONNX file (docs/interop.md).
 *
 * Each layer becomes the operators PyTorch's torch.onnx.export writes for
 * the same module, at opset 13 (ONNX Runtime, OpenCV's DNN module and
 * every mobile runtime of the last years read it):
 *
 *   conv2d             Conv (kernel_shape, strides, pads, with or without bias)
 *   linear             Gemm (transB = 1: the weight stays (out, in))
 *   batch_norm2d/1d    BatchNormalization with the running statistics
 *   relu, leaky_relu,  the operator the activation's row names (base/elementwise-impl.h):
 *   sigmoid, ...       Relu, LeakyRelu (alpha), Sigmoid, ...
 *   gelu               x * 0.5 * (1 + Erf(x / sqrt 2)): opset 13 has no Gelu;
 *                      tanh=true: Tanh(sqrt(2 / pi) * (x + 0.044715 x^3)) for Erf
 *   silu               Mul(x, Sigmoid(x)): nor SiLU
 *   relu6              Clip(x, 0, 6)
 *   hardsigmoid        HardSigmoid (alpha 1/6, beta 0.5: PyTorch's)
 *   hardswish          Mul(x, HardSigmoid(x)): HardSwish is opset 14's
 *   mish               Mul(x, Tanh(Softplus(x))): Mish is opset 18's
 *   max/avg_pool2d     MaxPool, AveragePool (kernel_shape, strides, pads, ceil_mode,
 *                      count_include_pad)
 *   global_avg_pool2d  GlobalAveragePool, Flatten (not with keepdim)
 *   pad                Pad (constant mode, H and W alike)
 *   upsample           Resize (scales [1, 1, s, s]; nearest: asymmetric, floor; bilinear:
 *                      linear, pytorch_half_pixel)
 *   softmax, log_softmax  Softmax, LogSoftmax (axis 1: channels or features; -1 on a sequence)
 *   chunk              Split into the equal parts (opset 13: their sizes an input),
 *                      the layer's part one of its outputs
 *   channel_shuffle    Reshape (N, groups, C / groups, H, W), Transpose (0, 2, 1, 3, 4),
 *                      Reshape (N, C, H, W): torchvision's channel_shuffle
 *   flatten            Flatten (axis 1)
 *   dropout            nothing: an exported model is for inference
 *   residual           its body and shortcut from the same input, then Add
 *   concat             its two branches from the same input, then Concat (axis 1)
 *   gate               Mul of its body's output (Reshape to (N, C, 1, 1) when a
 *                      vector) and its input: squeeze-and-excitation as torchvision writes it
 *
 * The weights keep their PyTorch names ("layer1.0.conv1.weight"), the input
 * is "input" (batch, C, H, W) and the output "logits" (batch, classes),
 * with the batch a named, dynamic dimension. The model's file, input shape
 * and class count, and the caller's metadata (class names, how inputs were
 * scaled), go in metadata_props under the keys checkpoints use. A CSV
 * table's standardisation in that metadata (ember.feature_mean and
 * ember.feature_std) becomes the graph's first nodes, Sub and Div, so the
 * file takes the table's values as they are, as `ember predict` does.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elementwise-impl.h"
#include "files-impl.h"
#include "models-impl.h"
#include "onnx-impl.h"
#include "platform.h"

#define EXPORT_OPSET      13
#define EXPORT_IR_VERSION 7 /* the IR version that goes with opset 13 */

struct exporter {
    ember_ctx *ctx;
    struct onnx_graph *g;
    int node_cap, init_cap;
    bool nomem;
};

static char *dup_or_fail(struct exporter *ex, const char *s)
{
    char *copy = strdup(s);
    ex->nomem |= !copy;
    return copy;
}

/* a float initializer `name` of `values` (copied) */
static const char *add_init(struct exporter *ex, const char *name, int ndim, const int64_t *dims,
                            const float *values)
{
    struct onnx_graph *g = ex->g;
    if (ex->nomem)
        return "";
    if (g->initializer_count == ex->init_cap) {
        int cap = ex->init_cap ? 2 * ex->init_cap : 32;
        struct onnx_tensor *more = realloc(g->initializers, (size_t)cap * sizeof *more);
        if (!more) {
            ex->nomem = true;
            return "";
        }
        g->initializers = more;
        ex->init_cap = cap;
    }
    struct onnx_tensor *t = &g->initializers[g->initializer_count++];
    *t = (struct onnx_tensor){.type = ONNX_FLOAT, .ndim = ndim, .numel = 1};
    for (int i = 0; i < ndim; i++)
        t->numel *= (t->dims[i] = dims[i]);
    t->name = dup_or_fail(ex, name);
    if ((t->values = malloc((size_t)t->numel * sizeof *t->values + 1)))
        memcpy(t->values, values, (size_t)t->numel * sizeof *values);
    ex->nomem |= !t->values;
    return t->name ? t->name : "";
}

/* an INT64 initializer `name` of `count` values (copied): a shape, a split */
static const char *add_ints(struct exporter *ex, const char *name, int count, const int64_t *values)
{
    const char *added = add_init(ex, name, 0, NULL, (const float[]){0}); /* a slot, then made INT64 (count) */
    if (!*added)
        return added;
    struct onnx_tensor *t = &ex->g->initializers[ex->g->initializer_count - 1];
    free(t->values);
    t->values = NULL;
    t->type = ONNX_INT64;
    t->ndim = 1;
    t->dims[0] = t->numel = count;
    if ((t->ints = malloc((size_t)count * sizeof *t->ints)))
        memcpy(t->ints, values, (size_t)count * sizeof *values);
    ex->nomem |= !t->ints;
    return added;
}

/* a parameter's values as an initializer under its own name */
static const char *add_param(struct exporter *ex, const char *prefix, const char *what, ember_tensor *p)
{
    char name[MODEL_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", what);
    int64_t dims[4], n = ember_tensor_numel(p);
    int ndim = ember_tensor_ndim(p);
    for (int i = 0; i < ndim; i++)
        dims[i] = ember_tensor_dim(p, i);
    float *host = malloc((size_t)n * sizeof *host + 1);
    if (!host || ember_tensor_read(p, host, (size_t)n * sizeof *host) != EMBER_OK) {
        ex->nomem |= !host;
        free(host);
        return add_init(ex, name, 0, dims, (const float[]){0}); /* the error is on the context */
    }
    const char *added = add_init(ex, name, ndim, dims, host);
    free(host);
    return added;
}

/* a node `op` named "/base/op" with the given inputs, giving one output */
/* the ONNX operator of an activation layer, from its row (base/elementwise-impl.h); NULL where ONNX
 * has none, or for a layer that is no activation */
static const char *activation_operator(const char *type)
{
#define ACTIVATION_OPERATOR(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, ...)           \
    if (strcmp(type, #name) == 0)                                                                            \
        return onnx;
    EMBER_ACTIVATIONS(ACTIVATION_OPERATOR)
#undef ACTIVATION_OPERATOR
    return NULL;
}

static struct onnx_node *add_node(struct exporter *ex, const char *op, const char *base,
                                  const char *const *inputs, int input_count)
{
    struct onnx_graph *g = ex->g;
    if (ex->nomem)
        return NULL;
    if (g->node_count == ex->node_cap) {
        int cap = ex->node_cap ? 2 * ex->node_cap : 32;
        struct onnx_node *more = realloc(g->nodes, (size_t)cap * sizeof *more);
        if (!more) {
            ex->nomem = true;
            return NULL;
        }
        g->nodes = more;
        ex->node_cap = cap;
    }
    struct onnx_node *n = &g->nodes[g->node_count];
    *n = (struct onnx_node){0};
    char name[MODEL_NAME_MAX + 64];
    snprintf(name, sizeof name, "/%s/%s", base, op);
    /* every value a node gives is named after the node, which is unique */
    int same = 0;
    for (int i = 0; i < g->node_count; i++)
        same += strncmp(g->nodes[i].name, name, strlen(name)) == 0;
    size_t used = strlen(name);
    if (same && snprintf(name + used, sizeof name - used, "_%d", same) >= (int)(sizeof name - used)) {
        ember_set_error(ex->ctx, EMBER_ERR_ARG, "exporting to ONNX: the node name %s is too long", name);
        ex->nomem = true; /* stops the export; the error above is the one reported */
    }
    char output[sizeof name + 16];
    snprintf(output, sizeof output, "%.*s_output_0", (int)(sizeof output - 16),
             name); /* room for the suffix */
    n->name = dup_or_fail(ex, name);
    n->op_type = dup_or_fail(ex, op);
    n->domain = dup_or_fail(ex, "");
    n->inputs = calloc((size_t)input_count + 1, sizeof *n->inputs);
    n->outputs = calloc(1, sizeof *n->outputs);
    if (!n->inputs || !n->outputs) {
        free(n->inputs);
        free(n->outputs);
        free(n->name);
        free(n->op_type);
        free(n->domain);
        ex->nomem = true;
        return NULL;
    }
    g->node_count++;
    for (int i = 0; i < input_count; i++)
        n->inputs[n->input_count++] = dup_or_fail(ex, inputs[i]);
    n->outputs[n->output_count++] = dup_or_fail(ex, output);
    return n;
}

static const char *output_of(const struct onnx_node *n) { return n && n->outputs[0] ? n->outputs[0] : ""; }

/* n with `count` outputs, "..._output_0" to "..._output_{count - 1}" (a Split's) */
static struct onnx_node *add_outputs(struct exporter *ex, struct onnx_node *n, int count)
{
    char **more = n ? realloc(n->outputs, (size_t)count * sizeof *more) : NULL;
    if (!more) {
        ex->nomem = true;
        return NULL;
    }
    n->outputs = more;
    size_t stem = strlen(n->outputs[0]) - 1; /* without its "0" */
    for (int i = 1; i < count; i++) {
        char name[MODEL_NAME_MAX + 64];
        snprintf(name, sizeof name, "%.*s%d", (int)stem, n->outputs[0], i);
        n->outputs[n->output_count++] = dup_or_fail(ex, name);
    }
    return n;
}

static struct onnx_attr *add_attr(struct exporter *ex, struct onnx_node *n, const char *name, int type)
{
    if (!n)
        return NULL;
    struct onnx_attr *more = realloc(n->attrs, (size_t)(n->attr_count + 1) * sizeof *more);
    if (!more) {
        ex->nomem = true;
        return NULL;
    }
    n->attrs = more;
    struct onnx_attr *a = &n->attrs[n->attr_count++];
    *a = (struct onnx_attr){.name = dup_or_fail(ex, name), .type = type};
    return a;
}

static void attr_int(struct exporter *ex, struct onnx_node *n, const char *name, int64_t v)
{
    struct onnx_attr *a = add_attr(ex, n, name, ONNX_ATTR_INT);
    if (a)
        a->i = v;
}

static void attr_float(struct exporter *ex, struct onnx_node *n, const char *name, float v)
{
    struct onnx_attr *a = add_attr(ex, n, name, ONNX_ATTR_FLOAT);
    if (a)
        a->f = v;
}

/* an ints attribute of `count` values (a Transpose's perm) */
static void attr_list(struct exporter *ex, struct onnx_node *n, const char *name, const int64_t *v, int count)
{
    struct onnx_attr *a = add_attr(ex, n, name, ONNX_ATTR_INTS);
    if (!a)
        return;
    if (!(a->ints = malloc((size_t)count * sizeof *a->ints))) {
        ex->nomem = true;
        return;
    }
    memcpy(a->ints, v, (size_t)count * sizeof *v);
    a->int_count = count;
}

/* one output of op on inputs, for the chains below */
static const char *op1(struct exporter *ex, const char *op, const char *base, const char *const *in,
                       int count)
{
    return output_of(add_node(ex, op, base, in, count));
}

/* a float constant named base.what */
static const char *constant(struct exporter *ex, const char *base, const char *what, int ndim,
                            const int64_t *dims, const float *values)
{
    char name[MODEL_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s.%s", base, what);
    return add_init(ex, name, ndim, dims, values);
}

/* y = x @ w^T + b over the last axis of a sequence (N, T, in), as
 * torch.onnx.export writes nn.Linear there: MatMul and Add (Gemm takes 2-d
 * inputs alone); w stays (out, in) under its name, read through a Transpose */
static const char *linear_positions(struct exporter *ex, const char *base, const char *x, const char *prefix,
                                    const char *what, ember_tensor *w, ember_tensor *b)
{
    char name[MODEL_NAME_MAX + 32];
    snprintf(name, sizeof name, "%s%s%s", prefix, *prefix && *what ? "." : "", what);
    const char *weight = add_param(ex, name, "weight", w);
    struct onnx_node *t = add_node(ex, "Transpose", base, &weight, 1);
    attr_list(ex, t, "perm", (const int64_t[]){1, 0}, 2);
    const char *y = op1(ex, "MatMul", base, (const char *[]){x, output_of(t)}, 2);
    return b ? op1(ex, "Add", base, (const char *[]){y, add_param(ex, name, "bias", b)}, 2) : y;
}

/* (x - mean) / sqrt(var + eps) over the last axis, or x / sqrt(mean(x^2) + eps) (rms), then * weight (+
 * bias): LayerNormalization is opset 17's, so spelt out as PyTorch writes LayerNorm at 13 */
static const char *norm_last_axis(struct exporter *ex, const struct model_layer *l, const char *base,
                                  const char *x, bool rms)
{
    const char *centred = x;
    if (!rms) {
        struct onnx_node *mean = add_node(ex, "ReduceMean", base, &x, 1);
        attr_list(ex, mean, "axes", (const int64_t[]){-1}, 1);
        centred = op1(ex, "Sub", base, (const char *[]){x, output_of(mean)}, 2);
    }
    const char *square = op1(ex, "Mul", base, (const char *[]){centred, centred}, 2);
    struct onnx_node *var = add_node(ex, "ReduceMean", base, &square, 1);
    attr_list(ex, var, "axes", (const int64_t[]){-1}, 1);
    const char *eps =
        constant(ex, base, "eps", 0, NULL, (const float[]){(float)model_layer_option(l, "eps")});
    const char *shifted = op1(ex, "Add", base, (const char *[]){output_of(var), eps}, 2);
    const char *root = op1(ex, "Sqrt", base, &shifted, 1);
    const char *y = op1(ex, "Div", base, (const char *[]){centred, root}, 2);
    y = l->t[0] ? op1(ex, "Mul", base, (const char *[]){y, add_param(ex, l->full_name, "weight", l->t[0])}, 2)
                : y;
    return !rms && l->t[1]
               ? op1(ex, "Add", base, (const char *[]){y, add_param(ex, l->full_name, "bias", l->t[1])}, 2)
               : y;
}

/* nanoGPT's causal self-attention: the projection to q, k, v, split, each
 * (N, T, H, D) made (N, H, T, D) (k (N, H, D, T)), the scores scaled by
 * 1 / sqrt(D), the future masked with -inf, softmax, the mix of v, the
 * heads joined and projected; as torch.onnx.export writes it at opset 13 */
static const char *attention(struct exporter *ex, const struct model_layer *l, const char *base,
                             const char *x)
{
    int64_t t = l->in_shape[0], c = l->in_shape[1], h = (int64_t)model_layer_option(l, "heads"), d = c / h;
    const char *qkv = linear_positions(ex, base, x, l->full_name, "c_attn", l->t[0], l->t[1]);
    char name[MODEL_NAME_MAX + 64];
    snprintf(name, sizeof name, "%s.split", base);
    const char *split_sizes = add_ints(ex, name, 3, (const int64_t[]){c, c, c});
    struct onnx_node *split = add_node(ex, "Split", base, (const char *[]){qkv, split_sizes}, 2);
    attr_int(ex, split, "axis", 2);
    if (!(split = add_outputs(ex, split, 3)))
        return "";
    snprintf(name, sizeof name, "%s.heads", base);
    const char *heads = add_ints(ex, name, 4, (const int64_t[]){0, 0, h, d});
    const char *part[3];
    static const int64_t perms[3][4] = {{0, 2, 1, 3}, {0, 2, 3, 1}, {0, 2, 1, 3}}; /* q, k (transposed), v */
    for (int i = 0; i < 3; i++) {
        const char *in = split->outputs[i];
        const char *four = op1(ex, "Reshape", base, (const char *[]){in, heads}, 2);
        struct onnx_node *p = add_node(ex, "Transpose", base, &four, 1);
        attr_list(ex, p, "perm", perms[i], 4);
        part[i] = output_of(p);
    }
    float *mask = malloc((size_t)(t * t) * sizeof *mask);
    for (int64_t i = 0; mask && i < t * t; i++)
        mask[i] = i % t > i / t ? -INFINITY : 0.0f; /* a query sees the keys up to its own position */
    ex->nomem |= !mask;
    const char *future = mask ? constant(ex, base, "causal_mask", 2, (const int64_t[]){t, t}, mask) : "";
    free(mask);
    const char *scale = constant(ex, base, "scale", 0, NULL, (const float[]){(float)(1.0 / sqrt((double)d))});
    const char *scores = op1(ex, "MatMul", base, (const char *[]){part[0], part[1]}, 2);
    scores = op1(ex, "Mul", base, (const char *[]){scores, scale}, 2);
    scores = op1(ex, "Add", base, (const char *[]){scores, future}, 2);
    struct onnx_node *soft = add_node(ex, "Softmax", base, &scores, 1);
    attr_int(ex, soft, "axis", -1);
    const char *mixed = op1(ex, "MatMul", base, (const char *[]){output_of(soft), part[2]}, 2);
    struct onnx_node *back = add_node(ex, "Transpose", base, &mixed, 1);
    attr_list(ex, back, "perm", (const int64_t[]){0, 2, 1, 3}, 4);
    snprintf(name, sizeof name, "%s.joined", base);
    const char *joined = add_ints(ex, name, 3, (const int64_t[]){0, 0, c});
    const char *y = op1(ex, "Reshape", base, (const char *[]){output_of(back), joined}, 2);
    return linear_positions(ex, base, y, l->full_name, "c_proj", l->t[2], l->t[3]);
}

/* an ints attribute of `count` (at most 4) copies of v: a kernel's sides, a pool's pads */
static void attr_ints(struct exporter *ex, struct onnx_node *n, const char *name, int64_t v, int count)
{
    attr_list(ex, n, name, (const int64_t[]){v, v, v, v}, count);
}

static const char *export_block(struct exporter *ex, const struct model_block *block, const char *x);

static const char *export_layer(struct exporter *ex, const struct model_layer *l, const char *x)
{
    char base[MODEL_NAME_MAX + 32];
    const char *type = l->type ? l->type->name : "residual";
    if (l->full_name[0])
        snprintf(base, sizeof base, "%s", l->full_name);
    else
        snprintf(base, sizeof base, "%s_%d", type, l->index);
    if (!l->type) { /* body(x) + shortcut(x), cat(body(x), branch(x)), x * body(x) */
        const char *body = l->body.count ? export_block(ex, &l->body, x) : x;
        const char *second = l->second.count ? export_block(ex, &l->second, x) : x;
        if (l->join == JOIN_GATE && l->body.layers[l->body.count - 1].out_ndim == 1) { /* (N, C, 1, 1) */
            char name[MODEL_NAME_MAX + 64];
            snprintf(name, sizeof name, "%s.per_channel", base);
            const char *shape = add_ints(ex, name, 4, (const int64_t[]){0, -1, 1, 1});
            body = output_of(add_node(ex, "Reshape", base, (const char *[]){body, shape}, 2));
        }
        if (l->join == JOIN_GATE)
            return output_of(add_node(ex, "Mul", base, (const char *[]){body, x}, 2));
        if (l->join == JOIN_RESIDUAL)
            return output_of(add_node(ex, "Add", base, (const char *[]){body, second}, 2));
        struct onnx_node *cat = add_node(ex, "Concat", base, (const char *[]){body, second}, 2);
        attr_int(ex, cat, "axis", 1);
        return output_of(cat);
    }
    struct onnx_node *n = NULL;
    if (strcmp(type, "conv2d") == 0) {
        int k = (int)model_layer_option(l, "kernel"), s = (int)model_layer_option(l, "stride");
        int p = model_layer_option(l, "padding") < 0 ? (k - 1) / 2 : (int)model_layer_option(l, "padding");
        const char *in[3] = {x, add_param(ex, l->full_name, "weight", l->t[0]),
                             l->t[1] ? add_param(ex, l->full_name, "bias", l->t[1]) : ""};
        n = add_node(ex, "Conv", base, in, l->t[1] ? 3 : 2);
        attr_ints(ex, n, "dilations", 1, 2);
        attr_int(ex, n, "group", (int64_t)model_layer_option(l, "groups"));
        attr_ints(ex, n, "kernel_shape", k, 2);
        attr_ints(ex, n, "pads", p, 4);
        attr_ints(ex, n, "strides", s, 2);
    } else if (strcmp(type, "linear") == 0 && l->in_ndim >= 2) { /* each position of a sequence */
        return linear_positions(ex, base, x, l->full_name, "", l->t[0], l->t[1]);
    } else if (strcmp(type, "embedding") == 0) { /* the rows the tokens name */
        n = add_node(ex, "Gather", base, (const char *[]){add_param(ex, l->full_name, "weight", l->t[0]), x},
                     2);
        attr_int(ex, n, "axis", 0);
    } else if (strcmp(type, "position_embedding") ==
               0) { /* a vector per position: (T, C) added to (N, T, C) */
        n = add_node(ex, "Add", base, (const char *[]){x, add_param(ex, l->full_name, "weight", l->t[0])}, 2);
    } else if (strcmp(type, "layer_norm") == 0 || strcmp(type, "rms_norm") == 0) {
        return norm_last_axis(ex, l, base, x, type[0] == 'r');
    } else if (strcmp(type, "attention") == 0) {
        return attention(ex, l, base, x);
    } else if (strcmp(type, "linear") == 0) {
        const char *in[3] = {x, add_param(ex, l->full_name, "weight", l->t[0]),
                             l->t[1] ? add_param(ex, l->full_name, "bias", l->t[1]) : ""};
        n = add_node(ex, "Gemm", base, in, l->t[1] ? 3 : 2);
        attr_float(ex, n, "alpha", 1.0f);
        attr_float(ex, n, "beta", 1.0f);
        attr_int(ex, n, "transB", 1);
    } else if (strncmp(type, "batch_norm", 10) == 0) {
        const char *scale, *shift;
        if (l->t[0]) {
            scale = add_param(ex, l->full_name, "weight", l->t[0]);
            shift = add_param(ex, l->full_name, "bias", l->t[1]);
        } else { /* affine=false: a weight of ones and a bias of zeros */
            int64_t c = l->in_shape[0];
            float *ones = calloc((size_t)c, sizeof *ones), *zeros = calloc((size_t)c, sizeof *zeros);
            for (int64_t i = 0; ones && i < c; i++)
                ones[i] = 1.0f;
            char name[MODEL_NAME_MAX + 64];
            snprintf(name, sizeof name, "%s.ones", base);
            scale = ones ? add_init(ex, name, 1, &c, ones) : "";
            snprintf(name, sizeof name, "%s.zeros", base);
            shift = zeros ? add_init(ex, name, 1, &c, zeros) : "";
            ex->nomem |= !ones || !zeros;
            free(ones);
            free(zeros);
        }
        const char *in[5] = {x, scale, shift, add_param(ex, l->full_name, "running_mean", l->t[2]),
                             add_param(ex, l->full_name, "running_var", l->t[3])};
        n = add_node(ex, "BatchNormalization", base, in, 5);
        attr_float(ex, n, "epsilon", (float)model_layer_option(l, "eps"));
        attr_float(ex, n, "momentum",
                   1.0f - (float)model_layer_option(l, "momentum")); /* ONNX keeps the other share */
    } else if (activation_operator(type) && strcmp(type, "leaky_relu") != 0) {
        n = add_node(ex, activation_operator(type), base, &x, 1);
    } else if (strcmp(type, "leaky_relu") == 0) {
        n = add_node(ex, "LeakyRelu", base, &x, 1);
        attr_float(ex, n, "alpha", (float)model_layer_option(l, "slope"));
    } else if (strcmp(type, "gelu") == 0) {
        char name[MODEL_NAME_MAX + 64];
        snprintf(name, sizeof name, "%s.one", base);
        const char *one = add_init(ex, name, 0, NULL, (const float[]){1.0f});
        snprintf(name, sizeof name, "%s.half", base);
        const char *half = add_init(ex, name, 0, NULL, (const float[]){0.5f});
        const char *curve; /* erf(x / sqrt 2), or GPT-2's tanh(sqrt(2 / pi) (x + 0.044715 x^3)) */
        if (model_layer_option(l, "tanh") != 0.0) {
            snprintf(name, sizeof name, "%s.cubic", base);
            const char *c = add_init(ex, name, 0, NULL, (const float[]){0.044715f});
            snprintf(name, sizeof name, "%s.sqrt_2_over_pi", base);
            const char *k = add_init(ex, name, 0, NULL, (const float[]){0.7978845608f});
            const char *x2 = output_of(add_node(ex, "Mul", base, (const char *[]){x, x}, 2));
            const char *x3 = output_of(add_node(ex, "Mul", base, (const char *[]){x2, x}, 2));
            const char *cx3 = output_of(add_node(ex, "Mul", base, (const char *[]){x3, c}, 2));
            const char *inner = output_of(add_node(ex, "Add", base, (const char *[]){x, cx3}, 2));
            const char *scaled = output_of(add_node(ex, "Mul", base, (const char *[]){inner, k}, 2));
            curve = output_of(add_node(ex, "Tanh", base, &scaled, 1));
        } else {
            snprintf(name, sizeof name, "%s.sqrt2", base);
            const char *root2 = add_init(ex, name, 0, NULL, (const float[]){1.41421356f});
            const char *scaled = output_of(add_node(ex, "Div", base, (const char *[]){x, root2}, 2));
            curve = output_of(add_node(ex, "Erf", base, &scaled, 1));
        }
        /* x * (1 + curve) * 0.5, in PyTorch's order */
        const char *plus = output_of(add_node(ex, "Add", base, (const char *[]){curve, one}, 2));
        const char *times = output_of(add_node(ex, "Mul", base, (const char *[]){x, plus}, 2));
        n = add_node(ex, "Mul", base, (const char *[]){times, half}, 2);
    } else if (strcmp(type, "silu") == 0) { /* x * sigmoid(x), as torch.onnx.export writes nn.SiLU */
        const char *sigmoid = output_of(add_node(ex, "Sigmoid", base, &x, 1));
        n = add_node(ex, "Mul", base, (const char *[]){x, sigmoid}, 2);
    } else if (strcmp(type, "relu6") == 0) { /* Clip, its bounds as inputs (opset 11 on) */
        char name[MODEL_NAME_MAX + 64];
        snprintf(name, sizeof name, "%s.min", base);
        const char *low = add_init(ex, name, 0, NULL, (const float[]){0.0f});
        snprintf(name, sizeof name, "%s.max", base);
        const char *high = add_init(ex, name, 0, NULL, (const float[]){6.0f});
        n = add_node(ex, "Clip", base, (const char *[]){x, low, high}, 3);
    } else if (strcmp(type, "hardsigmoid") == 0 || strcmp(type, "hardswish") == 0) {
        /* PyTorch's hard sigmoid is ONNX's with alpha 1/6 (beta 0.5); the hard
         * swish x times it, as PyTorch writes it before opset 14's HardSwish */
        n = add_node(ex, "HardSigmoid", base, &x, 1);
        attr_float(ex, n, "alpha", 1.0f / 6.0f);
        attr_float(ex, n, "beta", 0.5f);
        if (strcmp(type, "hardswish") == 0) {
            const char *gate = output_of(n);
            n = add_node(ex, "Mul", base, (const char *[]){x, gate}, 2);
        }
    } else if (strcmp(type, "mish") == 0) { /* x * tanh(softplus(x)): opset 18's Mish, spelt out */
        const char *soft = output_of(add_node(ex, "Softplus", base, &x, 1));
        const char *gate = output_of(add_node(ex, "Tanh", base, &soft, 1));
        n = add_node(ex, "Mul", base, (const char *[]){x, gate}, 2);
    } else if (strcmp(type, "max_pool2d") == 0 || strcmp(type, "avg_pool2d") == 0) {
        int k = (int)model_layer_option(l, "kernel"), s = (int)model_layer_option(l, "stride");
        n = add_node(ex, type[0] == 'm' ? "MaxPool" : "AveragePool", base, &x, 1);
        if (model_layer_option(l, "ceil_mode") != 0.0)
            attr_int(ex, n, "ceil_mode", 1);
        if (type[0] == 'a') /* ONNX's default is 0, PyTorch's True */
            attr_int(ex, n, "count_include_pad", model_layer_option(l, "count_include_pad") != 0.0);
        attr_ints(ex, n, "kernel_shape", k, 2);
        attr_ints(ex, n, "pads", (int)model_layer_option(l, "padding"), 4);
        attr_ints(ex, n, "strides", s ? s : k, 2);
    } else if (strcmp(type, "global_avg_pool2d") == 0) {
        n = add_node(ex, "GlobalAveragePool", base, &x, 1);
        if (model_layer_option(l, "keepdim") == 0.0) {
            const char *pooled = output_of(n);
            n = add_node(ex, "Flatten", base, &pooled, 1);
            attr_int(ex, n, "axis", 1);
        }
    } else if (strcmp(type, "pad") == 0) { /* Pad, constant mode: pads and value as inputs (opset 11 on) */
        int64_t p = (int64_t)model_layer_option(l, "padding");
        char name[MODEL_NAME_MAX + 64];
        snprintf(name, sizeof name, "%s.pads", base);
        const char *pads = add_ints(ex, name, 8, (const int64_t[]){0, 0, p, p, 0, 0, p, p});
        const char *value =
            constant(ex, base, "value", 0, NULL, (const float[]){(float)model_layer_option(l, "value")});
        n = add_node(ex, "Pad", base, (const char *[]){x, pads, value}, 3);
    } else if (strcmp(type, "upsample") == 0) { /* Resize as PyTorch writes nn.Upsample at opset 13 */
        char name[MODEL_NAME_MAX + 64];
        float s = (float)model_layer_option(l, "scale");
        bool bilinear = model_layer_option(l, "bilinear") != 0.0;
        snprintf(name, sizeof name, "%s.scales", base);
        const char *scales = add_init(ex, name, 1, (const int64_t[]){4}, (const float[]){1.0f, 1.0f, s, s});
        n = add_node(ex, "Resize", base, (const char *[]){x, "", scales}, 3);
        struct onnx_attr *a = add_attr(ex, n, "coordinate_transformation_mode", ONNX_ATTR_STRING);
        if (a)
            ex->nomem |= !(a->s = strdup(bilinear ? "pytorch_half_pixel" : "asymmetric"));
        if ((a = add_attr(ex, n, "mode", ONNX_ATTR_STRING)))
            ex->nomem |= !(a->s = strdup(bilinear ? "linear" : "nearest"));
        if ((a = add_attr(ex, n, "nearest_mode", ONNX_ATTR_STRING)))
            ex->nomem |= !(a->s = strdup("floor"));
    } else if (strcmp(type, "softmax") == 0 || strcmp(type, "log_softmax") == 0) { /* opset 13: one axis */
        n = add_node(ex, type[0] == 's' ? "Softmax" : "LogSoftmax", base, &x, 1);
        attr_int(ex, n, "axis", l->in_ndim == 2 ? -1 : 1);
    } else if (strcmp(type, "chunk") == 0) { /* Split into equal parts, this layer's the one it takes */
        int chunks = (int)model_layer_option(l, "chunks"), index = (int)model_layer_option(l, "index");
        int64_t sizes[64];
        char name[MODEL_NAME_MAX + 64];
        if (chunks > 64) {
            ember_set_error(ex->ctx, EMBER_ERR_UNSUPPORTED, "exporting to ONNX: chunk %d: at most 64 chunks",
                            chunks);
            ex->nomem = true;
            return "";
        }
        for (int i = 0; i < chunks; i++)
            sizes[i] = l->out_shape[0];
        snprintf(name, sizeof name, "%s.split", base);
        const char *split = add_ints(ex, name, chunks, sizes);
        n = add_node(ex, "Split", base, (const char *[]){x, split}, 2);
        attr_int(ex, n, "axis", 1);
        n = add_outputs(ex, n, chunks);
        return n && index < n->output_count ? n->outputs[index] : "";
    } else if (strcmp(type, "channel_shuffle") == 0) { /* torchvision's: view, transpose(1, 2), view */
        int64_t g = (int64_t)model_layer_option(l, "groups"), c = l->in_shape[0];
        int64_t h = l->in_shape[1], w = l->in_shape[2];
        char name[MODEL_NAME_MAX + 64];
        snprintf(name, sizeof name, "%s.grouped", base);
        const char *grouped = add_ints(ex, name, 5, (const int64_t[]){0, g, c / g, h, w});
        snprintf(name, sizeof name, "%s.shuffled", base);
        const char *shuffled = add_ints(ex, name, 4, (const int64_t[]){0, c, h, w});
        const char *split = output_of(add_node(ex, "Reshape", base, (const char *[]){x, grouped}, 2));
        struct onnx_node *t = add_node(ex, "Transpose", base, &split, 1);
        attr_list(ex, t, "perm", (const int64_t[]){0, 2, 1, 3, 4}, 5);
        const char *swapped = output_of(t);
        n = add_node(ex, "Reshape", base, (const char *[]){swapped, shuffled}, 2);
    } else if (strcmp(type, "flatten") == 0) {
        if (l->in_ndim == 1) /* already (N, features): ember's flatten gives x itself */
            return x;
        n = add_node(ex, "Flatten", base, &x, 1);
        attr_int(ex, n, "axis", 1);
    } else if (strcmp(type, "dropout") == 0) {
        return x;
    } else {
        ember_set_error(ex->ctx, EMBER_ERR_UNSUPPORTED,
                        "exporting to ONNX: layer type %s has no ONNX form yet", type);
        ex->nomem = true;
    }
    return output_of(n);
}

static const char *export_block(struct exporter *ex, const struct model_block *block, const char *x)
{
    for (int i = 0; i < block->count && !ex->nomem; i++)
        x = export_layer(ex, &block->layers[i], x);
    return x;
}

/* the graph's input or output: (batch, dims...) floats */
static void set_value(struct exporter *ex, struct onnx_value *v, const char *name, int ndim,
                      const int64_t *dims)
{
    *v = (struct onnx_value){
        .name = dup_or_fail(ex, name), .type = ONNX_FLOAT, .ndim = ndim + 1, .dims = {-1}};
    v->dim_names[0] = dup_or_fail(ex, "batch");
    for (int i = 0; i < ndim; i++)
        v->dims[i + 1] = dims[i];
}

/* metadata_props: the model's own keys, then the caller's pairs */
/* `standardized`: the graph standardises its input itself (standardize below),
 * so ember.normalize says the file takes raw values */
static void set_metadata(struct exporter *ex, struct onnx_model *om, const struct ember_model *m,
                         const char *const *metadata, bool standardized)
{
    char input[64], classes[16];
    model_shape_str(m->sample_ndim, m->sample_shape, input, sizeof input);
    snprintf(classes, sizeof classes, "%d", m->classes);
    const char *own[] = {"ember.model",   m->name, "ember.input",      input,
                         "ember.classes", classes, "ember.model_text", m->text};
    int n = 0;
    while (metadata && metadata[n] && metadata[n + 1])
        n += 2;
    om->meta_keys = calloc((size_t)(n / 2 + 4), sizeof *om->meta_keys);
    om->meta_values = calloc((size_t)(n / 2 + 4), sizeof *om->meta_values);
    if (!om->meta_keys || !om->meta_values) {
        ex->nomem = true;
        return;
    }
    for (int i = 0; i < 8; i += 2) {
        om->meta_keys[om->meta_count] = dup_or_fail(ex, own[i]);
        om->meta_values[om->meta_count++] = dup_or_fail(ex, own[i + 1]);
    }
    for (int i = 0; i < n; i += 2) {
        bool normalize = standardized && strcmp(metadata[i], "ember.normalize") == 0;
        om->meta_keys[om->meta_count] = dup_or_fail(ex, metadata[i]);
        om->meta_values[om->meta_count++] = dup_or_fail(
            ex, normalize ? "none (the graph's Sub and Div standardise the features)" : metadata[i + 1]);
    }
}

/* A CSV table's standardisation as the graph's first nodes, Sub and Div,
 * so that the file takes the table's values as they are: its output. */
static const char *standardize(struct exporter *ex, const ember_feature_scaling *s, struct ember_model *m)
{
    if (m->sample_ndim != 1 || m->sample_shape[0] != s->count) {
        ember_set_error(ex->ctx, EMBER_ERR_FORMAT,
                        "exporting to ONNX: the metadata standardises %d features; the model takes %lld",
                        s->count, (long long)m->sample_shape[0]);
        ex->nomem = true; /* stops the export; the error above is the one reported */
        return "";
    }
    int64_t n = s->count;
    const char *mean = add_init(ex, "ember.feature_mean", 1, &n, s->mean);
    const char *std = add_init(ex, "ember.feature_std", 1, &n, s->std);
    const char *centred = output_of(add_node(ex, "Sub", "standardize", (const char *[]){"input", mean}, 2));
    return output_of(add_node(ex, "Div", "standardize", (const char *[]){centred, std}, 2));
}

/* The model as ModelProto bytes (a buffer to free()). */
static ember_status export_bytes(struct ember_model *m, const char *const *metadata, void **data,
                                 size_t *size)
{
    if (!m->text)
        return ember_set_error(m->ctx, EMBER_ERR_UNSUPPORTED,
                               "%s is a network written in C: it has no layers that "
                               "ember could write as ONNX operators",
                               m->name);
    struct onnx_model om = {.ir_version = EXPORT_IR_VERSION, .opset = EXPORT_OPSET};
    struct exporter ex = {.ctx = m->ctx, .g = &om.graph};
    ember_clear_error(m->ctx);
    om.producer = dup_or_fail(&ex, "ember");
    om.graph.name = dup_or_fail(&ex, m->name);
    om.graph.inputs = calloc(1, sizeof *om.graph.inputs);
    om.graph.outputs = calloc(1, sizeof *om.graph.outputs);
    ember_status st = EMBER_OK;
    if (om.graph.inputs && om.graph.outputs) {
        om.graph.input_count = om.graph.output_count = 1;
        const struct model_block *root = &m->file.root;
        const struct model_layer *first = &root->layers[0], *end = &root->layers[root->count - 1];
        set_value(&ex, &om.graph.inputs[0], "input", m->sample_ndim, m->sample_shape);
        if (first->type && strcmp(first->type->name, "embedding") == 0)
            om.graph.inputs[0].type = ONNX_INT64; /* tokens, as PyTorch's nn.Embedding takes them */
        set_value(&ex, &om.graph.outputs[0], "logits", end->out_ndim, end->out_shape);
        ember_feature_scaling *scaling = NULL;
        const char *x = "input";
        if (ember_feature_scaling_from_meta(m->ctx, metadata, &scaling) != EMBER_OK)
            ex.nomem = true; /* stops the export; its error is the one reported */
        set_metadata(&ex, &om, m, metadata, scaling != NULL);
        if (scaling)
            x = standardize(&ex, scaling, m);
        ember_feature_scaling_free(scaling);
        const char *out = ex.nomem ? "" : export_block(&ex, &m->file.root, x);
        /* the last node's output is the graph's: name it so */
        struct onnx_node *last = om.graph.node_count ? &om.graph.nodes[om.graph.node_count - 1] : NULL;
        if (!ex.nomem && last && strcmp(last->outputs[0], out) == 0) {
            free(last->outputs[0]);
            last->outputs[0] = dup_or_fail(&ex, "logits");
        }
    } else {
        ex.nomem = true;
    }
    if (ember_last_status(m->ctx) != EMBER_OK)
        st = ember_last_status(m->ctx);
    else if (ex.nomem)
        st = ember_set_error(m->ctx, EMBER_ERR_NOMEM, "out of host memory exporting %s to ONNX", m->name);
    else
        st = onnx_model_write(m->ctx, &om, data, size);
    onnx_model_free(&om);
    return st;
}

ember_status ember_model_export_onnx(ember_model *m, const char *path, const char *const *metadata)
{
    if (!m)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_set_error(m->ctx, EMBER_ERR_ARG, "ember_model_export_onnx: NULL path");
    void *data = NULL;
    size_t size = 0;
    ember_status st = export_bytes(m, metadata, &data, &size);
    if (st != EMBER_OK)
        return st;
    /* written beside the target and renamed over it: whole or not at all */
    char kept[4200];
    int err = ember_write_file_whole(path, data, size, kept, sizeof kept);
    free(data);
    if (err == EBUSY)
        return ember_set_error(m->ctx, EMBER_ERR_IO,
                               "cannot replace %s: another program has it open, and Windows replaces no file "
                               "that is open; it is unchanged, and the new ONNX file is %s (close the other "
                               "program and rename that file, or export elsewhere)",
                               path, kept);
    return err ? ember_set_error(m->ctx, EMBER_ERR_IO, "cannot write %s: %s", path, strerror(err)) : EMBER_OK;
}
