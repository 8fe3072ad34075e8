/*
 * core/optim.c — Adam and SGD with momentum, each one fused primitive
 * launch over the parameter set's flat storage.
 */
#include <math.h>
#include <stdlib.h>

#include "params-impl.h"

enum optim_kind { OPTIM_ADAM, OPTIM_SGD };

struct ember_optim {
    enum optim_kind kind;
    ember_params *params;
    ember_adam_options adam;
    ember_sgd_options sgd;
    int64_t steps;
    /* state, shaped like params->flat: Adam's moments, or SGD's velocity in m */
    struct ember_tensor *m, *v;
};

ember_adam_options ember_adam_defaults(float lr)
{
    return (ember_adam_options){.lr = lr, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
}

ember_sgd_options ember_sgd_defaults(float lr)
{
    return (ember_sgd_options){.lr = lr};
}

static struct ember_tensor *zeros_like_flat(ember_params *p)
{
    struct ember_tensor *t = ember_tensor_alloc(p->ctx, EMBER_F32, 1, p->flat->shape, EMBER_OWNER_PARAMS);
    if (t && ember_tensor_fill(t, 0.0f) != EMBER_OK) {
        ember_tensor_release(t);
        return NULL;
    }
    return t;
}

static ember_optim *optim_new(ember_params *p, enum optim_kind kind, int state_tensors)
{
    if (!p)
        return NULL;
    if (!p->flat) {
        ember_fail(p->ctx, EMBER_ERR_ARG, "the optimizer was given an empty parameter set");
        return NULL;
    }
    struct ember_optim *opt = ember_host_calloc(p->ctx, 1, sizeof *opt);
    if (!opt)
        return NULL;
    opt->kind = kind;
    opt->params = p;
    opt->m = zeros_like_flat(p);
    opt->v = opt->m && state_tensors == 2 ? zeros_like_flat(p) : NULL;
    if (!opt->m || (state_tensors == 2 && !opt->v)) {
        ember_optim_free(opt);
        return NULL;
    }
    return opt;
}

ember_optim *ember_adam_new(ember_params *params, ember_adam_options o)
{
    if (params && !(o.lr >= 0 && o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1 && o.eps >= 0 &&
                    o.weight_decay >= 0)) {
        ember_fail(params->ctx, EMBER_ERR_ARG,
                   "Adam needs lr >= 0, betas in [0, 1), eps >= 0 and weight_decay >= 0 "
                   "(got lr %g, betas %g %g, eps %g, weight_decay %g)",
                   o.lr, o.beta1, o.beta2, o.eps, o.weight_decay);
        return NULL;
    }
    ember_optim *opt = optim_new(params, OPTIM_ADAM, 2);
    if (opt)
        opt->adam = o;
    return opt;
}

ember_optim *ember_sgd_new(ember_params *params, ember_sgd_options o)
{
    if (params && (!(o.lr >= 0 && o.momentum >= 0 && o.weight_decay >= 0) ||
                   (o.nesterov && (o.momentum <= 0 || o.dampening != 0)))) {
        ember_fail(params->ctx, EMBER_ERR_ARG,
                   "SGD needs lr, momentum and weight_decay >= 0, and Nesterov momentum needs "
                   "momentum > 0 and no dampening");
        return NULL;
    }
    ember_optim *opt = optim_new(params, OPTIM_SGD, 1);
    if (opt)
        opt->sgd = o;
    return opt;
}

void ember_optim_free(ember_optim *opt)
{
    if (!opt)
        return;
    ember_tensor_release(opt->m);
    ember_tensor_release(opt->v);
    free(opt);
}

void ember_optim_zero_grad(ember_optim *opt)
{
    if (opt)
        ember_params_zero_grad(opt->params);
}

void ember_optim_set_lr(ember_optim *opt, float lr)
{
    if (!opt)
        return;
    opt->adam.lr = lr;
    opt->sgd.lr = lr;
}

ember_status ember_optim_step(ember_optim *opt)
{
    if (!opt)
        return EMBER_ERR_ARG;
    ember_params *p = opt->params;
    ember_ctx *ctx = p->ctx;
    size_t n = (size_t)p->used;
    if (opt->m->shape[0] != p->used)
        return ember_fail(ctx, EMBER_ERR_ARG, "parameters were added to the set after its optimizer was "
                                              "made; make the optimizer last");
    ember_ptr param = ember_tensor_ptr(p->flat), grad = ember_tensor_ptr(p->flat_grad);
    opt->steps++;
    if (opt->kind == OPTIM_ADAM) {
        const ember_adam_options *o = &opt->adam;
        struct ember_adam_step s = {
            .lr = o->lr, .beta1 = o->beta1, .beta2 = o->beta2, .eps = o->eps, .weight_decay = o->weight_decay,
            .bias_correction1 = (float)(1.0 - pow(o->beta1, (double)opt->steps)),
            .bias_correction2 = (float)(1.0 - pow(o->beta2, (double)opt->steps))};
        return ctx->ops->adam_step(ctx->dev, n, &s, param, grad, ember_tensor_ptr(opt->m),
                                   ember_tensor_ptr(opt->v));
    }
    const ember_sgd_options *o = &opt->sgd;
    struct ember_sgd_step s = {
        .lr = o->lr, .momentum = o->momentum, .dampening = o->dampening, .weight_decay = o->weight_decay,
        .nesterov = o->nesterov, .first = opt->steps == 1};
    return ctx->ops->sgd_step(ctx->dev, n, &s, param, grad, ember_tensor_ptr(opt->m));
}
