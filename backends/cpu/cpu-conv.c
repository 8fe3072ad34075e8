/*
 * backends/cpu/cpu-conv.c — im2col, col2im and max-pooling, one task per
 * (image, channel) plane so that no two tasks write the same memory.
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

/* dx[b, ci] = the sum of col entries im2col read from each position */
static void col2im_planes(void *p, int64_t begin, int64_t end)
{
    const struct conv_job *j = p;
    const struct ember_conv_geom *g = j->g;
    int64_t hw = g->oh * g->ow;
    for (int64_t plane = begin; plane < end; plane++) {
        float *dx = j->dst + plane * g->h * g->w;
        const float *col = j->src + plane * g->kh * g->kw * hw;
        memset(dx, 0, (size_t)(g->h * g->w) * sizeof *dx);
        for (int64_t ki = 0; ki < g->kh; ki++)
            for (int64_t kj = 0; kj < g->kw; kj++, col += hw)
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    int64_t iy = oy * g->stride - g->pad + ki;
                    if (iy < 0 || iy >= g->h)
                        continue;
                    const float *row = col + oy * g->ow;
                    float *dxrow = dx + iy * g->w;
                    for (int64_t ox = 0; ox < g->ow; ox++) {
                        int64_t ix = ox * g->stride - g->pad + kj;
                        if (ix >= 0 && ix < g->w)
                            dxrow[ix] += row[ox];
                    }
                }
    }
}

static int64_t plane_grain(int64_t work_per_plane)
{
    return 16384 / (work_per_plane + 1) + 1;
}

ember_status cpu_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    struct cpu_device *d = dev;
    struct conv_job j = {.g = g, .src = cpu_f32(x), .dst = cpu_f32(col)};
    cpu_parallel_for(d->pool, g->n * g->c, plane_grain(g->kh * g->kw * g->oh * g->ow), im2col_planes, &j);
    return EMBER_OK;
}

ember_status cpu_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct conv_job j = {.g = g, .src = cpu_f32(col), .dst = cpu_f32(dx)};
    cpu_parallel_for(d->pool, g->n * g->c, plane_grain(g->kh * g->kw * g->oh * g->ow), col2im_planes, &j);
    return EMBER_OK;
}

struct pool_job {
    const struct ember_pool_geom *g;
    const float *src;
    float *dst;
    int32_t *argmax;
};

/* The exact rule for one window: the first maximum wins ties, and the first
 * NaN wins over everything, as in PyTorch. */
static int64_t window_argmax(const float *x, int64_t w, int64_t first, int64_t k)
{
    int64_t arg = first;
    for (int64_t ky = 0; ky < k; ky++)
        for (int64_t kx = 0; kx < k; kx++) {
            int64_t at = first + ky * w + kx;
            if (x[arg] == x[arg] && (x[at] > x[arg] || x[at] != x[at]))
                arg = at;
        }
    return arg;
}

/* One output row of the common 2x2, stride-2 window. Random data would make
 * every comparison a coin toss for the branch predictor, so nothing here
 * branches: maxima by maxss-style selects, the index by arithmetic on the
 * 0/1 results of the comparisons. A later element wins only when strictly
 * larger, so the first maximum wins ties. The caller takes the exact way
 * for rows that hold a NaN. */
static void pool2_row(const float *restrict top, const float *restrict bottom, int32_t w, int32_t base,
                      int32_t ow, float *restrict y, int32_t *restrict argmax)
{
    for (int32_t ox = 0; ox < ow; ox++) {
        float a = top[2 * ox], b = top[2 * ox + 1], c = bottom[2 * ox], d = bottom[2 * ox + 1];
        float best_top = b > a ? b : a, best_bottom = d > c ? d : c;
        int32_t right_top = b > a, right_bottom = d > c, lower = best_bottom > best_top;
        y[ox] = lower ? best_bottom : best_top;
        argmax[ox] = base + 2 * ox + lower * (w + right_bottom) + (1 - lower) * right_top;
    }
}

/* whether a run holds a NaN: on the bits, so that the loop vectorises */
static bool has_nan(const float *x, int64_t n)
{
    uint32_t nan = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &x[i], sizeof bits);
        nan |= (bits & 0x7fffffffu) > 0x7f800000u;
    }
    return nan != 0;
}

static void maxpool_forward_planes(void *p, int64_t begin, int64_t end)
{
    const struct pool_job *j = p;
    const struct ember_pool_geom *g = j->g;
    int64_t w = g->w;
    for (int64_t plane = begin; plane < end; plane++) {
        const float *x = j->src + plane * g->h * w;
        float *y = j->dst + plane * g->oh * g->ow;
        int32_t *argmax = j->argmax + plane * g->oh * g->ow;
        for (int64_t oy = 0; oy < g->oh; oy++) {
            int64_t row = oy * g->stride * w;
            if (g->k == 2 && g->stride == 2 && !has_nan(x + row, 2 * w)) {
                pool2_row(x + row, x + row + w, (int32_t)w, (int32_t)row, (int32_t)g->ow, y + oy * g->ow,
                          argmax + oy * g->ow);
                continue;
            }
            for (int64_t ox = 0; ox < g->ow; ox++) {
                int64_t arg = window_argmax(x, w, row + ox * g->stride, g->k);
                y[oy * g->ow + ox] = x[arg];
                argmax[oy * g->ow + ox] = (int32_t)arg;
            }
        }
    }
}

static void maxpool_backward_planes(void *p, int64_t begin, int64_t end)
{
    const struct pool_job *j = p;
    const struct ember_pool_geom *g = j->g;
    int64_t outs = g->oh * g->ow;
    for (int64_t plane = begin; plane < end; plane++) {
        const float *dy = j->src + plane * outs;
        const int32_t *arg = j->argmax + plane * outs;
        float *dx = j->dst + plane * g->h * g->w;
        memset(dx, 0, (size_t)(g->h * g->w) * sizeof *dx);
        for (int64_t o = 0; o < outs; o++)
            dx[arg[o]] += dy[o];
    }
}

ember_status cpu_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                 ember_ptr argmax)
{
    struct cpu_device *d = dev;
    struct pool_job j = {.g = g, .src = cpu_f32(x), .dst = cpu_f32(y), .argmax = cpu_i32(argmax)};
    cpu_parallel_for(d->pool, g->n * g->c, plane_grain(g->oh * g->ow * g->k * g->k), maxpool_forward_planes, &j);
    return EMBER_OK;
}

ember_status cpu_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy, ember_ptr argmax,
                                  ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct pool_job j = {.g = g, .src = cpu_f32(dy), .dst = cpu_f32(dx), .argmax = cpu_i32(argmax)};
    cpu_parallel_for(d->pool, g->n * g->c, plane_grain(g->h * g->w), maxpool_backward_planes, &j);
    return EMBER_OK;
}
