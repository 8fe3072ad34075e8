/*
 * backends/opencl/opencl-fused.c — softmax-cross-entropy and the optimizer
 * steps through backends/kernels/loss.kc and optim.kc.
 */
#include <math.h>

#include "opencl-impl.h"

ember_status opencl_softmax_xent_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits,
                                         ember_ptr target, ember_ptr prob, ember_ptr loss)
{
    struct opencl_device *d = dev;
    ember_status st =
        opencl_check_extents(d, "softmax_xent_forward", n * classes, 2, (ember_ptr[]){logits, prob});
    if (st == EMBER_OK)
        st = opencl_check_extents(d, "softmax_xent_forward", n, 2, (ember_ptr[]){target, loss});
    if (st != EMBER_OK || n == 0)
        return st;
    /* one work-group per row */
    size_t groups = n < (int64_t)d->max_groups ? (size_t)n : d->max_groups;
    return OPENCL_LAUNCH(d, EMBER_KERNEL_softmax_xent_forward, ((const size_t[3]){groups, 1, 1}),
                         (size_t)d->tuning.wg_size, OPENCL_PTR(logits), OPENCL_PTR(target), OPENCL_PTR(prob),
                         OPENCL_PTR(loss), OPENCL_INT(n), OPENCL_INT(classes));
}

ember_status opencl_softmax_xent_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob,
                                          ember_ptr target, ember_ptr dloss, float scale, ember_ptr dlogits)
{
    struct opencl_device *d = dev;
    ember_status st =
        opencl_check_extents(d, "softmax_xent_backward", n * classes, 2, (ember_ptr[]){prob, dlogits});
    if (st == EMBER_OK)
        st = opencl_check_extents(d, "softmax_xent_backward", n, 2, (ember_ptr[]){target, dloss});
    if (st != EMBER_OK || n * classes == 0)
        return st;
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_softmax_xent_backward, n * classes, OPENCL_PTR(prob),
                            OPENCL_PTR(target), OPENCL_PTR(dloss), OPENCL_FLOAT(scale), OPENCL_PTR(dlogits),
                            OPENCL_INT(n), OPENCL_INT(classes));
}

ember_status opencl_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param,
                              ember_ptr grad, ember_ptr m, ember_ptr v)
{
    struct opencl_device *d = dev;
    ember_status st = opencl_check_extents(d, "adam_step", (int64_t)n, 4, (ember_ptr[]){param, grad, m, v});
    if (st != EMBER_OK || n == 0)
        return st;
    /* as the CPU backend computes them: in float, once */
    float step = s->lr / s->bias_correction1, root_bc2 = sqrtf(s->bias_correction2);
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_adam_step, (int64_t)n, OPENCL_PTR(param), OPENCL_PTR(grad),
                            OPENCL_PTR(m), OPENCL_PTR(v), OPENCL_INT(n), OPENCL_FLOAT(step),
                            OPENCL_FLOAT(root_bc2), OPENCL_FLOAT(s->beta1), OPENCL_FLOAT(s->beta2),
                            OPENCL_FLOAT(s->eps), OPENCL_FLOAT(s->weight_decay));
}

ember_status opencl_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param,
                             ember_ptr grad, ember_ptr velocity)
{
    struct opencl_device *d = dev;
    ember_status st =
        opencl_check_extents(d, "sgd_step", (int64_t)n, 3, (ember_ptr[]){param, grad, velocity});
    if (st != EMBER_OK || n == 0)
        return st;
    return OPENCL_LAUNCH_1D(d, EMBER_KERNEL_sgd_step, (int64_t)n, OPENCL_PTR(param), OPENCL_PTR(grad),
                            OPENCL_PTR(velocity), OPENCL_INT(n), OPENCL_FLOAT(s->lr),
                            OPENCL_FLOAT(s->momentum), OPENCL_FLOAT(s->dampening),
                            OPENCL_FLOAT(s->weight_decay), OPENCL_INT(s->nesterov), OPENCL_INT(s->first));
}
