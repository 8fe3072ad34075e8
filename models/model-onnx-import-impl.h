/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-import-impl.h — what the ONNX import's two files share:
 * the layers the walk of the graph gathers (model-onnx-import.c), and
 * their naming and writing out as a model file's text
 * (model-onnx-names.c).
 */
#ifndef EMBER_MODEL_ONNX_IMPORT_IMPL_H
#define EMBER_MODEL_ONNX_IMPORT_IMPL_H

#include "models-impl.h"
#include "onnx-impl.h"

/* the most text a generated model file may have */
#define IMPORT_MAX_TEXT (1 << 20)

struct imp_layer;
struct imp_block {
    struct imp_layer *items;
    int count, cap;
};

struct imp_layer {
    char type[24];             /* a model file's layer type, or "residual" */
    char options[160];         /* "16 kernel=3 stride=2 padding=1 bias=false" */
    char name[MODEL_NAME_MAX]; /* its full name ("layer1.0.conv1"), or "" */
    const struct onnx_node *node;
    /* its parameters and buffers in the order the layer type adds them */
    const float *values[4];
    int64_t counts[4];
    float *owned[4];
    int value_count;
    struct imp_block body, shortcut; /* a residual block's */
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
void onnx_emit(struct onnx_text *t, struct imp_block *b, const char *prefix, bool shortcut, int indent,
               struct onnx_names *ns);

#endif /* EMBER_MODEL_ONNX_IMPORT_IMPL_H */
