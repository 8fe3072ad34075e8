/* SPDX-License-Identifier: MIT */
/*
 * base/text-impl.h — building strings: a growing one, and "; "-separated
 * lists of reasons in a fixed buffer. Used wherever ember assembles text
 * (kernel programs, safetensors headers, the devices report, PTX excerpts,
 * the reasons a device was passed over); "did you mean" for a name not
 * known; and a failure helper's message formatted into its own buffer.
 */
#ifndef EMBER_TEXT_IMPL_H
#define EMBER_TEXT_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A growing string. Appends never report failure: `failed` sticks once an
 * allocation fails, and ember_text_take then gives NULL, so a builder
 * checks once, at the end. Start with `struct ember_text t = {0};`. */
struct ember_text {
    char *s;
    size_t len, cap;
    bool failed;
};

void ember_text_add(struct ember_text *t, const char *s, size_t n);
void ember_text_printf(struct ember_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string: quoted, with quotes, backslashes and control characters escaped */
void ember_text_json_string(struct ember_text *t, const char *s);
/* The string, which the caller frees ("" if nothing was added), or NULL
 * when an append failed; t is empty again either way. */
char *ember_text_take(struct ember_text *t);

/* Appends one entry to a list in buf, "; " between entries, truncating
 * quietly when the buffer is full: for lists of reasons. */
void ember_note_append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* In a printf-style function whose last named parameter is `fmt`: its own
 * arguments formatted into the array `buf` (cut to sizeof buf), the
 * va_start, vsnprintf, va_end that every "fail(where, fmt, ...)" helper
 * begins with before it adds where the failure happened. */
#define EMBER_FORMAT_ARGS(buf, fmt)                                                                          \
    do {                                                                                                     \
        _Static_assert(!__builtin_types_compatible_p(__typeof__(buf), __typeof__(&(buf)[0])),                \
                       "EMBER_FORMAT_ARGS writes into an array, not through a pointer");                     \
        va_list format_args_;                                                                                \
        va_start(format_args_, fmt);                                                                         \
        vsnprintf(buf, sizeof(buf), fmt, format_args_);                                                      \
        va_end(format_args_);                                                                                \
    } while (0)

/* FNV-1a of n bytes: quick, not cryptographic; for hash tables of names
 * and for mixing a name into a seed, where every caller must agree. */
uint64_t ember_hash_bytes(const void *data, size_t n);

/* For a name not known (a layer, its option, a model, a command, the
 * program's option): the index of the one of the `count` names within two
 * edits of `word` (Levenshtein: a letter added, dropped or changed), the
 * closest first found, or -1. */
int ember_closest_name(const char *word, const char *const *names, int count);
/* The same said: " (did you mean \"x\"?)" into out, or "". */
void ember_suggest(const char *word, const char *const *names, int count, char *out, size_t len);

#endif /* EMBER_TEXT_IMPL_H */
