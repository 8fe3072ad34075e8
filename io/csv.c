/* SPDX-License-Identifier: MIT */
/*
 * io/csv.c — CSV tables, read (csv-impl.h says what is read and how it
 * is checked).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv-impl.h"
#include "text-impl.h"

/* A cell of the row being read: its text, and where it was. */
struct cell {
    char text[CSV_MAX_CELL + 1];
    size_t len;
    int64_t line;
    bool last; /* it ended its row */
};

/* "iris.csv line 12, column 3 (\"petal_length\")" into buf */
static const char *where(const struct csv_reader *r, int64_t line, int column, char *buf, size_t len)
{
    if (column < 0)
        snprintf(buf, len, "%s line %lld", r->name, (long long)line);
    else if (r->names && column < r->columns)
        snprintf(buf, len, "%s line %lld, column %d (\"%.60s\")", r->name, (long long)line, column + 1,
                 r->names[column]);
    else
        snprintf(buf, len, "%s line %lld, column %d", r->name, (long long)line, column + 1);
    return buf;
}

/* The next cell, unquoted. `column` is for messages. */
static ember_status next_cell(struct csv_reader *r, int column, struct cell *c)
{
    const char *p = r->at, *end = r->end;
    char at[160];
    c->len = 0;
    c->line = r->line;
    bool quoted = p < end && *p == '"';
    if (quoted) {
        for (p++;; p++) {
            if (p == end)
                return ember_fail(r->ctx, EMBER_ERR_FORMAT, "%s: a quoted cell is never closed",
                                  where(r, c->line, column, at, sizeof at));
            char ch = *p;
            if (ch == '"' && p + 1 < end && p[1] == '"')
                p++;
            else if (ch == '"')
                break;
            else if (ch == '\n' || (ch == '\r' && (p + 1 == end || p[1] != '\n')))
                r->line++;
            if (c->len == CSV_MAX_CELL || ch == '\0')
                goto bad_cell;
            c->text[c->len++] = ch;
        }
        p++; /* the closing quote */
        if (p < end && *p != ',' && *p != '\n' && *p != '\r')
            return ember_fail(r->ctx, EMBER_ERR_FORMAT, "%s: text after a quoted cell's closing quote",
                              where(r, c->line, column, at, sizeof at));
    } else {
        for (; p < end && *p != ',' && *p != '\n' && *p != '\r'; p++) {
            if (*p == '"')
                return ember_fail(r->ctx, EMBER_ERR_FORMAT,
                                  "%s: a quote inside a cell that does not start "
                                  "with one (quote the whole cell, doubling the quotes in it)",
                                  where(r, c->line, column, at, sizeof at));
            if (c->len == CSV_MAX_CELL || *p == '\0')
                goto bad_cell;
            c->text[c->len++] = *p;
        }
    }
    c->text[c->len] = '\0';
    c->last = p == end || *p != ',';
    if (!c->last) {
        p++;
    } else if (p < end) { /* LF, CRLF or CR */
        p += *p == '\r' && p + 1 < end && p[1] == '\n' ? 2 : 1;
        r->line++;
    }
    r->at = p;
    return EMBER_OK;
bad_cell:
    return ember_fail(r->ctx, EMBER_ERR_FORMAT,
                      "%s: a cell longer than %d bytes, or holding a NUL byte: this is "
                      "not a table of numbers",
                      where(r, c->line, column, at, sizeof at), CSV_MAX_CELL);
}

/* Past blank lines; false at the end of the file. */
static bool skip_blank_lines(struct csv_reader *r)
{
    while (r->at < r->end && (*r->at == '\n' || *r->at == '\r')) {
        r->at += *r->at == '\r' && r->at + 1 < r->end && r->at[1] == '\n' ? 2 : 1;
        r->line++;
    }
    return r->at < r->end;
}

static int compare_named(const void *a, const void *b)
{
    return strcmp(((const struct csv_named *)a)->name, ((const struct csv_named *)b)->name);
}

int csv_column(const struct csv_reader *r, const char *name)
{
    struct csv_named key = {name, -1};
    const struct csv_named *at =
        r->by_name ? bsearch(&key, r->by_name, (size_t)r->columns, sizeof key, compare_named) : NULL;
    return at ? at->column : -1;
}

void csv_end(struct csv_reader *r)
{
    for (int i = 0; r->names && i < r->columns; i++)
        free(r->names[i]);
    free(r->names);
    free(r->by_name);
    memset(r, 0, sizeof *r);
}

ember_status csv_begin(ember_ctx *ctx, const char *name, const char *bytes, size_t len, struct csv_reader *r)
{
    *r = (struct csv_reader){.ctx = ctx, .name = name, .at = bytes, .end = bytes + len, .line = 1};
    if (len >= 3 && memcmp(bytes, "\xef\xbb\xbf", 3) == 0) /* a byte order mark */
        r->at += 3;
    if (!skip_blank_lines(r))
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s is empty: a CSV table starts with a header row of column "
                          "names",
                          name);
    int64_t cap = 0;
    struct cell c;
    char at[160];
    do {
        ember_status st = EMBER_OK;
        if (r->columns == CSV_MAX_COLUMNS)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: more than %d columns",
                            where(r, r->line, -1, at, sizeof at), CSV_MAX_COLUMNS);
        else if ((st = next_cell(r, r->columns, &c)) == EMBER_OK && c.len == 0)
            st = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s: column %d of the header has no name; the first row of a "
                            "table names its columns%s",
                            where(r, c.line, -1, at, sizeof at), r->columns + 1,
                            r->columns == 0
                                ? " (an unnamed first column is what pandas' to_csv writes for the "
                                  "row index: save with index=False)"
                                : "");
        else if (st == EMBER_OK)
            st = ember_host_grow(ctx, (void **)&r->names, &cap, r->columns + 1, sizeof *r->names);
        if (st == EMBER_OK && !(r->names[r->columns] = ember_host_strdup(ctx, c.text)))
            st = EMBER_ERR_NOMEM;
        if (st != EMBER_OK) {
            csv_end(r);
            return st;
        }
        r->columns++;
    } while (!c.last);
    /* the names in order, for csv_column; two alike sit side by side */
    ember_status st = EMBER_OK;
    if (!(r->by_name = ember_host_alloc(ctx, (size_t)r->columns * sizeof *r->by_name)))
        st = EMBER_ERR_NOMEM;
    for (int i = 0; st == EMBER_OK && i < r->columns; i++)
        r->by_name[i] = (struct csv_named){r->names[i], i};
    if (st == EMBER_OK)
        qsort(r->by_name, (size_t)r->columns, sizeof *r->by_name, compare_named);
    for (int i = 1; st == EMBER_OK && i < r->columns; i++)
        if (strcmp(r->by_name[i].name, r->by_name[i - 1].name) == 0)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: the header names two columns \"%s\"",
                            where(r, c.line, -1, at, sizeof at), r->by_name[i].name);
    if (st != EMBER_OK)
        csv_end(r);
    return st;
}

/* ------------------------------------------------------------------ labels */

/* The distinct labels, found by an open-addressing hash of their text. */
struct label_set {
    int32_t *slots; /* index into rows->labels, or -1 */
    int64_t size;   /* a power of two, at least twice the labels */
};

static uint64_t text_hash(const char *s) { return ember_hash_bytes(s, strlen(s)); }

/* The label's index, added if new; -1 when out of memory or past the cap. */
static int32_t label_index(ember_ctx *ctx, struct label_set *set, struct csv_rows *rows, const char *text)
{
    if (2 * ((int64_t)rows->label_count + 1) > set->size) { /* grow, and place the labels again */
        int64_t size = set->size ? 2 * set->size : 64;
        int32_t *slots = ember_host_alloc(ctx, (size_t)size * sizeof *slots);
        char **labels = ember_host_alloc(ctx, (size_t)size / 2 * sizeof *labels);
        if (!slots || !labels) {
            free(slots);
            free(labels);
            return -1;
        }
        if (rows->label_count) /* memcpy may not see a NULL, even for nothing */
            memcpy(labels, rows->labels, (size_t)rows->label_count * sizeof *labels);
        free(rows->labels);
        rows->labels = labels;
        for (int64_t i = 0; i < size; i++)
            slots[i] = -1;
        for (int32_t k = 0; k < rows->label_count; k++) {
            uint64_t at = text_hash(labels[k]) & (uint64_t)(size - 1);
            while (slots[at] >= 0)
                at = (at + 1) & (uint64_t)(size - 1);
            slots[at] = k;
        }
        free(set->slots);
        set->slots = slots;
        set->size = size;
    }
    uint64_t at = text_hash(text) & (uint64_t)(set->size - 1);
    for (; set->slots[at] >= 0; at = (at + 1) & (uint64_t)(set->size - 1))
        if (strcmp(rows->labels[set->slots[at]], text) == 0)
            return set->slots[at];
    if (rows->label_count == CSV_MAX_LABELS ||
        !(rows->labels[rows->label_count] = ember_host_strdup(ctx, text)))
        return -1;
    set->slots[at] = rows->label_count;
    return rows->label_count++;
}

/* --------------------------------------------------------------------- rows */

/* A feature cell as a float32: the whole cell (spaces around it allowed)
 * a finite number within float32's range. */
static bool cell_number(const char *text, float *value)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || fabs(v) > FLT_MAX)
        return false;
    while (*end == ' ' || *end == '\t')
        end++;
    *value = (float)v;
    return *end == '\0';
}

void csv_rows_free(struct csv_rows *rows)
{
    for (int i = 0; rows->labels && i < rows->label_count; i++)
        free(rows->labels[i]);
    free(rows->labels);
    free(rows->values);
    free(rows->label_of);
    free(rows->line_of);
    memset(rows, 0, sizeof *rows);
}

ember_status csv_read_rows(struct csv_reader *r, const int *role, int features, struct csv_rows *rows)
{
    ember_ctx *ctx = r->ctx;
    memset(rows, 0, sizeof *rows);
    struct label_set set = {0};
    int64_t value_cap = 0, label_cap = 0, line_cap = 0;
    struct cell c;
    char at[160];
    ember_status st = EMBER_OK;
    while (st == EMBER_OK && skip_blank_lines(r)) {
        int64_t row = rows->count, line = r->line;
        if ((st = ember_host_grow(ctx, (void **)&rows->values, &value_cap, (row + 1) * features + 1,
                                  sizeof *rows->values)) != EMBER_OK ||
            (st = ember_host_grow(ctx, (void **)&rows->label_of, &label_cap, row + 1,
                                  sizeof *rows->label_of)) != EMBER_OK ||
            (st = ember_host_grow(ctx, (void **)&rows->line_of, &line_cap, row + 1, sizeof *rows->line_of)) !=
                EMBER_OK)
            break;
        rows->label_of[row] = -1;
        rows->line_of[row] = line;
        int column = 0;
        for (c.last = false; !c.last && st == EMBER_OK; column++) {
            if (column == r->columns) {
                st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: more cells than the header's %d columns",
                                where(r, line, -1, at, sizeof at), r->columns);
                break;
            }
            if ((st = next_cell(r, column, &c)) != EMBER_OK)
                break;
            if (role[column] >= 0 && !cell_number(c.text, &rows->values[row * features + role[column]]))
                st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %s%.40s%s is not a number%s",
                                where(r, c.line, column, at, sizeof at), c.len ? "\"" : "",
                                c.len ? c.text : "an empty cell", c.len ? "\"" : "",
                                c.len ? " (a feature is a finite number within float32's range)"
                                      : " (ember has no missing values: fill the cell or leave out its row)");
            else if (role[column] == CSV_LABEL && c.len == 0)
                st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: the label is empty",
                                where(r, c.line, column, at, sizeof at));
            else if (role[column] == CSV_LABEL &&
                     (rows->label_of[row] = label_index(ctx, &set, rows, c.text)) < 0)
                st = rows->label_count == CSV_MAX_LABELS
                         ? ember_fail(ctx, EMBER_ERR_FORMAT,
                                      "%s: more than %d distinct labels: is this the column "
                                      "of the classes?",
                                      where(r, c.line, column, at, sizeof at), CSV_MAX_LABELS)
                         : EMBER_ERR_NOMEM;
        }
        if (st == EMBER_OK && column != r->columns)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s has %d cells; the header has %d columns",
                            where(r, line, -1, at, sizeof at), column, r->columns);
        if (st == EMBER_OK)
            rows->count++;
    }
    free(set.slots);
    if (st != EMBER_OK)
        csv_rows_free(rows);
    return st;
}

ember_status csv_read_file(ember_ctx *ctx, const char *path, char **bytes, size_t *len)
{
    struct stat info;
    FILE *f = ember_fopen_regular(ctx, path, &info);
    *bytes = NULL;
    if (!f)
        return ember_last_status(ctx);
    ember_status st = EMBER_OK;
    if ((int64_t)info.st_size > CSV_MAX_BYTES)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: %lld bytes is larger than the %lld ember reads as a CSV table "
                        "(save a larger data set as .npy)",
                        path, (long long)info.st_size, (long long)CSV_MAX_BYTES);
    else if (!(*bytes = ember_host_alloc(ctx, (size_t)info.st_size + 1)))
        st = EMBER_ERR_NOMEM;
    else if (fread(*bytes, 1, (size_t)info.st_size, f) != (size_t)info.st_size)
        st = ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", path,
                        ferror(f) ? strerror(errno) : "it shrank");
    fclose(f);
    if (st != EMBER_OK) {
        free(*bytes);
        *bytes = NULL;
        return st;
    }
    (*bytes)[info.st_size] = '\0';
    *len = (size_t)info.st_size;
    return EMBER_OK;
}
