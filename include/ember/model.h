/* SPDX-License-Identifier: MIT */
/*
 * ember/model.h — models: networks as data, their checkpoints, ONNX and predictions: a part of ember.h.
 *
 * A model is a network described in a model file (docs/models.md) with its
 * parameters: built, summarised, saved, exported to ONNX or imported from
 * it, evaluated, asked for predictions and, for text, for generations.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/model.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_MODEL_H)
#define EMBER_PART_MODEL_H

/* ------------------------------------------------------------------ models
 *
 * A model is a network with its parameters. Networks are data: a model file
 * (docs/models.md) lists the layers, one per line,
 *
 *     conv1: conv2d 16 kernel=3 padding=1
 *     relu
 *     max_pool2d 2
 *     flatten
 *     fc: linear classes
 *
 * and the built-in models ("simplecnn", "resnet8", ...) are such files,
 * embedded. Parameter names follow PyTorch's ("conv1.weight",
 * "layer1.0.bn1.running_mean"), so a checkpoint loads into the same PyTorch
 * module with load_state_dict(strict=True). A network written in C wraps
 * into a model too (ember_model_wrap). */
typedef struct ember_model ember_model;

/* The largest size of a sample's dimension a model is built for: the data
 * sets' limit too. */
#define EMBER_MAX_SAMPLE_SIDE (1 << 20)
/* A sample's shape as model files, checkpoints and `ember --shape` write it:
 * "1x28x28" (C, H, W) or "100" (features), 1 to 3 sizes, each 1 to
 * EMBER_MAX_SAMPLE_SIDE. False for anything else. */
EMBER_API bool ember_parse_shape(const char *text, int *ndim, int64_t shape[3]);

/* Builds `model` for samples of `sample_shape` (C, H, W) or (features) and
 * `classes` outputs, initialised as PyTorch does from `seed`. `model` is a
 * built-in's name or the path of a model file (one that contains "/" or
 * ends in ".model"). sample_ndim 0 takes the shape from the file's `input`
 * line, or 1x28x28 (Fashion-MNIST's) when it has none. A mistake in the
 * file is EMBER_ERR_FORMAT, a layer that does not fit the shapes
 * EMBER_ERR_ARG, each with "file:line:column: ..." in the message. */
EMBER_API ember_model *ember_model_build(ember_ctx *ctx, const char *model, int sample_ndim,
                                         const int64_t *sample_shape, int classes, uint64_t seed);
/* The same from a model file's text; `name` names it in messages. */
EMBER_API ember_model *ember_model_parse(ember_ctx *ctx, const char *name, const char *text, int sample_ndim,
                                         const int64_t *sample_shape, int classes, uint64_t seed);
/* ember_model_build with the data set's sample shape and class count. */
EMBER_API ember_model *ember_model_new(ember_ctx *ctx, const char *model, const ember_dataset *data,
                                       uint64_t seed);

/* A network of your own as a model: `forward` maps x (N, sample shape...)
 * to logits (N, classes) with the public ops and the parameters of
 * `params`, which the model takes over (ember_model_free frees it). The
 * model then evaluates, saves and loads like any other; its training
 * forwards are counted, as a model file's are ("ember.forwards"), and
 * ember_model_load restores the count. */
typedef ember_tensor *(*ember_model_forward_fn)(void *user, ember_params *params, ember_tensor *x,
                                                bool training);
EMBER_API ember_model *ember_model_wrap(ember_ctx *ctx, const char *name, ember_params *params,
                                        int sample_ndim, const int64_t *sample_shape, int classes,
                                        ember_model_forward_fn forward, void *user);

EMBER_API void ember_model_free(ember_model *model);
/* x is (N, sample shape...); returns logits (N, classes) */
EMBER_API ember_tensor *ember_model_forward(ember_model *model, ember_tensor *x);
/* Training mode (the default) uses batch statistics in BatchNorm and
 * updates its running ones, and drops values in Dropout (a fresh mask each
 * forward, drawn from the model's seed); evaluation mode uses the running
 * statistics and keeps every value. ember_model_evaluate switches to
 * evaluation for its pass and back. Switching to evaluation writes the
 * running statistics' counts back to the device: its status (and
 * EMBER_ERR_ARG for a NULL model). */
EMBER_API ember_status ember_model_set_training(ember_model *model, bool training);
EMBER_API bool ember_model_training(const ember_model *model);
EMBER_API ember_params *ember_model_params(ember_model *model);
EMBER_API const char *ember_model_name(const ember_model *model);
/* "simplecnn: Conv2d(1, 16, 3, padding=1) ReLU() MaxPool2d(2) Flatten() Linear(3136, 10); 31530 parameters"
 */
EMBER_API const char *ember_model_describe(const ember_model *model);
/* The sample shape it was built for, into shape[3]; returns its ndim. */
EMBER_API int ember_model_sample_shape(const ember_model *model, int64_t *shape);
EMBER_API int ember_model_classes(const ember_model *model);
/* The model file's text (NULL for a wrapped network): checkpoints keep it. */
EMBER_API const char *ember_model_text(const ember_model *model);
/* The built-in model names, NULL-terminated, and a one-line summary of each. */
EMBER_API const char *const *ember_model_names(void);
EMBER_API const char *ember_model_summary(const char *name);
/* The layer types a model file may use: how many, and each one's name and
 * a one-line description of it and its options. */
EMBER_API int ember_model_layer_type_count(void);
EMBER_API const char *ember_model_layer_type_at(int index, const char **about);

/* Checkpoints of a model: its parameters and buffers (ember_params_save),
 * with BatchNorm's batch counts brought up to date first. The model's name,
 * its file's text, its input shape and class count are added to `metadata`
 * as "ember.model", "ember.model_text", "ember.input" ("1x28x28") and
 * "ember.classes" ("10"), and its seed and count of training passes, which
 * ember_model_load restores so that Dropout's masks go on where they were. */
EMBER_API ember_status ember_model_save(ember_model *model, const char *path, const char *const *metadata);
EMBER_API ember_status ember_model_load(ember_model *model, const char *path);
/* The model a checkpoint written by ember_model_save holds, built from its
 * metadata (the model file's text, or the built-in's name; the input shape
 * and class count) and loaded: no data set, no model name needed. */
EMBER_API ember_model *ember_model_from_checkpoint(ember_ctx *ctx, const char *path);

/* Checkpoints in memory, for a program that keeps its models in its own
 * files, a database or its executable: the same safetensors bytes as the
 * files above. Saving returns a buffer to ember_free() in *data, *size bytes
 * long; loading reads `size` bytes at `data` (not kept) and checks them as
 * a file is checked. */
EMBER_API ember_status ember_model_save_memory(ember_model *model, const char *const *metadata, void **data,
                                               size_t *size);
EMBER_API ember_status ember_model_load_memory(ember_model *model, const void *data, size_t size);
EMBER_API ember_model *ember_model_from_checkpoint_memory(ember_ctx *ctx, const void *data, size_t size);

/* ONNX (docs/interop.md): the model as an ONNX file at opset 13, for ONNX
 * Runtime, OpenCV's DNN module and the like: its layers as the operators
 * PyTorch's exporter writes, the weights under their PyTorch names, input
 * "input" (batch, sample shape...) and output "logits" (batch, classes)
 * with the batch dynamic, and in metadata_props the model's name, file,
 * input shape and class count, then `metadata`'s pairs (NULL-terminated:
 * "ember.class_names", "ember.normalize", ...). A CSV table's
 * standardisation among them (ember_feature_scaling_meta's keys) is
 * written as Sub and Div nodes at the input, so the file takes the table's
 * raw values. Dropout is left out: the file is for inference. A network
 * wrapped from C, or a layer ONNX cannot express here, cannot be exported
 * (EMBER_ERR_UNSUPPORTED). */
EMBER_API ember_status ember_model_export_onnx(ember_model *model, const char *path,
                                               const char *const *metadata);

/* An ONNX model (opset 9 and up, as torch.onnx.export writes it) as an
 * ember checkpoint in memory (a buffer to ember_free()): the graph read back
 * into a model file (its text in "ember.model_text"), its weights under
 * the layers' names, and the file's metadata_props (class names, input
 * scaling) carried over; then ember_model_from_checkpoint_memory,
 * ember_checkpoint_open_memory and the rest take it. The operators and
 * patterns read are those of ember's own layers (docs/interop.md); any
 * other node is EMBER_ERR_UNSUPPORTED naming the node, its operator and
 * what is supported. The file is checked as every loader checks its input
 * (io/onnx-impl.h). ember_model_from_onnx does both steps. */
EMBER_API ember_status ember_onnx_to_checkpoint(ember_ctx *ctx, const char *path, void **data, size_t *size);
EMBER_API ember_status ember_onnx_to_checkpoint_memory(ember_ctx *ctx, const char *name, const void *onnx,
                                                       size_t onnx_size, void **data, size_t *size);
EMBER_API ember_model *ember_model_from_onnx(ember_ctx *ctx, const char *path);

/* Inference from the caller's buffers: `in` holds n samples of the model's
 * sample shape, as floats laid out as a batch tensor would be
 * ((n, C, H, W) for images, scaled as the model was trained: [0, 1] for
 * ember's data sets); `logits_out` receives (n, classes) floats. Runs in
 * evaluation mode with recording off and leaves nothing on the tape; after
 * the first call with the largest n, a call allocates nothing (host or
 * device). n may be any size from 1 up. */
EMBER_API ember_status ember_model_predict(ember_model *model, const float *in, int64_t n, float *logits_out);
/* The same with softmax probabilities (each row sums to 1) in `probs_out`. */
EMBER_API ember_status ember_model_predict_probs(ember_model *model, const float *in, int64_t n,
                                                 float *probs_out);

/* Generation from a model of text (one that takes a sequence of tokens and
 * scores every position, as gpt-tiny does), a token at a time:
 *
 *     ember_generate_options o = {.temperature = 0.8f, .top_k = 40, .seed = 1};
 *     ember_generator *g = ember_generator_new(model, &o);
 *     ember_generator_feed(g, prompt, prompt_len);      // tokens: indices into the vocabulary
 *     for (int i = 0; i < 100; i++)
 *         ember_generator_next(g, &token);              // drawn, then fed back in
 *     ember_generator_free(g);
 *
 * Tokens are the model's classes: for text data, indices into the
 * vocabulary that ember_dataset_vocab gives and `ember train` keeps in the
 * checkpoint as "ember.vocab" (byte k of token k, in hex). Each attention
 * layer keeps its keys and values (a key/value cache), so a new token costs
 * one position's work. The model sees at most its context: when the cache
 * is full it starts again from the last half context (one pass over it);
 * with no_cache, every token runs the last whole context, which gives the
 * same tokens while the text fits in the context (docs/models.md). The
 * model runs in evaluation mode and records nothing. */
typedef struct ember_generate_options {
    float temperature; /* 0: the most likely token every time; 1: the model's own odds */
    int top_k;         /* draw among the k most likely tokens (0: all) */
    uint64_t seed;     /* the draws' generator */
    bool no_cache;     /* run the whole window for every token: slower, for checking */
} ember_generate_options;
typedef struct ember_generator ember_generator;
/* NULL (with the reason) for a model that is not of text */
EMBER_API ember_generator *ember_generator_new(ember_model *model, const ember_generate_options *options);
EMBER_API void ember_generator_free(ember_generator *g);
/* Feeds n >= 1 tokens (a prompt, or tokens chosen elsewhere): the next
 * token is then drawn from what the model says follows them. */
EMBER_API ember_status ember_generator_feed(ember_generator *g, const int32_t *tokens, int64_t n);
/* Draws the next token into *token and feeds it. */
EMBER_API ember_status ember_generator_next(ember_generator *g, int32_t *token);
/* The whole loop: the prompt fed, then `count` tokens into out. */
EMBER_API ember_status ember_model_generate(ember_model *model, const ember_generate_options *options,
                                            const int32_t *prompt, int64_t prompt_len, int64_t count,
                                            int32_t *out);

/* One row of a Keras-style summary. Layers are numbered depth-first, a
 * block (residual, concat, gate) before its layers; `depth` is how deep
 * in blocks. */
typedef struct ember_layer_info {
    const char *name;  /* the parameters' prefix: "layer1.0.conv1"; "" for a bare layer */
    const char *type;  /* "conv2d", "residual", "concat", ... as in the file */
    char describe[96]; /* PyTorch's repr: "Conv2d(1, 16, 3, padding=1)" */
    int depth, line;
    int out_ndim;
    int64_t out_shape[3]; /* one sample's output */
    int64_t params;       /* its parameters' elements (for a block, its layers') */
    double forward_flops; /* per sample; a block's own: its join (the addition, ...) */
    double backward_flops;
} ember_layer_info;
EMBER_API int ember_model_layer_count(const ember_model *model);
EMBER_API ember_status ember_model_layer_info(const ember_model *model, int index, ember_layer_info *info);

/* Test accuracy (fraction correct) and mean cross-entropy over a data set,
 * in evaluation mode with grad off; either output may be NULL. On text,
 * every position of every window counts: the accuracy is the next token's,
 * and the loss, in nats per token, is the mean over all the positions
 * (divided by ln 2: bits per byte). */
EMBER_API ember_status ember_model_evaluate(ember_model *model, ember_dataset *data, int64_t batch,
                                            double *accuracy, double *loss);
/* The same, and the confusion matrix: confusion[true * classes + predicted]
 * counts the samples of each class by the class predicted (classes x
 * classes, filled). */
EMBER_API ember_status ember_model_evaluate_confusion(ember_model *model, ember_dataset *data, int64_t batch,
                                                      double *accuracy, double *loss, int64_t *confusion);

#endif /* EMBER_PART_MODEL_H */
