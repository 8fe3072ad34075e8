/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-impl.h — what the two layouts of `ember plot` share: the
 * figure of curves (plot-draw.c) and the timeline of a trace
 * (plot-timeline.c) take their sizes, round ticks and legend from here,
 * so that both read as one program's pictures.
 */
#ifndef EMBER_PLOT_IMPL_H
#define EMBER_PLOT_IMPL_H

#include <math.h>
#include <stddef.h>

#include "plot.h"

static const struct plot_rgb plot_white = {255, 255, 255}, plot_ink = {40, 40, 40},
                             plot_axis_grey = {150, 150, 150}, plot_grid = {232, 232, 232};

/* The sizes of one picture, in pixels: they grow with the picture beyond
 * 900 by 400. The font's strokes are 1 unit wide and its capitals 7
 * (plot-png.c), so text grows by whole steps, and its strokes stay on
 * whole pixels, sharp. */
struct plot_sizes {
    double scale;
    double tick_text, title_text, pad, gap, tick_len;
    double stroke_width[PLOT_STROKES], dot_radius;
};

struct plot_sizes plot_sizes_for(double width, double height);

/* x or y at the middle of a pixel, so that 1-pixel lines there are sharp */
static inline double plot_pixel_middle(double v) { return floor(v) + 0.5; }

/* An axis of round ticks: 1, 2 or 5 times a power of ten apart. */
struct plot_axis {
    double lo, hi, step; /* lo and hi are multiples of step */
    int decimals;        /* of a tick label */
    bool thousands;      /* labels as 5k, 10k */
};

/* An axis of about `ticks` round ticks that covers [lo, hi]. */
struct plot_axis plot_axis_nice(double lo, double hi, int ticks);
int plot_axis_ticks(const struct plot_axis *a);
double plot_axis_tick(const struct plot_axis *a, int i);
void plot_tick_label(const struct plot_axis *a, double v, char *buf, size_t len);

/* An entry of a legend: a sample and its label. */
enum plot_sample {
    PLOT_SAMPLE_BOX = PLOT_STROKES, /* a filled box; below it, a stroke's line */
};
struct plot_legend_entry {
    const char *label;
    struct plot_rgb colour;
    int sample; /* an enum plot_stroke, or PLOT_SAMPLE_BOX */
};

/* The legend of a picture `width` by `height`, ending at `bottom`: entries
 * flow in rows from the left, in at most a quarter of the height (those
 * left out counted as "and N more <more>"). Returns its top; paints it
 * when a canvas is given. */
double plot_legend(const struct plot_sizes *m, const struct plot_legend_entry *entries, int n,
                   const char *more, double width, double height, double bottom,
                   const struct plot_canvas *cv);

/* Lays out a figure of curves (plot-draw.c); false when out of memory. */
bool plot_draw_figure(const struct plot_figure *fig, double width, double height,
                      const struct plot_canvas *canvas);

/* Lays out a timeline (plot-timeline.c); false when out of memory. */
bool plot_draw_timeline(const struct plot_timeline *tl, double width, double height,
                        const struct plot_canvas *canvas);

#endif /* EMBER_PLOT_IMPL_H */
