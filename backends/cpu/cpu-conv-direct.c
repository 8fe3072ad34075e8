/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-conv-direct.c — conv_direct on the CPU: each pass of a
 * convolution summed straight from x, w and dy, without columns, by two
 * register-blocked kernels that every shape shares.
 *
 * The trick is a plane laid out so that every tap of the kernel is one
 * shift of it. At stride 1, output (oy, ox) reads the padded input at
 * (oy + ky, ox + kx): with the padded rows qw floats apart, output
 * position q = oy * qw + ox reads position q + ky * qw + kx, and a run of
 * outputs reads a run of input. The qw - ow positions at the end of each
 * row are computed and thrown away (2 of 30 for a 28-wide layer, 2 of 10
 * at 8 wide), which costs less than a loop per row or a copy per tap. At
 * stride s the input is first cut into phase planes, phase (a, b)
 * holding padded (s i + a, s j + b) at (i, j); tap (ky, kx) then reads
 * phase (ky % s, kx % s) shifted by (ky / s, kx / s), a stride-1 read
 * again (s * s phases at most; a 1x1 layer at stride 2 reads one of four,
 * its outputs' own inputs).
 *
 *   forward       y[oc] (+)= the sum over taps t = (ci, ky, kx) of
 *                 w[oc, t] times the run of x's planes at t's shift
 *   weight grad   dw[oc, t] = the sum over images and positions of dy[oc]
 *                 (on the same grid, zeros in the thrown-away positions)
 *                 times the same run
 *   input grad    dx at phase (a, b) = the sum over the taps of that
 *                 phase of w[oc, ci, ky, kx] times dy[oc] shifted back:
 *                 the forward pass's kernel again, reading a dy padded
 *                 with (kh - 1) / s rows and (kw - 1) / s columns of zeros
 *
 * The kernels (cpu_simd: AVX-512, or eight-float vectors, AVX2's or
 * NEON's, chosen when the library runs; written once for both widths in
 * cpu-conv-direct-vec.h) keep their sums in registers: the tap kernel 8
 * rows (output channels, or input channels for the input gradient) x 32
 * positions, 16 of AVX-512's 32 registers, loading 2 vectors and
 * broadcasting 8 weights a tap; or 4 x 16 with eight-float vectors. Its
 * steps run over the whole grid, or, for a forward pass of wide outputs, a
 * row of y at a time, stored straight from the registers onto the bias
 * (ROW_STEPS_FROM). The weight gradient's 4 output channels x 6 taps (24
 * registers; 2 x 6 with eight-float vectors), each vector of dy loaded
 * once for 6 sums and each of input for 4 (2), over a chunk of images
 * before a vector's lanes are added up. Without them (EMBER_CPU_SIMD=none)
 * the same sums run in plain loops, which the compiler vectorises.
 *
 * The forward pass and the input gradient split the batch's images among
 * the threads, the weight gradient the slices of the batch the core asks
 * for (struct ember_conv_job); where there are fewer of them than threads,
 * their channels are cut too. Each sum is made in a fixed order whichever
 * task makes it: the same bits on any number of threads.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-impl.h"
#include "cpu-vec.h"
#include "platform.h"

/* positions computed a plane, rounded up to this: a whole number of every
 * kernel's steps (32, 16, 8) */
#define STEP_ROUND 32
/* rows of the tap kernel, and how its weights are packed */
#define ROWS_VEC16 8
#define ROWS_VEC8  4
/* The forward pass's outputs at least this wide are written a row at a
 * time straight from the registers (28 of a step's 32 positions used at 28
 * wide); narrower ones would waste most of a step (14 or 7 of 32), so
 * their steps run over the whole grid, into a buffer copied out after: a
 * copy that cost a first layer's forward pass as much as its nine taps,
 * but little where there are more channels to sum (at 7 wide by rows:
 * 0.66 of the grid's speed on a layer of 64 channels). */
#define ROW_STEPS_FROM 24
/* bytes of planes the weight gradient sums at once */
#define CHUNK_BYTES ((int64_t)256 << 10)

struct direct {
    const struct ember_conv_job *c;
    const float *x, *w, *dy; /* as the pass reads them (one of them is its output) */
    float *out;              /* y, dx, or dw (slices, oc, c, kh, kw) */
    const float *packed;     /* the tap kernel's weights: per block of `rows`, [tap][rows] */
    const int64_t *at;       /* per tap, where it reads: from the first plane, plus a position */
    const int64_t *first;    /* the input gradient: phase ph's taps are [first[ph], first[ph + 1]) */
    float *scratch;          /* a task's planes each, `per_task` floats apart */
    int64_t per_task, tasks, slices, per_slice;
    /* the weight gradient: the images summed in registers before their
     * lanes are, and the groups of output channels each slice is cut into
     * for the threads */
    int64_t chunk, parts;
    /* the stride s; a phase plane's row pitch qw (ow + (kw - 1) / s) and rows qh (oh + (kh - 1) / s) */
    int64_t s, qw, qh;
    int64_t sa, sb;        /* the phases made: rows min(s, kh), columns min(s, kw) (make_phases) */
    int64_t pitch;         /* floats from one phase plane to the next */
    int64_t dy_pitch;      /* from one plane of dy laid out for reading back to the next */
    int64_t outputs;       /* grid positions of an output plane computed: oh * qw, rounded */
    int64_t inputs;        /* of a phase plane (the input gradient's outputs): qh * qw, rounded */
    int rows;              /* the tap kernel's block: ROWS_VEC16, ROWS_VEC8, or 8 for the plain loops */
    enum cpu_simd kernels; /* the vector kernels that run; CPU_SIMD_NONE: the plain loops */
};

static int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/* what a task of `tasks` gets of `units`: [*begin, *end) */
static void share(int64_t units, int64_t tasks, int64_t task, int64_t *begin, int64_t *end)
{
    *begin = units * task / tasks;
    *end = units * (task + 1) / tasks;
}

/* --------------------------------------------------------------- planes */

/* one image's planes x (c, h, w) as phase planes into p: phase (a, b) of
 * channel ci is plane (ci * sa + a) * sb + b, holding padded (s i + a,
 * s j + b) at i * qw + j, zeros outside x and after the plane's last row.
 * Only the phases some tap reads are made: a < sa = min(s, kh), b < sb =
 * min(s, kw) (a 1x1 layer at stride 2 reads one of four). */
static void make_phases(const struct direct *j, const float *x, float *p)
{
    const struct ember_conv_geom *g = &j->c->g;
    int64_t s = j->s;
    for (int64_t ci = 0; ci < g->c; ci++)
        for (int64_t a = 0; a < j->sa; a++)
            for (int64_t b = 0; b < j->sb; b++) {
                float *plane = p + ((ci * j->sa + a) * j->sb + b) * j->pitch;
                memset(plane, 0, (size_t)j->pitch * sizeof *plane);
                for (int64_t i = 0; i < j->qh; i++) {
                    int64_t iy = s * i + a - g->pad;
                    if (iy < 0 || iy >= g->h)
                        continue;
                    const float *row = x + (ci * g->h + iy) * g->w;
                    float *to = plane + i * j->qw;
                    for (int64_t jj = 0; jj < j->qw; jj++) {
                        int64_t ix = s * jj + b - g->pad;
                        if (ix >= 0 && ix < g->w)
                            to[jj] = row[ix];
                    }
                }
            }
}

/* one image's dy (oc, oh, ow) laid out for reading back, its planes
 * [o_begin, o_end) into d: each plane qw wide, its rows from row R =
 * (kh - 1) / s and column C = (kw - 1) / s (qw = ow + C), zeros around.
 * Read at r + R * qw + C it is dy on the forward pass's grid, with zeros
 * in the thrown-away positions (they wrap into the next row's first C
 * columns) */
static void make_dy(const struct direct *j, const float *dy, float *d, int64_t o_begin, int64_t o_end)
{
    const struct ember_conv_geom *g = &j->c->g;
    int64_t top = (g->kh - 1) / j->s, left = (g->kw - 1) / j->s;
    memset(d + o_begin * j->dy_pitch, 0, (size_t)((o_end - o_begin) * j->dy_pitch) * sizeof *d);
    for (int64_t o = o_begin; o < o_end; o++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            memcpy(d + o * j->dy_pitch + (oy + top) * j->qw + left, dy + (o * g->oh + oy) * g->ow,
                   (size_t)g->ow * sizeof *d);
}

/* ---------------------------------------------------------- the kernels */

/* Where the tap kernel's sums go, rows `ld` floats apart. With qw 0, as
 * they are: position q of row r at out[r * ld + q], every position of
 * the grid (the input gradient's phase sums; the forward pass's of narrow
 * planes, copied out after). Else straight onto the forward pass's y, a
 * row of it at a time: (oy, ox) of grid position oy * qw + ox at out[r *
 * ld + oy * ow + ox], added to what y holds where `add` (the bias), the
 * positions past ow not stored. */
struct landing {
    float *out;
    int64_t ld, qw, ow, oh;
    bool add;
    float *grid; /* the plain loops' sums of one row, positions long, when qw is not 0 */
};

/* row r's sums (a whole grid's positions) in `sums` onto y, as `to` says */
static void land_row(const struct landing *to, int r, const float *sums)
{
    for (int64_t oy = 0; oy < to->oh; oy++) {
        const float *from = sums + oy * to->qw;
        float *y = to->out + r * to->ld + oy * to->ow;
        for (int64_t ox = 0; ox < to->ow; ox++)
            y[ox] = to->add ? y[ox] + from[ox] : from[ox];
    }
}

/* row r of the sums over taps t of packed[t][r] times src[at[t] + q], for
 * rows r < `rows` of a block of `block` and q < positions (the grid's),
 * landing as `to` says */
static void taps_plain(const float *src, const int64_t *at, int64_t taps, const float *packed, int block,
                       int rows, const struct landing *to, int64_t positions)
{
    for (int r = 0; r < rows; r++) {
        float *o = to->qw ? to->grid : to->out + r * to->ld;
        memset(o, 0, (size_t)positions * sizeof *o);
        for (int64_t t = 0; t < taps; t++) {
            float wv = packed[t * block + r];
            const float *in = src + at[t];
            for (int64_t q = 0; q < positions; q++)
                o[q] += wv * in[q];
        }
        if (to->qw)
            land_row(to, r, o);
    }
}

/* The images of a weight gradient's chunk: n of them, each's planes of
 * x `src_next` floats after the last's, and of dy `dy_next` */
struct chunk {
    const float *src, *dy;
    int64_t n, src_next, dy_next;
};

/* dw[o][t] += the sum over the chunk's images and q < positions of
 * dy[o * dy_ld + q] times src[at[t] + q], for o < oc and t < taps (dw's
 * rows `taps` long) */
static void weight_sums_plain(const struct chunk *k, const int64_t *at, int64_t taps, int64_t dy_ld,
                              int64_t oc, int64_t positions, float *dw)
{
    for (int64_t o = 0; o < oc; o++)
        for (int64_t t = 0; t < taps; t++) {
            float sum = 0.0f;
            for (int64_t i = 0; i < k->n; i++) {
                const float *d = k->dy + i * k->dy_next + o * dy_ld, *in = k->src + i * k->src_next + at[t];
                for (int64_t q = 0; q < positions; q++)
                    sum += d[q] * in[q];
            }
            dw[o * taps + t] += sum;
        }
}

#if CPU_VEC16 || CPU_VEC8
/* Sums kept in arrays indexed by constants only, which the compiler keeps
 * in registers: each line of a kernel's inner step is written once per
 * row or tap through these, and once per output channel (of a tap u)
 * through EACH_OUT_n. */
#define EACH_OF_2(X)     X(0) X(1)
#define EACH_OF_4(X)     EACH_OF_2(X) X(2) X(3)
#define EACH_OF_6(X)     EACH_OF_4(X) X(4) X(5)
#define EACH_OF_8(X)     EACH_OF_6(X) X(6) X(7)
#define EACH_OUT_2(X, u) X(0, u) X(1, u)
#define EACH_OUT_4(X, u) EACH_OUT_2(X, u) X(2, u) X(3, u)
#endif

/* The vector kernels, once a width (cpu-vec.h): 8 rows x 32 positions and
 * 4 output channels x 6 taps with AVX-512's 32 registers; 4 x 16 and 2 x 6
 * with the 16 of AVX2 (NEON's 32 hold the same as two halves each). */
#if CPU_VEC16
#define VEC_LANES 16
#define TAP_ROWS  ROWS_VEC16
#define SUM_OUTS  4
#include "cpu-conv-direct-vec.h"
#undef VEC_LANES
#undef TAP_ROWS
#undef SUM_OUTS
#endif
#if CPU_VEC8
#define VEC_LANES 8
#define TAP_ROWS  ROWS_VEC8
#define SUM_OUTS  2
#include "cpu-conv-direct-vec.h"
#undef VEC_LANES
#undef TAP_ROWS
#undef SUM_OUTS
#endif

/* the tap kernel the pass runs, over `rows` of a block at `packed` */
static void taps_run(const struct direct *j, const float *src, const int64_t *at, int64_t taps,
                     const float *packed, int rows, const struct landing *to, int64_t positions)
{
#if CPU_VEC16
    if (j->kernels == CPU_SIMD_AVX512) {
        taps_vec16(src, at, taps, packed, rows, to, positions);
        return;
    }
#endif
#if CPU_VEC8
    if (j->kernels != CPU_SIMD_NONE) {
        taps_vec8(src, at, taps, packed, rows, to, positions);
        return;
    }
#endif
    taps_plain(src, at, taps, packed, j->rows, rows, to, positions);
}

/* dw's rows of `oc` output channels from the chunk's dy planes of them */
static void weight_sums_run(const struct direct *j, const struct chunk *k, int64_t oc, float *dw)
{
    const struct ember_conv_job *c = j->c;
    int64_t taps = c->g.c * c->g.kh * c->g.kw;
#if CPU_VEC16
    if (j->kernels == CPU_SIMD_AVX512) {
        weight_sums_vec16(k, j->at, taps, j->dy_pitch, oc, j->outputs, dw);
        return;
    }
#endif
#if CPU_VEC8
    if (j->kernels != CPU_SIMD_NONE) {
        weight_sums_vec8(k, j->at, taps, j->dy_pitch, oc, j->outputs, dw);
        return;
    }
#endif
    weight_sums_plain(k, j->at, taps, j->dy_pitch, oc, j->outputs, dw);
}

/* ------------------------------------------------------------ the tasks */

/* the rows [*begin, *end) of `count` (channels) that part `part` of
 * j->parts gets: whole blocks of the tap kernel's rows */
static void share_rows(const struct direct *j, int64_t count, int64_t part, int64_t *begin, int64_t *end)
{
    int64_t blocks = (count + j->rows - 1) / j->rows;
    share(blocks, j->parts, part, begin, end);
    *begin *= j->rows;
    *end = *end * j->rows < count ? *end * j->rows : count;
}

/* A unit of the forward pass: output channels [o_begin, o_end) of one
 * image (all of them unless the batch has fewer images than threads) */
static void forward_task(void *arg, int64_t begin, int64_t end)
{
    const struct direct *j = arg;
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t taps = g->c * g->kh * g->kw;
    for (int64_t task = begin; task < end; task++) {
        float *p = j->scratch + task * j->per_task, *grid = p + g->c * j->sa * j->sb * j->pitch;
        int64_t first, last, plane = g->oh * g->ow;
        bool by_rows = g->ow >= ROW_STEPS_FROM;
        struct landing to = {.ld = j->outputs};
        if (by_rows)
            to = (struct landing){
                .ld = plane, .qw = j->qw, .ow = g->ow, .oh = g->oh, .add = c->beta != 0.0f, .grid = grid};
        share(g->n * j->parts, j->tasks, task, &first, &last);
        for (int64_t unit = first; unit < last; unit++) {
            int64_t img = unit / j->parts, o_begin, o_end;
            share_rows(j, c->oc, unit % j->parts, &o_begin, &o_end);
            make_phases(j, j->x + img * g->c * g->h * g->w, p);
            float *y = j->out + img * c->oc * plane;
            for (int64_t o0 = o_begin; o0 < o_end; o0 += j->rows) {
                int rows = o_end - o0 < j->rows ? (int)(o_end - o0) : j->rows;
                to.out = by_rows ? y + o0 * plane : grid + o0 * j->outputs;
                taps_run(j, p, j->at, taps, j->packed + o0 * taps, rows, &to, j->outputs);
            }
            for (int64_t o = o_begin; o < o_end && !by_rows; o++) /* the grid's sums out to y */
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    const float *from = grid + o * j->outputs + oy * j->qw;
                    float *row = y + (o * g->oh + oy) * g->ow;
                    for (int64_t ox = 0; ox < g->ow; ox++)
                        row[ox] = c->beta != 0.0f ? row[ox] + from[ox] : from[ox];
                }
        }
    }
}

/* A unit of the weight gradient: output channels [o_begin, o_end) of one
 * slice of the batch. A channel's sums come out the same whichever unit
 * holds it, so the same bits on any number of threads. */
static void weight_grad_task(void *arg, int64_t begin, int64_t end)
{
    const struct direct *j = arg;
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t taps = g->c * g->kh * g->kw;
    int64_t ahead = (g->kh - 1) / j->s * j->qw + (g->kw - 1) / j->s; /* dy's grid position 0 in make_dy's */
    bool add = j->slices == 1 && c->beta != 0.0f;
    struct chunk k = {.src_next = g->c * j->sa * j->sb * j->pitch, .dy_next = c->oc * j->dy_pitch};
    for (int64_t task = begin; task < end; task++) {
        float *p = j->scratch + task * j->per_task, *d = p + j->chunk * k.src_next;
        int64_t first, last;
        share(j->slices * j->parts, j->tasks, task, &first, &last);
        for (int64_t unit = first; unit < last; unit++) {
            int64_t slice = unit / j->parts, o_begin, o_end;
            share(c->oc, j->parts, unit % j->parts, &o_begin, &o_end);
            int64_t img0 = slice * j->per_slice;
            int64_t count = g->n - img0 < j->per_slice ? g->n - img0 : j->per_slice;
            float *dw = j->out + (slice * c->oc + o_begin) * taps;
            if (!add)
                memset(dw, 0, (size_t)((o_end - o_begin) * taps) * sizeof *dw);
            k.src = p, k.dy = d + o_begin * j->dy_pitch + ahead;
            /* none past the batch's end: a sum of 0 */
            for (int64_t img = img0; img < img0 + count; img += k.n) {
                k.n = img0 + count - img < j->chunk ? img0 + count - img : j->chunk;
                for (int64_t i = 0; i < k.n; i++) {
                    make_phases(j, j->x + (img + i) * g->c * g->h * g->w, p + i * k.src_next);
                    make_dy(j, j->dy + (img + i) * c->oc * g->oh * g->ow, d + i * k.dy_next, o_begin, o_end);
                }
                weight_sums_run(j, &k, o_end - o_begin, dw);
            }
        }
    }
}

/* dx's values of phase (a, b) in channels [c_begin, c_end) from that
 * phase's sums (planes `inputs` apart) */
static void scatter_phase(const struct direct *j, int64_t a, int64_t b, const float *sums, int64_t c_begin,
                          int64_t c_end, float *dx)
{
    const struct ember_conv_geom *g = &j->c->g;
    for (int64_t ci = c_begin; ci < c_end; ci++)
        for (int64_t i = 0; i < j->qh; i++) {
            int64_t iy = j->s * i + a - g->pad;
            if (iy < 0 || iy >= g->h)
                continue;
            const float *from = sums + ci * j->inputs + i * j->qw;
            float *to = dx + (ci * g->h + iy) * g->w;
            for (int64_t jj = 0; jj < j->qw; jj++) {
                int64_t ix = j->s * jj + b - g->pad;
                if (ix >= 0 && ix < g->w)
                    to[ix] = from[jj];
            }
        }
}

/* A unit of the input gradient: input channels [c_begin, c_end) of one
 * image (all of them unless the batch has fewer images than threads) */
static void input_grad_task(void *arg, int64_t begin, int64_t end)
{
    const struct direct *j = arg;
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t plane = g->h * g->w;
    for (int64_t task = begin; task < end; task++) {
        float *d = j->scratch + task * j->per_task, *sums = d + c->oc * j->dy_pitch;
        int64_t first, last;
        share(g->n * j->parts, j->tasks, task, &first, &last);
        for (int64_t unit = first; unit < last; unit++) {
            int64_t img = unit / j->parts, c_begin, c_end;
            share_rows(j, g->c, unit % j->parts, &c_begin, &c_end);
            float *dx = j->out + img * g->c * plane;
            /* positions no tap reaches (past the last window, or a phase
             * with no taps) have a gradient of 0 */
            memset(dx + c_begin * plane, 0, (size_t)((c_end - c_begin) * plane) * sizeof *dx);
            make_dy(j, j->dy + img * c->oc * g->oh * g->ow, d, 0, c->oc);
            for (int64_t ph = 0; ph < j->sa * j->sb; ph++) {
                int64_t taps = j->first[ph + 1] - j->first[ph];
                if (taps == 0)
                    continue;
                const float *packed = j->packed + j->first[ph] * round_up(g->c, j->rows);
                for (int64_t c0 = c_begin; c0 < c_end; c0 += j->rows) {
                    int rows = c_end - c0 < j->rows ? (int)(c_end - c0) : j->rows;
                    struct landing to = {.out = sums + c0 * j->inputs, .ld = j->inputs};
                    taps_run(j, d, j->at + j->first[ph], taps, packed + c0 * taps, rows, &to, j->inputs);
                }
                scatter_phase(j, ph / j->sb, ph % j->sb, sums, c_begin, c_end, dx);
            }
        }
    }
}

/* ------------------------------------------------------- taps and weights */

/* The forward pass's and the weight gradient's taps (ci, ky, kx), in w's
 * order: each reads phase (ky % s, kx % s) of channel ci, shifted by
 * (ky / s, kx / s) */
static void forward_taps(struct direct *j, int64_t *at)
{
    const struct ember_conv_geom *g = &j->c->g;
    int64_t s = j->s;
    for (int64_t ci = 0, t = 0; ci < g->c; ci++)
        for (int64_t ky = 0; ky < g->kh; ky++)
            for (int64_t kx = 0; kx < g->kw; kx++, t++)
                at[t] = ((ci * j->sa + ky % s) * j->sb + kx % s) * j->pitch + ky / s * j->qw + kx / s;
}

/* w (oc, taps) as the forward pass's tap kernel reads it: per block of
 * `rows` output channels, [tap][rows], zeros past the last channel */
static void pack_forward(const struct direct *j, float *packed)
{
    const struct ember_conv_job *c = j->c;
    int64_t taps = c->g.c * c->g.kh * c->g.kw, rows = j->rows;
    memset(packed, 0, (size_t)(round_up(c->oc, rows) * taps) * sizeof *packed);
    for (int64_t oc = 0; oc < c->oc; oc++)
        for (int64_t t = 0; t < taps; t++)
            packed[(oc / rows * taps + t) * rows + oc % rows] = j->w[oc * taps + t];
}

/* The input gradient's taps, phase by phase: (oc, ky, kx) with ky % s = a
 * and kx % s = b give phase (a, b) the dy of oc shifted back by (ky / s,
 * kx / s); phase (a, b) is ph = a * sb + b, its taps from first[ph] on
 * (phases past sa or sb have none: their dx is 0). Their weights into packed:
 * per phase, per block of `rows` input channels, [tap][rows]. */
static void input_grad_taps(struct direct *j, int64_t *at, int64_t *first, float *packed)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t s = j->s, top = (g->kh - 1) / s, left = (g->kw - 1) / s, rows = j->rows;
    int64_t channels = round_up(g->c, rows), t = 0;
    memset(packed, 0, (size_t)(channels * c->oc * g->kh * g->kw) * sizeof *packed);
    for (int64_t ph = 0; ph < j->sa * j->sb; ph++) {
        first[ph] = t;
        int64_t count = 0;
        for (int64_t o = 0; o < c->oc; o++)
            for (int64_t ky = ph / j->sb; ky < g->kh; ky += s)
                for (int64_t kx = ph % j->sb; kx < g->kw; kx += s)
                    count++;
        float *block = packed + t * channels;
        for (int64_t o = 0; o < c->oc; o++)
            for (int64_t ky = ph / j->sb; ky < g->kh; ky += s)
                for (int64_t kx = ph % j->sb; kx < g->kw; kx += s, t++) {
                    at[t] = o * j->dy_pitch + (top - ky / s) * j->qw + left - kx / s;
                    for (int64_t ci = 0; ci < g->c; ci++)
                        block[(ci / rows * count + (t - first[ph])) * rows + ci % rows] =
                            j->w[((o * g->c + ci) * g->kh + ky) * g->kw + kx];
                }
    }
    first[j->sa * j->sb] = t;
}

/* ------------------------------------------------------------- the call */

/* Where the vector kernels beat im2col and OpenBLAS (bench/conv_shapes.c;
 * docs/benchmarks.md, "CPU: conv_direct's kernels"): the zoo's layers (up
 * to 64 channels, planes of 7x7 and more, batches of 32 and more) and any
 * plane of 16x16 outputs or more, but not a 1x1 kernel's. Its columns are
 * the input itself (at stride 1) or a quarter of it (at stride 2), so
 * im2col there is little more than OpenBLAS's product, and the kernels ran
 * 0.87 to 1.05 times its speed: a wash, left to im2col. Nor many channels
 * on small planes, or one image's small planes (ResNet-18's later stages
 * at 3x64x64, a single image predicted): there the kernels' work per
 * plane is too little to fill their blocks, and im2col ran 1.2 to 2.9
 * times as fast (128 to 512 channels at 8x8 to 2x2, and 64 channels at 8x8
 * for one image). Without AVX2 the plain loops are slower than im2col
 * everywhere. On 64-bit ARM every layer goes to im2col: counted under
 * qemu (bench/arm_instructions.sh), a training step took 15 to 20% more
 * instructions with the NEON kernels than with im2col and OpenBLAS's arm64
 * sgemm, whose packed kernels use all 32 NEON registers where the tap
 * kernel's blocks use 16. No board has timed either yet; EMBER_CONV_ALGO=
 * direct runs the NEON kernels to compare (docs/embedded.md). */
bool cpu_conv_direct_fast(void *dev, const struct ember_conv_geom *g)
{
    (void)dev;
    bool pointwise = g->kh == 1 && g->kw == 1;
    int64_t plane = g->oh * g->ow;
    bool enough = plane >= 256 || (g->c <= 64 && g->n * plane >= 1024);
    bool arm = cpu_simd() == CPU_SIMD_NEON;
    return (CPU_VEC16 || CPU_VEC8) && cpu_simd() != CPU_SIMD_NONE && !arm && !pointwise && enough;
}

ember_status cpu_conv_direct(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w, ember_ptr y)
{
    struct cpu_device *d = dev;
    const struct ember_conv_geom *g = &c->g;
    struct direct j = {.c = c, .s = g->stride, .slices = c->slices > 1 ? c->slices : 1};
    j.kernels = CPU_VEC16 || CPU_VEC8 ? cpu_simd() : CPU_SIMD_NONE;
    j.rows = j.kernels == CPU_SIMD_AVX512 || j.kernels == CPU_SIMD_NONE ? ROWS_VEC16 : ROWS_VEC8;
    int64_t top = (g->kh - 1) / j.s, left = (g->kw - 1) / j.s;
    j.sa = g->kh < j.s ? g->kh : j.s;
    j.sb = g->kw < j.s ? g->kw : j.s;
    int64_t phases = j.sa * j.sb;
    j.qw = g->ow + left;
    j.qh = g->oh + top;
    j.outputs = round_up(g->oh * j.qw, STEP_ROUND);
    j.inputs = round_up(j.qh * j.qw, STEP_ROUND);
    /* room for a kernel's last step past the plane's end, at the farthest tap */
    j.pitch = round_up(j.qh * j.qw + left + STEP_ROUND, 16);
    j.dy_pitch = round_up((g->oh + 2 * top) * j.qw + left + STEP_ROUND, 16);
    /* fewer images (or the weight gradient's slices: a small batch, or
     * 7x7 planes, the core cutting slices for a GPU's work-groups) than
     * threads share their channels: output channels (the weight gradient
     * at least 4 a part; the forward pass whole blocks of the tap kernel's
     * rows), or the input gradient's input channels (whole blocks) */
    int64_t units = c->pass == EMBER_CONV_WEIGHT_GRAD ? j.slices : g->n;
    int64_t blocks = c->pass == EMBER_CONV_WEIGHT_GRAD ? (c->oc + 3) / 4
                     : c->pass == EMBER_CONV_FORWARD   ? (c->oc + j.rows - 1) / j.rows
                                                       : (g->c + j.rows - 1) / j.rows;
    j.parts = units < d->threads ? (d->threads + units - 1) / units : 1;
    j.parts = j.parts > blocks ? blocks : j.parts;
    units *= j.parts;
    j.per_slice = (g->n + j.slices - 1) / j.slices;
    j.tasks = d->threads < units ? d->threads : units;
    int64_t phase_planes = g->c * phases * j.pitch, dy_planes = c->oc * j.dy_pitch;
    /* the weight gradient's chunk of images: their planes in CHUNK_BYTES,
     * well inside a core's second-level cache, so that small planes (7x7)
     * are not mostly the adding up of a vector's lanes at every image */
    j.chunk = (int64_t)(CHUNK_BYTES / sizeof(float)) / (phase_planes + dy_planes);
    j.chunk = j.chunk < 1 ? 1 : j.chunk > j.per_slice ? j.per_slice : j.chunk;
    j.per_task = c->pass == EMBER_CONV_FORWARD       ? phase_planes + round_up(c->oc, j.rows) * j.outputs
                 : c->pass == EMBER_CONV_WEIGHT_GRAD ? j.chunk * (phase_planes + dy_planes)
                                                     : dy_planes + round_up(g->c, j.rows) * j.inputs;
    j.per_task = round_up(j.per_task, 16); /* each task's planes on their own cache lines */
    /* the input gradient's taps run over output channels, the others' over input channels */
    int64_t taps = (c->pass == EMBER_CONV_INPUT_GRAD ? c->oc : g->c) * g->kh * g->kw;
    int64_t packed = c->pass == EMBER_CONV_FORWARD      ? round_up(c->oc, j.rows) * taps
                     : c->pass == EMBER_CONV_INPUT_GRAD ? round_up(g->c, j.rows) * taps
                                                        : 0;
    size_t floats = (size_t)(j.tasks * j.per_task + packed);
    if (cpu_scratch(d, floats, "conv_direct") != EMBER_OK)
        return EMBER_ERR_NOMEM;
    if (d->taps_count < (size_t)(taps + phases + 1)) {
        free(d->taps);
        d->taps_count = 0;
        d->taps = malloc((size_t)(taps + phases + 1) * sizeof *d->taps);
        if (!d->taps)
            return d->host.fail(d->host.ctx, EMBER_ERR_NOMEM, "conv_direct: no memory for %lld taps",
                                (long long)taps);
        d->taps_count = (size_t)(taps + phases + 1);
    }
    int64_t *at = d->taps;
    j.scratch = d->scratch;
    j.at = at;
    float *pack = j.scratch + j.tasks * j.per_task;
    j.packed = pack;
    switch (c->pass) {
    case EMBER_CONV_FORWARD:
        j.x = cpu_f32(x), j.w = cpu_f32(w), j.out = cpu_f32(y);
        forward_taps(&j, at);
        pack_forward(&j, pack);
        cpu_parallel_for(d->pool, j.tasks, 1, forward_task, &j);
        break;
    case EMBER_CONV_WEIGHT_GRAD:
        j.x = cpu_f32(x), j.dy = cpu_f32(y), j.out = cpu_f32(w);
        forward_taps(&j, at);
        cpu_parallel_for(d->pool, j.tasks, 1, weight_grad_task, &j);
        break;
    case EMBER_CONV_INPUT_GRAD:
        j.w = cpu_f32(w), j.dy = cpu_f32(y), j.out = cpu_f32(x);
        j.first = at + taps;
        input_grad_taps(&j, at, at + taps, pack);
        cpu_parallel_for(d->pool, j.tasks, 1, input_grad_task, &j);
        break;
    }
    return EMBER_OK;
}
