/*
 * backends/cpu/cpu-conv.c — im2col and col2im, one task per (image,
 * channel) plane so that no two tasks write the same memory.
 */
#include <math.h>
#include <string.h>

#include "cpu-impl.h"

struct conv_job {
    const struct ember_conv_geom *g;
    const float *src;
    float *dst;
};

/* col[b, (ci, ki, kj), oy * ow + ox] = x[b, ci, oy * s - p + ki, ox * s - p + kj] */
static void im2col_planes(void *p, int64_t begin, int64_t end)
{
    const struct conv_job *j = p;
    const struct ember_conv_geom *g = j->g;
    int64_t hw = g->oh * g->ow;
    for (int64_t plane = begin; plane < end; plane++) { /* plane = b * c + ci */
        const float *x = j->src + plane * g->h * g->w;
        float *col = j->dst + plane * g->kh * g->kw * hw; /* rows (ci, .., ..) of image b */
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, col += hw)
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    int64_t iy = oy * g->stride - g->pad + ki;
                    float *row = col + oy * g->ow;
                    if (iy < 0 || iy >= g->h) {
                        memset(row, 0, (size_t)g->ow * sizeof *row);
                        continue;
                    }
                    const float *xrow = x + iy * g->w;
                    if (g->stride == 1) { /* zeros, a run of the input row, zeros */
                        int64_t lo = g->pad - kj, hi = g->w + g->pad - kj;
                        lo = lo < 0 ? 0 : lo > g->ow ? g->ow : lo;
                        hi = hi < lo ? lo : hi > g->ow ? g->ow : hi;
                        memset(row, 0, (size_t)lo * sizeof *row);
                        memcpy(row + lo, xrow + lo - g->pad + kj, (size_t)(hi - lo) * sizeof *row);
                        memset(row + hi, 0, (size_t)(g->ow - hi) * sizeof *row);
                        continue;
                    }
                    for (int64_t ox = 0; ox < g->ow; ox++) {
                        int64_t ix = ox * g->stride - g->pad + kj;
                        row[ox] = ix >= 0 && ix < g->w ? xrow[ix] : 0.0f;
                    }
                }
    }
}

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
