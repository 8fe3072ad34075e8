/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-plot.c — `ember plot`: the loss and accuracy curves of the runs
 * in metrics files that `ember train --metrics` wrote, as a PNG or SVG
 * picture (drawn by tools/plot/plot-draw.c); a trace that `--trace` wrote goes
 * to tools/cmd-plot-trace.c instead.
 *
 * The metrics files are read by tools/metrics-file.c (what their lines
 * mean is said there), as files someone else may have written.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "metrics-file.h"
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

static int compare_x(const void *a, const void *b)
{
    double xa = ((const struct plot_point *)a)->x, xb = ((const struct plot_point *)b)->x;
    return (xa > xb) - (xa < xb);
}

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
    bool made_up = sscanf(r->id, "%4d%2d%2dT%2d%2d%2d-%ld%n", &year, &month, &day, &hour, &minute, &second,
                          &pid, &used) == 7 &&
                   r->id[used] == '\0' && month >= 1 && month <= 12;
    if (made_up && isfinite(r->lr))
        snprintf(label, sizeof label, "%s, lr %g, %s %d %02d:%02d", r->model ? r->model : "run", r->lr,
                 months[month - 1], day, hour, minute);
    else if (made_up)
        snprintf(label, sizeof label, "%s, %s %d %02d:%02d", r->model ? r->model : "run", months[month - 1],
                 day, hour, minute);
    else if (r->model)
        snprintf(label, sizeof label, "%.300s (%.200s)", r->id, r->model);
    else
        snprintf(label, sizeof label, "%.500s", r->id);
    return strdup(label);
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
                qsort(c->points, (size_t)c->count, sizeof *c->points, compare_x); /* count > 0: above */
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
    while (ok && (c = cli_getopt(argc, argv, "o:h", longopts, NULL)) != -1) {
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
    /* before anything is read: never one of the files plotted, never a FIFO, a folder that exists */
    int checked = cli_output_check(output, "-o", (const char *const *)argv + optind);
    if (checked != EXIT_OK)
        return checked;
    if (traces > 0)
        return cmd_plot_trace(argv[optind], output, png, (int)width, (int)height, has_from ? &from : NULL,
                              has_to ? &to : NULL);

    struct runs runs = {0};
    struct plot_series *series = NULL;
    const char **labels = NULL;
    int rc = EXIT_OK;
    for (int i = optind; i < argc && rc == EXIT_OK; i++)
        rc = metrics_read(argv[i], &runs);
    if (rc != EXIT_OK)
        goto done;
    metrics_place_epochs(&runs);
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
    /* written beside the file and renamed over it, as every output (tools/cli-files.c) */
    struct cli_output o;
    if ((rc = cli_output_open(&o, output, "-o")) != EXIT_OK)
        goto done;
    bool drawn = (png ? plot_write_png : plot_write_svg)((struct plot_picture){.figure = &fig}, (int)width,
                                                         (int)height, o.tmp);
    if (!drawn)
        cli_error("cannot write %s: %s", output, strerror(errno));
    if ((rc = cli_output_close(&o, drawn)) != EXIT_OK)
        goto done;
    fprintf(stderr, "ember: wrote %s: %d run%s\n", output, runs.count, runs.count == 1 ? "" : "s");
done:
    free(labels);
    free(series);
    metrics_free(&runs);
    return rc;
}
