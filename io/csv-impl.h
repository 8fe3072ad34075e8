/* SPDX-License-Identifier: MIT */
/*
 * io/csv-impl.h — CSV tables as spreadsheets and pandas write them
 * (RFC 4180): a header row of column names, then rows of cells separated
 * by commas, each cell bare or in double quotes ("" inside quotes is a
 * quote), lines ending in LF, CRLF or CR, blank lines skipped, a UTF-8 byte
 * order mark at the start ignored.
 *
 * Reading is in two steps, so the caller decides what each column is from
 * the header before any row is read:
 *
 *     struct csv_reader r;
 *     csv_begin(ctx, "iris.csv", bytes, len, &r);     // the header: r.names, r.columns
 *     int role[...];  // per column: a feature's index, CSV_LABEL or CSV_IGNORE
 *     struct csv_rows rows;
 *     csv_read_rows(&r, role, features, &rows);      // rows.values, rows.label_of
 *     ...
 *     csv_rows_free(&rows);
 *     csv_end(&r);
 *
 * A table is untrusted input (docs/design.md decision 7): at most
 * CSV_MAX_COLUMNS columns, cells of at most CSV_MAX_CELL bytes (a number or
 * a class's name), at most CSV_MAX_LABELS distinct labels; every row must
 * have the header's number of cells and every feature cell must be a
 * finite number float32 can hold. A failure names the file, the line and
 * the column (by number and by name).
 */
#ifndef EMBER_CSV_IMPL_H
#define EMBER_CSV_IMPL_H

#include "engine.h"
#include "read-file-impl.h"

#define CSV_MAX_COLUMNS 4096
#define CSV_MAX_CELL    256
#define CSV_MAX_LABELS  65536
#define CSV_MAX_BYTES   ((int64_t)1 << 30)

enum { CSV_LABEL = -1, CSV_IGNORE = -2 };

struct csv_reader {
    ember_ctx *ctx;
    const char *name; /* the file, for messages */
    const char *at, *end;
    int64_t line; /* of `at`, from 1 */
    int columns;
    char **names;      /* (columns) the header's */
    struct csv_named { /* (columns) the names in byte order, with their columns, for csv_column */
        const char *name;
        int column;
    } * by_name;
};

/* The rows read: (count, features) numbers, and for each row the index of
 * its label among `labels`, the distinct label cells in the order met. */
struct csv_rows {
    int64_t count;
    float *values;
    int32_t *label_of;
    char **labels;
    int label_count;
    int64_t *line_of; /* (count) each row's line, for messages about its label */
};

/* Reads the header row of `len` bytes at `bytes` (kept, not copied: they
 * must outlive the reader). */
ember_status csv_begin(ember_ctx *ctx, const char *name, const char *bytes, size_t len, struct csv_reader *r);
/* Reads every row: column c's cell is number role[c] of the row's
 * `features` when role[c] >= 0, its label when CSV_LABEL, else skipped. */
ember_status csv_read_rows(struct csv_reader *r, const int *role, int features, struct csv_rows *rows);
void csv_rows_free(struct csv_rows *rows);
void csv_end(struct csv_reader *r);

/* The column named `name`, or -1 (a binary search). */
int csv_column(const struct csv_reader *r, const char *name);

/* A whole file into memory (at most CSV_MAX_BYTES), NUL-terminated, to free(). */
ember_status csv_read_file(ember_ctx *ctx, const char *path, char **bytes, size_t *len);

#endif /* EMBER_CSV_IMPL_H */
