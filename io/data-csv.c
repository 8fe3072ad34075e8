/* SPDX-License-Identifier: MIT */
/*
 * io/data-csv.c — a data set from a CSV table (docs/interop.md), its
 * features standardised.
 *
 *     table.csv                        each class holds out a tenth of its rows
 *     dir/train.csv  and  dir/test.csv given splits
 *
 * One column holds the labels (options->label, else the last); every other
 * column is a feature, a number. The labels are class names ("setosa") or
 * class indices: when every label is a whole number from 0, class k is the
 * label k; otherwise the classes are the distinct labels in byte order
 * (strcmp), as a folder's subfolders are. A checkpoint's class names
 * (options->class_names) fix the classes instead, for eval.
 *
 * Features are standardised with the training split's statistics (or a
 * checkpoint's, options->scaling), so that a column in grams and one in
 * metres train alike; the same numbers go into the checkpoint
 * (ember_feature_scaling_meta, io/feature-scaling.c) and ember_csv_features
 * applies them to new rows. The hold-out is data-folder.c's: per class, seeded by the seed and
 * the class's name.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv-impl.h"
#include "data-impl.h"
#include "safetensors-impl.h"
#include "text-impl.h"

/* ------------------------------------------------------------------ tables */

/* A table read: its header, its rows, the bytes they point into. */
struct table {
    char *bytes;
    struct csv_reader r;
    struct csv_rows rows;
};

static void table_free(struct table *t)
{
    csv_rows_free(&t->rows);
    csv_end(&t->r);
    free(t->bytes);
}

/* (value - mean) / std for every row of the table (ember_feature_standardize);
 * a value so far from the mean that the result is past float32's range
 * names its line and column. */
static ember_status scaling_apply(ember_ctx *ctx, const ember_feature_scaling *s, struct table *t)
{
    for (int64_t r = 0; r < t->rows.count; r++)
        for (int f = 0; f < s->count; f++) {
            float *v = &t->rows.values[r * s->count + f];
            double z;
            if (!ember_feature_standardize(s, f, v, &z))
                return ember_fail(ctx, EMBER_ERR_FORMAT,
                                  "%s line %lld, column \"%.60s\": %g is %g standard "
                                  "deviations from the training mean, past float32's range",
                                  t->r.name, (long long)t->rows.line_of[r], s->names[f], (double)*v, z);
        }
    return EMBER_OK;
}

/* Each column's role: the features `names` (each must be a column), the
 * label column `label` (when `label_required`, it must be there), and no
 * other column. */
static ember_status assign_columns(ember_ctx *ctx, const struct csv_reader *r, char *const *names, int count,
                                   const char *label, bool label_required, int *role)
{
    for (int c = 0; c < r->columns; c++)
        role[c] = strcmp(r->names[c], label) == 0 ? CSV_LABEL : CSV_IGNORE;
    if (label_required && csv_column(r, label) < 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s has no column \"%s\" for the labels", r->name, label);
    for (int f = 0; f < count; f++) {
        int c = csv_column(r, names[f]);
        if (c < 0)
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s has no column \"%s\", a feature the model was trained on", r->name,
                              names[f]);
        role[c] = f;
    }
    for (int c = 0; c < r->columns; c++)
        if (role[c] == CSV_IGNORE)
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: column %d (\"%s\") is not one of the %d features the model "
                              "was trained on, nor the label \"%s\"",
                              r->name, c + 1, r->names[c], count, label);
    return EMBER_OK;
}

/* Reads `path`: with `names` its columns are found by name (assign_columns);
 * without, the label column is `label` (NULL: the last) and the others are
 * the features, in order, their names in *found (to free). */
static ember_status table_read(ember_ctx *ctx, const char *path, char *const *names, int count,
                               const char *label, bool label_required, struct table *t,
                               ember_feature_scaling **found)
{
    size_t len = 0;
    int *role = NULL;
    memset(t, 0, sizeof *t);
    ember_status st = csv_read_file(ctx, path, &t->bytes, &len);
    if (st == EMBER_OK)
        st = csv_begin(ctx, path, t->bytes, len, &t->r);
    if (st == EMBER_OK && !(role = ember_host_alloc(ctx, (size_t)t->r.columns * sizeof *role)))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK && names) {
        st = assign_columns(ctx, &t->r, names, count, label, label_required, role);
    } else if (st == EMBER_OK) {
        const char *label_name = label ? label : t->r.names[t->r.columns - 1];
        int at = csv_column(&t->r, label_name), f = 0;
        if (at < 0)
            st = ember_fail(
                ctx, EMBER_ERR_ARG,
                "%s has no column \"%s\" (ember_data_options.label) for the labels; its columns are "
                "%s%s%s",
                path, label_name, t->r.names[0], t->r.columns > 1 ? " ... " : "",
                t->r.columns > 1 ? t->r.names[t->r.columns - 1] : "");
        else if (t->r.columns < 2)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s has one column; a table holds features and a label",
                            path);
        else if (!(*found = ember_feature_scaling_new(ctx, t->r.columns - 1, label_name)))
            st = EMBER_ERR_NOMEM;
        for (int c = 0; st == EMBER_OK && c < t->r.columns; c++) {
            role[c] = c == at ? CSV_LABEL : f;
            if (c != at && !((*found)->names[f++] = ember_host_strdup(ctx, t->r.names[c])))
                st = EMBER_ERR_NOMEM;
        }
        count = t->r.columns - 1;
    }
    if (st == EMBER_OK)
        st = csv_read_rows(&t->r, role, count, &t->rows);
    if (st == EMBER_OK && t->rows.count == 0)
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s has a header but no rows", path);
    free(role);
    return st;
}

/* ----------------------------------------------------------------- classes */

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The classes, in index order: `given` ones, else the labels found. */
struct classes {
    int count;
    char **names; /* (count) */
};

static void classes_free(struct classes *k)
{
    for (int i = 0; k->names && i < k->count; i++)
        free(k->names[i]);
    free(k->names);
}

/* A label that is a class index: a whole number from 0 below
 * CSV_MAX_LABELS, however it is written ("1", "1.0", "01", "1e0" are all
 * class 1: a table whose labels went through floats once must not have
 * two classes of one label); else -1. */
static long label_number(const char *text)
{
    if (!isdigit((unsigned char)text[0]) || strspn(text, "0123456789.eE+-") != strlen(text))
        return -1;
    char *end;
    double v = strtod(text, &end);
    return !*end && v >= 0 && v < CSV_MAX_LABELS && v == (double)(long)v ? (long)v : -1;
}

static ember_status classes_from_labels(ember_ctx *ctx, const char *path, const struct csv_rows *rows,
                                        struct classes *k)
{
    long most = -1;
    for (int i = 0; i < rows->label_count && most >= -1; i++) {
        long v = label_number(rows->labels[i]);
        most = v < 0 ? -2 : v > most ? v : most;
    }
    /* class indices: k is class k, so one wrong label would size the model;
     * at least half of the classes must be labels of rows */
    int distinct = 0;
    if (most >= 0) {
        unsigned char *seen = ember_host_calloc(ctx, (size_t)most + 1, 1);
        if (!seen)
            return EMBER_ERR_NOMEM;
        for (int i = 0; i < rows->label_count; i++) {
            long v = label_number(rows->labels[i]);
            distinct += !seen[v];
            seen[v] = 1;
        }
        free(seen);
        if (2 * (long)distinct < most + 1)
            return ember_fail(
                ctx, EMBER_ERR_FORMAT,
                "%s: the labels are class indices up to %ld, so the model would have %ld classes, "
                "but only %d of them label a row: a label is wrong, or number the classes from 0 "
                "without gaps",
                path, most, most + 1, distinct);
    }
    k->count = most >= 0 ? (int)most + 1 : rows->label_count;
    if (!(k->names = ember_host_calloc(ctx, (size_t)k->count + 1, sizeof *k->names)))
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < k->count; i++) {
        char number[16];
        snprintf(number, sizeof number, "%d", i);
        if (!(k->names[i] = ember_host_strdup(ctx, most >= 0 ? number : rows->labels[i])))
            return EMBER_ERR_NOMEM;
    }
    if (most < 0)
        qsort(k->names, (size_t)k->count, sizeof *k->names, compare_names);
    return EMBER_OK;
}

/* Each row's class: its label's place among the classes; a label that is
 * not a class (in a test split, or against a checkpoint's) names its line.
 * The classes' names are searched through a sorted copy of the pointers,
 * whatever their order (indices' names "0", "1", ..., "10" are not in
 * strcmp's). */
struct named_class {
    const char *name; /* first, so that compare_names reads it */
    int32_t index;
};

static ember_status rows_classes(ember_ctx *ctx, const struct table *t, const struct classes *k, int32_t *out)
{
    int32_t *of_label = ember_host_alloc(ctx, (size_t)t->rows.label_count * sizeof *of_label + 1);
    struct named_class *sorted = ember_host_alloc(ctx, (size_t)k->count * sizeof *sorted + 1);
    if (!of_label || !sorted) {
        free(of_label);
        free(sorted);
        return EMBER_ERR_NOMEM;
    }
    for (int c = 0; c < k->count; c++)
        sorted[c] = (struct named_class){k->names[c], c};
    qsort(sorted, (size_t)k->count, sizeof *sorted, compare_names);
    for (int i = 0; i < t->rows.label_count; i++) {
        struct named_class key = {t->rows.labels[i], -1};
        const struct named_class *at = bsearch(&key, sorted, (size_t)k->count, sizeof *sorted, compare_names);
        char number[24];
        long v = at ? -1 : label_number(key.name);
        if (v >= 0) { /* "1.0" is the class "1" */
            snprintf(number, sizeof number, "%ld", v);
            key.name = number;
            at = bsearch(&key, sorted, (size_t)k->count, sizeof *sorted, compare_names);
        }
        of_label[i] = at ? at->index : -1;
    }
    free(sorted);
    ember_status st = EMBER_OK;
    for (int64_t r = 0; r < t->rows.count && st == EMBER_OK; r++)
        if ((out[r] = of_label[t->rows.label_of[r]]) < 0)
            st = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s line %lld: the label \"%.60s\" is not one of the %d classes "
                            "the model knows (%s%s%s)",
                            t->r.name, (long long)t->rows.line_of[r], t->rows.labels[t->rows.label_of[r]],
                            k->count, k->names[0], k->count > 1 ? ", ..., " : "",
                            k->count > 1 ? k->names[k->count - 1] : "");
    free(of_label);
    return st;
}

/* ---------------------------------------------------------------- the load */

/* The training rows' (those not is_test) mean and population standard
 * deviation, per column (1 where a column is constant), in two passes of
 * doubles. */
static void standardise_from(ember_feature_scaling *s, const float *values, const bool *is_test, int64_t rows)
{
    for (int f = 0; f < s->count; f++) {
        double sum = 0.0, squares = 0.0;
        int64_t n = 0;
        for (int64_t r = 0; r < rows; r++)
            if (!is_test[r])
                sum += values[r * s->count + f], n++;
        double mean = n ? sum / (double)n : 0.0;
        for (int64_t r = 0; r < rows; r++)
            if (!is_test[r])
                squares += (values[r * s->count + f] - mean) * (values[r * s->count + f] - mean);
        double std = n ? sqrt(squares / (double)n) : 0.0;
        s->mean[f] = (float)mean;
        s->std[f] = std > 0.0 && (float)std > 0.0f ? (float)std : 1.0f;
    }
}

/* Which rows of the hold-out file are the test split's: per class, seeded.
 * The rows are bucketed by class first (a counting sort), so that many
 * classes cost no more than few. */
static ember_status hold_out_rows(ember_ctx *ctx, const int32_t *cls, int64_t rows, const struct classes *k,
                                  uint64_t seed, bool *is_test)
{
    int64_t *start = ember_host_calloc(ctx, (size_t)k->count + 2, sizeof *start);
    int64_t *members = ember_host_alloc(ctx, (size_t)rows * sizeof *members + 1);
    bool *picked = ember_host_alloc(ctx, (size_t)rows * sizeof *picked + 1);
    ember_status st = start && members && picked ? EMBER_OK : EMBER_ERR_NOMEM;
    for (int64_t r = 0; st == EMBER_OK && r < rows; r++)
        start[cls[r] + 2]++;
    for (int c = 0; st == EMBER_OK && c < k->count; c++)
        start[c + 2] += start[c + 1];
    for (int64_t r = 0; st == EMBER_OK && r < rows; r++) /* class c's rows, in order, from start[c] */
        members[start[cls[r] + 1]++] = r;
    for (int c = 0; c < k->count && st == EMBER_OK; c++) {
        int64_t n = start[c + 1] - start[c];
        if (n < 2)
            continue;
        memset(picked, 0, (size_t)n * sizeof *picked);
        st = ember_data_hold_out(ctx, n, seed, k->names[c], picked);
        for (int64_t i = 0; i < n && st == EMBER_OK; i++)
            is_test[members[start[c] + i]] = picked[i];
    }
    free(start);
    free(members);
    free(picked);
    return st;
}

ember_status ember_data_load_csv(ember_dataset *ds, const char *path, const ember_data_options *o)
{
    ember_ctx *ctx = ds->ctx;
    struct stat info;
    bool given_splits = stat(path, &info) == 0 && S_ISDIR(info.st_mode);
    char train_path[4200], test_path[4200];
    snprintf(train_path, sizeof train_path, given_splits ? "%s/train.csv" : "%s", path);
    snprintf(test_path, sizeof test_path, "%s/test.csv", path);
    if (o->scaling && (o->scaling->count < 1 || !o->scaling->names || !o->scaling->mean || !o->scaling->std ||
                       !o->scaling->label))
        return ember_fail(ctx, EMBER_ERR_ARG, "csv: options->scaling is incomplete");

    struct table train = {0}, test = {0};
    struct classes k = {0};
    ember_feature_scaling *scaling = NULL;
    int32_t *cls = NULL;
    bool *is_test = NULL;
    const ember_feature_scaling *given = o->scaling;
    ember_status st =
        given ? table_read(ctx, train_path, given->names, given->count, given->label, true, &train, NULL)
              : table_read(ctx, train_path, NULL, 0, o->label, true, &train, &scaling);
    if (st == EMBER_OK && given && !(scaling = ember_feature_scaling_new(ctx, given->count, given->label)))
        st = EMBER_ERR_NOMEM;
    for (int f = 0; st == EMBER_OK && given && f < given->count; f++) {
        scaling->mean[f] = given->mean[f];
        scaling->std[f] = given->std[f];
        if (!(scaling->names[f] = ember_host_strdup(ctx, given->names[f])))
            st = EMBER_ERR_NOMEM;
    }
    /* the classes, and each training-file row's */
    if (st == EMBER_OK && o->class_names) {
        k.count = o->classes;
        if (!(k.names = ember_host_calloc(ctx, (size_t)k.count + 1, sizeof *k.names)))
            st = EMBER_ERR_NOMEM;
        for (int i = 0; st == EMBER_OK && i < k.count; i++)
            if (!(k.names[i] = ember_host_strdup(ctx, o->class_names[i])))
                st = EMBER_ERR_NOMEM;
    } else if (st == EMBER_OK) {
        st = classes_from_labels(ctx, train_path, &train.rows, &k);
    }
    if (st == EMBER_OK && k.count < 2)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: the label column \"%s\" holds %d class%s; a classifier needs at "
                        "least two",
                        train_path, scaling->label, k.count, k.count == 1 ? "" : "es");
    int64_t rows = train.rows.count;
    if (st == EMBER_OK && (!(cls = ember_host_alloc(ctx, (size_t)rows * sizeof *cls + 1)) ||
                           !(is_test = ember_host_calloc(ctx, (size_t)rows + 1, sizeof *is_test))))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK)
        st = rows_classes(ctx, &train, &k, cls);
    if (st == EMBER_OK && !given_splits)
        st = hold_out_rows(ctx, cls, rows, &k, o->seed, is_test);
    if (st == EMBER_OK && !given) /* the statistics: the training split's rows */
        standardise_from(scaling, train.rows.values, is_test, rows);

    /* the split's rows: from the training file, or test.csv */
    struct table *from = &train;
    if (st == EMBER_OK && given_splits && ds->split == EMBER_TEST) {
        st = table_read(ctx, test_path, scaling->names, scaling->count, scaling->label, true, &test, NULL);
        free(cls);
        cls = NULL;
        free(is_test);
        is_test = NULL;
        rows = test.rows.count;
        if (st == EMBER_OK && (!(cls = ember_host_alloc(ctx, (size_t)rows * sizeof *cls + 1)) ||
                               !(is_test = ember_host_alloc(ctx, (size_t)rows + 1))))
            st = EMBER_ERR_NOMEM;
        if (st == EMBER_OK)
            st = rows_classes(ctx, &test, &k, cls);
        for (int64_t r = 0; st == EMBER_OK && r < rows; r++)
            is_test[r] = true;
        from = &test;
    }
    if (st == EMBER_OK)
        st = scaling_apply(ctx, scaling, from);
    int64_t count = 0;
    bool want_test = ds->split == EMBER_TEST;
    for (int64_t r = 0; st == EMBER_OK && r < rows; r++)
        count += is_test[r] == want_test;
    int64_t shape[1] = {scaling ? scaling->count : 0};
    if (st == EMBER_OK)
        st = ember_dataset_reserve_floats(ds, count, 1, shape, k.count);
    if (st == EMBER_OK) {
        int64_t at = 0;
        for (int64_t r = 0; r < rows; r++)
            if (is_test[r] == want_test) {
                memcpy(ds->owned_floats + at * shape[0], from->rows.values + r * shape[0],
                       (size_t)shape[0] * sizeof(float));
                ds->labels[at++] = cls[r];
            }
        st = ember_dataset_name_classes(ds, (const char *const *)k.names);
    }
    if (st == EMBER_OK) {
        ds->table = scaling;
        scaling = NULL;
    }
    ember_feature_scaling_free(scaling);
    classes_free(&k);
    free(cls);
    free(is_test);
    table_free(&test);
    table_free(&train);
    return st;
}

float *ember_csv_features(ember_ctx *ctx, const char *path, const ember_feature_scaling *s, int64_t *rows)
{
    if (!ctx)
        return NULL;
    if (!path || !s || !rows || s->count < 1) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_csv_features: NULL %s",
                   !path ? "path"
                   : !s  ? "scaling"
                         : "rows");
        return NULL;
    }
    struct table t;
    float *values = NULL;
    if (table_read(ctx, path, s->names, s->count, s->label, false, &t, NULL) == EMBER_OK &&
        scaling_apply(ctx, s, &t) == EMBER_OK) {
        values = t.rows.values; /* taken from the table */
        t.rows.values = NULL;
        *rows = t.rows.count;
    }
    table_free(&t);
    return values;
}
