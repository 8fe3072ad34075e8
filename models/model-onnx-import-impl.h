/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-import-impl.h — what the ONNX import's files share:
 * the blocks the walk of the graph gathers (model-onnx-import.c) and its
 * layers (model-onnx-layers.c), their
 * naming and writing out as a model file's text (model-onnx-names.c), and
 * the graph as the walk reads it (model-onnx-graph.c).
 */
#ifndef EMBER_MODEL_ONNX_IMPORT_IMPL_H
#define EMBER_MODEL_ONNX_IMPORT_IMPL_H

#include <string.h>

#include "models-impl.h"
#include "onnx-impl.h"

/* the most text a generated model file may have */
#define IMPORT_MAX_TEXT (1 << 20)
/* the most branches a Concat joins (nested two by two in the model file) */
#define IMP_MAX_JOIN 16

struct imp_layer;
struct imp_block {
    struct imp_layer *items;
    int count, cap;
};

struct imp_layer {
    char type[24];             /* a model file's layer type, or a block's: "residual", "concat", "gate" */
    char options[160];         /* "16 kernel=3 stride=2 padding=1 bias=false" */
    char name[MODEL_NAME_MAX]; /* its full name ("layer1.0.conv1"), or "" */
    const struct onnx_node *node;
    /* its parameters and buffers in the order the layer type adds them */
    const float *values[4];
    int64_t counts[4];
    float *owned[4];
    int value_count;
    struct imp_block body, second; /* a block's (models-impl.h: the shortcut or the other branch) */
};

/* every name given to a layer, for uniqueness: a hash set, so that a
 * graph of 100,000 layers is not 10^10 comparisons; per name, the next
 * suffix to try when it is taken again (so n layers of one name cost n
 * tries, not n^2) */
struct onnx_names {
    char (*items)[2 * MODEL_NAME_MAX];
    int *next_suffix;
    int count, cap;
    int *slots; /* item index + 1, or 0: empty; a power of two of them, at most half full */
    int slot_count;
    int next_index_name; /* onnx_emit's next "type_k" to try for an unnamed layer */
};
void onnx_names_free(struct onnx_names *ns);

/* Names a layer after its weight ("fc.weight" gives "fc") or else its
 * node's scope ("/layer2/layer2.0/downsample/downsample.0/Conv" gives
 * "layer2.0.downsample.0"); leaves it unnamed when neither gives a valid
 * model-file name. */
void onnx_name_layer(struct imp_layer *l, const char *weight);
/* Names taken twice get "_2", "_3"...; every name is then recorded in ns.
 * False when out of memory. */
bool onnx_unique_names(struct imp_block *b, struct onnx_names *ns);
/* A growing text; a failed append (out of memory, or past
 * IMPORT_MAX_TEXT) sets `failed` and the rest do nothing. */
struct onnx_text {
    char *s;
    size_t len, cap;
    bool failed;
};
void onnx_text_add(struct onnx_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The block's layers as model-file lines, appended to t (see
 * model-onnx-names.c). */
void onnx_emit(struct onnx_text *t, struct imp_block *b, const char *prefix, const char *second, int indent,
               struct onnx_names *ns);
/* whether l is a block of layers (residual, concat, gate), not a layer */
static inline bool imp_is_block(const struct imp_layer *l)
{
    return strcmp(l->type, "residual") == 0 || strcmp(l->type, "concat") == 0 || strcmp(l->type, "gate") == 0;
}

/* ------------------------------------------------ the graph, as the walk reads it */

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
    /* every value's way back to the input, as a tree (imp_trace_ways): its
     * parent value and depth, or -1 and 0 where the way ends; and per
     * residual Add node, where its two branches split (NULL: nowhere) */
    int *parent, *depth_of;
    unsigned char *way_state;
    const char **split;
    int64_t climb_budget; /* steps up the tree left to find splits */
    bool tangled;         /* the budget ran out */
    int64_t fold_budget;  /* calls of imp_fold() left */
    /* while a channel pattern is read: the value whose Shape imp_fold
     * takes to have `probe_channels` channels (NULL: none known) */
    const char *probe;
    int64_t probe_channels;
    int64_t opset;     /* the default domain's, which some operators' defaults follow */
    const char *input; /* the graph's one data input */
    int64_t batch;     /* its first dimension when fixed, else -1 */
    int depth;
};

/* model-onnx-graph.c: */
/* im->values from the graph's inputs, initializers and nodes' outputs,
 * sorted by name; a graph whose names clash is refused */
ember_status imp_index_values(struct importer *im);
/* the import's error for node n (NULL: the graph's), EMBER_ERR_UNSUPPORTED
 * naming it and its operator */
ember_status imp_fail_node(struct importer *im, const struct onnx_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* a value by name (im->values is sorted), and the node that computes it (NULL: none) */
const struct value_ref *imp_value_find(const struct importer *im, const char *name);
const struct onnx_node *imp_producer(const struct importer *im, const char *name);
int imp_node_index(const struct importer *im, const struct onnx_node *n);
/* marks a node as taken by the walk (n may be NULL) */
void imp_take(struct importer *im, const struct onnx_node *n);
/* A constant's tensor (an initializer, a Constant node's value, either
 * through Identity nodes), its nodes taken; NULL otherwise. imp_is_constant
 * asks the same and takes nothing. */
const struct onnx_tensor *imp_constant(struct importer *im, const char *name);
bool imp_is_constant(struct importer *im, const char *name);
/* an attribute, or `fallback` when absent; an ints attribute whose values
 * are all one value, as that value (false when they differ) */
int64_t imp_attr_int(const struct onnx_node *n, const char *name, int64_t fallback);
float imp_attr_float(const struct onnx_node *n, const char *name, float fallback);
bool imp_attr_uniform(const struct onnx_node *n, const char *name, int64_t fallback, int64_t *v);
/* A shape computed over constants, folded into out (at most IMP_FOLD_MAX
 * values): its length, or -1 when it cannot be folded. */
#define IMP_FOLD_MAX 8
int imp_fold(struct importer *im, const char *name, int64_t *out, int depth);
/* whether a Reshape makes (N, anything...) into (N, features) */
bool imp_reshape_is_flatten(struct importer *im, const struct onnx_node *n);
/* A gate of a gated product x * gate(x), its layer named: Sigmoid(x)
 * (silu), HardSigmoid(x) as PyTorch's (hardswish), Tanh(Softplus(x))
 * (mish), or 1 + Erf(x / c) (gelu); *x its input and nodes[] its nodes
 * (the second NULL when one), nothing taken. NULL when `value` is no gate. */
const char *imp_gate(struct importer *im, const char *value, const char **x,
                     const struct onnx_node *nodes[2]);
/* whether a HardSigmoid is PyTorch's, relu6(x + 3) / 6: alpha 1/6, beta 0.5 */
bool imp_is_pytorch_hardsigmoid(const struct onnx_node *n);
/* every value's way back to the input, once (after im->values is indexed);
 * then where a join's branches split (a residual Add's, a gate's Mul's, a
 * Concat's), or NULL */
ember_status imp_trace_ways(struct importer *im);
const char *imp_join_split(struct importer *im, const struct onnx_node *join);
/* A shape's values as imp_fold gives them: the batch and values that
 * depend on the data are these, not numbers. */
#define IMP_BATCH   INT64_MIN
#define IMP_UNKNOWN (INT64_MIN + 1)

/* model-onnx-import.c: the layers from value `out` back to `stop` into b,
 * in order (the joins it meets made blocks) */
ember_status imp_walk(struct importer *im, const char *out, const char *stop, struct imp_block *b);

/* model-onnx-layers.c: what the import reads, for messages; a layer
 * appended to b (NULL: out of memory, reported); and node n (or the
 * pattern it ends) as layers of `block`, in reverse, *x then the value it
 * was computed from (on entry: the output of n being followed, which a
 * Split's part needs) */
extern const char imp_supported[];
struct imp_layer *imp_block_add(struct importer *im, struct imp_block *b, const char *type,
                                const struct onnx_node *n);
ember_status imp_convert_layer(struct importer *im, struct imp_block *block, const struct onnx_node *n,
                               const char **x);

#endif /* EMBER_MODEL_ONNX_IMPORT_IMPL_H */
