/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-optim.c — the optimizer steps, each one pass over the
 * parameters, their gradients and their state.
 */
#include <math.h>

#include "cpu-impl.h"

struct optim_job {
    const struct ember_adam_step *adam;
    const struct ember_sgd_step *sgd;
    float *param, *m, *v;
    const float *grad;
};

/* The one primitive here that is bound by arithmetic (a square root and a
 * division per parameter), so it is compiled for wider vectors too
 * (CPU_WIDEST_VECTORS, cpu-impl.h). */

CPU_WIDEST_VECTORS static void adam_range(void *p, int64_t begin, int64_t end)
{
    const struct optim_job *j = p;
    const struct ember_adam_step *s = j->adam;
    float step = s->lr / s->bias_correction1, root_bc2 = sqrtf(s->bias_correction2);
    /* Adam adds the decay to the gradient; AdamW shrinks the parameter */
    float coupled = s->decoupled ? 0.0f : s->weight_decay;
    float shrink = s->decoupled ? 1.0f - s->lr * s->weight_decay : 1.0f;
    for (int64_t i = begin; i < end; i++) {
        float g = j->grad[i] + coupled * j->param[i];
        j->param[i] *= shrink;
        float m = j->m[i] = s->beta1 * j->m[i] + (1.0f - s->beta1) * g;
        float v = j->v[i] = s->beta2 * j->v[i] + (1.0f - s->beta2) * g * g;
        j->param[i] -= step * m / (sqrtf(v) / root_bc2 + s->eps);
    }
}

static void sgd_range(void *p, int64_t begin, int64_t end)
{
    const struct optim_job *j = p;
    const struct ember_sgd_step *s = j->sgd;
    for (int64_t i = begin; i < end; i++) {
        float g = j->grad[i] + s->weight_decay * j->param[i];
        if (s->momentum != 0.0f) {
            float vel = j->m[i] = s->first ? g : s->momentum * j->m[i] + (1.0f - s->dampening) * g;
            g = s->nesterov ? g + s->momentum * vel : vel;
        }
        j->param[i] -= s->lr * g;
    }
}

ember_status cpu_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param,
                           ember_ptr grad, ember_ptr m, ember_ptr v)
{
    struct cpu_device *d = dev;
    struct optim_job j = {
        .adam = s, .param = cpu_f32(param), .grad = cpu_f32(grad), .m = cpu_f32(m), .v = cpu_f32(v)};
    cpu_parallel_for(d->pool, (int64_t)n, 16384, adam_range, &j);
    return EMBER_OK;
}

ember_status cpu_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param,
                          ember_ptr grad, ember_ptr velocity)
{
    struct cpu_device *d = dev;
    struct optim_job j = {.sgd = s, .param = cpu_f32(param), .grad = cpu_f32(grad), .m = cpu_f32(velocity)};
    cpu_parallel_for(d->pool, (int64_t)n, 16384, sgd_range, &j);
    return EMBER_OK;
}
