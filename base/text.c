/* SPDX-License-Identifier: MIT */
/* base/text.c — building strings (see text-impl.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text-impl.h"

/* room for n more bytes and a NUL */
static bool reserve(struct ember_text *t, size_t n)
{
    if (t->failed)
        return false;
    if (t->len + n + 1 <= t->cap)
        return true;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1)
        cap *= 2;
    char *grown = realloc(t->s, cap);
    if (!grown) {
        t->failed = true;
        return false;
    }
    t->s = grown;
    t->cap = cap;
    return true;
}

void ember_text_add(struct ember_text *t, const char *s, size_t n)
{
    if (!reserve(t, n))
        return;
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

void ember_text_printf(struct ember_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(t, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void ember_text_json_string(struct ember_text *t, const char *s)
{
    ember_text_add(t, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            ember_text_printf(t, "\\%c", *p);
        else if (*p == '\n')
            ember_text_add(t, "\\n", 2);
        else if (*p == '\t')
            ember_text_add(t, "\\t", 2);
        else if (*p == '\r')
            ember_text_add(t, "\\r", 2);
        else if (*p < 0x20)
            ember_text_printf(t, "\\u%04x", *p);
        else
            ember_text_add(t, (const char *)p, 1);
    }
    ember_text_add(t, "\"", 1);
}

char *ember_text_take(struct ember_text *t)
{
    char *s = t->failed ? NULL : t->s ? t->s : strdup("");
    if (t->failed)
        free(t->s);
    *t = (struct ember_text){0};
    return s;
}

void ember_note_append(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used && used + 2 < size) {
        memcpy(buf + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/* Levenshtein distance; names are short (longer ones are simply far) */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40)
        return 99;
    int row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

int ember_closest_name(const char *word, const char *const *names, int count)
{
    int best = 3, at = -1;
    for (int i = 0; i < count; i++) {
        int d = edit_distance(word, names[i]);
        if (d < best)
            best = d, at = i;
    }
    return at;
}

void ember_suggest(const char *word, const char *const *names, int count, char *out, size_t len)
{
    int at = ember_closest_name(word, names, count);
    if (at >= 0)
        snprintf(out, len, " (did you mean \"%s\"?)", names[at]);
    else if (len)
        out[0] = '\0';
}

uint64_t ember_hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
