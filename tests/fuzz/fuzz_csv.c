/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_csv.c — a CSV table as data (--data csv) and as rows to
 * predict (ember_csv_features). The input is the table: both splits are
 * loaded from it (a tenth of each class held out), its label the last
 * column; then its rows are read as a model trained on the columns "a" and
 * "b" (label "y") would read them. A data set that loads must hold labels
 * within its classes and finite features.
 */
#include <math.h>
#include <stdlib.h>

#include "data-impl.h"
#include "fuzz-util.h"

static void load(const char *path, ember_split split)
{
    ember_data_options options = {.kind = "csv", .dir = path, .seed = 1};
    ember_dataset *ds = ember_dataset_open(fuzz_ctx(), &options, split);
    if (!ds)
        return;
    const ember_feature_scaling *s = ember_dataset_scaling(ds);
    if (!s || ds->sample_ndim != 1 || ds->sample_shape[0] != s->count || ds->classes < 2)
        abort();
    for (int64_t i = 0; i < ds->count; i++) {
        if (ds->labels[i] < 0 || ds->labels[i] >= ds->classes)
            abort();
        for (int64_t k = 0; k < ds->sample_bytes; k++)
            if (!isfinite(ds->floats[i * ds->sample_bytes + k]))
                abort(); /* a standardised value that is not a number */
    }
    ember_dataset_free(ds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("table.csv", data, size);
    if (!path)
        return 0;
    load(path, EMBER_TRAIN);
    load(path, EMBER_TEST);
    static char a[] = "a", b[] = "b", y[] = "y";
    char *names[] = {a, b};
    float mean[] = {1.0f, -2.0f}, std[] = {0.5f, 3.0f};
    ember_feature_scaling s = {.count = 2, .names = names, .mean = mean, .std = std, .label = y};
    int64_t rows = -1;
    free(ember_csv_features(fuzz_ctx(), path, &s, &rows));
    ember_clear_error(fuzz_ctx());
    return 0;
}
