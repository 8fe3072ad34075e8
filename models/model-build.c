/* SPDX-License-Identifier: MIT */
/*
 * models/model-build.c — a parsed model made real for one input shape.
 *
 * The walk goes through the layers in file order, carrying the shape of one
 * sample: each layer checks that it fits the shape it gets and gives its
 * own, then adds its parameters under the name PyTorch would give them.
 * A layer's name is the one written before its colon, or else its index in
 * its list, as nn.Sequential numbers its children ("0.weight",
 * "features.3.bias"); a block's layers are named inside the block's name
 * ("layer1.0.conv1.weight"), and an unnamed layer of its second list as
 * "shortcut.0" (a residual's) or "branch.0" (a concat's) inside it. Parameters are initialised in file
 * order from one generator, so a seed gives the same network every time.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "models-impl.h"

struct walk {
    struct model_build *b;
    int classes;
    int next_index;
    const struct model_layer **named; /* every layer so far, for duplicate names */
    int count, cap;
};

/* "source:line:column: what", with `status`: EMBER_ERR_FORMAT for the
 * file's own mistakes (names), EMBER_ERR_ARG (fail_at) for a layer that
 * does not fit the shapes, as docs/models.md says */
static ember_status vfail(struct walk *w, const struct model_layer *l, ember_status status, const char *fmt,
                          va_list ap)
{
    char what[768];
    vsnprintf(what, sizeof what, fmt, ap);
    return ember_set_error(w->b->ctx, status, "%s:%d:%d: %s", w->b->source, l->line, l->column, what);
}

static ember_status fail_at(struct walk *w, const struct model_layer *l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ember_status fail_at(struct walk *w, const struct model_layer *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ember_status st = vfail(w, l, EMBER_ERR_ARG, fmt, ap);
    va_end(ap);
    return st;
}

static ember_status fail_with(struct walk *w, const struct model_layer *l, ember_status status,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static ember_status fail_with(struct walk *w, const struct model_layer *l, ember_status status,
                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ember_status st = vfail(w, l, status, fmt, ap);
    va_end(ap);
    return st;
}

/* the layer whose parameter is named `name` */
static const struct model_layer *param_owner(const struct walk *w, const char *name)
{
    for (int k = 0; k < w->count; k++)
        for (int i = w->named[k]->param_first; i < w->named[k]->param_first + w->named[k]->param_count; i++)
            if (strcmp(ember_params_name(w->b->params, i), name) == 0)
                return w->named[k];
    return NULL;
}

/* where a shape came from, for messages: "the input" or "conv2d at line 3" */
static void origin(const struct model_layer *before, char *out, size_t len)
{
    if (!before)
        snprintf(out, len, "the input");
    else
        snprintf(out, len, "%s at line %d", before->type ? before->type->name : model_join_name(before->join),
                 before->line);
}

static ember_status build_block(struct walk *w, struct model_block *block, const char *prefix,
                                const char *second, int *ndim, int64_t *shape,
                                const struct model_layer **before);

/* A block's two lists from the same input, and the shape their join
 * gives: body + second, cat(body, second) or x * body. */
static ember_status build_join(struct walk *w, struct model_layer *l, int *ndim, int64_t *shape,
                               const struct model_layer **before)
{
    int body_ndim = *ndim, sc_ndim = *ndim;
    int64_t body_shape[3], sc_shape[3];
    memcpy(body_shape, shape, sizeof body_shape);
    memcpy(sc_shape, shape, sizeof sc_shape);
    const struct model_layer *body_before = *before, *sc_before = *before;
    ember_status st = build_block(w, &l->body, l->full_name, NULL, &body_ndim, body_shape, &body_before);
    if (st == EMBER_OK && l->second.count)
        st = build_block(w, &l->second, l->full_name, model_join_second(l->join), &sc_ndim, sc_shape,
                         &sc_before);
    if (st != EMBER_OK)
        return st;
    char body_s[64], sc_s[64];
    model_shape_str(body_ndim, body_shape, body_s, sizeof body_s);
    model_shape_str(sc_ndim, sc_shape, sc_s, sizeof sc_s);
    if (l->join == JOIN_GATE) { /* x * body(x): (C, 1, 1) or (C) spread over (C, H, W), or x's shape */
        bool channels = *ndim == 3 && body_shape[0] == shape[0] &&
                        (body_ndim == 1 || (body_ndim == 3 && body_shape[1] == 1 && body_shape[2] == 1));
        bool same = body_ndim == *ndim && memcmp(body_shape, shape, (size_t)*ndim * sizeof *shape) == 0;
        if (!channels && !same)
            return fail_at(w, l,
                           "the gate block's body gives %s for its input %s: the two are multiplied, so the "
                           "body gives the input's shape, or one value a channel (%lldx1x1 or %lld)",
                           body_s, sc_s, (long long)shape[0], (long long)shape[0]);
        return EMBER_OK;
    }
    if (l->join == JOIN_CONCAT) { /* along the channels of images, the features of vectors */
        bool fits = body_ndim == sc_ndim && body_ndim != 2;
        for (int i = 1; fits && i < body_ndim; i++)
            fits = body_shape[i] == sc_shape[i];
        if (!fits)
            return fail_at(w, l,
                           "the concat block's branches give %s and %s (line %d): they are joined along the "
                           "channels of images (C, H, W) or the features of vectors, so the rest must match",
                           body_s, sc_s, l->second_line);
        *ndim = body_ndim;
        memcpy(shape, body_shape, sizeof body_shape);
        shape[0] += sc_shape[0];
        return EMBER_OK;
    }
    bool same = body_ndim == sc_ndim && memcmp(body_shape, sc_shape, (size_t)body_ndim * sizeof *shape) == 0;
    if (!same) {
        if (l->second.count)
            return fail_at(w, l,
                           "the residual block's body gives %s but its shortcut (line %d) gives %s: "
                           "the two are added, so their shapes must match",
                           body_s, l->second_line, sc_s);
        return fail_at(
            w, l,
            "the residual block's body gives %s but its input is %s: the two are added, so "
            "they must match; add a \"shortcut\" with a projection such as "
            "\"conv2d %lld kernel=1 stride=%lld bias=false\"",
            body_s, sc_s, (long long)body_shape[0],
            (long long)(body_ndim == 3 && sc_ndim == 3 && body_shape[1] ? sc_shape[1] / body_shape[1] : 1));
    }
    *ndim = body_ndim;
    memcpy(shape, body_shape, sizeof body_shape);
    return EMBER_OK;
}

static ember_status build_layer(struct walk *w, struct model_layer *l, int *ndim, int64_t *shape,
                                const struct model_layer **before)
{
    char have[64], from[96], why[256] = "";
    l->in_ndim = *ndim;
    memcpy(l->in_shape, shape, sizeof l->in_shape);
    l->index = w->next_index++;

    if (!l->type) {
        ember_status st = build_join(w, l, ndim, shape, before);
        if (st != EMBER_OK)
            return st;
        l->out_ndim = *ndim;
        memcpy(l->out_shape, shape, sizeof l->out_shape);
        *before = l;
        return EMBER_OK;
    }

    /* "classes" stands for the data's class count */
    for (int k = 0; k < MODEL_MAX_OPTIONS && l->type->options[k].name; k++)
        if (l->type->options[k].word && strcmp(l->type->options[k].word, "classes") == 0 &&
            l->value[k] == l->type->options[k].word_value)
            l->value[k] = w->classes;
    if (!l->type->infer(l, *ndim, shape, &l->out_ndim, l->out_shape, why, sizeof why)) {
        origin(*before, from, sizeof from);
        return fail_at(w, l, "%s does not fit the %s it gets from %s: %s", l->type->name,
                       model_shape_str(*ndim, shape, have, sizeof have), from, why);
    }
    if (l->type->add_params) {
        int first = ember_params_count(w->b->params);
        w->b->taken[0] = '\0';
        if (l->type->add_params(l, w->b, l->full_name) != EMBER_OK) {
            const struct model_layer *owner = w->b->taken[0] ? param_owner(w, w->b->taken) : NULL;
            if (owner)
                return fail_with(
                    w, l, EMBER_ERR_FORMAT,
                    "a parameter of this layer would be named \"%s\", as the "
                    "parameter \"%s\" of the %s at line %d is: give one of the two layers another name",
                    w->b->taken, w->b->taken, owner->type->name, owner->line);
            return fail_with(w, l, ember_last_status(w->b->ctx), "%s", ember_last_error(w->b->ctx));
        }
        l->param_first = first;
        l->param_count = ember_params_count(w->b->params) - first;
        for (int i = first; i < ember_params_count(w->b->params); i++)
            if (!ember_params_is_buffer(w->b->params, i))
                l->params += ember_tensor_numel(ember_params_at(w->b->params, i));
    }
    *ndim = l->out_ndim;
    memcpy(shape, l->out_shape, sizeof l->out_shape);
    *before = l;
    return EMBER_OK;
}

/* `second`: the block's second list's word ("shortcut", "branch"), which
 * prefixes its unnamed layers' indices; NULL for any other list */
static ember_status build_block(struct walk *w, struct model_block *block, const char *prefix,
                                const char *second, int *ndim, int64_t *shape,
                                const struct model_layer **before)
{
    for (int i = 0; i < block->count; i++) {
        struct model_layer *l = &block->layers[i];
        const char *dot = *prefix ? "." : "";
        int len = 0;
        if (strcmp(l->name, "self") == 0)
            l->full_name[0] = '\0';
        else if (l->name[0])
            len = snprintf(l->full_name, sizeof l->full_name, "%s%s%s", prefix, dot, l->name);
        else
            len = snprintf(l->full_name, sizeof l->full_name, "%s%s%s%s%d", prefix, dot, second ? second : "",
                           second ? "." : "", i);
        if (len >= (int)sizeof l->full_name)
            return fail_at(w, l, "the name \"%s%s%s\" is over %d characters", prefix, dot, l->name,
                           (int)sizeof l->full_name - 1);
        /* two residual blocks may share a name, a prefix for their layers (a
         * transformer block's two halves); their layers' names must differ */
        for (int k = 0; k < w->count && l->full_name[0]; k++)
            if (strcmp(w->named[k]->full_name, l->full_name) == 0 && (l->type || w->named[k]->type))
                return fail_with(
                    w, l, EMBER_ERR_FORMAT, "the name \"%s\" is taken by the %s at line %d", l->full_name,
                    w->named[k]->type ? w->named[k]->type->name : model_join_name(w->named[k]->join),
                    w->named[k]->line);
        if (w->count == w->cap) {
            int cap = w->cap ? 2 * w->cap : 64;
            const struct model_layer **named = realloc(w->named, (size_t)cap * sizeof *named);
            if (!named)
                return ember_set_error(w->b->ctx, EMBER_ERR_NOMEM, "out of host memory building %s",
                                       w->b->source);
            w->named = named;
            w->cap = cap;
        }
        w->named[w->count++] = l;
        ember_status st = build_layer(w, l, ndim, shape, before);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

/* A module of the PyTorch twin: a layer's name, or a part of one before a
 * dot ("layer1" of "layer1.0.conv1"), and the layer that makes it. */
struct module_path {
    const char *text;
    size_t len;
    const struct model_layer *layer;
};

static int compare_paths(const void *a, const void *b)
{
    const struct module_path *x = a, *y = b;
    int c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Every parameter's name is one a PyTorch module could hold: not also the
 * name of a module ("fc.weight: linear" beside "fc: linear", whose weight
 * is fc.weight). Sorted, so a file of thousands of layers costs little. */
static ember_status check_names(struct walk *w)
{
    size_t n = 0, cap = 0;
    for (int k = 0; k < w->count; k++)
        for (const char *c = w->named[k]->full_name; *c; c++)
            cap += *c == '.';
    cap += (size_t)w->count;
    struct module_path *paths = malloc((cap ? cap : 1) * sizeof *paths);
    if (!paths)
        return ember_set_error(w->b->ctx, EMBER_ERR_NOMEM, "out of host memory building %s", w->b->source);
    for (int k = 0; k < w->count; k++) {
        const char *name = w->named[k]->full_name;
        size_t len = strlen(name);
        for (size_t i = 1; i <= len; i++)
            if (i == len || name[i] == '.')
                paths[n++] = (struct module_path){name, i, w->named[k]};
    }
    qsort(paths, n, sizeof *paths, compare_paths);
    ember_status st = EMBER_OK;
    for (int k = 0; k < w->count && st == EMBER_OK; k++) {
        const struct model_layer *l = w->named[k];
        for (int i = l->param_first; i < l->param_first + l->param_count && st == EMBER_OK; i++) {
            const char *param = ember_params_name(w->b->params, i), *attr = strrchr(param, '.');
            struct module_path key = {param, strlen(param), NULL};
            const struct module_path *hit = n ? bsearch(&key, paths, n, sizeof *paths, compare_paths) : NULL;
            if (hit)
                st = fail_with(w, hit->layer, EMBER_ERR_FORMAT,
                               "\"%s\" is both a layer and the %s of the %s at line "
                               "%d: no PyTorch module can hold both; give the layer another name",
                               param, attr ? attr + 1 : param, l->type->name, l->line);
        }
    }
    free(paths);
    return st;
}

ember_status model_file_build(struct model_file *file, struct model_build *b, int ndim, const int64_t *shape,
                              int classes)
{
    char want[64], have[64];
    if (ndim < 1 || ndim > 3)
        return ember_set_error(b->ctx, EMBER_ERR_ARG, "%s: a sample has 1 to 3 dimensions, not %d", b->source,
                               ndim);
    if (file->input_ndim &&
        (file->input_ndim != ndim || memcmp(file->input_shape, shape, (size_t)ndim * sizeof *shape) != 0))
        return ember_set_error(b->ctx, EMBER_ERR_ARG,
                               "%s:%d:%d: this model is for input %s, but the samples are %s", b->source,
                               file->input_line, file->input_column,
                               model_shape_str(file->input_ndim, file->input_shape, want, sizeof want),
                               model_shape_str(ndim, shape, have, sizeof have));
    struct walk w = {.b = b, .classes = classes};
    int out_ndim = ndim;
    int64_t out[3] = {0};
    memcpy(out, shape, (size_t)ndim * sizeof *shape);
    const struct model_layer *last = NULL;
    ember_status st = build_block(&w, &file->root, "", NULL, &out_ndim, out, &last);
    if (st == EMBER_OK)
        st = check_names(&w);
    free(w.named);
    if (st != EMBER_OK)
        return st;
    /* the class scores, or a sequence's (T, classes): scores at every position */
    if ((out_ndim != 1 || out[0] != classes) && (out_ndim != 2 || out[1] != classes)) {
        model_shape_str(out_ndim, out, have, sizeof have);
        if (out_ndim == 2)
            return fail_at(&w, last,
                           "the model ends with %s, but a sequence's model gives the %d class scores "
                           "at each position: end with \"linear classes\"",
                           have, classes);
        if (out_ndim != 1)
            return fail_at(&w, last,
                           "the model ends with %s, but it must give the %d class scores: end with "
                           "flatten (or global_avg_pool2d) and \"linear classes\"",
                           have, classes);
        return fail_at(&w, last,
                       "the model ends with %s features, but the data has %d classes: make the last "
                       "layer \"linear classes\"",
                       have, classes);
    }
    return EMBER_OK;
}
