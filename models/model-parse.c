/* SPDX-License-Identifier: MIT */
/*
 * models/model-parse.c — a model file's text into a tree of layers.
 *
 * The format is line-based (docs/models.md): blank lines and text after
 * "#" are ignored; a line is `input SHAPE`, a layer
 * `[name:] type [value] [key=value ...]`, or one of the words that shape a
 * block (`residual`, `concat` or `gate` opens it, `shortcut` or `branch`
 * starts its second list, `end` closes it). Every mistake is reported as "file:line:column: what is
 * wrong", pointing at the token to fix, and the parse stops at the first.
 * Shapes are not known here; model-build.c checks them.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models-impl.h"
#include "text-impl.h"

/* A model file is a few kilobytes; anything this long is not one. */
#define MODEL_MAX_TEXT   (1 << 20)
#define MODEL_MAX_TOKENS 16
#define MODEL_MAX_LAYERS 4096

struct token {
    const char *text; /* NUL-terminated copy in the line buffer */
    int column;
};

struct parser {
    ember_ctx *ctx;
    const char *source;
    int line;
    struct model_file *file;
    /* the lists open at this point: the root, then each block's */
    struct model_block *open[MODEL_MAX_DEPTH + 1];
    struct model_layer *open_layer[MODEL_MAX_DEPTH + 1]; /* the block owning open[i], i > 0 */
    int depth;
    int layers; /* in all, against MODEL_MAX_LAYERS */
};

static ember_status fail(struct parser *ps, int column, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ember_status fail(struct parser *ps, int column, const char *fmt, ...)
{
    char what[512];
    EMBER_FORMAT_ARGS(what, fmt);
    return ember_set_error(ps->ctx, EMBER_ERR_FORMAT, "%s:%d:%d: %s", ps->source, ps->line, column, what);
}

const char *model_shape_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndim && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "x" : "", (long long)shape[i]);
    return buf;
}

bool ember_parse_shape(const char *text, int *ndim, int64_t shape[3])
{
    int n = 0;
    const char *s = text;
    while (s && n < 3) {
        if (!isdigit((unsigned char)*s))
            return false;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno || v < 1 || v > EMBER_MAX_SAMPLE_SIDE)
            return false;
        shape[n++] = v;
        if (*end == '\0') {
            *ndim = n;
            return true;
        }
        if (*end != 'x')
            return false;
        s = end + 1;
    }
    return false;
}

/* A layer's name: PyTorch's module path ("features.0", "layer1.0.conv1"),
 * or "self" for the model's only parameters with no prefix at all. */
static bool valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= MODEL_NAME_MAX / 2 || name[0] == '.' || name[n - 1] == '.' || strstr(name, ".."))
        return false;
    for (const char *c = name; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.')
            return false;
    return true;
}

/* One value for option `spec` of a layer: a number in range, true/false,
 * or the option's word. */
static ember_status parse_value(struct parser *ps, const struct model_layer_type *type,
                                const struct model_option_spec *spec, const struct token *tok,
                                const char *text, double *value)
{
    if (spec->word && strcmp(text, spec->word) == 0) {
        *value = spec->word_value;
        return EMBER_OK;
    }
    char *end = NULL;
    double v = 0.0;
    bool ok;
    if (spec->kind == VALUE_BOOL) {
        ok = strcmp(text, "true") == 0 || strcmp(text, "false") == 0;
        v = strcmp(text, "true") == 0;
    } else {
        errno = 0;
        v = strtod(text, &end);
        ok = *text && end && *end == '\0' && errno == 0 && isfinite(v) && v >= spec->min && v <= spec->max &&
             (spec->kind == VALUE_FLOAT || v == floor(v));
    }
    if (ok) {
        *value = v;
        return EMBER_OK;
    }
    char range[160];
    if (spec->kind == VALUE_BOOL)
        snprintf(range, sizeof range, "true or false");
    else if (spec->kind == VALUE_INT)
        snprintf(range, sizeof range, "an integer from %.0f to %.0f", spec->min, spec->max);
    else
        snprintf(range, sizeof range, "a number from %g to %g", spec->min, spec->max);
    if (spec->word)
        snprintf(range + strlen(range), sizeof range - strlen(range), ", or \"%s\"", spec->word);
    return fail(ps, tok->column, "%s %s=%s: %s (%s) is %s", type->name, spec->name, text, spec->name,
                spec->about, range);
}

/* The options after the type: `value` for the positional one, key=value
 * for any; each once, every required one given. */
static ember_status parse_options(struct parser *ps, struct model_layer *layer, const struct token *tok,
                                  int count)
{
    const struct model_layer_type *type = layer->type;
    int n_opts = 0;
    const char *names[MODEL_MAX_OPTIONS];
    while (n_opts < MODEL_MAX_OPTIONS && type->options[n_opts].name)
        names[n_opts] = type->options[n_opts].name, n_opts++;
    for (int k = 0; k < n_opts; k++)
        layer->value[k] = type->options[k].fallback;

    for (int i = 0; i < count; i++) {
        char key[64];
        const char *eq = strchr(tok[i].text, '='), *value = eq ? eq + 1 : tok[i].text;
        if (eq) {
            size_t klen = (size_t)(eq - tok[i].text);
            if (klen == 0 || klen >= sizeof key)
                return fail(ps, tok[i].column, "\"%s\": an option is key=value", tok[i].text);
            memcpy(key, tok[i].text, klen);
            key[klen] = '\0';
        } else if (type->positional) {
            snprintf(key, sizeof key, "%s", type->positional);
        } else {
            return fail(ps, tok[i].column, "%s takes no value without a name; \"%s\" should be key=value%s",
                        type->name, tok[i].text, n_opts ? "" : " (and it has no options)");
        }
        int k = 0;
        while (k < n_opts && strcmp(names[k], key) != 0)
            k++;
        if (k == n_opts) {
            char hint[96], list[256] = "";
            ember_suggest(key, names, n_opts, hint, sizeof hint);
            for (int j = 0; j < n_opts; j++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "", names[j]);
            if (!n_opts)
                return fail(ps, tok[i].column, "%s has no options, so not \"%s\"", type->name, key);
            return fail(ps, tok[i].column, "%s has no option \"%s\"%s; its options are %s", type->name, key,
                        hint, list);
        }
        if (layer->value_column[k])
            return fail(ps, tok[i].column, "%s: %s is given twice (first at column %d)", type->name, key,
                        layer->value_column[k]);
        if (!*value)
            return fail(ps, tok[i].column, "%s: %s= needs a value", type->name, key);
        ember_status st = parse_value(ps, type, &type->options[k], &tok[i], value, &layer->value[k]);
        if (st != EMBER_OK)
            return st;
        layer->value_column[k] = tok[i].column;
    }
    for (int k = 0; k < n_opts; k++)
        if (type->options[k].required && !layer->value_column[k]) {
            const struct model_option_spec *spec = &type->options[k];
            if (type->positional && strcmp(type->positional, spec->name) == 0)
                return fail(ps, layer->column, "%s needs %s (%s), as in \"%s %s\" or %s=...", type->name,
                            spec->name, spec->about, type->name, spec->word ? spec->word : "16", spec->name);
            return fail(ps, layer->column, "%s needs %s=... (%s)", type->name, spec->name, spec->about);
        }
    return EMBER_OK;
}

static struct model_layer *block_append(struct parser *ps, struct model_block *block, int column)
{
    if (ps->layers >= MODEL_MAX_LAYERS) {
        fail(ps, column, "more than %d layers", MODEL_MAX_LAYERS);
        return NULL;
    }
    if (block->count == block->cap) {
        int cap = block->cap ? block->cap * 2 : 8;
        void *layers = realloc(block->layers, (size_t)cap * sizeof *block->layers);
        if (!layers) {
            ember_set_error(ps->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", ps->source);
            return NULL;
        }
        block->layers = layers;
        block->cap = cap;
    }
    struct model_layer *layer = &block->layers[block->count++];
    memset(layer, 0, sizeof *layer);
    ps->layers++;
    return layer;
}

static ember_status parse_layer(struct parser *ps, struct token *tok, int count)
{
    const char *name = "";
    int name_column = 0;
    size_t len = strlen(tok[0].text);
    if (len > 0 && tok[0].text[len - 1] == ':') {
        ((char *)tok[0].text)[len - 1] = '\0';
        name = tok[0].text;
        name_column = tok[0].column;
        if (!valid_name(name))
            return fail(ps, name_column,
                        "\"%s\" is not a layer name: use letters, digits, _ and dots between them "
                        "(as PyTorch's \"features.0\" or \"layer1.0.conv1\"), under %d characters",
                        name, MODEL_NAME_MAX / 2);
        if (strcmp(name, "self") == 0 && ps->depth > 0)
            return fail(ps, name_column,
                        "\"self\" names a layer of the model itself, not one inside a block");
        tok++, count--;
        if (count == 0)
            return fail(ps, name_column + (int)len, "the name %s: is followed by no layer", name);
    }
    if (strchr(tok[0].text, ':'))
        return fail(ps, tok[0].column,
                    "\"%s\": write a name, a colon and a space before the layer: "
                    "\"conv1: conv2d ...\"",
                    tok[0].text);

    struct model_block *block = ps->open[ps->depth];
    for (int join = JOIN_RESIDUAL; join <= JOIN_GATE; join++) {
        const char *word = model_join_name((enum model_join)join),
                   *second = model_join_second((enum model_join)join);
        if (strcmp(tok[0].text, word) != 0)
            continue;
        if (count > 1)
            return fail(ps, tok[1].column,
                        "%s takes no options: its layers follow on the next lines%s%s%s, then \"end\"", word,
                        second ? ", then \"" : "", second ? second : "", second ? "\" and its layers" : "");
        if (ps->depth == MODEL_MAX_DEPTH)
            return fail(ps, tok[0].column, "blocks nest at most %d deep", MODEL_MAX_DEPTH);
        struct model_layer *layer = block_append(ps, block, tok[0].column);
        if (!layer)
            return ember_last_status(ps->ctx);
        snprintf(layer->name, sizeof layer->name, "%s", name);
        layer->join = (enum model_join)join;
        layer->line = ps->line;
        layer->column = tok[0].column;
        ps->depth++;
        ps->open[ps->depth] = &layer->body;
        ps->open_layer[ps->depth] = layer;
        return EMBER_OK;
    }

    const struct model_layer_type *type = model_layer_type_find(tok[0].text);
    if (!type) {
        const char *names[64];
        char hint[96], list[512] = "";
        int n = model_layer_type_count < 64 ? model_layer_type_count : 64;
        for (int i = 0; i < n; i++) {
            names[i] = model_layer_types[i].name;
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s, ", names[i]);
        }
        ember_suggest(tok[0].text, names, n, hint, sizeof hint);
        return fail(ps, tok[0].column,
                    "unknown layer \"%s\"%s; the layers are %sand the blocks residual, concat and gate",
                    tok[0].text, hint, list);
    }
    struct model_layer *layer = block_append(ps, block, tok[0].column);
    if (!layer)
        return ember_last_status(ps->ctx);
    layer->type = type;
    snprintf(layer->name, sizeof layer->name, "%s", name);
    layer->line = ps->line;
    layer->column = tok[0].column;
    return parse_options(ps, layer, tok + 1, count - 1);
}

/* "shortcut", "branch" or "end": the open block's second list, or its end */
static ember_status parse_block_word(struct parser *ps, const struct token *tok, int count)
{
    const char *word = tok[0].text;
    if (count > 1)
        return fail(ps, tok[1].column, "%s stands alone on its line", word);
    if (ps->depth == 0)
        return fail(ps, tok[0].column, "%s outside a block", word);
    struct model_layer *block = ps->open_layer[ps->depth];
    const char *kind = model_join_name(block->join), *second = model_join_second(block->join);
    bool in_second = ps->open[ps->depth] == &block->second;
    if (strcmp(word, "end") == 0) {
        if (block->join != JOIN_CONCAT && block->body.count == 0)
            return fail(ps, tok[0].column, "the %s block of line %d has no layers", kind, block->line);
        if (block->join == JOIN_RESIDUAL && in_second && block->second.count == 0)
            return fail(ps, tok[0].column,
                        "the shortcut of line %d has no layers; leave \"shortcut\" out for "
                        "the identity",
                        block->second_line);
        if (block->join == JOIN_CONCAT && !in_second)
            return fail(ps, tok[0].column,
                        "the concat block of line %d has one branch; write \"branch\" before the second "
                        "one's layers (none: the block's input itself)",
                        block->line);
        ps->depth--;
        return EMBER_OK;
    }
    if (!second || strcmp(word, second) != 0)
        return fail(ps, tok[0].column, "%s in a %s block (line %d)%s%s%s", word, kind, block->line,
                    second ? ", whose second list opens with \"" : ", which has one list of layers",
                    second ? second : "", second ? "\"" : "");
    if (in_second)
        return fail(ps, tok[0].column, "the %s block of line %d already has its %s (line %d)", kind,
                    block->line, second, block->second_line);
    if (block->join == JOIN_RESIDUAL && block->body.count == 0)
        return fail(ps, tok[0].column, "the residual block of line %d has no layers before its shortcut",
                    block->line);
    block->second_line = ps->line;
    ps->open[ps->depth] = &block->second;
    return EMBER_OK;
}

static ember_status parse_line(struct parser *ps, char *line)
{
    /* plain ASCII, comments included: a checkpoint stores the text as it
     * is, as UTF-8 (and a terminal shows it), so a byte that would stop
     * the save after a whole run's training is refused now */
    for (const char *c = line; *c; c++) {
        unsigned char ch = (unsigned char)*c;
        if ((ch < 0x20 && ch != '\t' && ch != '\r') || ch >= 0x7f)
            return fail(ps, (int)(c - line) + 1,
                        "unexpected byte 0x%02x: a model file is plain ASCII text, its "
                        "comments too",
                        ch);
    }
    /* the comment goes; then the tokens, with their columns */
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    struct token tok[MODEL_MAX_TOKENS];
    int count = 0;
    for (char *c = line; *c;) {
        unsigned char ch = (unsigned char)*c;
        if (ch == ' ' || ch == '\t' || ch == '\r') {
            *c++ = '\0';
            continue;
        }
        if (count == MODEL_MAX_TOKENS)
            return fail(ps, (int)(c - line) + 1, "too many words on one line (at most %d)", MODEL_MAX_TOKENS);
        tok[count++] = (struct token){.text = c, .column = (int)(c - line) + 1};
        while (*c && *c != ' ' && *c != '\t' && *c != '\r')
            c++;
    }
    if (count == 0)
        return EMBER_OK;

    const char *word = tok[0].text;
    if (strcmp(word, "input") == 0) {
        struct model_file *f = ps->file;
        if (ps->depth > 0 || f->root.count > 0)
            return fail(ps, tok[0].column, "input comes before the first layer");
        if (f->input_ndim)
            return fail(ps, tok[0].column, "input is given twice (first at line %d)", f->input_line);
        if (count != 2 || !ember_parse_shape(tok[1].text, &f->input_ndim, f->input_shape)) {
            f->input_ndim = 0;
            return fail(ps, count > 1 ? tok[1].column : tok[0].column,
                        "input takes one shape: CxHxW for images (1x28x28) or N for vectors (100)");
        }
        f->input_line = ps->line;
        f->input_column = tok[1].column;
        return EMBER_OK;
    }
    if (strcmp(word, "shortcut") == 0 || strcmp(word, "branch") == 0 || strcmp(word, "end") == 0)
        return parse_block_word(ps, tok, count);
    return parse_layer(ps, tok, count);
}

void model_block_free(struct model_block *block)
{
    for (int i = 0; i < block->count; i++) {
        model_block_free(&block->layers[i].body);
        model_block_free(&block->layers[i].second);
        ember_tensor_free(block->layers[i].folded[0]);
        ember_tensor_free(block->layers[i].folded[1]);
    }
    free(block->layers);
    *block = (struct model_block){0};
}

void model_file_free(struct model_file *file)
{
    if (file)
        model_block_free(&file->root);
}

ember_status model_file_parse(ember_ctx *ctx, const char *source, const char *text, struct model_file *file)
{
    memset(file, 0, sizeof *file);
    size_t len = strnlen(text, MODEL_MAX_TEXT + 1);
    if (len > MODEL_MAX_TEXT)
        return ember_set_error(ctx, EMBER_ERR_FORMAT, "%s: over %d bytes: not a model file", source,
                               MODEL_MAX_TEXT);
    struct parser ps = {.ctx = ctx, .source = source, .file = file};
    ps.open[0] = &file->root;
    char *copy = malloc(len + 1);
    if (!copy)
        return ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", source);
    memcpy(copy, text, len + 1);
    ember_status st = EMBER_OK;
    char *line = copy;
    while (st == EMBER_OK && line) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        ps.line++;
        st = parse_line(&ps, line);
        line = next;
    }
    if (st == EMBER_OK && ps.depth > 0) {
        ps.line = ps.open_layer[ps.depth]->line;
        st = fail(&ps, ps.open_layer[ps.depth]->column, "this %s block has no \"end\"",
                  model_join_name(ps.open_layer[ps.depth]->join));
    }
    if (st == EMBER_OK && file->root.count == 0) {
        ps.line = 1;
        st = fail(&ps, 1, "no layers: a model file lists at least one layer, such as \"linear classes\"");
    }
    free(copy);
    if (st != EMBER_OK)
        model_file_free(file);
    return st;
}

const char *model_join_name(enum model_join join)
{
    static const char *const names[] = {"residual", "concat", "gate"};
    return names[join];
}

const char *model_join_second(enum model_join join)
{
    static const char *const words[] = {"shortcut", "branch", NULL};
    return words[join];
}
