/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-optim.c — the optimizer steps through optim.kc, for
 * every GPU backend: one work-item per parameter.
 */
#include <math.h>

#include "gpu.h"

ember_status ember_gpu_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param,
                                 ember_ptr grad, ember_ptr m, ember_ptr v)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "adam_step", (int64_t)n, 4, (ember_ptr[]){param, grad, m, v});
    if (st != EMBER_OK || n == 0)
        return st;
    /* as the CPU backend computes them: in float, once */
    float step = s->lr / s->bias_correction1, root_bc2 = sqrtf(s->bias_correction2);
    float coupled = s->decoupled ? 0.0f : s->weight_decay;
    float shrink = s->decoupled ? 1.0f - s->lr * s->weight_decay : 1.0f;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_adam_step, (int64_t)n, GPU_PTR(param), GPU_PTR(grad), GPU_PTR(m),
                           GPU_PTR(v), GPU_INT(n), GPU_FLOAT(step), GPU_FLOAT(root_bc2), GPU_FLOAT(s->beta1),
                           GPU_FLOAT(s->beta2), GPU_FLOAT(s->eps), GPU_FLOAT(coupled), GPU_FLOAT(shrink));
}

ember_status ember_gpu_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param,
                                ember_ptr grad, ember_ptr velocity)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "sgd_step", (int64_t)n, 3, (ember_ptr[]){param, grad, velocity});
    if (st != EMBER_OK || n == 0)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_sgd_step, (int64_t)n, GPU_PTR(param), GPU_PTR(grad),
                           GPU_PTR(velocity), GPU_INT(n), GPU_FLOAT(s->lr), GPU_FLOAT(s->momentum),
                           GPU_FLOAT(s->dampening), GPU_FLOAT(s->weight_decay), GPU_INT(s->nesterov),
                           GPU_INT(s->first));
}
