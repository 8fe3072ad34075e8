/* SPDX-License-Identifier: MIT */
/*
 * models/model-generate.c — text from a model of text (gpt-tiny), a token
 * at a time, with a key/value cache.
 *
 * A GPT's scores for position t depend on the tokens up to t alone (the
 * causal mask), and each attention layer's keys and values for a position
 * never change once made. So the cache keeps them: each attention layer
 * holds (2, 1, heads, context, head size) of them, and a new token runs
 * through the layers as a sequence of one, its position embedding the
 * next position's, its query attending over the cache (ember_attention_
 * cached). One token costs one position's work, not the whole window's.
 *
 * Without the cache (`no_cache`), every token runs the model over the last
 * `context` tokens and keeps the last position's scores: the same numbers
 * by another road, which is how the tests hold the cache to account.
 *
 * The model sees at most its context. When the cache is full, it starts
 * again from the last half of the text (one pass over those tokens), so a
 * token sees between half a context and a whole one before it; without
 * the cache, always the last whole context. The two therefore agree token
 * for token while the text fits in the context.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models-impl.h"

struct ember_generator {
    struct ember_model *model;
    ember_generate_options options;
    ember_rng rng;
    int64_t context;
    int32_t *tokens; /* every token fed, in order */
    int64_t count, cap;
    int64_t cached;           /* with the cache: how many of the window's tokens it holds */
    int64_t window;           /* where the window (the cache's first position) starts in tokens */
    float *scores;            /* (classes): the model's scores for the token after the last fed */
    float *sorted;            /* scratch for top-k */
    bool ready;               /* scores hold the last token's */
    ember_tensor *caches[64]; /* one per attention layer, in file order */
    int layers, made;
};

/* every layer of a block, depth-first, in file order */
static void each_layer(struct model_block *block, void (*fn)(struct model_layer *l, void *arg), void *arg)
{
    for (int i = 0; i < block->count; i++) {
        struct model_layer *l = &block->layers[i];
        if (l->type)
            fn(l, arg);
        each_layer(&l->body, fn, arg);
        each_layer(&l->second, fn, arg);
    }
}

static bool is_attention(const struct model_layer *l) { return strcmp(l->type->name, "attention") == 0; }

/* Generation's setting of a layer: its position, and attention's cache
 * (NULL: none) in the order the layers come. */
struct setting {
    ember_generator *g;
    int64_t position;
    bool cache;
    int at;
};

static void set_layer(struct model_layer *l, void *arg)
{
    struct setting *s = arg;
    l->position = s->position;
    if (is_attention(l))
        l->cache = s->cache ? s->g->caches[s->at++] : NULL;
}

static void count_attention(struct model_layer *l, void *arg)
{
    if (is_attention(l))
        (*(int *)arg)++;
}

/* the model's layers back as training and evaluation use them */
static void reset_layers(ember_generator *g)
{
    struct setting s = {.g = g};
    each_layer(&g->model->file.root, set_layer, &s);
}

/* attention layer l's cache, (2, 1, heads, context, head size), zeroed */
static void make_cache(struct model_layer *l, void *arg)
{
    ember_generator *g = arg;
    if (!is_attention(l))
        return;
    int64_t heads = (int64_t)model_layer_option(l, "heads"), c = l->in_shape[1];
    const int64_t shape[5] = {2, 1, heads, g->context, c / heads};
    g->caches[g->made++] = ember_tensor_new(g->model->ctx, EMBER_F32, 5, shape);
}

ember_generator *ember_generator_new(ember_model *m, const ember_generate_options *options)
{
    static const ember_generate_options greedy = {0};
    if (!m)
        return NULL;
    const ember_generate_options *o = options ? options : &greedy;
    struct model_block *root = &m->file.root;
    bool text = m->sample_ndim == 1 && root->count > 0 && root->layers[root->count - 1].out_ndim == 2;
    if (!text) {
        ember_set_error(m->ctx, EMBER_ERR_ARG,
                        "%s is not a model of text: generation needs one that takes a "
                        "sequence of tokens and scores every position (gpt-tiny)",
                        m->name);
        return NULL;
    }
    if (!(o->temperature >= 0.0f) || o->top_k < 0) {
        ember_set_error(m->ctx, EMBER_ERR_ARG,
                        "generation: the temperature (%g) and top-k (%d) must be 0 or more", o->temperature,
                        o->top_k);
        return NULL;
    }
    ember_generator *g = calloc(1, sizeof *g);
    if (!g) {
        ember_set_error(m->ctx, EMBER_ERR_NOMEM, "out of host memory for generation");
        return NULL;
    }
    g->model = m;
    g->options = *o;
    g->rng = ember_rng_seed(o->seed);
    g->context = m->sample_shape[0];
    g->scores = malloc((size_t)m->classes * sizeof *g->scores);
    g->sorted = malloc((size_t)m->classes * sizeof *g->sorted);
    each_layer(root, count_attention, &g->layers);
    if (!g->scores || !g->sorted || g->layers > (int)(sizeof g->caches / sizeof g->caches[0])) {
        g->layers = 0;
        ember_set_error(m->ctx, EMBER_ERR_NOMEM,
                        "generation: out of host memory, or over %d attention layers",
                        (int)(sizeof g->caches / sizeof g->caches[0]));
        ember_generator_free(g);
        return NULL;
    }
    /* each attention layer's cache: (2, 1, heads, context, head size) */
    if (!o->no_cache)
        each_layer(root, make_cache, g);
    for (int i = 0; !o->no_cache && i < g->layers; i++)
        if (!g->caches[i]) {
            ember_generator_free(g);
            return NULL;
        }
    return g;
}

void ember_generator_free(ember_generator *g)
{
    if (!g)
        return;
    reset_layers(g);
    for (int i = 0; i < g->layers; i++)
        ember_tensor_free(g->caches[i]);
    free(g->tokens);
    free(g->scores);
    free(g->sorted);
    free(g);
}

/* Runs tokens[first, first + n) through the model at positions
 * [position, position + n), through the caches or not, and keeps the
 * last position's scores. Evaluation mode, nothing recorded, and nothing
 * left on the tape. */
static ember_status run(ember_generator *g, int64_t first, int64_t n, int64_t position)
{
    struct ember_model *m = g->model;
    ember_ctx *ctx = m->ctx;
    struct setting s = {.g = g, .position = position, .cache = !g->options.no_cache};
    each_layer(&m->file.root, set_layer, &s);
    bool was_training = m->training, was_recording = ember_set_grad_enabled(ctx, false);
    ember_model_set_training(m, false);
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    const int64_t shape[2] = {1, n};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_I32, 2, shape);
    ember_status st =
        x ? ember_tensor_write(x, g->tokens + first, (size_t)n * sizeof *g->tokens) : ember_last_status(ctx);
    ember_tensor *y = st == EMBER_OK ? model_run(m, x) : NULL; /* (1, n, classes) */
    ember_tensor *last = y ? ember_narrow(y, 1, n - 1, 1) : NULL;
    if (st == EMBER_OK)
        st = last ? ember_tensor_read(last, g->scores, (size_t)m->classes * sizeof *g->scores)
                  : ember_last_status(ctx);
    ember_tape_release_since(ctx, mark, NULL);
    ember_tensor_free(x);
    ember_model_set_training(m, was_training);
    ember_set_grad_enabled(ctx, was_recording);
    reset_layers(g);
    g->ready = st == EMBER_OK;
    return st;
}

ember_status ember_generator_feed(ember_generator *g, const int32_t *tokens, int64_t n)
{
    if (!g)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = g->model->ctx;
    if (n < 1 || !tokens)
        return ember_set_error(ctx, EMBER_ERR_ARG, "ember_generator_feed: give at least one token");
    for (int64_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= g->model->classes)
            return ember_set_error(ctx, EMBER_ERR_ARG,
                                   "ember_generator_feed: token %d is not one of the model's %d",
                                   (int)tokens[i], g->model->classes);
    if (g->count + n > g->cap) {
        int64_t cap = g->cap ? g->cap : 256;
        while (cap < g->count + n)
            cap *= 2;
        int32_t *grown = realloc(g->tokens, (size_t)cap * sizeof *grown);
        if (!grown)
            return ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for generation's tokens");
        g->tokens = grown;
        g->cap = cap;
    }
    memcpy(g->tokens + g->count, tokens, (size_t)n * sizeof *tokens);
    g->count += n;
    if (g->options.no_cache) { /* the last context's worth, from position 0 */
        int64_t len = g->count < g->context ? g->count : g->context;
        return run(g, g->count - len, len, 0);
    }
    int64_t pending = g->count - (g->window + g->cached);
    if (g->cached + pending > g->context) { /* full: start again from the last half context */
        int64_t keep = g->count < g->context / 2 ? g->count : (g->context / 2 > 0 ? g->context / 2 : 1);
        g->window = g->count - keep;
        g->cached = 0;
        pending = keep;
    }
    ember_status st = run(g, g->window + g->cached, pending, g->cached);
    if (st == EMBER_OK)
        g->cached += pending;
    return st;
}

/* the next token from the scores: the most likely at temperature 0, else
 * drawn from softmax(scores / temperature) over the top_k most likely */
static int32_t sample(ember_generator *g)
{
    int64_t classes = g->model->classes;
    const float *s = g->scores;
    int32_t best = 0;
    for (int64_t k = 1; k < classes; k++)
        if (s[k] > s[best])
            best = (int32_t)k;
    if (g->options.temperature == 0.0f)
        return best;
    float floor = -INFINITY; /* the k-th largest score: the smallest kept */
    if (g->options.top_k > 0 && g->options.top_k < classes) {
        memcpy(g->sorted, s, (size_t)classes * sizeof *s);
        for (int k = 0; k < g->options.top_k; k++) { /* a partial selection: k is small */
            int64_t at = k;
            for (int64_t j = k + 1; j < classes; j++)
                if (g->sorted[j] > g->sorted[at])
                    at = j;
            float t = g->sorted[k];
            g->sorted[k] = g->sorted[at];
            g->sorted[at] = t;
        }
        floor = g->sorted[g->options.top_k - 1];
    }
    double total = 0.0, inv_t = 1.0 / (double)g->options.temperature;
    for (int64_t k = 0; k < classes; k++)
        total += s[k] >= floor ? exp(((double)s[k] - s[best]) * inv_t) : 0.0;
    double u = (double)ember_rng_uniform(&g->rng, 0.0f, 1.0f) * total, sum = 0.0;
    for (int64_t k = 0; k < classes; k++) {
        sum += s[k] >= floor ? exp(((double)s[k] - s[best]) * inv_t) : 0.0;
        if (sum > u)
            return (int32_t)k;
    }
    return best; /* u at the very top, by rounding */
}

ember_status ember_generator_next(ember_generator *g, int32_t *token)
{
    if (!g || !token)
        return EMBER_ERR_ARG;
    if (!g->ready)
        return ember_set_error(g->model->ctx, EMBER_ERR_ARG,
                               "ember_generator_next: feed the prompt first (at least one token)");
    *token = sample(g);
    return ember_generator_feed(g, token, 1);
}

ember_status ember_model_generate(ember_model *model, const ember_generate_options *options,
                                  const int32_t *prompt, int64_t prompt_len, int64_t count, int32_t *out)
{
    ember_generator *g = ember_generator_new(model, options);
    if (!g)
        return model ? ember_last_status(model->ctx) : EMBER_ERR_ARG;
    ember_status st = ember_generator_feed(g, prompt, prompt_len);
    for (int64_t i = 0; st == EMBER_OK && i < count; i++)
        st = ember_generator_next(g, &out[i]);
    ember_generator_free(g);
    return st;
}
