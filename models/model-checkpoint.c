/* SPDX-License-Identifier: MIT */
/*
 * models/model-checkpoint.c — a model's checkpoints, in files or in memory.
 *
 * A checkpoint is its parameter set's safetensors file (ember_params_save)
 * with metadata that says what model it holds: "ember.model" (the name),
 * "ember.model_text" (the model file, when there is one), "ember.input"
 * ("1x28x28") and "ember.classes", so that ember_model_from_checkpoint can
 * build the model with no data set and no name; and "ember.forwards" and
 * "ember.model_seed", so that Dropout's masks go on where they were.
 *
 * Every function exists twice, for a path and for bytes in memory; both go
 * through `struct source`, so the two cannot drift apart.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models-impl.h"

/* Where a checkpoint is: a file, or `size` bytes at `data`. */
struct source {
    const char *path; /* NULL: in memory */
    const void *data;
    size_t size;
};

static const char *source_name(const struct source *src)
{
    return src->path ? src->path : "the checkpoint in memory";
}

static ember_checkpoint *source_open(ember_ctx *ctx, const struct source *src)
{
    return src->path ? ember_checkpoint_open(ctx, src->path)
                     : ember_checkpoint_open_memory(ctx, src->data, src->size);
}

static ember_status source_load_params(ember_params *params, const struct source *src)
{
    return src->path ? ember_params_load(params, src->path)
                     : ember_params_load_memory(params, src->data, src->size);
}

/* Saves to the path, or into a new buffer when path is NULL. */
static ember_status save(ember_model *m, const char *path, void **data, size_t *size,
                         const char *const *metadata)
{
    ember_status st = model_counts_write_back(m);
    if (st != EMBER_OK)
        return st;
    size_t n = 0;
    while (metadata && metadata[n])
        n++;
    const char **meta = calloc(n + 13, sizeof *meta);
    if (!meta)
        return ember_set_error(m->ctx, EMBER_ERR_NOMEM, "out of host memory saving %s",
                               path ? path : "a checkpoint to memory");
    char input[64], classes[16], forwards[32], seed[32];
    model_shape_str(m->sample_ndim, m->sample_shape, input, sizeof input);
    snprintf(classes, sizeof classes, "%d", m->classes);
    snprintf(forwards, sizeof forwards, "%" PRIu64, m->forwards);
    snprintf(seed, sizeof seed, "%" PRIu64, m->seed);
    size_t k = 0;
    meta[k++] = "ember.model", meta[k++] = m->name;
    meta[k++] = "ember.input", meta[k++] = input;
    meta[k++] = "ember.classes", meta[k++] = classes;
    /* dropout's masks go on from here */
    meta[k++] = "ember.forwards", meta[k++] = forwards;
    meta[k++] = "ember.model_seed", meta[k++] = seed;
    if (m->text)
        meta[k++] = "ember.model_text", meta[k++] = m->text;
    for (size_t i = 0; i < n; i++)
        meta[k++] = metadata[i];
    st = path ? ember_params_save(m->params, path, meta)
              : ember_params_save_memory(m->params, meta, data, size);
    free(meta);
    return st;
}

ember_status ember_model_save(ember_model *m, const char *path, const char *const *metadata)
{
    if (!m)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_set_error(m->ctx, EMBER_ERR_ARG, "ember_model_save: NULL path");
    return save(m, path, NULL, NULL, metadata);
}

ember_status ember_model_save_memory(ember_model *m, const char *const *metadata, void **data, size_t *size)
{
    if (!m)
        return EMBER_ERR_ARG;
    if (!data || !size)
        return ember_set_error(m->ctx, EMBER_ERR_ARG, "ember_model_save_memory: NULL data or size");
    return save(m, NULL, data, size, metadata);
}

/* The count under `key`, when the checkpoint has one: a whole number, or
 * the file is malformed. */
static ember_status meta_count(ember_ctx *ctx, const ember_checkpoint *ck, const char *what, const char *key,
                               uint64_t *value)
{
    const char *text = ember_checkpoint_meta(ck, key);
    if (!text)
        return EMBER_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || errno || *end)
        return ember_set_error(ctx, EMBER_ERR_FORMAT,
                               "%s: the metadata's %s is \"%.40s\", not a whole number", what, key, text);
    *value = v;
    return EMBER_OK;
}

static ember_status load(ember_model *m, const struct source *src)
{
    /* the counts first: a file refused for them changes nothing */
    ember_checkpoint *ck = source_open(m->ctx, src);
    if (!ck)
        return ember_last_status(m->ctx);
    uint64_t forwards = m->forwards, seed = m->seed;
    ember_status st = meta_count(m->ctx, ck, source_name(src), "ember.forwards", &forwards);
    if (st == EMBER_OK)
        st = meta_count(m->ctx, ck, source_name(src), "ember.model_seed", &seed);
    ember_checkpoint_close(ck);
    if (st == EMBER_OK)
        st = source_load_params(m->params, src);
    if (st != EMBER_OK)
        return st;
    m->counts_known = m->counts_dirty = false; /* read again at the next training forward */
    /* training forwards so far, so that dropout's masks go on where they were */
    m->forwards = forwards;
    m->seed = seed;
    return EMBER_OK;
}

ember_status ember_model_load(ember_model *m, const char *path)
{
    if (!m)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_set_error(m->ctx, EMBER_ERR_ARG, "ember_model_load: NULL path");
    return load(m, &(struct source){.path = path});
}

ember_status ember_model_load_memory(ember_model *m, const void *data, size_t size)
{
    if (!m)
        return EMBER_ERR_ARG;
    return load(m, &(struct source){.data = data, .size = size});
}

/* Builds the model the checkpoint describes, each parameter checked
 * against the file's tensor of its name before it is allocated, and loads
 * it. */
static ember_model *from_checkpoint(ember_ctx *ctx, const struct source *src)
{
    ember_checkpoint *ck = source_open(ctx, src);
    if (!ck)
        return NULL;
    const char *what = source_name(src);
    const char *name = ember_checkpoint_meta(ck, "ember.model"),
               *text = ember_checkpoint_meta(ck, "ember.model_text");
    const char *input = ember_checkpoint_meta(ck, "ember.input"),
               *classes = ember_checkpoint_meta(ck, "ember.classes");
    int ndim = 0;
    int64_t shape[3];
    char *end = NULL;
    long n_classes = classes ? strtol(classes, &end, 10) : 0;
    ember_model *m = NULL;
    if (!name || !input || !classes) {
        ember_set_error(ctx, EMBER_ERR_FORMAT,
                        "%s does not say which model it holds (its metadata has no %s): "
                        "it was written by another program or an older ember; build the model and load it "
                        "with ember_model_load",
                        what,
                        !name    ? "ember.model"
                        : !input ? "ember.input"
                                 : "ember.classes");
    } else if (!ember_parse_shape(input, &ndim, shape) || !end || *end || n_classes < 1 ||
               n_classes > 1 << 20) {
        ember_set_error(ctx, EMBER_ERR_FORMAT,
                        "%s: the metadata's input \"%.40s\" or classes \"%.40s\" is not "
                        "a shape and a class count",
                        what, input, classes);
    } else if (!text && !model_builtin_text(name)) {
        ember_set_error(
            ctx, EMBER_ERR_FORMAT,
            "%s names the model \"%.200s\", which is not built in, and does not "
            "store its text (ember.model_text): build the model and load it with ember_model_load",
            what, name);
    } else {
        /* an error in stored text is the checkpoint's, not the file's the name recalls */
        char source[4400];
        if (text)
            snprintf(source, sizeof source, "the model text stored in %s (from %.200s)", what, name);
        m = model_parse_as(ctx, name, text ? source : name, text ? text : model_builtin_text(name), ndim,
                           shape, (int)n_classes, 0, ck, what);
        int have = ember_checkpoint_tensor_count(ck), want = m ? ember_params_count(m->params) : 0;
        if (m && have != want) /* each of the model's tensors is in the file: the rest are not the model's */
            ember_set_error(ctx, EMBER_ERR_FORMAT, "%s holds %d tensors, but the model it describes has %d",
                            what, have, want);
        if (m && (have != want || load(m, src) != EMBER_OK)) {
            ember_model_free(m);
            m = NULL;
        }
    }
    ember_checkpoint_close(ck);
    return m;
}

ember_model *ember_model_from_checkpoint(ember_ctx *ctx, const char *path)
{
    if (ctx && !path) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_model_from_checkpoint: NULL path");
        return NULL;
    }
    return ctx ? from_checkpoint(ctx, &(struct source){.path = path}) : NULL;
}

ember_model *ember_model_from_checkpoint_memory(ember_ctx *ctx, const void *data, size_t size)
{
    return ctx ? from_checkpoint(ctx, &(struct source){.data = data, .size = size}) : NULL;
}
