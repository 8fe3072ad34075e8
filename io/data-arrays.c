/* SPDX-License-Identifier: MIT */
/*
 * io/data-arrays.c — a data set over the caller's own arrays.
 *
 * For a program with data ember has no loader for: it hands over its
 * images (floats as they are, or bytes to scale to [0, 1]) and its labels,
 * and the batcher and ember_model_evaluate use them like any data set.
 * Nothing is copied, so a data set of any size costs nothing to open; the
 * price is that the arrays must outlive it and stay unchanged. Every label
 * is checked here, once, so a bad one is an error with its index rather
 * than a wrong loss later.
 */
#include <stdio.h>
#include <string.h>

#include "data-impl.h"

static ember_status check_arrays(ember_ctx *ctx, const ember_array_data *a, int64_t *sample)
{
    const char *name = a->name ? a->name : "arrays";
    if (a->count < 1)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: count is %lld; a data set needs at least one sample", name,
                          (long long)a->count);
    if (a->sample_ndim != 1 && a->sample_ndim != 3)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: sample_ndim is %d; samples are (features) or (C, H, W)",
                          name, a->sample_ndim);
    if (!a->images == !a->image_bytes)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "%s: give the images as floats (images) or as bytes "
                          "(image_bytes), exactly one of them",
                          name);
    if (!a->labels)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: labels is NULL", name);
    if (a->classes < 2 || a->classes > 1 << 20)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: classes is %d, not 2 to %d", name, a->classes, 1 << 20);
    int64_t n = 1;
    for (int i = 0; i < a->sample_ndim; i++) {
        if (a->sample_shape[i] < 1 || a->sample_shape[i] > EMBER_DATA_MAX_DIM)
            return ember_fail(ctx, EMBER_ERR_ARG, "%s: dimension %d of a sample is %lld, not 1 to %lld", name,
                              i, (long long)a->sample_shape[i], (long long)EMBER_DATA_MAX_DIM);
        n *= a->sample_shape[i]; /* at most 2^60: no overflow */
    }
    if (n > EMBER_DATA_MAX_BYTES || a->count > EMBER_DATA_MAX_BYTES / n)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: %lld samples of %lld values exceed ember's limit of %lld",
                          name, (long long)a->count, (long long)n, (long long)EMBER_DATA_MAX_BYTES);
    for (int64_t i = 0; i < a->count; i++)
        if (a->labels[i] < 0 || a->labels[i] >= a->classes)
            return ember_fail(ctx, EMBER_ERR_ARG, "%s: label %lld is %d, not a class from 0 to %d", name,
                              (long long)i, (int)a->labels[i], a->classes - 1);
    for (int i = 0; a->class_names && i < a->classes; i++)
        if (!a->class_names[i])
            return ember_fail(ctx, EMBER_ERR_ARG,
                              "%s: class_names[%d] is NULL (give every name, or NULL for "
                              "the list)",
                              name, i);
    *sample = n;
    return EMBER_OK;
}

ember_dataset *ember_dataset_from_arrays(ember_ctx *ctx, const ember_array_data *a)
{
    if (!ctx)
        return NULL;
    int64_t sample = 0;
    if (!a) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_dataset_from_arrays: NULL arrays");
        return NULL;
    }
    if (check_arrays(ctx, a, &sample) != EMBER_OK)
        return NULL;
    ember_dataset *ds = ember_host_calloc(ctx, 1, sizeof *ds);
    if (!ds)
        return NULL;
    *ds = (ember_dataset){.ctx = ctx,
                          .kind = "arrays",
                          .split = EMBER_TRAIN,
                          .count = a->count,
                          .classes = a->classes,
                          .sample_ndim = a->sample_ndim,
                          .sample_bytes = sample,
                          .borrowed = true,
                          .floats = a->images,
                          /* read, never written: the batcher only copies from them */
                          .pixels = (uint8_t *)a->image_bytes,
                          .labels = (int32_t *)a->labels};
    memcpy(ds->sample_shape, a->sample_shape, sizeof ds->sample_shape);
    /* the names: the caller's, or the indices */
    if (!(ds->class_names = ember_host_calloc(ctx, (size_t)a->classes + 1, sizeof *ds->class_names))) {
        ember_dataset_free(ds);
        return NULL;
    }
    for (int i = 0; i < a->classes; i++) {
        char number[16];
        snprintf(number, sizeof number, "%d", i);
        if (!(ds->class_names[i] = ember_host_strdup(ctx, a->class_names ? a->class_names[i] : number))) {
            ember_dataset_free(ds);
            return NULL;
        }
    }
    char shape[96] = "";
    for (int i = 0; i < ds->sample_ndim; i++) {
        size_t used = strlen(shape);
        snprintf(shape + used, sizeof shape - used, i ? "x%lld" : "%lld", (long long)ds->sample_shape[i]);
    }
    snprintf(ds->describe, sizeof ds->describe, "%.120s (%lld x %s, %d classes, %s)",
             a->name ? a->name : "arrays", (long long)ds->count, shape, ds->classes,
             ds->floats ? "floats" : "bytes");
    return ds;
}
