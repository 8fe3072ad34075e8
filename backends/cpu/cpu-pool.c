/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-pool.c — max- and average-pooling, one task per
 * (image, channel) plane so that no two tasks write the same memory.
 */
#include <math.h>
#include <string.h>

#include "cpu-impl.h"

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

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* even (0x88) or odd (0xdd) floats of the 16 from `row`, in order: the
 * shuffle takes them per 128-bit half, the permute puts the halves back */
#define POOL_SPLIT(row, imm)                                                                                 \
    _mm256_castpd_ps(_mm256_permute4x64_pd(                                                                  \
        _mm256_castps_pd(_mm256_shuffle_ps(_mm256_loadu_ps(row), _mm256_loadu_ps((row) + 8), imm)), 0xd8))

/* pool2_row eight outputs at a time (ow >= 8; the last eight may overlap
 * the ones before, writing the same values again): the same selects and
 * the same index arithmetic on lanes, for CPUs with AVX2 */
__attribute__((target("avx2"))) static void pool2_row_avx2(const float *restrict top,
                                                           const float *restrict bottom, int32_t w,
                                                           int32_t base, int32_t ow, float *restrict y,
                                                           int32_t *restrict argmax)
{
    const __m256i one = _mm256_set1_epi32(1), width = _mm256_set1_epi32(w);
    const __m256i column = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    for (int32_t ox = 0;; ox += 8) {
        ox = ox + 8 > ow ? ow - 8 : ox;
        __m256 a = POOL_SPLIT(top + 2 * ox, 0x88), b = POOL_SPLIT(top + 2 * ox, 0xdd);
        __m256 c = POOL_SPLIT(bottom + 2 * ox, 0x88), d = POOL_SPLIT(bottom + 2 * ox, 0xdd);
        __m256 right_top = _mm256_cmp_ps(b, a, _CMP_GT_OQ), right_bottom = _mm256_cmp_ps(d, c, _CMP_GT_OQ);
        __m256 best_top = _mm256_blendv_ps(a, b, right_top),
               best_bottom = _mm256_blendv_ps(c, d, right_bottom);
        __m256 lower = _mm256_cmp_ps(best_bottom, best_top, _CMP_GT_OQ);
        _mm256_storeu_ps(y + ox, _mm256_blendv_ps(best_top, best_bottom, lower));
        __m256i from_top = _mm256_and_si256(_mm256_castps_si256(right_top), one);
        __m256i from_bottom =
            _mm256_add_epi32(width, _mm256_and_si256(_mm256_castps_si256(right_bottom), one));
        __m256i at = _mm256_blendv_epi8(from_top, from_bottom, _mm256_castps_si256(lower));
        at = _mm256_add_epi32(_mm256_add_epi32(at, column), _mm256_set1_epi32(base + 2 * ox));
        _mm256_storeu_si256((__m256i *)(argmax + ox), at);
        if (ox + 8 >= ow)
            return;
    }
}

static bool pool_avx2(void) { return cpu_simd() >= CPU_SIMD_AVX2; }
#else
#define pool2_row_avx2 pool2_row
static bool pool_avx2(void) { return false; }
#endif

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

static void max_pool2d_forward_planes(void *p, int64_t begin, int64_t end)
{
    const struct pool_job *j = p;
    const struct ember_pool_geom *g = j->g;
    int64_t w = g->w;
    void (*row_2x2)(const float *, const float *, int32_t, int32_t, int32_t, float *, int32_t *) =
        g->ow >= 8 && pool_avx2() ? pool2_row_avx2 : pool2_row;
    for (int64_t plane = begin; plane < end; plane++) {
        const float *x = j->src + plane * g->h * w;
        float *y = j->dst + plane * g->oh * g->ow;
        int32_t *argmax = j->argmax + plane * g->oh * g->ow;
        for (int64_t oy = 0; oy < g->oh; oy++) {
            int64_t row = oy * g->stride * w;
            if (g->k == 2 && g->stride == 2 && !has_nan(x + row, 2 * w)) {
                row_2x2(x + row, x + row + w, (int32_t)w, (int32_t)row, (int32_t)g->ow, y + oy * g->ow,
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

static void max_pool2d_backward_planes(void *p, int64_t begin, int64_t end)
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

ember_status cpu_max_pool2d_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                    ember_ptr argmax)
{
    struct cpu_device *d = dev;
    struct pool_job j = {.g = g, .src = cpu_f32(x), .dst = cpu_f32(y), .argmax = cpu_i32(argmax)};
    cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->oh * g->ow * g->k * g->k),
                     max_pool2d_forward_planes, &j);
    return EMBER_OK;
}

ember_status cpu_max_pool2d_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                     ember_ptr argmax, ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct pool_job j = {.g = g, .src = cpu_f32(dy), .dst = cpu_f32(dx), .argmax = cpu_i32(argmax)};
    cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->h * g->w), max_pool2d_backward_planes, &j);
    return EMBER_OK;
}

/* ------------------------------------------------------------ average */

/* y = the mean of each window */
static void avg_pool2d_forward_planes(void *p, int64_t begin, int64_t end)
{
    const struct pool_job *j = p;
    const struct ember_pool_geom *g = j->g;
    float inv_area = 1.0f / (float)(g->k * g->k);
    for (int64_t plane = begin; plane < end; plane++) {
        const float *x = j->src + plane * g->h * g->w;
        float *y = j->dst + plane * g->oh * g->ow;
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                const float *window = x + oy * g->stride * g->w + ox * g->stride;
                float sum = 0.0f;
                for (int64_t ky = 0; ky < g->k; ky++)
                    for (int64_t kx = 0; kx < g->k; kx++)
                        sum += window[ky * g->w + kx];
                y[oy * g->ow + ox] = sum * inv_area;
            }
    }
}

/* dx = each window's dy / k^2 added over the window, in the outputs' order */
static void avg_pool2d_backward_planes(void *p, int64_t begin, int64_t end)
{
    const struct pool_job *j = p;
    const struct ember_pool_geom *g = j->g;
    float inv_area = 1.0f / (float)(g->k * g->k);
    for (int64_t plane = begin; plane < end; plane++) {
        const float *dy = j->src + plane * g->oh * g->ow;
        float *dx = j->dst + plane * g->h * g->w;
        memset(dx, 0, (size_t)(g->h * g->w) * sizeof *dx);
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                float share = dy[oy * g->ow + ox] * inv_area;
                float *window = dx + oy * g->stride * g->w + ox * g->stride;
                for (int64_t ky = 0; ky < g->k; ky++)
                    for (int64_t kx = 0; kx < g->k; kx++)
                        window[ky * g->w + kx] += share;
            }
    }
}

ember_status cpu_avg_pool2d_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y)
{
    struct cpu_device *d = dev;
    struct pool_job j = {.g = g, .src = cpu_f32(x), .dst = cpu_f32(y)};
    cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->oh * g->ow * g->k * g->k),
                     avg_pool2d_forward_planes, &j);
    return EMBER_OK;
}

ember_status cpu_avg_pool2d_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy, ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct pool_job j = {.g = g, .src = cpu_f32(dy), .dst = cpu_f32(dx)};
    cpu_parallel_for(d->pool, g->n * g->c, cpu_plane_grain(g->oh * g->ow * g->k * g->k),
                     avg_pool2d_backward_planes, &j);
    return EMBER_OK;
}
