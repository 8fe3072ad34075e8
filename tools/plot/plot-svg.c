/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-svg.c — the SVG canvas of `ember plot` (tools/plot/plot.h): each
 * shape the layout paints is one element, written as it comes.
 *
 * The picture is the PNG's, in the same pixel coordinates, but its text is
 * the viewer's sans-serif font, and it stays sharp at any zoom. Text is
 * escaped for XML, and bytes that are not UTF-8 (run ids are whatever the
 * user named them) become '?', so the file always parses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"

/* Capitals are about 0.72 of the font size in common sans-serif fonts. */
#define CAP_HEIGHT_PER_EM 0.72

static void svg_colour(FILE *f, const char *attribute, struct plot_rgb c)
{
    fprintf(f, " %s=\"#%02x%02x%02x\"", attribute, c.r, c.g, c.b);
}

/* the length of the UTF-8 sequence at s, or 0 when it is not one (a stray
 * continuation byte, a truncated or overlong sequence) */
static int utf8_length(const unsigned char *s)
{
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xe0) == 0xc0 ? 2
            : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4
                                    : 0;
    if (n == 2 && s[0] < 0xc2)
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* text as XML character data */
static void svg_escape(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    while (*s) {
        int n = utf8_length(s);
        if (n == 0 || (n == 1 && *s < 0x20)) /* XML 1.0 allows no control characters here */
            fputc('?', f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else
            fwrite(s, 1, (size_t)n, f);
        s += n ? n : 1;
    }
}

static void svg_line(void *self, const struct plot_point *points, int n, double width, bool dashed,
                     struct plot_rgb c)
{
    FILE *f = self;
    fputs("<polyline points=\"", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", points[i].x, points[i].y);
    fprintf(f, "\" stroke-width=\"%.2f\"", width);
    svg_colour(f, "stroke", c);
    if (dashed)
        fprintf(f, " stroke-dasharray=\"%.1f %.1f\"", PLOT_DASH_LENGTH * width, PLOT_DASH_SPACE * width);
    fputs("/>\n", f);
}

static void svg_dot(void *self, struct plot_point centre, double radius, struct plot_rgb c)
{
    fprintf(self, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.2f\"", centre.x, centre.y, radius);
    svg_colour(self, "fill", c);
    fputs("/>\n", self);
}

static void svg_rect(void *self, double x, double y, double width, double height, struct plot_rgb c)
{
    fprintf(self, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"", x, y, width, height);
    svg_colour(self, "fill", c);
    fputs("/>\n", self);
}

static void svg_text(void *self, double x, double y, const char *text, double size, enum plot_align align,
                     bool upright, struct plot_rgb c)
{
    static const char *const anchors[] = {"start", "middle", "end"};
    FILE *f = self;
    /* the baseline half the capitals' height below their middle; turned
     * with the text, that offset points right */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\"", x, y + size / 2.0,
            size / CAP_HEIGHT_PER_EM, anchors[align]);
    if (upright)
        fprintf(f, " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
    svg_colour(f, "fill", c);
    fputc('>', f);
    svg_escape(f, text);
    fputs("</text>\n", f);
}

bool plot_write_svg(struct plot_picture what, int width, int height, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n"
            "<g font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" fill=\"none\" "
            "stroke-linecap=\"round\" stroke-linejoin=\"round\">\n",
            width, height, width, height);
    const struct plot_canvas canvas = {f, svg_line, svg_dot, svg_rect, svg_text};
    bool drawn = plot_draw(what, width, height, &canvas);
    fputs("</g>\n</svg>\n", f);
    int error = !drawn ? ENOMEM : ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !error)
        error = errno ? errno : EIO;
    errno = error;
    return error == 0;
}
