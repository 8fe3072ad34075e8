/* SPDX-License-Identifier: MIT */
/*
 * io/json.c — the pieces of a strict JSON reader that the readers written
 * against one schema share (json-impl.h): a safetensors header
 * (safetensors-parse.c) and a chat's conversations (models/lm-chat.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json-impl.h"
#include "text-impl.h"

/* ----------------------------------------------------------------- UTF-8 */

/* The length (1 to 4) of the well-formed UTF-8 sequence at s, or 0: no
 * overlong forms, no surrogates, nothing past U+10FFFF. */
static int utf8_sequence(const unsigned char *s, const unsigned char *end)
{
    unsigned c = s[0], lo = 0x80, hi = 0xBF;
    int n;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (end - s < n || s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

bool ember_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    for (int n; p < end; p += n)
        if (!(n = utf8_sequence(p, end)))
            return false;
    return true;
}

static size_t utf8_encode(uint32_t cp, char *out)
{
    if (cp < 0x80)
        return out[0] = (char)cp, 1;
    if (cp < 0x800)
        return out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F)), 2;
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12), out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18), out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F)), out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---------------------------------------------------------- JSON parsing */

/* Fails with the position as an offset in the file (ps->base: where the
 * JSON starts), so that a hexdump of the file finds it. */
ember_status json_fail(struct json_parser *ps, const char *fmt, ...)
{
    char msg[1024];
    EMBER_FORMAT_ARGS(msg, fmt);
    return ember_fail(ps->ctx, EMBER_ERR_FORMAT, "%s: bad %s at byte %zu: %s", ps->what, ps->kind,
                      (size_t)(ps->p - ps->start) + ps->base, msg);
}

/* what is at the cursor, for messages: "'x'", "byte 0xff", "the end" */
const char *json_found(const struct json_parser *ps, char *buf, size_t len)
{
    if (ps->p == ps->end)
        snprintf(buf, len, "the end of the %s", ps->kind);
    else if (*ps->p >= 0x20 && *ps->p < 0x7F)
        snprintf(buf, len, "'%c'", *ps->p);
    else
        snprintf(buf, len, "byte 0x%02x", *ps->p);
    return buf;
}

void json_skip_space(struct json_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* true, past it, if the next token is c */
bool json_accept(struct json_parser *ps, unsigned char c)
{
    json_skip_space(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

ember_status json_expect(struct json_parser *ps, unsigned char c, const char *where)
{
    char buf[32];
    if (json_accept(ps, c))
        return EMBER_OK;
    return json_fail(ps, "expected '%c' %s, found %s", c, where, json_found(ps, buf, sizeof buf));
}

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* the four hex digits after "\u" at p (which has at least 6 bytes), or -1 */
static long hex4(const unsigned char *p)
{
    long v = 0;
    for (int i = 2; i < 6; i++) {
        int d = hex_digit(p[i]);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

/* Decodes the escape at ps->p (a backslash, inside a string that closes at
 * `close`) into out; returns the bytes written, or 0 after failing. */
static size_t parse_escape(struct json_parser *ps, const unsigned char *close, char *out)
{
    static const char simple_in[] = "\"\\/bfnrt", simple_out[] = "\"\\/\b\f\n\r\t";
    const char *simple = memchr(simple_in, ps->p[1], sizeof simple_in - 1);
    if (simple) {
        ps->p += 2;
        out[0] = simple_out[simple - simple_in];
        return 1;
    }
    if (ps->p[1] != 'u') {
        json_fail(ps, "unknown escape '\\%c' in a string", ps->p[1]);
        return 0;
    }
    long cp = close - ps->p >= 6 ? hex4(ps->p) : -1;
    if (cp < 0) {
        json_fail(ps, "\\u needs four hex digits");
        return 0;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        json_fail(ps, "a lone low surrogate \\u%04lx", cp);
        return 0;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        long low = close - ps->p >= 12 && ps->p[6] == '\\' && ps->p[7] == 'u' ? hex4(ps->p + 6) : -1;
        if (low < 0xDC00 || low > 0xDFFF) {
            json_fail(ps, "a high surrogate \\u%04lx without its low half", cp);
            return 0;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        ps->p += 6;
    }
    if (cp == 0) {
        json_fail(ps, "\\u0000 (a NUL character) is not allowed in a name or value");
        return 0;
    }
    ps->p += 6;
    return utf8_encode((uint32_t)cp, out);
}

/* A string, decoded into *out (NUL-terminated, owned by the caller). */
ember_status json_string(struct json_parser *ps, char **out)
{
    char buf[32];
    *out = NULL;
    json_skip_space(ps);
    if (ps->p == ps->end || *ps->p != '"')
        return json_fail(ps, "expected a string, found %s", json_found(ps, buf, sizeof buf));
    /* find the closing quote first: the decoded string is never longer than
     * its source, so that bounds the allocation */
    const unsigned char *close = ps->p + 1;
    while (close < ps->end && *close != '"')
        close += *close == '\\' && close + 1 < ps->end ? 2 : 1;
    if (close >= ps->end)
        return json_fail(ps, "a string is not terminated");
    char *s = ember_host_alloc(ps->ctx, (size_t)(close - ps->p));
    if (!s)
        return EMBER_ERR_NOMEM;
    size_t n = 0;
    ps->p++;
    while (ps->p < close) {
        unsigned char c = *ps->p;
        int len;
        if (c < 0x20) {
            json_fail(ps, "a raw control character (0x%02x) in a string; JSON needs it escaped", c);
            goto fail;
        } else if (c == '\\') {
            size_t wrote = parse_escape(ps, close, s + n);
            if (!wrote)
                goto fail;
            n += wrote;
        } else if ((len = utf8_sequence(ps->p, close)) == 0) {
            json_fail(ps, "a string is not valid UTF-8");
            goto fail;
        } else {
            memcpy(s + n, ps->p, (size_t)len);
            n += (size_t)len;
            ps->p += len;
        }
    }
    ps->p++;
    s[n] = '\0';
    *out = s;
    return EMBER_OK;
fail:
    free(s);
    return EMBER_ERR_FORMAT;
}

/* st, or an error if anything but space follows the value just read */
static ember_status json_finish(struct json_parser *ps, ember_status st)
{
    json_skip_space(ps);
    if (st == EMBER_OK && ps->p != ps->end)
        st = json_fail(ps, "bytes after the %s", ps->kind);
    return st;
}

ember_status ember_json_strings(ember_ctx *ctx, const char *text, char ***items, int *count)
{
    *items = NULL;
    *count = 0;
    if (!text)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "no JSON array");
    struct json_parser ps = {.ctx = ctx,
                             .what = "a metadata value",
                             .kind = "JSON array",
                             .start = (const unsigned char *)text,
                             .p = (const unsigned char *)text,
                             .end = (const unsigned char *)text + strlen(text)};
    int cap = 0;
    ember_status st = json_expect(&ps, '[', "to open the array");
    bool more = st == EMBER_OK && !json_accept(&ps, ']');
    while (st == EMBER_OK && more) {
        if (*count == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = cap <= 1 << 20 ? realloc(*items, (size_t)cap * sizeof **items) : NULL;
            if (!grown) {
                st = ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory reading a list of names");
                break;
            }
            *items = grown;
        }
        if ((st = json_string(&ps, &(*items)[*count])) == EMBER_OK) {
            ++*count;
            more = json_accept(&ps, ',');
            if (!more)
                st = json_expect(&ps, ']', "to close the array");
        }
    }
    st = json_finish(&ps, st);
    if (st != EMBER_OK) {
        for (int i = 0; i < *count; i++)
            free((*items)[i]);
        free(*items);
        *items = NULL;
        *count = 0;
    }
    return st;
}

/* a number as JSON spells it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool skip_number(struct json_parser *ps)
{
    const unsigned char *p = ps->p, *end = ps->end;
#define DIGITS(at) ((at) < end && *(at) >= '0' && *(at) <= '9')
    p += p < end && *p == '-';
    if (!DIGITS(p))
        return false;
    if (*p == '0')
        p++;
    else
        while (DIGITS(p))
            p++;
    if (p < end && *p == '.') {
        p++;
        if (!DIGITS(p))
            return false;
        while (DIGITS(p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        p += p < end && (*p == '+' || *p == '-');
        if (!DIGITS(p))
            return false;
        while (DIGITS(p))
            p++;
    }
#undef DIGITS
    ps->p = p;
    return true;
}

ember_status json_skip_value(struct json_parser *ps, int depth)
{
    char buf[32];
    json_skip_space(ps);
    if (depth > JSON_MAX_DEPTH)
        return json_fail(ps, "values nested more than %d deep", JSON_MAX_DEPTH);
    if (ps->p < ps->end && *ps->p == '"') {
        char *s;
        ember_status st = json_string(ps, &s);
        free(s);
        return st;
    }
    bool object = json_accept(ps, '{');
    if (object || json_accept(ps, '[')) {
        char close = object ? '}' : ']';
        if (json_accept(ps, close))
            return EMBER_OK;
        do {
            ember_status st = EMBER_OK;
            if (object) { /* "key": */
                char *key;
                if ((st = json_string(ps, &key)) != EMBER_OK)
                    return st;
                free(key);
                if ((st = json_expect(ps, ':', "after a key")) != EMBER_OK)
                    return st;
            }
            if ((st = json_skip_value(ps, depth + 1)) != EMBER_OK)
                return st;
        } while (json_accept(ps, ','));
        return json_expect(ps, (unsigned char)close, object ? "to close an object" : "to close an array");
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++)
        if ((size_t)(ps->end - ps->p) >= strlen(words[i]) && memcmp(ps->p, words[i], strlen(words[i])) == 0) {
            ps->p += strlen(words[i]);
            return EMBER_OK;
        }
    if (skip_number(ps))
        return EMBER_OK;
    return json_fail(ps, "expected a value, found %s", json_found(ps, buf, sizeof buf));
}

ember_status ember_json_number_field(ember_ctx *ctx, const char *what, const char *text, size_t len,
                                     const char *key, double *value, bool *found)
{
    struct json_parser ps = {.ctx = ctx,
                             .what = what,
                             .kind = "JSON object",
                             .start = (const unsigned char *)text,
                             .p = (const unsigned char *)text,
                             .end = (const unsigned char *)text + len};
    *found = false;
    ember_status st = json_expect(&ps, '{', "to open the object");
    bool more = st == EMBER_OK && !json_accept(&ps, '}');
    while (st == EMBER_OK && more) {
        char *name = NULL;
        if ((st = json_string(&ps, &name)) == EMBER_OK &&
            (st = json_expect(&ps, ':', "after a key")) == EMBER_OK) {
            json_skip_space(&ps);
            const unsigned char *at = ps.p;
            if ((st = json_skip_value(&ps, 1)) == EMBER_OK && strcmp(name, key) == 0 && *at != '"' &&
                *at != '{' && *at != '[' && *at != 'n') {
                char number[64]; /* a number, or true or false: 1 and 0 */
                size_t n = (size_t)(ps.p - at) < sizeof number - 1 ? (size_t)(ps.p - at) : sizeof number - 1;
                memcpy(number, at, n);
                number[n] = 0;
                *value = *at == 't' ? 1.0 : *at == 'f' ? 0.0 : strtod(number, NULL);
                *found = true;
            }
        }
        free(name);
        if (st == EMBER_OK && !(more = json_accept(&ps, ',')))
            st = json_expect(&ps, '}', "to close the object");
    }
    return json_finish(&ps, st);
}
