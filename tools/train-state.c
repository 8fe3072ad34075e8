/*
 * tools/train-state.c — `ember train`'s checkpoints: the run's settings as
 * metadata, the training state beside the model, and reading both back
 * for --resume (tools/train.h says what goes where).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

enum setting_kind { SETTING_STRING, SETTING_INT, SETTING_FLOAT, SETTING_U64, SETTING_BOOL };

/* The settings a run is resumed with: each option, its metadata key and
 * where it lives in the options. */
static const struct train_setting {
    const char *option, *key;
    enum setting_kind kind;
    size_t offset;
} train_settings[] = {
    {"model", "ember.model", SETTING_STRING, offsetof(struct train_options, model)},
    {"data", "ember.data", SETTING_STRING, offsetof(struct train_options, data.kind)},
    {"seed", "ember.seed", SETTING_U64, offsetof(struct train_options, seed)},
    {"resize", "ember.resize", SETTING_BOOL, offsetof(struct train_options, data.resize)},
    {"batch", "ember.batch", SETTING_INT, offsetof(struct train_options, batch)},
    {"optim", "ember.optim", SETTING_STRING, offsetof(struct train_options, optim)},
    {"lr", "ember.lr", SETTING_FLOAT, offsetof(struct train_options, lr)},
    {"momentum", "ember.momentum", SETTING_FLOAT, offsetof(struct train_options, momentum)},
    {"weight-decay", "ember.weight_decay", SETTING_FLOAT, offsetof(struct train_options, weight_decay)},
    {"schedule", "ember.schedule", SETTING_STRING, offsetof(struct train_options, schedule)},
    {"warmup", "ember.warmup", SETTING_FLOAT, offsetof(struct train_options, warmup)},
    {"step-epochs", "ember.step_epochs", SETTING_FLOAT, offsetof(struct train_options, step_epochs)},
    {"gamma", "ember.gamma", SETTING_FLOAT, offsetof(struct train_options, gamma)},
    {"min-lr", "ember.min_lr", SETTING_FLOAT, offsetof(struct train_options, min_lr)},
    {"augment", "ember.augment", SETTING_STRING, offsetof(struct train_options, augment)},
    {"run-id", "ember.run", SETTING_STRING, offsetof(struct train_options, run_id)},
    {"epochs", "ember.epochs", SETTING_INT, offsetof(struct train_options, epochs)},
};
enum { SETTING_COUNT = sizeof train_settings / sizeof train_settings[0] };

void train_options_free(struct train_options *o)
{
    for (int i = 0; i < o->n_owned; i++)
        free(o->owned[i]);
    o->n_owned = 0;
}

/* a copy the options own */
static char *own(struct train_options *o, const char *s)
{
    char *copy = o->n_owned < (int)(sizeof o->owned / sizeof o->owned[0]) ? strdup(s) : NULL;
    if (copy)
        o->owned[o->n_owned++] = copy;
    return copy;
}

void train_mark_given(struct train_options *o, const char *option)
{
    for (int i = 0; i < SETTING_COUNT; i++)
        if (strcmp(train_settings[i].option, option) == 0)
            o->given |= 1u << i;
}

/* a setting's value as the metadata holds it: floats to the last bit */
static void setting_str(const struct train_options *o, const struct train_setting *s, char *buf, size_t len)
{
    const char *at = (const char *)o + s->offset;
    switch (s->kind) {
    case SETTING_STRING: snprintf(buf, len, "%s", *(const char *const *)at); break;
    case SETTING_INT: snprintf(buf, len, "%lld", (long long)*(const int64_t *)at); break;
    case SETTING_FLOAT: snprintf(buf, len, "%.17g", *(const double *)at); break;
    case SETTING_U64: snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)at); break;
    case SETTING_BOOL: snprintf(buf, len, "%s", *(const bool *)at ? "true" : "false"); break;
    }
}

/* sets a setting from its metadata string; false if it does not parse */
static bool setting_set(struct train_options *o, const struct train_setting *s, const char *value)
{
    char *at = (char *)o + s->offset, *end = NULL;
    switch (s->kind) {
    case SETTING_STRING: *(const char **)at = value; return true;
    case SETTING_INT: *(int64_t *)at = strtoll(value, &end, 10); break;
    case SETTING_FLOAT: *(double *)at = strtod(value, &end); break;
    case SETTING_U64: *(uint64_t *)at = strtoull(value, &end, 10); break;
    case SETTING_BOOL: *(bool *)at = strcmp(value, "true") == 0; return true;
    }
    return end && end != value && *end == '\0';
}

const char *train_sibling_path(const char *path, const char *what, char *buf, size_t len)
{
    size_t n = strlen(path);
    const char *ext = ".safetensors";
    size_t stem = n > strlen(ext) && strcmp(path + n - strlen(ext), ext) == 0 ? n - strlen(ext) : n;
    snprintf(buf, len, "%.*s.%s.safetensors", (int)stem, path, what);
    return buf;
}

/* ------------------------------------------------------------------ saving */

/* A metadata list being built: keys and values, NULL-terminated. */
struct meta {
    const char *kv[2 * (SETTING_COUNT + 16) + 1];
    char values[SETTING_COUNT + 16][48];
    int n, owned;
};

static void meta_add(struct meta *m, const char *key, const char *value)
{
    m->kv[m->n++] = key;
    m->kv[m->n++] = value;
    m->kv[m->n] = NULL;
}

static const char *meta_number(struct meta *m, const char *fmt, double value)
{
    char *buf = m->values[m->owned++];
    snprintf(buf, sizeof m->values[0], fmt, value);
    return buf;
}

/* the class names as a JSON array (free it) */
static char *class_names_json(const ember_dataset *train)
{
    char *names = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&names, &len);
    if (!f)
        return NULL;
    fputc('[', f);
    for (int k = 0; k < ember_dataset_classes(train); k++) {
        fputs(k ? ", " : "", f);
        cli_json_string(f, ember_dataset_class_name(train, k));
    }
    fputc(']', f);
    return fclose(f) == 0 ? names : (free(names), NULL);
}

/* The model checkpoint's metadata: what eval and predict need to use it
 * with --load alone, and what --resume needs to go on (docs/models.md,
 * "Checkpoints"). */
static int model_meta(const struct train_options *o, ember_ctx *ctx, const ember_dataset *train, const struct train_position *pos,
                      struct meta *m, char **names, char **dir, char *scaling[9])
{
    *names = class_names_json(train);
    /* where the data was, for eval to find it again (absolute: eval may run elsewhere) */
    *dir = o->data.dir ? realpath(o->data.dir, NULL) : NULL;
    if (!*names) {
        cli_error("out of memory writing a checkpoint");
        return EXIT_FAILURE_OTHER;
    }
    /* the settings, except the model: ember_model_save names it itself */
    for (int i = 1; i < SETTING_COUNT; i++) {
        setting_str(o, &train_settings[i], m->values[m->owned], sizeof m->values[0]);
        meta_add(m, train_settings[i].key, m->values[m->owned++]);
    }
    meta_add(m, "ember.class_names", *names);
    meta_add(m, "ember.normalize", ember_dataset_normalize(train));
    /* a table's standardisation, for eval and predict to apply */
    const ember_feature_scaling *table = ember_dataset_scaling(train);
    if (table && ember_feature_scaling_meta(ctx, table, scaling) != EMBER_OK) {
        cli_error("out of memory writing a checkpoint");
        return EXIT_FAILURE_OTHER;
    }
    for (int i = 0; table && scaling[i]; i += 2)
        meta_add(m, scaling[i], scaling[i + 1]);
    meta_add(m, "ember.epoch", meta_number(m, "%.0f", (double)pos->epochs_done));
    meta_add(m, "ember.step", meta_number(m, "%.0f", (double)pos->total_steps));
    if (*dir)
        meta_add(m, "ember.data_dir", *dir);
    return EXIT_OK;
}

static int save_model(const struct train_options *o, ember_ctx *ctx, ember_model *model, const ember_dataset *train,
                      const struct train_position *pos, const char *path)
{
    struct meta m = {.n = 0};
    char *names = NULL, *dir = NULL, *scaling[9] = {NULL};
    int rc = model_meta(o, ctx, train, pos, &m, &names, &dir, scaling);
    if (rc == EXIT_OK && ember_model_save(model, path, m.kv) != EMBER_OK)
        rc = cli_fail(ctx, "cannot save the checkpoint");
    for (int i = 1; i < 9; i += 2)
        free(scaling[i]);
    free(names);
    free(dir);
    return rc;
}

int train_save(const struct train_options *o, ember_ctx *ctx, ember_model *model, const ember_optim *opt,
               const ember_dataset *train, const struct train_position *pos, const char *path)
{
    /* the state first: a model file never runs ahead of the state beside it
     * (a crash between the two leaves a pair that --resume refuses) */
    char state_path[4096];
    struct meta m = {.n = 0};
    meta_add(&m, "ember.epoch", meta_number(&m, "%.0f", (double)pos->epochs_done));
    meta_add(&m, "ember.step_in_epoch", meta_number(&m, "%.0f", (double)pos->step_in_epoch));
    meta_add(&m, "ember.step", meta_number(&m, "%.0f", (double)pos->total_steps));
    meta_add(&m, "ember.loss_sum", meta_number(&m, "%.17g", pos->loss_sum));
    meta_add(&m, "ember.correct", meta_number(&m, "%.0f", (double)pos->correct));
    meta_add(&m, "ember.seen", meta_number(&m, "%.0f", (double)pos->seen));
    meta_add(&m, "ember.best_acc", meta_number(&m, "%.17g", pos->best_acc));
    meta_add(&m, "ember.best_epoch", meta_number(&m, "%.0f", (double)pos->best_epoch));
    if (ember_optim_save(opt, train_sibling_path(path, "state", state_path, sizeof state_path), m.kv) != EMBER_OK)
        return cli_fail(ctx, "cannot save the training state");
    return save_model(o, ctx, model, train, pos, path);
}

int train_save_best(const struct train_options *o, ember_ctx *ctx, ember_model *model, const ember_dataset *train,
                    const struct train_position *pos)
{
    char best[4096];
    return save_model(o, ctx, model, train, pos, train_sibling_path(o->save, "best", best, sizeof best));
}

/* ---------------------------------------------------------------- resuming */

int train_resume_settings(ember_ctx *ctx, struct train_options *o)
{
    ember_checkpoint *ck = ember_checkpoint_open(ctx, o->resume);
    if (!ck)
        return cli_fail(ctx, "cannot read the checkpoint to resume");
    int rc = EXIT_OK;
    char given[64];
    for (int i = 0; i < SETTING_COUNT && rc == EXIT_OK; i++) {
        const struct train_setting *s = &train_settings[i];
        const char *saved = ember_checkpoint_meta(ck, s->key);
        if (!saved) {
            cli_error("%s has no %s: it was not written by ember train (or by an older one), so it cannot be "
                      "resumed", o->resume, s->key);
            rc = EXIT_DATA;
            break;
        }
        if (o->given & (1u << i)) {
            setting_str(o, s, given, sizeof given);
            bool same = strcmp(given, saved) == 0;
            if (!same && s->kind == SETTING_FLOAT) /* 0.001 and 1.0000000000000000e-03 */
                same = strtod(given, NULL) == strtod(saved, NULL);
            if (!same && i == 0) { /* the model: the same text under another name agrees */
                ember_model *m = ember_model_from_checkpoint(ctx, o->resume);
                int64_t shape[3];
                int ndim = m ? ember_model_sample_shape(m, shape) : 0;
                ember_model *g = m ? ember_model_build(ctx, o->model, ndim, shape, ember_model_classes(m), 0) : NULL;
                same = g && ember_model_text(m) && ember_model_text(g) &&
                       strcmp(ember_model_text(m), ember_model_text(g)) == 0;
                ember_model_free(g);
                ember_model_free(m);
            }
            if (!same && i != SETTING_COUNT - 1) { /* --epochs may differ: it says where the run ends */
                cli_error("--%s %s, but %s was trained with %s; leave --%s out to go on as it was", s->option,
                          given, o->resume, saved, s->option);
                rc = EXIT_DATA;
            }
            continue;
        }
        /* a string setting points at a copy that outlives the checkpoint */
        const char *value = s->kind == SETTING_STRING ? own(o, saved) : saved;
        if (!value) {
            rc = EXIT_FAILURE_OTHER;
        } else if (!setting_set(o, s, value)) {
            cli_error("%s: %s is \"%.40s\", not a value of --%s", o->resume, s->key, saved, s->option);
            rc = EXIT_DATA;
        }
    }
    /* the data's folder and shape, as eval takes them */
    const char *dir = ember_checkpoint_meta(ck, "ember.data_dir"), *input = ember_checkpoint_meta(ck, "ember.input");
    if (rc == EXIT_OK && dir && !o->data.dir)
        o->data.dir = own(o, dir);
    const char *label = ember_checkpoint_meta(ck, "ember.label"); /* a table's label column */
    if (rc == EXIT_OK && label && !o->data.label && strcmp(o->data.kind, "csv") == 0)
        o->data.label = own(o, label);
    if (rc == EXIT_OK && input && !o->shape_given &&
        (strcmp(o->data.kind, "folder") == 0 || strcmp(o->data.kind, "random") == 0))
        cli_parse_shape_quiet(input, &o->data.sample_ndim, o->data.sample_shape);
    o->data.seed = o->seed;
    if (rc == EXIT_OK && !o->save)
        o->save = o->resume; /* go on writing where it was written */
    ember_checkpoint_close(ck);
    return rc;
}

int train_resume_state(ember_ctx *ctx, const struct train_options *o, ember_optim *opt, struct train_position *pos)
{
    char state_path[4096];
    train_sibling_path(o->resume, "state", state_path, sizeof state_path);
    ember_checkpoint *ck = ember_checkpoint_open(ctx, state_path);
    ember_checkpoint *model_ck = ck ? ember_checkpoint_open(ctx, o->resume) : NULL;
    if (!model_ck) {
        ember_checkpoint_close(ck);
        cli_fail(ctx, "cannot read the training state");
        fprintf(stderr, "ember: resuming needs the optimizer's state that ember train writes beside the "
                "checkpoint (%s)\n", state_path);
        return EXIT_DATA;
    }
    const char *epoch = ember_checkpoint_meta(ck, "ember.epoch"), *in_epoch = ember_checkpoint_meta(ck, "ember.step_in_epoch");
    const char *step = ember_checkpoint_meta(ck, "ember.step"), *loss = ember_checkpoint_meta(ck, "ember.loss_sum");
    const char *best = ember_checkpoint_meta(ck, "ember.best_acc"), *model_step = ember_checkpoint_meta(model_ck, "ember.step");
    const char *correct = ember_checkpoint_meta(ck, "ember.correct"), *seen = ember_checkpoint_meta(ck, "ember.seen");
    const char *best_epoch = ember_checkpoint_meta(ck, "ember.best_epoch");
    int rc = EXIT_OK;
    if (!epoch || !in_epoch || !step || !loss || !best || !model_step || !correct || !seen || !best_epoch) {
        cli_error("%s is not the training state of an ember run (its metadata lacks the position)", state_path);
        rc = EXIT_DATA;
    } else if (strcmp(step, model_step) != 0) {
        cli_error("%s is from step %s, but %s from step %s: the run stopped between writing the two; train "
                  "again from the start, or from a checkpoint whose pair is whole", state_path, step, o->resume,
                  model_step);
        rc = EXIT_DATA;
    } else if (ember_optim_load(opt, state_path) != EMBER_OK) {
        rc = cli_fail(ctx, "cannot load the optimizer's state");
        rc = rc == EXIT_USAGE ? EXIT_DATA : rc;
    } else {
        *pos = (struct train_position){.epochs_done = strtoll(epoch, NULL, 10),
                                       .step_in_epoch = strtoll(in_epoch, NULL, 10),
                                       .total_steps = strtoll(step, NULL, 10),
                                       .loss_sum = strtod(loss, NULL),
                                       .correct = strtoll(correct, NULL, 10),
                                       .seen = strtoll(seen, NULL, 10),
                                       .best_acc = strtod(best, NULL),
                                       .best_epoch = strtoll(best_epoch, NULL, 10)};
    }
    ember_checkpoint_close(model_ck);
    ember_checkpoint_close(ck);
    return rc;
}
