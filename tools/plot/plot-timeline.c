/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-timeline.c — the layout of a timeline (tools/plot/plot.h): lanes
 * one above the other, each a title over rows of spans, a time axis in ms
 * under them and the legend of the colours at the bottom, painted through
 * a canvas as plot-draw.c paints a figure, so that PNG and SVG show the
 * same picture.
 *
 * A span is a bar from its start to its end in its depth's row; what is
 * left of the height after the titles, the axis and the legend goes to
 * the rows, up to a most, so that a tall picture keeps slim bars. A bar's
 * label is written in it when it fits, cut to its first letters and ".."
 * when only those do. A bar narrower than a pixel that the bar before it
 * in its row already painted is not painted again: a window of a million
 * calls is still a picture of a few thousand shapes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot-impl.h"

static const struct plot_rgb lane_band = {246, 246, 246};

/* The colour of a colour index: the palette's ten, then the same halfway
 * to white, then darker, then again. */
static struct plot_rgb timeline_colour(int colour)
{
    struct plot_rgb c = plot_palette(colour);
    int shade = (colour / 10) % 3;
    if (shade == 1) {
        c.r = (unsigned char)(c.r + (255 - c.r) / 2);
        c.g = (unsigned char)(c.g + (255 - c.g) / 2);
        c.b = (unsigned char)(c.b + (255 - c.b) / 2);
    } else if (shade == 2) {
        c.r = (unsigned char)(c.r * 3 / 5);
        c.g = (unsigned char)(c.g * 3 / 5);
        c.b = (unsigned char)(c.b * 3 / 5);
    }
    return c;
}

/* text that stands out on c: white on a dark colour, ink on a light one */
static struct plot_rgb text_on(struct plot_rgb c)
{
    return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 150.0 ? plot_white : plot_ink;
}

/* `text` in at most `room` pixels at `size`: whole, or its first letters
 * (at least four) and ".."; false when not even those fit. */
static bool text_fit(const char *text, double room, double size, char *out, size_t len)
{
    snprintf(out, len, "%s", text);
    if (plot_text_width(out, size) <= room)
        return true;
    for (size_t n = strlen(out); n-- > 4;) {
        if (n + 3 > len || text[n - 1] == ' ') /* "linear..", not "linear .." */
            continue;
        memcpy(out + n, "..", 3);
        if (plot_text_width(out, size) <= room)
            return true;
    }
    return false;
}

/* The window's place on the picture: time to x. */
struct time_scale {
    double from, to, left, right;
};

static double time_x(const struct time_scale *t, double ms)
{
    return t->left + (ms - t->from) / (t->to - t->from) * (t->right - t->left);
}

#define MAX_TICKS 64

/* The time axis's ticks: round values within the window, as many as have
 * room for their labels. Returns how many; their values in ticks[]. */
static int time_ticks(const struct plot_sizes *m, const struct time_scale *t, struct plot_axis *a,
                      double ticks[MAX_TICKS])
{
    double plot_w = t->right - t->left;
    char label[64];
    for (int want = (int)fmin(MAX_TICKS / 2, fmax(2.0, plot_w / (8.0 * m->tick_text)));; want--) {
        *a = plot_axis_nice(t->from, t->to, want);
        a->thousands = false; /* 5000 ms, not 5k */
        double widest = 0.0;
        for (int i = 0; i < plot_axis_ticks(a); i++) {
            plot_tick_label(a, plot_axis_tick(a, i), label, sizeof label);
            widest = fmax(widest, plot_text_width(label, m->tick_text));
        }
        if (want <= 2 || plot_w * a->step / (t->to - t->from) >= widest + 3.0 * m->gap)
            break;
    }
    /* bounded, whatever rounding does to a window far from 0 */
    double first = ceil(t->from / a->step - 1e-9) * a->step;
    int n = 0;
    for (; n < MAX_TICKS && first + n * a->step <= t->to + 1e-9 * a->step; n++)
        ticks[n] = first + n * a->step + 0.0;
    return n;
}

/* The time axis along y, with its ticks and their labels. */
static void draw_time_axis(const struct plot_canvas *cv, const struct plot_sizes *m,
                           const struct time_scale *t, const struct plot_axis *a, const double *ticks,
                           int n_ticks, double y)
{
    char label[64];
    for (int i = 0; i < n_ticks; i++) {
        double x = plot_pixel_middle(time_x(t, ticks[i]));
        cv->line(cv->self, (struct plot_point[]){{x, y}, {x, y + m->tick_len}}, 2, 1.0, false,
                 plot_axis_grey);
        plot_tick_label(a, ticks[i], label, sizeof label);
        cv->text(cv->self, x, y + m->tick_len + m->gap + m->tick_text / 2.0, label, m->tick_text,
                 PLOT_ALIGN_CENTRE, false, plot_ink);
    }
    cv->line(cv->self, (struct plot_point[]){{t->left, y}, {t->right, y}}, 2, 1.0, false, plot_axis_grey);
    cv->text(cv->self, (t->left + t->right) / 2.0, y + m->tick_len + 3.0 * m->gap + 1.5 * m->tick_text,
             "ms from the start of the trace", m->tick_text, PLOT_ALIGN_CENTRE, false, plot_ink);
}

/* the rows a lane takes */
static int lane_rows(const struct plot_lane *lane)
{
    return lane->rows < 1 ? 1 : lane->rows > PLOT_MAX_ROWS ? PLOT_MAX_ROWS : lane->rows;
}

/* A lane's spans as bars in rows `row_h` tall from `top`. */
static void draw_spans(const struct plot_canvas *cv, const struct plot_sizes *m, const struct time_scale *t,
                       const struct plot_lane *lane, double top, double row_h)
{
    double painted_to[PLOT_MAX_ROWS]; /* per row, the right end of what is painted */
    for (int r = 0; r < PLOT_MAX_ROWS; r++)
        painted_to[r] = -INFINITY;
    int rows = lane_rows(lane);
    char label[128];
    for (int i = 0; i < lane->count; i++) {
        const struct plot_span *s = &lane->spans[i];
        if (!(s->end >= t->from && s->start <= t->to))
            continue;
        int row = s->depth < 0 ? 0 : s->depth >= rows ? rows - 1 : s->depth;
        double x0 = time_x(t, fmax(s->start, t->from)), x1 = time_x(t, fmin(s->end, t->to));
        if (x1 - x0 < 1.0) { /* a pixel at least, once */
            x0 = floor(x0);
            if (x0 < painted_to[row])
                continue;
            x1 = x0 + 1.0;
        }
        painted_to[row] = fmax(painted_to[row], x1);
        /* a pixel of white between neighbours, where that leaves a bar */
        double w = x1 - x0 > 3.0 ? x1 - x0 - 1.0 : x1 - x0;
        double y = top + row * row_h + 1.0, h = row_h - 2.0;
        struct plot_rgb c = timeline_colour(s->colour);
        cv->rect(cv->self, x0, y, w, h, c);
        /* the SVG's font may run wider than the PNG's: a little slack */
        if (s->label && h >= 1.6 * m->tick_text &&
            text_fit(s->label, 0.9 * (w - 2.0 * m->gap), m->tick_text, label, sizeof label))
            cv->text(cv->self, x0 + w / 2.0, y + h / 2.0, label, m->tick_text, PLOT_ALIGN_CENTRE, false,
                     text_on(c));
    }
}

bool plot_draw_timeline(const struct plot_timeline *tl, double width, double height,
                        const struct plot_canvas *canvas)
{
    struct plot_sizes m = plot_sizes_for(width, height);
    canvas->rect(canvas->self, 0.0, 0.0, width, height, plot_white);

    struct plot_legend_entry *entries =
        malloc((size_t)(tl->n_colours > 0 ? tl->n_colours : 1) * sizeof *entries);
    if (!entries)
        return false;
    for (int i = 0; i < tl->n_colours; i++)
        entries[i] = (struct plot_legend_entry){tl->colour_labels[i], timeline_colour(i), PLOT_SAMPLE_BOX};
    double legend_h =
        height - m.pad - plot_legend(&m, entries, tl->n_colours, "ops", width, height, height - m.pad, NULL);

    /* the lanes' rows share what the titles, axis and legend leave, up to
     * a most; the whole is centred in the height */
    int n_lanes = tl->n_lanes < 0 ? 0 : tl->n_lanes > PLOT_MAX_LANES ? PLOT_MAX_LANES : tl->n_lanes;
    double title_h = m.tick_text + 2.0 * m.gap, lane_gap = 2.0 * m.gap;
    double axis_h = m.tick_len + 4.0 * m.gap + 2.0 * m.tick_text;
    double fixed = n_lanes * (title_h + lane_gap) - lane_gap + axis_h + m.gap + legend_h;
    int rows = 0;
    for (int k = 0; k < n_lanes; k++)
        rows += lane_rows(&tl->lanes[k]);
    double row_h = floor(fmin(6.0 * m.tick_text, (height - 2.0 * m.pad - fixed) / (rows > 0 ? rows : 1)));
    if (row_h < 3.0)
        row_h = 3.0; /* a picture this small has rows too thin to read, over the axis */
    double top = fmax(m.pad, round((height - fixed - rows * row_h) / 2.0));

    double inset = plot_text_width("00000", m.tick_text) / 2.0;
    struct time_scale t = {tl->from, tl->to > tl->from ? tl->to : tl->from + 1.0, m.pad + inset,
                           width - m.pad - inset};
    struct plot_axis axis;
    double ticks[MAX_TICKS];
    int n_ticks = time_ticks(&m, &t, &axis, ticks);
    double y = top;
    for (int k = 0; k < n_lanes; k++) {
        const struct plot_lane *lane = &tl->lanes[k];
        char title[256];
        if (text_fit(lane->title ? lane->title : "", width - 2.0 * m.pad, m.tick_text, title, sizeof title))
            canvas->text(canvas->self, m.pad, y + m.tick_text / 2.0, title, m.tick_text, PLOT_ALIGN_LEFT,
                         false, plot_ink);
        /* a pale band with the ticks' grid lines, under the bars */
        double rows_top = round(y + title_h), rows_bottom = rows_top + lane_rows(lane) * row_h;
        canvas->rect(canvas->self, t.left, rows_top, t.right - t.left, rows_bottom - rows_top, lane_band);
        for (int i = 0; i < n_ticks; i++) {
            double x = plot_pixel_middle(time_x(&t, ticks[i]));
            canvas->line(canvas->self, (struct plot_point[]){{x, rows_top}, {x, rows_bottom}}, 2, 1.0, false,
                         plot_grid);
        }
        draw_spans(canvas, &m, &t, lane, rows_top, row_h);
        y = rows_bottom + lane_gap;
    }
    double axis_y = plot_pixel_middle(y - lane_gap);
    draw_time_axis(canvas, &m, &t, &axis, ticks, n_ticks, axis_y);
    plot_legend(&m, entries, tl->n_colours, "ops", width, height, axis_y + axis_h + m.gap + legend_h, canvas);
    free(entries);
    if (tl->note)
        canvas->text(canvas->self, (t.left + t.right) / 2.0, (top + axis_y) / 2.0, tl->note, m.tick_text,
                     PLOT_ALIGN_CENTRE, false, plot_axis_grey);
    return true;
}
