/* SPDX-License-Identifier: MIT */
/*
 * tools/name-table.h — strings kept once each, numbered in the order they
 * came, and found again in constant time (open addressing over FNV-1a): a
 * trace's names, a metrics file's run ids. A file of a million lines costs
 * a million lookups, never a million scans of a list.
 *
 *   struct name_table names = {0};
 *   int id = name_table_find(&names, "relu", 4);
 *   if (id < 0)
 *       id = name_table_add(&names, "relu", 4);   // -1: out of memory
 *   ... names.by_id[id] ...
 *   name_table_free(&names);
 */
#ifndef EMBER_NAME_TABLE_H
#define EMBER_NAME_TABLE_H

#include <stddef.h>

struct name_table {
    char **by_id; /* the names, NUL-terminated copies, numbered in the order they came */
    int count;
    int *slots;     /* a name's id + 1; 0: empty */
    size_t n_slots; /* a power of two, at least twice count */
};

/* The number of the name made of the first n bytes of s, or -1. */
int name_table_find(const struct name_table *t, const char *s, size_t n);
/* Keeps a copy of the first n bytes of s (not there yet) and returns its
 * number; -1 when out of memory. */
int name_table_add(struct name_table *t, const char *s, size_t n);
/* Frees what the table holds (not the table itself). */
void name_table_free(struct name_table *t);

#endif /* EMBER_NAME_TABLE_H */
