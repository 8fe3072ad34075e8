/* SPDX-License-Identifier: MIT */
/*
 * models/lm-pretokenize.c — a language model's text cut into the pieces its
 * byte-level BPE then encodes one by one (llama.cpp's "pre-tokenizers").
 *
 * Each model's tokenizer cuts text with a regular expression, here matched
 * by hand: at each position the first alternative that matches wins, as in
 * a regex engine, and the lookahead (?!\S) sees the end of the current
 * segment. L is a letter (\p{L}), N a number (\p{N}), S white space (\s),
 * O anything else:
 *
 *   gpt2    's|'t|'re|'ve|'m|'ll|'d | ?L+ | ?N+ | ?O+ | S+(?!\S) | S+
 *   smollm  every N alone first (Hugging Face's Digits pre-tokenizer with
 *           individual digits), then gpt2 on what is between
 *   llama3  (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\nLN]?L+ | N{1,3}
 *           | ?O+[\r\n]* | S*[\r\n]+ | S+(?!\S) | S+        ("llama-bpe")
 *   qwen2   llama3 with N alone instead of N{1,3}
 *
 * The pieces are byte ranges of the input, which need not be valid UTF-8:
 * a byte that starts no character is a character of class O.
 */
#include <stdlib.h>
#include <string.h>

#include "lm-impl.h"
#include "unicode-impl.h"

enum { C_LETTER, C_NUMBER, C_SPACE, C_OTHER };

struct chars {
    const unsigned char *text;
    uint32_t *cp; /* code points */
    size_t *at;   /* byte offset of each, and at[n] = the text's length */
    unsigned char *class;
    int n;
};

static bool is(const struct chars *c, int i, int cls) { return c->class[i] == cls; }
static bool newline(const struct chars *c, int i) { return c->cp[i] == '\r' || c->cp[i] == '\n'; }
static int lower(uint32_t c) { return c < 0x80 ? (int)(c | 0x20) : -1; }

/* 's 't 're 've 'm 'll 'd at i: the length, 0 if none */
static int contraction(const struct chars *c, int i, int end, bool any_case)
{
    if (c->cp[i] != '\'' || i + 1 >= end)
        return 0;
    int a = any_case ? lower(c->cp[i + 1]) : (int)c->cp[i + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd')
        return 2;
    if (i + 2 >= end)
        return 0;
    int b = any_case ? lower(c->cp[i + 2]) : (int)c->cp[i + 2];
    return (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') ? 3 : 0;
}

/* a run of class cls from i, at most max long: its end */
static int run(const struct chars *c, int i, int end, int cls, int max)
{
    int j = i;
    while (j < end && j - i < max && is(c, j, cls))
        j++;
    return j;
}

/* S+(?!\S) | S+ at i (a space): the run, less its last space when a
 * non-space follows and the run has another */
static int spaces(const struct chars *c, int i, int end)
{
    int r = run(c, i, end, C_SPACE, end);
    return r == end || r - i < 2 ? r - i : r - i - 1;
}

static int gpt2_match(const struct chars *c, int i, int end)
{
    int n = contraction(c, i, end, false);
    if (n)
        return n;
    int j = i + (c->cp[i] == ' ' && i + 1 < end && !is(c, i + 1, C_SPACE));
    if (!is(c, j, C_SPACE)) /* ' ?L+', ' ?N+' or ' ?O+': the class of what follows the optional space */
        return run(c, j, end, c->class[j], end) - i;
    return spaces(c, i, end);
}

static int llama3_match(const struct chars *c, int i, int end, int digits)
{
    int n = contraction(c, i, end, true);
    if (n)
        return n;
    /* [^\r\nLN]?L+ */
    int j = i + (!is(c, i, C_LETTER) && !is(c, i, C_NUMBER) && !newline(c, i) && i + 1 < end &&
                 is(c, i + 1, C_LETTER));
    if (is(c, j, C_LETTER))
        return run(c, j, end, C_LETTER, end) - i;
    if (is(c, i, C_NUMBER))
        return run(c, i, end, C_NUMBER, digits) - i;
    /* ' ?O+[\r\n]*' */
    j = i + (c->cp[i] == ' ' && i + 1 < end && is(c, i + 1, C_OTHER));
    if (is(c, j, C_OTHER)) {
        j = run(c, j, end, C_OTHER, end);
        while (j < end && newline(c, j))
            j++;
        return j - i;
    }
    /* S*[\r\n]+: to just after the run's last newline */
    int r = run(c, i, end, C_SPACE, end), last = -1;
    for (int k = i; k < r; k++)
        if (newline(c, k))
            last = k;
    if (last >= 0)
        return last + 1 - i;
    return spaces(c, i, end);
}

static void cut(const struct chars *c, enum lm_pre pre, int begin, int end, lm_piece_fn piece, void *arg)
{
    for (int i = begin; i < end;) {
        int n = pre == LM_PRE_LLAMA3  ? llama3_match(c, i, end, 3)
                : pre == LM_PRE_QWEN2 ? llama3_match(c, i, end, 1)
                                      : gpt2_match(c, i, end);
        piece(c->text + c->at[i], c->at[i + n] - c->at[i], arg);
        i += n;
    }
}

ember_status lm_pretokenize(enum lm_pre pre, const char *text, size_t len, lm_piece_fn piece, void *arg)
{
    struct chars c = {.text = (const unsigned char *)text};
    c.cp = malloc((len + 1) * sizeof *c.cp);
    c.at = malloc((len + 1) * sizeof *c.at);
    c.class = malloc(len + 1);
    if (!c.cp || !c.at || !c.class) {
        free(c.cp);
        free(c.at);
        free(c.class);
        return EMBER_ERR_NOMEM;
    }
    for (size_t at = 0; at < len;) {
        int bytes;
        uint32_t cp = ember_utf8_next(c.text + at, len - at, &bytes);
        c.cp[c.n] = cp;
        c.at[c.n] = at;
        c.class[c.n] = ember_unicode_is_letter(cp)   ? C_LETTER
                       : ember_unicode_is_number(cp) ? C_NUMBER
                       : ember_unicode_is_space(cp)  ? C_SPACE
                                                     : C_OTHER;
        /* a byte that is not UTF-8 decodes as U+FFFD, of class O, whatever the byte */
        c.n++;
        at += (size_t)bytes;
    }
    c.at[c.n] = len;
    if (pre == LM_PRE_SMOLLM) { /* each number alone, then gpt2 between them */
        int start = 0;
        for (int i = 0; i < c.n; i++)
            if (is(&c, i, C_NUMBER)) {
                cut(&c, LM_PRE_GPT2, start, i, piece, arg);
                piece(c.text + c.at[i], c.at[i + 1] - c.at[i], arg);
                start = i + 1;
            }
        cut(&c, LM_PRE_GPT2, start, c.n, piece, arg);
    } else
        cut(&c, pre, 0, c.n, piece, arg);
    free(c.cp);
    free(c.at);
    free(c.class);
    return EMBER_OK;
}
