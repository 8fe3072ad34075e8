/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-conv.c — im2col and col2im, one task per (image,
 * channel) plane so that no two tasks write the same memory.
 *
 * A 3x3 convolution's columns are nine shifted copies of its input, and a
 * row of them is as short as the image is wide (28 floats for
 * Fashion-MNIST): a memcpy and two memsets per row cost more in calls than
 * in bytes. So the usual case, stride 1 with "same" padding (the output as
 * wide as the input), copies a whole shifted plane at once and then zeroes
 * the one or two columns that wrapped around from the neighbouring row;
 * other stride-1 rows are plain loops the compiler vectorises.
 *
 * conv_direct, the convolution without columns, is cpu-conv-direct.c.
 */
#include <math.h>
#include <string.h>

#include "cpu-impl.h"

struct conv_job {
    const struct ember_conv_geom *g;
    const float *src;
    float *dst;
};

/* The output columns ox whose input column ox * s - p + kj lies inside the
 * row, [lo, hi): the loops over them need no test per element. */
static void inside_columns(const struct ember_conv_geom *g, int64_t kj, int64_t *lo, int64_t *hi)
{
    int64_t first = g->pad - kj, last = g->w - 1 + g->pad - kj; /* ox * s must lie in [first, last] */
    *lo = first > 0 ? (first + g->stride - 1) / g->stride : 0;
    *hi = last < 0 ? 0 : last / g->stride + 1;
    *hi = *hi > g->ow ? g->ow : *hi;
    *lo = *lo > *hi ? *hi : *lo;
}

/* The same for rows: the output rows oy whose input row lies inside x */
static void inside_rows(const struct ember_conv_geom *g, int64_t ki, int64_t *lo, int64_t *hi)
{
    struct ember_conv_geom t = *g;
    t.w = g->h, t.ow = g->oh;
    inside_columns(&t, ki, lo, hi);
}

/* One row (ki, kj) of a plane's columns when the stride is 1 and the output
 * is as wide as the input: row oy of it is row oy + ki - p of x shifted by
 * kj - p, so the inside rows are one run of x's memory shifted by
 * (ki - p) * w + kj - p. Copied as one run, each row's first (or last)
 * |kj - p| entries hold the neighbouring row's ends: they are zeroed. */
static void im2col_same_width(const struct ember_conv_geom *g, const float *x, int64_t ki, int64_t kj,
                              float *row)
{
    int64_t w = g->w, lo, hi, shift = kj - g->pad;
    inside_rows(g, ki, &lo, &hi);
    for (int64_t i = 0; i < lo * w; i++)
        row[i] = 0.0f;
    /* positions [lo * w, hi * w) read x at + (ki - p) * w + shift; the run
     * is trimmed by |shift| at the end that would leave x (those positions
     * are border columns, zeroed below) */
    int64_t first = lo * w + (shift < 0 ? -shift : 0), last = hi * w - (shift > 0 ? shift : 0);
    int64_t at = (ki - g->pad) * w + shift;
    for (int64_t i = first; i < last; i++)
        row[i] = x[i + at];
    int64_t left = shift < 0 ? (-shift < w ? -shift : w) : 0, right = shift > 0 ? (shift < w ? shift : w) : 0;
    for (int64_t oy = lo; oy < hi; oy++) {
        float *r = row + oy * w;
        for (int64_t ox = 0; ox < left; ox++)
            r[ox] = 0.0f;
        for (int64_t ox = w - right; ox < w; ox++)
            r[ox] = 0.0f;
    }
    for (int64_t i = hi * w; i < g->oh * w; i++)
        row[i] = 0.0f;
}

/* col[b, (ci, ki, kj), oy * ow + ox] = x[b, ci, oy * s - p + ki, ox * s - p + kj] */
static void im2col_planes(void *p, int64_t begin, int64_t end)
{
    const struct conv_job *j = p;
    const struct ember_conv_geom *g = j->g;
    int64_t hw = g->oh * g->ow, s = g->stride;
    bool same_width = s == 1 && g->ow == g->w;
    for (int64_t plane = begin; plane < end; plane++) { /* plane = b * c + ci */
        const float *x = j->src + plane * g->h * g->w;
        float *col = j->dst + plane * g->kh * g->kw * hw; /* rows (ci, .., ..) of image b */
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, col += hw) {
                if (same_width) {
                    im2col_same_width(g, x, ki, kj, col);
                    continue;
                }
                int64_t lo, hi; /* zeros, the inside run, zeros */
                inside_columns(g, kj, &lo, &hi);
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    int64_t iy = oy * s - g->pad + ki;
                    float *row = col + oy * g->ow;
                    bool inside = iy >= 0 && iy < g->h;
                    int64_t at = iy * g->w - g->pad + kj; /* x[at + ox * s] is output column ox's input */
                    for (int64_t ox = 0; ox < (inside ? lo : g->ow); ox++)
                        row[ox] = 0.0f;
                    if (!inside)
                        continue;
                    if (s == 1)
                        for (int64_t ox = lo; ox < hi; ox++)
                            row[ox] = x[at + ox];
                    else
                        for (int64_t ox = lo; ox < hi; ox++)
                            row[ox] = x[at + ox * s];
                    for (int64_t ox = hi; ox < g->ow; ox++)
                        row[ox] = 0.0f;
                }
            }
    }
}

/* dx[b, ci] = the sum of col entries im2col read from each position; the
 * same additions in the same order as one pass over every column with a
 * bounds test, without the test */
static void col2im_planes(void *p, int64_t begin, int64_t end)
{
    const struct conv_job *j = p;
    const struct ember_conv_geom *g = j->g;
    int64_t hw = g->oh * g->ow, s = g->stride;
    for (int64_t plane = begin; plane < end; plane++) {
        float *dx = j->dst + plane * g->h * g->w;
        const float *col = j->src + plane * g->kh * g->kw * hw;
        memset(dx, 0, (size_t)(g->h * g->w) * sizeof *dx);
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, col += hw) {
                int64_t lo, hi;
                inside_columns(g, kj, &lo, &hi);
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    int64_t iy = oy * s - g->pad + ki;
                    if (iy < 0 || iy >= g->h)
                        continue;
                    const float *row = col + oy * g->ow;
                    int64_t at = iy * g->w - g->pad + kj; /* dx[at + ox * s] is x's column ox * s - p + kj */
                    if (s == 1)
                        for (int64_t ox = lo; ox < hi; ox++)
                            dx[at + ox] += row[ox];
                    else
                        for (int64_t ox = lo; ox < hi; ox++)
                            dx[at + ox * s] += row[ox];
                }
            }
    }
}

ember_status cpu_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    struct cpu_device *d = dev;
    struct conv_job j = {.g = g, .src = cpu_f32(x), .dst = cpu_f32(col)};
    cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->kh * g->kw * g->oh * g->ow), im2col_planes, &j);
    return EMBER_OK;
}

ember_status cpu_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct conv_job j = {.g = g, .src = cpu_f32(col), .dst = cpu_f32(dx)};
    cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->kh * g->kw * g->oh * g->ow), col2im_planes, &j);
    return EMBER_OK;
}
