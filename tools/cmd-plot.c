/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-plot.c — `ember plot`: the loss and accuracy curves of the runs
 * in metrics files that `ember train --metrics` wrote, as a PNG or SVG
 * picture (drawn by tools/plot-draw.c); a trace that `--trace` wrote goes
 * to tools/cmd-plot-trace.c instead.
 *
 * Each line of a metrics file is one JSON object (tools/json-line.h). A line
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
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "json-line.h"
#include "plot.h"
#include "trace-file.h"

static const char usage[] =
    "usage: ember plot METRICS.jsonl [MORE.jsonl ...] -o FILE.png|FILE.svg [options]\n"
    "       ember plot TRACE.json -o FILE.png|FILE.svg [--from MS] [--to MS] [options]\n"
    "\n"
    "Draws the loss and accuracy of the runs in files that `ember train --metrics FILE`\n"
    "wrote, against the training step: the training data's every --log-every steps\n"
    "(pale) and every epoch (dashed), and the test data's every epoch (solid, dots),\n"
    "with a colour per run (\"run\", set by --run-id) named in the legend.\n"
    "\n"
    "Or draws a trace that `ember train --trace FILE` wrote as a timeline: the host's ops\n"
    "with the calls inside them under them, and what the device ran, coloured by op.\n"
    "It shows the last whole training step unless --from and --to say otherwise.\n"
    "\n"
    "  -o, --output FILE   the picture to write; its ending says the format: .png or .svg\n"
    "  --width W           its width in pixels (default 900)\n"
    "  --height H          its height in pixels (default 400)\n"
    "  --from MS, --to MS  a trace's window, in ms from its start; --from alone runs to\n"
    "                      its end, --to alone from its start; outside the trace: exit 2\n"
    "  -h, --help          this text\n"
    "\n"
    "The fields read: run, model, step, epoch, steps, train_loss, train_acc, test_loss,\n"
    "test_acc. A line that is not a JSON object is skipped with a warning naming the\n"
    "file and line. Exit status 3 when a file cannot be read or holds nothing to plot,\n"
    "or a trace is not laid out as ember writes it (one event a line), naming the line.\n";

/* The curves of a run: a curve per measure and per kind of line, the kind
 * being the stroke it is drawn with. */
enum curve_kind {
    CURVE_STEPS = PLOT_STROKE_THIN,         /* training, every --log-every steps */
    CURVE_EPOCH_TRAIN = PLOT_STROKE_DASHED, /* training, per epoch */
    CURVE_EPOCH_TEST = PLOT_STROKE_SOLID,   /* test, per epoch */
    CURVES = PLOT_STROKES
};
enum measure { MEASURE_LOSS, MEASURE_ACCURACY, MEASURES };

/* the field each curve is read from */
static const char *const field_names[MEASURES][CURVES] = {
    {"train_loss", "train_loss", "test_loss"},
    {"train_acc", "train_acc", "test_acc"},
};

struct curve {
    struct plot_point *points;
    int count, cap;
};

/* Where an epoch ends on the step axis: what its lines say. */
struct epoch_end {
    double epoch;
    double steps;       /* the sum of the epoch lines' "steps" (0: none) */
    double last_logged; /* the latest "step" of its per-step lines (0: none) */
    double total;       /* its line's "total_steps" (0: none) */
};

struct run {
    char *id, *model;
    double lr;                             /* the first epoch line's "lr" (NaN: none) */
    char *label;                           /* the legend's: "id (model)", or see run_label */
    struct curve curves[MEASURES][CURVES]; /* epochs' points at their number until run_place_epochs */
    struct epoch_end *ends;
    int n_ends, cap_ends;
};

struct runs {
    struct run *items;
    int count, cap;
    int64_t at_epoch_number; /* epochs placed at their number: nothing said where they end */
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

static int compare_x(const void *a, const void *b)
{
    double xa = ((const struct plot_point *)a)->x, xb = ((const struct plot_point *)b)->x;
    return (xa > xb) - (xa < xb);
}

/* the run named `id`, added when new; NULL when out of memory */
/* The legend's name for a run. An id given with --run-id is the user's
 * own ("lr 0.001 (simplecnn)"); the one ember train makes up,
 * "20261125T130312-31396" (when, and which process), says little to a
 * reader, so such a run is named by its model, rate and start instead:
 * "simplecnn, lr 0.001, Nov 25 13:03". */
static char *run_label(const struct run *r)
{
    static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    int year, month, day, hour, minute, second, used = 0;
    long pid;
    char label[512];
    bool made_up = sscanf(r->id, "%4d%2d%2dT%2d%2d%2d-%ld%n", &year, &month, &day, &hour, &minute, &second, &pid,
                          &used) == 7 && r->id[used] == '\0' && month >= 1 && month <= 12;
    if (made_up && isfinite(r->lr))
        snprintf(label, sizeof label, "%s, lr %g, %s %d %02d:%02d", r->model ? r->model : "run", r->lr,
                 months[month - 1], day, hour, minute);
    else if (made_up)
        snprintf(label, sizeof label, "%s, %s %d %02d:%02d", r->model ? r->model : "run", months[month - 1], day,
                 hour, minute);
    else if (r->model)
        snprintf(label, sizeof label, "%.300s (%.200s)", r->id, r->model);
    else
        snprintf(label, sizeof label, "%.500s", r->id);
    return strdup(label);
}

static struct run *run_find(struct runs *runs, const char *id)
{
    for (int i = 0; i < runs->count; i++)
        if (strcmp(runs->items[i].id, id) == 0)
            return &runs->items[i];
    if (runs->count == runs->cap) {
        int cap = runs->cap ? 2 * runs->cap : 8;
        struct run *items = realloc(runs->items, (size_t)cap * sizeof *items);
        if (!items)
            return NULL;
        runs->items = items;
        runs->cap = cap;
    }
    struct run *r = &runs->items[runs->count];
    *r = (struct run){.id = strdup(id), .lr = NAN};
    if (!r->id)
        return NULL;
    runs->count++;
    return r;
}

/* the record of epoch number `epoch`, added when new; NULL when out of memory */
static struct epoch_end *run_epoch_end(struct run *r, double epoch)
{
    /* lines come in order: the last epoch is the likeliest */
    for (int i = r->n_ends - 1; i >= 0; i--)
        if (r->ends[i].epoch == epoch)
            return &r->ends[i];
    if (r->n_ends == r->cap_ends) {
        int cap = r->cap_ends ? 2 * r->cap_ends : 16;
        struct epoch_end *ends = realloc(r->ends, (size_t)cap * sizeof *ends);
        if (!ends)
            return NULL;
        r->ends = ends;
        r->cap_ends = cap;
    }
    r->ends[r->n_ends] = (struct epoch_end){.epoch = epoch};
    return &r->ends[r->n_ends++];
}

static int compare_epoch(const void *a, const void *b)
{
    double ea = ((const struct epoch_end *)a)->epoch, eb = ((const struct epoch_end *)b)->epoch;
    return (ea > eb) - (ea < eb);
}

/* Moves the epochs' points from their epoch's number to the step where
 * the epoch ended (see the top of this file), once every line is read. */
static void run_place_epochs(struct run *r, int64_t *at_epoch_number)
{
    qsort(r->ends, (size_t)r->n_ends, sizeof *r->ends, compare_epoch);
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
                    bsearch(&key, r->ends, (size_t)r->n_ends, sizeof *r->ends, compare_epoch);
                if (end && end->steps > 0.0)
                    p->x = end->steps;
                else if (m == 0 && k == CURVE_EPOCH_TRAIN)
                    ++*at_epoch_number;
            }
}

static void runs_free(struct runs *runs)
{
    for (int i = 0; i < runs->count; i++) {
        struct run *r = &runs->items[i];
        for (int m = 0; m < MEASURES; m++)
            for (int k = 0; k < CURVES; k++)
                free(r->curves[m][k].points);
        free(r->ends);
        free(r->id);
        free(r->model);
        free(r->label);
    }
    free(runs->items);
}

/* a number field's value: NaN for null, or when it is not a number */
static double field_number(const struct json_field *f)
{
    return f && f->kind == JSON_NUMBER ? f->number : NAN;
}

/* Adds one line's points to its run. Returns false when out of memory;
 * *plottable says whether the line was a metrics line at all. */
static bool add_line(struct runs *runs, const char *path, const struct json_field *fields, int n,
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
    struct epoch_end *end = isfinite(epoch) ? run_epoch_end(r, epoch) : NULL;
    if (isfinite(epoch) && !end)
        return false;
    if (end && per_step)
        end->last_logged = fmax(end->last_logged, step);
    else if (end && isfinite(steps))
        end->steps += steps;
    if (end && !per_step && isfinite(total_steps))
        end->total = total_steps;
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

/* warnings about malformed lines shown per file; the rest are counted */
#define SHOWN_BAD_LINES 3

/* Reads one metrics file into `runs`; returns an exit status. */
static int read_metrics(const char *path, struct runs *runs)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("cannot read %s: %s", path, strerror(errno));
        return EXIT_DATA;
    }
    char *line = NULL;
    size_t cap = 0;
    long number = 0, bad = 0, plotted = 0;
    int rc = EXIT_OK;
    while (rc == EXIT_OK && getline(&line, &cap, f) != -1) {
        number++;
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        struct json_field fields[64];
        const char *why;
        int n = json_line_parse(line, fields, (int)(sizeof fields / sizeof fields[0]), &why);
        bool plottable = false;
        if (n < 0) {
            if (++bad <= SHOWN_BAD_LINES)
                fprintf(stderr, "ember: warning: %s:%ld: %s; line skipped\n", path, number, why);
        } else if (!add_line(runs, path, fields, n, &plottable)) {
            cli_error("out of memory");
            rc = EXIT_FAILURE_OTHER;
        }
        plotted += plottable;
    }
    if (rc == EXIT_OK && ferror(f)) {
        cli_error("cannot read %s: %s", path, strerror(errno));
        rc = EXIT_DATA;
    }
    if (bad > SHOWN_BAD_LINES)
        fprintf(stderr, "ember: warning: %s: %ld more malformed lines skipped\n", path,
                bad - SHOWN_BAD_LINES);
    if (rc == EXIT_OK && plotted == 0) {
        cli_error("%s has no metrics to plot: no line is a JSON object with \"epoch\" or \"step\", "
                  "as ember train --metrics FILE writes",
                  path);
        rc = EXIT_DATA;
    }
    free(line);
    fclose(f);
    return rc;
}

/* The figure of the runs read: a loss panel and an accuracy panel, each a
 * series per run and kind of curve. `series` holds 2 * CURVES * runs. */
static void figure_build(struct runs *runs, struct plot_series *series, const char **labels,
                         struct plot_figure *fig)
{
    static const char *const titles[MEASURES] = {"loss", "accuracy"};
    /* steps, unless no line said where any epoch ends */
    bool steps_known = false;
    for (int i = 0; i < runs->count; i++)
        for (int e = 0; e < runs->items[i].n_ends; e++)
            steps_known = steps_known || runs->items[i].ends[e].steps > 0.0;
    const char *x_title = steps_known ? "step" : "epoch";
    *fig = (struct plot_figure){
        .n_panels = MEASURES,
        .colour_labels = labels,
        .n_colours = runs->count,
        .stroke_labels = {"train (steps)", "train (epochs)", "test (epochs)"},
    };
    int n = 0;
    for (int m = 0; m < MEASURES; m++) {
        fig->panels[m] = (struct plot_panel){titles[m], x_title, titles[m], series + n, 0};
        for (int i = 0; i < runs->count; i++)
            for (int k = 0; k < CURVES; k++) {
                struct curve *c = &runs->items[i].curves[m][k];
                if (c->count == 0)
                    continue;
                /* in order of step, whatever the order of the lines and files */
                qsort(c->points, (size_t)c->count, sizeof *c->points, compare_x);
                series[n++] = (struct plot_series){c->points, c->count, i, (enum plot_stroke)k};
                fig->panels[m].n_series++;
            }
    }
}

/* "FILE.png" -> "png" (any case); NULL when neither */
static const char *picture_format(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && strcasecmp(dot, ".png") == 0)
        return "png";
    if (dot && strcasecmp(dot, ".svg") == 0)
        return "svg";
    return NULL;
}

int cmd_plot(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"width", required_argument, NULL, 'W'},
        {"height", required_argument, NULL, 'H'},
        {"from", required_argument, NULL, 'F'},
        {"to", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int64_t width = 900, height = 400;
    double from, to;
    bool has_from = false, has_to = false, ok = true;
    int c;
    optind = 1;
    while (ok && (c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'W': ok = cli_parse_int("width", optarg, 200, 8000, &width); break;
        case 'H': ok = cli_parse_int("height", optarg, 150, 8000, &height); break;
        case 'F': ok = has_from = cli_parse_float("from", optarg, -1e12, 1e12, &from); break;
        case 'T': ok = has_to = cli_parse_float("to", optarg, -1e12, 1e12, &to); break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: ok = false; break;
        }
    }
    if (ok && optind == argc) {
        cli_error("ember plot needs a metrics file (written by ember train --metrics FILE)");
        ok = false;
    }
    if (ok && !output) {
        cli_error("ember plot needs -o FILE.png or -o FILE.svg");
        ok = false;
    }
    if (ok && !picture_format(output)) {
        cli_error("-o wants a file ending in .png or .svg, not \"%s\"", output);
        ok = false;
    }
    /* a trace is drawn alone; a window is a trace's */
    int traces = 0;
    for (int i = optind; ok && i < argc; i++)
        traces += trace_file_is_trace(argv[i]);
    if (ok && traces > 0 && argc - optind > 1) {
        cli_error("a trace is drawn alone: plot it without metrics files or other traces");
        ok = false;
    }
    if (ok && traces == 0 && (has_from || has_to)) {
        cli_error("--from and --to choose the window of a trace (ember train --trace FILE), not of metrics");
        ok = false;
    }
    if (!ok) {
        fputs("try: ember plot --help\n", stderr);
        return EXIT_USAGE;
    }
    bool png = strcmp(picture_format(output), "png") == 0;
    if (traces > 0)
        return cmd_plot_trace(argv[optind], output, png, (int)width, (int)height, has_from ? &from : NULL,
                              has_to ? &to : NULL);

    struct runs runs = {0};
    struct plot_series *series = NULL;
    const char **labels = NULL;
    int rc = EXIT_OK;
    for (int i = optind; i < argc && rc == EXIT_OK; i++)
        rc = read_metrics(argv[i], &runs);
    if (rc != EXIT_OK)
        goto done;
    for (int i = 0; i < runs.count; i++)
        run_place_epochs(&runs.items[i], &runs.at_epoch_number);
    /* every file read has a run (or it failed above); the guard is for calloc(0) */
    size_t n_runs = runs.count > 0 ? (size_t)runs.count : 1;
    series = calloc(MEASURES * CURVES * n_runs, sizeof *series);
    labels = calloc(n_runs, sizeof *labels);
    bool labelled = labels != NULL;
    for (int i = 0; labelled && i < runs.count; i++) {
        struct run *r = &runs.items[i];
        r->label = run_label(r);
        labelled = (labels[i] = r->label) != NULL;
    }
    if (!series || !labelled) {
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    struct plot_figure fig;
    figure_build(&runs, series, labels, &fig);
    if (runs.at_epoch_number && strcmp(fig.panels[0].x_title, "step") == 0)
        fprintf(stderr,
                "ember: note: %lld epochs say nothing of their steps; they are placed at their number\n",
                (long long)runs.at_epoch_number);
    if (!(png ? plot_write_png : plot_write_svg)((struct plot_picture){.figure = &fig}, (int)width,
                                                 (int)height, output)) {
        cli_error("cannot write %s: %s", output, strerror(errno));
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    fprintf(stderr, "ember: wrote %s: %d run%s\n", output, runs.count, runs.count == 1 ? "" : "s");
done:
    free(labels);
    free(series);
    runs_free(&runs);
    return rc;
}
