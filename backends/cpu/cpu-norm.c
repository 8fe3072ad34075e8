/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-norm.c — layer normalization, forward and backward, one
 * row at a time, the rows shared between the threads; RMS normalization's
 * forward pass the same way; and batch normalization, by planes then
 * channels (at the end).
 *
 * The variance takes two passes (the mean first, then the squares of the
 * differences from it), which loses nothing when the values sit far from
 * zero, as a one-pass sum of squares would.
 */
#include <math.h>

#include "cpu-impl.h"

struct layer_norm_job {
    int64_t cols;
    float eps;
    const float *x, *weight, *bias, *dy, *xhat_in, *rstd_in;
    float *y, *xhat, *rstd, *dx;
};

CPU_WIDEST_VECTORS static void layer_norm_forward_rows(void *p, int64_t begin, int64_t end)
{
    const struct layer_norm_job *j = p;
    int64_t c = j->cols;
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * c;
        float *y = j->y + r * c, *xhat = j->xhat + r * c;
        float sum = 0.0f;
        for (int64_t k = 0; k < c; k++)
            sum += x[k];
        float mean = sum / (float)c, squares = 0.0f;
        for (int64_t k = 0; k < c; k++)
            squares += (x[k] - mean) * (x[k] - mean);
        float rstd = 1.0f / sqrtf(squares / (float)c + j->eps);
        for (int64_t k = 0; k < c; k++) {
            xhat[k] = (x[k] - mean) * rstd;
            y[k] = xhat[k] * j->weight[k] + j->bias[k];
        }
        j->rstd[r] = rstd;
    }
}

/* dx = rstd (g - mean g - xhat mean(g xhat)), g = dy weight */
CPU_WIDEST_VECTORS static void layer_norm_backward_rows(void *p, int64_t begin, int64_t end)
{
    const struct layer_norm_job *j = p;
    int64_t c = j->cols;
    for (int64_t r = begin; r < end; r++) {
        const float *dy = j->dy + r * c, *xhat = j->xhat_in + r * c;
        float *dx = j->dx + r * c;
        float g_sum = 0.0f, gx_sum = 0.0f;
        for (int64_t k = 0; k < c; k++) {
            float g = dy[k] * j->weight[k];
            g_sum += g;
            gx_sum += g * xhat[k];
        }
        float g_mean = g_sum / (float)c, gx_mean = gx_sum / (float)c, rstd = j->rstd_in[r];
        for (int64_t k = 0; k < c; k++)
            dx[k] = rstd * (dy[k] * j->weight[k] - g_mean - xhat[k] * gx_mean);
    }
}

ember_status cpu_layer_norm_forward(void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x,
                                    ember_ptr weight, ember_ptr bias, ember_ptr y, ember_ptr xhat,
                                    ember_ptr rstd)
{
    struct cpu_device *d = dev;
    struct layer_norm_job j = {.cols = cols,
                               .eps = eps,
                               .x = cpu_f32(x),
                               .weight = cpu_f32(weight),
                               .bias = cpu_f32(bias),
                               .y = cpu_f32(y),
                               .xhat = cpu_f32(xhat),
                               .rstd = cpu_f32(rstd)};
    cpu_parallel_for(d->pool, rows, 4096 / (cols + 1) + 1, layer_norm_forward_rows, &j);
    return EMBER_OK;
}

ember_status cpu_layer_norm_backward(void *dev, int64_t rows, int64_t cols, ember_ptr dy, ember_ptr xhat,
                                     ember_ptr weight, ember_ptr rstd, ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct layer_norm_job j = {.cols = cols,
                               .dy = cpu_f32(dy),
                               .xhat_in = cpu_f32(xhat),
                               .weight = cpu_f32(weight),
                               .rstd_in = cpu_f32(rstd),
                               .dx = cpu_f32(dx)};
    cpu_parallel_for(d->pool, rows, 4096 / (cols + 1) + 1, layer_norm_backward_rows, &j);
    return EMBER_OK;
}

/* ------------------------------------------------------------ RMS norm */

struct rms_norm_job {
    int64_t cols;
    float eps;
    int weighted;
    const float *x, *weight;
    float *y, *rrms;
};

/* rrms = 1 / sqrt(mean(x^2) + eps), y = x * rrms (* weight) */
CPU_WIDEST_VECTORS static void rms_norm_forward_rows(void *p, int64_t begin, int64_t end)
{
    const struct rms_norm_job *j = p;
    int64_t c = j->cols;
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * c;
        float *y = j->y + r * c;
        float squares = 0.0f;
        for (int64_t k = 0; k < c; k++)
            squares += x[k] * x[k];
        float rrms = 1.0f / sqrtf(squares / (float)c + j->eps);
        if (j->weighted)
            for (int64_t k = 0; k < c; k++)
                y[k] = x[k] * rrms * j->weight[k];
        else
            for (int64_t k = 0; k < c; k++)
                y[k] = x[k] * rrms;
        j->rrms[r] = rrms;
    }
}

ember_status cpu_rms_norm_forward(void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x,
                                  ember_ptr weight, int weighted, ember_ptr y, ember_ptr rrms)
{
    struct cpu_device *d = dev;
    struct rms_norm_job j = {.cols = cols,
                             .eps = eps,
                             .weighted = weighted,
                             .x = cpu_f32(x),
                             .weight = weighted ? cpu_f32(weight) : NULL,
                             .y = cpu_f32(y),
                             .rrms = cpu_f32(rrms)};
    cpu_parallel_for(d->pool, rows, 4096 / (cols + 1) + 1, rms_norm_forward_rows, &j);
    return EMBER_OK;
}

/* ------------------------------------------------------------ batch norm
 *
 * As struct ember_batch_norm describes: each plane's sums first (the planes
 * shared between the threads), kept in `work`, then each channel's from
 * its n planes, so the CPU sums as the GPUs do; the elementwise passes by
 * planes again. A plane p = sample * c + channel is x[p * s .. p * s + s). */
struct batch_norm_job {
    const struct ember_batch_norm *b;
    const float *x, *dy, *xhat_in, *weight, *bias, *mean_in, *invstd_in;
    float *work, *mean, *invstd, *running_mean, *running_var, *xhat, *y, *dweight, *dbias, *dx;
};

/* A plane's sums go in 8 float lanes, added in double at the end: with one
 * accumulator the loop is a serial chain the compiler may not reorder (and
 * so does not vectorise); VGG-8 trained 15% slower on one thread so. */
#define LANES 8

static inline double lanes_total(const float *lane)
{
    return ((double)lane[0] + lane[1]) + ((double)lane[2] + lane[3]) + ((double)lane[4] + lane[5]) +
           ((double)lane[6] + lane[7]);
}

/* work[p] = the plane's mean, work[n c + p] = its M2 */
CPU_WIDEST_VECTORS static void batch_norm_plane_stats(void *p, int64_t begin, int64_t end)
{
    const struct batch_norm_job *j = p;
    int64_t s = j->b->s, planes = j->b->n * j->b->c, body = s / LANES * LANES;
    for (int64_t q = begin; q < end; q++) {
        const float *x = j->x + q * s;
        float sum[LANES] = {0}, m2[LANES] = {0};
        for (int64_t k = 0; k < body; k += LANES)
            for (int l = 0; l < LANES; l++)
                sum[l] += x[k + l];
        for (int64_t k = body; k < s; k++)
            sum[0] += x[k];
        float mean = (float)(lanes_total(sum) / (double)s);
        for (int64_t k = 0; k < body; k += LANES)
            for (int l = 0; l < LANES; l++)
                m2[l] += (x[k + l] - mean) * (x[k + l] - mean);
        for (int64_t k = body; k < s; k++)
            m2[0] += (x[k] - mean) * (x[k] - mean);
        j->work[q] = mean;
        j->work[planes + q] = (float)lanes_total(m2);
    }
}

/* each channel's mean and invstd from its planes (Chan's combination), and the running statistics */
static void batch_norm_channel_stats(void *p, int64_t begin, int64_t end)
{
    const struct batch_norm_job *j = p;
    const struct ember_batch_norm *b = j->b;
    int64_t n = b->n, c = b->c;
    float m = (float)(n * b->s);
    for (int64_t ch = begin; ch < end; ch++) {
        float sum = 0.0f, m2 = 0.0f, spread = 0.0f;
        for (int64_t i = 0; i < n; i++)
            sum += j->work[i * c + ch];
        float mean = sum / (float)n;
        for (int64_t i = 0; i < n; i++) {
            float d = j->work[i * c + ch] - mean;
            m2 += j->work[n * c + i * c + ch];
            spread += d * d;
        }
        float var = (m2 + (float)b->s * spread) / m;
        j->mean[ch] = mean;
        j->invstd[ch] = 1.0f / sqrtf(var + b->eps);
        j->running_mean[ch] = (1.0f - b->momentum) * j->running_mean[ch] + b->momentum * mean;
        j->running_var[ch] = (1.0f - b->momentum) * j->running_var[ch] + b->momentum * var * m / (m - 1.0f);
    }
}

CPU_WIDEST_VECTORS static void batch_norm_apply_planes(void *p, int64_t begin, int64_t end)
{
    const struct batch_norm_job *j = p;
    int64_t s = j->b->s, c = j->b->c;
    float floor = j->b->relu ? 0.0f : -INFINITY; /* NaN passes, as ReLU's own op lets it */
    for (int64_t q = begin; q < end; q++) {
        int64_t ch = q % c;
        float mean = j->mean_in[ch], invstd = j->invstd_in[ch], w = j->weight[ch], bias = j->bias[ch];
        const float *x = j->x + q * s;
        float *xhat = j->xhat + q * s, *y = j->y + q * s;
        for (int64_t k = 0; k < s; k++) {
            float h = (x[k] - mean) * invstd, out = h * w + bias;
            xhat[k] = h;
            y[k] = out < floor ? floor : out;
        }
    }
}

/* With the fused ReLU, dy counts only where y = xhat * w + b was positive:
 * the backward pass's g. */
static inline float relu_mask(bool relu, float xhat, float w, float b)
{
    float positive = xhat * w + b > 0.0f ? 1.0f : 0.0f; /* a select, not a branch */
    return relu ? positive : 1.0f;
}

/* a plane's g is made a block at a time on the stack, then summed in lanes:
 * the mask inside the lanes' loop kept GCC from vectorising it (5 times
 * slower) */
#define GRAD_BLOCK 256

/* work[p] = the plane's sum of g, work[n c + p] = its sum of g * xhat */
CPU_WIDEST_VECTORS static void batch_norm_plane_grads(void *p, int64_t begin, int64_t end)
{
    const struct batch_norm_job *j = p;
    int64_t s = j->b->s, c = j->b->c, planes = j->b->n * c;
    bool relu = j->b->relu;
    for (int64_t q = begin; q < end; q++) {
        const float *dy = j->dy + q * s, *xhat = j->xhat_in + q * s;
        float w = j->weight[q % c], b = j->bias[q % c], sum[LANES] = {0}, dot[LANES] = {0};
        for (int64_t start = 0; start < s; start += GRAD_BLOCK) {
            int64_t len = s - start < GRAD_BLOCK ? s - start : GRAD_BLOCK, body = len / LANES * LANES;
            const float *h = xhat + start;
            float g[GRAD_BLOCK];
            for (int64_t k = 0; k < len; k++)
                g[k] = dy[start + k] * relu_mask(relu, h[k], w, b);
            for (int64_t k = 0; k < body; k += LANES)
                for (int l = 0; l < LANES; l++) {
                    sum[l] += g[k + l];
                    dot[l] += g[k + l] * h[k + l];
                }
            for (int64_t k = body; k < len; k++) {
                sum[0] += g[k];
                dot[0] += g[k] * h[k];
            }
        }
        j->work[q] = (float)lanes_total(sum);
        j->work[planes + q] = (float)lanes_total(dot);
    }
}

static void batch_norm_channel_grads(void *p, int64_t begin, int64_t end)
{
    const struct batch_norm_job *j = p;
    int64_t n = j->b->n, c = j->b->c;
    for (int64_t ch = begin; ch < end; ch++) {
        float sum = 0.0f, dot = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            sum += j->work[i * c + ch];
            dot += j->work[n * c + i * c + ch];
        }
        j->dbias[ch] = sum;
        j->dweight[ch] = dot;
    }
}

CPU_WIDEST_VECTORS static void batch_norm_dx_planes(void *p, int64_t begin, int64_t end)
{
    const struct batch_norm_job *j = p;
    const struct ember_batch_norm *b = j->b;
    int64_t s = b->s, c = b->c;
    float m = (float)(b->n * s);
    bool relu = b->relu;
    for (int64_t q = begin; q < end; q++) {
        int64_t ch = q % c;
        float w = j->weight[ch], bias = j->bias[ch], scale = w * j->invstd_in[ch];
        float k1 = b->training ? j->dbias[ch] / m : 0.0f, k2 = b->training ? j->dweight[ch] / m : 0.0f;
        const float *dy = j->dy + q * s, *xhat = j->xhat_in + q * s;
        float *dx = j->dx + q * s;
        for (int64_t k = 0; k < s; k++)
            dx[k] = (dy[k] * relu_mask(relu, xhat[k], w, bias) - k1 - xhat[k] * k2) * scale;
    }
}

/* planes of s values, or channels of n planes: enough of them to a task for about 4096 values */
static int64_t batch_norm_grain(const struct ember_batch_norm *b) { return 4096 / (b->s + 1) + 1; }
static int64_t channel_grain(const struct ember_batch_norm *b) { return 4096 / (b->n + 1) + 1; }

ember_status cpu_batch_norm_stats(void *dev, const struct ember_batch_norm *b, ember_ptr x, ember_ptr work,
                                  ember_ptr mean, ember_ptr invstd, ember_ptr running_mean,
                                  ember_ptr running_var)
{
    struct cpu_device *d = dev;
    struct batch_norm_job j = {.b = b,
                               .x = cpu_f32(x),
                               .work = cpu_f32(work),
                               .mean = cpu_f32(mean),
                               .invstd = cpu_f32(invstd),
                               .running_mean = cpu_f32(running_mean),
                               .running_var = cpu_f32(running_var)};
    cpu_parallel_for(d->pool, b->n * b->c, batch_norm_grain(b), batch_norm_plane_stats, &j);
    cpu_parallel_for(d->pool, b->c, channel_grain(b), batch_norm_channel_stats, &j);
    return EMBER_OK;
}

ember_status cpu_batch_norm_forward(void *dev, const struct ember_batch_norm *b, ember_ptr x, ember_ptr mean,
                                    ember_ptr invstd, ember_ptr weight, ember_ptr bias, ember_ptr xhat,
                                    ember_ptr y)
{
    struct cpu_device *d = dev;
    struct batch_norm_job j = {.b = b,
                               .x = cpu_f32(x),
                               .mean_in = cpu_f32(mean),
                               .invstd_in = cpu_f32(invstd),
                               .weight = cpu_f32(weight),
                               .bias = cpu_f32(bias),
                               .xhat = cpu_f32(xhat),
                               .y = cpu_f32(y)};
    cpu_parallel_for(d->pool, b->n * b->c, batch_norm_grain(b), batch_norm_apply_planes, &j);
    return EMBER_OK;
}

ember_status cpu_batch_norm_backward(void *dev, const struct ember_batch_norm *b, ember_ptr dy,
                                     ember_ptr xhat, ember_ptr weight, ember_ptr bias, ember_ptr invstd,
                                     ember_ptr work, ember_ptr dweight, ember_ptr dbias, ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct batch_norm_job j = {.b = b,
                               .dy = cpu_f32(dy),
                               .xhat_in = cpu_f32(xhat),
                               .weight = cpu_f32(weight),
                               .bias = cpu_f32(bias),
                               .invstd_in = cpu_f32(invstd),
                               .work = cpu_f32(work),
                               .dweight = cpu_f32(dweight),
                               .dbias = cpu_f32(dbias),
                               .dx = cpu_f32(dx)};
    cpu_parallel_for(d->pool, b->n * b->c, batch_norm_grain(b), batch_norm_plane_grads, &j);
    cpu_parallel_for(d->pool, b->c, channel_grain(b), batch_norm_channel_grads, &j);
    cpu_parallel_for(d->pool, b->n * b->c, batch_norm_grain(b), batch_norm_dx_planes, &j);
    return EMBER_OK;
}
