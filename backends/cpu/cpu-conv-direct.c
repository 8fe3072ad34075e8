/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-conv-direct.c — conv_direct on the CPU: each pass of a
 * convolution summed straight from x, w and dy, without columns.
 *
 * im2col copies a 3x3 convolution's input nine times over, and for a first
 * layer's one channel its product is then (16 x 9) @ (9 x 784) an image, a
 * shape OpenBLAS runs at a fraction of its speed: the copy, the product
 * and the bias's own pass cost about alike (docs/benchmarks.md, "CPU:
 * convolution algorithms"). Here each image's planes are copied once into
 * a buffer with the padding's zeros around them and a margin on the right,
 * so that no loop tests a border, and then, at stride s:
 *
 *   forward       y[oc] (+)= the sum over ci, ky, kx of w[oc, ci, ky, kx]
 *                 times padded plane ci from (ky, kx), every s-th value
 *   weight grad   dw[oc, ci, ky, kx] = the sum over images and positions of
 *                 dy[oc] times the same
 *   input grad    dx[ci] = each w[oc, ci, ky, kx] * dy[oc] added back where
 *                 the forward pass read it (into a padded plane, then its inside)
 *
 * At stride 1 the forward pass and a 3x3 weight gradient run vector
 * kernels that keep their sums in registers, with the CPU's widest
 * instructions (cpu_simd: AVX-512 or AVX2, chosen when the library runs):
 * the forward pass 8 output channels x 32 positions of a row (16 of
 * AVX-512's 32 registers; a tap loads 2 vectors of input and a weight a
 * channel for 16 fused multiply-adds), or 4 x 16 with AVX2 (8 of 16); the
 * weight gradient the 9 taps of two (output, input) channel pairs (18
 * registers), or of one with AVX2, each vector of dy loaded once for 9
 * taps. Everything else (other strides and kernels, the input gradient,
 * which a first layer never needs, a CPU without AVX2) runs plain loops,
 * which the compiler vectorises.
 *
 * The forward pass and the input gradient split the batch's images among
 * the threads; the weight gradient comes in the slices of the batch the
 * core asks for (struct ember_conv_job), a task each, summed in a fixed
 * order: the same bits on any number of threads.
 */
#include <stdbool.h>
#include <string.h>

#include "cpu-impl.h"
#include "platform.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DIRECT_SIMD 1
#define AVX2        __attribute__((target("avx2,fma")))
#define AVX512      __attribute__((target("avx512f")))
#else
#define DIRECT_SIMD 0
#endif

struct direct {
    const struct ember_conv_job *c;
    const float *x, *w, *dy; /* as the pass reads them (one of them is its output) */
    float *out;              /* y, dx, or dw (slices, oc, c, kh, kw) */
    const float *packed;     /* the forward kernel's weights in blocks of output channels (pack_weights) */
    float *scratch;          /* a task's padded planes each, `per_task` floats apart */
    int64_t ph, pw;          /* a padded plane: rows, and floats a row */
    int64_t per_task, tasks, slices, per_slice;
    enum cpu_simd kernels; /* the vector kernels that run; CPU_SIMD_NONE: the plain loops */
};

/* --------------------------------------------------------------- planes */

/* images [img0, img0 + count) of x's planes into p: each plane of h x w at
 * (pad, pad) of a ph x pw one, zeros around */
static void pad_planes(const struct direct *j, int64_t img0, int64_t count, float *p)
{
    const struct ember_conv_geom *g = &j->c->g;
    memset(p, 0, (size_t)(count * g->c * j->ph * j->pw) * sizeof *p);
    for (int64_t plane = 0; plane < count * g->c; plane++)
        for (int64_t iy = 0; iy < g->h; iy++)
            memcpy(p + (plane * j->ph + iy + g->pad) * j->pw + g->pad,
                   j->x + ((img0 * g->c + plane) * g->h + iy) * g->w, (size_t)g->w * sizeof *p);
}

/* what a task of `tasks` gets of `units`: [*begin, *end) */
static void share(int64_t units, int64_t tasks, int64_t task, int64_t *begin, int64_t *end)
{
    *begin = units * task / tasks;
    *end = units * (task + 1) / tasks;
}

/* ---------------------------------------------------------- plain loops */

/* one image's forward pass from its padded planes p into y (oc, oh, ow) */
static void forward_plain(const struct direct *j, const float *p, float *y)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t s = g->stride, plane = g->oh * g->ow;
    for (int64_t oc = 0; oc < c->oc; oc++) {
        float *yo = y + oc * plane;
        if (c->beta == 0.0f)
            memset(yo, 0, (size_t)plane * sizeof *yo);
        const float *w = j->w + oc * g->c * g->kh * g->kw;
        for (int64_t ci = 0; ci < g->c; ci++)
            for (int64_t ky = 0; ky < g->kh; ky++)
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    float wv = *w++;
                    for (int64_t oy = 0; oy < g->oh; oy++) {
                        const float *in = p + (ci * j->ph + oy * s + ky) * j->pw + kx;
                        float *out = yo + oy * g->ow;
                        for (int64_t ox = 0; ox < g->ow; ox++)
                            out[ox] += wv * in[ox * s];
                    }
                }
    }
}

/* dw (oc, c, kh, kw) from the images [img0, img0 + count), padded in p;
 * with `add`, onto what dw holds */
static void weight_grad_plain(const struct direct *j, const float *p, int64_t img0, int64_t count, float *dw,
                              bool add)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t s = g->stride, plane = g->oh * g->ow;
    for (int64_t oc = 0; oc < c->oc; oc++)
        for (int64_t ci = 0; ci < g->c; ci++)
            for (int64_t ky = 0; ky < g->kh; ky++)
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    float sum = 0.0f;
                    for (int64_t b = 0; b < count; b++) {
                        const float *d = j->dy + ((img0 + b) * c->oc + oc) * plane;
                        const float *in = p + ((b * g->c + ci) * j->ph + ky) * j->pw + kx;
                        for (int64_t oy = 0; oy < g->oh; oy++, d += g->ow, in += s * j->pw)
                            for (int64_t ox = 0; ox < g->ow; ox++)
                                sum += d[ox] * in[ox * s];
                    }
                    float *to = dw + ((oc * g->c + ci) * g->kh + ky) * g->kw + kx;
                    *to = add ? *to + sum : sum;
                }
}

/* one image's input gradient into dx (c, h, w), through p: one padded plane */
static void input_grad_plain(const struct direct *j, int64_t img, float *p, float *dx)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t s = g->stride, plane = g->oh * g->ow;
    for (int64_t ci = 0; ci < g->c; ci++) {
        memset(p, 0, (size_t)(j->ph * j->pw) * sizeof *p);
        for (int64_t oc = 0; oc < c->oc; oc++) {
            const float *w = j->w + (oc * g->c + ci) * g->kh * g->kw;
            for (int64_t ky = 0; ky < g->kh; ky++)
                for (int64_t kx = 0; kx < g->kw; kx++) {
                    float wv = *w++;
                    const float *d = j->dy + (img * c->oc + oc) * plane;
                    for (int64_t oy = 0; oy < g->oh; oy++, d += g->ow) {
                        float *at = p + (oy * s + ky) * j->pw + kx;
                        for (int64_t ox = 0; ox < g->ow; ox++)
                            at[ox * s] += wv * d[ox];
                    }
                }
        }
        for (int64_t iy = 0; iy < g->h; iy++)
            memcpy(dx + (ci * g->h + iy) * g->w, p + (iy + g->pad) * j->pw + g->pad,
                   (size_t)g->w * sizeof *dx);
    }
}

/* ------------------------------------------------ the vector kernels */

#if DIRECT_SIMD
/* Sums kept in arrays indexed by constants only, which the compiler keeps
 * in registers: each line of a kernel's inner step is written once per
 * output channel or tap through these. */
#define EACH_OF_4(X) X(0) X(1) X(2) X(3)
#define EACH_OF_8(X) EACH_OF_4(X) X(4) X(5) X(6) X(7)
#define EACH_TAP(X)  EACH_OF_8(X) X(8)
/* a 3x3 tap t of the padded plane `in` at position ox: row t / 3, column t % 3 */
#define TAP_AT(in, pw, ox, t) ((in) + ((t) / 3) * (pw) + (ox) + (t) % 3)

/* lanes [0, 8) of a row's vector that lie before `left` */
AVX2 static inline __m256i lanes_before(int64_t left)
{
    int32_t l = left > 8 ? 8 : left < 0 ? 0 : (int32_t)left;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(l), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* One image's forward pass at stride 1 with AVX2: for each block of 4
 * output channels and each 16 positions of a row, the sums in 8 registers
 * from the bias (beta 1) or 0, over every (ci, ky, kx) */
AVX2 static void forward_avx2(const struct direct *j, const float *p, float *y)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t taps = g->c * g->kh * g->kw, plane = g->oh * g->ow;
    for (int64_t oc0 = 0; oc0 < c->oc; oc0 += 4) {
        int outs = c->oc - oc0 < 4 ? (int)(c->oc - oc0) : 4;
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox += 16) {
                __m256i m0 = lanes_before(g->ow - ox), m1 = lanes_before(g->ow - ox - 8);
                float *out = y + oc0 * plane + oy * g->ow + ox;
                bool onto = c->beta != 0.0f;
                __m256 acc[4][2];
#define START(o)                                                                                             \
    acc[o][0] = onto && o < outs ? _mm256_maskload_ps(out + o * plane, m0) : _mm256_setzero_ps();            \
    acc[o][1] = onto && o < outs ? _mm256_maskload_ps(out + o * plane + 8, m1) : _mm256_setzero_ps();
                EACH_OF_4(START)
#undef START
                const float *wk = j->packed + oc0 * taps; /* [ci][ky][kx][4] */
                for (int64_t ci = 0; ci < g->c; ci++)
                    for (int64_t ky = 0; ky < g->kh; ky++) {
                        const float *in = p + (ci * j->ph + oy + ky) * j->pw + ox;
                        for (int64_t kx = 0; kx < g->kw; kx++, wk += 4) {
                            __m256 v0 = _mm256_loadu_ps(in + kx), v1 = _mm256_loadu_ps(in + kx + 8);
#define STEP(o)                                                                                              \
    {                                                                                                        \
        __m256 wv = _mm256_broadcast_ss(wk + o);                                                             \
        acc[o][0] = _mm256_fmadd_ps(wv, v0, acc[o][0]);                                                      \
        acc[o][1] = _mm256_fmadd_ps(wv, v1, acc[o][1]);                                                      \
    }
                            EACH_OF_4(STEP)
#undef STEP
                        }
                    }
#define STORE(o)                                                                                             \
    if (o < outs) {                                                                                          \
        _mm256_maskstore_ps(out + o * plane, m0, acc[o][0]);                                                 \
        _mm256_maskstore_ps(out + o * plane + 8, m1, acc[o][1]);                                             \
    }
                EACH_OF_4(STORE)
#undef STORE
            }
    }
}

/* A 3x3 weight gradient at stride 1 with AVX2, from the images [img0,
 * img0 + count), padded in p: for each (oc, ci) the 9 taps' sums in 9
 * registers, over every position of every image, 8 at a time (dy's lanes
 * past the row's end are loaded as 0, so what the input holds there adds
 * nothing) */
AVX2 static void weight_grad_avx2(const struct direct *j, const float *p, int64_t img0, int64_t count,
                                  float *dw, bool add)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t plane = g->oh * g->ow, pw = j->pw;
    for (int64_t oc = 0; oc < c->oc; oc++)
        for (int64_t ci = 0; ci < g->c; ci++) {
            __m256 acc[9];
#define START(t) acc[t] = _mm256_setzero_ps();
            EACH_TAP(START)
#undef START
            for (int64_t b = 0; b < count; b++) {
                const float *d = j->dy + ((img0 + b) * c->oc + oc) * plane;
                const float *in = p + (b * g->c + ci) * j->ph * pw;
                for (int64_t oy = 0; oy < g->oh; oy++, d += g->ow, in += pw)
                    for (int64_t ox = 0; ox < g->ow; ox += 8) {
                        __m256 dv = _mm256_maskload_ps(d + ox, lanes_before(g->ow - ox));
#define STEP(t) acc[t] = _mm256_fmadd_ps(dv, _mm256_loadu_ps(TAP_AT(in, pw, ox, t)), acc[t]);
                        EACH_TAP(STEP)
#undef STEP
                    }
            }
            float *to = dw + (oc * g->c + ci) * 9;
#define SAVE(t) to[t] = add ? to[t] + cpu_hsum8(acc[t]) : cpu_hsum8(acc[t]);
            EACH_TAP(SAVE)
#undef SAVE
        }
}

/* lanes [0, 16) that lie before `left` */
static inline __mmask16 mask_before(int64_t left)
{
    return left >= 16 ? (__mmask16)0xffff : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1u);
}

/* The forward pass with AVX-512: blocks of 8 output channels and 32
 * positions of a row, 16 registers of sums (32 there are) */
AVX512 static void forward_avx512(const struct direct *j, const float *p, float *y)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t taps = g->c * g->kh * g->kw, plane = g->oh * g->ow;
    for (int64_t oc0 = 0; oc0 < c->oc; oc0 += 8) {
        int outs = c->oc - oc0 < 8 ? (int)(c->oc - oc0) : 8;
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox += 32) {
                __mmask16 m0 = mask_before(g->ow - ox), m1 = mask_before(g->ow - ox - 16);
                float *out = y + oc0 * plane + oy * g->ow + ox;
                bool onto = c->beta != 0.0f;
                __m512 acc[8][2];
#define START(o)                                                                                             \
    acc[o][0] = onto && o < outs ? _mm512_maskz_loadu_ps(m0, out + o * plane) : _mm512_setzero_ps();         \
    acc[o][1] = onto && o < outs ? _mm512_maskz_loadu_ps(m1, out + o * plane + 16) : _mm512_setzero_ps();
                EACH_OF_8(START)
#undef START
                const float *wk = j->packed + oc0 * taps; /* [ci][ky][kx][8] */
                for (int64_t ci = 0; ci < g->c; ci++)
                    for (int64_t ky = 0; ky < g->kh; ky++) {
                        const float *in = p + (ci * j->ph + oy + ky) * j->pw + ox;
                        for (int64_t kx = 0; kx < g->kw; kx++, wk += 8) {
                            __m512 v0 = _mm512_loadu_ps(in + kx), v1 = _mm512_loadu_ps(in + kx + 16);
#define STEP(o)                                                                                              \
    {                                                                                                        \
        __m512 wv = _mm512_set1_ps(wk[o]);                                                                   \
        acc[o][0] = _mm512_fmadd_ps(wv, v0, acc[o][0]);                                                      \
        acc[o][1] = _mm512_fmadd_ps(wv, v1, acc[o][1]);                                                      \
    }
                            EACH_OF_8(STEP)
#undef STEP
                        }
                    }
#define STORE(o)                                                                                             \
    if (o < outs) {                                                                                          \
        _mm512_mask_storeu_ps(out + o * plane, m0, acc[o][0]);                                               \
        _mm512_mask_storeu_ps(out + o * plane + 16, m1, acc[o][1]);                                          \
    }
                EACH_OF_8(STORE)
#undef STORE
            }
    }
}

/* The 3x3 weight gradient with AVX-512: two output channels at once, 18
 * registers of sums, 16 positions a step (the second channel's sums
 * unused when there is none) */
AVX512 static void weight_grad_avx512(const struct direct *j, const float *p, int64_t img0, int64_t count,
                                      float *dw, bool add)
{
    const struct ember_conv_job *c = j->c;
    const struct ember_conv_geom *g = &c->g;
    int64_t plane = g->oh * g->ow, pw = j->pw;
    for (int64_t oc = 0; oc < c->oc; oc += 2)
        for (int64_t ci = 0; ci < g->c; ci++) {
            bool pair = oc + 1 < c->oc;
            __m512 acc0[9], acc1[9];
#define START(t) acc0[t] = acc1[t] = _mm512_setzero_ps();
            EACH_TAP(START)
#undef START
            for (int64_t b = 0; b < count; b++) {
                const float *d0 = j->dy + ((img0 + b) * c->oc + oc) * plane, *d1 = pair ? d0 + plane : d0;
                const float *in = p + (b * g->c + ci) * j->ph * pw;
                for (int64_t oy = 0; oy < g->oh; oy++, d0 += g->ow, d1 += g->ow, in += pw)
                    for (int64_t ox = 0; ox < g->ow; ox += 16) {
                        __mmask16 m = mask_before(g->ow - ox);
                        __m512 e0 = _mm512_maskz_loadu_ps(m, d0 + ox), e1 = _mm512_maskz_loadu_ps(m, d1 + ox);
#define STEP(t)                                                                                              \
    {                                                                                                        \
        __m512 v = _mm512_loadu_ps(TAP_AT(in, pw, ox, t));                                                   \
        acc0[t] = _mm512_fmadd_ps(e0, v, acc0[t]);                                                           \
        acc1[t] = _mm512_fmadd_ps(e1, v, acc1[t]);                                                           \
    }
                        EACH_TAP(STEP)
#undef STEP
                    }
            }
            float *to = dw + (oc * g->c + ci) * 9, *to1 = to + g->c * 9;
#define SAVE(t)                                                                                              \
    to[t] = add ? to[t] + _mm512_reduce_add_ps(acc0[t]) : _mm512_reduce_add_ps(acc0[t]);                     \
    if (pair)                                                                                                \
        to1[t] = add ? to1[t] + _mm512_reduce_add_ps(acc1[t]) : _mm512_reduce_add_ps(acc1[t]);
            EACH_TAP(SAVE)
#undef SAVE
        }
}
#endif

/* w (oc, c, kh, kw) as the forward kernels read it: per block of `block`
 * output channels, [ci][ky][kx][block], zeros past the last channel */
static void pack_weights(const struct direct *j, int block, float *packed)
{
    const struct ember_conv_job *c = j->c;
    int64_t taps = c->g.c * c->g.kh * c->g.kw, blocks = (c->oc + block - 1) / block;
    memset(packed, 0, (size_t)(blocks * block * taps) * sizeof *packed);
    for (int64_t oc = 0; oc < c->oc; oc++)
        for (int64_t t = 0; t < taps; t++)
            packed[(oc / block * taps + t) * block + oc % block] = j->w[oc * taps + t];
}

/* ------------------------------------------------------------ the tasks */

static void forward_task(void *arg, int64_t begin, int64_t end)
{
    const struct direct *j = arg;
    const struct ember_conv_geom *g = &j->c->g;
    for (int64_t task = begin; task < end; task++) {
        float *p = j->scratch + task * j->per_task;
        int64_t first, last;
        share(g->n, j->tasks, task, &first, &last);
        for (int64_t img = first; img < last; img++) {
            float *y = j->out + img * j->c->oc * g->oh * g->ow;
            pad_planes(j, img, 1, p);
#if DIRECT_SIMD
            if (j->kernels == CPU_SIMD_AVX512) {
                forward_avx512(j, p, y);
                continue;
            }
            if (j->kernels == CPU_SIMD_AVX2) {
                forward_avx2(j, p, y);
                continue;
            }
#endif
            forward_plain(j, p, y);
        }
    }
}

static void weight_grad_task(void *arg, int64_t begin, int64_t end)
{
    const struct direct *j = arg;
    const struct ember_conv_job *c = j->c;
    int64_t weights = c->oc * c->g.c * c->g.kh * c->g.kw;
    bool add = j->slices == 1 && c->beta != 0.0f;
    for (int64_t task = begin; task < end; task++) {
        float *p = j->scratch + task * j->per_task;
        int64_t first, last;
        share(j->slices, j->tasks, task, &first, &last);
        for (int64_t slice = first; slice < last; slice++) {
            int64_t img0 = slice * j->per_slice;
            int64_t count = c->g.n - img0 < j->per_slice ? c->g.n - img0 : j->per_slice;
            float *dw = j->out + slice * weights;
            if (count <= 0) { /* a slice past the batch's end: no images, a sum of 0 */
                if (!add)
                    memset(dw, 0, (size_t)weights * sizeof *dw);
                continue;
            }
            pad_planes(j, img0, count, p);
#if DIRECT_SIMD
            if (j->kernels == CPU_SIMD_AVX512) {
                weight_grad_avx512(j, p, img0, count, dw, add);
                continue;
            }
            if (j->kernels == CPU_SIMD_AVX2) {
                weight_grad_avx2(j, p, img0, count, dw, add);
                continue;
            }
#endif
            weight_grad_plain(j, p, img0, count, dw, add);
        }
    }
}

static void input_grad_task(void *arg, int64_t begin, int64_t end)
{
    const struct direct *j = arg;
    const struct ember_conv_geom *g = &j->c->g;
    for (int64_t task = begin; task < end; task++) {
        int64_t first, last;
        share(g->n, j->tasks, task, &first, &last);
        for (int64_t img = first; img < last; img++)
            input_grad_plain(j, img, j->scratch + task * j->per_task, j->out + img * g->c * g->h * g->w);
    }
}

/* ------------------------------------------------------------- the call */

/* where the vector kernels run every pass but the input gradient */
static bool kernels_fit(const struct ember_conv_geom *g, enum ember_conv_pass pass)
{
    return g->stride == 1 &&
           (pass == EMBER_CONV_FORWARD || (pass == EMBER_CONV_WEIGHT_GRAD && g->kh == 3 && g->kw == 3));
}

bool cpu_conv_direct_fast(void *dev, const struct ember_conv_geom *g)
{
    (void)dev;
    return DIRECT_SIMD && cpu_simd() >= CPU_SIMD_AVX2 && kernels_fit(g, EMBER_CONV_FORWARD) &&
           kernels_fit(g, EMBER_CONV_WEIGHT_GRAD);
}

ember_status cpu_conv_direct(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w, ember_ptr y)
{
    struct cpu_device *d = dev;
    const struct ember_conv_geom *g = &c->g;
    struct direct j = {.c = c, .ph = g->h + 2 * g->pad, .slices = c->slices > 1 ? c->slices : 1};
    j.kernels = DIRECT_SIMD && kernels_fit(g, c->pass) ? cpu_simd() : CPU_SIMD_NONE;
    /* a row holds the padded input and, for the kernels' whole vectors, the
     * output positions rounded up to a step's (16 or 32) plus the kernel's reach */
    int64_t step = j.kernels == CPU_SIMD_AVX512 ? 32 : 16, block = j.kernels == CPU_SIMD_AVX512 ? 8 : 4;
    int64_t reach = (g->ow + step - 1) / step * step + g->kw - 1;
    j.pw = g->w + 2 * g->pad > reach ? g->w + 2 * g->pad : reach;
    int64_t units = c->pass == EMBER_CONV_WEIGHT_GRAD ? j.slices : g->n, plane = j.ph * j.pw;
    j.per_slice = (g->n + j.slices - 1) / j.slices;
    j.tasks = d->threads < units ? d->threads : units;
    j.per_task = c->pass == EMBER_CONV_WEIGHT_GRAD ? j.per_slice * g->c * plane
                 : c->pass == EMBER_CONV_FORWARD   ? g->c * plane
                                                   : plane;
    j.per_task = (j.per_task + 15) & ~(int64_t)15; /* each task's planes on their own cache lines */
    int64_t packed =
        c->pass == EMBER_CONV_FORWARD ? (c->oc + block - 1) / block * block * g->c * g->kh * g->kw : 0;
    size_t floats = (size_t)(j.tasks * j.per_task + packed);
    if (d->scratch_floats < floats) {
        ember_aligned_free(d->scratch);
        d->scratch_floats = 0;
        d->scratch = ember_aligned_alloc(64, (floats + 15) / 16 * 64);
        if (!d->scratch)
            return d->host.fail(d->host.ctx, EMBER_ERR_NOMEM, "conv_direct: no memory for %lld padded planes",
                                (long long)(j.tasks * j.per_task / plane));
        d->scratch_floats = floats;
    }
    j.scratch = d->scratch;
    switch (c->pass) {
    case EMBER_CONV_FORWARD:
        j.x = cpu_f32(x), j.w = cpu_f32(w), j.out = cpu_f32(y);
        j.packed = j.scratch + j.tasks * j.per_task;
        pack_weights(&j, (int)block, (float *)j.packed);
        cpu_parallel_for(d->pool, j.tasks, 1, forward_task, &j);
        break;
    case EMBER_CONV_WEIGHT_GRAD:
        j.x = cpu_f32(x), j.dy = cpu_f32(y), j.out = cpu_f32(w);
        cpu_parallel_for(d->pool, j.tasks, 1, weight_grad_task, &j);
        break;
    case EMBER_CONV_INPUT_GRAD:
        j.w = cpu_f32(w), j.dy = cpu_f32(y), j.out = cpu_f32(x);
        cpu_parallel_for(d->pool, j.tasks, 1, input_grad_task, &j);
        break;
    }
    return EMBER_OK;
}
