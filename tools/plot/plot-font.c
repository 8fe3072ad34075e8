/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-font.c — the metrics of the letters `ember plot` writes with,
 * stb_easy_font's, so that the layout (plot-draw.c, plot-timeline.c) can
 * measure text without the PNG canvas that draws it (plot-png.c).
 */
#include <stddef.h>

#include "plot.h"

PLOT_STB_BEGIN
#include <stb_easy_font.h>
PLOT_STB_END

/* text as stb_easy_font reads it: printable ASCII, at most len - 1 bytes */
void plot_font_safe(const char *text, char *safe, size_t len)
{
    size_t n = 0;
    for (; text[n] && n + 1 < len; n++)
        safe[n] = text[n] >= 32 && text[n] <= 126 ? text[n] : '?';
    safe[n] = '\0';
}

double plot_text_width(const char *text, double size)
{
    char safe[256];
    plot_font_safe(text, safe, sizeof safe);
    return stb_easy_font_width(safe) * size / PLOT_FONT_CAP_HEIGHT;
}
