/* SPDX-License-Identifier: MIT */
/*
 * tools/train-state.c — `ember train`'s checkpoints: the run's settings as
 * metadata, the training state beside the model, and reading both back
 * for --resume (tools/train.h says what goes where).
 *
 * Everything read back is checked as the command line's options are: a
 * setting out of its option's range, a name that is no option's value, a
 * position that is not in the data are a clear error (exit 3), never a
 * value trusted into arithmetic.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "train.h"

enum setting_kind { SETTING_STRING, SETTING_INT, SETTING_FLOAT, SETTING_U64, SETTING_BOOL };

/* The settings a run is resumed with: each option, its metadata key, where
 * it lives in the options, and the values it takes, the same for the
 * command line (train_parse_setting) and a checkpoint. */
static const struct train_setting {
    const char *option, *key;
    enum setting_kind kind;
    size_t offset;
    double low, high;   /* a number's range */
    bool zero_is_unset; /* 0 means the option was not given (--step-epochs) */
    const char *words;  /* a string's values, "adam|sgd"; NULL: checked elsewhere */
} train_settings[] = {
    {"model", "ember.model", SETTING_STRING, offsetof(struct train_options, model)},
    {"data", "ember.data", SETTING_STRING, offsetof(struct train_options, data.kind)},
    {"seed", "ember.seed", SETTING_U64, offsetof(struct train_options, seed)},
    {"resize", "ember.resize", SETTING_BOOL, offsetof(struct train_options, data.resize)},
    {"batch", "ember.batch", SETTING_INT, offsetof(struct train_options, batch), 1, 1 << 20},
    {"optim", "ember.optim", SETTING_STRING, offsetof(struct train_options, optim),
     .words = "adam|adamw|sgd"},
    {"lr", "ember.lr", SETTING_FLOAT, offsetof(struct train_options, lr), 0, 1e6},
    {"momentum", "ember.momentum", SETTING_FLOAT, offsetof(struct train_options, momentum), 0, 1e6},
    {"weight-decay", "ember.weight_decay", SETTING_FLOAT, offsetof(struct train_options, weight_decay), 0,
     1e6},
    {"schedule", "ember.schedule", SETTING_STRING, offsetof(struct train_options, schedule),
     .words = "constant|step|cosine"},
    {"warmup", "ember.warmup", SETTING_FLOAT, offsetof(struct train_options, warmup), 0, 1e6},
    {"step-epochs", "ember.step_epochs", SETTING_FLOAT, offsetof(struct train_options, step_epochs), 1e-6,
     1e6, .zero_is_unset = true},
    {"gamma", "ember.gamma", SETTING_FLOAT, offsetof(struct train_options, gamma), 0, 1},
    {"min-lr", "ember.min_lr", SETTING_FLOAT, offsetof(struct train_options, min_lr), 0, 1e6},
    {"augment", "ember.augment", SETTING_STRING, offsetof(struct train_options, augment)},
    {"freeze", "ember.freeze", SETTING_STRING, offsetof(struct train_options, freeze)},
    {"run-id", "ember.run", SETTING_STRING, offsetof(struct train_options, run_id)},
    {"clip", "ember.clip", SETTING_FLOAT, offsetof(struct train_options, clip), 0, 1e12},
    {"epochs", "ember.epochs", SETTING_INT, offsetof(struct train_options, epochs), 1, TRAIN_MAX_EPOCHS},
};
enum { SETTING_COUNT = sizeof train_settings / sizeof train_settings[0] };

void train_options_free(struct train_options *o)
{
    for (int i = 0; i < o->n_owned; i++)
        free(o->owned[i]);
    o->n_owned = 0;
}

bool train_given(const struct train_options *o, const char *option)
{
    for (int i = 0; i < SETTING_COUNT; i++)
        if (strcmp(train_settings[i].option, option) == 0)
            return (o->given >> i) & 1u;
    return false;
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

/* "a whole number from 1 to 1000000", for messages */
static const char *setting_values(const struct train_setting *s, char *buf, size_t len)
{
    switch (s->kind) {
    case SETTING_INT: snprintf(buf, len, "a whole number from %.0f to %.0f", s->low, s->high); break;
    case SETTING_FLOAT: snprintf(buf, len, "a number from %g to %g", s->low, s->high); break;
    case SETTING_U64:
        snprintf(buf, len, "a whole number from 0 to %llu", (unsigned long long)UINT64_MAX);
        break;
    case SETTING_BOOL: snprintf(buf, len, "true or false"); break;
    case SETTING_STRING: snprintf(buf, len, "%s", s->words ? s->words : "text"); break;
    }
    return buf;
}

/* one of "a|b|c" */
static bool is_word(const char *value, const char *words)
{
    size_t n = strlen(value);
    for (const char *w = words; *w; w += strcspn(w, "|"), w += *w == '|')
        if (strcspn(w, "|") == n && strncmp(w, value, n) == 0)
            return true;
    return false;
}

/* Sets a setting from text, in its range; false if it is no value of it. */
static bool setting_set(struct train_options *o, const struct train_setting *s, const char *value)
{
    char *at = (char *)o + s->offset;
    ember_augment augment;
    switch (s->kind) {
    case SETTING_STRING:
        if ((s->words && !is_word(value, s->words)) ||
            (strcmp(s->option, "augment") == 0 && !train_parse_augment(value, &augment, 0)))
            return false;
        *(const char **)at = value;
        return true;
    case SETTING_INT: return cli_int_value(value, (int64_t)s->low, (int64_t)s->high, (int64_t *)at);
    case SETTING_FLOAT:
        if (s->zero_is_unset && cli_float_value(value, 0.0, 0.0, (double *)at))
            return true;
        return cli_float_value(value, s->low, s->high, (double *)at);
    case SETTING_U64: return cli_u64_value(value, (uint64_t *)at);
    case SETTING_BOOL:
        if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0)
            return false;
        *(bool *)at = strcmp(value, "true") == 0;
        return true;
    }
    return false;
}

static const struct train_setting *setting_find(const char *option)
{
    for (int i = 0; i < SETTING_COUNT; i++)
        if (strcmp(train_settings[i].option, option) == 0)
            return &train_settings[i];
    return NULL;
}

bool train_parse_setting(struct train_options *o, const char *option, const char *text)
{
    const struct train_setting *s = setting_find(option);
    char values[96];
    if (s && setting_set(o, s, text))
        return true;
    cli_error("--%s wants %s, not \"%s\"", option, s ? setting_values(s, values, sizeof values) : "a value",
              text);
    return false;
}

bool train_parse_augment(const char *spec, ember_augment *a, uint64_t seed)
{
    *a = (ember_augment){.seed = seed ^ 0xa5a5a5a5a5a5ull}; /* its own stream */
    if (strcmp(spec, "none") == 0)
        return true;
    char copy[64];
    if (strlen(spec) >= sizeof copy)
        return false;
    snprintf(copy, sizeof copy, "%s", spec);
    char *rest = NULL;
    for (char *part = strtok_r(copy, ",", &rest); part; part = strtok_r(NULL, ",", &rest)) {
        if (strcmp(part, "flip") == 0) {
            a->flip = true;
            continue;
        }
        char *end = part;
        errno = 0;
        long pixels = strncmp(part, "crop:", 5) == 0 ? strtol(part + 5, &end, 10) : 0;
        if (errno || pixels < 1 || pixels > 1024 || *end)
            return false;
        a->crop_padding = (int)pixels;
    }
    return true;
}

const char *train_sibling_path(const char *path, const char *what, char *buf, size_t len)
{
    size_t n = strlen(path);
    const char *ext = ".safetensors";
    size_t stem = n > strlen(ext) && strcmp(path + n - strlen(ext), ext) == 0 ? n - strlen(ext) : n;
    snprintf(buf, len, "%.*s.%s.safetensors", (int)stem, path, what);
    return buf;
}

ember_lr_schedule train_schedule(const struct train_options *o, int64_t per_epoch)
{
    /* every factor is in its option's range (train_settings), so none of
     * these products overflows: at most 10^6 epochs of 2^34 steps */
    int64_t run_steps = o->epochs * per_epoch;
    if (o->steps && o->steps < run_steps)
        run_steps = o->steps;
    double step_epochs = o->step_epochs > 0 ? o->step_epochs : (double)(o->epochs > 3 ? o->epochs / 3 : 1);
    return (ember_lr_schedule){.kind = strcmp(o->schedule, "cosine") == 0 ? EMBER_LR_COSINE
                                       : strcmp(o->schedule, "step") == 0 ? EMBER_LR_STEP
                                                                          : EMBER_LR_CONSTANT,
                               .lr = (float)o->lr,
                               .min_lr = (float)o->min_lr,
                               .gamma = (float)o->gamma,
                               .warmup_steps = (int64_t)(o->warmup * (double)per_epoch + 0.5),
                               .step_size = (int64_t)(step_epochs * (double)per_epoch + 0.5),
                               .total_steps = run_steps};
}

/* ------------------------------------------------------------------ saving */

/* A metadata list being built: keys and values, NULL-terminated. */
struct meta {
    const char *kv[2 * (SETTING_COUNT + 16) + 1];
    char values[SETTING_COUNT + 16][48];
    char vocab[2 * 256 + 1];
    char base[4096]; /* a language model's file, absolute */
    int n, owned;
};

static void meta_add(struct meta *m, const char *key, const char *value)
{
    m->kv[m->n++] = key;
    m->kv[m->n++] = value;
    m->kv[m->n] = NULL;
}

static const char *meta_number(struct meta *m, double value)
{
    char *buf = m->values[m->owned++];
    snprintf(buf, sizeof m->values[0], "%.17g", value);
    return buf;
}

static const char *meta_int(struct meta *m, int64_t value)
{
    char *buf = m->values[m->owned++];
    snprintf(buf, sizeof m->values[0], "%lld", (long long)value);
    return buf;
}

/* the class names as a JSON array (free it) */
static char *class_names_json(const ember_dataset *train)
{
    char *names = NULL;
    size_t len = 0;
    FILE *f = ember_memory_writer(&names, &len);
    if (!f)
        return NULL;
    fputc('[', f);
    for (int k = 0; k < ember_dataset_classes(train); k++) {
        fputs(k ? ", " : "", f);
        cli_json_string(f, ember_dataset_class_name(train, k));
    }
    fputc(']', f);
    return ember_memory_writer_close(f, &names, &len) ? names : (free(names), NULL);
}

/* What the training images look like (ember_dataset_image_stats), for
 * predict to tell an image unlike them: found once a run (a third of a
 * second for Fashion-MNIST's 60,000), at its first save. Data that is not
 * images has none. */
static bool train_image_stats(const ember_dataset *train, ember_image_stats *stats)
{
    static const ember_dataset *known;
    static ember_image_stats found;
    static bool images;
    if (known != train) {
        known = train;
        images =
            ember_dataset_sample_ndim(train) == 3 && ember_dataset_image_stats(train, &found) == EMBER_OK;
    }
    *stats = found;
    return images;
}

/* The model checkpoint's metadata: what eval and predict need to use it
 * with --load alone, and what --resume needs to go on (docs/models.md,
 * "Checkpoints"). */
static int model_meta(const struct train_options *o, ember_ctx *ctx, const ember_dataset *train,
                      const struct train_position *pos, struct meta *m, char **names, char **dir,
                      char *scaling[9])
{
    *names = class_names_json(train);
    /* where the data was, for eval to find it again (absolute: eval may run elsewhere) */
    char absolute[4096];
    *dir =
        o->data.dir && ember_absolute_path(o->data.dir, absolute, sizeof absolute) ? strdup(absolute) : NULL;
    if (!*names) {
        cli_error("out of memory writing a checkpoint");
        return EXIT_FAILURE_OTHER;
    }
    /* the settings, except the model: ember_model_save names it itself */
    for (int i = 1; i < SETTING_COUNT; i++) {
        setting_str(o, &train_settings[i], m->values[m->owned], sizeof m->values[0]);
        meta_add(m, train_settings[i].key, m->values[m->owned++]);
    }
    if (ember_dataset_class_name(train, 0)) /* a tokenizer's tokens have no names */
        meta_add(m, "ember.class_names", *names);
    if (o->base) { /* a language model's adapters or weights: what --resume and generate need */
        meta_add(m, "ember.base_model",
                 ember_absolute_path(o->base, m->base, sizeof m->base) ? m->base : o->base);
        if (o->lora) {
            meta_add(m, "ember.lora", o->lora);
            train_lm_meta(o, m->values[m->owned], sizeof m->values[0]);
            meta_add(m, "lora_alpha", m->values[m->owned++]);
        } else
            meta_add(m, "ember.finetune", "full");
    }
    /* text: the vocabulary, byte k of the token k, in hex (the bytes need not be UTF-8) */
    uint8_t vocab[256];
    int tokens = ember_dataset_vocab(train, vocab);
    for (int k = 0; k < tokens; k++)
        snprintf(m->vocab + 2 * k, 3, "%02x", vocab[k]);
    if (tokens)
        meta_add(m, "ember.vocab", m->vocab);
    meta_add(m, "ember.normalize", ember_dataset_normalize(train));
    /* a table's standardisation, for eval and predict to apply */
    const ember_feature_scaling *table = ember_dataset_scaling(train);
    if (table && ember_feature_scaling_meta(ctx, table, scaling) != EMBER_OK) {
        cli_error("out of memory writing a checkpoint");
        return EXIT_FAILURE_OTHER;
    }
    for (int i = 0; table && scaling[i]; i += 2)
        meta_add(m, scaling[i], scaling[i + 1]);
    /* the CPU threads the run had (every core when not given): a resume takes the same, for the same sums */
    meta_add(m, "ember.threads", meta_int(m, o->threads ? o->threads : ember_cpu_count()));
    /* and the products' precision, which the sums depend on as much */
    meta_add(m, "ember.matmul_precision", cli_matmul_precision_name(o->matmul_precision));
    meta_add(m, "ember.epoch", meta_int(m, pos->epochs_done));
    meta_add(m, "ember.step", meta_int(m, pos->total_steps));
    if (*dir)
        meta_add(m, "ember.data_dir", *dir);
    ember_image_stats stats;
    if (train_image_stats(train, &stats)) {
        meta_add(m, "ember.image_mean", meta_number(m, stats.mean));
        meta_add(m, "ember.image_mean_spread", meta_number(m, stats.mean_spread));
        meta_add(m, "ember.image_border", meta_number(m, stats.border));
        meta_add(m, "ember.image_border_spread", meta_number(m, stats.border_spread));
    }
    return EXIT_OK;
}

static int save_model(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                      const ember_dataset *train, const struct train_position *pos, const char *path,
                      const char *save_id)
{
    struct meta m = {.n = 0};
    char *names = NULL, *dir = NULL, *scaling[9] = {NULL};
    int rc = model_meta(o, ctx, train, pos, &m, &names, &dir, scaling);
    if (rc == EXIT_OK && save_id)
        meta_add(&m, "ember.save_id", save_id);
    if (rc == EXIT_OK && ember_model_save(model, path, m.kv) != EMBER_OK)
        rc = cli_fail(ctx, "cannot save the checkpoint");
    if (rc == EXIT_OK && o->base && o->lora && o->save && strcmp(path, o->save) == 0)
        rc = train_lm_write_config(o, model, path); /* PEFT's adapter_config.json beside the adapters */
    for (int i = 1; i < 9; i += 2)
        free(scaling[i]);
    free(names);
    free(dir);
    return rc;
}

/* The save id a file records, into buf; NULL when it has none or is not a
 * checkpoint. */
static const char *save_id_of(ember_ctx *ctx, const char *path, char *buf, size_t len)
{
    if (access(path, F_OK) != 0)
        return NULL;
    ember_checkpoint *ck = ember_checkpoint_open(ctx, path);
    const char *id = ember_checkpoint_meta(ck, "ember.save_id");
    if (id)
        snprintf(buf, len, "%s", id);
    ember_checkpoint_close(ck);
    ember_clear_error(ctx); /* a file that is not one is simply no partner */
    return id ? buf : NULL;
}

int train_save(const struct train_options *o, ember_ctx *ctx, ember_model *model, const ember_optim *opt,
               const ember_dataset *train, const struct train_position *pos, const char *path)
{
    /* The model and its state are a pair, saved under one id (when, who,
     * which step) that both carry. Each file is written whole or not at all;
     * between the two a kill can leave a new state beside an old model, so
     * the old model's state is kept aside (the ".state.previous" file) until
     * the new model is in place, and --resume takes whichever state has the
     * model's id. A state that has no partner (a kill's leftover) is not
     * kept aside: the previous one already is. */
    char state_path[4096], previous_path[4096], save_id[96], model_id[96], state_id[96];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(save_id, sizeof save_id, "%lld.%09ld-%ld-%lld", (long long)now.tv_sec, now.tv_nsec,
             (long)getpid(), (long long)pos->total_steps);
    train_sibling_path(path, "state", state_path, sizeof state_path);
    train_sibling_path(path, "state.previous", previous_path, sizeof previous_path);
    const char *on_disk = save_id_of(ctx, path, model_id, sizeof model_id);
    const char *beside = save_id_of(ctx, state_path, state_id, sizeof state_id);
    if (on_disk && beside && strcmp(on_disk, beside) == 0 && !ember_replace_file(state_path, previous_path)) {
        cli_error("cannot keep the training state %s aside while saving: %s", state_path, strerror(errno));
        return EXIT_DATA;
    }
    struct meta m = {.n = 0};
    meta_add(&m, "ember.save_id", save_id);
    meta_add(&m, "ember.epoch", meta_int(&m, pos->epochs_done));
    meta_add(&m, "ember.step_in_epoch", meta_int(&m, pos->step_in_epoch));
    meta_add(&m, "ember.step", meta_int(&m, pos->total_steps));
    meta_add(&m, "ember.loss_sum", meta_number(&m, pos->loss_sum));
    meta_add(&m, "ember.correct", meta_int(&m, pos->correct));
    meta_add(&m, "ember.seen", meta_int(&m, pos->seen));
    meta_add(&m, "ember.best_acc", meta_number(&m, pos->best_acc));
    meta_add(&m, "ember.best_epoch", meta_int(&m, pos->best_epoch));
    if (ember_optim_save(opt, state_path, m.kv) != EMBER_OK)
        return cli_fail(ctx, "cannot save the training state");
    int rc = save_model(o, ctx, model, train, pos, path, save_id);
    if (rc == EXIT_OK)
        unlink(previous_path); /* the pair is whole again */
    return rc;
}

int train_save_model(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                     const ember_dataset *train, const struct train_position *pos, const char *path)
{
    return save_model(o, ctx, model, train, pos, path, NULL);
}

int train_save_best(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                    const ember_dataset *train, const struct train_position *pos)
{
    char best[4096];
    return save_model(o, ctx, model, train, pos, train_sibling_path(o->save, "best", best, sizeof best),
                      NULL);
}

int train_check_outputs(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                        const ember_dataset *train)
{
    static const struct {
        const char *sibling, *what;
    } siblings[] = {{"state", "--save's training state"},
                    {"state.previous", "--save's training state kept aside while saving"},
                    {"best", "--save's best epoch"}};
    char path[4096];
    int rc = o->save ? cli_check_output(o->save, "--save", true) : EXIT_OK;
    for (size_t i = 0; o->save && rc == EXIT_OK && i < sizeof siblings / sizeof siblings[0]; i++)
        rc = cli_check_output(train_sibling_path(o->save, siblings[i].sibling, path, sizeof path),
                              siblings[i].what, true);
    if (rc == EXIT_OK && o->save && o->base && o->lora)
        rc = cli_check_output(train_lm_config_path(o->save, path, sizeof path),
                              "--save's adapter_config.json", true);
    if (rc == EXIT_OK && o->metrics)
        rc = cli_check_output(o->metrics, "--metrics", false);
    if (rc == EXIT_OK && o->trace)
        rc = cli_check_output(o->trace, "--trace", true); /* written at the end, and renamed into place */
    if (rc != EXIT_OK || !o->save)
        return rc;
    /* the checkpoint's metadata, as the first save will write it: a name that
     * is not UTF-8 (a folder's, a path's) would fail that save, after the
     * training, so it is tried on an empty set of tensors now */
    struct meta m = {.n = 0};
    char *names = NULL, *dir = NULL, *scaling[9] = {NULL};
    struct train_position start = {.best_acc = -1.0};
    rc = model_meta(o, ctx, train, &start, &m, &names, &dir, scaling);
    ember_params *none = rc == EXIT_OK ? ember_params_new(ctx) : NULL;
    void *data = NULL;
    size_t size = 0;
    if (rc == EXIT_OK) {
        meta_add(&m, "ember.model", ember_model_name(model));
        if (ember_model_text(model))
            meta_add(&m, "ember.model_text", ember_model_text(model));
        if (!none || ember_params_save_memory(none, m.kv, &data, &size) != EMBER_OK) {
            cli_error("cannot write %s: its metadata cannot be stored: %s", o->save, ember_last_error(ctx));
            rc = EXIT_DATA;
        }
    }
    free(data);
    ember_params_free(none);
    for (int i = 1; i < 9; i += 2)
        free(scaling[i]);
    free(names);
    free(dir);
    return rc;
}

/* ---------------------------------------------------------------- resuming */

/* --resume of a language model's run: o->base and o->lora from its
 * checkpoint (a LoRA run's "ember.lora", "" for the defaults; none for a
 * full fine-tuning) */
static int lm_resume_settings(ember_ctx *ctx, struct train_options *o, const ember_checkpoint *ck)
{
    const char *base = ember_checkpoint_meta(ck, "ember.base_model"),
               *lora = ember_checkpoint_meta(ck, "ember.lora");
    (void)ctx;
    if (!base)
        return EXIT_OK; /* not a language model's run */
    if (o->lora && (!lora || strcmp(o->lora, lora) != 0)) {
        cli_error("--lora %s, but %s was trained with --lora %s; leave --lora out to go on as it was",
                  o->lora, o->resume, lora ? lora : "(none)");
        return EXIT_DATA;
    }
    if (!o->lora && !lora &&
        (!ember_checkpoint_meta(ck, "ember.finetune") ||
         strcmp(ember_checkpoint_meta(ck, "ember.finetune"), "full") != 0)) {
        cli_error("%s names its base model but neither LoRA (ember.lora) nor a full fine-tuning "
                  "(ember.finetune)",
                  o->resume);
        return EXIT_DATA;
    }
    if (!(o->base = own(o, base)) || (lora && !(o->lora = own(o, lora))))
        return EXIT_FAILURE_OTHER;
    return EXIT_OK;
}

int train_resume_settings(ember_ctx *ctx, struct train_options *o)
{
    ember_checkpoint *ck = ember_checkpoint_open(ctx, o->resume);
    if (!ck)
        return cli_fail(ctx, "cannot read the checkpoint to resume");
    int rc = EXIT_OK;
    char given[64], shown[256], values[96];
    for (int i = 0; i < SETTING_COUNT && rc == EXIT_OK; i++) {
        const struct train_setting *s = &train_settings[i];
        const char *saved = ember_checkpoint_meta(ck, s->key);
        if (!saved) {
            cli_error("%s has no %s: it was not written by ember train (or by an older one), so it cannot be "
                      "resumed",
                      o->resume, s->key);
            rc = EXIT_DATA;
            break;
        }
        if (o->given & (1u << i)) {
            setting_str(o, s, given, sizeof given);
            bool same = strcmp(given, saved) == 0;
            double saved_value;
            if (!same && s->kind == SETTING_FLOAT &&
                cli_float_value(saved, -HUGE_VAL, HUGE_VAL, &saved_value))
                same = strtod(given, NULL) == saved_value; /* 0.001 and 1.0000000000000000e-03 */
            if (!same && i == 0) { /* the model: the same text under another name agrees */
                ember_model *m = ember_model_from_checkpoint(ctx, o->resume);
                int64_t shape[3];
                int ndim = m ? ember_model_sample_shape(m, shape) : 0;
                ember_model *g =
                    m ? ember_model_build(ctx, o->model, ndim, shape, ember_model_classes(m), 0) : NULL;
                same = g && ember_model_text(m) && ember_model_text(g) &&
                       strcmp(ember_model_text(m), ember_model_text(g)) == 0;
                ember_model_free(g);
                ember_model_free(m);
            }
            if (!same && i != SETTING_COUNT - 1) { /* --epochs may differ: it says where the run ends */
                cli_error("--%s %s, but %s was trained with %s; leave --%s out to go on as it was", s->option,
                          given, o->resume, cli_printable(saved, shown, sizeof shown), s->option);
                rc = EXIT_DATA;
            }
            continue;
        }
        /* a string setting points at a copy that outlives the checkpoint */
        const char *value = s->kind == SETTING_STRING ? own(o, saved) : saved;
        if (!value) {
            rc = EXIT_FAILURE_OTHER;
        } else if (!setting_set(o, s, value)) {
            cli_error("%s: %s is \"%s\", not a value of --%s (%s)", o->resume, s->key,
                      cli_printable(saved, shown, 64), s->option, setting_values(s, values, sizeof values));
            rc = EXIT_DATA;
        }
    }
    /* the threads, which a bit-exact resume on the CPU needs (ember.threads; older checkpoints lack it) */
    const char *threads = ember_checkpoint_meta(ck, "ember.threads");
    int64_t saved_threads = 0;
    if (rc == EXIT_OK && threads && !cli_int_value(threads, 1, 4096, &saved_threads)) {
        cli_error("%s: ember.threads is \"%s\", not a value of --threads (1 to 4096)", o->resume,
                  cli_printable(threads, shown, 64));
        rc = EXIT_DATA;
    }
    if (rc == EXIT_OK && saved_threads > 0 && !o->threads_given) {
        o->threads = saved_threads;
    } else if (rc == EXIT_OK && saved_threads > 0 && o->threads != saved_threads &&
               !(o->threads == 0 && ember_cpu_count() == saved_threads)) {
        fprintf(stderr,
                "ember: warning: --threads %lld, but %s was trained with %lld: it goes on, but a CPU run "
                "will not end bit for bit as an unbroken one would (leave --threads out to keep %lld)\n",
                (long long)o->threads, o->resume, (long long)saved_threads, (long long)saved_threads);
    }
    /* the products' precision (ember.matmul_precision; older checkpoints lack it: highest) */
    const char *precision = ember_checkpoint_meta(ck, "ember.matmul_precision");
    ember_matmul_precision saved_precision = EMBER_MATMUL_HIGHEST;
    if (rc == EXIT_OK && precision && !cli_matmul_precision_value(precision, &saved_precision)) {
        cli_error("%s: ember.matmul_precision is \"%s\", not a value of --matmul-precision (highest, high or "
                  "medium)",
                  o->resume, cli_printable(precision, shown, 64));
        rc = EXIT_DATA;
    }
    if (rc == EXIT_OK && !o->matmul_precision_given)
        o->matmul_precision = saved_precision;
    else if (rc == EXIT_OK && o->matmul_precision != saved_precision)
        fprintf(
            stderr,
            "ember: warning: --matmul-precision %s, but %s was trained with %s: it goes on, but it will not "
            "end bit for bit as an unbroken run would\n",
            cli_matmul_precision_name(o->matmul_precision), o->resume,
            cli_matmul_precision_name(saved_precision));
    /* the data's folder and shape, as eval takes them */
    const char *dir = ember_checkpoint_meta(ck, "ember.data_dir"),
               *input = ember_checkpoint_meta(ck, "ember.input");
    if (rc == EXIT_OK && dir && !o->data.dir)
        o->data.dir = own(o, dir);
    const char *label = ember_checkpoint_meta(ck, "ember.label"); /* a table's label column */
    if (rc == EXIT_OK && label && !o->data.label && strcmp(o->data.kind, "csv") == 0)
        o->data.label = own(o, label);
    if (rc == EXIT_OK && input && !o->shape_given &&
        (strcmp(o->data.kind, "folder") == 0 || strcmp(o->data.kind, "random") == 0 ||
         cli_data_is_text(o->data.kind)) &&
        !cli_parse_shape_quiet(input, &o->data.sample_ndim, o->data.sample_shape)) {
        cli_error("%s: ember.input is \"%s\", not a shape", o->resume, cli_printable(input, shown, 64));
        rc = EXIT_DATA;
    }
    o->data.seed = o->seed;
    if (rc == EXIT_OK)
        rc = lm_resume_settings(ctx, o, ck); /* a language model's adapters: its file and --lora */
    if (rc == EXIT_OK && !o->save)
        o->save = o->resume; /* go on writing where it was written */
    ember_checkpoint_close(ck);
    return rc;
}

/* A number of the state's metadata in [low, high]: a whole one into
 * *whole when that is given, else any into *real; false after saying what
 * is wrong. */
static bool state_value(const ember_checkpoint *ck, const char *path, const char *key, double low,
                        double high, int64_t *whole, double *real)
{
    char shown[96];
    const char *text = ember_checkpoint_meta(ck, key);
    if (text && (whole ? cli_int_value(text, (int64_t)low, (int64_t)high, whole)
                       : cli_float_value(text, low, high, real)))
        return true;
    if (whole)
        cli_error("%s: %s is \"%s\", not a whole number from %.0f to %.0f", path, key,
                  cli_printable(text, shown, 64), low, high);
    else
        cli_error("%s: %s is \"%s\", not a number from %g to %g", path, key, cli_printable(text, shown, 64),
                  low, high);
    return false;
}

/* How many answers a sample of the run's data is scored on: one for an
 * image or a row, every position of a text's window (ember.seen counts
 * tokens there: 21 steps of 8 windows of 128 are 21,504, which the check
 * below once held to 168 and so refused every GPT run stopped inside an
 * epoch). From the model checkpoint's own metadata. */
static int64_t answers_per_sample(const ember_checkpoint *model_ck)
{
    const char *kind = ember_checkpoint_meta(model_ck, "ember.data");
    const char *input = ember_checkpoint_meta(model_ck, "ember.input");
    int ndim = 0;
    int64_t shape[3];
    if (!cli_data_is_text(kind) || !input || !cli_parse_shape_quiet(input, &ndim, shape) || ndim != 1)
        return 1;
    return shape[0];
}

/* The position a state records, each number in its range and all of them
 * agreeing with each other and with the data (`per_epoch` steps an epoch,
 * `batch` samples a step, each scored `answers` times); false after saying
 * what is wrong. */
static bool read_position(const ember_checkpoint *ck, const char *path, int64_t per_epoch, int64_t batch,
                          int64_t answers, struct train_position *pos)
{
    const double most = 0x1p61; /* far beyond any run, far below overflow */
    struct train_position p;
    if (!state_value(ck, path, "ember.epoch", 0, TRAIN_MAX_EPOCHS, &p.epochs_done, NULL) ||
        !state_value(ck, path, "ember.step_in_epoch", 0, (double)per_epoch, &p.step_in_epoch, NULL) ||
        !state_value(ck, path, "ember.step", 0, most, &p.total_steps, NULL) ||
        !state_value(ck, path, "ember.loss_sum", 0.0, 1e300, NULL, &p.loss_sum) ||
        !state_value(ck, path, "ember.correct", 0, most, &p.correct, NULL) ||
        !state_value(ck, path, "ember.seen", 0, most, &p.seen, NULL) ||
        !state_value(ck, path, "ember.best_acc", -1.0, 1.0, NULL, &p.best_acc) ||
        !state_value(ck, path, "ember.best_epoch", 0, TRAIN_MAX_EPOCHS, &p.best_epoch, NULL))
        return false;
    /* at most 10^6 epochs of at most 2^34 steps: no overflow */
    if (p.total_steps != p.epochs_done * per_epoch + p.step_in_epoch) {
        cli_error("%s: its place (epoch %lld, step %lld of the next, %lld steps in all) is not one of a run "
                  "of %lld "
                  "steps an epoch: the data or --batch changed since it was saved",
                  path, (long long)p.epochs_done, (long long)p.step_in_epoch, (long long)p.total_steps,
                  (long long)per_epoch);
        return false;
    }
    /* the best epoch may be the one under way: a run cut short by --steps is evaluated where it stops */
    /* seen <= steps x batch x answers, without the product (2^34 steps of 2^20 windows of 2^20 overflow) */
    int64_t per_step = batch * answers;
    if (p.correct > p.seen || (p.seen > 0 && (p.seen - 1) / per_step >= p.step_in_epoch) ||
        p.best_epoch > p.epochs_done + 1 || (p.best_acc < 0.0 && p.best_acc != -1.0)) {
        cli_error(
            "%s: its counts do not agree (%lld right of %lld seen in %lld steps of %lld; the best epoch %lld "
            "of %lld, accuracy %g)",
            path, (long long)p.correct, (long long)p.seen, (long long)p.step_in_epoch, (long long)per_step,
            (long long)p.best_epoch, (long long)p.epochs_done, p.best_acc);
        return false;
    }
    *pos = p;
    return true;
}

int train_resume_state(ember_ctx *ctx, const struct train_options *o, ember_optim *opt, int64_t per_epoch,
                       struct train_position *pos)
{
    /* the state saved with the model: the one beside it, or the one kept
     * aside when a save stopped between the two files (train_save) */
    char state_path[4096], previous_path[4096];
    train_sibling_path(o->resume, "state", state_path, sizeof state_path);
    train_sibling_path(o->resume, "state.previous", previous_path, sizeof previous_path);
    ember_checkpoint *model_ck = ember_checkpoint_open(ctx, o->resume);
    if (!model_ck)
        return cli_fail(ctx, "cannot read the checkpoint to resume");
    const char *model_id = ember_checkpoint_meta(model_ck, "ember.save_id");
    const char *model_step = ember_checkpoint_meta(model_ck, "ember.step");
    const char *path = state_path;
    ember_checkpoint *ck = ember_checkpoint_open(ctx, state_path);
    const char *id = ember_checkpoint_meta(ck, "ember.save_id");
    if (model_id && (!id || strcmp(id, model_id) != 0) && access(previous_path, F_OK) == 0) {
        ember_checkpoint *previous = ember_checkpoint_open(ctx, previous_path);
        const char *previous_id = ember_checkpoint_meta(previous, "ember.save_id");
        if (previous_id && strcmp(previous_id, model_id) == 0) {
            fprintf(stderr,
                    "ember: the run stopped while saving; resuming with %s, the state saved with the "
                    "model\n",
                    previous_path);
            ember_checkpoint_close(ck);
            ck = previous;
            path = previous_path;
            id = previous_id;
        } else {
            ember_checkpoint_close(previous);
        }
    }
    if (!ck) {
        ember_checkpoint_close(model_ck);
        cli_fail(ctx, "cannot read the training state");
        fprintf(stderr,
                "ember: resuming needs the optimizer's state that ember train writes beside the "
                "checkpoint (%s)\n",
                state_path);
        return EXIT_DATA;
    }
    ember_clear_error(ctx);
    const char *step = ember_checkpoint_meta(ck, "ember.step");
    char shown[2][96];
    int rc = EXIT_OK;
    if (!step || !model_step) {
        cli_error("%s is not the training state of an ember run (its metadata lacks the position)", path);
        rc = EXIT_DATA;
    } else if ((model_id && (!id || strcmp(id, model_id) != 0)) || strcmp(step, model_step) != 0) {
        cli_error("%s is from step %s, but %s from step %s: the run stopped between writing the two; train "
                  "again from the start, or from a checkpoint whose pair is whole",
                  path, cli_printable(step, shown[0], 64), o->resume,
                  cli_printable(model_step, shown[1], 64));
        rc = EXIT_DATA;
    } else if (!read_position(ck, path, per_epoch, o->batch, answers_per_sample(model_ck), pos)) {
        rc = EXIT_DATA;
    } else if (ember_optim_load(opt, path) != EMBER_OK) {
        rc = cli_fail(ctx, "cannot load the optimizer's state");
        rc = rc == EXIT_USAGE ? EXIT_DATA : rc;
    }
    ember_checkpoint_close(model_ck);
    ember_checkpoint_close(ck);
    return rc;
}
