/* SPDX-License-Identifier: MIT */
/*
 * models/lm-data.c — a text file as a pretrained model's training data: the
 * file cut by the model's own tokenizer, then a token stream's data set
 * (io/data-tokens.c), so that its windows are what the model reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files-impl.h"
#include "lm-impl.h"

#define MAX_TEXT_BYTES ((int64_t)1 << 30) /* the tokens of 1 GiB of text: 4 GiB at most */

ember_status lm_read_text(ember_ctx *ctx, const char *path, char **text, size_t *len)
{
    struct stat info;
    char why[600];
    int fd = ember_open_regular_file(path, &info, why, sizeof why);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return ember_set_error(ctx, fd < 0 ? EMBER_ERR_IO : EMBER_ERR_NOMEM, "%s",
                               fd < 0 ? why : "out of host memory opening the text");
    }
    ember_status st = EMBER_OK;
    if ((int64_t)info.st_size > MAX_TEXT_BYTES)
        st = ember_set_error(ctx, EMBER_ERR_FORMAT, "%s is %lld bytes; ember tokenises text files up to %lld",
                             path, (long long)info.st_size, (long long)MAX_TEXT_BYTES);
    else if (!(*text = malloc((size_t)info.st_size + 1)))
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for the %lld bytes of %s",
                             (long long)info.st_size, path);
    else if ((*len = fread(*text, 1, (size_t)info.st_size, f)) != (size_t)info.st_size || ferror(f))
        st = ember_set_error(ctx, EMBER_ERR_IO, "cannot read the %lld bytes of %s: %s",
                             (long long)info.st_size, path,
                             ferror(f) ? strerror(errno) : "it changed while it was read");
    fclose(f);
    if (st != EMBER_OK) {
        free(*text);
        *text = NULL;
        return st;
    }
    (*text)[*len] = 0;
    return EMBER_OK;
}

ember_dataset *ember_lm_dataset(ember_lm *lm, const char *path, int64_t context, ember_split split)
{
    if (!lm)
        return NULL;
    if (!path) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_dataset: no path");
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    if (lm_read_text(lm->ctx, path, &text, &len) != EMBER_OK)
        return NULL;
    /* byte-level BPE: never more tokens than bytes (no special tokens are matched) */
    int32_t *tokens = malloc((len + 1) * sizeof *tokens);
    int64_t n =
        tokens ? lm_tokenize(lm->ctx, lm->tok, text, len, false, tokens, (int64_t)len + 1)
               : (ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory for the tokens of %s", path),
                  -1);
    free(text);
    ember_dataset *ds = NULL;
    if (n > (int64_t)len + 1)
        ember_set_error(lm->ctx, EMBER_ERR_FORMAT, "%s gave more tokens (%lld) than bytes", path,
                        (long long)n);
    else if (n >= 0) {
        ember_token_data data = {
            .tokens = tokens, .count = n, .vocab = (int32_t)lm->vocab, .context = context, .name = path};
        ds = ember_dataset_from_tokens(lm->ctx, &data, split);
    }
    free(tokens);
    return ds;
}
