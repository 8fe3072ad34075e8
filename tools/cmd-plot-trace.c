/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-plot-trace.c — `ember plot TRACE.json`: a window of a trace
 * that `ember train --trace` or `ember eval --trace` wrote
 * (tools/trace-file.h), drawn as a timeline (tools/plot/plot.h): a lane per
 * track, the host's ops with the calls made inside them, and what the
 * device ran, every span coloured by the op it belongs to.
 *
 * Times are ms from the start of the trace's first span, as --from and
 * --to take them. Without them the window is the last whole training
 * step: each step starts with the batcher's "batch" op, so from the
 * start of the last but one "batch" to the start of the last. With a
 * single "batch", from it to the end; with none (not a training run), the
 * last 5% of the trace.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plot.h"
#include "trace-file.h"

/* The window [*from, *to] in ms; *what says how it was chosen, for the
 * message that ends the command. */
static void default_window(const struct trace *t, double *from, double *to, const char **what)
{
    double last = -INFINITY, before = -INFINITY; /* the last two "batch" starts */
    for (int k = 0; k < t->n_tracks; k++)
        for (int i = 0; i < t->tracks[k].count; i++) {
            const struct trace_event *e = &t->tracks[k].events[i];
            if (e->op != e->name || strcmp(e->name, "batch") != 0) /* an op's span: its own op */
                continue;
            if (e->start > last) {
                before = last;
                last = e->start;
            } else if (e->start > before) {
                before = e->start;
            }
        }
    double span = (t->end - t->start) / 1000.0;
    if (isfinite(before)) {
        *from = (before - t->start) / 1000.0;
        *to = (last - t->start) / 1000.0;
        *what = ", the last whole step (--from and --to choose another window)";
    } else if (isfinite(last)) {
        *from = (last - t->start) / 1000.0;
        *to = span;
        *what = ", from its only step (--from and --to choose another window)";
    } else {
        *from = 0.95 * span;
        *to = span;
        *what = ", the last 5% (--from and --to choose another window)";
    }
}

/* A lane's title: the host's says what its rows are (ops alone when the
 * device's lane has the calls, as the CPU's does), a device's is its name. */
static void lane_title(const struct trace_track *track, int rows, char *title, size_t len)
{
    if (track->process && strcmp(track->process, "host") == 0)
        snprintf(title, len, "host: %s", rows > 1 ? "ops and the calls inside them" : "ops");
    else if (track->process && track->thread)
        snprintf(title, len, "%s: %s", track->process, track->thread);
    else if (track->process)
        snprintf(title, len, "%s", track->process);
    else
        snprintf(title, len, "process %d, thread %d", track->pid, track->tid);
}

/* Everything a timeline points to, so that it can be freed at once. */
struct timeline_parts {
    struct plot_span *spans[TRACE_MAX_TRACKS];
    char titles[TRACE_MAX_TRACKS][256];
    const char **labels; /* an op's name per colour */
    int *colour_of;      /* by op number; -1: not in the window */
};

static void parts_free(struct timeline_parts *p)
{
    for (int k = 0; k < TRACE_MAX_TRACKS; k++)
        free(p->spans[k]);
    free(p->labels);
    free(p->colour_of);
}

/* The timeline of the spans in [from, to] ms: a colour per op, in the
 * order the ops first run in the window. False when out of memory. */
static bool timeline_build(const struct trace *t, double from, double to, struct timeline_parts *p,
                           struct plot_timeline *tl)
{
    int n_names = t->n_names > 0 ? t->n_names : 1;
    p->labels = malloc((size_t)n_names * sizeof *p->labels);
    p->colour_of = malloc((size_t)n_names * sizeof *p->colour_of);
    if (!p->labels || !p->colour_of)
        return false;
    for (int i = 0; i < n_names; i++)
        p->colour_of[i] = -1;
    *tl = (struct plot_timeline){.from = from, .to = to, .colour_labels = p->labels};
    for (int k = 0; k < t->n_tracks && k < PLOT_MAX_LANES; k++) {
        const struct trace_track *track = &t->tracks[k];
        struct plot_lane *lane = &tl->lanes[tl->n_lanes++];
        *lane = (struct plot_lane){.title = p->titles[k], .rows = 1};
        if (track->count > 0 && !(p->spans[k] = malloc((size_t)track->count * sizeof *p->spans[k])))
            return false;
        for (int i = 0; i < track->count; i++) {
            const struct trace_event *e = &track->events[i];
            double start = (e->start - t->start) / 1000.0, end = (e->end - t->start) / 1000.0;
            if (end <= from + 1e-6 || start >= to - 1e-6) /* touching is not in: a nanosecond's slack */
                continue;
            if (p->colour_of[e->op_id] < 0) {
                p->colour_of[e->op_id] = tl->n_colours;
                p->labels[tl->n_colours++] = e->op;
            }
            int depth = e->depth < PLOT_MAX_ROWS ? e->depth : PLOT_MAX_ROWS - 1;
            p->spans[k][lane->count++] =
                (struct plot_span){start, end, depth, p->colour_of[e->op_id], e->name};
            lane->rows = depth + 1 > lane->rows ? depth + 1 : lane->rows;
        }
        lane->spans = p->spans[k];
        lane_title(track, lane->rows, p->titles[k], sizeof p->titles[k]);
    }
    return true;
}

int cmd_plot_trace(const char *path, const char *output, bool png, int width, int height, const double *from,
                   const double *to)
{
    struct trace t;
    struct timeline_parts parts = {0};
    int rc = trace_read(path, &t);
    if (rc != EXIT_OK)
        goto done;
    double span = (t.end - t.start) / 1000.0, lo, hi;
    const char *what = "";
    if (from || to) {
        lo = from ? *from : 0.0;
        hi = to ? *to : span;
    } else {
        default_window(&t, &lo, &hi, &what);
    }
    if (from && to && !(*to > *from)) {
        cli_error("--from %g is not before --to %g", *from, *to);
        rc = EXIT_USAGE;
        goto done;
    }
    /* a window that shows none of the trace is a mistake, not an empty picture */
    if (span > 0.0 ? lo >= span || hi <= 0.0 : lo > 0.0 || hi < 0.0) {
        cli_error("%g to %g ms is outside the trace %s, which spans 0 to %.3f ms: choose --from and --to "
                  "within it",
                  lo, hi, path, span);
        rc = EXIT_USAGE;
        goto done;
    }
    if (!(hi - lo >= 1e-6)) { /* a trace of an instant: a microsecond around it */
        lo -= 0.0005;
        hi += 0.0005;
    }
    struct plot_timeline tl;
    if (!timeline_build(&t, lo, hi, &parts, &tl)) {
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    char note[128];
    int shown = 0;
    for (int k = 0; k < tl.n_lanes; k++)
        shown += tl.lanes[k].count;
    if (shown == 0) {
        snprintf(note, sizeof note, "nothing ran from %g to %g ms", lo, hi);
        tl.note = note;
    }
    /* written beside the file and renamed over it, as every output (tools/cli-files.c) */
    struct cli_output o;
    if ((rc = cli_output_open(&o, output, "-o")) != EXIT_OK)
        goto done;
    bool drawn =
        (png ? plot_write_png : plot_write_svg)((struct plot_picture){.timeline = &tl}, width, height, o.tmp);
    if (!drawn)
        cli_error("cannot write %s: %s", output, strerror(errno));
    if ((rc = cli_output_close(&o, drawn)) != EXIT_OK)
        goto done;
    if (t.left_out > 0)
        fprintf(stderr, "ember: note: %ld events of %s are neither spans (\"X\") nor names: left out\n",
                t.left_out, path);
    fprintf(stderr, "ember: wrote %s: %s from %.3f to %.3f ms of %.3f%s; %d spans\n", output, path, lo, hi,
            span, what, shown);
done:
    parts_free(&parts);
    trace_free(&t);
    return rc;
}
