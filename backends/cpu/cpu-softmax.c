/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-softmax.c — softmax over each row, with attention's
 * causal mask, forward and backward: one pass over a row each, the rows
 * shared between the threads.
 *
 * The exponentials go through poly_expf (cpu-impl.h), which vectorises:
 * glibc's expf is a call per element.
 */
#include <math.h>

#include "cpu-impl.h"

struct softmax_job {
    int64_t cols, causal_rows;
    const float *x, *y_in, *dy;
    float *y, *dx;
};

/* how many keys row r sees: all of them, or those up to its query's position */
static int64_t visible_keys(const struct softmax_job *j, int64_t r)
{
    if (j->causal_rows <= 0)
        return j->cols;
    int64_t seen = r % j->causal_rows + j->cols - j->causal_rows + 1;
    return seen < 0 ? 0 : seen > j->cols ? j->cols : seen;
}

CPU_WIDEST_VECTORS static void softmax_forward_rows(void *p, int64_t begin, int64_t end)
{
    const struct softmax_job *j = p;
    int64_t c = j->cols;
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * c;
        float *y = j->y + r * c;
        int64_t seen = visible_keys(j, r);
        float m = -INFINITY;
        bool nan = false;
        for (int64_t k = 0; k < seen; k++) {
            m = x[k] > m ? x[k] : m;
            nan |= isnan(x[k]);
        }
        float sum = 0.0f;
        for (int64_t k = 0; k < seen; k++) {
            y[k] = poly_expf(x[k] - m);
            sum += y[k];
        }
        /* a row holding NaN is NaN throughout, as PyTorch's; an all -inf row too (0 / 0) */
        float inv = nan ? NAN : 1.0f / sum;
        for (int64_t k = 0; k < seen; k++)
            y[k] *= inv;
        for (int64_t k = seen; k < c; k++)
            y[k] = 0.0f;
    }
}

CPU_WIDEST_VECTORS static void softmax_backward_rows(void *p, int64_t begin, int64_t end)
{
    const struct softmax_job *j = p;
    int64_t c = j->cols;
    for (int64_t r = begin; r < end; r++) {
        const float *y = j->y_in + r * c, *dy = j->dy + r * c;
        float *dx = j->dx + r * c;
        float dot = 0.0f;
        for (int64_t k = 0; k < c; k++)
            dot += dy[k] * y[k];
        for (int64_t k = 0; k < c; k++)
            dx[k] = y[k] * (dy[k] - dot);
    }
}

ember_status cpu_softmax_forward(void *dev, int64_t rows, int64_t cols, int64_t causal_rows, ember_ptr x,
                                 ember_ptr y)
{
    struct cpu_device *d = dev;
    struct softmax_job j = {.cols = cols, .causal_rows = causal_rows, .x = cpu_f32(x), .y = cpu_f32(y)};
    cpu_parallel_for(d->pool, rows, 8192 / (cols + 1) + 1, softmax_forward_rows, &j);
    return EMBER_OK;
}

ember_status cpu_softmax_backward(void *dev, int64_t rows, int64_t cols, ember_ptr y, ember_ptr dy,
                                  ember_ptr dx)
{
    struct cpu_device *d = dev;
    struct softmax_job j = {.cols = cols, .y_in = cpu_f32(y), .dy = cpu_f32(dy), .dx = cpu_f32(dx)};
    cpu_parallel_for(d->pool, rows, 8192 / (cols + 1) + 1, softmax_backward_rows, &j);
    return EMBER_OK;
}
