/* SPDX-License-Identifier: MIT */
/*
 * tools/plot/plot-png.c — the PNG canvas of `ember plot` (tools/plot/plot.h): an RGB
 * picture in memory, painted with anti-aliased shapes and written by
 * stb_image_write (Debian's libstb-dev) through zlib.
 *
 * Every shape is painted the same way: each pixel near it is covered by a
 * fraction, found from the distance of the pixel's middle to the shape (a
 * line, a dot) or from the area it shares with it (a rectangle, a letter's
 * stroke), and takes that fraction of the colour, once per shape (a mask
 * gathers the parts first). A line is thus a chain of capsules, so its
 * joints are round, and a 1-pixel line through the middle of a row of
 * pixels is sharp.
 *
 * Text is stb_easy_font's (plot-font.c measures it): letters of 1-unit
 * strokes, capitals 7 units tall, scaled to the size asked. Its functions
 * are static, and it reads its tables by character code, so anything but
 * printable ASCII is drawn as '?'.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "plot.h"

/* stb_image_write compresses with zlib's deflate, which packs better than
 * its own, at the level it asks for (its default, 8); it frees what this
 * returns with free(). */
static unsigned char *png_deflate(unsigned char *data, int length, int *out_length, int quality)
{
    int level = quality < 0 ? Z_DEFAULT_COMPRESSION : quality > 9 ? 9 : quality;
    uLongf size = compressBound((uLong)length);
    unsigned char *out = malloc(size);
    if (out && compress2(out, &size, data, (uLong)length, level) == Z_OK) {
        *out_length = (int)size;
        return out;
    }
    free(out);
    return NULL;
}

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#define STBI_WRITE_NO_STDIO
#define STBIW_ZLIB_COMPRESS png_deflate
PLOT_STB_BEGIN
#include <stb_easy_font.h>
#include <stb_image_write.h>
PLOT_STB_END

struct raster {
    unsigned char *rgb; /* (height, width, 3) */
    int width, height;
};

/* How much of each pixel of a window of the picture one shape covers,
 * painted in one go at the end, so that where its parts overlap (a line's
 * segments at a joint, a letter's strokes) a pixel is still painted once. */
struct mask {
    float *cover; /* (h, w), 0 to 1 */
    int x0, y0, w, h;
};

/* A mask for the pixels of the picture that [left, right] x [top, bottom]
 * touches; false when out of memory or when it lies outside. */
static bool mask_new(struct mask *m, const struct raster *r, double left, double top, double right,
                     double bottom)
{
    m->x0 = (int)fmax(0.0, floor(left));
    m->y0 = (int)fmax(0.0, floor(top));
    m->w = (int)fmin((double)r->width, ceil(right) + 1.0) - m->x0;
    m->h = (int)fmin((double)r->height, ceil(bottom) + 1.0) - m->y0;
    if (m->w <= 0 || m->h <= 0)
        return false;
    m->cover = calloc((size_t)m->w * (size_t)m->h, sizeof *m->cover);
    return m->cover != NULL;
}

/* each pixel of the mask's window `cover` of the way to c; frees the mask */
static void mask_paint(struct mask *m, struct raster *r, struct plot_rgb c)
{
    for (int y = 0; y < m->h; y++)
        for (int x = 0; x < m->w; x++) {
            double cover = m->cover[(size_t)y * (size_t)m->w + (size_t)x];
            if (cover <= 0.0)
                continue;
            unsigned char *p = r->rgb + ((size_t)(m->y0 + y) * (size_t)r->width + (size_t)(m->x0 + x)) * 3;
            p[0] = (unsigned char)lround(p[0] + (c.r - p[0]) * cover);
            p[1] = (unsigned char)lround(p[1] + (c.g - p[1]) * cover);
            p[2] = (unsigned char)lround(p[2] + (c.b - p[2]) * cover);
        }
    free(m->cover);
}

/* A capsule, the points within `half` of the segment a-b, on the mask:
 * a pixel is covered by how far its middle lies inside the edge, up to 1. */
static void mask_capsule(struct mask *m, struct plot_point a, struct plot_point b, double half)
{
    int xa = (int)fmax(0.0, floor(fmin(a.x, b.x) - half - 1.0) - m->x0);
    int xb = (int)fmin(m->w - 1.0, ceil(fmax(a.x, b.x) + half + 1.0) - m->x0);
    int ya = (int)fmax(0.0, floor(fmin(a.y, b.y) - half - 1.0) - m->y0);
    int yb = (int)fmin(m->h - 1.0, ceil(fmax(a.y, b.y) + half + 1.0) - m->y0);
    double dx = b.x - a.x, dy = b.y - a.y, length2 = dx * dx + dy * dy;
    for (int y = ya; y <= yb; y++)
        for (int x = xa; x <= xb; x++) {
            double px = m->x0 + x + 0.5 - a.x, py = m->y0 + y + 0.5 - a.y;
            /* the nearest point of the segment, a fraction t of the way */
            double t = length2 > 0.0 ? fmax(0.0, fmin(1.0, (px * dx + py * dy) / length2)) : 0.0;
            float cover = (float)fmin(1.0, half + 0.5 - hypot(px - t * dx, py - t * dy));
            float *at = &m->cover[(size_t)y * (size_t)m->w + (size_t)x];
            *at = fmaxf(*at, cover);
        }
}

/* The rectangle on the mask: each pixel covered by the area it shares
 * with it, added to what it had (a letter's strokes meet edge to edge). */
static void mask_rect(struct mask *m, double left, double top, double right, double bottom)
{
    int xa = (int)fmax(0.0, floor(left) - m->x0), xb = (int)fmin(m->w - 1.0, ceil(right) - m->x0);
    int ya = (int)fmax(0.0, floor(top) - m->y0), yb = (int)fmin(m->h - 1.0, ceil(bottom) - m->y0);
    for (int y = ya; y <= yb; y++) {
        double share_y = fmin(bottom, m->y0 + y + 1.0) - fmax(top, (double)(m->y0 + y));
        for (int x = xa; x <= xb && share_y > 0.0; x++) {
            double share_x = fmin(right, m->x0 + x + 1.0) - fmax(left, (double)(m->x0 + x));
            float *at = &m->cover[(size_t)y * (size_t)m->w + (size_t)x];
            if (share_x > 0.0)
                *at = fminf(1.0f, *at + (float)(share_x * share_y));
        }
    }
}

static void raster_line(void *self, const struct plot_point *points, int n, double width, bool dashed,
                        struct plot_rgb c)
{
    struct raster *r = self;
    double half = width / 2.0, on = PLOT_DASH_LENGTH * width, off = PLOT_DASH_SPACE * width;
    double left = INFINITY, top = INFINITY, right = -INFINITY, bottom = -INFINITY;
    for (int i = 0; i < n; i++) {
        left = fmin(left, points[i].x);
        right = fmax(right, points[i].x);
        top = fmin(top, points[i].y);
        bottom = fmax(bottom, points[i].y);
    }
    struct mask m;
    if (!mask_new(&m, r, left - half - 1.0, top - half - 1.0, right + half + 1.0, bottom + half + 1.0))
        return;
    double phase = 0.0; /* how far into the dash pattern the next segment starts */
    for (int i = 0; i + 1 < n; i++) {
        struct plot_point a = points[i], b = points[i + 1];
        if (!dashed) {
            mask_capsule(&m, a, b, half);
            continue;
        }
        double length = hypot(b.x - a.x, b.y - a.y), at = 0.0;
        while (at < length) {
            /* on to the next switch between dash and space, or the segment's end */
            bool drawing = phase < on;
            double to_switch = drawing ? on - phase : on + off - phase;
            bool switches = at + to_switch <= length;
            double end = switches ? at + to_switch : length;
            if (drawing) {
                struct plot_point from = {a.x + (b.x - a.x) * at / length, a.y + (b.y - a.y) * at / length};
                struct plot_point to = {a.x + (b.x - a.x) * end / length, a.y + (b.y - a.y) * end / length};
                mask_capsule(&m, from, to, half);
            }
            /* set exactly at a switch, so that rounding cannot stall it */
            phase = switches ? (drawing ? on : 0.0) : phase + (end - at);
            at = end;
        }
    }
    mask_paint(&m, r, c);
}

static void raster_dot(void *self, struct plot_point centre, double radius, struct plot_rgb c)
{
    struct mask m;
    if (!mask_new(&m, self, centre.x - radius - 1.0, centre.y - radius - 1.0, centre.x + radius + 1.0,
                  centre.y + radius + 1.0))
        return;
    mask_capsule(&m, centre, centre, radius);
    mask_paint(&m, self, c);
}

static void raster_rect(void *self, double x, double y, double width, double height, struct plot_rgb c)
{
    struct mask m;
    if (!mask_new(&m, self, x, y, x + width, y + height))
        return;
    mask_rect(&m, x, y, x + width, y + height);
    mask_paint(&m, self, c);
}

static void raster_text(void *self, double x, double y, const char *text, double size, enum plot_align align,
                        bool upright, struct plot_rgb c)
{
    struct raster *r = self;
    char safe[256];
    plot_font_safe(text, safe, sizeof safe);
    size_t room = strlen(safe) * 1024 + 64; /* stb_easy_font's guide: about 270 bytes a letter */
    float *quads = malloc(room);
    if (!quads)
        return;
    int n_quads = stb_easy_font_print(0.0f, 0.0f, safe, NULL, quads, (int)room);

    /* along the text u, across it v (down, for text that is not upright),
     * from an origin on whole pixels, so that strokes of whole pixels are
     * sharp */
    double scale = size / PLOT_FONT_CAP_HEIGHT, width = stb_easy_font_width(safe) * scale;
    double u0 = align == PLOT_ALIGN_LEFT ? 0.0 : align == PLOT_ALIGN_CENTRE ? -width / 2.0 : -width;
    double v0 = -size / 2.0;
    x = round(x + (upright ? v0 : u0));
    y = round(y + (upright ? -u0 : v0));
    /* the window the letters fall in: 10 units tall, descenders included */
    double along = width, across = 10.0 * scale;
    struct mask m;
    bool drawn = upright ? mask_new(&m, r, x - 1.0, y - along - 1.0, x + across + 1.0, y + 1.0)
                         : mask_new(&m, r, x - 1.0, y - 1.0, x + along + 1.0, y + across + 1.0);
    /* each quad is 4 vertices of (x, y, z, colour), 16 bytes each;
     * corners 0 and 2 are opposite */
    for (int q = 0; drawn && q < n_quads; q++) {
        const float *v = quads + q * 16;
        double u_a = v[0] * scale, v_a = v[1] * scale, u_b = v[8] * scale, v_b = v[9] * scale;
        if (upright) /* (u, v) -> (x + v, y - u) */
            mask_rect(&m, x + v_a, y - u_b, x + v_b, y - u_a);
        else
            mask_rect(&m, x + u_a, y + v_a, x + u_b, y + v_b);
    }
    if (drawn)
        mask_paint(&m, r, c);
    free(quads);
}

/* stb_image_write hands over the whole file at once */
struct png_sink {
    FILE *file;
    bool failed;
};

static void png_sink_write(void *context, void *data, int size)
{
    struct png_sink *sink = context;
    if (fwrite(data, 1, (size_t)size, sink->file) != (size_t)size)
        sink->failed = true;
}

bool plot_write_png(struct plot_picture what, int width, int height, const char *path)
{
    struct raster r = {malloc((size_t)width * (size_t)height * 3), width, height};
    if (!r.rgb) {
        errno = ENOMEM;
        return false;
    }
    const struct plot_canvas canvas = {&r, raster_line, raster_dot, raster_rect, raster_text};
    if (!plot_draw(what, width, height, &canvas)) {
        free(r.rgb);
        errno = ENOMEM;
        return false;
    }
    struct png_sink sink = {fopen(path, "wb"), false};
    if (!sink.file) {
        int error = errno;
        free(r.rgb);
        errno = error;
        return false;
    }
    int error = 0;
    errno = 0;
    if (!stbi_write_png_to_func(png_sink_write, &sink, width, height, 3, r.rgb, width * 3))
        error = ENOMEM; /* its only failure is an allocation */
    else if (sink.failed)
        error = errno ? errno : EIO; /* fwrite's reason */
    free(r.rgb);
    if (fclose(sink.file) != 0 && !error)
        error = errno ? errno : EIO;
    errno = error;
    return error == 0;
}
