/* SPDX-License-Identifier: MIT */
/*
 * tools/cli-checkpoint.c — what --load names (a checkpoint, an ONNX file
 * imported into one, a bare state_dict and the model it is read into), and
 * what a checkpoint says about its run, merged with what the command line
 * says: `ember eval --load CK` and `ember predict --load CK` need nothing
 * else, and an option given anyway must agree with the checkpoint or the
 * error says what differs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* "--seed 3, but run.safetensors was trained with 0" */
static int differs(const char *path, const char *option, const char *given, const char *saved,
                   const char *why)
{
    char shown[256]; /* the checkpoint's text: escapes escaped */
    cli_error("--%s %s, but %s was trained with %s%s; leave --%s out to use the checkpoint's", option, given,
              path, cli_printable(saved, shown, sizeof shown), why, option);
    return EXIT_DATA;
}

static bool is_onnx(const char *path)
{
    size_t n = strlen(path);
    return n > 5 && strcmp(path + n - 5, ".onnx") == 0;
}

int cli_import_failed(ember_ctx *ctx, const char *doing)
{
    int rc = cli_fail(ctx, doing);
    return ember_last_status(ctx) == EMBER_ERR_UNSUPPORTED || rc == EXIT_USAGE ? EXIT_DATA : rc;
}

int cli_open_checkpoint(ember_ctx *ctx, const char *path, ember_checkpoint **ck, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (is_onnx(path)) {
        if (ember_onnx_to_checkpoint(ctx, path, data, size) != EMBER_OK)
            return cli_import_failed(ctx, "cannot read the ONNX model");
        *ck = ember_checkpoint_open_memory(ctx, *data, *size);
    } else {
        *ck = ember_checkpoint_open(ctx, path);
    }
    return *ck ? EXIT_OK : cli_fail(ctx, "cannot read the checkpoint");
}

ember_model *cli_load_model(ember_ctx *ctx, const char *path, const void *data, size_t size)
{
    return data ? ember_model_from_checkpoint_memory(ctx, data, size)
                : ember_model_from_checkpoint(ctx, path);
}

bool cli_bare_model_option(int option, const char *value, struct cli_bare_model *bare)
{
    switch (option) {
    case 'm': bare->model = value; return true;
    case 'S': return cli_parse_shape("shape", value, &bare->ndim, bare->shape);
    case 'C': return cli_parse_int("classes", value, 1, 1 << 20, &bare->classes);
    default: return false;
    }
}

bool cli_bare_model_check(const struct cli_bare_model *bare)
{
    if (!bare->model && (bare->ndim || bare->classes)) {
        cli_error("--shape and --classes go with --model, for a state_dict that names no model");
        return false;
    }
    return true;
}

ember_model *cli_load_model_as(ember_ctx *ctx, const char *path, const ember_checkpoint *ck, const void *data,
                               size_t size, const struct cli_bare_model *bare, int *rc)
{
    const char *named = ember_checkpoint_meta(ck, "ember.model");
    ember_model *model = NULL;
    *rc = EXIT_OK;
    if (bare->model && data) {
        cli_error("--model is for a state_dict that names no model; %s is an ONNX file, which holds its own",
                  path);
        *rc = EXIT_USAGE;
        return NULL;
    }
    if (bare->model && named && strcmp(bare->model, named) != 0) {
        *rc = differs(path, "model", bare->model, named, "");
        return NULL;
    }
    if (data || named) {
        if (!(model = cli_load_model(ctx, path, data, size)))
            *rc = cli_fail(ctx, "cannot load the model");
    } else if (!bare->model) {
        cli_error(
            "%s names no model (a state_dict without ember's metadata, as PyTorch saves one): give --model "
            "NAME|FILE, and --shape and --classes where they are not 1x28x28 and 10",
            path);
        *rc = EXIT_DATA;
    } else if (!(model = ember_model_build(ctx, bare->model, bare->ndim, bare->shape,
                                           bare->classes ? (int)bare->classes : 10, 0))) {
        *rc = cli_fail(ctx, "cannot build --model");
    } else if (ember_model_load(model, path) != EMBER_OK) {
        *rc = cli_fail(ctx, "cannot load the state_dict into --model");
        ember_model_free(model);
        model = NULL;
    }
    if (*rc == EXIT_USAGE && !bare->model) /* a file that does not fit: the data's fault */
        *rc = EXIT_DATA;
    return model;
}

int cli_settings_from_checkpoint(ember_ctx *ctx, const ember_checkpoint *ck, const char *path,
                                 struct cli_settings *s)
{
    const char *model = ember_checkpoint_meta(ck, "ember.model");
    const char *kind = ember_checkpoint_meta(ck, "ember.data");
    const char *seed = ember_checkpoint_meta(ck, "ember.seed");
    const char *input = ember_checkpoint_meta(ck, "ember.input");
    const char *resize = ember_checkpoint_meta(ck, "ember.resize");
    const char *classes = ember_checkpoint_meta(ck, "ember.classes");
    int64_t n_classes = 0;
    char shown[96];
    if (classes && !cli_int_value(classes, 1, 1 << 20, &n_classes)) {
        cli_error("%s: the metadata's classes \"%s\" is not a class count", path,
                  cli_printable(classes, shown, 64));
        return EXIT_DATA;
    }

    if (!model && !s->model) {
        cli_error("%s does not say which model it holds (no ember.model in its metadata: written by another "
                  "program or an older ember); give --model",
                  path);
        return EXIT_DATA;
    }
    if (model && s->model && strcmp(model, s->model) != 0) {
        /* the same network under another name (a path to the same file) agrees */
        int ndim = 0;
        int64_t shape[3];
        const char *text = ember_checkpoint_meta(ck, "ember.model_text");
        ember_model *given = input && classes && cli_parse_shape_quiet(input, &ndim, shape)
                                 ? ember_model_build(ctx, s->model, ndim, shape, (int)n_classes, 0)
                                 : NULL;
        bool same = given && text && ember_model_text(given) && strcmp(ember_model_text(given), text) == 0;
        ember_model_free(given);
        if (!same)
            return differs(path, "model", s->model, model, "");
    }
    s->from_checkpoint = model != NULL;

    if (kind && s->kind_given && strcmp(kind, s->data.kind) != 0)
        return differs(path, "data", s->data.kind, kind, "");
    if (kind && !s->kind_given) {
        s->data.kind = kind;
        s->kind_given = true;
    }
    if (seed) {
        char given[32];
        snprintf(given, sizeof given, "%" PRIu64, s->data.seed);
        if (s->seed_given && strcmp(given, seed) != 0)
            return differs(path, "seed", given, seed,
                           " (the folder's held-out test split and random data come "
                           "from the seed, so another one scores other images)");
        if (!s->seed_given && !cli_u64_value(seed, &s->data.seed)) {
            cli_error("%s: the metadata's seed \"%s\" is not a whole number", path,
                      cli_printable(seed, shown, 64));
            return EXIT_DATA;
        }
    }
    /* folders load at the size trained on, random data is made in it, text is read in its windows */
    if (input && s->data.kind &&
        (strcmp(s->data.kind, "folder") == 0 || strcmp(s->data.kind, "random") == 0 ||
         cli_data_is_text(s->data.kind))) {
        int ndim = 0;
        int64_t shape[3];
        if (!cli_parse_shape_quiet(input, &ndim, shape)) {
            cli_error("%s: the metadata's input \"%s\" is not a shape", path,
                      cli_printable(input, shown, 64));
            return EXIT_DATA;
        }
        bool same = s->shape_given && s->data.sample_ndim == ndim &&
                    memcmp(s->data.sample_shape, shape, (size_t)ndim * sizeof *shape) == 0;
        if (s->shape_given && !same && strcmp(s->data.kind, "random") == 0) {
            char given[64] = "";
            for (int i = 0; i < s->data.sample_ndim; i++)
                snprintf(given + strlen(given), sizeof given - strlen(given), "%s%lld", i ? "x" : "",
                         (long long)s->data.sample_shape[i]);
            return differs(path, "shape", given, input, "");
        }
        if (!s->shape_given) {
            s->data.sample_ndim = ndim;
            memcpy(s->data.sample_shape, shape, (size_t)ndim * sizeof *shape);
        }
        if (strcmp(s->data.kind, "random") == 0 && classes)
            s->data.classes = (int)n_classes;
    }
    const char *dir = ember_checkpoint_meta(ck, "ember.data_dir");
    if (dir && !s->data.dir) /* another folder is fine: the same data elsewhere */
        s->data.dir = dir;
    /* a table: standardised as in training, its classes in the same order */
    if (s->data.kind && strcmp(s->data.kind, "csv") == 0) {
        int count = (int)n_classes;
        if (ember_checkpoint_scaling(ctx, ck, &s->scaling) != EMBER_OK)
            return cli_fail(ctx, path);
        if (!s->scaling || count < 2 || !(s->class_names = cli_class_names(ck, count))) {
            cli_error("%s does not hold the standardisation and classes of a CSV table (ember.features, "
                      "ember.feature_mean, ember.feature_std, ember.class_names): train it with --data csv",
                      path);
            return EXIT_DATA;
        }
        s->data.scaling = s->scaling;
        s->data.label = s->scaling->label;
        s->data.class_names = (const char *const *)s->class_names;
        s->data.classes = count;
    }
    if (resize && strcmp(resize, "true") != 0 && strcmp(resize, "false") != 0) {
        cli_error("%s: the metadata's resize \"%s\" is not true or false", path,
                  cli_printable(resize, shown, 64));
        return EXIT_DATA;
    }
    if (resize && !s->resize_given)
        s->data.resize = strcmp(resize, "true") == 0;
    return EXIT_OK;
}

void cli_settings_free(struct cli_settings *s)
{
    for (int k = 0; s->class_names && k < s->data.classes; k++)
        free(s->class_names[k]);
    free(s->class_names);
    ember_feature_scaling_free(s->scaling);
    s->class_names = NULL;
    s->scaling = NULL;
}

char **cli_class_names(const ember_checkpoint *ck, int classes)
{
    char **names = calloc((size_t)classes + 1, sizeof *names);
    if (!names)
        return NULL;
    /* the checkpoint's name for every class, or else every class by its index */
    bool named = true;
    for (int k = 0; k < classes && named; k++)
        named = ember_checkpoint_class_name(ck, k) != NULL;
    for (int k = 0; k < classes; k++) {
        char number[16];
        snprintf(number, sizeof number, "%d", k);
        if (!(names[k] = strdup(named ? ember_checkpoint_class_name(ck, k) : number))) {
            for (int j = 0; j < k; j++)
                free(names[j]);
            free(names);
            return NULL;
        }
    }
    return names;
}
