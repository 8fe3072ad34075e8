/* SPDX-License-Identifier: MIT */
/*
 * io/data.c — a data set in memory: the helpers a loader fills it through
 * (reserve, name the classes), its accessors and ember_dataset_free.
 * Opening one by kind is io/data-open.c; batching it, io/batcher.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "data-impl.h"
#include "engine.h"

const char *ember_split_name(ember_split split) { return split == EMBER_TRAIN ? "train" : "test"; }

static void free_class_names(ember_dataset *ds)
{
    for (int i = 0; ds->class_names && i < ds->classes; i++)
        free(ds->class_names[i]);
    free(ds->class_names);
    ds->class_names = NULL;
}

/* ember_dataset_reserve and ember_dataset_reserve_floats: `elem` bytes a value */
static ember_status reserve(ember_dataset *ds, int64_t count, int sample_ndim, const int64_t *sample_shape,
                            int classes, size_t elem)
{
    ember_ctx *ctx = ds->ctx;
    int64_t bytes = count < 0 ? EMBER_DATA_MAX_BYTES + 1 : count;
    for (int i = 0; i < sample_ndim && bytes <= EMBER_DATA_MAX_BYTES; i++) {
        if (sample_shape[i] < 1 || sample_shape[i] > EMBER_DATA_MAX_DIM)
            return ember_fail(ctx, EMBER_ERR_ARG, "%s: dimension %d of a sample is %lld, not 1 to %lld",
                              ds->kind, i, (long long)sample_shape[i], (long long)EMBER_DATA_MAX_DIM);
        bytes *= sample_shape[i]; /* at most 2^34 * 2^20: no overflow */
    }
    if (bytes > EMBER_DATA_MAX_BYTES)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "%s %s: %lld samples of that shape exceed ember's %lld-byte limit", ds->kind,
                          ember_split_name(ds->split), (long long)count, (long long)EMBER_DATA_MAX_BYTES);
    ds->count = count;
    ds->classes = classes;
    ds->sample_ndim = sample_ndim;
    for (int i = 0; i < sample_ndim; i++)
        ds->sample_shape[i] = sample_shape[i];
    ds->sample_bytes = count ? bytes / count : ember_shape_numel(sample_ndim, sample_shape);
    if (elem == 1)
        ds->pixels = ember_host_alloc(ctx, (size_t)bytes);
    else
        ds->floats = ds->owned_floats = ember_host_alloc(ctx, (size_t)bytes * elem + 1);
    ds->labels = ember_host_alloc(ctx, (size_t)count * sizeof *ds->labels + 1);
    if ((!ds->pixels && !ds->floats) || !ds->labels)
        return EMBER_ERR_NOMEM;
    /* the classes' names until the loader gives better ones: their indices */
    if (!(ds->class_names = ember_host_calloc(ctx, (size_t)classes + 1, sizeof *ds->class_names)))
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < classes; i++) {
        char number[16];
        snprintf(number, sizeof number, "%d", i);
        if (!(ds->class_names[i] = ember_host_strdup(ctx, number)))
            return EMBER_ERR_NOMEM;
    }
    return EMBER_OK;
}

ember_status ember_dataset_reserve(ember_dataset *ds, int64_t count, int sample_ndim,
                                   const int64_t *sample_shape, int classes)
{
    return reserve(ds, count, sample_ndim, sample_shape, classes, 1);
}

ember_status ember_dataset_reserve_floats(ember_dataset *ds, int64_t count, int sample_ndim,
                                          const int64_t *sample_shape, int classes)
{
    return reserve(ds, count, sample_ndim, sample_shape, classes, sizeof(float));
}

ember_status ember_dataset_name_classes(ember_dataset *ds, const char *const *names)
{
    char **copy = ember_host_calloc(ds->ctx, (size_t)ds->classes + 1, sizeof *copy);
    for (int i = 0; copy && i < ds->classes; i++) {
        if (!(copy[i] = ember_host_strdup(ds->ctx, names[i]))) {
            for (int k = 0; k < i; k++)
                free(copy[k]);
            free(copy);
            copy = NULL;
        }
    }
    if (!copy)
        return EMBER_ERR_NOMEM;
    free_class_names(ds);
    ds->class_names = copy;
    return EMBER_OK;
}

void ember_dataset_free(ember_dataset *ds)
{
    if (!ds)
        return;
    if (!ds->borrowed) {
        free(ds->pixels);
        free(ds->labels);
    }
    free(ds->owned_floats);
    free(ds->tokens);
    free(ds->token_labels);
    ember_feature_scaling_free(ds->table);
    free_class_names(ds);
    free(ds);
}

int64_t ember_dataset_count(const ember_dataset *ds) { return ds ? ds->count : 0; }
bool ember_dataset_is_sequence(const ember_dataset *ds) { return ds && ds->text; }
bool ember_dataset_ignores(const ember_dataset *ds) { return ds && ds->token_labels; }
int ember_dataset_classes(const ember_dataset *ds) { return ds ? ds->classes : 0; }
int ember_dataset_sample_ndim(const ember_dataset *ds) { return ds ? ds->sample_ndim : 0; }
const int64_t *ember_dataset_sample_shape(const ember_dataset *ds) { return ds ? ds->sample_shape : NULL; }
const char *ember_dataset_describe(const ember_dataset *ds) { return ds ? ds->describe : ""; }

const char *ember_dataset_normalize(const ember_dataset *ds)
{
    return !ds          ? ""
           : ds->table  ? "(value - ember.feature_mean) / ember.feature_std"
           : ds->tokens ? "none (token indices into the tokenizer's vocabulary)"
           : ds->text   ? "none (token indices into ember.vocab)"
           : ds->floats ? "none"
                        : "pixel / 255";
}

const char *ember_dataset_class_name(const ember_dataset *ds, int index)
{
    return ds && ds->class_names && index >= 0 && index < ds->classes ? ds->class_names[index] : NULL;
}
