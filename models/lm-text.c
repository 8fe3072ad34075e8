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

char *ember_lm_chat_prompt(ember_lm *lm, const ember_chat_message *messages, int count, bool reply)
{
    if (!lm)
        return NULL;
    if (count < 0 || (count > 0 && !messages)) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_chat_prompt: %d messages", count);
        return NULL;
    }
    for (int i = 0; i < count; i++)
        if (!messages[i].role || !messages[i].content || !*messages[i].role) {
            ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_chat_prompt: message %d has no role or content",
                            i);
            return NULL;
        }
    const char *t = lm->chat_template;
    bool chatml = t ? strstr(t, "<|im_start|>") != NULL : lm_token_find(lm->tok, "<|im_start|>", 12) >= 0;
    bool llama3 = t && strstr(t, "<|start_header_id|>");
    struct ember_text out = {0};
    if (chatml) {
        char *system = default_system(t);
        if (system && (count == 0 || strcmp(messages[0].role, "system") != 0))
            ember_text_printf(&out, "<|im_start|>system\n%s<|im_end|>\n", system);
        free(system);
        for (int i = 0; i < count; i++)
            ember_text_printf(&out, "<|im_start|>%s\n%s<|im_end|>\n", messages[i].role, messages[i].content);
        if (reply)
            ember_text_printf(&out, "<|im_start|>assistant\n");
    } else if (llama3) {
        ember_text_printf(&out, "<|begin_of_text|>");
        for (int i = 0; i < count; i++)
            ember_text_printf(&out, "<|start_header_id|>%s<|end_header_id|>\n\n%s<|eot_id|>",
                              messages[i].role, messages[i].content);
        if (reply)
            ember_text_printf(&out, "<|start_header_id|>assistant<|end_header_id|>\n\n");
    } else {
        ember_set_error(lm->ctx, EMBER_ERR_UNSUPPORTED,
                        "the model's chat template is neither ChatML nor Llama 3's, the two ember renders%s",
                        t ? "" : " (it has none)");
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
