/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-norm.c — layer normalization, forward and backward, one
 * row at a time, the rows shared between the threads.
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
