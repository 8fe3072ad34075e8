/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-winograd-driver.c — the conv_winograd primitive on the
 * CPU: for either tile size (cpu-winograd.c's F(2x2, 3x3), cpu-winograd4.c's
 * F(4x4, 3x3); cpu-winograd-impl.h), the filters' transforms, the groups
 * of images, the batched products and the order of the passes, forward and
 * both gradients. cpu-winograd.c says why the arithmetic is what it is.
 *
 * Work goes in groups of images whose transformed tiles take about 4 MiB,
 * so that the products read them while they are still in the cache; the
 * buffer is the device's, kept from call to call (no malloc per call).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu-winograd-impl.h"
#include "platform.h"

#define GROUP_FLOATS ((int64_t)1 << 20) /* transformed tiles of one group of images */

/* w (oc, c, 3, 3) -> u (16, oc, c): item = co * c + ci. With `flipped`,
 * the input gradient's filters instead, the job's pass being the forward
 * pass over dy (its c the layer's oc and its oc the layer's c): u (16, c,
 * oc) in the layer's terms from w turned 180 degrees, item = ci * oc + co. */
struct filter_job {
    const struct wino *j;
    bool flipped;
};

static void transform_filters(void *p, int64_t begin, int64_t end)
{
    const struct filter_job *f = p;
    const struct wino *j = f->j;
    int64_t oc = j->c->oc, c = j->c->g.c, count = oc * c;
    for (int64_t item = begin; item < end; item++) {
        float g[9], u[36];
        if (f->flipped) {
            const float *w = j->src + ((item % c) * oc + item / c) * 9; /* w[co, ci] in the layer's terms */
            for (int k = 0; k < 9; k++)
                g[k] = w[8 - k];
        } else
            memcpy(g, j->src + item * 9, sizeof g);
        j->kind->filter(g, u);
        for (int pos = 0; pos < j->kind->positions; pos++)
            j->u[pos * count + item] = u[pos];
    }
}

/* u (positions, oc, c) -> dw (oc, c, 3, 3), + beta * dw */
static void transform_filter_grads(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    int64_t count = j->c->oc * j->c->g.c;
    bool add = j->c->beta != 0.0f;
    for (int64_t item = begin; item < end; item++) {
        float in[36], dg[9];
        for (int pos = 0; pos < j->kind->positions; pos++)
            in[pos] = j->u[pos * count + item];
        j->kind->filter_grad(in, dg);
        float *dw = j->dst + item * 9;
        for (int k = 0; k < 9; k++)
            dw[k] = add ? dw[k] + dg[k] : dg[k];
    }
}

/* ------------------------------------------------------------ the call */

static ember_ptr host_ptr(float *p) { return (ember_ptr){.buf = p, .off = 0}; }

/* The 16 products of a group, one batched call: per position,
 *   forward      m = u (oc, c) @ v (c, tiles)
 *   weight grad  u += m (oc, tiles) @ v^T (tiles, c) */
static ember_status multiply(struct cpu_device *d, const struct wino *j)
{
    int64_t oc = j->c->oc, c = j->c->g.c, tiles = j->tile_count;
    struct ember_gemm gm = {.batch = j->kind->positions, .alpha = 1.0f};
    if (j->c->pass == EMBER_CONV_WEIGHT_GRAD) {
        gm.trans_b = true, gm.m = oc, gm.n = c, gm.k = tiles, gm.lda = tiles, gm.ldb = tiles, gm.ldc = c;
        gm.stride_a = oc * tiles, gm.stride_b = c * tiles, gm.stride_c = oc * c, gm.beta = 1.0f;
        return cpu_sgemm(d, &gm, host_ptr(j->m), host_ptr(j->v), host_ptr(j->u));
    }
    gm.m = oc, gm.n = tiles, gm.k = c, gm.lda = c, gm.ldb = tiles, gm.ldc = tiles;
    gm.stride_a = oc * c, gm.stride_b = c * tiles, gm.stride_c = oc * tiles;
    return cpu_sgemm(d, &gm, host_ptr(j->u), host_ptr(j->v), host_ptr(j->m));
}

/* images per group, and the device's buffer holding u, v and m for one */
static ember_status workspace(struct cpu_device *d, const struct ember_conv_job *c, struct wino *j,
                              int64_t *group)
{
    const struct ember_conv_geom *g = &c->g;
    const struct wino_kind *kind = c->tile == 4 ? &cpu_winograd_f4 : &cpu_winograd_f2;
    int64_t positions = kind->positions;
    j->tiles_w = (g->ow + kind->out - 1) / kind->out;
    j->tiles = (g->oh + kind->out - 1) / kind->out * j->tiles_w;
    int64_t per_image = positions * (g->c + c->oc) * j->tiles;
    *group = GROUP_FLOATS / per_image;
    *group = *group < 1 ? 1 : *group > g->n ? g->n : *group;
    /* u, v and m, each starting on a 64-byte line */
    size_t nu = (size_t)(positions * c->oc * g->c + 15) & ~(size_t)15, ntiles = (size_t)(*group * j->tiles);
    size_t nv = ((size_t)(positions * g->c) * ntiles + 15) & ~(size_t)15,
           nm = (size_t)(positions * c->oc) * ntiles;
    if (cpu_scratch(d, nu + nv + nm, "conv_winograd") != EMBER_OK)
        return EMBER_ERR_NOMEM;
    j->c = c, j->kind = kind;
    j->u = d->scratch, j->v = j->u + nu, j->m = j->v + nv;
    return EMBER_OK;
}

/* The forward pass, y = x (*) w + beta * y, or, with the filters flipped,
 * the input gradient: dx = dy (*) w turned 180 degrees and transposed,
 * padded by 2 - pad (every dy entry that read x[p] meets the filter tap
 * that read it). */
static ember_status forward(struct cpu_device *d, const struct ember_conv_job *c, const float *x,
                            const float *w, float *y, bool flipped)
{
    struct wino j;
    int64_t group;
    ember_status st = workspace(d, c, &j, &group);
    if (st != EMBER_OK)
        return st;
    struct filter_job f = {.j = &j, .flipped = flipped};
    j.src = w;
    cpu_parallel_for(d->pool, c->oc * c->g.c, 4096, transform_filters, &f);
    int64_t grain = cpu_plane_grain(j.kind->positions * j.tiles);
    for (int64_t img0 = 0; img0 < c->g.n && st == EMBER_OK; img0 += group) {
        int64_t images = c->g.n - img0 < group ? c->g.n - img0 : group;
        j.img0 = img0, j.tile_count = images * j.tiles, j.src = x, j.dst = y;
        cpu_parallel_for(d->pool, images * c->g.c, grain, cpu_winograd_inputs, &j);
        st = multiply(d, &j);
        if (st == EMBER_OK)
            cpu_parallel_for(d->pool, images * c->oc, grain, cpu_winograd_outputs, &j);
    }
    return st;
}

/* dw = G^T (sum over the tiles of dM V^T) G + beta * dw */
static ember_status weight_grad(struct cpu_device *d, const struct ember_conv_job *c, const float *x,
                                const float *dy, float *dw)
{
    struct wino j;
    int64_t group;
    ember_status st = workspace(d, c, &j, &group);
    if (st != EMBER_OK)
        return st;
    memset(j.u, 0, (size_t)(j.kind->positions * c->oc * c->g.c) * sizeof *j.u);
    int64_t grain = cpu_plane_grain(j.kind->positions * j.tiles);
    for (int64_t img0 = 0; img0 < c->g.n && st == EMBER_OK; img0 += group) {
        int64_t images = c->g.n - img0 < group ? c->g.n - img0 : group;
        j.img0 = img0, j.tile_count = images * j.tiles;
        j.src = x;
        cpu_parallel_for(d->pool, images * c->g.c, grain, cpu_winograd_inputs, &j);
        j.src = dy;
        cpu_parallel_for(d->pool, images * c->oc, grain, cpu_winograd_output_grads, &j);
        st = multiply(d, &j);
    }
    if (st == EMBER_OK) {
        j.dst = dw;
        cpu_parallel_for(d->pool, c->oc * c->g.c, 4096, transform_filter_grads, &j);
    }
    return st;
}

ember_status cpu_conv_winograd(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                               ember_ptr y)
{
    struct cpu_device *d = dev;
    const struct ember_conv_geom *g = &c->g;
    if (g->kh != 3 || g->kw != 3 || g->stride != 1 || g->pad < 0 || g->pad > 2 ||
        g->oh != g->h + 2 * g->pad - 2 || g->ow != g->w + 2 * g->pad - 2 || g->oh < 1 || g->ow < 1 ||
        (c->tile != 2 && c->tile != 4))
        return d->host.fail(
            d->host.ctx, EMBER_ERR_ARG,
            "conv_winograd takes 3x3 kernels at stride 1 with padding 0 to 2, in tiles of 2 or 4; "
            "got %lldx%lld, stride %lld, padding %lld, tiles of %d",
            (long long)g->kh, (long long)g->kw, (long long)g->stride, (long long)g->pad, c->tile);
    switch (c->pass) {
    case EMBER_CONV_FORWARD:
        return g->n ? forward(d, c, cpu_f32(x), cpu_f32(w), cpu_f32(y), false) : EMBER_OK;
    case EMBER_CONV_INPUT_GRAD: {
        struct ember_conv_job back = {.g = {.n = g->n,
                                            .c = c->oc,
                                            .h = g->oh,
                                            .w = g->ow,
                                            .kh = 3,
                                            .kw = 3,
                                            .stride = 1,
                                            .pad = 2 - g->pad,
                                            .oh = g->h,
                                            .ow = g->w},
                                      .oc = g->c,
                                      .pass = EMBER_CONV_FORWARD,
                                      .beta = 0.0f,
                                      .tile = c->tile};
        return g->n ? forward(d, &back, cpu_f32(y), cpu_f32(w), cpu_f32(x), true) : EMBER_OK;
    }
    case EMBER_CONV_WEIGHT_GRAD: return weight_grad(d, c, cpu_f32(x), cpu_f32(y), cpu_f32(w));
    }
    return EMBER_OK;
}
