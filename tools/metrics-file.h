/* SPDX-License-Identifier: MIT */
/*
 * tools/metrics-file.h — the metrics files `ember train --metrics` wrote,
 * read back for `ember plot` into curves per run.
 *
 * Each line of a file is one JSON object (tools/json-line.h). A line
 * with "step" is a window of --log-every training steps: its train_loss and
 * train_acc are the window's means, and "step" counts the run's steps so
 * far. Any other line with "epoch" closes an epoch: train_loss, train_acc,
 * test_loss and test_acc over the whole epoch, and "total_steps", the
 * run's steps at its end, which is the epoch's place on the step axis.
 * Files written before ember wrote "total_steps" have only "steps", the
 * steps this process trained in the epoch: then the place is the sum of
 * "steps" up to it, or the last step logged in it if that is later (a run
 * resumed in the middle of an epoch, under the same run id, counts only
 * the steps after resuming); the epoch's number when neither is known.
 * Lines are gathered by "run", across files, so a file that several runs
 * appended to, or several files, give a curve per run; a null (a value
 * that was not finite) breaks the curve there.
 *
 * Files are someone else's as often as not: a file is read only when it
 * is a regular file of at most METRICS_MAX_BYTES, a line of more than
 * METRICS_MAX_LINE bytes is skipped as malformed, and reading is linear in
 * the file (a hash of run ids; each epoch's lines merged once, after a
 * sort), so a million epochs or a hundred thousand runs read in seconds.
 *
 *   struct runs runs = {0};
 *   if (metrics_read("a.jsonl", &runs) != EXIT_OK) ...   // said why on stderr
 *   metrics_place_epochs(&runs);                          // after the last file
 *   ... runs.items[i].curves[MEASURE_LOSS][CURVE_EPOCH_TEST] ...
 *   metrics_free(&runs);
 */
#ifndef EMBER_METRICS_FILE_H
#define EMBER_METRICS_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "name-table.h"
#include "plot.h"

#define METRICS_MAX_BYTES ((int64_t)1 << 29) /* a million epochs of ember's lines fit */
#define METRICS_MAX_LINE  65536              /* ember's lines are a few hundred bytes */

/* The curves of a run: a curve per measure and per kind of line, the kind
 * being the stroke it is drawn with. */
enum curve_kind {
    CURVE_STEPS = PLOT_STROKE_THIN,         /* training, every --log-every steps */
    CURVE_EPOCH_TRAIN = PLOT_STROKE_DASHED, /* training, per epoch */
    CURVE_EPOCH_TEST = PLOT_STROKE_SOLID,   /* test, per epoch */
    CURVES = PLOT_STROKES
};
enum measure { MEASURE_LOSS, MEASURE_ACCURACY, MEASURES };

struct curve {
    struct plot_point *points;
    int count, cap;
};

/* What a line says of where its epoch ends; once every line is read, the
 * lines of one epoch are merged into one (metrics_place_epochs). */
struct epoch_end {
    double epoch;
    double steps;       /* the sum of the epoch lines' "steps" (0: none) */
    double last_logged; /* the latest "step" of its per-step lines (0: none) */
    double total;       /* its line's "total_steps", when has_total */
    bool has_total;
    long order; /* the line's place among the run's lines: the last "total_steps" wins */
};

struct run {
    char *id, *model;
    double lr;                             /* the first epoch line's "lr" (NaN: none) */
    char *label;                           /* the legend's (tools/cmd-plot.c's run_label) */
    struct curve curves[MEASURES][CURVES]; /* epochs' points at their number until metrics_place_epochs */
    struct epoch_end *ends;
    int n_ends, cap_ends;
};

struct runs {
    struct run *items;
    int count, cap;
    struct name_table ids;   /* the runs' ids: items[i]'s is ids.by_id[i] */
    long lines;              /* read so far, across files: each line's order */
    int64_t at_epoch_number; /* epochs placed at their number: nothing said where they end */
};

/* Reads one metrics file into `runs`; returns an exit status, after saying
 * why on stderr when it is not EXIT_OK (3 when the file cannot be read or
 * holds nothing to plot). Malformed lines are skipped with a warning. */
int metrics_read(const char *path, struct runs *runs);
/* Moves every run's epoch points from their epoch's number to the step
 * where the epoch ended (see the top), once every file is read. */
void metrics_place_epochs(struct runs *runs);
void metrics_free(struct runs *runs);

#endif /* EMBER_METRICS_FILE_H */
