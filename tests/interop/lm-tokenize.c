/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/lm-tokenize.c — ember's tokenizer of a GGUF file, for
 * test_tokenizer_vs_hf.py to hold against Hugging Face's `tokenizers`:
 *
 *     lm-tokenize FILE.gguf < STRINGS
 *
 * reads NUL-terminated strings from standard input and prints, for each, a
 * line of its token ids (special tokens matched), then "=" if decoding the
 * ids gives the string back byte for byte, "!" if not. Exit 1 with ember's
 * message when the file is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm-impl.h"

static int line(ember_ctx *ctx, const struct lm_tokenizer *t, const char *s, size_t len)
{
    int64_t n = lm_tokenize(ctx, t, s, len, true, NULL, 0);
    int32_t *ids = n >= 0 ? malloc((size_t)(n ? n : 1) * sizeof *ids) : NULL;
    char *back = malloc(len + 1);
    if (!ids || !back || lm_tokenize(ctx, t, s, len, true, ids, n) != n) {
        fprintf(stderr, "cannot tokenize: %s\n", ember_last_error(ctx));
        free(ids);
        free(back);
        return 1;
    }
    size_t got = 0;
    for (int64_t i = 0; i < n; i++) {
        char piece[512];
        size_t k = lm_token_bytes(t, ids[i], piece, sizeof piece);
        if (got + k <= len)
            memcpy(back + got, piece, k);
        got += k;
        printf(i ? " %d" : "%d", ids[i]);
    }
    printf(" %s\n", got == len && memcmp(back, s, len) == 0 ? "=" : "!");
    free(ids);
    free(back);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lm-tokenize FILE.gguf < STRINGS\n");
        return 2;
    }
    ember_ctx *ctx = ember_ctx_new();
    struct gguf_file f;
    struct lm_tokenizer *t = NULL;
    if (!ctx || gguf_open(ctx, argv[1], &f) != EMBER_OK || !(t = lm_tokenizer_load(ctx, &f))) {
        fprintf(stderr, "%s\n", ctx ? ember_last_error(ctx) : "no context");
        return 1;
    }
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    int c, rc = 0;
    while (buf && rc == 0 && (c = getchar()) != EOF) {
        if (c == 0) {
            rc = line(ctx, t, buf, len);
            len = 0;
        } else if (len < cap)
            buf[len++] = (char)c;
    }
    free(buf);
    lm_tokenizer_free(t);
    gguf_close(&f);
    ember_ctx_free(ctx);
    return rc;
}
