/* SPDX-License-Identifier: MIT */
/*
 * models/lm-chat.c — conversations as a pretrained model's training data.
 *
 * The file is JSON Lines, a conversation a line, as TRL's SFT trainer and
 * OpenAI's fine-tuning files take them:
 *
 *   {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]}
 *
 * Each is rendered with the model's chat template (lm_chat_render,
 * lm-text.c) and tokenised piece by piece, the template's markers with
 * their special tokens and the contents as plain text (a message that
 * spells "<|im_end|>" is those characters). Every token is labelled: the
 * assistant's replies and the marker that ends each are targets the loss
 * counts, everything else (the system prompt, the user's turns, the
 * markers that open a turn) EMBER_IGNORE_INDEX, as TRL's assistant-only
 * loss labels them -100. The conversations follow each other in one
 * stream, cut into windows of the context as text is
 * (ember_dataset_from_tokens); the last tenth of the conversations (one at
 * least) is the validation split, so that none is split between the two.
 * Keys other than "messages", "role" and "content" are passed over.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-impl.h"
#include "lm-impl.h"

#define MAX_MESSAGES 4096 /* in one conversation */

/* the stream as it grows: tokens, their labels, where each conversation starts */
struct chat_stream {
    ember_lm *lm;
    int32_t *tokens, *labels;
    int64_t count, cap, taught;
    int64_t *starts;
    int64_t conversations, starts_cap;
    ember_status status;
};

/* room for `need` elements in *array, doubling; EMBER_ERR_NOMEM said */
static ember_status grow(ember_ctx *ctx, void **array, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return EMBER_OK;
    int64_t n = *cap > 0 ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *grown = (uint64_t)n <= SIZE_MAX / elem ? realloc(*array, (size_t)n * elem) : NULL;
    if (!grown)
        return ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory for a chat's %lld tokens",
                               (long long)need);
    *array = grown;
    *cap = n;
    return EMBER_OK;
}

/* one piece of a rendered conversation, tokenised onto the stream */
static void add_piece(void *user, const char *text, size_t len, enum lm_piece kind)
{
    struct chat_stream *s = user;
    if (s->status != EMBER_OK || len == 0)
        return;
    /* the template's markers are special tokens; a message's text is text */
    bool marker = kind == LM_PIECE_MARKUP || kind == LM_PIECE_REPLY_END;
    bool taught = kind == LM_PIECE_REPLY || kind == LM_PIECE_REPLY_END;
    for (;;) {
        int64_t room = s->cap - s->count;
        int64_t n = lm_tokenize(s->lm->ctx, s->lm->tok, text, len, marker, s->tokens + s->count, room);
        if (n < 0) {
            s->status = ember_last_status(s->lm->ctx);
            return;
        }
        if (n <= room) {
            for (int64_t i = s->count; i < s->count + n; i++)
                s->labels[i] = taught ? s->tokens[i] : EMBER_IGNORE_INDEX;
            s->count += n;
            s->taught += taught ? n : 0;
            return;
        }
        int64_t cap = s->cap;
        if ((s->status = grow(s->lm->ctx, (void **)&s->tokens, &cap, s->count + n + 4096,
                              sizeof *s->tokens)) != EMBER_OK ||
            (s->status = grow(s->lm->ctx, (void **)&s->labels, &s->cap, s->count + n + 4096,
                              sizeof *s->labels)) != EMBER_OK)
            return;
    }
}

/* {"role": "...", "content": "...", ...} into *m (its strings to free) */
static ember_status parse_message(struct json_parser *ps, int index, ember_chat_message *m)
{
    char *role = NULL, *content = NULL, *key = NULL, buf[32];
    ember_status st = json_expect(ps, '{', "to open a message");
    bool more = st == EMBER_OK && !json_accept(ps, '}');
    while (st == EMBER_OK && more) {
        if ((st = json_string(ps, &key)) != EMBER_OK ||
            (st = json_expect(ps, ':', "after a key")) != EMBER_OK)
            break;
        char **field = strcmp(key, "role") == 0 ? &role : strcmp(key, "content") == 0 ? &content : NULL;
        json_skip_space(ps);
        if (field && *field)
            st = json_fail(ps, "message %d has \"%s\" twice", index + 1, key);
        else if (field && (ps->p == ps->end || *ps->p != '"'))
            st = json_fail(ps, "message %d's \"%s\" is %s, not a string", index + 1, key,
                           json_found(ps, buf, sizeof buf));
        else
            st = field ? json_string(ps, field) : json_skip_value(ps, 3);
        free(key);
        key = NULL;
        if (st == EMBER_OK && !(more = json_accept(ps, ',')))
            st = json_expect(ps, '}', "to close a message");
    }
    free(key);
    if (st == EMBER_OK && (!role || !content || !*role))
        st = json_fail(ps, "message %d has no %s", index + 1, !role || !*role ? "\"role\"" : "\"content\"");
    if (st != EMBER_OK) {
        free(role);
        free(content);
        return st;
    }
    *m = (ember_chat_message){.role = role, .content = content};
    return EMBER_OK;
}

void lm_chat_free(ember_chat_message *messages, int count)
{
    for (int i = 0; i < count; i++) {
        free((char *)messages[i].role);
        free((char *)messages[i].content);
    }
    free(messages);
}

/* one line, {"messages": [...], ...}, into its messages (to lm_chat_free) */
static ember_status parse_conversation(struct json_parser *ps, ember_chat_message **messages, int *count)
{
    char *key = NULL;
    int cap = 0;
    bool found = false;
    *messages = NULL;
    *count = 0;
    ember_status st = json_expect(ps, '{', "to open the conversation");
    bool more = st == EMBER_OK && !json_accept(ps, '}');
    while (st == EMBER_OK && more) {
        if ((st = json_string(ps, &key)) != EMBER_OK ||
            (st = json_expect(ps, ':', "after a key")) != EMBER_OK)
            break;
        if (strcmp(key, "messages") != 0)
            st = json_skip_value(ps, 1);
        else if (found)
            st = json_fail(ps, "\"messages\" twice");
        else if ((st = json_expect(ps, '[', "to open \"messages\"")) == EMBER_OK && !json_accept(ps, ']')) {
            found = true;
            do {
                if (*count == MAX_MESSAGES) {
                    st = json_fail(ps, "more than %d messages in one conversation", MAX_MESSAGES);
                    break;
                }
                if (*count == cap) {
                    ember_chat_message *grown =
                        realloc(*messages, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *grown);
                    if (!grown) {
                        st = ember_set_error(ps->ctx, EMBER_ERR_NOMEM,
                                             "out of host memory for a conversation");
                        break;
                    }
                    *messages = grown;
                }
                if ((st = parse_message(ps, *count, &(*messages)[*count])) == EMBER_OK)
                    ++*count;
            } while (st == EMBER_OK && json_accept(ps, ','));
            if (st == EMBER_OK)
                st = json_expect(ps, ']', "to close \"messages\"");
        } else
            found = st == EMBER_OK;
        free(key);
        key = NULL;
        if (st == EMBER_OK && !(more = json_accept(ps, ',')))
            st = json_expect(ps, '}', "to close the conversation");
    }
    free(key);
    json_skip_space(ps);
    if (st == EMBER_OK && ps->p != ps->end)
        st = json_fail(ps, "more after the conversation's object (one a line)");
    if (st == EMBER_OK && !found)
        st = json_fail(ps, "no \"messages\"");
    if (st != EMBER_OK) {
        lm_chat_free(*messages, *count);
        *messages = NULL;
        *count = 0;
    }
    return st;
}

ember_status lm_chat_parse(ember_ctx *ctx, const char *what, const char *line, size_t len, size_t base,
                           ember_chat_message **messages, int *count)
{
    struct json_parser ps = {.ctx = ctx,
                             .what = what,
                             .kind = "conversation",
                             .start = (const unsigned char *)line,
                             .p = (const unsigned char *)line,
                             .end = (const unsigned char *)line + len,
                             .base = base};
    return parse_conversation(&ps, messages, count);
}

/* every line of the file onto the stream */
static ember_status read_conversations(ember_lm *lm, const char *path, const char *text, size_t len,
                                       struct chat_stream *s)
{
    int64_t line = 0;
    for (size_t at = 0; at < len && s->status == EMBER_OK;) {
        const char *start = text + at, *nl = memchr(start, '\n', len - at);
        size_t n = nl ? (size_t)(nl - start) : len - at;
        line++;
        at += n + (nl != NULL);
        size_t blank = 0;
        while (blank < n && (start[blank] == ' ' || start[blank] == '\t' || start[blank] == '\r'))
            blank++;
        if (blank == n)
            continue;
        char what[300];
        snprintf(what, sizeof what, "%.240s line %lld", path, (long long)line);
        ember_chat_message *messages;
        int count;
        if ((s->status = lm_chat_parse(lm->ctx, what, start, n, (size_t)(start - text), &messages, &count)) !=
            EMBER_OK)
            break;
        if ((s->status = grow(lm->ctx, (void **)&s->starts, &s->starts_cap, s->conversations + 1,
                              sizeof *s->starts)) == EMBER_OK) {
            s->starts[s->conversations++] = s->count;
            ember_status st = lm_chat_render(lm, messages, count, false, add_piece, s);
            if (s->status == EMBER_OK)
                s->status = st;
        }
        lm_chat_free(messages, count);
    }
    return s->status;
}

ember_dataset *ember_lm_chat_dataset(ember_lm *lm, const char *path, int64_t context, ember_split split)
{
    if (!lm)
        return NULL;
    if (!path) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_chat_dataset: no path");
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    if (lm_read_text(lm->ctx, path, &text, &len) != EMBER_OK)
        return NULL;
    struct chat_stream s = {.lm = lm};
    ember_dataset *ds = NULL;
    if (read_conversations(lm, path, text, len, &s) != EMBER_OK)
        goto done;
    if (s.conversations == 0 || s.taught == 0) {
        ember_set_error(lm->ctx, EMBER_ERR_FORMAT,
                        "%s holds %s: a chat's loss is on the assistant's replies, one conversation a line, "
                        "{\"messages\": [{\"role\": \"user\", \"content\": ...}, {\"role\": \"assistant\", "
                        "\"content\": ...}]}",
                        path, s.conversations ? "no assistant message" : "no conversation");
        goto done;
    }
    /* the last tenth of the conversations validate, one at least; one conversation alone is cut
     * where text is */
    int64_t held = s.conversations / 10 > 0 ? s.conversations / 10 : 1;
    char name[300];
    snprintf(name, sizeof name, "%.200s (%lld conversations)", path, (long long)s.conversations);
    ember_token_data data = {.tokens = s.tokens,
                             .labels = s.labels,
                             .count = s.count,
                             .vocab = (int32_t)lm->vocab,
                             .context = context,
                             .name = name,
                             .validation_start = s.conversations > 1 ? s.starts[s.conversations - held] : 0};
    ds = ember_dataset_from_tokens(lm->ctx, &data, split);
done:
    free(text);
    free(s.tokens);
    free(s.labels);
    free(s.starts);
    return ds;
}
