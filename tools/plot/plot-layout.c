/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-layout.c — what every chart of `ember plot` lays out with
 * (tools/plot/plot-impl.h): the palette, the sizes for a picture, and axes of
 * round numbers with their tick labels. The figure (plot-draw.c) and the
 * timeline (plot-timeline.c) both use them; neither calls the other for them.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "plot-impl.h"

struct plot_rgb plot_palette(int colour)
{
    /* ten colours far apart, in the order of matplotlib's default cycle */
    static const struct plot_rgb palette[] = {
        {31, 119, 180}, {214, 39, 40},   {44, 160, 44},   {255, 127, 14}, {148, 103, 189},
        {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
    };
    int n = (int)(sizeof palette / sizeof palette[0]);
    return palette[((colour % n) + n) % n];
}

struct plot_sizes plot_sizes_for(double width, double height)
{
    double s = fmax(1.0, fmin(width / 900.0, height / 400.0)), text = round(s);
    return (struct plot_sizes){
        .scale = s,
        .tick_text = 7.0 * text,
        .title_text = 14.0 * text,
        .pad = 10.0 * s,
        .gap = 5.0 * s,
        .tick_len = 4.0 * s,
        .stroke_width = {1.2 * s, 1.8 * s, 2.2 * s},
        .dot_radius = 2.6 * s,
    };
}

/* ---- axes ---- */

/* the number 1, 2 or 5 times a power of ten nearest x (round) or at least x */
static double nice_number(double x, bool round)
{
    double power = pow(10.0, floor(log10(x))), f = x / power;
    if (round)
        return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * power;
    return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * power;
}

struct plot_axis plot_axis_nice(double lo, double hi, int ticks)
{
    if (!isfinite(lo) || !isfinite(hi)) { /* no data */
        lo = 0.0;
        hi = 1.0;
    }
    if (!(hi > lo)) { /* one value: a range around it */
        double half = lo != 0.0 ? fabs(lo) * 0.1 : 0.5;
        lo -= half;
        hi += half;
    }
    struct plot_axis a;
    a.step = nice_number(nice_number(hi - lo, false) / (ticks > 1 ? ticks - 1 : 1), true);
    /* the slack keeps a bound that is already a multiple (1.0 of 0.2) from
     * gaining a step through rounding */
    a.lo = floor(lo / a.step + 1e-9) * a.step + 0.0; /* + 0.0: no -0 */
    a.hi = ceil(hi / a.step - 1e-9) * a.step;
    a.thousands = a.step >= 1000.0;
    double step = a.thousands ? a.step / 1000.0 : a.step;
    a.decimals = step >= 1.0 ? 0 : (int)ceil(-log10(step) - 1e-9);
    return a;
}

int plot_axis_ticks(const struct plot_axis *a) { return (int)floor((a->hi - a->lo) / a->step + 0.5) + 1; }

double plot_axis_tick(const struct plot_axis *a, int i) { return a->lo + i * a->step + 0.0; }

void plot_tick_label(const struct plot_axis *a, double v, char *buf, size_t len)
{
    if (a->thousands && v != 0.0)
        snprintf(buf, len, "%.*fk", a->decimals, v / 1000.0 + 0.0);
    else
        snprintf(buf, len, "%.*f", a->decimals, v + 0.0);
}
