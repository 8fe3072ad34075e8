/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-graph.c — what the ONNX import asks of the graph
 * (models/model-onnx-import-impl.h): a value's producer and its constant,
 * node attributes, the shape arithmetic PyTorch writes for a Reshape
 * folded to numbers, and, for every value, its way back to the input, from
 * which a residual Add's two branches are known to split.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-onnx-import-impl.h"
#include "text-impl.h"

ember_status imp_fail_node(struct importer *im, const struct onnx_node *n, const char *fmt, ...)
{
    char why[768];
    EMBER_FORMAT_ARGS(why, fmt);
    if (!n)
        return ember_set_error(im->ctx, EMBER_ERR_FORMAT, "%s: %s", im->what, why);
    return ember_set_error(im->ctx, EMBER_ERR_UNSUPPORTED, "%s: node \"%.200s\" (%.60s): %s", im->what,
                           n->name[0] ? n->name : "(unnamed)", n->op_type, why);
}

static int by_value_name(const void *a, const void *b)
{
    return strcmp(((const struct value_ref *)a)->name, ((const struct value_ref *)b)->name);
}

const struct value_ref *imp_value_find(const struct importer *im, const char *name)
{
    struct value_ref key = {.name = name};
    return bsearch(&key, im->values, (size_t)im->value_count, sizeof key, by_value_name);
}

const struct onnx_node *imp_producer(const struct importer *im, const char *name)
{
    const struct value_ref *v = imp_value_find(im, name);
    return v && v->node >= 0 ? &im->g->nodes[v->node] : NULL;
}

int imp_node_index(const struct importer *im, const struct onnx_node *n) { return (int)(n - im->g->nodes); }

void imp_take(struct importer *im, const struct onnx_node *n)
{
    if (n)
        im->used[imp_node_index(im, n)] = true;
}

#define CONSTANT_HOPS 16 /* Identity nodes followed to a constant: a cycle of them ends too */

/* A constant's tensor: an initializer, a Constant node's value, or either
 * through Identity nodes (PyTorch shares a weight so). NULL otherwise. */
const struct onnx_tensor *imp_constant(struct importer *im, const char *name)
{
    for (int hops = 0; hops < CONSTANT_HOPS; hops++) {
        const struct value_ref *v = imp_value_find(im, name);
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
            imp_take(im, n);
            return a->t;
        }
        if (strcmp(n->op_type, "Identity") != 0 || n->input_count != 1)
            return NULL;
        imp_take(im, n);
        name = n->inputs[0];
    }
    return NULL;
}

/* Whether imp_constant() finds a tensor there, or a Constant node without one
 * (whose missing value the layer then names); nothing is taken. As many
 * hops as imp_constant() and no more: `a = Identity(a)` is no constant and no
 * endless loop. */
bool imp_is_constant(struct importer *im, const char *name)
{
    for (int hops = 0; hops < CONSTANT_HOPS; hops++) {
        const struct value_ref *v = imp_value_find(im, name);
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

int64_t imp_attr_int(const struct onnx_node *n, const char *name, int64_t fallback)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a ? a->i : fallback;
}

float imp_attr_float(const struct onnx_node *n, const char *name, float fallback)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a ? a->f : fallback;
}

/* an ints attribute whose values are all the same, as that value; `fallback` when absent */
bool imp_attr_uniform(const struct onnx_node *n, const char *name, int64_t fallback, int64_t *v)
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

/* ------------------------------------------------- folding shape arithmetic */

/* Reshape's shape, computed by the little graphs PyTorch writes for
 * x.view(x.size(0), -1): Shape, Gather, Unsqueeze, Concat, Cast, Slice,
 * and Add, Sub, Mul and Div of one value, over constants. The batch is a value of its own, BATCH; anything
 * else that depends on the data is UNKNOWN. */
#define BATCH   IMP_BATCH
#define UNKNOWN IMP_UNKNOWN

/* F.pad's pads as torch.onnx.export turns them into ONNX's: PyTorch's list
 * (the last dimension's begin and end first), zeros for the other
 * dimensions, made pairs (Reshape to -1 x 2), the pairs reversed (Slice,
 * step -1) and transposed: every begin, first dimension first, then every
 * end. Folded at the Transpose, the one place the pairs are seen whole. */
static int fold_pytorch_pads(struct importer *im, const struct onnx_node *t, int64_t *out, int depth)
{
    const struct onnx_attr *perm = onnx_attr_find(t, "perm");
    const struct onnx_node *slice = imp_producer(im, t->inputs[0]);
    if (!perm || perm->int_count != 2 || perm->ints[0] != 1 || perm->ints[1] != 0 || !slice ||
        strcmp(slice->op_type, "Slice") != 0 || slice->input_count != 5)
        return -1;
    int64_t starts[IMP_FOLD_MAX], axes[IMP_FOLD_MAX], steps[IMP_FOLD_MAX];
    if (imp_fold(im, slice->inputs[1], starts, depth + 1) != 1 || starts[0] != -1 ||
        imp_fold(im, slice->inputs[3], axes, depth + 1) != 1 || axes[0] != 0 ||
        imp_fold(im, slice->inputs[4], steps, depth + 1) != 1 || steps[0] != -1)
        return -1;
    if (!imp_constant(im, slice->inputs[2])) /* its end: past the first row, any number far below -rows */
        return -1;
    const struct onnx_node *pairs = imp_producer(im, slice->inputs[0]);
    int64_t shape[IMP_FOLD_MAX], flat[IMP_FOLD_MAX];
    if (!pairs || strcmp(pairs->op_type, "Reshape") != 0 || pairs->input_count != 2 ||
        imp_fold(im, pairs->inputs[1], shape, depth + 1) != 2 || shape[0] != -1 || shape[1] != 2)
        return -1;
    int count = imp_fold(im, pairs->inputs[0], flat, depth + 1);
    if (count <= 0 || count % 2 != 0)
        return -1;
    imp_take(im, slice);
    imp_take(im, pairs);
    int rows = count / 2;
    for (int j = 0; j < rows; j++) {
        out[j] = flat[2 * (rows - 1 - j)];
        out[rows + j] = flat[2 * (rows - 1 - j) + 1];
    }
    return count;
}

int imp_fold(struct importer *im, const char *name, int64_t *out, int depth)
{
    /* each call spends from a budget linear in the graph: Concats of
     * Concats of empty constants succeed at every input, so the calls
     * would grow as the inputs' count to the power of the depth */
    if (depth > 16 || im->fold_budget-- <= 0)
        return -1;
    const struct onnx_tensor *t = imp_constant(im, name);
    if (t) {
        if (!t->ints || t->numel > IMP_FOLD_MAX)
            return -1;
        memcpy(out, t->ints, (size_t)t->numel * sizeof *out);
        return (int)t->numel;
    }
    const struct onnx_node *n = imp_producer(im, name);
    if (!n || n->input_count < 1)
        return -1;
    imp_take(im, n);
    for (int i = 1; i < n->input_count; i++) /* axes and the like: folded with the node */
        if (imp_is_constant(im, n->inputs[i]))
            imp_constant(im, n->inputs[i]);
    int64_t a[IMP_FOLD_MAX], b[IMP_FOLD_MAX];
    const char *op = n->op_type;
    if (strcmp(op, "Transpose") == 0)
        return fold_pytorch_pads(im, n, out, depth);
    if (strcmp(op, "Shape") ==
        0) { /* only its first element, the batch, is known here, or a probe's channels */
        out[0] = BATCH;
        for (int i = 1; i < IMP_FOLD_MAX; i++)
            out[i] = UNKNOWN;
        if (im->probe && strcmp(n->inputs[0], im->probe) == 0)
            out[1] = im->probe_channels;
        return IMP_FOLD_MAX;
    }
    int na = imp_fold(im, n->inputs[0], a, depth + 1);
    if (na < 0)
        return -1;
    /* a Reshape of folded values keeps them in order: only F.pad's pads
     * are folded through one (fold_pytorch_pads reads their pairs) */
    if (strcmp(op, "Cast") == 0 || strcmp(op, "Identity") == 0 || strcmp(op, "Unsqueeze") == 0 ||
        strcmp(op, "Squeeze") == 0 || strcmp(op, "Reshape") == 0) {
        memcpy(out, a, (size_t)na * sizeof *out);
        return na;
    }
    if (strcmp(op, "ConstantOfShape") == 0) { /* zeros, or the one integer of its value */
        const struct onnx_attr *v = onnx_attr_find(n, "value");
        int64_t fill = v && v->t && v->t->ints && v->t->numel == 1 ? v->t->ints[0] : 0;
        if ((v && !(v->t && v->t->ints && v->t->numel == 1)) || na != 1 || a[0] < 0 || a[0] > IMP_FOLD_MAX)
            return -1;
        for (int64_t i = 0; i < a[0]; i++)
            out[i] = fill;
        return (int)a[0];
    }
    if (strcmp(op, "Gather") == 0 && n->input_count == 2) {
        int nb = imp_fold(im, n->inputs[1], b, depth + 1);
        if (nb != 1 || b[0] < 0 || b[0] >= na)
            return -1;
        out[0] = a[b[0]];
        return 1;
    }
    if (strcmp(op, "Slice") == 0 && n->input_count >= 3) {
        int64_t s[IMP_FOLD_MAX], e[IMP_FOLD_MAX];
        if (imp_fold(im, n->inputs[1], s, depth + 1) != 1 || imp_fold(im, n->inputs[2], e, depth + 1) != 1 ||
            s[0] < 0 || e[0] <= s[0] || s[0] >= na)
            return -1;
        int count = (int)((e[0] > na ? na : e[0]) - s[0]);
        memcpy(out, a + s[0], (size_t)count * sizeof *out);
        return count;
    }
    /* the arithmetic of x.chunk's bounds and a shuffle's groups: one value each side */
    if ((strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 ||
         strcmp(op, "Div") == 0) &&
        n->input_count == 2) {
        if (na != 1 || imp_fold(im, n->inputs[1], b, depth + 1) != 1)
            return -1;
        bool known = a[0] > UNKNOWN && b[0] > UNKNOWN && (op[0] != 'D' || b[0] != 0);
        if (known && (a[0] > (INT64_C(1) << 40) || a[0] < -(INT64_C(1) << 40) || b[0] > (INT64_C(1) << 20) ||
                      b[0] < -(INT64_C(1) << 20)))
            known = false; /* far beyond any shape: not folded, never overflowed */
        out[0] = !known         ? UNKNOWN
                 : op[0] == 'A' ? a[0] + b[0]
                 : op[0] == 'S' ? a[0] - b[0]
                 : op[0] == 'M' ? a[0] * b[0]
                                : a[0] / b[0];
        return 1;
    }
    if (strcmp(op, "Concat") == 0) {
        int total = 0;
        for (int i = 0; i < n->input_count; i++) {
            int k = i == 0 ? na : imp_fold(im, n->inputs[i], b, depth + 1);
            if (k < 0 || total + k > IMP_FOLD_MAX)
                return -1;
            memcpy(out + total, i == 0 ? a : b, (size_t)k * sizeof *out);
            total += k;
        }
        return total;
    }
    return -1;
}

/* Whether Reshape's shape makes (N, anything...) into (N, features). */
bool imp_reshape_is_flatten(struct importer *im, const struct onnx_node *n)
{
    int64_t s[IMP_FOLD_MAX];
    if (n->input_count != 2 || imp_fold(im, n->inputs[1], s, 0) != 2)
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

static bool is_op(const struct onnx_node *n, const char *op, int inputs)
{
    return n && strcmp(n->op_type, op) == 0 && n->input_count == inputs;
}

bool imp_is_pytorch_hardsigmoid(const struct onnx_node *n)
{
    return fabsf(imp_attr_float(n, "alpha", 0.2f) - 1.0f / 6.0f) < 1e-6f &&
           fabsf(imp_attr_float(n, "beta", 0.5f) - 0.5f) < 1e-6f;
}

const char *imp_gate(struct importer *im, const char *value, const char **x, const struct onnx_node *nodes[2])
{
    const struct onnx_node *g = imp_producer(im, value);
    nodes[0] = g;
    nodes[1] = NULL;
    if (is_op(g, "Sigmoid", 1)) {
        *x = g->inputs[0];
        return "silu";
    }
    if (is_op(g, "HardSigmoid", 1) && imp_is_pytorch_hardsigmoid(g)) {
        *x = g->inputs[0];
        return "hardswish";
    }
    const struct onnx_node *inner = is_op(g, "Tanh", 1) ? imp_producer(im, g->inputs[0]) : NULL;
    if (is_op(inner, "Softplus", 1)) {
        nodes[1] = inner;
        *x = inner->inputs[0];
        return "mish";
    }
    for (int side = 0; is_op(g, "Add", 2) && side < 2; side++) { /* GELU's 1 + erf(x / sqrt 2) */
        const struct onnx_node *erf = imp_producer(im, g->inputs[side]);
        const struct onnx_node *div = is_op(erf, "Erf", 1) ? imp_producer(im, erf->inputs[0]) : NULL;
        if (is_op(div, "Div", 2) && imp_is_constant(im, g->inputs[1 - side])) {
            *x = div->inputs[0];
            return "gelu";
        }
    }
    return NULL;
}

/* The values a node's chain comes from: the two computed inputs of a
 * residual Add or of a gate's Mul, x * gate(y), or the computed inputs of
 * a Concat of channels; else the one data input (the other input of an
 * Add or Mul of a constant; x of a gated product, x * gate(x): GELU's,
 * SiLU's, ...); else none. */
static int chain_inputs(struct importer *im, const struct onnx_node *n, const char *from[IMP_MAX_JOIN])
{
    if (!n || n->input_count < 1)
        return 0;
    if (strcmp(n->op_type, "Concat") == 0 && imp_attr_int(n, "axis", 0) == 1) {
        int count = 0;
        for (int i = 0; i < n->input_count && count < IMP_MAX_JOIN; i++)
            if (!imp_is_constant(im, n->inputs[i]))
                from[count++] = n->inputs[i];
        return count;
    }
    if (strcmp(n->op_type, "Add") != 0 && strcmp(n->op_type, "Mul") != 0) {
        from[0] = n->inputs[0];
        return 1;
    }
    if (n->input_count != 2)
        return 0;
    bool c0 = imp_is_constant(im, n->inputs[0]), c1 = imp_is_constant(im, n->inputs[1]);
    if (c0 != c1) {
        from[0] = c0 ? n->inputs[1] : n->inputs[0];
        return 1;
    }
    if (c0)
        return 0;
    /* x * gate(x): GELU's, SiLU's, HardSwish's, Mish's product, from x */
    for (int side = 0; strcmp(n->op_type, "Mul") == 0 && side < 2; side++) {
        const char *x;
        const struct onnx_node *gate[2];
        if (imp_gate(im, n->inputs[side], &x, gate) && strcmp(x, n->inputs[1 - side]) == 0) {
            from[0] = x;
            return 1;
        }
    }
    /* a residual block, or a gate block (squeeze-and-excitation): from where they split */
    from[0] = n->inputs[0];
    from[1] = n->inputs[1];
    return 2;
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

/* Settles value v: its parent, its depth, and a join's split (a residual
 * Add's, a gate's Mul's, a Concat's). */
static void settle_value(struct importer *im, int v, const int *from, int count)
{
    const struct value_ref *r = &im->values[v];
    int parent = -1;
    if (count == 1) {
        parent = from[0];
    } else if (count >= 2) {
        parent = from[0];
        for (int i = 1; i < count && parent >= 0; i++)
            parent = from[i] >= 0 ? common_ancestor(im, parent, from[i]) : -1;
        if (parent >= 0)
            im->split[r->node] = im->values[parent].name;
    }
    im->parent[v] = parent;
    im->depth_of[v] = parent >= 0 ? im->depth_of[parent] + 1 : 0;
    im->way_state[v] = WAY_SETTLED;
}

ember_status imp_trace_ways(struct importer *im)
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
    const struct value_ref *input = imp_value_find(im, im->input);
    for (int root = 0; root < n; root++) {
        if (im->way_state[root] != WAY_UNSEEN)
            continue;
        int top = 0;
        stack[top++] = root;
        im->way_state[root] = WAY_OPEN;
        while (top > 0) {
            int v = stack[top - 1];
            const struct value_ref *r = &im->values[v];
            const char *names[IMP_MAX_JOIN];
            int count = r == input || r->node < 0 ? 0 : chain_inputs(im, &im->g->nodes[r->node], names);
            int from[IMP_MAX_JOIN];
            bool pushed = false;
            for (int i = 0; i < count && !pushed; i++) {
                const struct value_ref *u = imp_value_find(im, names[i]);
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

/* Where a join's branches split, or NULL. */
const char *imp_join_split(struct importer *im, const struct onnx_node *join)
{
    return im->split[imp_node_index(im, join)];
}

ember_status imp_index_values(struct importer *im)
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
            return imp_fail_node(im, NULL, "the value \"%.200s\" is defined twice", b->name);
        }
        im->values[kept++] = im->values[i];
    }
    im->value_count = kept;
    return EMBER_OK;
}
