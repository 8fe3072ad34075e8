/* SPDX-License-Identifier: MIT */
/*
 * tools/json-line.h — one line of JSON Lines, an object, read in place.
 *
 * `ember train --metrics` writes one object per line whose values are
 * strings, numbers and null, and `--trace` one event per line whose "args"
 * is an object of them; this reads such a line back without a JSON
 * library. Strings are unescaped where they stand (an escape is never
 * shorter than what it stands for), so fields point into the line and
 * nothing is allocated:
 *
 *   char line[] = "{\"run\": \"a\", \"epoch\": 1, \"test_acc\": null, \"args\": {\"op\": \"relu\"}}";
 *   struct json_field fields[32];
 *   const char *why;
 *   int n = json_line_parse(line, fields, 32, &why);
 *   const struct json_field *acc = json_field_find(fields, n, "test_acc");
 *   if (acc && acc->kind == JSON_NUMBER) ...
 *   const struct json_field *op = json_member_find(fields, n, "args", "op");
 *
 * It is tolerant where that costs nothing: NaN, Infinity and -Infinity
 * (Python's json writes them) are numbers, and an array, or an object
 * inside an object inside the line's, is skipped as JSON_OTHER.
 */
#ifndef EMBER_JSON_LINE_H
#define EMBER_JSON_LINE_H

enum json_kind { JSON_NULL, JSON_NUMBER, JSON_STRING, JSON_BOOL, JSON_OBJECT, JSON_OTHER };

struct json_field {
    const char *key;
    const char *object; /* the key of the object it is a member of; NULL: the line's own */
    enum json_kind kind;
    double number;      /* JSON_NUMBER; JSON_BOOL: 1 or 0 */
    const char *string; /* JSON_STRING, UTF-8 */
};

/* Parses `line` (changed: strings are unescaped in place) as one object
 * and fills up to `max_fields` fields, ignoring the rest: its own, and the
 * members of the objects among them (after them, an object's field a
 * JSON_OBJECT). Returns how many were filled, or -1 with *why saying what
 * is wrong. */
int json_line_parse(char *line, struct json_field *fields, int max_fields, const char **why);

/* the field of the line's own object named `key`, or NULL */
const struct json_field *json_field_find(const struct json_field *fields, int n, const char *key);
/* the member named `key` of the object that is the field `object`, or NULL */
const struct json_field *json_member_find(const struct json_field *fields, int n, const char *object,
                                          const char *key);

#endif /* EMBER_JSON_LINE_H */
