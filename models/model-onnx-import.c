/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-import.c — an ONNX file as an ember model: a model
 * file's text and the weights for it (docs/interop.md).
 *
 * ember's networks are model files, so an ONNX graph is read back into
 * one: a chain of layers from the input to the output, with blocks where
 * the chain splits and meets again (at an Add, a Concat, a Mul). The walk
 * starts at the output and follows each node to the value it was computed
 * from; at a join of computed values, the sides are followed back to the
 * value all come from (the block's input), and each side becomes one of
 * the block's lists. Operators are taken as torch.onnx.export
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
 *   Pad alike around H and W     pad (nn.ConstantPad2d)
 *   Add of two branches          a residual block
 *   Concat of channels           a concat block (more than two branches nested)
 *   Mul of two branches          a gate block: x * body(x), squeeze-and-excitation
 *   Split, or Slice of the       chunk: one of equal parts (x.chunk(k, 1); the Slice's
 *   channels                     bounds computed from Shape are folded with a probe)
 *   Reshape, Transpose (0, 2,    channel_shuffle (torchvision's channel_shuffle)
 *   1, 3, 4), Reshape
 *   Resize, Upsample             upsample (a whole scale; nearest, bilinear)
 *   Softmax, LogSoftmax          softmax, log_softmax (over the features, or the
 *                                channels at opset 13 on)
 *   (this file makes the blocks; model-onnx-layers.c reads the layers)
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

/* ------------------------------------------------------------ the blocks */

static void block_free(struct imp_block *b)
{
    for (int i = 0; i < b->count; i++) {
        for (int k = 0; k < 4; k++)
            free(b->items[i].owned[k]);
        block_free(&b->items[i].body);
        block_free(&b->items[i].second);
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

/* ----------------------------------------------------------- the walk */

/* Add of two computed values: a residual block, body and shortcut from
 * where they split */
static ember_status residual_block(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                   const char **x)
{
    const char *split = imp_join_split(im, n);
    if (!split && im->tangled)
        return imp_fail_node(im, n,
                             "the graph's branches cross more often than any chain of layers and blocks can");
    if (!split)
        return imp_fail_node(im, n,
                             "its two inputs do not come from one value; ember's residual blocks add two "
                             "branches of the same input");
    if (++im->depth > MODEL_MAX_DEPTH)
        return imp_fail_node(im, n, "blocks nested over %d deep", MODEL_MAX_DEPTH);
    struct imp_layer *l = imp_block_add(im, block, "residual", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    /* the side that is the split itself is the identity shortcut; else input 0 is the body */
    int body = strcmp(n->inputs[0], split) == 0 ? 1 : 0;
    ember_status st = imp_walk(im, n->inputs[body], split, &l->body);
    if (st == EMBER_OK)
        st = imp_walk(im, n->inputs[1 - body], split, &l->second);
    im->depth--;
    *x = split;
    return st;
}

/* the branches inputs[first..] of a Concat joined into `block`'s layer l,
 * two by two: cat(a, b, c) is cat(a, cat(b, c)) */
static ember_status concat_into(struct importer *im, struct imp_layer *l, const struct onnx_node *n,
                                const char *const *inputs, int count, const char *split)
{
    ember_status st = imp_walk(im, inputs[0], split, &l->body);
    if (st != EMBER_OK || count == 2)
        return st == EMBER_OK ? imp_walk(im, inputs[1], split, &l->second) : st;
    if (++im->depth > MODEL_MAX_DEPTH)
        return imp_fail_node(im, n, "a Concat of %d branches nests concat blocks over %d deep", count,
                             MODEL_MAX_DEPTH);
    struct imp_layer *inner = imp_block_add(im, &l->second, "concat", n);
    st = inner ? concat_into(im, inner, n, inputs + 1, count - 1, split) : EMBER_ERR_NOMEM;
    im->depth--;
    return st;
}

static ember_status concat_block(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                 const char **x)
{
    if (imp_attr_int(n, "axis", 0) != 1)
        return imp_fail_node(im, n, "a Concat along axis %lld; ember's concat blocks join channels (axis 1)",
                             (long long)imp_attr_int(n, "axis", 0));
    if (n->input_count < 2 || n->input_count > IMP_MAX_JOIN)
        return imp_fail_node(im, n, "a Concat of %d values; ember joins 2 to %d", n->input_count,
                             IMP_MAX_JOIN);
    for (int i = 0; i < n->input_count; i++)
        if (imp_is_constant(im, n->inputs[i]))
            return imp_fail_node(im, n,
                                 "a Concat of a constant; ember's concat blocks join computed branches");
    const char *split = imp_join_split(im, n);
    if (!split)
        return imp_fail_node(im, n,
                             im->tangled
                                 ? "the graph's branches cross more often than any chain of blocks can"
                                 : "its inputs do not come from one value; ember's concat blocks join "
                                   "branches of the same input");
    if (++im->depth > MODEL_MAX_DEPTH)
        return imp_fail_node(im, n, "blocks nested over %d deep", MODEL_MAX_DEPTH);
    struct imp_layer *l = imp_block_add(im, block, "concat", n);
    ember_status st =
        l ? concat_into(im, l, n, (const char *const *)n->inputs, n->input_count, split) : EMBER_ERR_NOMEM;
    im->depth--;
    *x = split;
    return st;
}

static ember_status gate_block(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                               const char **x)
{
    const char *split = imp_join_split(im, n);
    int side = split && strcmp(n->inputs[0], split) == 0   ? 0
               : split && strcmp(n->inputs[1], split) == 0 ? 1
                                                           : -1;
    if (side < 0)
        return imp_fail_node(im, n,
                             "a Mul of two computed values, neither of them the other's input; ember "
                             "multiplies a value by a gate computed from it (x * body(x): "
                             "squeeze-and-excitation)");
    if (++im->depth > MODEL_MAX_DEPTH)
        return imp_fail_node(im, n, "blocks nested over %d deep", MODEL_MAX_DEPTH);
    struct imp_layer *l = imp_block_add(im, block, "gate", n);
    ember_status st = l ? imp_walk(im, n->inputs[1 - side], split, &l->body) : EMBER_ERR_NOMEM;
    im->depth--;
    if (st == EMBER_OK && !l->body.count)
        return imp_fail_node(im, n, "a Mul of a value by itself (x * x); ember's gate multiplies by a body");
    *x = split;
    return st;
}

/* One node (or the pattern it ends) into layers of `block`, in reverse;
 * *x is then the value it was computed from. Joins are blocks, made here;
 * anything else is a layer (model-onnx-layers.c). */
static ember_status convert_node(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                                 const char **x)
{
    const char *op = n->op_type;
    if (n->input_count < 1 || !n->inputs[0][0])
        return imp_fail_node(im, n, "it has no input to compute from");
    imp_take(im, n);
    bool two =
        n->input_count == 2 && !imp_is_constant(im, n->inputs[0]) && !imp_is_constant(im, n->inputs[1]);
    if (two && strcmp(op, "Add") == 0)
        return residual_block(im, block, n, x);
    /* a Mul whose sides split from one value (the trace left x * gate(x)'s activations out) */
    if (two && strcmp(op, "Mul") == 0 && imp_join_split(im, n))
        return gate_block(im, block, n, x);
    if (strcmp(op, "Concat") == 0)
        return concat_block(im, block, n, x);
    return imp_convert_layer(im, block, n, x);
}

ember_status imp_walk(struct importer *im, const char *out, const char *stop, struct imp_block *block)
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
        /* a Split is met once for each output a branch takes */
        bool again = im->used[imp_node_index(im, n)] && strcmp(n->op_type, "Split") != 0;
        if (again || ++steps > ONNX_MAX_NODES)
            return imp_fail_node(
                im, n,
                "its output is used by two branches that do not rejoin as a block "
                "(ember's networks are chains of layers and blocks: residual, concat, gate)");
        ember_status st = convert_node(im, block, n, &x);
        if (st != EMBER_OK)
            return st;
    }
    block_reverse(block);
    return EMBER_OK;
}

/* ------------------------------------------------- settling the layers */

static bool keeps_dims(const struct imp_layer *l)
{
    return strcmp(l->type, "global_avg_pool2d") == 0 && strcmp(l->options, "keepdim=true") == 0;
}

static void layer_remove(struct imp_block *b, int i)
{
    for (int k = 0; k < 4; k++)
        free(b->items[i].owned[k]);
    memmove(&b->items[i], &b->items[i + 1], (size_t)(b->count - i - 1) * sizeof *b->items);
    b->count--;
}

/* batch_norm on images or features, as the rank at that point says; a
 * Flatten after GlobalAveragePool made one global_avg_pool2d */
static ember_status settle(struct importer *im, struct imp_block *b, int *rank)
{
    for (int i = 0; i < b->count; i++) {
        struct imp_layer *l = &b->items[i];
        if (imp_is_block(l)) {
            int body = *rank, second = *rank;
            ember_status st = settle(im, &l->body, &body);
            if (st == EMBER_OK)
                st = settle(im, &l->second, &second);
            if (st != EMBER_OK)
                return st;
            if (strcmp(l->type, "gate") != 0 && body != second)
                return imp_fail_node(im, l->node, "joins an image and a vector");
            if (strcmp(l->type, "gate") != 0)
                *rank = body;
        } else if (strstr(l->type, "softmax")) { /* over the features, or (opset 13 on) the channels */
            int64_t axis = imp_attr_int(l->node, "axis", im->opset >= 13 ? -1 : 1);
            bool features = *rank == 1 && (axis == 1 || axis == -1);
            if (!features && !(*rank == 3 && axis == 1 && im->opset >= 13))
                return imp_fail_node(im, l->node,
                                     "a softmax over axis %lld of %s; ember's is over the features, or an "
                                     "image's channels (axis 1, opset 13 on)",
                                     (long long)axis, *rank == 3 ? "images" : "a vector");
        } else if (strcmp(l->type, "batch_norm") == 0) {
            snprintf(l->type, sizeof l->type, "%s", *rank == 3 ? "batch_norm2d" : "batch_norm1d");
        } else if (strcmp(l->type, "flatten") == 0 && i > 0 && keeps_dims(&b->items[i - 1])) {
            b->items[i - 1].options[0] = '\0';
            layer_remove(b, i--);
            *rank = 1;
        } else if (strcmp(l->type, "flatten") == 0 && *rank == 1) { /* nothing to flatten */
            layer_remove(b, i--);
        } else if (strcmp(l->type, "flatten") == 0 || strcmp(l->type, "linear") == 0 ||
                   (strcmp(l->type, "global_avg_pool2d") == 0 && !keeps_dims(l))) {
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
                st = load_weights(im, &l->second, &il->second);
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
    static const char *const known[] = {"Conv",       "Gemm",        "MatMul",
                                        "Add",        "Sub",         "Mul",
                                        "Div",        "Erf",         "BatchNormalization",
                                        "MaxPool",    "AveragePool", "GlobalAveragePool",
                                        "ReduceMean", "Flatten",     "Reshape",
                                        "Squeeze",    "Shape",       "Gather",
                                        "Unsqueeze",  "Concat",      "Cast",
                                        "Slice",      "Dropout",     "Identity",
                                        "Constant",   "Pad",         "ConstantOfShape",
                                        "Clip",       "HardSigmoid", "HardSwish",
                                        "Mish",       "Split",       "Transpose",
                                        "Softmax",    "LogSoftmax",  "Resize",
                                        "Upsample"};
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
        {"LayerNormalization", "nn.LayerNorm"},
        {"InstanceNormalization", "nn.InstanceNorm2d"},
        {"LSTM", "nn.LSTM"},
        {"GRU", "nn.GRU"},
        {"Elu", "nn.ELU"},
        {"Selu", "nn.SELU"},
        {"PRelu", "nn.PReLU"},
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
                             imp_supported);
    if (count == 1)
        return imp_fail_node(im, first, "ember has no such layer%s%s%s; it supports %s",
                             torch ? " (PyTorch's " : "", torch ? torch : "", torch ? ")" : "",
                             imp_supported);
    return imp_fail_node(im, NULL, "%d nodes have operators ember has no layer for: %s%s; ember supports %s",
                         count, list, count > LISTED ? "; ..." : "", imp_supported);
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

/* Whether PyTorch folded the BatchNorm layers into the convolutions, as its
 * export in evaluation mode does: no BatchNormalization left, and Conv
 * weights that lost their module's name to "onnx::Conv_N", the constant
 * the folding made. The network then fine-tunes as convolutions with a
 * bias, not as BatchNorm; `ember train --init` says so. */
static bool batch_norm_folded(const struct importer *im)
{
    int renamed = 0;
    for (int i = 0; i < im->g->node_count; i++) {
        const struct onnx_node *n = &im->g->nodes[i];
        if (strcmp(n->op_type, "BatchNormalization") == 0)
            return false;
        renamed += strcmp(n->op_type, "Conv") == 0 && n->input_count > 1 &&
                   strncmp(n->inputs[1], "onnx::Conv_", 11) == 0;
    }
    return renamed > 0;
}

static const char *const own_keys[] = {"ember.model",      "ember.input",          "ember.classes",
                                       "ember.model_text", "ember.forwards",       "ember.model_seed",
                                       "format",           "ember.onnx_batch_norm"};

static ember_status import(ember_ctx *ctx, const char *what, const struct onnx_model *om, void **data,
                           size_t *size)
{
    struct importer im = {.ctx = ctx, .what = what, .g = &om->graph, .opset = om->opset};
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
            st = imp_fail_node(&im, &im.g->nodes[i], "it has no input; ember supports %s", imp_supported);
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
        st = imp_walk(&im, om->graph.outputs[0].name, im.input, &root);
    for (int i = 0; st == EMBER_OK && i < om->graph.node_count; i++)
        if (!im.used[i] &&
            strcmp(om->graph.nodes[i].op_type, "Constant") != 0) /* an unused constant does nothing */
            st = imp_fail_node(&im, &om->graph.nodes[i],
                               "it is not on the way from the input to the output (ember's "
                               "networks are chains of layers and blocks: residual, concat, gate)");
    int rank = ndim;
    if (st == EMBER_OK)
        st = settle(&im, &root, &rank);
    /* the head: the last layer, a linear one, or SqueezeNet's 1x1 convolution
     * before a ReLU and the global pool; it gives as many outputs as the
     * data has classes, so another data set can take it */
    int at = root.count - 1;
    while (at > 0 && strstr(root.items[at].type, "softmax")) /* the head's scores made probabilities */
        at--;
    int last = at;
    while (at > 0 &&
           (strcmp(root.items[at].type, "relu") == 0 || strcmp(root.items[at].type, "flatten") == 0 ||
            (strcmp(root.items[at].type, "global_avg_pool2d") == 0 && !keeps_dims(&root.items[at]))))
        at--;
    struct imp_layer *head = at >= 0 ? &root.items[at] : NULL;
    bool conv_head = head && at < last && strcmp(head->type, "conv2d") == 0 &&
                     strcmp(root.items[last].type, "global_avg_pool2d") == 0;
    if (st == EMBER_OK && !conv_head) {
        head = last >= 0 ? &root.items[last] : NULL;
        if (!head || strcmp(head->type, "linear") != 0)
            st = imp_fail_node(&im, head ? head->node : NULL,
                               "the model must end with a linear layer giving the class scores (logits), "
                               "or a convolution and a global pool (SqueezeNet's); ember adds the softmax "
                               "itself");
    }
    int classes = 0;
    if (st == EMBER_OK) {
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
        onnx_emit(&t, &root, "", NULL, 0, &ns);
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
        if (!(meta = calloc(2 * (size_t)om->meta_count + 3, sizeof *meta)))
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
        if (meta && batch_norm_folded(&im))
            meta[k++] = "ember.onnx_batch_norm",
            meta[k++] = "folded: torch.onnx.export in evaluation mode folded each BatchNorm into the "
                        "convolution before it";
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
