/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-draw.c — the layout of a figure (tools/plot/plot.h): where the
 * panels, axes, ticks, labels, curves and legend go, painted through a
 * canvas so that PNG and SVG show the same picture.
 *
 * The legend goes under the panels, its rows counted first so the panels
 * get what is left. Each panel's margins are measured from its own tick
 * labels, and its ticks are round numbers (1, 2 or 5 times a power of
 * ten) that cover the data, as Heckbert's "nice numbers" (Graphics Gems,
 * 1990) choose them; the x axis is shared by all panels so that a step
 * lines up across them. Text is scaled with the picture so that a large
 * one stays readable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot-impl.h"

static double widest_tick_label(const struct plot_axis *a, double size)
{
    char label[64];
    double widest = 0.0;
    for (int i = 0; i < plot_axis_ticks(a); i++) {
        plot_tick_label(a, plot_axis_tick(a, i), label, sizeof label);
        widest = fmax(widest, plot_text_width(label, size));
    }
    return widest;
}

/* the range of the finite values of x (want_x) or y in the panels */
static void data_range(const struct plot_panel *panels, int n_panels, bool want_x, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int p = 0; p < n_panels; p++)
        for (int s = 0; s < panels[p].n_series; s++)
            for (int i = 0; i < panels[p].series[s].count; i++) {
                const struct plot_point *pt = &panels[p].series[s].points[i];
                double v = want_x ? pt->x : pt->y;
                if (isfinite(pt->x) && isfinite(pt->y)) {
                    *lo = fmin(*lo, v);
                    *hi = fmax(*hi, v);
                }
            }
}

/* ---- curves ---- */

static struct plot_rgb stroke_colour(int colour, enum plot_stroke stroke)
{
    struct plot_rgb c = plot_palette(colour);
    if (stroke == PLOT_STROKE_THIN) { /* halfway to white: noisy points recede */
        c.r = (unsigned char)(c.r + (255 - c.r) / 2);
        c.g = (unsigned char)(c.g + (255 - c.g) / 2);
        c.b = (unsigned char)(c.b + (255 - c.b) / 2);
    }
    return c;
}

/* A sample of a stroke, as the legend shows it, `length` long from (x, y). */
static void stroke_sample(const struct plot_canvas *cv, const struct plot_sizes *m, double x, double y,
                          double length, enum plot_stroke stroke, struct plot_rgb c)
{
    struct plot_point ends[2] = {{x, y}, {x + length, y}};
    cv->line(cv->self, ends, 2, m->stroke_width[stroke], stroke == PLOT_STROKE_DASHED, c);
    if (stroke == PLOT_STROKE_SOLID)
        cv->dot(cv->self, (struct plot_point){x + length / 2.0, y}, m->dot_radius, c);
}

/* The plot area of a panel and the axes that map data into it. */
struct plot_area {
    double left, top, right, bottom;
    struct plot_axis x, y;
};

static struct plot_point to_pixels(const struct plot_area *f, struct plot_point p)
{
    return (struct plot_point){
        f->left + (p.x - f->x.lo) / (f->x.hi - f->x.lo) * (f->right - f->left),
        f->bottom - (p.y - f->y.lo) / (f->y.hi - f->y.lo) * (f->bottom - f->top),
    };
}

/* A series as lines through its points, broken where a value is missing;
 * a point alone between gaps is a dot. `pixels` holds count points. */
static void draw_series(const struct plot_canvas *cv, const struct plot_sizes *m, const struct plot_area *f,
                        const struct plot_series *s, struct plot_point *pixels)
{
    struct plot_rgb c = stroke_colour(s->colour, s->stroke);
    double width = m->stroke_width[s->stroke];
    int i = 0;
    while (i < s->count) {
        int n = 0;
        for (; i < s->count && isfinite(s->points[i].x) && isfinite(s->points[i].y); i++)
            pixels[n++] = to_pixels(f, s->points[i]);
        if (n >= 2)
            cv->line(cv->self, pixels, n, width, s->stroke == PLOT_STROKE_DASHED, c);
        if (n == 1 && s->stroke != PLOT_STROKE_SOLID)
            cv->dot(cv->self, pixels[0], width, c);
        for (int k = 0; s->stroke == PLOT_STROKE_SOLID && k < n; k++)
            cv->dot(cv->self, pixels[k], m->dot_radius, c);
        i++; /* past the gap */
    }
}

/* ---- panels ---- */

static void draw_panel(const struct plot_canvas *cv, const struct plot_sizes *m,
                       const struct plot_panel *panel, double x_lo, double x_hi, double cx, double cy,
                       double cw, double ch, struct plot_point *scratch)
{
    struct plot_area f;
    f.top = cy + m->title_text + 2.0 * m->gap;
    f.bottom = cy + ch - (m->tick_len + m->gap + m->tick_text + 2.0 * m->gap + m->tick_text);
    double y_lo, y_hi;
    data_range(panel, 1, false, &y_lo, &y_hi);
    f.y = plot_axis_nice(y_lo, y_hi, (int)fmax(3.0, fmin(8.0, (f.bottom - f.top) / (6.0 * m->tick_text))));
    f.left = cx + m->tick_text + 2.0 * m->gap + widest_tick_label(&f.y, m->tick_text) + m->gap + m->tick_len;
    f.right = cx + cw - plot_text_width("00000", m->tick_text) / 2.0;
    f.left = plot_pixel_middle(f.left);
    f.right = plot_pixel_middle(f.right);
    f.top = plot_pixel_middle(f.top);
    f.bottom = plot_pixel_middle(f.bottom);

    /* as many x ticks as have room for their labels */
    double plot_w = f.right - f.left;
    for (int ticks = (int)fmax(2.0, plot_w / (8.0 * m->tick_text));; ticks--) {
        f.x = plot_axis_nice(x_lo, x_hi, ticks);
        double spacing = plot_w * f.x.step / (f.x.hi - f.x.lo);
        if (ticks <= 2 || spacing >= widest_tick_label(&f.x, m->tick_text) + 3.0 * m->gap)
            break;
    }

    cv->text(cv->self, (f.left + f.right) / 2.0, cy + m->title_text / 2.0, panel->title, m->title_text,
             PLOT_ALIGN_CENTRE, false, plot_ink);
    cv->text(cv->self, cx + m->tick_text / 2.0, (f.top + f.bottom) / 2.0, panel->y_title, m->tick_text,
             PLOT_ALIGN_CENTRE, true, plot_ink);
    cv->text(cv->self, (f.left + f.right) / 2.0, f.bottom + m->tick_len + 3.0 * m->gap + 1.5 * m->tick_text,
             panel->x_title, m->tick_text, PLOT_ALIGN_CENTRE, false, plot_ink);

    char label[64];
    for (int i = 0; i < plot_axis_ticks(&f.y); i++) {
        double v = plot_axis_tick(&f.y, i),
               y = plot_pixel_middle(to_pixels(&f, (struct plot_point){f.x.lo, v}).y);
        cv->line(cv->self, (struct plot_point[]){{f.left, y}, {f.right, y}}, 2, 1.0, false, plot_grid);
        cv->line(cv->self, (struct plot_point[]){{f.left - m->tick_len, y}, {f.left, y}}, 2, 1.0, false,
                 plot_axis_grey);
        plot_tick_label(&f.y, v, label, sizeof label);
        cv->text(cv->self, f.left - m->tick_len - m->gap, y, label, m->tick_text, PLOT_ALIGN_RIGHT, false,
                 plot_ink);
    }
    for (int i = 0; i < plot_axis_ticks(&f.x); i++) {
        double v = plot_axis_tick(&f.x, i),
               x = plot_pixel_middle(to_pixels(&f, (struct plot_point){v, f.y.lo}).x);
        cv->line(cv->self, (struct plot_point[]){{x, f.top}, {x, f.bottom}}, 2, 1.0, false, plot_grid);
        cv->line(cv->self, (struct plot_point[]){{x, f.bottom}, {x, f.bottom + m->tick_len}}, 2, 1.0, false,
                 plot_axis_grey);
        plot_tick_label(&f.x, v, label, sizeof label);
        cv->text(cv->self, x, f.bottom + m->tick_len + m->gap + m->tick_text / 2.0, label, m->tick_text,
                 PLOT_ALIGN_CENTRE, false, plot_ink);
    }
    struct plot_point box[5] = {
        {f.left, f.top}, {f.right, f.top}, {f.right, f.bottom}, {f.left, f.bottom}, {f.left, f.top}};
    cv->line(cv->self, box, 5, 1.0, false, plot_axis_grey);

    /* pale noisy curves first, so that the epochs' curves stay on top */
    bool any = false;
    for (int stroke = 0; stroke < PLOT_STROKES; stroke++)
        for (int s = 0; s < panel->n_series; s++)
            if (panel->series[s].stroke == (enum plot_stroke)stroke) {
                draw_series(cv, m, &f, &panel->series[s], scratch);
                any = any || panel->series[s].count > 0;
            }
    if (!any)
        cv->text(cv->self, (f.left + f.right) / 2.0, (f.top + f.bottom) / 2.0, "no data", m->tick_text,
                 PLOT_ALIGN_CENTRE, false, plot_axis_grey);
}

/* ---- legend ---- */

/* Counts the rows the entries take in `width` (at most max_rows); paints
 * them from `top` when a canvas is given. */
static int legend_flow(const struct plot_sizes *m, const struct plot_legend_entry *entries, int n,
                       const char *more, double left, double top, double width, int max_rows,
                       const struct plot_canvas *cv)
{
    double sample = 22.0 * m->scale, spacing = 16.0 * m->scale, row_h = 2.2 * m->tick_text;
    double x = left;
    int row = 0;
    char rest[64];
    for (int e = 0; e < n; e++) {
        const struct plot_legend_entry *entry = &entries[e];
        double w = sample + m->gap + plot_text_width(entry->label, m->tick_text);
        /* the last row keeps room for what it leaves out */
        snprintf(rest, sizeof rest, "and %d more %s", n - e - 1, more);
        double reserve =
            row + 1 == max_rows && e + 1 < n ? plot_text_width(rest, m->tick_text) + spacing : 0.0;
        if (x > left && x + w + reserve > left + width) {
            if (row + 1 == max_rows) {
                snprintf(rest, sizeof rest, "and %d more %s", n - e, more);
                if (cv)
                    cv->text(cv->self, x, top + (row + 0.5) * row_h, rest, m->tick_text, PLOT_ALIGN_LEFT,
                             false, plot_ink);
                break;
            }
            row++;
            x = left;
        }
        if (cv) {
            double y = plot_pixel_middle(top + (row + 0.5) * row_h);
            if (entry->sample == PLOT_SAMPLE_BOX)
                cv->rect(cv->self, round(x + sample / 2.0 - m->tick_text), round(y - m->tick_text),
                         round(2.0 * m->tick_text), round(2.0 * m->tick_text), entry->colour);
            else
                stroke_sample(cv, m, x, y, sample, (enum plot_stroke)entry->sample, entry->colour);
            cv->text(cv->self, x + sample + m->gap, y, entry->label, m->tick_text, PLOT_ALIGN_LEFT, false,
                     plot_ink);
        }
        x += w + spacing;
    }
    return row + 1;
}

double plot_legend(const struct plot_sizes *m, const struct plot_legend_entry *entries, int n,
                   const char *more, double width, double height, double bottom, const struct plot_canvas *cv)
{
    double row_h = 2.2 * m->tick_text, legend_w = width - 2.0 * m->pad;
    int max_rows = (int)fmax(1.0, floor(height / 4.0 / row_h));
    int rows = legend_flow(m, entries, n, more, m->pad, 0.0, legend_w, max_rows, NULL);
    double top = bottom - rows * row_h;
    if (cv)
        legend_flow(m, entries, n, more, m->pad, top, legend_w, max_rows, cv);
    return top;
}

/* the figure's legend: the strokes it uses, then a colour per run */
static struct plot_legend_entry *figure_legend(const struct plot_figure *fig, int *n)
{
    bool used[PLOT_STROKES] = {false};
    for (int p = 0; p < fig->n_panels; p++)
        for (int s = 0; s < fig->panels[p].n_series; s++)
            used[fig->panels[p].series[s].stroke] = true;
    struct plot_legend_entry *entries = malloc((size_t)(PLOT_STROKES + fig->n_colours) * sizeof *entries);
    *n = 0;
    for (int k = 0; entries && k < PLOT_STROKES; k++)
        if (used[k])
            entries[(*n)++] = (struct plot_legend_entry){fig->stroke_labels[k], plot_ink, k};
    for (int i = 0; entries && i < fig->n_colours; i++)
        entries[(*n)++] =
            (struct plot_legend_entry){fig->colour_labels[i], plot_palette(i), PLOT_STROKE_SOLID};
    return entries;
}

bool plot_draw_figure(const struct plot_figure *fig, double width, double height,
                      const struct plot_canvas *canvas)
{
    struct plot_sizes m = plot_sizes_for(width, height);
    canvas->rect(canvas->self, 0.0, 0.0, width, height, plot_white);
    int n_entries;
    struct plot_legend_entry *entries = figure_legend(fig, &n_entries);
    if (!entries)
        return false;
    double legend_top = plot_legend(&m, entries, n_entries, "runs", width, height, height - m.pad, canvas);
    free(entries);

    /* the panels in the rest: side by side when it is wide */
    double x_lo, x_hi;
    data_range(fig->panels, fig->n_panels, true, &x_lo, &x_hi);
    double area_w = width - 2.0 * m.pad, area_h = legend_top - m.gap - m.pad;
    bool side_by_side = area_w >= area_h * 1.2;
    int n = fig->n_panels;
    double cell_w = side_by_side ? (area_w - (n - 1) * 3.0 * m.pad) / n : area_w;
    double cell_h = side_by_side ? area_h : (area_h - (n - 1) * 2.0 * m.pad) / n;

    int most = 1;
    for (int p = 0; p < n; p++)
        for (int s = 0; s < fig->panels[p].n_series; s++)
            most = fig->panels[p].series[s].count > most ? fig->panels[p].series[s].count : most;
    struct plot_point *scratch = malloc((size_t)most * sizeof *scratch);
    if (!scratch)
        return false;
    for (int p = 0; p < n; p++) {
        double cx = m.pad + (side_by_side ? p * (cell_w + 3.0 * m.pad) : 0.0);
        double cy = m.pad + (side_by_side ? 0.0 : p * (cell_h + 2.0 * m.pad));
        draw_panel(canvas, &m, &fig->panels[p], x_lo, x_hi, cx, cy, cell_w, cell_h, scratch);
    }
    free(scratch);
    return true;
}
