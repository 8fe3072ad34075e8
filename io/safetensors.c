/* SPDX-License-Identifier: MIT */
/*
 * io/safetensors.c — a strict reader and an atomic writer of safetensors
 * files (the format, and what the reader refuses: safetensors-impl.h).
 *
 * The JSON parser here reads exactly the header's subset of JSON: one object
 * of tensor entries and an optional "__metadata__" object of strings. It is
 * written against that schema, not as a general JSON reader, so nesting is
 * bounded by construction and every unexpected token is an error that says
 * where it is.
 */
#define _FILE_OFFSET_BITS 64 /* files over 2 GB on 32-bit hosts too */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors-impl.h"
#include "platform.h"
#include "text-impl.h"

#define METADATA_KEY "__metadata__"

/* ------------------------------------------------------------ byte order */

/* The file is little-endian whatever the host. Going through bytes with
 * shifts is right on every host, so the one path every test runs is also
 * the big-endian path. */
static uint64_t load_le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static void store_le64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        b[i] = (unsigned char)v;
}

/* n floats whose bytes are little-endian, into host order, in place */
static void f32_from_le(float *values, size_t n)
{
    const unsigned char *b = (const unsigned char *)values;
    for (size_t i = 0; i < n; i++, b += 4) {
        uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        memcpy(&values[i], &u, 4);
    }
}

/* n host floats into little-endian bytes at out (4 n bytes) */
static void f32_to_le(unsigned char *out, const float *values, size_t n)
{
    for (size_t i = 0; i < n; i++, out += 4) {
        uint32_t u;
        memcpy(&u, &values[i], 4);
        out[0] = (unsigned char)u, out[1] = (unsigned char)(u >> 8);
        out[2] = (unsigned char)(u >> 16), out[3] = (unsigned char)(u >> 24);
    }
}

/* ---------------------------------------------------------------- dtypes */

/* Every dtype the reference implementation knows, with its width in bits
 * (F4 and F6 pack elements below a byte). */
static const struct dtype {
    const char *name;
    unsigned bits;
} dtypes[] = {
    {"BOOL", 8},     {"U8", 8},       {"I8", 8},           {"F8_E5M2", 8},     {"F8_E4M3", 8},
    {"F8_E8M0", 8},  {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"F4", 4},          {"F6_E2M3", 6},
    {"F6_E3M2", 6},  {"I16", 16},     {"U16", 16},         {"F16", 16},        {"BF16", 16},
    {"I32", 32},     {"U32", 32},     {"F32", 32},         {"I64", 64},        {"U64", 64},
    {"F64", 64},     {"C64", 64},
};

static const struct dtype *dtype_find(const char *name)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return &dtypes[i];
    return NULL;
}

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

static bool utf8_valid(const char *s)
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

struct parser {
    ember_ctx *ctx;
    const char *what;
    const unsigned char *start, *p, *end;
    int64_t entries_cap, meta_cap;
};

/* Fails with the position as a file offset (the JSON starts at byte 8), so
 * that a hexdump of the file finds it. */
static ember_status parse_fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static ember_status parse_fail(struct parser *ps, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ember_fail(ps->ctx, EMBER_ERR_FORMAT, "%s: bad safetensors header at byte %zu: %s", ps->what,
                      (size_t)(ps->p - ps->start) + 8, msg);
}

/* what is at the cursor, for messages: "'x'", "byte 0xff", "the end" */
static const char *found(const struct parser *ps, char *buf, size_t len)
{
    if (ps->p == ps->end)
        snprintf(buf, len, "the end of the header");
    else if (*ps->p >= 0x20 && *ps->p < 0x7F)
        snprintf(buf, len, "'%c'", *ps->p);
    else
        snprintf(buf, len, "byte 0x%02x", *ps->p);
    return buf;
}

static void skip_space(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* true, past it, if the next token is c */
static bool accept(struct parser *ps, unsigned char c)
{
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

static ember_status expect(struct parser *ps, unsigned char c, const char *where)
{
    char buf[32];
    if (accept(ps, c))
        return EMBER_OK;
    return parse_fail(ps, "expected '%c' %s, found %s", c, where, found(ps, buf, sizeof buf));
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
static size_t parse_escape(struct parser *ps, const unsigned char *close, char *out)
{
    static const char simple_in[] = "\"\\/bfnrt", simple_out[] = "\"\\/\b\f\n\r\t";
    const char *simple = memchr(simple_in, ps->p[1], sizeof simple_in - 1);
    if (simple) {
        ps->p += 2;
        out[0] = simple_out[simple - simple_in];
        return 1;
    }
    if (ps->p[1] != 'u') {
        parse_fail(ps, "unknown escape '\\%c' in a string", ps->p[1]);
        return 0;
    }
    long cp = close - ps->p >= 6 ? hex4(ps->p) : -1;
    if (cp < 0) {
        parse_fail(ps, "\\u needs four hex digits");
        return 0;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        parse_fail(ps, "a lone low surrogate \\u%04lx", cp);
        return 0;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        long low = close - ps->p >= 12 && ps->p[6] == '\\' && ps->p[7] == 'u' ? hex4(ps->p + 6) : -1;
        if (low < 0xDC00 || low > 0xDFFF) {
            parse_fail(ps, "a high surrogate \\u%04lx without its low half", cp);
            return 0;
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        ps->p += 6;
    }
    if (cp == 0) {
        parse_fail(ps, "\\u0000 (a NUL character) is not allowed in a name or value");
        return 0;
    }
    ps->p += 6;
    return utf8_encode((uint32_t)cp, out);
}

/* A string, decoded into *out (NUL-terminated, owned by the caller). */
static ember_status parse_string(struct parser *ps, char **out)
{
    char buf[32];
    *out = NULL;
    skip_space(ps);
    if (ps->p == ps->end || *ps->p != '"')
        return parse_fail(ps, "expected a string, found %s", found(ps, buf, sizeof buf));
    /* find the closing quote first: the decoded string is never longer than
     * its source, so that bounds the allocation */
    const unsigned char *close = ps->p + 1;
    while (close < ps->end && *close != '"')
        close += *close == '\\' && close + 1 < ps->end ? 2 : 1;
    if (close >= ps->end)
        return parse_fail(ps, "a string is not terminated");
    char *s = ember_host_alloc(ps->ctx, (size_t)(close - ps->p));
    if (!s)
        return EMBER_ERR_NOMEM;
    size_t n = 0;
    ps->p++;
    while (ps->p < close) {
        unsigned char c = *ps->p;
        int len;
        if (c < 0x20) {
            parse_fail(ps, "a raw control character (0x%02x) in a string; JSON needs it escaped", c);
            goto fail;
        } else if (c == '\\') {
            size_t wrote = parse_escape(ps, close, s + n);
            if (!wrote)
                goto fail;
            n += wrote;
        } else if ((len = utf8_sequence(ps->p, close)) == 0) {
            parse_fail(ps, "a string is not valid UTF-8");
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

ember_status ember_json_strings(ember_ctx *ctx, const char *text, char ***items, int *count)
{
    *items = NULL;
    *count = 0;
    if (!text)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "no JSON array");
    struct parser ps = {.ctx = ctx, .what = "a metadata value", .start = (const unsigned char *)text,
                        .p = (const unsigned char *)text, .end = (const unsigned char *)text + strlen(text)};
    int cap = 0;
    ember_status st = expect(&ps, '[', "to open the array");
    bool more = st == EMBER_OK && !accept(&ps, ']');
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
        if ((st = parse_string(&ps, &(*items)[*count])) == EMBER_OK) {
            ++*count;
            more = accept(&ps, ',');
            if (!more)
                st = expect(&ps, ']', "to close the array");
        }
    }
    skip_space(&ps);
    if (st == EMBER_OK && ps.p != ps.end)
        st = parse_fail(&ps, "bytes after the array");
    if (st != EMBER_OK) {
        for (int i = 0; i < *count; i++)
            free((*items)[i]);
        free(*items);
        *items = NULL;
        *count = 0;
    }
    return st;
}

/* A non-negative integer that fits in 64 bits, in JSON's spelling. */
static ember_status parse_u64(struct parser *ps, uint64_t *out, const char *field)
{
    char buf[32];
    skip_space(ps);
    if (ps->p < ps->end && *ps->p == '-')
        return parse_fail(ps, "\"%s\" holds a negative number", field);
    if (ps->p == ps->end || *ps->p < '0' || *ps->p > '9')
        return parse_fail(ps, "expected a non-negative integer in \"%s\", found %s", field, found(ps, buf, sizeof buf));
    if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
        return parse_fail(ps, "\"%s\" holds a number with a leading zero", field);
    uint64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        unsigned d = (unsigned)(*ps->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return parse_fail(ps, "\"%s\" holds a number over 2^64 - 1", field);
        v = v * 10 + d;
        ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return parse_fail(ps, "\"%s\" holds a number that is not an integer", field);
    *out = v;
    return EMBER_OK;
}

/* [u64, u64, ...] with at most `max` numbers, into vals; *n is the count. */
static ember_status parse_u64_list(struct parser *ps, uint64_t *vals, int max, int *n, const char *field,
                                   const char *tensor)
{
    char buf[32];
    ember_status st = expect(ps, '[', "to open a list");
    *n = 0;
    if (st != EMBER_OK || accept(ps, ']'))
        return st;
    for (;;) {
        if (*n == max)
            return parse_fail(ps, "\"%s\" of tensor \"%.200s\" has more than %d numbers", field, tensor, max);
        if ((st = parse_u64(ps, &vals[(*n)++], field)) != EMBER_OK)
            return st;
        if (accept(ps, ']'))
            return EMBER_OK;
        if (!accept(ps, ','))
            return parse_fail(ps, "expected ',' or ']' in \"%s\", found %s", field, found(ps, buf, sizeof buf));
    }
}

/* {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}, each once */
enum entry_field { FIELD_DTYPE, FIELD_SHAPE, FIELD_OFFSETS, FIELD_COUNT };
static const char *const entry_fields[FIELD_COUNT] = {"dtype", "shape", "data_offsets"};

static ember_status parse_entry(struct parser *ps, struct ember_safetensors_entry *e)
{
    bool seen[FIELD_COUNT] = {false};
    char *key = NULL, *dtype = NULL, buf[32];
    ember_status st = expect(ps, '{', "to open a tensor's entry");
    if (st != EMBER_OK || accept(ps, '}'))
        goto check;
    for (;;) {
        if ((st = parse_string(ps, &key)) != EMBER_OK || (st = expect(ps, ':', "after a key")) != EMBER_OK)
            goto done;
        int f = 0;
        while (f < FIELD_COUNT && strcmp(key, entry_fields[f]) != 0)
            f++;
        if (f == FIELD_COUNT) {
            st = parse_fail(ps, "tensor \"%.200s\" has an unknown field \"%.200s\"", e->name, key);
            goto done;
        }
        if (seen[f]) {
            st = parse_fail(ps, "tensor \"%.200s\" has \"%s\" twice", e->name, key);
            goto done;
        }
        seen[f] = true;
        if (f == FIELD_DTYPE) {
            if ((st = parse_string(ps, &dtype)) != EMBER_OK)
                goto done;
            if (!dtype_find(dtype)) {
                st = parse_fail(ps, "tensor \"%.200s\" has an unknown dtype \"%.40s\"", e->name, dtype);
                goto done;
            }
            strcpy(e->dtype, dtype); /* fits: every known name is short */
            free(dtype);
            dtype = NULL;
        } else if (f == FIELD_SHAPE) {
            st = parse_u64_list(ps, e->shape, EMBER_SAFETENSORS_MAX_DIMS, &e->ndim, "shape", e->name);
        } else {
            uint64_t offsets[2] = {0, 0};
            int n;
            st = parse_u64_list(ps, offsets, 2, &n, "data_offsets", e->name);
            if (st == EMBER_OK && n != 2)
                st = parse_fail(ps, "\"data_offsets\" of tensor \"%.200s\" must be [begin, end]", e->name);
            e->begin = offsets[0], e->end = offsets[1];
        }
        free(key);
        key = NULL;
        if (st != EMBER_OK || accept(ps, '}'))
            break;
        if (!accept(ps, ',')) {
            st = parse_fail(ps, "expected ',' or '}' in tensor \"%.200s\", found %s", e->name,
                            found(ps, buf, sizeof buf));
            goto done;
        }
    }
check:
    for (int f = 0; f < FIELD_COUNT && st == EMBER_OK; f++)
        if (!seen[f])
            st = parse_fail(ps, "tensor \"%.200s\" has no \"%s\"", e->name, entry_fields[f]);
done:
    free(key);
    free(dtype);
    return st;
}

/* {"key": "value", ...} */
static ember_status parse_metadata(struct parser *ps, struct ember_safetensors *st)
{
    char buf[32];
    ember_status status = expect(ps, '{', "to open \"" METADATA_KEY "\"");
    if (status != EMBER_OK || accept(ps, '}'))
        return status;
    for (;;) {
        status = ember_host_grow(ps->ctx, (void **)&st->meta, &ps->meta_cap, st->meta_count + 1, sizeof *st->meta);
        if (status != EMBER_OK)
            return status;
        struct ember_safetensors_meta *m = &st->meta[st->meta_count++];
        *m = (struct ember_safetensors_meta){0};
        if ((status = parse_string(ps, &m->key)) != EMBER_OK || (status = expect(ps, ':', "after a key")) != EMBER_OK)
            return status;
        skip_space(ps);
        if (ps->p < ps->end && *ps->p != '"')
            return parse_fail(ps, "the value of \"" METADATA_KEY "\" key \"%.200s\" is not a string", m->key);
        if ((status = parse_string(ps, &m->value)) != EMBER_OK)
            return status;
        if (accept(ps, '}'))
            return EMBER_OK;
        if (!accept(ps, ','))
            return parse_fail(ps, "expected ',' or '}' in \"" METADATA_KEY "\", found %s", found(ps, buf, sizeof buf));
    }
}

/* the whole header: {"name": entry, ..., "__metadata__": {...}} and nothing after */
static ember_status parse_header(struct parser *ps, struct ember_safetensors *st)
{
    char buf[32];
    bool has_meta = false;
    ember_status status;
    /* the reference implementation insists on '{' first, so no space before it */
    if (ps->p == ps->end || *ps->p != '{')
        return parse_fail(ps, "the header must start with '{', not %s", found(ps, buf, sizeof buf));
    ps->p++;
    if (!accept(ps, '}')) {
        for (;;) {
            char *key;
            if ((status = parse_string(ps, &key)) != EMBER_OK)
                return status;
            if ((status = expect(ps, ':', "after a key")) != EMBER_OK) {
                free(key);
                return status;
            }
            if (strcmp(key, METADATA_KEY) == 0) {
                free(key);
                if (has_meta)
                    return parse_fail(ps, "\"" METADATA_KEY "\" appears twice");
                has_meta = true;
                status = parse_metadata(ps, st);
            } else {
                status = ember_host_grow(ps->ctx, (void **)&st->entries, &ps->entries_cap, st->count + 1,
                                         sizeof *st->entries);
                if (status != EMBER_OK) {
                    free(key);
                    return status;
                }
                struct ember_safetensors_entry *e = &st->entries[st->count++];
                *e = (struct ember_safetensors_entry){.name = key};
                status = parse_entry(ps, e);
            }
            if (status != EMBER_OK || accept(ps, '}'))
                break;
            if (!accept(ps, ','))
                return parse_fail(ps, "expected ',' or '}' after a tensor, found %s", found(ps, buf, sizeof buf));
        }
        if (status != EMBER_OK)
            return status;
    }
    skip_space(ps);
    if (ps->p != ps->end)
        return parse_fail(ps, "%s after the header's JSON object (only whitespace may pad it)",
                          found(ps, buf, sizeof buf));
    return EMBER_OK;
}

/* ------------------------------------------------------ checking entries */

const char *ember_safetensors_shape_str(const struct ember_safetensors_entry *e, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < e->ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ", %llu" : "%llu", (unsigned long long)e->shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, ")");
    return buf;
}

/* The entry's offsets lie in the data section and hold exactly its shape's
 * bytes (computed without overflow). */
static ember_status check_entry(ember_ctx *ctx, const char *what, const struct ember_safetensors_entry *e,
                                uint64_t data_bytes)
{
    char shape[256];
    const struct dtype *dt = dtype_find(e->dtype);
    uint64_t numel = 1;
    for (int i = 0; i < e->ndim; i++)
        if (e->shape[i] == 0)
            numel = 0;
    for (int i = 0; i < e->ndim && numel; i++) {
        if (numel > UINT64_MAX / e->shape[i] || numel * e->shape[i] > UINT64_MAX / dt->bits)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" has shape %s, too large to exist", what,
                              e->name, ember_safetensors_shape_str(e, shape, sizeof shape));
        numel *= e->shape[i];
    }
    if (numel * dt->bits % 8)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" (%s %s) does not fill whole bytes", what,
                          e->name, e->dtype, ember_safetensors_shape_str(e, shape, sizeof shape));
    uint64_t bytes = numel * dt->bits / 8;
    if (e->begin > e->end)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: tensor \"%.200s\" has data_offsets [%llu, %llu], which end before they begin", what,
                          e->name, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > data_bytes)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: tensor \"%.200s\" has data_offsets [%llu, %llu], past the end of the data section "
                          "(%llu bytes; is the file truncated?)",
                          what, e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
                          (unsigned long long)data_bytes);
    if (e->end - e->begin != bytes)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: tensor \"%.200s\" is %s %s, %llu bytes, but its data_offsets [%llu, %llu] hold %llu",
                          what, e->name, e->dtype, ember_safetensors_shape_str(e, shape, sizeof shape),
                          (unsigned long long)bytes, (unsigned long long)e->begin, (unsigned long long)e->end,
                          (unsigned long long)(e->end - e->begin));
    return EMBER_OK;
}

static int by_name(const void *a, const void *b)
{
    const struct ember_safetensors_entry *x = *(struct ember_safetensors_entry *const *)a;
    const struct ember_safetensors_entry *y = *(struct ember_safetensors_entry *const *)b;
    return strcmp(x->name, y->name);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct ember_safetensors_meta *)a)->key, ((const struct ember_safetensors_meta *)b)->key);
}

static int by_offset(const void *a, const void *b)
{
    const struct ember_safetensors_entry *x = *(struct ember_safetensors_entry *const *)a;
    const struct ember_safetensors_entry *y = *(struct ember_safetensors_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Names and metadata keys are unique; st->by_name is filled. */
static ember_status check_unique(ember_ctx *ctx, const char *what, struct ember_safetensors *st)
{
    st->by_name = ember_host_alloc(ctx, (size_t)st->count * sizeof *st->by_name);
    if (!st->by_name)
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < st->count; i++)
        st->by_name[i] = &st->entries[i];
    qsort(st->by_name, (size_t)st->count, sizeof *st->by_name, by_name);
    for (int i = 1; i < st->count; i++)
        if (strcmp(st->by_name[i - 1]->name, st->by_name[i]->name) == 0)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" appears twice in the header", what,
                              st->by_name[i]->name);
    if (st->meta_count > 1)
        qsort(st->meta, (size_t)st->meta_count, sizeof *st->meta, by_key);
    for (int i = 1; i < st->meta_count; i++)
        if (strcmp(st->meta[i - 1].key, st->meta[i].key) == 0)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: \"" METADATA_KEY "\" has the key \"%.200s\" twice", what,
                              st->meta[i].key);
    return EMBER_OK;
}

/* The entries, sorted by offset, cover the data section exactly once. */
static ember_status check_tiling(ember_ctx *ctx, const char *what, const struct ember_safetensors *st,
                                 uint64_t data_bytes)
{
    struct ember_safetensors_entry **order = ember_host_alloc(ctx, (size_t)st->count * sizeof *order);
    if (!order)
        return EMBER_ERR_NOMEM;
    memcpy(order, st->by_name, (size_t)st->count * sizeof *order);
    qsort(order, (size_t)st->count, sizeof *order, by_offset);
    ember_status status = EMBER_OK;
    uint64_t covered = 0;
    for (int i = 0; i < st->count && status == EMBER_OK; i++) {
        if (order[i]->begin < covered)
            status = ember_fail(ctx, EMBER_ERR_FORMAT,
                                "%s: tensors \"%.200s\" and \"%.200s\" overlap (bytes %llu to %llu)", what,
                                order[i - 1]->name, order[i]->name, (unsigned long long)order[i]->begin,
                                (unsigned long long)covered);
        else if (order[i]->begin > covered)
            status = ember_fail(ctx, EMBER_ERR_FORMAT,
                                "%s: bytes %llu to %llu of the data section belong to no tensor", what,
                                (unsigned long long)covered, (unsigned long long)order[i]->begin);
        covered = order[i]->end;
    }
    if (status == EMBER_OK && covered != data_bytes)
        status = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s: the data section has %llu bytes after the last tensor's data", what,
                            (unsigned long long)(data_bytes - covered));
    free(order);
    return status;
}

ember_status ember_safetensors_parse(ember_ctx *ctx, const char *what, const unsigned char *json, size_t len,
                                     uint64_t data_bytes, struct ember_safetensors *st)
{
    *st = (struct ember_safetensors){.data_bytes = data_bytes};
    struct parser ps = {.ctx = ctx, .what = what, .start = json, .p = json, .end = json + len};
    ember_status status = parse_header(&ps, st);
    for (int i = 0; i < st->count && status == EMBER_OK; i++)
        status = check_entry(ctx, what, &st->entries[i], data_bytes);
    if (status == EMBER_OK)
        status = check_unique(ctx, what, st);
    if (status == EMBER_OK)
        status = check_tiling(ctx, what, st, data_bytes);
    if (status != EMBER_OK)
        ember_safetensors_close(st);
    return status;
}

/* ------------------------------------------------------------------ files */

/* A short read after the sizes were checked means an error or a file that
 * changed under us. */
static ember_status read_failed(ember_ctx *ctx, FILE *f, const char *path)
{
    if (ferror(f))
        return ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    return ember_fail(ctx, EMBER_ERR_IO, "%s ended early: did it change while being read?", path);
}

/* What torch.save writes: a zip archive ("PK\3\4", PyTorch 1.6 on) or a
 * bare pickle (opcode PROTO 0x80, then protocol 2 to 5). A safetensors
 * file starts with its header's length instead: read from a zip's
 * signature that is at least 67 MB of JSON, which no checkpoint has; a
 * pickle's is taken for one only when the length is impossible anyway, so
 * a real header of 640 bytes (0x80 0x02) is still read. */
static bool is_torch_pickle(const unsigned char *b, uint64_t claimed, uint64_t size)
{
    bool absurd = claimed == 0 || claimed > size - 8 || claimed > EMBER_SAFETENSORS_MAX_HEADER;
    return (b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) || (absurd && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5);
}

/* Reads and checks the header of an open stream of `size` bytes; on
 * success st holds the stream, else the caller closes it. */
static ember_status open_stream(ember_ctx *ctx, FILE *f, const char *path, uint64_t size, struct ember_safetensors *st)
{
    unsigned char prefix[8], *json = NULL;
    ember_status status;
    if (size < 8)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s is %llu bytes, too short for a safetensors file "
                          "(it starts with an 8-byte header length)", path, (unsigned long long)size);
    if (fread(prefix, 1, 8, f) != 8)
        return read_failed(ctx, f, path);
    uint64_t claimed = load_le64(prefix);
    if (is_torch_pickle(prefix, claimed, size))
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s is a PyTorch pickle (torch.save), which ember does not read: loading a pickle runs "
                          "whatever code it holds. Save the state_dict as safetensors instead: python3 -c \"import "
                          "torch, safetensors.torch as s; s.save_file(torch.load('%s', map_location='cpu'), "
                          "'model.safetensors')\"", path, path);
    uint64_t n = load_le64(prefix);
    if (n == 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: the safetensors header length is 0 (even an empty header is \"{}\")", path);
    if (n > size - 8 || n > EMBER_SAFETENSORS_MAX_HEADER)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: the safetensors header length %llu is %s", path,
                          (unsigned long long)n,
                          n > size - 8 ? "past the end of the file (is it truncated, or not safetensors?)"
                                       : "over the 100 MB that readers accept");
    if (!(json = ember_host_alloc(ctx, (size_t)n)))
        return EMBER_ERR_NOMEM;
    if (fread(json, 1, (size_t)n, f) != n) {
        status = read_failed(ctx, f, path);
        goto free_json;
    }
    status = ember_safetensors_parse(ctx, path, json, (size_t)n, size - 8 - n, st);
    if (status != EMBER_OK)
        goto free_json;
    if (!(st->path = ember_host_strdup(ctx, path))) {
        status = EMBER_ERR_NOMEM;
        ember_safetensors_close(st);
        goto free_json;
    }
    st->file = f;
    st->data_start = 8 + n;
free_json:
    free(json);
    return status;
}

ember_status ember_safetensors_open(ember_ctx *ctx, const char *path, struct ember_safetensors *st)
{
    *st = (struct ember_safetensors){0};
    if (!path)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_safetensors_open: NULL path");
    struct stat info;
    FILE *f = ember_fopen_regular(ctx, path, &info);
    if (!f)
        return ember_last_status(ctx);
    ember_status status = open_stream(ctx, f, path, (uint64_t)info.st_size, st);
    if (status != EMBER_OK)
        fclose(f);
    return status;
}

ember_status ember_safetensors_open_memory(ember_ctx *ctx, const char *what, const void *data, size_t size,
                                           struct ember_safetensors *st)
{
    *st = (struct ember_safetensors){0};
    if (!data && size)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: NULL data of %zu bytes", what, size);
    if (size < 8) /* fmemopen refuses an empty buffer: say what is wrong first */
        return open_stream(ctx, NULL, what, size, st);
    /* a copy the stream owns: the caller's buffer may go as soon as we return */
    void *copy = ember_host_alloc(ctx, size);
    if (!copy)
        return EMBER_ERR_NOMEM;
    memcpy(copy, data, size);
    FILE *f = ember_memory_reader(copy, size);
    if (!f) {
        free(copy);
        return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: cannot open %zu bytes as a stream: %s", what, size,
                          strerror(errno));
    }
    ember_status status = open_stream(ctx, f, what, size, st);
    if (status != EMBER_OK) {
        fclose(f);
        free(copy);
        return status;
    }
    st->memory = copy;
    return EMBER_OK;
}

void ember_safetensors_close(struct ember_safetensors *st)
{
    if (!st)
        return;
    if (st->file)
        fclose(st->file);
    free(st->memory);
    for (int i = 0; i < st->count; i++)
        free(st->entries[i].name);
    for (int i = 0; i < st->meta_count; i++) {
        free(st->meta[i].key);
        free(st->meta[i].value);
    }
    free(st->entries);
    free(st->meta);
    free(st->by_name);
    free(st->path);
    *st = (struct ember_safetensors){0};
}

const struct ember_safetensors_entry *ember_safetensors_find(const struct ember_safetensors *st, const char *name)
{
    struct ember_safetensors_entry key = {.name = (char *)name}, *keyp = &key;
    if (!st || !name || !st->by_name)
        return NULL;
    struct ember_safetensors_entry **hit = bsearch(&keyp, st->by_name, (size_t)st->count, sizeof *st->by_name, by_name);
    return hit ? *hit : NULL;
}

const char *ember_safetensors_meta_get(const struct ember_safetensors *st, const char *key)
{
    for (int i = 0; st && key && i < st->meta_count; i++)
        if (strcmp(st->meta[i].key, key) == 0)
            return st->meta[i].value;
    return NULL;
}

ember_status ember_safetensors_read_f32(ember_ctx *ctx, const struct ember_safetensors *st,
                                        const struct ember_safetensors_entry *e, float *values)
{
    uint64_t bytes = e->end - e->begin;
    if (strcmp(e->dtype, "F32") != 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" is %s, not F32", st->path, e->name, e->dtype);
    if (bytes > SIZE_MAX)
        return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: tensor \"%.200s\" does not fit in this host's memory", st->path,
                          e->name);
    if (bytes == 0)
        return EMBER_OK;
    if (fseeko(st->file, (off_t)(st->data_start + e->begin), SEEK_SET) != 0)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot seek in %s: %s", st->path, strerror(errno));
    if (fread(values, 1, (size_t)bytes, st->file) != bytes)
        return read_failed(ctx, st->file, st->path);
    f32_from_le(values, (size_t)(bytes / 4));
    for (size_t i = 0; i < (size_t)(bytes / 4); i++)
        if (!isfinite(values[i]))
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: tensor \"%.200s\" holds %s at index %zu: the run that saved it had diverged, "
                              "or the file is damaged; refusing to load it",
                              st->path, e->name, isnan(values[i]) ? "NaN" : "an infinity", i);
    return EMBER_OK;
}

/* ---------------------------------------------------------------- writing */

static int by_tensor_name(const void *a, const void *b)
{
    return strcmp((*(const struct ember_safetensors_tensor *const *)a)->name,
                  (*(const struct ember_safetensors_tensor *const *)b)->name);
}

/* Names unique, UTF-8 and not the metadata key; shapes sane; metadata in
 * pairs of UTF-8 strings with unique keys. Sets *bytes to each tensor's size. */
static ember_status check_tensors(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors, int count,
                                  const char *const *metadata, uint64_t *bytes)
{
    ember_status status = EMBER_OK;
    for (int i = 0; i < count; i++) {
        const struct ember_safetensors_tensor *t = &tensors[i];
        if (!t->name || !utf8_valid(t->name) || strcmp(t->name, METADATA_KEY) == 0)
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor %d's name is %s", i,
                              !t->name ? "NULL" : strcmp(t->name, METADATA_KEY) == 0 ? "reserved" : "not UTF-8");
        if (t->ndim < 0 || t->ndim > EMBER_SAFETENSORS_MAX_DIMS || (t->ndim && !t->shape))
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor \"%s\" needs 0 to %d dimensions", t->name,
                              EMBER_SAFETENSORS_MAX_DIMS);
        uint64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] < 0 || (t->shape[d] && numel > UINT64_MAX / 4 / (uint64_t)t->shape[d]))
                return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor \"%s\" has a bad shape", t->name);
            numel *= (uint64_t)t->shape[d];
        }
        if (numel && !t->values)
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor \"%s\" has no values", t->name);
        bytes[i] = numel * 4;
    }
    const struct ember_safetensors_tensor **sorted = ember_host_alloc(ctx, (size_t)count * sizeof *sorted);
    if (!sorted)
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < count; i++)
        sorted[i] = &tensors[i];
    qsort(sorted, (size_t)count, sizeof *sorted, by_tensor_name);
    for (int i = 1; i < count && status == EMBER_OK; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
            status = ember_fail(ctx, EMBER_ERR_ARG, "safetensors: two tensors are called \"%s\"", sorted[i]->name);
    free(sorted);
    /* metadata lists are short: a quadratic look for repeats is fine */
    for (int i = 0; metadata && metadata[i] && status == EMBER_OK; i += 2) {
        if (!metadata[i + 1])
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: metadata key \"%s\" has no value", metadata[i]);
        if (!utf8_valid(metadata[i]) || !utf8_valid(metadata[i + 1]))
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: metadata \"%s\" is not UTF-8", metadata[i]);
        for (int j = 0; j < i; j += 2)
            if (strcmp(metadata[i], metadata[j]) == 0)
                return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: metadata key \"%s\" is given twice", metadata[i]);
    }
    return status;
}

/* The JSON header, padded with spaces to a multiple of 8 bytes so that the
 * data section (after the 8-byte length) is 8-byte aligned. */
static ember_status build_header(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors, int count,
                                 const uint64_t *bytes, const char *const *metadata, struct ember_text *t)
{
    bool first = true;
    ember_text_printf(t, "{");
    if (metadata && metadata[0]) {
        ember_text_printf(t, "\"%s\":{", METADATA_KEY);
        for (int i = 0; metadata[i]; i += 2) {
            ember_text_printf(t, "%s", i ? "," : "");
            ember_text_json_string(t, metadata[i]);
            ember_text_printf(t, ":");
            ember_text_json_string(t, metadata[i + 1]);
        }
        ember_text_printf(t, "}");
        first = false;
    }
    uint64_t offset = 0;
    for (int i = 0; i < count; i++, first = false) {
        ember_text_printf(t, "%s", first ? "" : ",");
        ember_text_json_string(t, tensors[i].name);
        ember_text_printf(t, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < tensors[i].ndim; d++)
            ember_text_printf(t, "%s%llu", d ? "," : "", (unsigned long long)tensors[i].shape[d]);
        ember_text_printf(t, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
                          (unsigned long long)(offset + bytes[i]));
        offset += bytes[i];
    }
    ember_text_printf(t, "}");
    while (!t->failed && t->len % 8)
        ember_text_printf(t, " ");
    if (t->failed)
        return ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a safetensors header");
    if (t->len > EMBER_SAFETENSORS_MAX_HEADER)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "safetensors: the header would be %zu bytes, over the 100 MB readers accept", t->len);
    return EMBER_OK;
}

/* Length, header and data; false with errno set when a write fails. */
static bool write_contents(FILE *f, const struct ember_text *header, const struct ember_safetensors_tensor *tensors,
                           int count, const uint64_t *bytes)
{
    unsigned char prefix[8], chunk[4096];
    store_le64(prefix, header->len);
    errno = 0;
    if (fwrite(prefix, 1, 8, f) != 8 || fwrite(header->s, 1, header->len, f) != header->len)
        return false;
    for (int i = 0; i < count; i++) {
        for (uint64_t done = 0; done < bytes[i];) {
            size_t n = bytes[i] - done < sizeof chunk ? (size_t)(bytes[i] - done) : sizeof chunk;
            f32_to_le(chunk, tensors[i].values + done / 4, n / 4);
            if (fwrite(chunk, 1, n, f) != n)
                return false;
            done += n;
        }
    }
    return true;
}

/* mkstemp makes the file 0600. A checkpoint is no secret: it keeps the mode
 * of the file it replaces, or gets 0644 (what the usual umask 022 gives; the
 * umask itself cannot be read without changing it, which is unsafe with
 * threads). */
static void set_mode(int fd, const char *path)
{
    struct stat info;
    mode_t mode = stat(path, &info) == 0 && S_ISREG(info.st_mode) ? info.st_mode & 0777 : 0644;
    ember_set_file_mode(fd, (int)mode);
}

/* A save killed before its rename leaves path.tmp.XXXXXX behind. Each save
 * holds its temporary file while it writes (an flock on POSIX; on Windows
 * a file open in a process cannot be removed); the next save to the same
 * path removes every such file no process holds, which is every file
 * whose writer is gone, and never one another process is still writing. */
static void remove_stale_temporaries(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    const char *base = slash ? slash + 1 : path;
    int n = slash ? snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path) : snprintf(dir, sizeof dir, ".");
    if (n < 0 || (size_t)n >= sizeof dir)
        return;
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    size_t base_len = strlen(base);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        /* exactly base + ".tmp." + the six characters mkstemp chose */
        if (strlen(e->d_name) != base_len + 11 || strncmp(e->d_name, base, base_len) != 0 ||
            strncmp(e->d_name + base_len, ".tmp.", 5) != 0)
            continue;
        ember_remove_if_abandoned(dir, e->d_name);
    }
    if (d)
        closedir(d);
}

ember_status ember_safetensors_save(ember_ctx *ctx, const char *path, const struct ember_safetensors_tensor *tensors,
                                    int count, const char *const *metadata)
{
    if (!path || count < 0 || (count && !tensors))
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_safetensors_save: %s", !path ? "NULL path" : "no tensors");
    struct ember_text header = {0};
    const char *step = "create a temporary file for";
    char *tmp = NULL;
    FILE *f = NULL;
    int err = 0;
    uint64_t *bytes = ember_host_alloc(ctx, (size_t)count * sizeof *bytes);
    if (!bytes)
        return EMBER_ERR_NOMEM;
    ember_status status = check_tensors(ctx, tensors, count, metadata, bytes);
    if (status == EMBER_OK)
        status = build_header(ctx, tensors, count, bytes, metadata, &header);
    if (status == EMBER_OK && !(tmp = ember_host_alloc(ctx, strlen(path) + sizeof ".tmp.XXXXXX")))
        status = EMBER_ERR_NOMEM;
    if (status != EMBER_OK)
        goto free_memory;

    remove_stale_temporaries(path);
    sprintf(tmp, "%s.tmp.XXXXXX", path);
    /* held until the file is closed: while it is, the file is not stale */
    int fd = ember_make_temporary_file(tmp);
    if (fd < 0) {
        err = errno;
        goto fail; /* nothing was created */
    }
    set_mode(fd, path);
    if (!(f = fdopen(fd, "wb"))) {
        err = errno;
        close(fd);
        goto remove_tmp;
    }
    step = "write";
    bool ok = write_contents(f, &header, tensors, count, bytes) && fflush(f) == 0;
    if (ok) {
        step = "sync";
        ok = ember_flush_to_disk(fileno(f));
    }
    if (!ok) {
        err = errno;
        fclose(f);
        goto remove_tmp;
    }
    step = "close";
    if (fclose(f) != 0) {
        err = errno;
        goto remove_tmp;
    }
    step = "rename the temporary file onto";
    if (!ember_replace_file(tmp, path)) {
        err = errno;
        goto remove_tmp;
    }
    ember_flush_folder_of(path);
    goto free_memory;

remove_tmp:
    unlink(tmp);
fail:
    status = ember_fail(ctx, EMBER_ERR_IO, "cannot %s %s: %s", step, path, strerror(err ? err : EIO));
free_memory:
    free(tmp);
    free(header.s);
    free(bytes);
    return status;
}

ember_status ember_safetensors_save_memory(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors, int count,
                                           const char *const *metadata, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (count < 0 || (count && !tensors))
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_safetensors_save_memory: no tensors");
    struct ember_text header = {0};
    uint64_t *bytes = ember_host_alloc(ctx, (size_t)count * sizeof *bytes + 1);
    if (!bytes)
        return EMBER_ERR_NOMEM;
    ember_status status = check_tensors(ctx, tensors, count, metadata, bytes);
    if (status == EMBER_OK)
        status = build_header(ctx, tensors, count, bytes, metadata, &header);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = status == EMBER_OK ? ember_memory_writer(&buf, &len) : NULL;
    if (status == EMBER_OK && !f)
        status = ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a checkpoint in memory");
    if (f) {
        bool ok = write_contents(f, &header, tensors, count, bytes);
        /* closing publishes buf and len, and fails only for want of memory */
        if (!ember_memory_writer_close(f, &buf, &len) || !ok) {
            free(buf);
            status = ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a checkpoint in memory");
        } else {
            *data = buf;
            *size = len;
        }
    }
    free(header.s);
    free(bytes);
    return status;
}
