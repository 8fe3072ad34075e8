/* SPDX-License-Identifier: MIT */
/*
 * models/lm-text.c — a language model's text side: its tokenizer behind
 * the public calls, the next token drawn from the scores, and a
 * conversation rendered as the model's chat template would.
 *
 * Chat templates are Jinja programs in the file; ember does not run Jinja.
 * It recognises the two families nearly every small chat model uses and
 * renders them itself:
 *
 *   ChatML (SmolLM, Qwen)   <|im_start|>ROLE\nCONTENT<|im_end|>\n ... and
 *                           <|im_start|>assistant\n to open the reply; a
 *                           system message the template puts first when
 *                           the conversation has none is taken from it
 *   Llama 3                 <|begin_of_text|> then
 *                           <|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|>
 *
 * Any other template is refused by name rather than guessed at.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lm-impl.h"
#include "text-impl.h"

int64_t ember_lm_tokenize(ember_lm *lm, const char *text, size_t len, bool specials, int32_t *tokens,
                          int64_t cap)
{
    if (!lm)
        return -1;
    if ((!text && len) || cap < 0 || (!tokens && cap)) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_tokenize: no text, or no room for the tokens");
        return -1;
    }
    return lm_tokenize(lm->ctx, lm->tok, text, len, specials, tokens, cap);
}

size_t ember_lm_token_bytes(const ember_lm *lm, int32_t token, char *out, size_t cap)
{
    return lm && out ? lm_token_bytes(lm->tok, token, out, cap) : 0;
}

bool ember_lm_is_end(const ember_lm *lm, int32_t token)
{
    if (!lm || token < 0 || token >= lm->tok->count)
        return false;
    if (token == lm->tok->eos || token == lm->tok->eot)
        return true;
    static const char *const ends[] = {"<|im_end|>", "<|eot_id|>", "<|end_of_text|>", "<|endoftext|>"};
    if (lm->tok->type[token] != LM_TOKEN_CONTROL)
        return false;
    char text[32];
    size_t n = lm_token_bytes(lm->tok, token, text, sizeof text - 1);
    text[n] = 0;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        if (strcmp(text, ends[i]) == 0)
            return true;
    return false;
}

/* ---------------------------------------------------------------- sampling */

struct candidate {
    int32_t token;
    float score;
};

static int by_score(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    return x->score < y->score ? 1 : x->score > y->score ? -1 : (x->token > y->token) - (x->token < y->token);
}

/* the k best (k small): a min-heap of them, then sorted */
static int64_t best_k(const float *logits, int64_t vocab, int64_t k, struct candidate *c)
{
    int64_t n = 0;
    for (int64_t t = 0; t < vocab; t++) {
        float s = logits[t];
        if (isnan(s))
            continue;
        if (n < k) {
            int64_t i = n++;
            while (i > 0 && c[(i - 1) / 2].score > s) {
                c[i] = c[(i - 1) / 2];
                i = (i - 1) / 2;
            }
            c[i] = (struct candidate){(int32_t)t, s};
        } else if (s > c[0].score) { /* replaces the worst */
            int64_t i = 0;
            for (;;) {
                int64_t child = 2 * i + 1;
                if (child >= n)
                    break;
                if (child + 1 < n && c[child + 1].score < c[child].score)
                    child++;
                if (c[child].score >= s)
                    break;
                c[i] = c[child];
                i = child;
            }
            c[i] = (struct candidate){(int32_t)t, s};
        }
    }
    qsort(c, (size_t)n, sizeof *c, by_score);
    return n;
}

int32_t ember_lm_sample(const ember_lm *lm, const float *logits, const ember_sample_options *o,
                        ember_rng *rng)
{
    if (!lm || !logits || (o && o->temperature > 0.0f && !rng))
        return -1;
    if (o && (!(o->temperature >= 0.0f) || o->top_k < 0 || !(o->top_p >= 0.0f && o->top_p <= 1.0f))) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_sample: temperature %g, top-k %d, top-p %g",
                        o->temperature, o->top_k, o->top_p);
        return -1;
    }
    int64_t vocab = lm->vocab;
    if (!o || o->temperature == 0.0f) { /* greedy: the first of the best */
        int32_t best = 0;
        for (int64_t t = 1; t < vocab; t++)
            if (logits[t] > logits[best] || isnan(logits[best]))
                best = (int32_t)t;
        return best;
    }
    int64_t k = o->top_k > 0 && o->top_k < vocab ? o->top_k : vocab;
    struct candidate *c = malloc((size_t)k * sizeof *c);
    if (!c) {
        ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory to sample");
        return -1;
    }
    int64_t n = best_k(logits, vocab, k, c);
    if (n == 0) {
        free(c);
        return 0;
    }
    /* the odds of each, at the temperature, summing in double */
    double total = 0.0, *odds = malloc((size_t)n * sizeof *odds);
    if (!odds) {
        free(c);
        ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory to sample");
        return -1;
    }
    for (int64_t i = 0; i < n; i++) {
        odds[i] = exp(((double)c[i].score - c[0].score) / o->temperature);
        total += odds[i];
    }
    /* top-p: the most likely whose odds first reach p of the whole */
    if (o->top_p > 0.0f && o->top_p < 1.0f) {
        double kept = 0.0;
        for (int64_t i = 0; i < n; i++) {
            kept += odds[i];
            if (kept >= o->top_p * total) {
                n = i + 1;
                break;
            }
        }
        total = kept;
    }
    double u = (double)ember_rng_uniform(rng, 0.0f, 1.0f) * total, sum = 0.0;
    int32_t token = c[n - 1].token;
    for (int64_t i = 0; i < n; i++) {
        sum += odds[i];
        if (u < sum) {
            token = c[i].token;
            break;
        }
    }
    free(odds);
    free(c);
    return token;
}

/* --------------------------------------------------------------- chat */

/* ChatML's default system message: the literal after "<|im_start|>system"
 * and a newline (written as one, or as \n) up to "<|im_end|>", if the
 * template holds one that is plain text */
static char *default_system(const char *template)
{
    const char *at = template ? strstr(template, "<|im_start|>system") : NULL;
    while (at) {
        const char *p = at + strlen("<|im_start|>system");
        p += *p == '\n' ? 1 : strncmp(p, "\\n", 2) == 0 ? 2 : 0;
        const char *end = strstr(p, "<|im_end|>");
        if (end && end > p && !memchr(p, '{', (size_t)(end - p)) && !memchr(p, '\'', (size_t)(end - p)) &&
            !memchr(p, '+', (size_t)(end - p))) {
            char *s = malloc((size_t)(end - p) + 1);
            if (s) {
                memcpy(s, p, (size_t)(end - p));
                s[end - p] = 0;
            }
            return s;
        }
        at = strstr(at + 1, "<|im_start|>system");
    }
    return NULL;
}

ember_status lm_chat_render(ember_lm *lm, const ember_chat_message *messages, int count, bool reply,
                            void (*piece)(void *user, const char *text, size_t len, enum lm_piece kind),
                            void *user)
{
    if (count < 0 || (count > 0 && !messages))
        return ember_set_error(lm->ctx, EMBER_ERR_ARG, "a conversation of %d messages", count);
    for (int i = 0; i < count; i++)
        if (!messages[i].role || !messages[i].content || !*messages[i].role)
            return ember_set_error(lm->ctx, EMBER_ERR_ARG, "message %d has no role or content", i);
    const char *t = lm->chat_template;
    bool chatml = t ? strstr(t, "<|im_start|>") != NULL : lm_token_find(lm->tok, "<|im_start|>", 12) >= 0;
    bool llama3 = t && strstr(t, "<|start_header_id|>");
    if (!chatml && !llama3)
        return ember_set_error(
            lm->ctx, EMBER_ERR_UNSUPPORTED,
            "the model's chat template is neither ChatML nor Llama 3's, the two ember renders%s",
            t ? "" : " (it has none)");
    /* each message: what opens it, its content, what closes it */
    const char *open = chatml ? "<|im_start|>" : "<|start_header_id|>",
               *after_role = chatml ? "\n" : "<|end_header_id|>\n\n";
    const char *end = chatml ? "<|im_end|>" : "<|eot_id|>", *after_end = chatml ? "\n" : "";
    if (llama3)
        piece(user, "<|begin_of_text|>", strlen("<|begin_of_text|>"), LM_PIECE_MARKUP);
    char *system = chatml ? default_system(t) : NULL;
    ember_chat_message first = {.role = "system", .content = system};
    bool add_system = system && (count == 0 || strcmp(messages[0].role, "system") != 0);
    for (int i = add_system ? -1 : 0; i < count; i++) {
        const ember_chat_message *m = i < 0 ? &first : &messages[i];
        bool reply_turn = strcmp(m->role, "assistant") == 0;
        piece(user, open, strlen(open), LM_PIECE_MARKUP);
        piece(user, m->role, strlen(m->role), LM_PIECE_MARKUP);
        piece(user, after_role, strlen(after_role), LM_PIECE_MARKUP);
        piece(user, m->content, strlen(m->content), reply_turn ? LM_PIECE_REPLY : LM_PIECE_TEXT);
        piece(user, end, strlen(end), reply_turn ? LM_PIECE_REPLY_END : LM_PIECE_MARKUP);
        piece(user, after_end, strlen(after_end), LM_PIECE_MARKUP);
    }
    free(system);
    if (reply) {
        piece(user, open, strlen(open), LM_PIECE_MARKUP);
        piece(user, "assistant", strlen("assistant"), LM_PIECE_MARKUP);
        piece(user, after_role, strlen(after_role), LM_PIECE_MARKUP);
    }
    return EMBER_OK;
}

static void add_piece(void *user, const char *text, size_t len, enum lm_piece kind)
{
    (void)kind;
    ember_text_add(user, text, len);
}

char *ember_lm_chat_prompt(ember_lm *lm, const ember_chat_message *messages, int count, bool reply)
{
    if (!lm)
        return NULL;
    struct ember_text out = {0};
    if (lm_chat_render(lm, messages, count, reply, add_piece, &out) != EMBER_OK) {
        free(ember_text_take(&out));
        return NULL;
    }
    char *s = ember_text_take(&out);
    if (!s) {
        ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory for the conversation");
        return NULL;
    }
    /* ember_free's memory: the library's own malloc, which ember_free releases */
    return s;
}
