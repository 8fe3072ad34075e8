/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/lm-chat-data.c — a chat's training data as ember makes it
 * (ember_lm_chat_dataset, models/lm-chat.c), for test_chat_data_vs_hf.py
 * to hold against Hugging Face's rendering and TRL's labels:
 *
 *     lm-chat-data MODEL.gguf CHAT.jsonl CONTEXT
 *
 * prints, for the training split and then the validation split, a line of
 * the stream's tokens and a line of their labels (each window's x and y
 * side by side, in order: tokens 0 to N-1 and the labels of tokens 1 to
 * N, -100 for those the loss ignores). Exit 1 with ember's message when
 * the file is refused.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ember.h"
#include "test-util.h"

static int print_split(ember_ctx *ctx, ember_lm *lm, const char *path, int64_t context, ember_split split)
{
    ember_dataset *ds = ember_lm_chat_dataset(lm, path, context, split);
    ember_batcher *b = ds ? ember_batcher_new(ds, 1, false, 0) : NULL;
    size_t n = ds ? (size_t)(ember_dataset_count(ds) * context) : 0;
    int32_t *x = malloc((n + 1) * sizeof *x), *y = malloc((n + 1) * sizeof *y);
    if (!b || !x || !y || !ember_dataset_ignores(ds)) {
        fprintf(stderr, "lm-chat-data: %s\n", ember_last_error(ctx));
        return 1;
    }
    ember_tensor *tx, *ty;
    ember_status st;
    size_t at = 0;
    while ((st = ember_batcher_next(b, &tx, &ty)) == EMBER_OK && tx && at < n) {
        if ((st = ember_tensor_read(tx, x + at, (size_t)context * sizeof *x)) != EMBER_OK ||
            (st = ember_tensor_read(ty, y + at, (size_t)context * sizeof *y)) != EMBER_OK)
            break;
        at += (size_t)context;
        ember_tape_clear(ctx);
    }
    for (int line = 0; line < 2; line++) {
        for (size_t i = 0; i < at; i++)
            printf(i ? " %d" : "%d", (line ? y : x)[i]);
        printf("\n");
    }
    free(x);
    free(y);
    ember_batcher_free(b);
    ember_dataset_free(ds);
    return st == EMBER_OK && at == n ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: lm-chat-data MODEL.gguf CHAT.jsonl CONTEXT\n");
        return 2;
    }
    ember_ctx *ctx = test_ctx("cpu");
    if (!ctx)
        return TEST_SKIP;
    int64_t context = atoi(argv[3]);
    ember_lm *lm = ember_lm_load(ctx, argv[1], &(ember_lm_options){.context = context});
    if (!lm) {
        fprintf(stderr, "lm-chat-data: %s\n", ember_last_error(ctx));
        return 1;
    }
    int rc = print_split(ctx, lm, argv[2], context, EMBER_TRAIN) ||
             print_split(ctx, lm, argv[2], context, EMBER_TEST);
    ember_lm_free(lm);
    ember_ctx_free(ctx);
    return rc;
}
