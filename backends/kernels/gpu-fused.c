/*
 * backends/kernels/gpu-fused.c — softmax-cross-entropy and the optimizer
 * steps through loss.kc and optim.kc, for every GPU backend.
 */
#include <math.h>

#include "gpu.h"

/* Rows of at most this many classes take one work-item each rather than a
 * whole work-group, which would mostly idle. */
#define XENT_ROW_CLASSES 32

ember_status ember_gpu_softmax_xent_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits,
                                            ember_ptr target, ember_ptr prob, ember_ptr loss)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "softmax_xent_forward", n * classes, 2, (ember_ptr[]){logits, prob});
    if (st == EMBER_OK)
        st = ember_gpu_check_extents(gpu, "softmax_xent_forward", n, 2, (ember_ptr[]){target, loss});
    if (st != EMBER_OK || n == 0)
        return st;
    if (classes <= XENT_ROW_CLASSES)
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_softmax_xent_forward_rows, n, GPU_PTR(logits),
                               GPU_PTR(target), GPU_PTR(prob), GPU_PTR(loss), GPU_INT(n), GPU_INT(classes));
    /* one work-group per row */
    size_t groups = n < (int64_t)gpu->max_groups ? (size_t)n : gpu->max_groups;
    return GPU_LAUNCH(gpu, EMBER_KERNEL_softmax_xent_forward, ((const size_t[3]){groups, 1, 1}),
                      (size_t)gpu->tuning.wg_size, GPU_PTR(logits), GPU_PTR(target), GPU_PTR(prob),
                      GPU_PTR(loss), GPU_INT(n), GPU_INT(classes));
}

ember_status ember_gpu_softmax_xent_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob,
                                             ember_ptr target, ember_ptr dloss, float scale,
                                             ember_ptr dlogits)
{
    struct ember_gpu *gpu = dev;
    ember_status st =
        ember_gpu_check_extents(gpu, "softmax_xent_backward", n * classes, 2, (ember_ptr[]){prob, dlogits});
    if (st == EMBER_OK)
        st = ember_gpu_check_extents(gpu, "softmax_xent_backward", n, 2, (ember_ptr[]){target, dloss});
    if (st != EMBER_OK || n * classes == 0)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_softmax_xent_backward, n * classes, GPU_PTR(prob),
                           GPU_PTR(target), GPU_PTR(dloss), GPU_FLOAT(scale), GPU_PTR(dlogits), GPU_INT(n),
                           GPU_INT(classes));
}

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
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_adam_step, (int64_t)n, GPU_PTR(param), GPU_PTR(grad), GPU_PTR(m),
                           GPU_PTR(v), GPU_INT(n), GPU_FLOAT(step), GPU_FLOAT(root_bc2), GPU_FLOAT(s->beta1),
                           GPU_FLOAT(s->beta2), GPU_FLOAT(s->eps), GPU_FLOAT(s->weight_decay));
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
