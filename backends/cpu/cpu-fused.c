/*
 * backends/cpu/cpu-fused.c — softmax-cross-entropy and the optimizer steps,
 * each one pass over memory.
 */
#include <math.h>

#include "cpu-impl.h"

struct xent_job {
    int64_t classes;
    const float *logits, *prob_in, *dloss;
    const int32_t *target;
    float *prob, *loss, *dlogits;
    float scale;
};

/* prob = softmax(row), loss = logsumexp(row) - row[target] (from the logits,
 * not from log prob, so that a confident row cannot give log 0) */
static void xent_forward_rows(void *p, int64_t begin, int64_t end)
{
    const struct xent_job *j = p;
    int64_t c = j->classes;
    for (int64_t i = begin; i < end; i++) {
        const float *x = j->logits + i * c;
        float *prob = j->prob + i * c;
        float m = -INFINITY;
        for (int64_t k = 0; k < c; k++)
            if (x[k] > m || isnan(x[k]))
                m = x[k];
        double sum = 0.0;
        for (int64_t k = 0; k < c; k++) {
            prob[k] = expf(x[k] - m);
            sum += prob[k];
        }
        float inv = (float)(1.0 / sum);
        for (int64_t k = 0; k < c; k++)
            prob[k] *= inv;
        int32_t t = j->target[i];
        j->loss[i] = t >= 0 && t < c ? (float)(log(sum) + m - x[t]) : NAN;
    }
}

static void xent_backward_rows(void *p, int64_t begin, int64_t end)
{
    const struct xent_job *j = p;
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

ember_status cpu_softmax_xent_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits, ember_ptr target,
                                      ember_ptr prob, ember_ptr loss)
{
    struct cpu_device *d = dev;
    struct xent_job j = {.classes = classes, .logits = cpu_f32(logits), .target = cpu_i32(target),
                         .prob = cpu_f32(prob), .loss = cpu_f32(loss)};
    cpu_parallel_for(d->pool, n, 8192 / (classes + 1) + 1, xent_forward_rows, &j);
    return EMBER_OK;
}

ember_status cpu_softmax_xent_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob, ember_ptr target,
                                       ember_ptr dloss, float scale, ember_ptr dlogits)
{
    struct cpu_device *d = dev;
    struct xent_job j = {.classes = classes, .prob_in = cpu_f32(prob), .target = cpu_i32(target),
                         .dloss = cpu_f32(dloss), .scale = scale, .dlogits = cpu_f32(dlogits)};
    cpu_parallel_for(d->pool, n, 16384 / (classes + 1) + 1, xent_backward_rows, &j);
    return EMBER_OK;
}

/* ---------------------------------------------------------- optimizers */

struct optim_job {
    const struct ember_adam_step *adam;
    const struct ember_sgd_step *sgd;
    float *param, *m, *v;
    const float *grad;
};

/* The one primitive here that is bound by arithmetic (a square root and a
 * division per parameter), so it is compiled for wider vectors too and the
 * widest the CPU has is picked when the library loads. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CPU_WIDEST_VECTORS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CPU_WIDEST_VECTORS
#endif

CPU_WIDEST_VECTORS static void adam_range(void *p, int64_t begin, int64_t end)
{
    const struct optim_job *j = p;
    const struct ember_adam_step *s = j->adam;
    float step = s->lr / s->bias_correction1, root_bc2 = sqrtf(s->bias_correction2);
    for (int64_t i = begin; i < end; i++) {
        float g = j->grad[i] + s->weight_decay * j->param[i];
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

ember_status cpu_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param, ember_ptr grad,
                           ember_ptr m, ember_ptr v)
{
    struct cpu_device *d = dev;
    struct optim_job j = {.adam = s, .param = cpu_f32(param), .grad = cpu_f32(grad), .m = cpu_f32(m),
                          .v = cpu_f32(v)};
    cpu_parallel_for(d->pool, (int64_t)n, 16384, adam_range, &j);
    return EMBER_OK;
}

ember_status cpu_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param, ember_ptr grad,
                          ember_ptr velocity)
{
    struct cpu_device *d = dev;
    struct optim_job j = {.sgd = s, .param = cpu_f32(param), .grad = cpu_f32(grad), .m = cpu_f32(velocity)};
    cpu_parallel_for(d->pool, (int64_t)n, 16384, sgd_range, &j);
    return EMBER_OK;
}
