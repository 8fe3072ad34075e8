/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-conv-grouped.c — conv_grouped on the CPU: a convolution
 * whose output channels each see only their group's few input channels
 * (a MobileNet's depthwise layers: one), summed straight from x, w and dy
 * a plane at a time. With one channel a group the columns of im2col would
 * be nine times the input for a product of a 1 x 9 by a 9 x positions
 * matrix; here each tap is one pass along a row of x.
 *
 *   forward      y[b, o] (+)= the sum over its group's channels ci and the
 *                taps (ky, kx) of w[o, ci, ky, kx] times x[b, ci] shifted
 *   input grad   dx[b, ci] = the sum over the outputs o of ci's group and
 *                the taps of w[o, ci, ky, kx] times dy[b, o] shifted back
 *   weight grad  dw[o, ci, ky, kx] = the sum over the images (of a slice of
 *                the batch, as conv_direct's) and positions of dy[b, o]
 *                times x[b, ci] shifted
 *
 * A task owns whole planes of what it writes (y's, dx's, or an output
 * channel's weights), so no two tasks write the same memory, and every sum
 * runs in one fixed order: the same bits on any number of threads. At
 * stride 1 the innermost loops run along contiguous rows, which the
 * compiler vectorises.
 */
#include <string.h>

#include "cpu-impl.h"

struct grouped {
    const struct ember_conv_job *c;
    const float *x, *w, *dy;
    float *out;          /* y, dx or dw, as the pass says */
    int64_t cg, ocg;     /* input and output channels a group */
    int64_t slices, per; /* the weight gradient's slices of the batch, and images a slice */
};

/* The outputs ox of a row whose tap kx lands inside x, ix = ox * stride -
 * pad + kx in [0, w): [*first, *end) */
static void tap_columns(const struct ember_conv_geom *g, int64_t kx, int64_t *first, int64_t *end)
{
    int64_t lead = g->pad - kx; /* ox * stride >= lead */
    *first = lead > 0 ? (lead + g->stride - 1) / g->stride : 0;
    int64_t last = (g->w - 1 + g->pad - kx); /* ox * stride <= last */
    *end = last < 0 ? 0 : last / g->stride + 1;
    *end = *end > g->ow ? g->ow : *end;
}

/* One input channel's plane and one output channel's through their kh x kw
 * weights w. Forward (`out` y, `in` x): y += the sum over the taps of the
 * weight times x shifted. Adjoint (`out` dx, `in` dy): dx += each tap's
 * weight times dy, spread back where the forward pass read. */
static void add_taps(const struct ember_conv_geom *g, const float *w, float *out, const float *in,
                     bool adjoint)
{
    int64_t s = g->stride;
    for (int64_t ky = 0; ky < g->kh; ky++)
        for (int64_t kx = 0; kx < g->kw; kx++) {
            float wt = w[ky * g->kw + kx];
            int64_t first, stop, shift = kx - g->pad; /* ix = ox * s + shift */
            tap_columns(g, kx, &first, &stop);
            for (int64_t oy = 0; oy < g->oh; oy++) {
                int64_t iy = oy * s - g->pad + ky;
                if (iy < 0 || iy >= g->h)
                    continue;
                if (!adjoint) {
                    float *restrict yrow = out + oy * g->ow;
                    const float *restrict xrow = in + iy * g->w;
                    if (s == 1)
                        for (int64_t ox = first; ox < stop; ox++)
                            yrow[ox] += wt * xrow[ox + shift];
                    else
                        for (int64_t ox = first; ox < stop; ox++)
                            yrow[ox] += wt * xrow[ox * s + shift];
                } else {
                    float *restrict dxrow = out + iy * g->w;
                    const float *restrict dyrow = in + oy * g->ow;
                    if (s == 1)
                        for (int64_t ox = first; ox < stop; ox++)
                            dxrow[ox + shift] += wt * dyrow[ox];
                    else
                        for (int64_t ox = first; ox < stop; ox++)
                            dxrow[ox * s + shift] += wt * dyrow[ox];
                }
            }
        }
}

/* y[b, o] for the planes [begin, end) of (b, o) */
static void forward_planes(void *arg, int64_t begin, int64_t end)
{
    const struct grouped *j = arg;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, taps = g->kh * g->kw;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t b = plane / oc, o = plane % oc, ci0 = o / j->ocg * j->cg;
        float *y = j->out + plane * g->oh * g->ow;
        if (j->c->beta == 0.0f)
            memset(y, 0, (size_t)(g->oh * g->ow) * sizeof *y);
        for (int64_t ci = 0; ci < j->cg; ci++)
            add_taps(g, j->w + (o * j->cg + ci) * taps, y, j->x + (b * g->c + ci0 + ci) * g->h * g->w, false);
    }
}

/* dx[b, ci] for the planes [begin, end) of (b, ci) */
static void input_grad_planes(void *arg, int64_t begin, int64_t end)
{
    const struct grouped *j = arg;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, taps = g->kh * g->kw;
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t b = plane / g->c, ci = plane % g->c, group = ci / j->cg, cl = ci % j->cg;
        float *dx = j->out + plane * g->h * g->w;
        memset(dx, 0, (size_t)(g->h * g->w) * sizeof *dx);
        for (int64_t o = group * j->ocg; o < (group + 1) * j->ocg; o++)
            add_taps(g, j->w + (o * j->cg + cl) * taps, dx, j->dy + (b * oc + o) * g->oh * g->ow, true);
    }
}

/* dw[o] (or slice s's partial sums of it) for the units [begin, end) of
 * (slice, o) */
static void weight_grad_units(void *arg, int64_t begin, int64_t end)
{
    const struct grouped *j = arg;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, s = g->stride, taps = g->kh * g->kw;
    for (int64_t unit = begin; unit < end; unit++) {
        int64_t slice = unit / oc, o = unit % oc, ci0 = o / j->ocg * j->cg;
        int64_t b0 = slice * j->per, b1 = b0 + j->per < g->n ? b0 + j->per : g->n;
        float *dw = j->out + unit * j->cg * taps;
        bool add = j->slices == 1 && j->c->beta != 0.0f;
        for (int64_t ci = 0; ci < j->cg; ci++)
            for (int64_t ky = 0; ky < g->kh; ky++)
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    int64_t first, stop, shift = kx - g->pad; /* ix = ox * s + shift */
                    tap_columns(g, kx, &first, &stop);
                    float sum = 0.0f;
                    for (int64_t b = b0; b < b1; b++) {
                        const float *x = j->x + (b * g->c + ci0 + ci) * g->h * g->w;
                        const float *dy = j->dy + (b * oc + o) * g->oh * g->ow;
                        for (int64_t oy = 0; oy < g->oh; oy++) {
                            int64_t iy = oy * s - g->pad + ky;
                            if (iy < 0 || iy >= g->h)
                                continue;
                            const float *dyrow = dy + oy * g->ow, *xrow = x + iy * g->w;
                            float row = 0.0f;
                            for (int64_t ox = first; ox < stop; ox++)
                                row += dyrow[ox] * xrow[ox * s + shift];
                            sum += row;
                        }
                    }
                    float *at = dw + (ci * g->kh + ky) * g->kw + kx;
                    *at = add ? *at + sum : sum;
                }
    }
}

ember_status cpu_conv_grouped(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                              ember_ptr y)
{
    struct cpu_device *d = dev;
    const struct ember_conv_geom *g = &c->g;
    int64_t groups = c->groups > 1 ? c->groups : 1;
    struct grouped j = {.c = c, .cg = g->c / groups, .ocg = c->oc / groups};
    j.slices = c->pass == EMBER_CONV_WEIGHT_GRAD && c->slices > 1 ? c->slices : 1;
    j.per = (g->n + j.slices - 1) / j.slices;
    int64_t taps_work = j.cg * g->kh * g->kw;
    switch (c->pass) {
    case EMBER_CONV_FORWARD:
        j.x = cpu_f32(x), j.w = cpu_f32(w), j.out = cpu_f32(y);
        cpu_parallel_for(d->pool, g->n * c->oc, cpu_plane_grain(g->oh * g->ow * taps_work), forward_planes,
                         &j);
        break;
    case EMBER_CONV_INPUT_GRAD:
        j.out = cpu_f32(x), j.w = cpu_f32(w), j.dy = cpu_f32(y);
        cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->oh * g->ow * j.ocg * g->kh * g->kw),
                         input_grad_planes, &j);
        break;
    default:
        j.x = cpu_f32(x), j.out = cpu_f32(w), j.dy = cpu_f32(y);
        cpu_parallel_for(d->pool, j.slices * c->oc, cpu_plane_grain(j.per * g->oh * g->ow * taps_work),
                         weight_grad_units, &j);
    }
    return EMBER_OK;
}
