/* SPDX-License-Identifier: MIT */
/*
 * tools/text-vocab.h — what `ember generate` needs to turn tokens into text
 * and back: the vocabulary a model of text was trained with, and a printer
 * that shows the text as it comes, safely on a terminal.
 *
 * A vocabulary maps token k to its bytes. ember's own models of text
 * (ember train --data text) have one byte a token, stored in the
 * checkpoint's "ember.vocab" as two lowercase hex digits a token, the
 * bytes distinct and ascending, and it is read back exactly so: anything
 * else ("-1", " a", "+a", a byte twice) is a damaged checkpoint. Another
 * tokenizer (a GGUF file's pieces of several bytes) fills the same struct
 * by another reader.
 *
 *     struct text_vocab v;
 *     char why[160];
 *     if (!text_vocab_parse(ember_checkpoint_meta(ck, "ember.vocab"), &v, why, sizeof why))
 *         ... exit 3, saying why ...
 *     struct text_printer out = text_printer_for(stdout);
 *     text_print(&out, text_vocab_piece(&v, token), 1);  // as each token comes
 *     text_print_end(&out);
 *
 * The printer escapes, when it writes to a terminal, what a terminal would
 * take as a command rather than text: control bytes (C0 but newline and
 * tab, DEL, and C1 in UTF-8) and bytes that are not UTF-8, written as
 * \xNN; a byte sequence split across tokens is held until it is whole.
 * Into a file or a pipe the bytes go as they are.
 */
#ifndef EMBER_TEXT_VOCAB_H
#define EMBER_TEXT_VOCAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct text_vocab {
    int count;             /* tokens */
    uint8_t byte[256];     /* token k's byte */
    int16_t token_of[256]; /* a byte's token, or -1 */
};

/* "ember.vocab" (NULL: none) into v; false with the reason in why when it
 * is missing or not exactly as ember writes it. */
bool text_vocab_parse(const char *hex, struct text_vocab *v, char *why, size_t why_len);
/* token k's bytes (one) */
static inline const uint8_t *text_vocab_piece(const struct text_vocab *v, int32_t token)
{
    return &v->byte[token];
}

struct text_printer {
    FILE *f;
    bool escape;        /* a terminal: control bytes and broken UTF-8 escaped */
    uint8_t pending[4]; /* a UTF-8 sequence begun, not yet whole */
    int have, need;
};
struct text_printer text_printer_for(FILE *f);
/* n bytes, flushed at once: the reader sees each token as it comes */
void text_print(struct text_printer *p, const uint8_t *bytes, size_t n);
/* what is pending (a sequence cut short) as escapes, and a flush */
void text_print_end(struct text_printer *p);

#endif /* EMBER_TEXT_VOCAB_H */
