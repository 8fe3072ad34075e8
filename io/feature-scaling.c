/* SPDX-License-Identifier: MIT */
/*
 * io/feature-scaling.c — a CSV data set's standardisation (each feature's
 * name, mean and standard deviation, and the label column's name): made by
 * io/data-csv.c, written into a checkpoint's metadata and read back from
 * it, so that eval and predict scale new rows as training did.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data-impl.h"
#include "json-impl.h"
#include "safetensors-impl.h"
#include "text-impl.h"

void ember_feature_scaling_free(ember_feature_scaling *s)
{
    if (!s)
        return;
    for (int i = 0; s->names && i < s->count; i++)
        free(s->names[i]);
    free(s->names);
    free(s->mean);
    free(s->std);
    free(s->label);
    free(s);
}

ember_feature_scaling *ember_feature_scaling_new(ember_ctx *ctx, int count, const char *label)
{
    ember_feature_scaling *s = ember_host_calloc(ctx, 1, sizeof *s);
    if (!s)
        return NULL;
    s->count = count;
    if (!(s->names = ember_host_calloc(ctx, (size_t)count + 1, sizeof *s->names)) ||
        !(s->mean = ember_host_calloc(ctx, (size_t)count + 1, sizeof *s->mean)) ||
        !(s->std = ember_host_calloc(ctx, (size_t)count + 1, sizeof *s->std)) ||
        !(s->label = ember_host_strdup(ctx, label))) {
        ember_feature_scaling_free(s);
        return NULL;
    }
    return s;
}

const ember_feature_scaling *ember_dataset_scaling(const ember_dataset *ds) { return ds ? ds->table : NULL; }

/* "[1.5, 2, ...]": floats written so that strtof reads the same bits */
static char *float_list(const float *v, int n)
{
    struct ember_text t = {0};
    ember_text_add(&t, "[", 1);
    for (int i = 0; i < n; i++)
        ember_text_printf(&t, "%s%.9g", i ? ", " : "", (double)v[i]);
    ember_text_add(&t, "]", 1);
    return ember_text_take(&t);
}

ember_status ember_feature_scaling_meta(ember_ctx *ctx, const ember_feature_scaling *s, char *kv[9])
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!s || !kv)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_feature_scaling_meta: NULL %s", !s ? "scaling" : "kv");
    struct ember_text names = {0};
    ember_text_add(&names, "[", 1);
    for (int i = 0; i < s->count; i++) {
        ember_text_add(&names, ", ", i ? 2 : 0);
        ember_text_json_string(&names, s->names[i]);
    }
    ember_text_add(&names, "]", 1);
    static const char *const keys[] = {"ember.features", "ember.label", "ember.feature_mean",
                                       "ember.feature_std"};
    char *values[4] = {ember_text_take(&names), ember_host_strdup(ctx, s->label),
                       float_list(s->mean, s->count), float_list(s->std, s->count)};
    bool ok = values[0] && values[1] && values[2] && values[3];
    for (int i = 0; i < 4; i++) {
        kv[2 * i] = (char *)keys[i]; /* not freed: the caller frees the values */
        kv[2 * i + 1] = values[i];
        if (!ok)
            free(values[i]);
    }
    kv[8] = NULL;
    return ok ? EMBER_OK : ember_fail(ctx, EMBER_ERR_NOMEM, "out of memory writing the feature scaling");
}

/* n floats from "[a, b, ...]"; false if it is not that */
static bool parse_floats(const char *text, float *out, int n)
{
    const char *p = text;
    if (*p++ != '[')
        return false;
    for (int i = 0; i < n; i++) {
        char *end;
        out[i] = strtof(p, &end);
        if (end == p || !isfinite(out[i]))
            return false;
        p = end;
        while (*p == ' ')
            p++;
        if (*p++ != (i + 1 < n ? ',' : ']'))
            return false;
    }
    return *p == '\0';
}

bool ember_feature_standardize(const ember_feature_scaling *s, int f, float *v, double *z)
{
    *z = ((double)*v - s->mean[f]) / s->std[f];
    if (fabs(*z) > FLT_MAX)
        return false;
    *v = (float)*z;
    return true;
}

ember_status ember_feature_scaling_apply(ember_ctx *ctx, const ember_feature_scaling *scaling, float *values,
                                         int64_t rows, const char *what)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!scaling || (!values && rows > 0) || rows < 0)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "ember_feature_scaling_apply: no scaling, or no values for %lld rows",
                          (long long)rows);
    for (int64_t r = 0; r < rows; r++)
        for (int f = 0; f < scaling->count; f++) {
            float *v = &values[r * scaling->count + f];
            double z;
            if (!ember_feature_standardize(scaling, f, v, &z))
                return ember_fail(ctx, EMBER_ERR_FORMAT,
                                  "%s row %lld, feature \"%.60s\": %g is %g standard deviations from the "
                                  "training mean, past float32's range",
                                  what ? what : "the data", (long long)r, scaling->names[f], (double)*v, z);
        }
    return EMBER_OK;
}

/* a metadata value by key: a checkpoint's, or a NULL-terminated list of pairs' */
typedef const char *meta_lookup(const void *from, const char *key);

static const char *checkpoint_meta(const void *from, const char *key)
{
    return ember_checkpoint_meta(from, key);
}

static const char *pairs_meta(const void *from, const char *key)
{
    const char *const *pairs = from;
    for (int i = 0; pairs && pairs[i] && pairs[i + 1]; i += 2)
        if (strcmp(pairs[i], key) == 0)
            return pairs[i + 1];
    return NULL;
}

static ember_status scaling_from(ember_ctx *ctx, meta_lookup *meta, const void *from,
                                 ember_feature_scaling **out)
{
    *out = NULL;
    const char *names = meta(from, "ember.features"), *label = meta(from, "ember.label");
    const char *mean = meta(from, "ember.feature_mean"), *std = meta(from, "ember.feature_std");
    if (!names && !label && !mean && !std)
        return EMBER_OK;
    char **items = NULL;
    int count = 0;
    ember_feature_scaling *s = NULL;
    ember_status st =
        names && label && mean && std ? ember_json_strings(ctx, names, &items, &count) : EMBER_ERR_FORMAT;
    if (st == EMBER_OK && count > 0 && (s = ember_feature_scaling_new(ctx, count, label))) {
        for (int i = 0; i < count; i++) {
            s->names[i] = items[i];
            items[i] = NULL;
        }
        bool ok = parse_floats(mean, s->mean, count) && parse_floats(std, s->std, count);
        for (int i = 0; ok && i < count; i++)
            ok = s->std[i] > 0.0f;
        if (!ok) {
            ember_feature_scaling_free(s);
            s = NULL;
        }
    }
    for (int i = 0; items && i < count; i++)
        free(items[i]);
    free(items);
    if (!s)
        return ember_last_status(ctx) == EMBER_ERR_NOMEM
                   ? EMBER_ERR_NOMEM
                   : ember_fail(
                         ctx, EMBER_ERR_FORMAT,
                         "the checkpoint's feature scaling (ember.features, "
                         "ember.label, ember.feature_mean, ember.feature_std) is incomplete or malformed");
    *out = s;
    return EMBER_OK;
}

ember_status ember_checkpoint_scaling(ember_ctx *ctx, const ember_checkpoint *ck, ember_feature_scaling **out)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!ck || !out)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_checkpoint_scaling: NULL %s",
                          !ck ? "checkpoint" : "out");
    return scaling_from(ctx, checkpoint_meta, ck, out);
}

ember_status ember_feature_scaling_from_meta(ember_ctx *ctx, const char *const *kv,
                                             ember_feature_scaling **out)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!out)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_feature_scaling_from_meta: NULL out");
    return scaling_from(ctx, pairs_meta, kv, out);
}
