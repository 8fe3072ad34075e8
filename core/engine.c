/* SPDX-License-Identifier: MIT */
/*
 * core/engine.c — the engine's side of engine.h that lives nowhere else:
 * what io/'s loaders and writers read of tensors, parameter sets and
 * optimizers, without their structs.
 */
#include <string.h>

#include "optim-impl.h"
#include "params-impl.h"
#include "tensor-impl.h"

void ember_error_restore(ember_ctx *ctx, ember_status status, const char *message)
{
    ctx->status = status;
    snprintf(ctx->error, sizeof ctx->error, "%s", message);
}

const int64_t *ember_tensor_shape(const ember_tensor *t) { return t->shape; }

ember_tensor *ember_batch_tensor_new(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape)
{
    return ember_tensor_alloc(ctx, dtype, ndim, shape, EMBER_OWNER_BATCHER);
}

ember_tensor *ember_batch_tensor_rows(ember_tensor *t, int64_t rows)
{
    int64_t shape[EMBER_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    shape[0] = rows;
    return ember_tensor_view(t, t->ndim, shape, t->stride, t->offset, EMBER_OWNER_BATCHER);
}

void ember_batch_tensor_free(ember_tensor *t) { ember_tensor_release(t); }

ember_ctx *ember_params_ctx(const ember_params *p) { return p->ctx; }

ember_tensor *ember_params_flat(const ember_params *p, bool buffers)
{
    return buffers ? p->buffers : p->flat;
}

int64_t ember_params_flat_used(const ember_params *p, bool buffers)
{
    return buffers ? p->buffers_used : p->used;
}

ember_params *ember_optim_params(const ember_optim *opt) { return opt->params; }

const char *ember_optim_kind(const ember_optim *opt)
{
    return opt->kind == OPTIM_SGD ? "sgd" : opt->kind == OPTIM_ADAMW ? "adamw" : "adam";
}

int ember_optim_state_count(const ember_optim *opt) { return opt->kind == OPTIM_SGD ? 1 : 2; }

ember_tensor *ember_optim_state(const ember_optim *opt, int k) { return k == 0 ? opt->m : opt->v; }

void ember_optim_set_steps(ember_optim *opt, int64_t steps) { opt->steps = steps; }
