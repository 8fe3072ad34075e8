/* SPDX-License-Identifier: MIT */
/*
 * io/data-text.c — text as a data set: every byte of a file a token.
 *
 * The vocabulary is the file's distinct bytes, sorted: token k is the k-th
 * smallest byte that occurs (a file of English holds about a hundred), and
 * it is the same for both splits, which read the same file. The training
 * split is the first 90% of the file, the test (validation) split the
 * last 10%, as nanoGPT's character-level examples divide theirs.
 *
 * A sample is a window of `context` tokens x and the same window shifted
 * by one, y: y[t] is the token that follows x[t], which the model learns
 * to predict at every position. The training split is read in windows at
 * random offsets (any byte may start one), drawn from the batcher's seed,
 * the epoch and the window's place in it, so that every device and a
 * resumed run see the same windows; an "epoch" is as many windows as fit
 * in the split side by side. The test split is read in exactly those
 * side-by-side windows, in order, so its loss is over a fixed set of
 * positions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data-impl.h"

#define TEXT_DEFAULT_CONTEXT 128
#define TEXT_MAX_BYTES       ((int64_t)1 << 31) /* token offsets stay below 2^31 */

/* a byte as a class name: itself when printable, else an escape ("\n", "\x80") */
static void byte_name(uint8_t b, char *out, size_t len)
{
    if (b == '\n')
        snprintf(out, len, "\\n");
    else if (b == '\t')
        snprintf(out, len, "\\t");
    else if (b >= 0x20 && b < 0x7f && b != '\\')
        snprintf(out, len, "%c", b);
    else
        snprintf(out, len, "\\x%02x", b);
}

ember_status ember_data_load_text(ember_dataset *ds, const char *path, const ember_data_options *options)
{
    ember_ctx *ctx = ds->ctx;
    if (options->sample_ndim > 1 || (options->sample_ndim == 1 && options->sample_shape[0] < 1))
        return ember_fail(
            ctx, EMBER_ERR_ARG,
            "text: the context is one length (ember_data_options.sample_shape[0]), not a shape of %d "
            "dimensions",
            options->sample_ndim);
    int64_t context = options->sample_ndim == 1 ? options->sample_shape[0] : TEXT_DEFAULT_CONTEXT;
    if (context > EMBER_DATA_MAX_DIM)
        return ember_fail(ctx, EMBER_ERR_ARG, "text: a context of %lld is over %lld", (long long)context,
                          (long long)EMBER_DATA_MAX_DIM);
    struct stat info;
    FILE *file = ember_fopen_regular(ctx, path, &info);
    if (!file)
        return ember_last_status(ctx);
    int64_t len = (int64_t)info.st_size;
    /* each split holds a window and the byte after it, at least */
    int64_t test_len = len / 10, train_len = len - test_len;
    int64_t first = ds->split == EMBER_TRAIN ? 0 : train_len,
            count = ds->split == EMBER_TRAIN ? train_len : test_len;
    ember_status st = EMBER_OK;
    if (len > TEXT_MAX_BYTES)
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "text: %s is %lld bytes; ember reads text files up to %lld",
                        path, (long long)len, (long long)TEXT_MAX_BYTES);
    else if (test_len < context + 1)
        st = ember_fail(
            ctx, EMBER_ERR_FORMAT,
            "text: %s is %lld bytes; its last tenth, the validation split, must hold a window of the "
            "context (%lld) and one byte more: give a file of at least %lld bytes or a shorter "
            "ember_data_options.sample_shape[0]",
            path, (long long)len, (long long)context, (long long)(10 * (context + 1)));

    /* the vocabulary, the distinct bytes of the whole file, read a chunk at
     * a time; then only this split's bytes are held (the file once, over
     * both splits, where each held all of it before) */
    bool seen[256] = {false};
    uint8_t chunk[16384], *bytes = NULL;
    int64_t got = 0;
    for (size_t n; st == EMBER_OK && (n = fread(chunk, 1, sizeof chunk, file)) > 0; got += (int64_t)n)
        for (size_t i = 0; i < n; i++)
            seen[chunk[i]] = true;
    if (st == EMBER_OK && (got != len || ferror(file)))
        st = ember_fail(ctx, EMBER_ERR_IO, "text: cannot read the %lld bytes of %s: %s", (long long)len, path,
                        ferror(file) ? strerror(errno) : "it changed while it was read");
    if (st == EMBER_OK && !(bytes = ember_host_alloc(ctx, (size_t)count + 1)))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK &&
        (fseeko(file, (off_t)first, SEEK_SET) != 0 || fread(bytes, 1, (size_t)count, file) != (size_t)count))
        st = ember_fail(ctx, EMBER_ERR_IO, "text: cannot read the %lld bytes of %s: %s", (long long)len, path,
                        ferror(file) ? strerror(errno) : "it shrank");
    fclose(file);
    if (st != EMBER_OK) {
        free(bytes);
        return st;
    }

    /* the vocabulary: the distinct bytes, sorted; token[b] is byte b's index */
    uint8_t token[256];
    ds->vocab_size = 0;
    for (int b = 0; b < 256; b++)
        if (seen[b]) {
            token[b] = (uint8_t)ds->vocab_size;
            ds->vocab[ds->vocab_size++] = (uint8_t)b;
        }
    /* this split's bytes as tokens, in place */
    for (int64_t i = 0; i < count; i++)
        bytes[i] = token[bytes[i]];
    ds->text = true;
    ds->pixels = bytes; /* the token stream */
    ds->token_count = count;
    ds->count = (count - 1) / context;
    ds->classes = ds->vocab_size;
    ds->sample_ndim = 1;
    ds->sample_shape[0] = context;
    ds->sample_bytes = context;
    if (!(ds->class_names = ember_host_calloc(ctx, (size_t)ds->classes + 1, sizeof *ds->class_names)))
        return EMBER_ERR_NOMEM;
    for (int k = 0; k < ds->classes; k++) {
        char name[8];
        byte_name(ds->vocab[k], name, sizeof name);
        if (!(ds->class_names[k] = ember_host_strdup(ctx, name)))
            return EMBER_ERR_NOMEM;
    }
    return EMBER_OK;
}

void ember_text_window(const ember_dataset *ds, int64_t index, const ember_rng *random, int32_t *x,
                       int32_t *y)
{
    int64_t context = ds->sample_shape[0], start = index * context;
    if (random) { /* any start from which a window and the byte after it fit */
        ember_rng rng = *random;
        uint64_t r = (uint64_t)ember_rng_u32(&rng) << 32 | ember_rng_u32(&rng);
        start = (int64_t)(r % (uint64_t)(ds->token_count - context));
    }
    if (ds->tokens) { /* a tokenizer's stream (data-tokens.c) */
        memcpy(x, ds->tokens + start, (size_t)context * sizeof *x);
        memcpy(y, (ds->token_labels ? ds->token_labels : ds->tokens) + start + 1,
               (size_t)context * sizeof *y);
        return;
    }
    const uint8_t *tokens = ds->pixels + start;
    for (int64_t t = 0; t < context; t++) {
        x[t] = tokens[t];
        y[t] = tokens[t + 1];
    }
}

int ember_dataset_vocab(const ember_dataset *ds, uint8_t *vocab)
{
    if (!ds || !ds->text)
        return 0;
    if (vocab)
        memcpy(vocab, ds->vocab, (size_t)ds->vocab_size);
    return ds->vocab_size;
}
