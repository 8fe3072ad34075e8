/* SPDX-License-Identifier: MIT */
/* base/unicode.c — UTF-8 decoding and the character classes of unicode-impl.h. */
#include "unicode-impl.h"

uint32_t ember_utf8_next(const unsigned char *s, size_t len, int *bytes)
{
    *bytes = 1;
    unsigned char b = s[0];
    if (b < 0x80)
        return b;
    int n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
    if (n == 0 || (size_t)n > len || (b >= 0xF8))
        return 0xFFFD;
    uint32_t c = b & (0x7Fu >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0xFFFD;
        c = c << 6 | (s[i] & 0x3Fu);
    }
    /* overlong forms, surrogates and code points past U+10FFFF are not UTF-8 */
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF))
        return 0xFFFD;
    *bytes = n;
    return c;
}

static bool in_ranges(const struct ember_unicode_range *r, int count, uint32_t c)
{
    int lo = 0, hi = count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c < r[mid].first)
            hi = mid - 1;
        else if (c > r[mid].last)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

bool ember_unicode_is_letter(uint32_t c)
{
    if (c < 0x80)
        return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return in_ranges(ember_unicode_letters, ember_unicode_letters_count, c);
}

bool ember_unicode_is_number(uint32_t c)
{
    if (c < 0x80)
        return c >= '0' && c <= '9';
    return in_ranges(ember_unicode_numbers, ember_unicode_numbers_count, c);
}

bool ember_unicode_is_space(uint32_t c)
{
    return in_ranges(ember_unicode_spaces, ember_unicode_spaces_count, c);
}
