/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_vocab.c — what `ember generate` reads from a checkpoint
 * and prints (tools/text-vocab.c). The input up to its first newline is a
 * checkpoint's ember.vocab; the rest, bytes a model could make, printed as
 * to a terminal. An accepted vocabulary is 1 to 256 distinct ascending
 * bytes, each its token's, written back as the same text; what reaches the
 * terminal is UTF-8 without a control character (but newline and tab),
 * and every byte given is either there as it is or escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "text-vocab.h"

static void check_vocab(const char *hex)
{
    struct text_vocab v;
    char why[256];
    if (!text_vocab_parse(hex, &v, why, sizeof why)) {
        if (!why[0] || strlen(why) >= sizeof why - 1)
            abort(); /* refused without a reason */
        return;
    }
    if (v.count < 1 || v.count > 256)
        abort();
    char again[513];
    for (int k = 0; k < v.count; k++) {
        if ((k && v.byte[k] <= v.byte[k - 1]) || v.token_of[v.byte[k]] != k ||
            *text_vocab_piece(&v, k) != v.byte[k])
            abort();
        snprintf(again + 2 * k, 3, "%02x", v.byte[k]);
    }
    if (strcmp(again, hex) != 0)
        abort(); /* read as something other than what ember writes */
}

/* valid UTF-8 (no overlong forms, surrogates or C1), and no C0 but \n \t, no DEL */
static void check_terminal_text(const unsigned char *t, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char b = t[i];
        if (b < 0x80) {
            if ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7f)
                abort();
            i++;
            continue;
        }
        int need = (b & 0xe0) == 0xc0 ? 2 : (b & 0xf0) == 0xe0 ? 3 : (b & 0xf8) == 0xf0 ? 4 : 0;
        if (!need || i + (size_t)need > n)
            abort();
        uint32_t cp = b & (0x7f >> need);
        for (int k = 1; k < need; k++) {
            if ((t[i + k] & 0xc0) != 0x80)
                abort();
            cp = cp << 6 | (t[i + k] & 0x3f);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
            abort();
        i += (size_t)need;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *cut = memchr(data, '\n', size);
    size_t hex_len = cut ? (size_t)(cut - data) : size;
    char *hex = malloc(hex_len + 1);
    if (!hex)
        return 0;
    memcpy(hex, data, hex_len);
    hex[hex_len] = '\0'; /* a NUL inside ends it, as metadata's C string would */
    check_vocab(hex);
    free(hex);
    if (!cut)
        return 0;
    const uint8_t *text = cut + 1;
    size_t n = size - hex_len - 1;
    char *shown = NULL;
    size_t shown_len = 0;
    FILE *f = open_memstream(&shown, &shown_len);
    if (!f)
        return 0;
    struct text_printer p = text_printer_for(f);
    p.escape = true;                  /* as to a terminal */
    for (size_t i = 0; i < n; i += 3) /* a token of up to 3 bytes at a time: sequences split across tokens */
        text_print(&p, text + i, n - i < 3 ? n - i : 3);
    text_print_end(&p);
    fclose(f);
    check_terminal_text((const unsigned char *)shown, shown_len);
    /* nothing lost: each byte shown as it is, or as 4 characters of escape */
    if (shown_len < n || shown_len > 4 * n)
        abort();
    free(shown);
    return 0;
}
