/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_text.c — a file as a text data set (--data text,
 * io/data-text.c): the input's first byte chooses the context (1 to 64),
 * the rest is the file, opened as both splits. A split that opens must
 * have one vocabulary of distinct ascending bytes shared by both splits,
 * every token below it, and windows (ember_text_window, in order and at a
 * random place) whose y is x shifted by one.
 */
#include <stdlib.h>
#include <string.h>

#include "data-impl.h"
#include "fuzz-util.h"

static void check(const ember_dataset *ds)
{
    if (!ds->text || ds->vocab_size < 1 || ds->vocab_size > 256 || ds->classes != ds->vocab_size ||
        ds->count < 1 || ds->token_count < ds->sample_shape[0] + 1)
        abort();
    for (int k = 1; k < ds->vocab_size; k++)
        if (ds->vocab[k] <= ds->vocab[k - 1])
            abort();
    for (int64_t i = 0; i < ds->token_count; i++)
        if (ds->pixels[i] >= ds->vocab_size)
            abort();
    int64_t context = ds->sample_shape[0];
    int32_t *x = malloc((size_t)context * sizeof *x), *y = malloc((size_t)context * sizeof *y);
    if (!x || !y)
        abort();
    ember_rng rng = ember_rng_seed(7);
    for (int w = 0; w < 3; w++) {
        ember_text_window(ds, w == 2 ? 0 : (ds->count - 1) * w, w == 2 ? &rng : NULL, x, y);
        for (int64_t t = 0; t + 1 < context; t++)
            if (y[t] != x[t + 1] || x[t] < 0 || x[t] >= ds->vocab_size)
                abort();
    }
    free(x);
    free(y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *path = fuzz_write("text.txt", data + 1, size - 1);
    if (!path)
        return 0;
    ember_data_options options = {.kind = "text", .dir = path, .seed = 1, .sample_ndim = 1};
    options.sample_shape[0] = 1 + data[0] % 64;
    ember_dataset *train = ember_dataset_open(fuzz_ctx(), &options, EMBER_TRAIN);
    ember_dataset *test = ember_dataset_open(fuzz_ctx(), &options, EMBER_TEST);
    if (!train != !test)
        abort(); /* one file, two splits: both open or neither */
    if (train) {
        check(train);
        check(test);
        if (train->vocab_size != test->vocab_size ||
            memcmp(train->vocab, test->vocab, (size_t)train->vocab_size))
            abort();
    }
    ember_dataset_free(train);
    ember_dataset_free(test);
    ember_clear_error(fuzz_ctx());
    return 0;
}
