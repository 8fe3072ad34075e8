/* SPDX-License-Identifier: MIT */
/*
 * base/unicode-impl.h — the little of Unicode a tokenizer needs: UTF-8
 * decoded a character at a time, and whether a character is a letter
 * (general category L*), a number (N*) or white space (the White_Space
 * property): the \p{L}, \p{N} and \s of the regular expressions that
 * language models' tokenizers split text with (models/lm-pretokenize.c).
 * The tables are generated (base/unicode-tables.c, scripts/gen-unicode.py).
 */
#ifndef EMBER_UNICODE_IMPL_H
#define EMBER_UNICODE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ember_unicode_range {
    uint32_t first, last;
};
extern const struct ember_unicode_range ember_unicode_letters[], ember_unicode_numbers[],
    ember_unicode_spaces[];
extern const int ember_unicode_letters_count, ember_unicode_numbers_count, ember_unicode_spaces_count;

/* The character at s (len > 0 bytes left) and its length in *bytes. A
 * byte that starts no valid UTF-8 sequence (a stray continuation byte, an
 * overlong form, a surrogate, a sequence cut short) is a character of its
 * own, one byte long, returned as 0xFFFD: text that is not UTF-8 still
 * splits, byte by byte, and byte-level tokenizers still encode it. */
uint32_t ember_utf8_next(const unsigned char *s, size_t len, int *bytes);

bool ember_unicode_is_letter(uint32_t c);
bool ember_unicode_is_number(uint32_t c);
bool ember_unicode_is_space(uint32_t c);

#endif /* EMBER_UNICODE_IMPL_H */
