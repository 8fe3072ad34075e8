/* SPDX-License-Identifier: MIT */
/*
 * tools/metrics-file.c — metrics files read back into curves per run
 * (tools/metrics-file.h says what the lines mean and what is bounded).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json-line.h"
#include "metrics-file.h"
#include "platform.h"

/* the field each curve is read from */
static const char *const field_names[MEASURES][CURVES] = {
    {"train_loss", "train_loss", "test_loss"},
    {"train_acc", "train_acc", "test_acc"},
};

static bool curve_add(struct curve *c, double x, double y)
{
    if (c->count == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        struct plot_point *points = realloc(c->points, (size_t)cap * sizeof *points);
        if (!points)
            return false;
        c->points = points;
        c->cap = cap;
    }
    c->points[c->count++] = (struct plot_point){x, y};
    return true;
}

/* the run named `id`, added when new; NULL when out of memory */
static struct run *run_find(struct runs *runs, const char *id)
{
    size_t n = strlen(id);
    int at = name_table_find(&runs->ids, id, n);
    if (at >= 0)
        return &runs->items[at];
    if (runs->count == runs->cap) {
        int cap = runs->cap ? 2 * runs->cap : 8;
        struct run *items = realloc(runs->items, (size_t)cap * sizeof *items);
        if (!items)
            return NULL;
        runs->items = items;
        runs->cap = cap;
    }
    if ((at = name_table_add(&runs->ids, id, n)) < 0)
        return NULL;
    struct run *r = &runs->items[runs->count++]; /* the table numbers runs in the same order */
    *r = (struct run){.id = runs->ids.by_id[at], .lr = NAN};
    return r;
}

static bool end_add(struct run *r, struct epoch_end e)
{
    if (r->n_ends == r->cap_ends) {
        int cap = r->cap_ends ? 2 * r->cap_ends : 16;
        struct epoch_end *ends = realloc(r->ends, (size_t)cap * sizeof *ends);
        if (!ends)
            return false;
        r->ends = ends;
        r->cap_ends = cap;
    }
    r->ends[r->n_ends++] = e;
    return true;
}

static int compare_epoch(const void *a, const void *b)
{
    double ea = ((const struct epoch_end *)a)->epoch, eb = ((const struct epoch_end *)b)->epoch;
    return (ea > eb) - (ea < eb);
}

/* by epoch, and within one in the order the lines came */
static int compare_epoch_order(const void *a, const void *b)
{
    const struct epoch_end *x = a, *y = b;
    int by_epoch = compare_epoch(a, b);
    return by_epoch ? by_epoch : (x->order > y->order) - (x->order < y->order);
}

/* One record per epoch: its lines' steps summed, the latest step logged,
 * the last "total_steps" given. */
static void merge_epochs(struct run *r)
{
    if (r->n_ends > 1)
        qsort(r->ends, (size_t)r->n_ends, sizeof *r->ends, compare_epoch_order);
    int kept = 0;
    for (int i = 0; i < r->n_ends; i++) {
        const struct epoch_end *e = &r->ends[i];
        struct epoch_end *last = kept ? &r->ends[kept - 1] : NULL;
        if (!last || last->epoch != e->epoch) {
            r->ends[kept++] = *e;
            continue;
        }
        last->steps += e->steps;
        last->last_logged = fmax(last->last_logged, e->last_logged);
        if (e->has_total) {
            last->total = e->total;
            last->has_total = true;
        }
    }
    r->n_ends = kept;
}

/* Moves the epochs' points from their epoch's number to the step where
 * the epoch ended (see metrics-file.h). */
static void run_place_epochs(struct run *r, int64_t *at_epoch_number)
{
    merge_epochs(r);
    double trained = 0.0;
    for (int i = 0; i < r->n_ends; i++) {
        bool known = r->ends[i].steps > 0.0 || r->ends[i].last_logged > 0.0;
        trained += r->ends[i].steps;
        /* from here on, where it ends; 0: unknown */
        r->ends[i].steps = r->ends[i].total > 0.0 ? r->ends[i].total
                           : known                ? fmax(trained, r->ends[i].last_logged)
                                                  : 0.0;
    }
    for (int m = 0; m < MEASURES; m++)
        for (int k = CURVE_EPOCH_TRAIN; k <= CURVE_EPOCH_TEST; k++)
            for (int i = 0; i < r->curves[m][k].count; i++) {
                struct plot_point *p = &r->curves[m][k].points[i];
                struct epoch_end key = {.epoch = p->x};
                const struct epoch_end *end =
                    r->n_ends ? bsearch(&key, r->ends, (size_t)r->n_ends, sizeof *r->ends, compare_epoch)
                              : NULL;
                if (end && end->steps > 0.0)
                    p->x = end->steps;
                else if (m == 0 && k == CURVE_EPOCH_TRAIN)
                    ++*at_epoch_number;
            }
}

void metrics_place_epochs(struct runs *runs)
{
    for (int i = 0; i < runs->count; i++)
        run_place_epochs(&runs->items[i], &runs->at_epoch_number);
}

void metrics_free(struct runs *runs)
{
    for (int i = 0; i < runs->count; i++) {
        struct run *r = &runs->items[i];
        for (int m = 0; m < MEASURES; m++)
            for (int k = 0; k < CURVES; k++)
                free(r->curves[m][k].points);
        free(r->ends);
        free(r->model);
        free(r->label);
    }
    free(runs->items);
    name_table_free(&runs->ids);
    *runs = (struct runs){0};
}

/* a number field's value: NaN for null, or when it is not a number */
static double field_number(const struct json_field *f)
{
    return f && f->kind == JSON_NUMBER ? f->number : NAN;
}

/* Adds one line's points to its run. Returns false when out of memory;
 * *plottable says whether the line was a metrics line at all. */
static bool add_line(struct runs *runs, const char *path, const struct json_field *fields, int n, long order,
                     bool *plottable)
{
    const struct json_field *run = json_field_find(fields, n, "run"),
                            *model = json_field_find(fields, n, "model");
    double step = field_number(json_field_find(fields, n, "step"));
    double epoch = field_number(json_field_find(fields, n, "epoch"));
    double steps = field_number(json_field_find(fields, n, "steps"));
    double total_steps = field_number(json_field_find(fields, n, "total_steps"));
    bool per_step = isfinite(step);
    *plottable = per_step || isfinite(epoch);
    if (!*plottable)
        return true;
    /* a line without a run id belongs to its file's run */
    struct run *r = run_find(runs, run && run->kind == JSON_STRING ? run->string : path);
    if (!r)
        return false;
    if (!r->model && model && model->kind == JSON_STRING && !(r->model = strdup(model->string)))
        return false;
    if (!per_step && isnan(r->lr))
        r->lr = field_number(json_field_find(fields, n, "lr"));
    /* an epoch's points go at its number for now, and where it ends is noted */
    double x = per_step ? step : epoch;
    if (isfinite(epoch)) {
        struct epoch_end end = {.epoch = epoch, .order = order};
        if (per_step)
            end.last_logged = step;
        else if (isfinite(steps))
            end.steps = steps;
        if (!per_step && isfinite(total_steps)) {
            end.total = total_steps;
            end.has_total = true;
        }
        if (!end_add(r, end))
            return false;
    }
    int first = per_step ? CURVE_STEPS : CURVE_EPOCH_TRAIN, last = per_step ? CURVE_STEPS : CURVE_EPOCH_TEST;
    for (int m = 0; m < MEASURES; m++)
        for (int k = first; k <= last; k++) {
            /* absent: nothing to draw; null: a gap in the curve */
            const struct json_field *value = json_field_find(fields, n, field_names[m][k]);
            if (value && !curve_add(&r->curves[m][k], x, field_number(value)))
                return false;
        }
    return true;
}

enum line_read { LINE_OK, LINE_END, LINE_TOO_LONG, LINE_NUL };

/* The next line into buf (cap bytes, its newline dropped); a line too long
 * or holding a NUL byte is read to its end and reported. */
static enum line_read line_read(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    int c;
    bool too_long = false, nul = false;
    while ((c = getc_unlocked(f)) != EOF && c != '\n') {
        nul = nul || c == '\0';
        if (n + 1 < cap)
            buf[n++] = (char)c;
        else
            too_long = true;
    }
    buf[n] = '\0';
    if (c == EOF && n == 0 && !too_long)
        return LINE_END;
    return too_long ? LINE_TOO_LONG : nul ? LINE_NUL : LINE_OK;
}

/* warnings about malformed lines shown per file; the rest are counted */
#define SHOWN_BAD_LINES 3

int metrics_read(const char *path, struct runs *runs)
{
    char shown[512];
    cli_printable(path, shown, sizeof shown);
    FILE *f = cli_open_input(path, METRICS_MAX_BYTES, NULL, true);
    if (!f)
        return EXIT_DATA;
    char *line = malloc(METRICS_MAX_LINE + 1);
    long number = 0, bad = 0, plotted = 0;
    int rc = line ? EXIT_OK : EXIT_FAILURE_OTHER;
    enum line_read got;
    while (rc == EXIT_OK && (got = line_read(f, line, METRICS_MAX_LINE + 1)) != LINE_END) {
        number++;
        runs->lines++;
        if (got == LINE_OK && line[strspn(line, " \t\r")] == '\0')
            continue;
        struct json_field fields[64];
        const char *why = got == LINE_TOO_LONG ? "a line longer than ember plot reads" : "a NUL byte";
        int n = got == LINE_OK ? json_line_parse(line, fields, (int)(sizeof fields / sizeof fields[0]), &why)
                               : -1;
        bool plottable = false;
        if (n < 0) {
            if (++bad <= SHOWN_BAD_LINES)
                fprintf(stderr, "ember: warning: %s:%ld: %s; line skipped\n", shown, number, why);
        } else if (!add_line(runs, path, fields, n, runs->lines, &plottable)) {
            rc = EXIT_FAILURE_OTHER;
        }
        plotted += plottable;
    }
    if (rc == EXIT_FAILURE_OTHER)
        cli_error("out of memory");
    if (rc == EXIT_OK && ferror(f)) {
        cli_error("cannot read %s", shown);
        rc = EXIT_DATA;
    }
    if (bad > SHOWN_BAD_LINES)
        fprintf(stderr, "ember: warning: %s: %ld more malformed lines skipped\n", shown,
                bad - SHOWN_BAD_LINES);
    if (rc == EXIT_OK && plotted == 0) {
        cli_error("%s has no metrics to plot: no line is a JSON object with \"epoch\" or \"step\", "
                  "as ember train --metrics FILE writes",
                  shown);
        rc = EXIT_DATA;
    }
    free(line);
    fclose(f);
    return rc;
}
