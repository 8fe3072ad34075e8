/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-picture.c — a picture of `ember plot` (tools/plot/plot.h) is a
 * figure of curves (plot-draw.c) or a timeline of a trace
 * (plot-timeline.c); this is the one place that picks between them.
 */
#include "plot-impl.h"

bool plot_draw(struct plot_picture what, double width, double height, const struct plot_canvas *canvas)
{
    return what.timeline ? plot_draw_timeline(what.timeline, width, height, canvas)
                         : plot_draw_figure(what.figure, width, height, canvas);
}
