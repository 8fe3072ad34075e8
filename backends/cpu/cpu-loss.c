/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-loss.c — softmax-cross-entropy, forward and backward,
 * each one pass over the logits.
 */
#include <math.h>
#include <stdbool.h>

#include "cpu-impl.h"

struct cross_entropy_job {
    int64_t classes;
    const float *logits, *prob_in, *dloss;
    const int32_t *target;
    float *prob, *loss, *dlogits;
    float scale;
};

/* the sum of a row's probabilities before they are scaled, in double: a
 * vocabulary of 50,000 terms summed in float would lose digits the loss
 * needs. Eight partial sums, one a lane, so that it vectorises. */
CPU_WIDEST_VECTORS static double row_sum(const float *v, int64_t c)
{
    double part[8] = {0.0};
    int64_t k = 0;
    for (; k + 8 <= c; k += 8)
        for (int l = 0; l < 8; l++)
            part[l] += (double)v[k + l];
    for (; k < c; k++)
        part[0] += (double)v[k];
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* prob = softmax(row), loss = logsumexp(row) - row[target] (from the logits,
 * not from log prob, so that a confident row cannot give log 0). The
 * exponentials go through poly_expf (cpu-impl.h), which vectorises: over a
 * language model's vocabulary glibc's expf, a call an element, was most of
 * the loss's time. A row holding NaN is NaN throughout. */
CPU_WIDEST_VECTORS static void cross_entropy_forward_rows(void *p, int64_t begin, int64_t end)
{
    const struct cross_entropy_job *j = p;
    int64_t c = j->classes;
    for (int64_t i = begin; i < end; i++) {
        const float *x = j->logits + i * c;
        float *prob = j->prob + i * c;
        float m = -INFINITY;
        bool nan = false;
        for (int64_t k = 0; k < c; k++) {
            m = x[k] > m ? x[k] : m;
            nan |= isnan(x[k]);
        }
        if (nan)
            m = NAN;
        for (int64_t k = 0; k < c; k++)
            prob[k] = poly_expf(x[k] - m);
        double sum = row_sum(prob, c);
        float inv = (float)(1.0 / sum);
        for (int64_t k = 0; k < c; k++)
            prob[k] *= inv;
        int32_t t = j->target[i];
        j->loss[i] = t >= 0 && t < c ? (float)(log(sum) + m - x[t]) : NAN;
    }
}

CPU_WIDEST_VECTORS static void cross_entropy_backward_rows(void *p, int64_t begin, int64_t end)
{
    const struct cross_entropy_job *j = p;
    int64_t c = j->classes;
    float s = j->scale * j->dloss[0];
    for (int64_t i = begin; i < end; i++) {
        const float *prob = j->prob_in + i * c;
        float *dx = j->dlogits + i * c;
        int32_t t = j->target[i];
        for (int64_t k = 0; k < c; k++)
            dx[k] = (prob[k] - (k == t ? 1.0f : 0.0f)) * s;
    }
}

ember_status cpu_cross_entropy_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits,
                                       ember_ptr target, ember_ptr prob, ember_ptr loss)
{
    struct cpu_device *d = dev;
    struct cross_entropy_job j = {.classes = classes,
                                  .logits = cpu_f32(logits),
                                  .target = cpu_i32(target),
                                  .prob = cpu_f32(prob),
                                  .loss = cpu_f32(loss)};
    cpu_parallel_for(d->pool, n, 8192 / (classes + 1) + 1, cross_entropy_forward_rows, &j);
    return EMBER_OK;
}

ember_status cpu_cross_entropy_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob,
                                        ember_ptr target, ember_ptr dloss, float scale, ember_ptr dlogits)
{
    struct cpu_device *d = dev;
    struct cross_entropy_job j = {.classes = classes,
                                  .prob_in = cpu_f32(prob),
                                  .target = cpu_i32(target),
                                  .dloss = cpu_f32(dloss),
                                  .scale = scale,
                                  .dlogits = cpu_f32(dlogits)};
    cpu_parallel_for(d->pool, n, 16384 / (classes + 1) + 1, cross_entropy_backward_rows, &j);
    return EMBER_OK;
}
