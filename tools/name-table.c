/* SPDX-License-Identifier: MIT */
/* tools/name-table.c — strings kept once each, found in constant time (see name-table.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "name-table.h"

/* FNV-1a */
static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

int name_table_find(const struct name_table *t, const char *s, size_t n)
{
    if (t->n_slots == 0)
        return -1;
    for (size_t at = name_hash(s, n) & (t->n_slots - 1); t->slots[at]; at = (at + 1) & (t->n_slots - 1)) {
        const char *kept = t->by_id[t->slots[at] - 1];
        if (strncmp(kept, s, n) == 0 && kept[n] == '\0')
            return t->slots[at] - 1;
    }
    return -1;
}

/* twice the slots, every name placed again */
static int grow(struct name_table *t)
{
    size_t n_slots = t->n_slots ? 2 * t->n_slots : 256;
    int *slots = calloc(n_slots, sizeof *slots);
    char **by_id = realloc(t->by_id, n_slots / 2 * sizeof *by_id);
    if (by_id)
        t->by_id = by_id;
    if (!slots || !by_id) {
        free(slots);
        return -1;
    }
    for (int id = 0; id < t->count; id++) {
        size_t at = name_hash(t->by_id[id], strlen(t->by_id[id])) & (n_slots - 1);
        while (slots[at])
            at = (at + 1) & (n_slots - 1);
        slots[at] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    return 0;
}

int name_table_add(struct name_table *t, const char *s, size_t n)
{
    if (2 * ((size_t)t->count + 1) > t->n_slots && grow(t) != 0)
        return -1;
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    size_t at = name_hash(s, n) & (t->n_slots - 1);
    while (t->slots[at])
        at = (at + 1) & (t->n_slots - 1);
    t->by_id[t->count] = copy;
    t->slots[at] = ++t->count;
    return t->count - 1;
}

void name_table_free(struct name_table *t)
{
    for (int id = 0; id < t->count; id++)
        free(t->by_id[id]);
    free(t->by_id);
    free(t->slots);
    *t = (struct name_table){0};
}
