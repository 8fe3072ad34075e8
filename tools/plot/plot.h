/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot.h — the pictures `ember plot` draws: panels of curves, or a
 * timeline of spans in lanes, laid out once (plot-draw.c, plot-timeline.c)
 * and painted on one of two canvases, an RGB picture written as PNG
 * (plot-png.c) or an SVG document (plot-svg.c).
 *
 * A figure is data only: panels, each a list of series (points, a colour
 * index, a stroke), and the legend's labels; a timeline likewise (lanes of
 * spans). The layout turns data into pixel positions, ticks and labels and
 * calls the canvas's four functions, so both formats show the same picture
 * and nothing is drawn twice:
 *
 *   struct plot_point pts[] = {{0, 2.3}, {100, 0.9}, {200, 0.6}};
 *   struct plot_series loss = {pts, 3, 0, PLOT_STROKE_SOLID};
 *   struct plot_figure fig = {
 *       .panels = {{"loss", "step", "loss", &loss, 1}}, .n_panels = 1,
 *       .colour_labels = (const char *[]){"run 1"}, .n_colours = 1,
 *       .stroke_labels = {"train", "train (epoch)", "test (epoch)"},
 *   };
 *   if (!plot_write_png((struct plot_picture){.figure = &fig}, 640, 360, "loss.png"))
 *       perror("loss.png");
 *
 * Coordinates on a canvas are pixels, x to the right and y down, as in PNG
 * and SVG alike.
 */
#ifndef EMBER_PLOT_H
#define EMBER_PLOT_H

#include <stdbool.h>

struct plot_rgb {
    unsigned char r, g, b;
};

struct plot_point {
    double x, y; /* a non-finite y is a gap: the curve stops and starts again after it */
};

/* How a series is drawn; the legend names each stroke a figure uses. */
enum plot_stroke {
    PLOT_STROKE_THIN,   /* a thin, pale line: many noisy points */
    PLOT_STROKE_DASHED, /* a dashed line */
    PLOT_STROKE_SOLID,  /* a thick line with a dot at each point */
    PLOT_STROKES
};

/* a dashed line's dashes and the spaces between them, in line widths */
#define PLOT_DASH_LENGTH 4.0
#define PLOT_DASH_SPACE  2.5

struct plot_series {
    const struct plot_point *points; /* in order of x */
    int count;
    int colour; /* an index into the figure's colour_labels and the palette */
    enum plot_stroke stroke;
};

struct plot_panel {
    const char *title, *x_title, *y_title;
    const struct plot_series *series;
    int n_series;
};

#define PLOT_MAX_PANELS 4

struct plot_figure {
    struct plot_panel panels[PLOT_MAX_PANELS];
    int n_panels;                     /* side by side in a wide picture, stacked in a tall one */
    const char *const *colour_labels; /* the legend's label for each colour (a run) */
    int n_colours;
    const char *stroke_labels[PLOT_STROKES]; /* the legend's label for each stroke */
};

/* ---- a timeline: spans of time, in lanes ---- */

struct plot_span {
    double start, end; /* on the time axis, in ms */
    int depth;         /* its row in its lane: 0 at the top, 1 for what a span there encloses, ... */
    int colour;        /* an index into the timeline's colour_labels */
    const char *label; /* written inside it where it fits; NULL: none */
};

#define PLOT_MAX_LANES 16
#define PLOT_MAX_ROWS  16 /* rows in a lane; deeper spans share the last */

struct plot_lane {
    const char *title;
    const struct plot_span *spans; /* in order of start */
    int count;
    int rows; /* 1 + the deepest span's depth, at least 1 */
};

struct plot_timeline {
    double from, to; /* the window shown, in ms on the time axis */
    struct plot_lane lanes[PLOT_MAX_LANES];
    int n_lanes;                      /* one above the other */
    const char *const *colour_labels; /* the legend's label for each colour (an op) */
    int n_colours;
    const char *note; /* written across a window without spans; NULL: none */
};

/* What a picture shows: a figure or a timeline (the other NULL). */
struct plot_picture {
    const struct plot_figure *figure;
    const struct plot_timeline *timeline;
};

/* The canvas a layout paints on: a table of drawing functions, one per
 * output format. Sizes are pixels; `size` of text is its capital letters'
 * height. */
enum plot_align { PLOT_ALIGN_LEFT, PLOT_ALIGN_CENTRE, PLOT_ALIGN_RIGHT };
struct plot_canvas {
    void *self;
    /* a line through n >= 2 points, `width` thick */
    void (*line)(void *self, const struct plot_point *points, int n, double width, bool dashed,
                 struct plot_rgb colour);
    void (*dot)(void *self, struct plot_point centre, double radius, struct plot_rgb colour);
    void (*rect)(void *self, double x, double y, double width, double height,
                 struct plot_rgb colour); /* filled */
    /* one line of text, (x, y) the middle of its capitals' height at the
     * left, centre or right end; `upright` turns it a quarter turn left,
     * to be read from bottom to top, about (x, y) */
    void (*text)(void *self, double x, double y, const char *text, double size, enum plot_align align,
                 bool upright, struct plot_rgb colour);
};

/* Lays out the picture on a canvas `width` by `height` pixels and paints
 * it; false when out of memory. */
bool plot_draw(struct plot_picture what, double width, double height, const struct plot_canvas *canvas);

/* The width of `text` in pixels at that size in the PNG's font; SVG
 * viewers' sans-serif fonts come close, so the layout uses it for both
 * (plot-font.c). */
double plot_text_width(const char *text, double size);
/* the capital letters' height in the font's own units */
#define PLOT_FONT_CAP_HEIGHT 7.0
/* text as the font reads it: printable ASCII ('?' for anything else), at
 * most len - 1 bytes */
void plot_font_safe(const char *text, char *safe, size_t len);

/* The colour of a colour index: a palette of distinct colours, repeated
 * after its end. */
struct plot_rgb plot_palette(int colour);

/* Each returns false with errno set when the file cannot be written. */
bool plot_write_png(struct plot_picture what, int width, int height, const char *path);
bool plot_write_svg(struct plot_picture what, int width, int height, const char *path);

/* Around the stb headers the plots draw with: third-party code, its warnings
 * not ours to fix. Unused static functions stay unreported to the end of
 * the file, since GCC reports those there, after any pop. */
/* clang-format off */
#define PLOT_STB_BEGIN                                          \
    _Pragma("GCC diagnostic ignored \"-Wunused-function\"")     \
    _Pragma("GCC diagnostic push")                              \
    _Pragma("GCC diagnostic ignored \"-Wshadow\"")              \
    _Pragma("GCC diagnostic ignored \"-Wsign-compare\"")        \
    _Pragma("GCC diagnostic ignored \"-Wimplicit-fallthrough\"") \
    _Pragma("GCC diagnostic ignored \"-Wmissing-braces\"")
#define PLOT_STB_END _Pragma("GCC diagnostic pop")
/* clang-format on */

#endif /* EMBER_PLOT_H */
