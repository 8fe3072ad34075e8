/* SPDX-License-Identifier: MIT */
/*
 * base/text-impl.h — building strings: a growing one, and "; "-separated
 * lists of reasons in a fixed buffer. Used wherever ember assembles text
 * (kernel programs, safetensors headers, the devices report, PTX excerpts,
 * the reasons a device was passed over); and "did you mean" for a name
 * not known.
 */
#ifndef EMBER_TEXT_IMPL_H
#define EMBER_TEXT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
