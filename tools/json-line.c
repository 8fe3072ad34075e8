/* SPDX-License-Identifier: MIT */
/*
 * tools/json-line.c — a JSON object on one line, read in place
 * (tools/json-line.h): a cursor walks the line, keys and string values are
 * unescaped over their own text, and each value becomes a field, those of
 * an object inside the line's own too.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json-line.h"

static void skip_space(char **p)
{
    while (**p == ' ' || **p == '\t' || **p == '\r' || **p == '\n')
        (*p)++;
}

/* four hex digits at s */
static bool hex4(const char *s, unsigned *code)
{
    *code = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int digit = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
        if (digit < 0)
            return false;
        *code = *code * 16 + (unsigned)digit;
    }
    return true;
}

/* writes code point `code` as UTF-8 at out; returns the end */
static char *put_utf8(char *out, unsigned code)
{
    if (code < 0x80) {
        *out++ = (char)code;
    } else if (code < 0x800) {
        *out++ = (char)(0xc0 | code >> 6);
        *out++ = (char)(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
        *out++ = (char)(0xe0 | code >> 12);
        *out++ = (char)(0x80 | (code >> 6 & 0x3f));
        *out++ = (char)(0x80 | (code & 0x3f));
    } else {
        *out++ = (char)(0xf0 | code >> 18);
        *out++ = (char)(0x80 | (code >> 12 & 0x3f));
        *out++ = (char)(0x80 | (code >> 6 & 0x3f));
        *out++ = (char)(0x80 | (code & 0x3f));
    }
    return out;
}

/* \uXXXX at in (after the backslash), a surrogate pair as one code point;
 * returns the end of the escape, or NULL */
static char *unicode_escape(char *in, unsigned *code)
{
    unsigned low;
    if (!hex4(in + 1, code))
        return NULL;
    in += 5;
    if (*code >= 0xd800 && *code < 0xdc00 && in[0] == '\\' && in[1] == 'u' && hex4(in + 2, &low) &&
        low >= 0xdc00 && low < 0xe000) {
        *code = 0x10000 + ((*code - 0xd800) << 10) + (low - 0xdc00);
        in += 6;
    } else if (*code >= 0xd800 && *code < 0xe000) {
        *code = 0xfffd; /* half a pair: the replacement character */
    } else if (*code == 0) {
        *code = '?'; /* a NUL would end the string early */
    }
    return in;
}

/* The string whose opening quote is at *p, unescaped over itself and
 * ended with a NUL; *p moves past its closing quote. NULL when malformed. */
static const char *parse_string(char **p, const char **why)
{
    char *in = *p + 1, *out = in;
    const char *start = in;
    while (*in != '"') {
        if (*in == '\0') {
            *why = "a string is not closed";
            return NULL;
        }
        if (*in != '\\') {
            *out++ = *in++;
            continue;
        }
        /* the letter after a backslash, and the character it stands for */
        static const char letters[] = "\"\\/bfnrt", meanings[] = "\"\\/\b\f\n\r\t";
        char escape = in[1];
        const char *letter = escape ? strchr(letters, escape) : NULL;
        if (letter) {
            *out++ = meanings[letter - letters];
            in += 2;
        } else if (escape == 'u') {
            unsigned code;
            if (!(in = unicode_escape(in + 1, &code))) {
                *why = "a \\u escape without four hex digits";
                return NULL;
            }
            out = put_utf8(out, code);
        } else {
            *why = "an unknown escape in a string";
            return NULL;
        }
    }
    *p = in + 1;
    *out = '\0'; /* at most where the closing quote was */
    return start;
}

/* past an array or object at *p, strings and all */
static bool skip_nested(char **p, const char **why)
{
    int depth = 0;
    do {
        char c = **p;
        if (c == '\0') {
            *why = "an array or object is not closed";
            return false;
        }
        if (c == '"') {
            if (!parse_string(p, why))
                return false;
            continue;
        }
        depth += c == '[' || c == '{' ? 1 : c == ']' || c == '}' ? -1 : 0;
        (*p)++;
    } while (depth > 0);
    return true;
}

static bool parse_object(char **p, const char *object, struct json_field *fields, int max_fields, int *n,
                         const char **why);

/* A value at *p into *field; an object is read into `fields` when `nest`
 * (its members after those already there), else skipped, as an array is. */
static bool parse_value(char **p, struct json_field *field, bool nest, struct json_field *fields,
                        int max_fields, int *n, const char **why)
{
    static const struct {
        const char *word;
        enum json_kind kind;
        double number;
    } words[] = {{"null", JSON_NULL, 0.0}, {"true", JSON_BOOL, 1.0}, {"false", JSON_BOOL, 0.0}};
    char c = **p;
    if (c == '"') {
        field->kind = JSON_STRING;
        return (field->string = parse_string(p, why)) != NULL;
    }
    if (c == '{' && nest) {
        field->kind = JSON_OBJECT;
        return parse_object(p, field->key, fields, max_fields, n, why);
    }
    if (c == '[' || c == '{') {
        field->kind = JSON_OTHER;
        return skip_nested(p, why);
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strncmp(*p, words[i].word, strlen(words[i].word)) == 0) {
            field->kind = words[i].kind;
            field->number = words[i].number;
            *p += strlen(words[i].word);
            return true;
        }
    /* a number, or Python's NaN, Infinity, -Infinity, which strtod reads */
    char *end = *p;
    if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I')
        field->number = strtod(*p, &end);
    if (end == *p) {
        *why = c ? "a value that is not a string, number or null" : "the line ends where a value should be";
        return false;
    }
    field->kind = JSON_NUMBER;
    *p = end;
    return true;
}

/* The object whose '{' is at *p, its fields added to fields[*n...] with
 * `object` their object's key (NULL: the line's own object, whose objects
 * are read too, one level deep); *p moves past its '}'. */
static bool parse_object(char **p, const char *object, struct json_field *fields, int max_fields, int *n,
                         const char **why)
{
    (*p)++;
    skip_space(p);
    if (**p == '}') { /* {} */
        (*p)++;
        return true;
    }
    for (;;) {
        struct json_field field = {.object = object};
        skip_space(p);
        if (**p != '"') {
            *why = **p ? "a key that is not a string" : "the line ends inside the object";
            return false;
        }
        if (!(field.key = parse_string(p, why)))
            return false;
        skip_space(p);
        if (**p != ':') {
            *why = "no ':' after a key";
            return false;
        }
        (*p)++;
        skip_space(p);
        if (!parse_value(p, &field, object == NULL, fields, max_fields, n, why))
            return false;
        if (*n < max_fields)
            fields[(*n)++] = field;
        skip_space(p);
        if (**p == '}') {
            (*p)++;
            return true;
        }
        if (**p != ',') {
            *why = **p ? "no ',' or '}' after a value" : "the line ends inside the object";
            return false;
        }
        (*p)++;
    }
}

int json_line_parse(char *line, struct json_field *fields, int max_fields, const char **why)
{
    char *p = line;
    int n = 0;
    skip_space(&p);
    if (*p != '{') {
        *why = "not a JSON object";
        return -1;
    }
    if (!parse_object(&p, NULL, fields, max_fields, &n, why))
        return -1;
    skip_space(&p);
    if (*p) {
        *why = "more after the object";
        return -1;
    }
    return n;
}

const struct json_field *json_member_find(const struct json_field *fields, int n, const char *object,
                                          const char *key)
{
    for (int i = 0; i < n; i++) {
        bool in_object =
            object ? fields[i].object && strcmp(fields[i].object, object) == 0 : !fields[i].object;
        if (in_object && strcmp(fields[i].key, key) == 0)
            return &fields[i];
    }
    return NULL;
}

const struct json_field *json_field_find(const struct json_field *fields, int n, const char *key)
{
    return json_member_find(fields, n, NULL, key);
}
