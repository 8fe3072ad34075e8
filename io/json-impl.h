/* SPDX-License-Identifier: MIT */
/*
 * io/json-impl.h — a strict JSON reader's shared pieces, for parsers
 * written against one schema (a safetensors header, a chat's JSONL
 * lines): the cursor, tokens, strings decoded to UTF-8, values skipped.
 *
 * A parser walks `start` to `end` with `p`; whatever it meets that the
 * schema does not allow is an error through json_fail, which names the
 * source (`what`), what was being read (`kind`) and the byte in the file
 * (`base` is where the JSON starts there):
 *
 *   x.safetensors: bad safetensors header at byte 30: expected ':' after a key, found 'x'
 */
#ifndef EMBER_JSON_IMPL_H
#define EMBER_JSON_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "ember.h"

#define JSON_MAX_DEPTH 64 /* arrays and objects inside each other that json_skip_value walks */

struct json_parser {
    ember_ctx *ctx;
    const char *what; /* the source, for messages: a file's name */
    const char *kind; /* what it holds: "safetensors header", "conversation" */
    const unsigned char *start, *p, *end;
    size_t base; /* the file offset of start */
};

/* EMBER_ERR_FORMAT with the position: "WHAT: bad KIND at byte N: MESSAGE" */
ember_status json_fail(struct json_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* what is at the cursor, for messages: "'x'", "byte 0xff", "the end of the KIND" */
const char *json_found(const struct json_parser *ps, char *buf, size_t len);
void json_skip_space(struct json_parser *ps);
/* true, past it, if the next token is c */
bool json_accept(struct json_parser *ps, unsigned char c);
/* the next token is c, or an error saying what came `where` */
ember_status json_expect(struct json_parser *ps, unsigned char c, const char *where);
/* A string, decoded into *out (NUL-terminated, to free()): escapes and
 * surrogate pairs to UTF-8, raw control characters, invalid UTF-8 and
 * \u0000 refused. */
ember_status json_string(struct json_parser *ps, char **out);
/* Past one value of any kind (what a schema does not use), checked as
 * strictly as the rest; `depth` is how deep it stands (0 at the top). */
ember_status json_skip_value(struct json_parser *ps, int depth);

/* A JSON array of strings (a metadata value such as ember.class_names,
 * ["T-shirt/top", "Trouser"]) as strings to free() and an array to free(). */
ember_status ember_json_strings(ember_ctx *ctx, const char *text, char ***items, int *count);

/* The value a JSON object (a configuration file: PEFT's adapter_config.json)
 * gives `key` at its top level, as a number (true and false as 1 and 0):
 * *found false when the key is not there or its value is of another kind.
 * The whole text is parsed: when it is not one JSON object, EMBER_ERR_FORMAT
 * naming `what` and the byte. */
ember_status ember_json_number_field(ember_ctx *ctx, const char *what, const char *text, size_t len,
                                     const char *key, double *value, bool *found);

/* True when s is well-formed UTF-8 (no overlong forms, surrogates or code
 * points past U+10FFFF): what json_string accepts, and what the
 * safetensors writer checks before it puts a name in a header. */
bool ember_utf8_valid(const char *s);

#endif /* EMBER_JSON_IMPL_H */
