/* SPDX-License-Identifier: MIT */
/*
 * models/lm-data.c — a text file as a pretrained model's training data: the
 * file cut by the model's own tokenizer (its tokens cached, below), then a
 * token stream's data set (io/data-tokens.c), so that its windows are what
 * the model reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files-impl.h"
#include "lm-impl.h"
#include "platform.h"
#include "text-impl.h"

#define MAX_TEXT_BYTES ((int64_t)1 << 30) /* the tokens of 1 GiB of text: 4 GiB at most */

/* a regular file opened to read (ember_open_regular_file's checks), or NULL
 * with *fd -1 and the reason in why (else out of memory) */
static FILE *open_regular(const char *path, struct stat *info, int *fd, char *why, size_t len)
{
    *fd = ember_open_regular_file(path, info, why, len);
    FILE *f = *fd >= 0 ? fdopen(*fd, "rb") : NULL;
    if (!f && *fd >= 0)
        close(*fd);
    return f;
}

ember_status lm_read_text(ember_ctx *ctx, const char *path, char **text, size_t *len)
{
    struct stat info;
    char why[600];
    int fd;
    FILE *f = open_regular(path, &info, &fd, why, sizeof why);
    if (!f)
        return ember_set_error(ctx, fd < 0 ? EMBER_ERR_IO : EMBER_ERR_NOMEM, "%s",
                               fd < 0 ? why : "out of host memory opening the text");
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

/* ------------------------------------------------------- the token cache
 *
 * A text's tokens are kept in ember's cache folder (files-impl.h's
 * ember_cache_folder: ~/.cache/ember/tokens, $EMBER_CACHE_DIR/tokens),
 * one file per tokenizer and text, named by their hashes, so that a
 * second run on the same file (and both of a run's splits) skips the
 * tokenizer, and a file that changed, or another model's tokenizer, is
 * tokenised afresh. The file:
 *
 *   "EMBERTOK" | u64 version 1 | u64 tokenizer | u64 text hash | u64 text bytes | u64 count |
 *   u64 the tokens' hash | count x i32
 *
 * little-endian, the hashes ember_hash_bytes's (of the tokens as stored). One that does not read back exactly
 * so (cut short, damaged, another version) is passed over and written again; one that cannot be written costs
 * nothing but a log line. */

#define CACHE_MAGIC   "EMBERTOK"
#define CACHE_VERSION 1u
#define CACHE_HEAD    56

static bool cache_path(const ember_lm *lm, uint64_t text_hash, char *out, size_t len)
{
    char dir[4096], why[512];
    if (!ember_cache_folder("tokens", dir, sizeof dir, why, sizeof why)) {
        ember_log(lm->ctx, EMBER_LOG_INFO, "no token cache: %s", why);
        return false;
    }
    return snprintf(out, len, "%s/%016llx-%016llx.tokens", dir, (unsigned long long)lm->tok->identity,
                    (unsigned long long)text_hash) < (int)len;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        p[i] = (unsigned char)v;
}

/* the cached tokens of the text into tokens (room for len + 1): how many, or -1 */
static int64_t cache_read(const ember_lm *lm, const char *path, uint64_t text_hash, size_t len,
                          int32_t *tokens)
{
    struct stat info;
    char why[600];
    int fd;
    FILE *f = open_regular(path, &info, &fd, why, sizeof why);
    if (!f)
        return -1;
    unsigned char head[CACHE_HEAD];
    int64_t count = -1;
    if (fread(head, 1, sizeof head, f) == sizeof head && memcmp(head, CACHE_MAGIC, 8) == 0 &&
        get_u64(head + 8) == CACHE_VERSION && get_u64(head + 16) == lm->tok->identity &&
        get_u64(head + 24) == text_hash && get_u64(head + 32) == len && get_u64(head + 40) <= len + 1 &&
        (uint64_t)info.st_size == CACHE_HEAD + 4 * get_u64(head + 40)) {
        uint64_t n = get_u64(head + 40);
        bool ok = fread(tokens, sizeof *tokens, (size_t)n, f) == n &&
                  ember_hash_bytes(tokens, (size_t)n * sizeof *tokens) == get_u64(head + 48);
        for (uint64_t i = 0; ok && i < n; i++) { /* little-endian in the file */
            unsigned char *b = (unsigned char *)&tokens[i];
            tokens[i] =
                (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
            ok = tokens[i] >= 0 && tokens[i] < lm->tok->count;
        }
        count = ok ? (int64_t)n : -1;
    }
    fclose(f);
    if (count < 0)
        ember_log(lm->ctx, EMBER_LOG_INFO, "the token cache %s does not fit: tokenising afresh", path);
    return count;
}

static void cache_write(const ember_lm *lm, const char *path, uint64_t text_hash, size_t len,
                        const int32_t *tokens, int64_t count)
{
    struct stat info; /* only a new file, or a regular one, is replaced: never a FIFO or a device */
    if (ember_stat(path, &info) == 0 && !S_ISREG(info.st_mode)) {
        ember_log(lm->ctx, EMBER_LOG_INFO, "not caching tokens: %s is not a regular file", path);
        return;
    }
    size_t size = CACHE_HEAD + 4 * (size_t)count;
    unsigned char *out = malloc(size);
    if (!out)
        return;
    memcpy(out, CACHE_MAGIC, 8);
    put_u64(out + 8, CACHE_VERSION);
    put_u64(out + 16, lm->tok->identity);
    put_u64(out + 24, text_hash);
    put_u64(out + 32, len);
    put_u64(out + 40, (uint64_t)count);
    for (int64_t i = 0; i < count; i++)
        for (int k = 0; k < 4; k++)
            out[CACHE_HEAD + 4 * i + k] = (unsigned char)((uint32_t)tokens[i] >> (8 * k));
    put_u64(out + 48, ember_hash_bytes(out + CACHE_HEAD, 4 * (size_t)count));
    char kept[4200];
    int err = ember_write_file_whole(path, out, size, kept, sizeof kept);
    free(out);
    if (err)
        ember_log(lm->ctx, EMBER_LOG_INFO, "cannot cache tokens in %s: %s", path, strerror(err));
    else
        ember_log(lm->ctx, EMBER_LOG_INFO, "cached %lld tokens in %s", (long long)count, path);
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
    uint64_t text_hash = ember_hash_bytes(text, len);
    char cache[4400];
    bool cached = tokens && cache_path(lm, text_hash, cache, sizeof cache);
    int64_t n = cached ? cache_read(lm, cache, text_hash, len, tokens) : -1;
    if (n >= 0)
        ember_log(lm->ctx, EMBER_LOG_INFO, "the tokens of %s from the cache %s", path, cache);
    else {
        n = tokens
                ? lm_tokenize(lm->ctx, lm->tok, text, len, false, tokens, (int64_t)len + 1)
                : (ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory for the tokens of %s", path),
                   -1);
        if (cached && n >= 0 && n <= (int64_t)len + 1)
            cache_write(lm, cache, text_hash, len, tokens, n);
    }
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
