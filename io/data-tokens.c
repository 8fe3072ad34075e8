/* SPDX-License-Identifier: MIT */
/*
 * io/data-tokens.c — a stream of tokens as a data set: text a pretrained
 * model's own tokenizer has cut (ember_lm_dataset, models/lm-data.c), or
 * any tokens the caller has.
 *
 * It is text's data set (data-text.c) with int32 tokens in place of bytes:
 * the training split is the first 90% of the stream and the validation
 * split the last 10%, a sample is a window of `context` tokens and the
 * same window one token on, shuffled windows start anywhere (drawn from
 * the batcher's seed) and the validation split's lie side by side, so its
 * loss is over a fixed set of positions. The classes are the tokenizer's
 * vocabulary; they have no names of their own.
 *
 * A chat's stream (models/lm-chat.c) brings labels beside its tokens, a
 * token's own or EMBER_IGNORE_INDEX where the loss must not teach it (the
 * user's turns), and a validation split that starts at a conversation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data-impl.h"

ember_dataset *ember_dataset_from_tokens(ember_ctx *ctx, const ember_token_data *data, ember_split split)
{
    if (!ctx)
        return NULL;
    if (!data || !data->tokens || data->vocab < 2 || data->context < 1 ||
        data->context > EMBER_DATA_MAX_DIM || (split != EMBER_TRAIN && split != EMBER_TEST)) {
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_dataset_from_tokens takes tokens, a vocabulary of at least 2, a context of 1 to %lld "
            "and a split",
            (long long)EMBER_DATA_MAX_DIM);
        return NULL;
    }
    const char *name = data->name ? data->name : "tokens";
    int64_t n = data->count, context = data->context;
    int64_t train = data->validation_start > 0 ? data->validation_start : n - n / 10, test = n - train;
    if (train > n || train < context + 1 || test < context + 1) {
        if (data->validation_start > 0)
            ember_fail(ctx, EMBER_ERR_FORMAT,
                       "%.200s: its splits (%lld tokens for training, %lld for validation) must each hold a "
                       "window of the context (%lld) and one token more: give more data or a shorter context",
                       name, (long long)train, (long long)test, (long long)context);
        else
            ember_fail(
                ctx, EMBER_ERR_FORMAT,
                "%.200s is %lld tokens; its last tenth, the validation split, must hold a window of "
                "the context (%lld) and one token more: give at least %lld tokens or a shorter context",
                name, (long long)n, (long long)context, (long long)(10 * (context + 1)));
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t label = data->labels ? data->labels[i] : data->tokens[i];
        if (data->tokens[i] < 0 || data->tokens[i] >= data->vocab ||
            (label != data->tokens[i] && label != EMBER_IGNORE_INDEX)) {
            ember_fail(
                ctx, EMBER_ERR_ARG, "%.200s: token %lld is %d (label %d), not in the vocabulary of %d%s",
                name, (long long)i, data->tokens[i], label, data->vocab,
                label != data->tokens[i] ? " or labelled other than itself or EMBER_IGNORE_INDEX" : "");
            return NULL;
        }
    }
    int64_t first = split == EMBER_TRAIN ? 0 : train, count = split == EMBER_TRAIN ? train : test;
    ember_dataset *ds = ember_host_calloc(ctx, 1, sizeof *ds);
    int32_t *tokens = ds ? ember_host_alloc(ctx, (size_t)count * sizeof *tokens) : NULL;
    int32_t *labels = tokens && data->labels ? ember_host_alloc(ctx, (size_t)count * sizeof *labels) : NULL;
    if (!tokens || (data->labels && !labels)) {
        free(tokens);
        ember_dataset_free(ds);
        return NULL;
    }
    memcpy(tokens, data->tokens + first, (size_t)count * sizeof *tokens);
    if (labels)
        memcpy(labels, data->labels + first, (size_t)count * sizeof *labels);
    *ds = (ember_dataset){.ctx = ctx,
                          .kind = "tokens",
                          .split = split,
                          .count = (count - 1) / context,
                          .classes = data->vocab,
                          .sample_ndim = 1,
                          .sample_shape = {context},
                          .sample_bytes = context,
                          .text = true,
                          .tokens = tokens,
                          .token_labels = labels,
                          .token_count = count};
    snprintf(ds->describe, sizeof ds->describe,
             "%.120s %s (%lld tokens: %lld windows of %lld side by side, vocabulary %d)", name,
             split == EMBER_TRAIN ? "train" : "validation", (long long)count, (long long)ds->count,
             (long long)context, data->vocab);
    return ds;
}
