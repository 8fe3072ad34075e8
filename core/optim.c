/* SPDX-License-Identifier: MIT */
/*
 * core/optim.c — Adam, AdamW and SGD with momentum, each one fused
 * primitive launch over the parameter set's flat storage (AdamW one per
 * run of parameters that decay alike), and gradient clipping by the
 * global norm. Saving and loading their state is io/optim-state.c's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops-impl.h"
#include "optim-impl.h"
#include "params-impl.h"
#include "profile-impl.h"

ember_adam_options ember_adam_defaults(float lr)
{
    return (ember_adam_options){.lr = lr, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
}

ember_sgd_options ember_sgd_defaults(float lr) { return (ember_sgd_options){.lr = lr}; }

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

ember_optim *ember_adamw_new(ember_params *params, ember_adam_options o)
{
    ember_optim *opt = ember_adam_new(params, o);
    if (opt)
        opt->kind = OPTIM_ADAMW;
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

ember_status ember_optim_zero_grad(ember_optim *opt)
{
    if (!opt)
        return EMBER_OK;
    ember_profile_label(opt->params->ctx, "zero_grad", NULL);
    return ember_params_zero_grad(opt->params);
}

ember_status ember_optim_set_lr(ember_optim *opt, float lr)
{
    if (!opt)
        return EMBER_ERR_ARG;
    if (!(lr >= 0.0f) || isinf(lr))
        return ember_fail(opt->params->ctx, EMBER_ERR_ARG,
                          "ember_optim_set_lr: the learning rate %g is not a finite number of 0 or more",
                          (double)lr);
    opt->adam.lr = lr;
    opt->sgd.lr = lr;
    return EMBER_OK;
}

/* One launch of the optimizer's primitive over flat elements [start, end) */
static ember_status step_range(ember_optim *opt, void *s, int64_t start, int64_t end, bool decays)
{
    ember_params *p = opt->params;
    ember_ctx *ctx = p->ctx;
    ember_ptr at[4] = {ember_tensor_ptr(p->flat), ember_tensor_ptr(p->flat_grad), ember_tensor_ptr(opt->m),
                       opt->v ? ember_tensor_ptr(opt->v) : (ember_ptr){0}};
    for (int k = 0; k < 4; k++)
        at[k].off += (size_t)start;
    size_t n = (size_t)(end - start);
    if (opt->kind == OPTIM_SGD)
        return ctx->ops->sgd_step(ctx->dev, n, s, at[0], at[1], at[2]);
    struct ember_adam_step a = *(struct ember_adam_step *)s;
    a.weight_decay = decays ? a.weight_decay : 0.0f;
    return ctx->ops->adam_step(ctx->dev, n, &a, at[0], at[1], at[2], at[3]);
}

/* One launch per run of neighbouring parameters that step alike. A frozen
 * parameter (its requires_grad off: ember_tensor_set_requires_grad) is not
 * stepped at all, so no weight decay or momentum moves it. With AdamW's
 * decay, those of two or more dimensions (weights, embeddings) decay and
 * the rest (biases, the norms' weights) do not, as nanoGPT groups them. A
 * run reaches to the next run's start, padding included (zeros, which
 * stay zero); one run of everything is one launch over the flat tensor. */
enum { RUN_FROZEN = 2 };
static ember_status step_runs(ember_optim *opt, void *s, bool split_decay)
{
    ember_params *p = opt->params;
    int64_t start = 0;
    int run = -1; /* the run under way: 0 or 1 (whether it decays) or RUN_FROZEN; -1 before the first */
    ember_status st = EMBER_OK;
    for (int i = 0; i <= p->count && st == EMBER_OK; i++) {
        if (i < p->count && p->items[i].buffer)
            continue;
        const struct ember_tensor *v = i < p->count ? p->items[i].value : NULL;
        int kind = !v ? -2 : !v->requires_grad ? RUN_FROZEN : split_decay ? v->ndim >= 2 : 1;
        if (run >= 0 && kind != run) {
            int64_t end = v ? ember_params_flat_index(p, i) : p->used;
            if (run != RUN_FROZEN)
                st = step_range(opt, s, start, end, run == 1);
            start = end;
        }
        run = kind;
    }
    return st;
}

ember_status ember_optim_step(ember_optim *opt)
{
    if (!opt)
        return EMBER_ERR_ARG;
    ember_params *p = opt->params;
    ember_ctx *ctx = p->ctx;
    if (opt->m->shape[0] != p->used)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "parameters were added to the set after its optimizer was "
                          "made; make the optimizer last");
    opt->steps++;
    p->flat->storage->writes++;
    static const char *const names[] = {"adam", "adamw", "sgd"};
    ember_profile_label(ctx, names[opt->kind], "step");
    if (opt->kind == OPTIM_ADAM || opt->kind == OPTIM_ADAMW) {
        const ember_adam_options *o = &opt->adam;
        struct ember_adam_step s = {.lr = o->lr,
                                    .beta1 = o->beta1,
                                    .beta2 = o->beta2,
                                    .eps = o->eps,
                                    .weight_decay = o->weight_decay,
                                    .bias_correction1 = (float)(1.0 - pow(o->beta1, (double)opt->steps)),
                                    .bias_correction2 = (float)(1.0 - pow(o->beta2, (double)opt->steps)),
                                    .decoupled = opt->kind == OPTIM_ADAMW};
        return step_runs(opt, &s, opt->kind == OPTIM_ADAMW && o->weight_decay != 0.0f);
    }
    const ember_sgd_options *o = &opt->sgd;
    struct ember_sgd_step s = {.lr = o->lr,
                               .momentum = o->momentum,
                               .dampening = o->dampening,
                               .weight_decay = o->weight_decay,
                               .nesterov = o->nesterov,
                               .first = opt->steps == 1};
    return step_runs(opt, &s, false);
}

int64_t ember_optim_steps(const ember_optim *opt) { return opt ? opt->steps : 0; }

/* ------------------------------------------------------------- clipping */

/* As torch.nn.utils.clip_grad_norm_: the norm of every gradient taken as
 * one vector, and every gradient scaled by max_norm / (norm + 1e-6) when
 * that is below 1. One sum of squares over the flat gradient (its padding
 * is zero), read back: a wait for the device each step. */
ember_status ember_clip_grad_norm(ember_params *params, float max_norm, float *total_norm)
{
    if (!params)
        return EMBER_ERR_ARG;
    ember_ctx *ctx = params->ctx;
    if (!(max_norm > 0.0f))
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_clip_grad_norm: max_norm is %g; it must be above 0",
                          max_norm);
    if (!params->flat_grad) {
        if (total_norm)
            *total_norm = 0.0f;
        return EMBER_OK;
    }
    ember_profile_label(ctx, "clip_grad_norm", NULL);
    struct ember_tensor *g = params->flat_grad;
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    struct ember_tensor *squares = ember_binary_new(EMBER_MUL, g, g, 0.0f);
    struct ember_tensor *sum = squares ? ember_op_out(ctx, 0, NULL) : NULL;
    float value = 0.0f;
    ember_status st =
        sum ? ember_reduce_into(EMBER_SUM, sum, squares, 1, g->shape[0], 1, 1.0f, 0.0f) : ctx->status;
    if (st == EMBER_OK)
        st = ember_tensor_item(sum, &value);
    ember_tape_release_since(ctx, mark, NULL);
    float norm = sqrtf(value), coef = max_norm / (norm + 1e-6f);
    if (st == EMBER_OK && coef < 1.0f)
        st = ember_unary_into(EMBER_SCALE, g, g, coef);
    if (total_norm)
        *total_norm = norm;
    return st;
}
