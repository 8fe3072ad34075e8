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
 *                                no dilation or groups)
 *   Gemm, MatMul + Add, MatMul   linear (the weight a constant; a bias of
 *                                one value is broadcast, as Gemm allows)
 *   BatchNormalization           batch_norm2d, or batch_norm1d on features
 *   Relu, LeakyRelu, Sigmoid,    the activation whose row names the operator
 *   Tanh, ...                    (base/elementwise-impl.h): relu, ...
 *   Div, Erf, Add, Mul, Mul      gelu (PyTorch's exact GELU, spelt out)
 *   Sigmoid, Mul                 silu (x * Sigmoid(x), PyTorch's SiLU)
 *   MaxPool, AveragePool         max_pool2d, avg_pool2d (no padding)
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

struct value_ref {
    const char *name;
    int node; /* its producer, or -1: a graph input, -2: an initializer */
    const struct onnx_tensor *tensor;
};

struct importer {
    ember_ctx *ctx;
    const char *what;
    const struct onnx_graph *g;
    struct value_ref *values; /* sorted by name */
    int value_count;
    bool *used; /* per node: taken by the walk */
    /* every value's way back to the input, as a tree (trace_ways): its
     * parent value and depth, or -1 and 0 where the way ends; and per
     * residual Add node, where its two branches split (NULL: nowhere) */
    int *parent, *depth_of;
    unsigned char *way_state;
    const char **split;
    int64_t climb_budget; /* steps up the tree left to find splits */
    bool tangled;         /* the budget ran out */
    int64_t fold_budget;  /* calls of fold() left */
    const char *input;    /* the graph's one data input */
    int64_t batch;        /* its first dimension when fixed, else -1 */
    int depth;
};

static const char supported[] =
    "Conv, Gemm, MatMul (+ Add), BatchNormalization, Relu, LeakyRelu, Sigmoid, Tanh and ember's other "
    "activations' operators, GELU (Div, Erf, Add, "
    "Mul), SiLU (Sigmoid, Mul), "
    "MaxPool, AveragePool, GlobalAveragePool, ReduceMean over H and W, Flatten, Reshape to (batch, -1), "
    "Squeeze, "
    "Dropout, Identity, Constant, Pad of zeros, and Add of two branches (residual blocks)";

static ember_status fail_node(struct importer *im, const struct onnx_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ember_status fail_node(struct importer *im, const struct onnx_node *n, const char *fmt, ...)
{
    char why[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!n)
        return ember_set_error(im->ctx, EMBER_ERR_FORMAT, "%s: %s", im->what, why);
    return ember_set_error(im->ctx, EMBER_ERR_UNSUPPORTED, "%s: node \"%.200s\" (%.60s): %s", im->what,
                           n->name[0] ? n->name : "(unnamed)", n->op_type, why);
}

static int by_value_name(const void *a, const void *b)
{
    return strcmp(((const struct value_ref *)a)->name, ((const struct value_ref *)b)->name);
}

static const struct value_ref *value_find(const struct importer *im, const char *name)
{
    struct value_ref key = {.name = name};
    return bsearch(&key, im->values, (size_t)im->value_count, sizeof key, by_value_name);
}

static const struct onnx_node *producer(const struct importer *im, const char *name)
{
    const struct value_ref *v = value_find(im, name);
    return v && v->node >= 0 ? &im->g->nodes[v->node] : NULL;
}

static int node_index(const struct importer *im, const struct onnx_node *n)
{
    return (int)(n - im->g->nodes);
}

static void take(struct importer *im, const struct onnx_node *n)
{
    if (n)
        im->used[node_index(im, n)] = true;
}

#define CONSTANT_HOPS 16 /* Identity nodes followed to a constant: a cycle of them ends too */

/* A constant's tensor: an initializer, a Constant node's value, or either
 * through Identity nodes (PyTorch shares a weight so). NULL otherwise. */
static const struct onnx_tensor *constant(struct importer *im, const char *name)
{
    for (int hops = 0; hops < CONSTANT_HOPS; hops++) {
        const struct value_ref *v = value_find(im, name);
        if (!v)
            return NULL;
        if (v->node == -2)
            return v->tensor;
        if (v->node < 0)
            return NULL;
        const struct onnx_node *n = &im->g->nodes[v->node];
        if (strcmp(n->op_type, "Constant") == 0) {
            const struct onnx_attr *a = onnx_attr_find(n, "value");
            if (!a || !a->t)
                return NULL;
            take(im, n);
            return a->t;
        }
        if (strcmp(n->op_type, "Identity") != 0 || n->input_count != 1)
            return NULL;
        take(im, n);
        name = n->inputs[0];
    }
    return NULL;
}

/* Whether constant() finds a tensor there, or a Constant node without one
 * (whose missing value the layer then names); nothing is taken. As many
 * hops as constant() and no more: `a = Identity(a)` is no constant and no
 * endless loop. */
static bool is_constant(struct importer *im, const char *name)
{
    for (int hops = 0; hops < CONSTANT_HOPS; hops++) {
        const struct value_ref *v = value_find(im, name);
        if (!v || v->node == -1)
            return false;
        if (v->node == -2)
            return true;
        const struct onnx_node *n = &im->g->nodes[v->node];
        if (strcmp(n->op_type, "Constant") == 0)
            return true;
        if (strcmp(n->op_type, "Identity") != 0 || n->input_count != 1)
            return false;
        name = n->inputs[0];
    }
    return false;
}

static int64_t attr_int(const struct onnx_node *n, const char *name, int64_t fallback)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a ? a->i : fallback;
}

static float attr_float(const struct onnx_node *n, const char *name, float fallback)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a ? a->f : fallback;
}

/* an ints attribute whose values are all the same, as that value; `fallback` when absent */
static bool attr_uniform(const struct onnx_node *n, const char *name, int64_t fallback, int64_t *v)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    *v = fallback;
    if (!a)
        return true;
    for (int i = 0; i < a->int_count; i++)
        if (a->ints[i] != a->ints[0])
            return false;
    if (a->int_count)
        *v = a->ints[0];
    return true;
}

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

/* ------------------------------------------------- folding shape arithmetic */

/* Reshape's shape, computed by the little graphs PyTorch writes for
 * x.view(x.size(0), -1): Shape, Gather, Unsqueeze, Concat, Cast, Slice
 * over constants. The batch is a value of its own, BATCH; anything else
 * that depends on the data is UNKNOWN. */
#define BATCH    INT64_MIN
#define UNKNOWN  (INT64_MIN + 1)
#define FOLD_MAX 8

static int fold(struct importer *im, const char *name, int64_t *out, int depth)
{
    /* each call spends from a budget linear in the graph: Concats of
     * Concats of empty constants succeed at every input, so the calls
     * would grow as the inputs' count to the power of the depth */
    if (depth > 16 || im->fold_budget-- <= 0)
        return -1;
    const struct onnx_tensor *t = constant(im, name);
    if (t) {
        if (!t->ints || t->numel > FOLD_MAX)
            return -1;
        memcpy(out, t->ints, (size_t)t->numel * sizeof *out);
        return (int)t->numel;
    }
    const struct onnx_node *n = producer(im, name);
    if (!n || n->input_count < 1)
        return -1;
    take(im, n);
    for (int i = 1; i < n->input_count; i++) /* axes and the like: folded with the node */
        if (is_constant(im, n->inputs[i]))
            constant(im, n->inputs[i]);
    int64_t a[FOLD_MAX], b[FOLD_MAX];
    const char *op = n->op_type;
    if (strcmp(op, "Shape") == 0) { /* only its first element, the batch, is known here */
        out[0] = BATCH;
        for (int i = 1; i < FOLD_MAX; i++)
            out[i] = UNKNOWN;
        return FOLD_MAX;
    }
    int na = fold(im, n->inputs[0], a, depth + 1);
    if (na < 0)
        return -1;
    if (strcmp(op, "Cast") == 0 || strcmp(op, "Identity") == 0 || strcmp(op, "Unsqueeze") == 0 ||
        strcmp(op, "Squeeze") == 0) {
        memcpy(out, a, (size_t)na * sizeof *out);
        return na;
    }
    if (strcmp(op, "Gather") == 0 && n->input_count == 2) {
        int nb = fold(im, n->inputs[1], b, depth + 1);
        if (nb != 1 || b[0] < 0 || b[0] >= na)
            return -1;
        out[0] = a[b[0]];
        return 1;
    }
    if (strcmp(op, "Slice") == 0 && n->input_count >= 3) {
        int64_t s[FOLD_MAX], e[FOLD_MAX];
        if (fold(im, n->inputs[1], s, depth + 1) != 1 || fold(im, n->inputs[2], e, depth + 1) != 1 ||
            s[0] < 0 || e[0] <= s[0] || s[0] >= na)
            return -1;
        int count = (int)((e[0] > na ? na : e[0]) - s[0]);
        memcpy(out, a + s[0], (size_t)count * sizeof *out);
        return count;
    }
    if (strcmp(op, "Concat") == 0) {
        int total = 0;
        for (int i = 0; i < n->input_count; i++) {
            int k = i == 0 ? na : fold(im, n->inputs[i], b, depth + 1);
            if (k < 0 || total + k > FOLD_MAX)
                return -1;
            memcpy(out + total, i == 0 ? a : b, (size_t)k * sizeof *out);
            total += k;
        }
        return total;
    }
    return -1;
}

/* Whether Reshape's shape makes (N, anything...) into (N, features). */
static bool reshape_is_flatten(struct importer *im, const struct onnx_node *n)
{
    int64_t s[FOLD_MAX];
    if (n->input_count != 2 || fold(im, n->inputs[1], s, 0) != 2)
        return false;
    bool first = s[0] == BATCH || s[0] == 0 || s[0] == -1 || (im->batch > 0 && s[0] == im->batch);
    bool second = s[1] == -1 || s[1] > 0;
    return first && second && !(s[0] == -1 && s[1] == -1);
}

/* ------------------------------------------- where branches split */

/* Every value's way back to the input is a tree: a value's parent is the
 * value its node's chain comes from (a residual Add's: where its two
 * branches split, their nearest common ancestor). The tree is built once,
 * each value after its parents, by a walk with its own stack (a chain of
 * 100,000 nodes is no recursion), so a residual Add's split costs the
 * steps up its own two branches, and every value is settled once: a chain
 * of n blocks is linear, where searching each Add's branches back to the
 * input was n^2 and the nested searches n^3. A cycle is cut where the
 * walk meets a value it is still settling. An accepted graph climbs each
 * step of the tree at most twice (each step belongs to the one block it is
 * directly in), so climbing more than that is a tangle no chain of blocks
 * makes, refused rather than followed quadratically. */
enum { WAY_UNSEEN, WAY_OPEN, WAY_SETTLED };

/* The values a node's chain comes from: the residual Add's two computed
 * inputs, else the one data input (the other input of an Add or Mul of a
 * constant; x of GELU's and SiLU's products), else none. */
static int chain_inputs(struct importer *im, const struct onnx_node *n, const char *from[2])
{
    if (!n || n->input_count < 1)
        return 0;
    if (strcmp(n->op_type, "Add") != 0 && strcmp(n->op_type, "Mul") != 0) {
        from[0] = n->inputs[0];
        return 1;
    }
    if (n->input_count != 2)
        return 0;
    bool c0 = is_constant(im, n->inputs[0]), c1 = is_constant(im, n->inputs[1]);
    if (c0 != c1) {
        from[0] = c0 ? n->inputs[1] : n->inputs[0];
        return 1;
    }
    if (c0)
        return 0;
    if (strcmp(n->op_type, "Add") == 0) { /* a residual block: from where it splits */
        from[0] = n->inputs[0];
        from[1] = n->inputs[1];
        return 2;
    }
    /* x * (1 + erf(x / sqrt 2)): GELU's product, from x; x * Sigmoid(x): SiLU's, from x */
    const struct onnx_node *p0 = producer(im, n->inputs[0]);
    from[0] = p0 && (strcmp(p0->op_type, "Add") == 0 || strcmp(p0->op_type, "Sigmoid") == 0) ? n->inputs[1]
                                                                                             : n->inputs[0];
    return 1;
}

/* The nearest value on both a's and b's way back (value indices), or -1. */
static int common_ancestor(struct importer *im, int a, int b)
{
    while (a >= 0 && b >= 0 && a != b) {
        if (im->climb_budget-- <= 0) {
            im->tangled = true;
            return -1;
        }
        if (im->depth_of[a] >= im->depth_of[b])
            a = im->parent[a];
        else
            b = im->parent[b];
    }
    return a == b ? a : -1;
}

/* Settles value v: its parent, its depth, and a residual Add's split. */
static void settle_value(struct importer *im, int v, const int from[2], int count)
{
    const struct value_ref *r = &im->values[v];
    int parent = -1;
    if (count == 1)
        parent = from[0];
    else if (count == 2 && from[0] >= 0 && from[1] >= 0) {
        parent = common_ancestor(im, from[0], from[1]);
        if (parent >= 0)
            im->split[r->node] = im->values[parent].name;
    }
    im->parent[v] = parent;
    im->depth_of[v] = parent >= 0 ? im->depth_of[parent] + 1 : 0;
    im->way_state[v] = WAY_SETTLED;
}

static ember_status trace_ways(struct importer *im)
{
    int n = im->value_count;
    im->parent = malloc(((size_t)n + 1) * sizeof *im->parent);
    im->depth_of = malloc(((size_t)n + 1) * sizeof *im->depth_of);
    im->way_state = calloc((size_t)n + 1, sizeof *im->way_state);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (!im->parent || !im->depth_of || !im->way_state || !stack) {
        free(stack);
        return ember_set_error(im->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", im->what);
    }
    im->climb_budget = 2 * (int64_t)n + 64;
    const struct value_ref *input = value_find(im, im->input);
    for (int root = 0; root < n; root++) {
        if (im->way_state[root] != WAY_UNSEEN)
            continue;
        int top = 0;
        stack[top++] = root;
        im->way_state[root] = WAY_OPEN;
        while (top > 0) {
            int v = stack[top - 1];
            const struct value_ref *r = &im->values[v];
            const char *names[2];
            int count = r == input || r->node < 0 ? 0 : chain_inputs(im, &im->g->nodes[r->node], names);
            int from[2] = {-1, -1};
            bool pushed = false;
            for (int i = 0; i < count && !pushed; i++) {
                const struct value_ref *u = value_find(im, names[i]);
                int at = u ? (int)(u - im->values) : -1;
                if (at >= 0 && im->way_state[at] == WAY_UNSEEN) { /* its parents first */
                    im->way_state[at] = WAY_OPEN;
                    stack[top++] = at;
                    pushed = true;
                }
                /* a value still open is on the stack below: a cycle, cut here */
                from[i] = at >= 0 && im->way_state[at] == WAY_SETTLED ? at : -1;
            }
            if (pushed)
                continue;
            settle_value(im, v, from, count == 1 && from[0] < 0 ? 0 : count);
            top--;
        }
    }
    free(stack);
    return EMBER_OK;
}

/* Where a residual Add's two branches split, or NULL. */
static const char *residual_split(struct importer *im, const struct onnx_node *add)
{
    return im->split[node_index(im, add)];
}

/* ----------------------------------------------------------- the walk */

static ember_status walk(struct importer *im, const char *out, const char *stop, struct imp_block *block);

/* x * 0.5 * (1 + erf(x / sqrt 2)), as PyTorch writes GELU: Mul(Mul(x, Add(Erf(Div(x, c)), 1)), 0.5), either
 * order within each Mul; on success *x is the GELU's input and the nodes are taken */
static bool match_gelu(struct importer *im, const struct onnx_node *outer, const char **x)
{
    if (strcmp(outer->op_type, "Mul") != 0 || outer->input_count != 2)
        return false;
    int half_at = is_constant(im, outer->inputs[1]) ? 1 : is_constant(im, outer->inputs[0]) ? 0 : -1;
    if (half_at < 0)
        return false;
    const struct onnx_tensor *half = constant(im, outer->inputs[half_at]);
    const struct onnx_node *inner = producer(im, outer->inputs[1 - half_at]);
    if (!half || !half->values || half->numel != 1 || fabsf(half->values[0] - 0.5f) > 1e-6f || !inner ||
        strcmp(inner->op_type, "Mul") != 0 || inner->input_count != 2)
        return false;
    for (int side = 0; side < 2; side++) {
        const struct onnx_node *add = producer(im, inner->inputs[side]);
        const char *xx = inner->inputs[1 - side];
        if (!add || strcmp(add->op_type, "Add") != 0 || add->input_count != 2)
            continue;
        int one_at = is_constant(im, add->inputs[1]) ? 1 : 0;
        const struct onnx_tensor *one = constant(im, add->inputs[one_at]);
        const struct onnx_node *erf = producer(im, add->inputs[1 - one_at]);
        if (!one || !one->values || one->numel != 1 || one->values[0] != 1.0f || !erf ||
            strcmp(erf->op_type, "Erf") != 0)
            continue;
        const struct onnx_node *div = producer(im, erf->inputs[0]);
        if (!div || strcmp(div->op_type, "Div") != 0 || div->input_count != 2 ||
            strcmp(div->inputs[0], xx) != 0)
            continue;
        const struct onnx_tensor *root2 = constant(im, div->inputs[1]);
        if (!root2 || !root2->values || root2->numel != 1 || fabsf(root2->values[0] - 1.41421356f) > 1e-5f)
            continue;
        take(im, inner);
        take(im, add);
        take(im, erf);
        take(im, div);
        *x = xx;
        return true;
    }
    return false;
}

/* x * sigmoid(x), as torch.onnx.export writes SiLU: Mul(x, Sigmoid(x)), either order; on success *x is the
 * SiLU's input and the Sigmoid is taken */
static bool match_silu(struct importer *im, const struct onnx_node *mul, const char **x)
{
    if (strcmp(mul->op_type, "Mul") != 0 || mul->input_count != 2)
        return false;
    for (int side = 0; side < 2; side++) {
        const struct onnx_node *sigmoid = producer(im, mul->inputs[side]);
        if (sigmoid && strcmp(sigmoid->op_type, "Sigmoid") == 0 && sigmoid->input_count == 1 &&
            strcmp(sigmoid->inputs[0], mul->inputs[1 - side]) == 0) {
            take(im, sigmoid);
            *x = mul->inputs[1 - side];
            return true;
        }
    }
    return false;
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
    const struct onnx_tensor *w = mm->input_count >= 2 ? constant(im, mm->inputs[1]) : NULL;
    const struct onnx_tensor *b = NULL;
    if (matmul) {
        int bias_at = is_constant(im, n->inputs[1]) ? 1 : 0;
        b = constant(im, n->inputs[bias_at]);
    } else if (gemm && mm->input_count >= 3 && mm->inputs[2][0]) {
        b = constant(im, mm->inputs[2]);
        if (!b)
            return fail_node(im, mm, "its bias C is computed; ember's linear layer takes a constant bias");
    }
    if (!w || !w->values || w->ndim != 2)
        return fail_node(im, mm,
                         "the weight must be a constant float matrix; ember's linear layer learns its own");
    bool trans_b = gemm && attr_int(mm, "transB", 0);
    if (gemm && (attr_int(mm, "transA", 0) || attr_float(mm, "alpha", 1.0f) != 1.0f ||
                 (b && attr_float(mm, "beta", 1.0f) != 1.0f)))
        return fail_node(im, mm,
                         "transA, alpha or beta other than Gemm's defaults; ember's linear layer is "
                         "y = x W^T + b");
    int64_t out = trans_b ? w->dims[0] : w->dims[1];
    if (b && (!b->values || (b->numel != out && b->numel != 1)))
        return fail_node(im, n, "the bias has %lld values for %lld outputs", (long long)(b ? b->numel : 0),
                         (long long)out);
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
    take(im, mm);
    take(im, n);
    *x = mm->inputs[0];
    return EMBER_OK;
}

static ember_status conv_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                               const char **x)
{
    const struct onnx_tensor *w = n->input_count >= 2 ? constant(im, n->inputs[1]) : NULL;
    const struct onnx_tensor *b = n->input_count >= 3 && n->inputs[2][0] ? constant(im, n->inputs[2]) : NULL;
    if (!w || !w->values || w->ndim != 4)
        return fail_node(im, n, "the weight must be a constant (out, in, k, k) tensor");
    if (n->input_count >= 3 && n->inputs[2][0] && (!b || !b->values || b->numel != w->dims[0]))
        return fail_node(im, n, "the bias must be a constant of one value per output channel");
    int64_t stride, pad, dilation, k = w->dims[2];
    const struct onnx_attr *auto_pad = onnx_attr_find(n, "auto_pad");
    bool same = auto_pad && auto_pad->s && strncmp(auto_pad->s, "SAME", 4) == 0;
    if (w->dims[2] != w->dims[3] || attr_int(n, "group", 1) != 1 || !attr_uniform(n, "strides", 1, &stride) ||
        !attr_uniform(n, "pads", 0, &pad) || !attr_uniform(n, "dilations", 1, &dilation) || dilation != 1 ||
        (auto_pad && auto_pad->s && strcmp(auto_pad->s, "NOTSET") != 0 && strcmp(auto_pad->s, "VALID") != 0 &&
         !(same && stride == 1 && k % 2 == 1)))
        return fail_node(im, n,
                         "ember's conv2d has a square kernel, the same stride and padding on every side, "
                         "no dilation and no groups");
    struct imp_layer *l = block_add(im, block, "conv2d", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    int at = snprintf(l->options, sizeof l->options, "%lld kernel=%lld", (long long)w->dims[0], (long long)k);
    if (stride != 1)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " stride=%lld", (long long)stride);
    if (same || pad)
        at += snprintf(l->options + at, sizeof l->options - (size_t)at, " padding=%lld",
                       (long long)(same ? (k - 1) / 2 : pad));
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
        if (n->input_count < 5 || !(p[i] = constant(im, n->inputs[i + 1])) || !p[i]->values ||
            p[i]->numel != p[0]->numel)
            return fail_node(im, n, "scale, B, mean and var must be constants of one value per channel");
    if (attr_int(n, "training_mode", 0) || n->output_count > 1)
        return fail_node(im, n, "in training mode; export the model in evaluation mode (model.eval())");
    for (int64_t c = 0; c < p[3]->numel; c++)
        if (p[3]->values[c] < 0.0f)
            return fail_node(im, n, "channel %lld's variance is negative", (long long)c);
    struct imp_layer *l = block_add(im, block, "batch_norm", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    /* float32 attributes, printed as the decimals they were written as */
    snprintf(l->options, sizeof l->options, "eps=%.7g momentum=%.7g", attr_float(n, "epsilon", 1e-5f),
             1.0f - attr_float(n, "momentum", 0.9f));
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
        !attr_uniform(n, "strides", 1, &stride) || !attr_uniform(n, "pads", 0, &pad) || pad != 0 ||
        !attr_uniform(n, "dilations", 1, &dilation) || dilation != 1 || attr_int(n, "ceil_mode", 0) ||
        (auto_pad && auto_pad->s && strcmp(auto_pad->s, "NOTSET") != 0 &&
         strcmp(auto_pad->s, "VALID") != 0) ||
        n->output_count > 1)
        return fail_node(im, n,
                         "ember's pools take a square window of 2-d images, the same stride both ways, no "
                         "padding, dilation or ceil_mode");
    struct imp_layer *l = block_add(im, block, n->op_type[0] == 'M' ? "max_pool2d" : "avg_pool2d", n);
    if (!l)
        return EMBER_ERR_NOMEM;
    if (stride == kernel->ints[0])
        snprintf(l->options, sizeof l->options, "%lld", (long long)kernel->ints[0]);
    else
        snprintf(l->options, sizeof l->options, "%lld stride=%lld", (long long)kernel->ints[0],
                 (long long)stride);
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
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return fail_node(im, n, "an operator of domain %s; ember supports %s", n->domain, supported);
    if (n->input_count < 1 || !n->inputs[0][0])
        return fail_node(im, n, "it has no input to compute from");
    take(im, n);
    if (strcmp(op, "Identity") == 0 || strcmp(op, "Dropout") == 0) {
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "Pad") == 0) { /* PyTorch writes a Pad of zeros before AveragePool: nothing */
        const struct onnx_attr *attr = onnx_attr_find(n, "pads");
        const struct onnx_tensor *pads = n->input_count > 1 ? constant(im, n->inputs[1]) : NULL;
        const int64_t *p = attr ? attr->ints : pads ? pads->ints : NULL;
        int64_t count = attr ? attr->int_count : pads && pads->ints ? pads->numel : -1;
        for (int64_t i = 0; p && i < count; i++)
            if (p[i] != 0)
                p = NULL;
        if (!p)
            return fail_node(im, n, "padding other than zeros of nothing; ember pads only inside conv2d");
        for (int i = 2; i < n->input_count; i++) /* the constant value */
            if (n->inputs[i][0])
                constant(im, n->inputs[i]);
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
        bool c0 = is_constant(im, n->inputs[0]), c1 = is_constant(im, n->inputs[1]);
        const struct onnx_node *mm = producer(im, n->inputs[c0 ? 1 : 0]);
        if (c0 != c1 && mm && strcmp(mm->op_type, "MatMul") == 0)
            return linear_layer(im, block, n, mm, x);
        if (c0 || c1)
            return fail_node(im, n, "adds a constant other than a MatMul's bias; ember supports %s",
                             supported);
        /* a residual block: body and shortcut from where they split */
        const char *split = residual_split(im, n);
        if (!split && im->tangled)
            return fail_node(im, n,
                             "the graph's branches cross more often than any chain of layers and residual "
                             "blocks can");
        if (!split)
            return fail_node(im, n,
                             "its two inputs do not come from one value; ember's residual blocks add two "
                             "branches of the same input");
        if (++im->depth > MODEL_MAX_DEPTH)
            return fail_node(im, n, "residual blocks nested over %d deep", MODEL_MAX_DEPTH);
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
    if (match_silu(im, n, &act_x)) {
        *x = act_x;
        return block_add(im, block, "silu", n) ? EMBER_OK : EMBER_ERR_NOMEM;
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
        if (strcmp(op, "Flatten") == 0 && attr_int(n, "axis", 1) != 1)
            return fail_node(im, n, "Flatten with axis %lld; ember flattens from axis 1",
                             (long long)attr_int(n, "axis", 1));
        if (!(l = block_add(im, block, simple[i].layer, n)))
            return EMBER_ERR_NOMEM;
        if (strcmp(op, "LeakyRelu") == 0)
            snprintf(l->options, sizeof l->options, "slope=%.7g", attr_float(n, "alpha", 0.01f));
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "Reshape") == 0 || strcmp(op, "Squeeze") == 0) {
        if (strcmp(op, "Reshape") == 0 && !reshape_is_flatten(im, n))
            return fail_node(im, n, "%s",
                             im->fold_budget < 0
                                 ? "its shape is computed by more nodes than ember folds"
                                 : "a Reshape ember cannot tell is (batch, -1); ember's flatten "
                                   "gives (N, C*H*W)");
        if (!block_add(im, block, "flatten", n))
            return EMBER_ERR_NOMEM;
        for (int i = 1; i < n->input_count; i++) /* the shape or axes: folded, taken */
            if (is_constant(im, n->inputs[i]))
                constant(im, n->inputs[i]);
        *x = n->inputs[0];
        return EMBER_OK;
    }
    if (strcmp(op, "ReduceMean") == 0) {
        const struct onnx_attr *axes = onnx_attr_find(n, "axes");
        int64_t folded[FOLD_MAX];
        int count = axes ? axes->int_count : n->input_count > 1 ? fold(im, n->inputs[1], folded, 0) : 0;
        const int64_t *a = axes ? axes->ints : folded;
        bool hw = count == 2 && ((a[0] == 2 && a[1] == 3) || (a[0] == -2 && a[1] == -1));
        if (!hw || attr_int(n, "keepdims", 1))
            return fail_node(im, n, "ReduceMean other than over H and W with keepdims=0 (x.mean((2, 3)))");
        if (!block_add(im, block, "global_avg_pool2d", n))
            return EMBER_ERR_NOMEM;
        *x = n->inputs[0];
        return EMBER_OK;
    }
    return fail_node(im, n, "ember has no such layer; it supports %s", supported);
}

static ember_status walk(struct importer *im, const char *out, const char *stop, struct imp_block *block)
{
    const char *x = out;
    int steps = 0;
    while (strcmp(x, stop) != 0) {
        const struct onnx_node *n = producer(im, x);
        if (!n)
            return fail_node(im, NULL,
                             "value \"%.200s\" comes from no node and is not the input \"%.200s\": the "
                             "graph is not one chain from the input to the output",
                             x, im->input);
        if (im->used[node_index(im, n)] || ++steps > ONNX_MAX_NODES)
            return fail_node(im, n,
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
                return fail_node(im, l->node, "adds an image to a vector");
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
                return fail_node(
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
        const struct value_ref *v = value_find(im, im->g->inputs[i].name);
        if (v && v->node == -2)
            continue; /* an initializer listed as an input, as IR version 3 did */
        if (in)
            return fail_node(im, NULL, "the graph has several inputs (%s, %s); ember's models take one",
                             in->name, im->g->inputs[i].name);
        in = &im->g->inputs[i];
    }
    if (!in)
        return fail_node(im, NULL, "the graph has no input");
    if (in->type != ONNX_FLOAT || (in->ndim != 4 && in->ndim != 2))
        return fail_node(im, NULL, "the input \"%s\" is not float32 (batch, C, H, W) or (batch, features)",
                         in->name);
    *ndim = in->ndim - 1;
    for (int i = 0; i < *ndim; i++) {
        shape[i] = in->dims[i + 1];
        if (shape[i] < 1 || shape[i] > (1 << 20))
            return fail_node(im, NULL,
                             "the input \"%s\" has no fixed size in dimension %d; export it with a fixed "
                             "sample shape (only the batch may vary)",
                             in->name, i + 1);
    }
    im->input = in->name;
    im->batch = in->dims[0] > 0 ? in->dims[0] : -1;
    return EMBER_OK;
}

static ember_status index_values(struct importer *im)
{
    const struct onnx_graph *g = im->g;
    int n = g->initializer_count + g->input_count;
    for (int i = 0; i < g->node_count; i++)
        n += g->nodes[i].output_count;
    im->values = calloc((size_t)n + 1, sizeof *im->values);
    im->used = calloc((size_t)g->node_count + 1, sizeof *im->used);
    im->split = calloc((size_t)g->node_count + 1, sizeof *im->split);
    if (!im->values || !im->used || !im->split)
        return ember_set_error(im->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", im->what);
    /* every operator ember reads computes from an input: the walk may take inputs[0] of any node */
    for (int i = 0; i < g->node_count; i++)
        if (g->nodes[i].input_count < 1 && strcmp(g->nodes[i].op_type, "Constant") != 0)
            return fail_node(im, &g->nodes[i], "it has no input; ember supports %s", supported);
    for (int i = 0; i < g->input_count; i++)
        im->values[im->value_count++] = (struct value_ref){g->inputs[i].name, -1, NULL};
    for (int i = 0; i < g->initializer_count; i++)
        im->values[im->value_count++] = (struct value_ref){g->initializers[i].name, -2, &g->initializers[i]};
    for (int i = 0; i < g->node_count; i++)
        for (int k = 0; k < g->nodes[i].output_count; k++)
            if (g->nodes[i].outputs[k][0])
                im->values[im->value_count++] = (struct value_ref){g->nodes[i].outputs[k], i, NULL};
    qsort(im->values, (size_t)im->value_count, sizeof *im->values, by_value_name);
    /* a name given twice: an initializer that is also listed as an input
     * keeps the initializer; anything else is a malformed graph */
    int kept = 0;
    for (int i = 0; i < im->value_count; i++) {
        if (kept && strcmp(im->values[kept - 1].name, im->values[i].name) == 0) {
            struct value_ref *a = &im->values[kept - 1], *b = &im->values[i];
            if ((a->node == -1 && b->node == -2) || (a->node == -2 && b->node == -1)) {
                *a = a->node == -2 ? *a : *b;
                continue;
            }
            return fail_node(im, NULL, "the value \"%.200s\" is defined twice", b->name);
        }
        im->values[kept++] = im->values[i];
    }
    im->value_count = kept;
    return EMBER_OK;
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
    ember_status st = index_values(&im);
    if (st == EMBER_OK)
        st = find_input(&im, &ndim, shape);
    if (st == EMBER_OK)
        st = trace_ways(&im);
    if (st == EMBER_OK && om->graph.output_count != 1)
        st = fail_node(&im, NULL, "the graph has %d outputs; ember's models give one, the logits",
                       om->graph.output_count);
    if (st == EMBER_OK)
        st = walk(&im, om->graph.outputs[0].name, im.input, &root);
    for (int i = 0; st == EMBER_OK && i < om->graph.node_count; i++)
        if (!im.used[i] &&
            strcmp(om->graph.nodes[i].op_type, "Constant") != 0) /* an unused constant does nothing */
            st = fail_node(&im, &om->graph.nodes[i],
                           "it is not on the way from the input to the output (ember's "
                           "networks are chains of layers and residual blocks)");
    int rank = ndim;
    if (st == EMBER_OK)
        st = settle(&im, &root, &rank);
    const struct imp_layer *last = root.count ? &root.items[root.count - 1] : NULL;
    if (st == EMBER_OK && (!last || strcmp(last->type, "linear") != 0))
        st = fail_node(&im, last ? last->node : NULL,
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
            st = fail_node(&im, head->node, "options too long");
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
            if (!own)
                meta[k++] = om->meta_keys[i], meta[k++] = om->meta_values[i];
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
