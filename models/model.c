/* SPDX-License-Identifier: MIT */
/*
 * models/model.c — models: built from a file's text or wrapped around a C
 * forward function, run forward in training or evaluation mode, and
 * evaluated. Checkpoints are in model-checkpoint.c, inference from the
 * caller's buffers in model-predict.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models-impl.h"
#include "platform.h"
#include "text-impl.h"

/* ---------------------------------------------------------- the built-ins */

/* "simplecnn" for "simplecnn.model", into buf */
static const char *builtin_name(int i, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ember_model_embedded_files[i].name);
    char *dot = strstr(buf, ".model");
    if (dot)
        *dot = '\0';
    return buf;
}

const char *model_builtin_text(const char *name)
{
    char buf[MODEL_NAME_MAX];
    for (int i = 0; name && i < ember_model_embedded_count; i++)
        if (strcmp(builtin_name(i, buf, sizeof buf), name) == 0)
            return ember_model_embedded_files[i].text;
    return NULL;
}

const char *const *ember_model_names(void)
{
    /* the table is fixed at build time; filled once, the same each time */
    static char names[64][MODEL_NAME_MAX];
    static const char *list[65];
    int n = ember_model_embedded_count < 64 ? ember_model_embedded_count : 64;
    for (int i = 0; i < n; i++)
        list[i] = builtin_name(i, names[i], sizeof names[i]);
    list[n] = NULL;
    return list;
}

/* A built-in file's first line is "# summary". */
const char *ember_model_summary(const char *name)
{
    static char summary[64][256];
    char buf[MODEL_NAME_MAX];
    for (int i = 0; name && i < ember_model_embedded_count && i < 64; i++) {
        if (strcmp(builtin_name(i, buf, sizeof buf), name) != 0)
            continue;
        const char *text = ember_model_embedded_files[i].text;
        if (text[0] != '#')
            return "";
        text += 1 + (text[1] == ' ');
        size_t len = strcspn(text, "\n");
        snprintf(summary[i], sizeof summary[i], "%.*s", (int)(len < 255 ? len : 255), text);
        return summary[i];
    }
    return NULL;
}

/* ------------------------------------------------------------- building */

static void describe_block(const struct model_block *block, char *out, size_t len)
{
    for (int i = 0; i < block->count; i++) {
        const struct model_layer *l = &block->layers[i];
        size_t at = strlen(out);
        if (at + 1 >= len)
            return;
        if (at && out[at - 1] != '[' && out[at - 1] != ' ')
            out[at++] = ' ', out[at] = '\0';
        if (!l->type) { /* Residual[body + shortcut], Concat[body | branch], Gate[body] */
            static const char *const opens[] = {"Residual[", "Concat[", "Gate["}, *const joins[] = {
                                                                                      " + ", " | ", ""};
            snprintf(out + at, len - at, "%s", opens[l->join]);
            describe_block(&l->body, out, len);
            if (l->second.count || l->join == JOIN_CONCAT) {
                at = strlen(out);
                snprintf(out + at, len - at, "%s", joins[l->join]);
                describe_block(&l->second, out, len);
            }
            at = strlen(out);
            snprintf(out + at, len - at, "]");
        } else {
            l->type->describe(l, out + at, len - at);
        }
    }
}

static struct ember_model *model_alloc(ember_ctx *ctx, const char *name, int sample_ndim,
                                       const int64_t *sample_shape, int classes, uint64_t seed)
{
    if (sample_ndim < 1 || sample_ndim > 3 || !sample_shape || classes < 1) {
        ember_set_error(ctx, EMBER_ERR_ARG,
                        "model %s: samples have 1 to 3 dimensions and there is at least one "
                        "class (got %d dimensions, %d classes)",
                        name, sample_ndim, classes);
        return NULL;
    }
    for (int i = 0; i < sample_ndim; i++)
        if (sample_shape[i] < 1 || sample_shape[i] > EMBER_MAX_SAMPLE_SIDE) {
            ember_set_error(ctx, EMBER_ERR_ARG,
                            "model %s: dimension %d of the sample shape is %lld, not 1 to %d", name, i,
                            (long long)sample_shape[i], EMBER_MAX_SAMPLE_SIDE);
            return NULL;
        }
    struct ember_model *m = calloc(1, sizeof *m);
    if (!m) {
        ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory making model %s", name);
        return NULL;
    }
    m->ctx = ctx;
    snprintf(m->name, sizeof m->name, "%s", name);
    m->sample_ndim = sample_ndim;
    memcpy(m->sample_shape, sample_shape, (size_t)sample_ndim * sizeof *sample_shape);
    m->classes = classes;
    m->seed = seed;
    m->training = true;
    return m;
}

ember_model *ember_model_parse(ember_ctx *ctx, const char *name, const char *text, int sample_ndim,
                               const int64_t *sample_shape, int classes, uint64_t seed)
{
    if (!ctx)
        return NULL;
    if (!name || !text) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_model_parse: %s is NULL", name ? "the text" : "the name");
        return NULL;
    }
    return model_parse_as(ctx, name, name, text, sample_ndim, sample_shape, classes, seed, NULL, NULL);
}

ember_model *model_parse_as(ember_ctx *ctx, const char *name, const char *source, const char *text,
                            int sample_ndim, const int64_t *sample_shape, int classes, uint64_t seed,
                            const ember_checkpoint *expect, const char *expect_path)
{
    struct model_file file;
    if (model_file_parse(ctx, source, text, &file) != EMBER_OK)
        return NULL;
    /* no shape given: the file's input line, else Fashion-MNIST's */
    static const int64_t fashion_mnist[3] = {1, 28, 28};
    if (sample_ndim == 0) {
        sample_ndim = file.input_ndim ? file.input_ndim : 3;
        sample_shape = file.input_ndim ? file.input_shape : fashion_mnist;
    }
    struct ember_model *m = model_alloc(ctx, name, sample_ndim, sample_shape, classes, seed);
    if (!m) {
        model_file_free(&file);
        return NULL;
    }
    m->file = file;
    if (!(m->text = strdup(text)) || !(m->params = ember_params_new(ctx))) {
        if (!m->text)
            ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory making model %s", name);
        ember_model_free(m);
        return NULL;
    }
    struct model_build b = {.ctx = ctx,
                            .source = source,
                            .params = m->params,
                            .rng = ember_rng_seed(seed),
                            .expect = expect,
                            .expect_path = expect_path};
    if (model_file_build(&m->file, &b, m->sample_ndim, m->sample_shape, classes) != EMBER_OK) {
        ember_model_free(m);
        return NULL;
    }
    /* the layers in PyTorch's words, when that fits on a line */
    char layers[256] = "";
    describe_block(&m->file.root, layers, sizeof layers);
    if (strlen(layers) > 160) {
        int blocks = 0, rows = ember_model_layer_count(m);
        for (int i = 0; i < m->file.root.count; i++)
            blocks += !m->file.root.layers[i].type;
        char in_blocks[48] = "";
        if (blocks)
            snprintf(in_blocks, sizeof in_blocks, ", %d of them blocks", blocks);
        snprintf(layers, sizeof layers, "%d layers%s (ember_model_layer_info lists them)", rows, in_blocks);
    }
    snprintf(m->describe, sizeof m->describe, "%s: %s; %" PRId64 " parameters", m->name, layers,
             ember_params_numel(m->params));
    return m;
}

/* A path names a file; anything else a built-in. */
static bool is_path(const char *model)
{
    size_t n = strlen(model);
    return strchr(model, '/') || (n > 6 && strcmp(model + n - 6, ".model") == 0);
}

/* The file's contents, NUL-terminated (free it), or NULL with the error set. */
/* Opens a model file only if it is a regular file: open() on a FIFO
 * would wait for a writer (O_NONBLOCK returns at once, for any file). */
static FILE *open_model_file(ember_ctx *ctx, const char *path)
{
    struct stat info;
    int fd = ember_open_no_wait(path, O_RDONLY);
    if (fd < 0) {
        ember_set_error(ctx, EMBER_ERR_IO, "cannot open model file %s: %s", path, strerror(errno));
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
        ember_set_error(ctx, EMBER_ERR_IO, "model file %s is not a regular file: ember reads only files",
                        path);
    else if (!ember_wait_on_reads(fd) || !(f = fdopen(fd, "rb")))
        ember_set_error(ctx, EMBER_ERR_IO, "cannot read model file %s: %s", path, strerror(errno));
    if (!f)
        close(fd);
    return f;
}

static char *read_model_file(ember_ctx *ctx, const char *path)
{
    FILE *f = open_model_file(ctx, path);
    if (!f)
        return NULL;
    enum { LIMIT = 1 << 20 };
    char *text = malloc(LIMIT + 1);
    size_t n = text ? fread(text, 1, LIMIT + 1, f) : 0;
    bool failed = text && ferror(f);
    fclose(f);
    if (!text || failed || n > LIMIT || memchr(text, '\0', n)) {
        if (!text)
            ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", path);
        else if (failed)
            ember_set_error(ctx, EMBER_ERR_IO, "cannot read model file %s", path);
        else
            ember_set_error(ctx, EMBER_ERR_FORMAT, "%s is not a model file: %s", path,
                            n > LIMIT ? "over 1 MiB" : "it holds NUL bytes");
        free(text);
        return NULL;
    }
    text[n] = '\0';
    return text;
}

ember_model *ember_model_build(ember_ctx *ctx, const char *model, int sample_ndim,
                               const int64_t *sample_shape, int classes, uint64_t seed)
{
    if (!ctx)
        return NULL;
    if (!model) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_model_build: the model is NULL");
        return NULL;
    }
    if (!is_path(model)) {
        const char *text = model_builtin_text(model);
        if (text)
            return ember_model_parse(ctx, model, text, sample_ndim, sample_shape, classes, seed);
        char known[512] = "", hint[96];
        int count = 0;
        for (const char *const *n = ember_model_names(); *n; n++, count++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", *known ? ", " : "", *n);
        ember_suggest(model, ember_model_names(), count, hint, sizeof hint);
        ember_set_error(ctx, EMBER_ERR_ARG,
                        "unknown model \"%s\"%s: the built-in models are %s; a model file's path "
                        "contains \"/\" or ends in \".model\"",
                        model, hint, known);
        return NULL;
    }
    char *text = read_model_file(ctx, model);
    if (!text)
        return NULL;
    ember_model *m = ember_model_parse(ctx, model, text, sample_ndim, sample_shape, classes, seed);
    free(text);
    return m;
}

ember_model *ember_model_new(ember_ctx *ctx, const char *model, const ember_dataset *data, uint64_t seed)
{
    if (!ctx)
        return NULL;
    if (!data) {
        ember_set_error(ctx, EMBER_ERR_ARG, "ember_model_new needs a data set for its input shape");
        return NULL;
    }
    return ember_model_build(ctx, model, ember_dataset_sample_ndim(data), ember_dataset_sample_shape(data),
                             ember_dataset_classes(data), seed);
}

ember_model *ember_model_wrap(ember_ctx *ctx, const char *name, ember_params *params, int sample_ndim,
                              const int64_t *sample_shape, int classes, ember_model_forward_fn forward,
                              void *user)
{
    if (!ctx)
        return NULL;
    if (!name || !params || !forward) {
        ember_set_error(ctx, EMBER_ERR_ARG,
                        "ember_model_wrap needs a name, a parameter set and a forward function");
        return NULL;
    }
    struct ember_model *m = model_alloc(ctx, name, sample_ndim, sample_shape, classes, 0);
    if (!m)
        return NULL;
    m->params = params;
    m->forward_fn = forward;
    m->user = user;
    snprintf(m->describe, sizeof m->describe, "%s: a network written in C; %" PRId64 " parameters", name,
             ember_params_numel(params));
    return m;
}

void ember_model_free(ember_model *m)
{
    if (!m)
        return;
    model_file_free(&m->file);
    ember_tensor_free(m->predict_x);
    ember_params_free(m->params);
    free(m->text);
    free(m);
}

/* ------------------------------------------------- BatchNorm's batch counts */

#define BN_COUNT_TENSOR 4 /* num_batches_tracked in a BatchNorm layer's t[] */

static bool is_batch_norm(const struct model_layer *l)
{
    return l->type && strncmp(l->type->name, "batch_norm", 10) == 0;
}

/* Reads (to_host) or writes every BatchNorm layer's num_batches_tracked. */
static ember_status sync_counts(struct model_block *block, bool to_host)
{
    ember_status st = EMBER_OK;
    for (int i = 0; i < block->count && st == EMBER_OK; i++) {
        struct model_layer *l = &block->layers[i];
        if (!l->type) {
            st = sync_counts(&l->body, to_host);
            if (st == EMBER_OK)
                st = sync_counts(&l->second, to_host);
        } else if (is_batch_norm(l)) {
            float count = (float)l->batches_tracked;
            if (to_host) {
                st = ember_tensor_read(l->t[BN_COUNT_TENSOR], &count, sizeof count);
                l->batches_tracked = (int64_t)count;
            } else {
                st = ember_tensor_write(l->t[BN_COUNT_TENSOR], &count, sizeof count);
            }
        }
    }
    return st;
}

ember_status model_counts_write_back(struct ember_model *m)
{
    if (!m->counts_dirty)
        return EMBER_OK;
    m->counts_dirty = false;
    return sync_counts(&m->file.root, false);
}

/* -------------------------------------------------------------- running */

/* a seed for each (model, forward, layer), for dropout's masks */
static uint64_t layer_seed(const struct ember_model *m, const struct model_layer *l)
{
    uint64_t z = m->seed ^ (m->forwards * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)l->index << 40);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Whether layers i and i + 1 are a ReLU and then a max-pool. Run the other
 * way round they give the same output and the same gradients: ReLU keeps
 * positive values and makes the rest 0, so the largest of a window, where
 * positive, is the same element either way, and where it is not, both
 * orders pass back a gradient of 0 (docs/design.md, "The model's forward
 * pass"). Pooling first leaves ReLU a quarter of the elements for a 2x2
 * window, forward and backward. The orders differ only for a window that
 * holds a NaN: ReLU makes it 0 before the pool, the pool keeps it after. */
static bool relu_then_max_pool(const struct model_block *block, int i)
{
    const struct model_layer *l = &block->layers[i];
    return i + 1 < block->count && l[0].type && l[1].type && strcmp(l[0].type->name, "relu") == 0 &&
           strcmp(l[1].type->name, "max_pool2d") == 0;
}

/* Whether layers i and i + 1 are a batch norm and then a ReLU: run as one op,
 * ember_batch_norm_relu, whose passes over x and dy do both (the same output
 * and gradients, one pass less each way). */
static bool batch_norm_then_relu(const struct model_block *block, int i)
{
    const struct model_layer *l = &block->layers[i];
    return i + 1 < block->count && l[0].type && l[1].type &&
           strncmp(l[0].type->name, "batch_norm", 10) == 0 && strcmp(l[1].type->name, "relu") == 0;
}

/* Whether layers i and i + 1 are a convolution and the batch norm of its
 * channels, or a linear layer and the batch norm of its features: in
 * evaluation, one layer whose weights the batch norm is folded into. */
static bool layer_then_batch_norm(const struct model_block *block, int i)
{
    const struct model_layer *l = &block->layers[i];
    if (i + 1 >= block->count || !l[0].type || !l[1].type)
        return false;
    return (strcmp(l[0].type->name, "conv2d") == 0 && strcmp(l[1].type->name, "batch_norm2d") == 0) ||
           (strcmp(l[0].type->name, "linear") == 0 && strcmp(l[1].type->name, "batch_norm1d") == 0);
}

static ember_tensor *run_block(struct ember_model *m, struct model_block *block, ember_tensor *x, bool fold);

/* a block: its lists from x, joined (models-impl.h, enum model_join) */
static ember_tensor *run_join(struct ember_model *m, struct model_layer *l, ember_tensor *x, bool fold)
{
    ember_tensor *body = l->body.count ? run_block(m, &l->body, x, fold) : x;
    ember_tensor *second = l->second.count ? run_block(m, &l->second, x, fold) : x;
    if (!body || !second)
        return NULL;
    if (l->join == JOIN_CONCAT)
        return ember_concat((ember_tensor *[]){body, second}, 2, 1);
    if (l->join == JOIN_GATE) { /* (N, C) or (N, C, 1, 1) spread over x (N, C, H, W) */
        int64_t per_channel[4] = {ember_tensor_dim(x, 0), ember_tensor_dim(x, 1), 1, 1};
        if (ember_tensor_ndim(body) == 2 && ember_tensor_ndim(x) == 4)
            body = ember_reshape(body, 4, per_channel);
        return body ? ember_mul(x, body) : NULL;
    }
    return ember_add(body, second); /* (N, body's shape) */
}

/* `fold`: in evaluation, where a batch norm's statistics are the running
 * ones, constants, it is folded into the convolution or linear layer
 * before it (ember_batch_norm_fold: the same outputs, and gradients where
 * something records, with one pass over the activations less). In
 * training its statistics are the batch's, which depend on that layer's
 * output. */
static ember_tensor *run_block(struct ember_model *m, struct model_block *block, ember_tensor *x, bool fold)
{
    for (int i = 0; x && i < block->count; i++) {
        struct model_layer *l = &block->layers[i];
        if (!l->type) {
            x = run_join(m, l, x, fold);
        } else if (fold && layer_then_batch_norm(block, i)) {
            /* the relu after them too, unless a max-pool follows it: then
             * the two run pool first (relu_then_max_pool) */
            bool relu = i + 2 < block->count && block->layers[i + 2].type &&
                        strcmp(block->layers[i + 2].type->name, "relu") == 0 &&
                        !relu_then_max_pool(block, i + 2);
            x = model_folded_batch_norm_forward(l, &block->layers[i + 1], x, relu);
            i += relu ? 2 : 1;
        } else if (batch_norm_then_relu(block, i)) {
            x = model_batch_norm_relu_forward(l, x, m->training);
            i++;
        } else if (relu_then_max_pool(block, i)) {
            struct model_layer *pool = &block->layers[++i];
            x = pool->type->forward(pool, x, m->training, layer_seed(m, pool));
            x = x ? l->type->forward(l, x, m->training, layer_seed(m, l)) : NULL;
        } else {
            x = l->type->forward(l, x, m->training, layer_seed(m, l));
        }
    }
    return x;
}

ember_tensor *model_run(struct ember_model *m, ember_tensor *x)
{
    return run_block(m, &m->file.root, x, !m->training);
}

ember_tensor *ember_model_forward(ember_model *m, ember_tensor *x)
{
    if (!m || !x)
        return NULL;
    /* check the batch against the input the model was built for */
    bool fits = ember_tensor_ndim(x) == m->sample_ndim + 1;
    for (int i = 0; fits && i < m->sample_ndim; i++)
        fits = ember_tensor_dim(x, i + 1) == m->sample_shape[i];
    if (!fits) {
        char want[64];
        ember_set_error(m->ctx, EMBER_ERR_ARG, "%s was built for samples of %s, not this batch's", m->name,
                        model_shape_str(m->sample_ndim, m->sample_shape, want, sizeof want));
        return NULL;
    }
    /* with recording off nothing needs the layers' outputs once the next
     * layer has run: only the logits stay on the tape */
    ember_tape_mark mark = ember_tape_mark_now(m->ctx);
    bool recording = ember_grad_enabled(m->ctx);
    ember_tensor *y;
    if (m->forward_fn) {
        y = m->forward_fn(m->user, m->params, x, m->training);
        if (m->training) /* counted as the layers' are: the function's dropout may draw from it */
            m->forwards++;
    } else {
        if (m->training && !m->counts_known) {
            if (sync_counts(&m->file.root, true) != EMBER_OK)
                return NULL;
            m->counts_known = true;
        }
        y = model_run(m, x);
        if (m->training) {
            m->forwards++;
            m->counts_dirty = true;
        }
    }
    if (!recording)
        ember_tape_release_since(m->ctx, mark, y);
    return y;
}

ember_status ember_model_set_training(ember_model *m, bool training)
{
    if (!m)
        return EMBER_ERR_ARG;
    if (m->training == training)
        return EMBER_OK;
    m->training = training;
    return training ? EMBER_OK : model_counts_write_back(m); /* a failure is the device's, on the context */
}

bool ember_model_training(const ember_model *m) { return m && m->training; }
ember_params *ember_model_params(ember_model *m) { return m ? m->params : NULL; }
const char *ember_model_name(const ember_model *m) { return m ? m->name : NULL; }
const char *ember_model_describe(const ember_model *m) { return m ? m->describe : NULL; }
const char *ember_model_text(const ember_model *m) { return m ? m->text : NULL; }
int ember_model_classes(const ember_model *m) { return m ? m->classes : 0; }

int ember_model_sample_shape(const ember_model *m, int64_t *shape)
{
    if (!m)
        return 0;
    if (shape)
        memcpy(shape, m->sample_shape, (size_t)m->sample_ndim * sizeof *shape);
    return m->sample_ndim;
}

/* -------------------------------------------------------------- summary */

struct row_walk {
    const struct model_layer *found;
    int depth, target, at;
    bool grad_flows; /* whether a layer before this one has parameters */
    bool grad_before_found;
};

static void find_row(struct row_walk *w, const struct model_block *block, int depth)
{
    for (int i = 0; i < block->count && !w->found; i++) {
        const struct model_layer *l = &block->layers[i];
        if (w->at++ == w->target) {
            w->found = l;
            w->depth = depth;
            w->grad_before_found = w->grad_flows;
            return;
        }
        if (!l->type) {
            find_row(w, &l->body, depth + 1);
            find_row(w, &l->second, depth + 1);
        }
        if (l->params)
            w->grad_flows = true;
    }
}

static int count_rows(const struct model_block *block)
{
    int n = 0;
    for (int i = 0; i < block->count; i++)
        n += 1 + (block->layers[i].type
                      ? 0
                      : count_rows(&block->layers[i].body) + count_rows(&block->layers[i].second));
    return n;
}

static int64_t block_params(const struct model_block *block)
{
    int64_t n = 0;
    for (int i = 0; i < block->count; i++)
        n += block->layers[i].params + block_params(&block->layers[i].body) +
             block_params(&block->layers[i].second);
    return n;
}

int ember_model_layer_count(const ember_model *m) { return m ? count_rows(&m->file.root) : 0; }

/* The backward pass of conv2d and linear computes the weights' gradient
 * (as many operations as the forward's products) and, unless nothing
 * before the layer needs one, the input's (as many again); the other
 * layers' backward costs about what their forward does. */
ember_status ember_model_layer_info(const ember_model *m, int index, ember_layer_info *info)
{
    if (!m || !info)
        return EMBER_ERR_ARG;
    struct row_walk w = {.target = index};
    find_row(&w, &m->file.root, 0);
    if (!w.found)
        return ember_set_error(m->ctx, EMBER_ERR_ARG, "%s has no layer %d", m->name, index);
    const struct model_layer *l = w.found;
    memset(info, 0, sizeof *info);
    info->name = l->full_name;
    info->type = l->type ? l->type->name : model_join_name(l->join);
    info->depth = w.depth;
    info->line = l->line;
    info->out_ndim = l->out_ndim;
    memcpy(info->out_shape, l->out_shape, sizeof info->out_shape);
    if (!l->type) {
        static const char *const joins[][2] = {{"body + input", "body + shortcut"},
                                               {"cat(body, input)", "cat(body, branch)"},
                                               {"input * body", "input * body"}};
        snprintf(info->describe, sizeof info->describe, "%s", joins[l->join][l->second.count > 0]);
        if (l->join == JOIN_CONCAT && !l->body.count)
            snprintf(info->describe, sizeof info->describe, "%s",
                     l->second.count ? "cat(input, branch)" : "cat(input, input)");
        info->params = block_params(&l->body) + block_params(&l->second);
        double numel =
            1.0; /* the join, one operation an element (a concat: a copy); its gradient passes through */
        for (int d = 0; d < l->out_ndim; d++)
            numel *= (double)l->out_shape[d];
        info->forward_flops = numel;
        return EMBER_OK;
    }
    l->type->describe(l, info->describe, sizeof info->describe);
    info->params = l->params;
    info->forward_flops = l->type->flops(l);
    bool products = strcmp(l->type->name, "conv2d") == 0 || strcmp(l->type->name, "linear") == 0 ||
                    strcmp(l->type->name, "attention") == 0;
    info->backward_flops =
        products ? info->forward_flops * (w.grad_before_found ? 2.0 : 1.0) : info->forward_flops;
    return EMBER_OK;
}

/* ------------------------------------------------------------ evaluation */

ember_status ember_model_evaluate(ember_model *m, ember_dataset *data, int64_t batch, double *accuracy,
                                  double *loss)
{
    return ember_model_evaluate_confusion(m, data, batch, accuracy, loss, NULL);
}

ember_status ember_model_evaluate_confusion(ember_model *m, ember_dataset *data, int64_t batch,
                                            double *accuracy, double *loss, int64_t *confusion)
{
    if (!m || !data)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = m->ctx;
    ember_batcher *batches = ember_batcher_new(data, batch, false, 0);
    if (!batches)
        return ember_last_status(ctx);
    /* a sequence model scores every position of a sample (text: each of its tokens) */
    int64_t classes = m->classes, correct = 0, seen = 0, scored = 0;
    int64_t positions = ember_dataset_is_sequence(data) ? ember_dataset_sample_shape(data)[0] : 1;
    bool ignores = ember_dataset_ignores(data); /* a chat's: scored on the replies alone */
    double loss_sum = 0.0;
    float *logits = malloc((size_t)(batch * positions * classes) * sizeof *logits);
    int32_t *labels = malloc((size_t)(batch * positions) * sizeof *labels);
    bool was_training = m->training;
    ember_status st = EMBER_OK;
    if (!logits || !labels) {
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for evaluation");
        goto done;
    }
    if (confusion)
        memset(confusion, 0, (size_t)(classes * classes) * sizeof *confusion);
    ember_model_set_training(m, false);
    bool was = ember_set_grad_enabled(ctx, false);
    /* the caller's tape (a validation pass inside a training step) stays */
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    ember_tensor *x, *y;
    while (st == EMBER_OK && (st = ember_batcher_next(batches, &x, &y)) == EMBER_OK && x) {
        int64_t n = ember_tensor_dim(x, 0), rows = ember_tensor_numel(y);
        ember_tensor *out = ember_model_forward(m, x);
        ember_tensor *l = ignores ? ember_cross_entropy_ignore(out, y) : ember_cross_entropy(out, y);
        float value;
        if (!l || (st = ember_tensor_item(l, &value)) != EMBER_OK ||
            (st = ember_tensor_read(out, logits, (size_t)(rows * classes) * sizeof *logits)) != EMBER_OK ||
            (st = ember_tensor_read(y, labels, (size_t)rows * sizeof *labels)) != EMBER_OK) {
            if (st == EMBER_OK)
                st = ember_last_status(ctx);
            break;
        }
        int64_t kept = 0; /* the targets the loss counts: a chat's ignored ones are not */
        for (int64_t i = 0; i < rows; i++) {
            if (labels[i] == EMBER_IGNORE_INDEX)
                continue;
            kept++;
            const float *row = logits + i * classes;
            int64_t best = 0;
            for (int64_t k = 1; k < classes; k++)
                if (row[k] > row[best])
                    best = k;
            correct += best == labels[i];
            if (confusion && labels[i] >= 0 && labels[i] < classes)
                confusion[labels[i] * classes + best]++;
        }
        /* each batch's mean weighted by what it scored: the mean over every target */
        loss_sum += (double)value * (double)(ignores ? kept : n);
        seen += n;
        scored += kept;
        ember_tape_release_since(ctx, mark, NULL);
    }
    ember_tape_release_since(ctx, mark, NULL);
    ember_set_grad_enabled(ctx, was);
    ember_model_set_training(m, was_training);
    if (st == EMBER_OK && seen != ember_dataset_count(data)) /* the batcher stopped early */
        st = ember_last_status(ctx) != EMBER_OK ? ember_last_status(ctx) : EMBER_ERR_DEVICE;
    if (st == EMBER_OK && seen > 0) {
        if (accuracy)
            *accuracy = scored ? (double)correct / (double)scored : 0.0;
        if (loss)
            *loss = ignores ? (scored ? loss_sum / (double)scored : 0.0) : loss_sum / (double)seen;
    }
done:
    free(logits);
    free(labels);
    ember_batcher_free(batches);
    return st;
}
