/* SPDX-License-Identifier: MIT */
/*
 * tools/predict-arrays.c — `ember predict` on NumPy arrays and CSV tables
 * (standardised as the model's training table was), and its --output
 * files (docs/interop.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "predict.h"

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n > k && strcmp(s + n - k, tail) == 0;
}

bool predict_is_array_name(const char *name) { return ends_with(name, ".npy") || ends_with(name, ".csv"); }

const char *predict_output_kind(const char *path)
{
    return ends_with(path, ".npy") ? "npy" : ends_with(path, ".csv") ? "csv" : NULL;
}

static float *table_samples(ember_ctx *ctx, const char *path, const int64_t *shape, int ndim,
                            const ember_checkpoint *ck, int64_t *count)
{
    ember_feature_scaling *scaling = NULL;
    if (ember_checkpoint_scaling(ctx, ck, &scaling) != EMBER_OK) {
        cli_fail(ctx, "cannot read the model's standardisation");
        return NULL;
    }
    float *values = NULL;
    if (!scaling)
        cli_error(
            "%s is a CSV table, but the model was not trained on one (its checkpoint holds no ember.features "
            "and standardisation): give .npy files of its inputs",
            path);
    else if (ndim != 1 || shape[0] != scaling->count)
        cli_error("the checkpoint's %d features do not fit its model's input", scaling->count);
    else if (!(values = ember_csv_features(ctx, path, scaling, count)))
        cli_fail(ctx, "cannot read the table");
    ember_feature_scaling_free(scaling);
    return values;
}

float *predict_array_samples(ember_ctx *ctx, const char *path, const int64_t *shape, int ndim,
                             const ember_checkpoint *ck, int64_t *count)
{
    if (ends_with(path, ".csv")) /* a table's rows, standardised as in training */
        return table_samples(ctx, path, shape, ndim, ck, count);
    int got_ndim = 0;
    int64_t got[EMBER_MAX_DIMS];
    bool bytes = false;
    float *values = ember_npy_load(ctx, path, &got_ndim, got, &bytes);
    if (!values) {
        cli_fail(ctx, "cannot read the array");
        return NULL;
    }
    bool fits = got_ndim == ndim + 1 && got[0] >= 1;
    for (int i = 0; fits && i < ndim; i++)
        fits = got[i + 1] == shape[i];
    if (!fits) {
        char want[64] = "N", have[64] = "";
        for (int i = 0; i < ndim; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), ", %lld", (long long)shape[i]);
        for (int i = 0; i < got_ndim; i++)
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%lld", i ? ", " : "",
                     (long long)got[i]);
        cli_error("%s is an array of shape (%s); the model takes (%s)", path, have, want);
        free(values);
        return NULL;
    }
    *count = got[0];
    int64_t n = got[0];
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    if (bytes) /* pixels, as ember's data sets scale them */
        for (int64_t i = 0; i < n; i++)
            values[i] /= 255.0f;
    /* a model trained on a CSV table takes its features standardised: the
     * array's rows are the table's values, standardised here as a table's are */
    ember_feature_scaling *scaling = NULL;
    if (ember_checkpoint_scaling(ctx, ck, &scaling) != EMBER_OK) {
        cli_fail(ctx, "cannot read the model's standardisation");
        free(values);
        return NULL;
    }
    bool table = scaling && ndim == 1 && shape[0] == scaling->count;
    if (table && ember_feature_scaling_apply(ctx, scaling, values, got[0], path) != EMBER_OK) {
        cli_fail(ctx, "cannot standardise the array's rows");
        free(values);
        values = NULL;
    } else if (table) {
        fprintf(stderr, "ember: %s: each row's %d features standardised as the training table's were\n", path,
                scaling->count);
    }
    ember_feature_scaling_free(scaling);
    return values;
}

/* a CSV field: quoted when it holds a comma, a quote or a line break */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The --output file through the output helper (cli_output_check ran before
 * the work): a .npy written by the library into the temporary file, or a
 * CSV table written here, then flushed and renamed into place. */
int predict_write_output(ember_ctx *ctx, const char *path, const float *results, int64_t count, int classes,
                         const char *const *class_names, const char *const *inputs, bool logits)
{
    struct cli_output o;
    int rc = cli_output_open(&o, path, "--output");
    if (rc != EXIT_OK)
        return rc;
    if (strcmp(predict_output_kind(path), "npy") == 0) {
        int64_t shape[2] = {count, classes};
        if (ember_npy_save(ctx, o.tmp, results, 2, shape) != EMBER_OK) {
            rc = cli_fail(ctx, "cannot write --output");
            cli_output_close(&o, false);
            return rc;
        }
        return cli_output_close(&o, true);
    }
    FILE *f = o.f;
    fputs("input,class", f);
    for (int k = 0; k < classes; k++) {
        char column[512];
        snprintf(column, sizeof column, "%s %s", logits ? "logit" : "p", class_names[k]);
        fputc(',', f);
        csv_field(f, column);
    }
    fputc('\n', f);
    for (int64_t i = 0; i < count; i++) {
        const float *row = results + i * classes;
        int best = 0;
        for (int k = 1; k < classes; k++)
            if (row[k] > row[best])
                best = k;
        csv_field(f, inputs[i]);
        fputc(',', f);
        csv_field(f, class_names[best]);
        for (int k = 0; k < classes; k++)
            fprintf(f, ",%.9g", row[k]);
        fputc('\n', f);
    }
    return cli_output_close(&o, true); /* a failed write is the stream's error, said there */
}
