/* SPDX-License-Identifier: MIT */
/*
 * tools/text-vocab.c — a model of text's vocabulary, read strictly, and
 * its text printed as it comes (tools/text-vocab.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "text-vocab.h"

static int hex_digit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool text_vocab_parse(const char *hex, struct text_vocab *v, char *why, size_t why_len)
{
    memset(v, 0, sizeof *v);
    for (int b = 0; b < 256; b++)
        v->token_of[b] = -1;
    size_t len = hex ? strlen(hex) : 0;
    if (len == 0) {
        snprintf(why, why_len,
                 "it has no vocabulary (ember.vocab): it was not trained on text by ember train "
                 "--data text");
        return false;
    }
    if (len % 2 || len > 512) {
        snprintf(why, why_len,
                 "its vocabulary (ember.vocab) is %zu hex digits, not two for each of 1 to 256 bytes", len);
        return false;
    }
    for (size_t k = 0; k < len / 2; k++) {
        int hi = hex_digit(hex[2 * k]), lo = hex_digit(hex[2 * k + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(why, why_len,
                     "its vocabulary (ember.vocab) holds \"%.2s\" at token %zu, not two lowercase hex digits",
                     hex + 2 * k, k);
            return false;
        }
        int byte = hi << 4 | lo;
        if (k > 0 && byte <= v->byte[k - 1]) { /* the distinct bytes of the text, ascending */
            snprintf(why, why_len,
                     "its vocabulary (ember.vocab) gives byte 0x%02x at token %zu after 0x%02x: ember's are "
                     "distinct and ascending",
                     byte, k, v->byte[k - 1]);
            return false;
        }
        v->byte[k] = (uint8_t)byte;
        v->token_of[byte] = (int16_t)k;
    }
    v->count = (int)(len / 2);
    return true;
}

struct text_printer text_printer_for(FILE *f)
{
    return (struct text_printer){.f = f, .escape = isatty(fileno(f)) != 0};
}

static void escape_bytes(FILE *f, const uint8_t *b, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "\\x%02x", b[i]);
}

/* A byte to a terminal: ASCII text as it is, a control byte escaped, a
 * UTF-8 sequence gathered and written whole when it is valid and no C1
 * control (U+0080 to U+009F), else escaped byte by byte. */
static void terminal_byte(struct text_printer *p, uint8_t b)
{
    if (p->have > 0) {
        if ((b & 0xc0) == 0x80) {
            p->pending[p->have++] = b;
            if (p->have < p->need)
                return;
            uint32_t cp = p->pending[0] & (0x7f >> p->need);
            for (int i = 1; i < p->need; i++)
                cp = cp << 6 | (p->pending[i] & 0x3f);
            static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
            bool ok = cp >= least[p->need] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
                      !(cp >= 0x80 && cp <= 0x9f);
            if (ok)
                fwrite(p->pending, 1, (size_t)p->have, p->f);
            else
                escape_bytes(p->f, p->pending, p->have);
            p->have = 0;
            return;
        }
        escape_bytes(p->f, p->pending, p->have); /* cut short by a byte that does not continue it */
        p->have = 0;
    }
    if (b < 0x80) {
        if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7f)
            escape_bytes(p->f, &b, 1);
        else
            fputc(b, p->f);
        return;
    }
    int need = (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
    if (!need) {
        escape_bytes(p->f, &b, 1);
        return;
    }
    p->pending[0] = b;
    p->have = 1;
    p->need = need;
}

void text_print(struct text_printer *p, const uint8_t *bytes, size_t n)
{
    if (p->escape)
        for (size_t i = 0; i < n; i++)
            terminal_byte(p, bytes[i]);
    else
        fwrite(bytes, 1, n, p->f);
    fflush(p->f);
}

void text_print_end(struct text_printer *p)
{
    escape_bytes(p->f, p->pending, p->have);
    p->have = 0;
    fflush(p->f);
}
