/* SPDX-License-Identifier: MIT */
/*
 * models/models-impl.h — networks as data: a model file parsed into layers,
 * the layers' table, and the model that runs them.
 *
 * A model file (docs/models.md) lists layers, one per line:
 *
 *     input 1x28x28                       # optional: the sample shape it is for
 *     conv1: conv2d 16 kernel=3 padding=1 # name: type positional key=value...
 *     relu
 *     max_pool2d 2
 *     flatten
 *     fc: linear classes
 *
 * model-parse.c turns the text into a tree of `struct model_layer` (a
 * block, residual, concat or gate, holds two lists: its body and a second
 * one, the shortcut or the other branch), knowing every
 * layer type and option from the table in model-layers.c, and reports each
 * mistake at its line and column. model-build.c walks the tree for one input
 * shape: it works out every layer's output shape (a layer that does not fit
 * the shape before it is an error at its line), names and adds the
 * parameters as PyTorch would name them, and initialises them as PyTorch
 * does. model.c runs the tree forward with the public ops;
 * model-checkpoint.c saves and loads models, model-predict.c runs them on
 * the caller's buffers.
 *
 * Everything here uses nothing but include/ember.h: a program embedding
 * ember could build the same thing.
 */
#ifndef EMBER_MODELS_IMPL_H
#define EMBER_MODELS_IMPL_H

#include <stdio.h>

#include "ember.h"

#define MODEL_MAX_OPTIONS 6
#define MODEL_NAME_MAX    128
#define MODEL_MAX_DEPTH   8 /* blocks inside blocks */

enum model_value_kind { VALUE_INT, VALUE_FLOAT, VALUE_BOOL };

/* One option a layer type takes ("kernel=3"). A word (such as "classes" or
 * "same") may stand for a value that only the input shape decides; it is
 * stored as `word_value`, outside the option's range. */
struct model_option_spec {
    const char *name;
    enum model_value_kind kind;
    bool required;
    double fallback;  /* when not given */
    double min, max;  /* the range a given value must be in */
    const char *word; /* or NULL */
    double word_value;
    const char *about; /* for messages: "the output channels" */
};

struct model_layer;
struct model_build;

/* A layer type: its name in files, its options (`positional` names the one
 * an unnamed value sets, as in "conv2d 16"), and what it does. */
struct model_layer_type {
    const char *name;
    const char *about; /* one line, for docs and `ember summary --layers` */
    const char *positional;
    struct model_option_spec options[MODEL_MAX_OPTIONS];
    /* the output shape for input `in` (one sample, no batch axis), or false
     * with the reason in `why` ("takes images (C, H, W)") */
    bool (*infer)(const struct model_layer *layer, int ndim, const int64_t *in, int *out_ndim, int64_t *out,
                  char *why, size_t why_len);
    /* adds the parameters and buffers under `prefix` and initialises them;
     * NULL for layers without any */
    ember_status (*add_params)(struct model_layer *layer, struct model_build *b, const char *prefix);
    /* y = layer(x), x (N, in shape...) */
    ember_tensor *(*forward)(struct model_layer *layer, ember_tensor *x, bool training, uint64_t seed);
    /* floating-point operations of the forward pass for one sample */
    double (*flops)(const struct model_layer *layer);
    /* a short description of the configured layer: "conv2d 1->16 3x3 pad 1" */
    void (*describe)(const struct model_layer *layer, char *out, size_t len);
};

/* the layers of a GPT (model-layers-text.c), for the table */
bool model_embedding_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                           int64_t *out, char *why, size_t why_len);
ember_status model_embedding_add_params(struct model_layer *l, struct model_build *b, const char *prefix);
ember_tensor *model_embedding_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed);
void model_embedding_describe(const struct model_layer *l, char *out, size_t len);
bool model_position_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                          int64_t *out, char *why, size_t why_len);
ember_status model_position_add_params(struct model_layer *l, struct model_build *b, const char *prefix);
ember_tensor *model_position_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed);
void model_position_describe(const struct model_layer *l, char *out, size_t len);
bool model_layer_norm_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                            int64_t *out, char *why, size_t why_len);
ember_status model_layer_norm_add_params(struct model_layer *l, struct model_build *b, const char *prefix);
ember_tensor *model_layer_norm_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed);
/* a batch_norm1d or batch_norm2d layer and the relu layer after it, in one op (model.c's run_block) */
ember_tensor *model_batch_norm_relu_forward(struct model_layer *l, ember_tensor *x, bool training);
/* a conv2d or linear layer and the batch norm after it (and with `relu` the
 * relu layer after that) in evaluation, as one layer with the batch norm
 * folded into its weights (model.c's run_block) */
ember_tensor *model_folded_batch_norm_forward(struct model_layer *layer, struct model_layer *bn,
                                              ember_tensor *x, bool relu);
double model_layer_norm_flops(const struct model_layer *l);
void model_layer_norm_describe(const struct model_layer *l, char *out, size_t len);
ember_status model_rms_norm_add_params(struct model_layer *l, struct model_build *b, const char *prefix);
ember_tensor *model_rms_norm_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed);
double model_rms_norm_flops(const struct model_layer *l);
void model_rms_norm_describe(const struct model_layer *l, char *out, size_t len);
bool model_attention_infer(const struct model_layer *l, int ndim, const int64_t *in, int *out_ndim,
                           int64_t *out, char *why, size_t why_len);
ember_status model_attention_add_params(struct model_layer *l, struct model_build *b, const char *prefix);
ember_tensor *model_attention_forward(struct model_layer *l, ember_tensor *x, bool training, uint64_t seed);
double model_attention_flops(const struct model_layer *l);
void model_attention_describe(const struct model_layer *l, char *out, size_t len);

extern const struct model_layer_type model_layer_types[];
extern const int model_layer_type_count;
const struct model_layer_type *model_layer_type_find(const char *name);

/* A list of layers: a model's, or a block's body or second list. */
struct model_block {
    struct model_layer *layers;
    int count, cap;
};

#define MODEL_MAX_TENSORS 5

/* How a block joins what its lists give (type NULL: a block):
 *   residual  body(x) + second(x), second its shortcut (empty: x itself)
 *   concat    cat(body(x), second(x)) along the channels (or features),
 *             second the branch after `branch`; an empty list gives x
 *   gate      x * body(x), body giving (C, 1, 1) or (C) for x (C, H, W)
 *             broadcast over H and W (squeeze-and-excitation), or x's shape */
enum model_join { JOIN_RESIDUAL, JOIN_CONCAT, JOIN_GATE };
/* its word in files ("residual", "concat", "gate"), and the word that opens
 * its second list ("shortcut", "branch"; NULL: a gate has none) */
const char *model_join_name(enum model_join join);
const char *model_join_second(enum model_join join);

struct model_layer {
    const struct model_layer_type *type; /* NULL: a block of layers */
    char name[MODEL_NAME_MAX];           /* as written, or "" */
    int line, column;                    /* where the type is written */
    double value[MODEL_MAX_OPTIONS];     /* each option of type->options */
    int value_column[MODEL_MAX_OPTIONS]; /* where it was given; 0: the default */
    /* a block: its join, its lists, the line of the word opening the second */
    enum model_join join;
    struct model_block body, second;
    int second_line;

    /* filled when the model is built for an input shape */
    char full_name[MODEL_NAME_MAX]; /* "layer1.0.conv1": its parameters' prefix */
    int in_ndim, out_ndim;
    int64_t in_shape[3], out_shape[3];
    ember_tensor *t[MODEL_MAX_TENSORS]; /* its parameters and buffers, in the order added */
    int param_first, param_count;       /* their places in the model's parameter set */
    int64_t params;                     /* elements of its parameters (buffers not counted) */
    int64_t batches_tracked;            /* BatchNorm: training forwards seen (num_batches_tracked) */
    int index;                          /* its place in the whole model, for dropout's seed */
    /* generation (model-generate.c): the position of the forward's first
     * token, which position_embedding reads (0 otherwise), and attention's
     * key/value cache (2, 1, heads, context, head size) while it has one */
    int64_t position;
    ember_tensor *cache;
    /* a conv2d or linear layer's weight and bias with the batch norm after it
     * folded in, kept from one prediction to the next (model-layers.c,
     * model_folded_batch_norm_forward), and the writes into their sources
     * when they were made (ember_tensor_writes); NULL: none */
    ember_tensor *folded[2];
    uint64_t folded_writes;
};

/* The parsed file. */
struct model_file {
    struct model_block root;
    int input_ndim; /* 0: no input line */
    int64_t input_shape[3];
    int input_line, input_column;
};

/* Parses `text`; `source` names it in messages ("models/resnet8.model"). On
 * a mistake returns EMBER_ERR_FORMAT with "source:line:column: ..." set on
 * the context, and holds nothing. */
ember_status model_file_parse(ember_ctx *ctx, const char *source, const char *text, struct model_file *file);
void model_file_free(struct model_file *file);
void model_block_free(struct model_block *block);

/* What building needs: the context, the set being filled and the
 * initialisation's generator; and when the model is built to load a
 * checkpoint, the checkpoint, against which each parameter's name and
 * shape are checked before it is allocated (so a small file describing a
 * huge network costs nothing). */
struct model_build {
    ember_ctx *ctx;
    const char *source;
    ember_params *params;
    ember_rng rng;
    const ember_checkpoint *expect;  /* or NULL */
    const char *expect_path;         /* its name, for messages */
    char taken[MODEL_NAME_MAX + 32]; /* a parameter's name that was taken already, when adding it failed so */
};

/* A named value of layer->value by its option's name. */
double model_layer_option(const struct model_layer *layer, const char *name);

/* Works out every layer's shapes for samples of `ndim`/`shape` ending in
 * `classes` logits, names and adds the parameters, and initialises them. */
ember_status model_file_build(struct model_file *file, struct model_build *b, int ndim, const int64_t *shape,
                              int classes);

/* "1x28x28" into buf */
const char *model_shape_str(int ndim, const int64_t *shape, char *buf, size_t len);

/* ember_model_parse with `source` naming the text in messages, and the
 * checkpoint the model is built to load (NULL: none; see struct
 * model_build). */
ember_model *model_parse_as(ember_ctx *ctx, const char *name, const char *source, const char *text,
                            int sample_ndim, const int64_t *sample_shape, int classes, uint64_t seed,
                            const ember_checkpoint *expect, const char *expect_path);
/* The text of the built-in model `name`, or NULL. */
const char *model_builtin_text(const char *name);

/* The built-in models: models/<name>.model, embedded at build time. */
struct ember_model_embedded {
    const char *name; /* "resnet8.model" */
    const char *text;
};
extern const struct ember_model_embedded ember_model_embedded_files[];
extern const int ember_model_embedded_count;

struct ember_model {
    ember_ctx *ctx;
    char name[MODEL_NAME_MAX];
    char *text;             /* the model file's text; NULL for a wrapped C network */
    struct model_file file; /* its layers */
    ember_params *params;
    int sample_ndim;
    int64_t sample_shape[3];
    int classes;
    bool training;
    uint64_t seed;     /* dropout's masks: from the seed, the forward's count and the layer */
    uint64_t forwards; /* training forwards so far */
    /* BatchNorm's num_batches_tracked is counted on the host (a device
     * write per layer per step would stall a GPU's queue): read from the
     * buffers at the first training forward, written back when the model
     * leaves training, is saved or evaluated */
    bool counts_known, counts_dirty;
    /* a wrapped C network */
    ember_model_forward_fn forward_fn;
    void *user;
    /* ember_model_predict's input batch, kept for the next call of the
     * same size (a call of another size gets a new one from the pools) */
    ember_tensor *predict_x;
    int64_t predict_n;
    char describe[512];
};

/* The layers on x as it is, without checking its shape against the
 * model's (model.c): generation runs a text model on fewer positions. */
ember_tensor *model_run(struct ember_model *m, ember_tensor *x);

/* Writes BatchNorm's batch counts, kept on the host while training, back
 * into their buffers (model.c): before a save or an evaluation. */
ember_status model_counts_write_back(struct ember_model *m);

#endif /* EMBER_MODELS_IMPL_H */
