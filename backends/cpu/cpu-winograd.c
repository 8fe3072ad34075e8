/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-winograd.c — 3x3 stride-1 convolutions by Winograd's
 * minimal filtering F(2x2, 3x3), forward and both gradients.
 *
 * Each 2x2 block of the output is computed from the 4x4 block of the
 * padded input under it (Lavin and Gray, "Fast Algorithms for
 * Convolutional Neural Networks", 2015):
 *
 *   Y = A^T [ (G g G^T) . (B^T d B) ] A
 *
 * g the 3x3 filter, d the 4x4 input tile, . the elementwise product, summed
 * over input channels. Summed over channels, the elementwise product is,
 * at each of the 16 tile positions, a matrix product: (oc x c) transformed
 * filters by (c x tiles) transformed inputs. So a convolution is three
 * passes: transform the inputs (additions only), 16 OpenBLAS sgemms (one
 * batched call, cpu-gemm.c, threads split the 16), transform the products
 * back. 16 multiplications per 4 outputs against the direct 36: 2.25
 * times less arithmetic, the only way past a compute bound the products
 * already run near (docs/benchmarks.md).
 *
 * The input gradient is itself a forward pass: dy convolved with the
 * filters turned 180 degrees and transposed (oc in, c out), padded by
 * 2 - pad, which is why the padding must be 2 or less. (The forward pass's
 * adjoint, dx += B (U^T A dY A^T) B^T tile by tile, is the same arithmetic
 * but adds overlapping tiles into dx, a scatter the forward pass never
 * needs; this way the input gradient runs the forward pass's loops.) The
 * weight gradient is the forward pass's adjoint, term by term:
 * dU = (A dY A^T) V^T summed over the tiles, dw = G^T dU G.
 *
 * Work goes in groups of images whose transformed tiles take about 4 MiB,
 * so that the products read them while they are still in the cache; the
 * buffer is the device's, kept from call to call (no malloc per call).
 * The transforms run one task per (image, channel) plane on the pool.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu-winograd-impl.h"
#include "platform.h"

#define POSITIONS    16                 /* a 4x4 transformed tile */
#define GROUP_FLOATS ((int64_t)1 << 20) /* transformed tiles of one group of images */

/* ------------------------------------------------------- the transforms */

/* u = G g G^T, g a 3x3 filter; G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1] */
static void filter_tile(const float *g, float *u)
{
    float r[12]; /* G g, 4x3 */
    for (int j = 0; j < 3; j++) {
        r[0 * 3 + j] = g[0 * 3 + j];
        r[1 * 3 + j] = 0.5f * (g[0 * 3 + j] + g[1 * 3 + j] + g[2 * 3 + j]);
        r[2 * 3 + j] = 0.5f * (g[0 * 3 + j] - g[1 * 3 + j] + g[2 * 3 + j]);
        r[3 * 3 + j] = g[2 * 3 + j];
    }
    for (int i = 0; i < 4; i++) {
        const float *ri = r + i * 3;
        u[i * 4 + 0] = ri[0];
        u[i * 4 + 1] = 0.5f * (ri[0] + ri[1] + ri[2]);
        u[i * 4 + 2] = 0.5f * (ri[0] - ri[1] + ri[2]);
        u[i * 4 + 3] = ri[2];
    }
}

/* dg = G^T x G, the adjoint of filter_tile */
static void filter_tile_adjoint(const float *x, float *dg)
{
    float r[12]; /* G^T x, 3x4 */
    for (int j = 0; j < 4; j++) {
        float half_sum = 0.5f * (x[1 * 4 + j] + x[2 * 4 + j]);
        r[0 * 4 + j] = x[0 * 4 + j] + half_sum;
        r[1 * 4 + j] = 0.5f * (x[1 * 4 + j] - x[2 * 4 + j]);
        r[2 * 4 + j] = half_sum + x[3 * 4 + j];
    }
    for (int i = 0; i < 3; i++) {
        const float *ri = r + i * 4;
        float half_sum = 0.5f * (ri[1] + ri[2]);
        dg[i * 3 + 0] = ri[0] + half_sum;
        dg[i * 3 + 1] = 0.5f * (ri[1] - ri[2]);
        dg[i * 3 + 2] = half_sum + ri[3];
    }
}

/* ------------------------------------------------ the passes over planes
 * (cpu-winograd-impl.h says how they walk) */

/* rows[i][k] = the plane's row y0 + i, column x0 + k, 0 outside it, for
 * i < count and k < len */
void cpu_winograd_rows(const float *plane, int64_t h, int64_t w, int64_t y0, int64_t x0, int count,
                       int64_t len, float rows[][WINO_SPAN])
{
    for (int i = 0; i < count; i++) {
        int64_t yy = y0 + i;
        if (yy < 0 || yy >= h) {
            memset(rows[i], 0, (size_t)len * sizeof rows[i][0]);
            continue;
        }
        const float *row = plane + yy * w;
        for (int64_t k = 0; k < len; k++) {
            int64_t xx = x0 + k;
            rows[i][k] = xx >= 0 && xx < w ? row[xx] : 0.0f;
        }
    }
}

/* x planes of the group -> v (16, c, tiles): plane = image * c + ci */
CPU_WIDEST_VECTORS static void transform_inputs(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t stride = g->c * j->tile_count, tiles_h = j->tiles / j->tiles_w;
    float rows[4][WINO_SPAN];
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / g->c, ci = plane % g->c;
        const float *x = j->src + ((j->img0 + img) * g->c + ci) * g->h * g->w;
        float *v = j->v + ci * j->tile_count + img * j->tiles;
        for (int64_t ty = 0; ty < tiles_h; ty++)
            for (int64_t tx0 = 0; tx0 < j->tiles_w; tx0 += WINO_BLOCK) {
                int64_t nb = j->tiles_w - tx0 < WINO_BLOCK ? j->tiles_w - tx0 : WINO_BLOCK;
                cpu_winograd_rows(x, g->h, g->w, 2 * ty - g->pad, 2 * tx0 - g->pad, 4, 2 * nb + 2, rows);
                float *out = v + ty * j->tiles_w + tx0;
                WINO_ACROSS_TILES
                for (int64_t t = 0; t < nb; t++) {
                    float q[4][4]; /* d B, row by row */
                    for (int i = 0; i < 4; i++) {
                        const float *r = rows[i] + 2 * t;
                        q[i][0] = r[0] - r[2];
                        q[i][1] = r[1] + r[2];
                        q[i][2] = r[2] - r[1];
                        q[i][3] = r[1] - r[3];
                    }
                    for (int k = 0; k < 4; k++) { /* B^T (d B) */
                        out[(0 * 4 + k) * stride + t] = q[0][k] - q[2][k];
                        out[(1 * 4 + k) * stride + t] = q[1][k] + q[2][k];
                        out[(2 * 4 + k) * stride + t] = q[2][k] - q[1][k];
                        out[(3 * 4 + k) * stride + t] = q[1][k] - q[3][k];
                    }
                }
            }
    }
}

/* m (16, oc, tiles) -> y planes of the group, + beta * y: plane = image * oc + co */
CPU_WIDEST_VECTORS static void transform_outputs(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, stride = oc * j->tile_count, tiles_h = j->tiles / j->tiles_w;
    bool add = j->c->beta != 0.0f;
    float rows[2][WINO_SPAN];
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / oc, co = plane % oc;
        float *y = j->dst + ((j->img0 + img) * oc + co) * g->oh * g->ow;
        const float *m = j->m + co * j->tile_count + img * j->tiles;
        for (int64_t ty = 0; ty < tiles_h; ty++)
            for (int64_t tx0 = 0; tx0 < j->tiles_w; tx0 += WINO_BLOCK) {
                int64_t nb = j->tiles_w - tx0 < WINO_BLOCK ? j->tiles_w - tx0 : WINO_BLOCK;
                const float *in = m + ty * j->tiles_w + tx0;
                WINO_ACROSS_TILES
                for (int64_t t = 0; t < nb; t++) {
                    float s[2][4]; /* A^T m */
                    for (int k = 0; k < 4; k++) {
                        float m0 = in[(0 * 4 + k) * stride + t], m1 = in[(1 * 4 + k) * stride + t];
                        float m2 = in[(2 * 4 + k) * stride + t], m3 = in[(3 * 4 + k) * stride + t];
                        s[0][k] = m0 + m1 + m2;
                        s[1][k] = m1 - m2 - m3;
                    }
                    for (int i = 0; i < 2; i++) { /* (A^T m) A */
                        rows[i][2 * t] = s[i][0] + s[i][1] + s[i][2];
                        rows[i][2 * t + 1] = s[i][1] - s[i][2] - s[i][3];
                    }
                }
                int64_t y0 = 2 * ty, x0 = 2 * tx0, cols = g->ow - x0 < 2 * nb ? g->ow - x0 : 2 * nb;
                for (int i = 0; i < 2 && y0 + i < g->oh; i++) {
                    float *out = y + (y0 + i) * g->ow + x0;
                    if (add)
                        for (int64_t k = 0; k < cols; k++)
                            out[k] += rows[i][k];
                    else
                        memcpy(out, rows[i], (size_t)cols * sizeof *out);
                }
            }
    }
}

/* dy planes of the group -> m (16, oc, tiles): plane = image * oc + co */
CPU_WIDEST_VECTORS static void transform_output_grads(void *p, int64_t begin, int64_t end)
{
    const struct wino *j = p;
    const struct ember_conv_geom *g = &j->c->g;
    int64_t oc = j->c->oc, stride = oc * j->tile_count, tiles_h = j->tiles / j->tiles_w;
    float rows[2][WINO_SPAN];
    for (int64_t plane = begin; plane < end; plane++) {
        int64_t img = plane / oc, co = plane % oc;
        const float *dy = j->src + ((j->img0 + img) * oc + co) * g->oh * g->ow;
        float *m = j->m + co * j->tile_count + img * j->tiles;
        for (int64_t ty = 0; ty < tiles_h; ty++)
            for (int64_t tx0 = 0; tx0 < j->tiles_w; tx0 += WINO_BLOCK) {
                int64_t nb = j->tiles_w - tx0 < WINO_BLOCK ? j->tiles_w - tx0 : WINO_BLOCK;
                cpu_winograd_rows(dy, g->oh, g->ow, 2 * ty, 2 * tx0, 2, 2 * nb, rows);
                float *out = m + ty * j->tiles_w + tx0;
                WINO_ACROSS_TILES
                for (int64_t t = 0; t < nb; t++) {
                    float r[4][2]; /* A dy */
                    for (int k = 0; k < 2; k++) {
                        float y0 = rows[0][2 * t + k], y1 = rows[1][2 * t + k];
                        r[0][k] = y0;
                        r[1][k] = y0 + y1;
                        r[2][k] = y0 - y1;
                        r[3][k] = -y1;
                    }
                    for (int i = 0; i < 4; i++) { /* (A dy) A^T */
                        out[(i * 4 + 0) * stride + t] = r[i][0];
                        out[(i * 4 + 1) * stride + t] = r[i][0] + r[i][1];
                        out[(i * 4 + 2) * stride + t] = r[i][0] - r[i][1];
                        out[(i * 4 + 3) * stride + t] = -r[i][1];
                    }
                }
            }
    }
}

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

const struct wino_kind cpu_winograd_f2 = {.out = 2,
                                          .positions = POSITIONS,
                                          .inputs = transform_inputs,
                                          .outputs = transform_outputs,
                                          .output_grads = transform_output_grads,
                                          .filter = filter_tile,
                                          .filter_grad = filter_tile_adjoint};

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
static ember_status workspace(struct cpu_device *d, const struct ember_winograd *c, struct wino *j,
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
    if (d->scratch_floats < nu + nv + nm) {
        ember_aligned_free(d->scratch);
        d->scratch_floats = 0;
        d->scratch = ember_aligned_alloc(64, (nu + nv + nm + 15) / 16 * 64);
        if (!d->scratch)
            return d->host.fail(d->host.ctx, EMBER_ERR_NOMEM,
                                "conv_winograd: no memory for %lld images' tiles", (long long)*group);
        d->scratch_floats = nu + nv + nm;
    }
    j->c = c, j->kind = kind;
    j->u = d->scratch, j->v = j->u + nu, j->m = j->v + nv;
    return EMBER_OK;
}

/* The forward pass, y = x (*) w + beta * y, or, with the filters flipped,
 * the input gradient: dx = dy (*) w turned 180 degrees and transposed,
 * padded by 2 - pad (every dy entry that read x[p] meets the filter tap
 * that read it). */
static ember_status forward(struct cpu_device *d, const struct ember_winograd *c, const float *x,
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
        cpu_parallel_for(d->pool, images * c->g.c, grain, j.kind->inputs, &j);
        st = multiply(d, &j);
        if (st == EMBER_OK)
            cpu_parallel_for(d->pool, images * c->oc, grain, j.kind->outputs, &j);
    }
    return st;
}

/* dw = G^T (sum over the tiles of dM V^T) G + beta * dw */
static ember_status weight_grad(struct cpu_device *d, const struct ember_winograd *c, const float *x,
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
        cpu_parallel_for(d->pool, images * c->g.c, grain, j.kind->inputs, &j);
        j.src = dy;
        cpu_parallel_for(d->pool, images * c->oc, grain, j.kind->output_grads, &j);
        st = multiply(d, &j);
    }
    if (st == EMBER_OK) {
        j.dst = dw;
        cpu_parallel_for(d->pool, c->oc * c->g.c, 4096, transform_filter_grads, &j);
    }
    return st;
}

ember_status cpu_conv_winograd(void *dev, const struct ember_winograd *c, ember_ptr x, ember_ptr w,
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
        struct ember_winograd back = {.g = {.n = g->n,
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
