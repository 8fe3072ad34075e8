/* SPDX-License-Identifier: MIT */
/*
 * core/params.c — a named parameter set in one allocation.
 *
 * All parameters are views into one flat tensor, and their gradients views
 * into a second, so zero_grad is one fill and an optimizer step is one
 * fused launch over everything. Adding a parameter grows both flat tensors
 * and moves every view onto the new storage. Buffers (state that is saved
 * but not trained, such as BatchNorm's running statistics) live in a third
 * flat tensor, out of the optimizer's reach.
 */
#include <stdlib.h>
#include <string.h>

#include "params-impl.h"

ember_params *ember_params_new(ember_ctx *ctx)
{
    if (!ctx)
        return NULL;
    struct ember_params *p = ember_host_calloc(ctx, 1, sizeof *p);
    if (p)
        p->ctx = ctx;
    return p;
}

void ember_params_free(ember_params *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->count; i++) {
        ember_tensor_release(p->items[i].value);
        free(p->items[i].name);
    }
    ember_tensor_release(p->flat);
    ember_tensor_release(p->flat_grad);
    ember_tensor_release(p->buffers);
    free(p->items);
    free(p);
}

/* Moves a view onto another storage, keeping its offset. */
static void rebase(struct ember_tensor *view, struct ember_storage *storage)
{
    storage->refs++;
    view->storage->refs--; /* the old flat tensor still holds it; released below */
    view->storage = storage;
}

/* A flat tensor of `numel` elements holding the first `keep` of `old`, the
 * rest zero. */
static struct ember_tensor *grow_flat(ember_ctx *ctx, struct ember_tensor *old, int64_t keep, int64_t numel)
{
    struct ember_tensor *flat = ember_tensor_alloc(ctx, EMBER_F32, 1, &numel, EMBER_OWNER_PARAMS);
    if (!flat)
        return NULL;
    flat->storage->uncached = true; /* when the next layer replaces it, its size is of no more use */
    ember_status st = ember_tensor_fill(flat, 0.0f);
    if (st == EMBER_OK && old && keep > 0) {
        struct ember_ewise e = {
            .ndim = 1, .dense = true, .numel = keep, .shape = {keep}, .stride_out = {1}, .stride_a = {1}};
        st = ctx->ops->unary(ctx->dev, EMBER_COPY, &e, ember_tensor_ptr(flat), ember_tensor_ptr(old), 0.0f);
    }
    if (st != EMBER_OK) {
        ember_tensor_release(flat);
        return NULL;
    }
    return flat;
}

/* Adds a parameter (buffer false) or a buffer to the set: grows the bank's
 * flat tensor (and, for a parameter, the gradients') and moves the bank's
 * views onto it. */
static ember_tensor *add_item(ember_params *p, const char *name, int ndim, const int64_t *shape, bool buffer)
{
    if (!p)
        return NULL;
    ember_ctx *ctx = p->ctx;
    const char *fn = buffer ? "ember_params_add_buffer" : "ember_params_add";
    if (!name || !*name) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s: the name is %s", fn, name ? "empty" : "NULL");
        return NULL;
    }
    if (ember_params_find(p, name)) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s: the name \"%s\" is already taken", fn, name);
        return NULL;
    }
    /* a buffer may be a scalar (num_batches_tracked); a parameter has a shape */
    if (ndim < (buffer ? 0 : 1) || ndim > EMBER_MAX_DIMS || (ndim > 0 && !shape)) {
        ember_fail(ctx, EMBER_ERR_ARG, "%s: %s needs %d to %d dimensions", fn, name, buffer ? 0 : 1,
                   EMBER_MAX_DIMS);
        return NULL;
    }
    struct ember_tensor **bank = buffer ? &p->buffers : &p->flat;
    int64_t *used = buffer ? &p->buffers_used : &p->used;
    int64_t numel = ember_shape_numel(ndim, shape);
    int64_t start = (*used + PARAM_ALIGN - 1) / PARAM_ALIGN * PARAM_ALIGN;
    int64_t total = start + numel;

    if (p->count == p->cap) {
        int cap = p->cap ? p->cap * 2 : 8;
        void *items = realloc(p->items, (size_t)cap * sizeof *p->items);
        if (!items) {
            ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for parameter %s", name);
            return NULL;
        }
        p->items = items;
        p->cap = cap;
    }
    char *copy = ember_host_strdup(ctx, name);
    struct ember_tensor *flat = copy ? grow_flat(ctx, *bank, *used, total) : NULL;
    struct ember_tensor *flat_grad = flat && !buffer ? grow_flat(ctx, NULL, 0, total) : NULL;
    if (!flat || (!buffer && !flat_grad)) {
        free(copy);
        ember_tensor_release(flat);
        return NULL;
    }

    int64_t stride[EMBER_MAX_DIMS];
    ember_contiguous_strides(ndim, shape, stride);
    struct ember_tensor *value =
        ember_tensor_view(flat, ndim, shape, stride, (size_t)start, EMBER_OWNER_PARAMS);
    struct ember_tensor *grad = value && !buffer ? ember_tensor_view(flat_grad, ndim, shape, stride,
                                                                     (size_t)start, EMBER_OWNER_PARAMS)
                                                 : NULL;
    if (!value || (!buffer && !grad)) {
        ember_tensor_release(value);
        ember_tensor_release(flat);
        ember_tensor_release(flat_grad);
        free(copy);
        return NULL;
    }
    value->requires_grad = !buffer;
    value->grad = grad;

    /* every earlier item of the bank moves onto the new storage */
    for (int i = 0; i < p->count; i++) {
        if (p->items[i].buffer != buffer)
            continue;
        rebase(p->items[i].value, flat->storage);
        if (!buffer)
            rebase(p->items[i].value->grad, flat_grad->storage);
    }
    ember_tensor_release(*bank);
    *bank = flat;
    if (!buffer) {
        ember_tensor_release(p->flat_grad);
        p->flat_grad = flat_grad;
    }
    *used = total;
    p->items[p->count++] = (struct ember_param){.name = copy, .value = value, .buffer = buffer};
    return value;
}

ember_tensor *ember_params_add(ember_params *p, const char *name, int ndim, const int64_t *shape)
{
    return add_item(p, name, ndim, shape, false);
}

ember_tensor *ember_params_add_buffer(ember_params *p, const char *name, int ndim, const int64_t *shape)
{
    return add_item(p, name, ndim, shape, true);
}

bool ember_params_is_buffer(const ember_params *p, int index)
{
    return p && index >= 0 && index < p->count && p->items[index].buffer;
}

int64_t ember_params_flat_index(const struct ember_params *p, int i)
{
    const struct ember_tensor *bank = p->items[i].buffer ? p->buffers : p->flat;
    return (int64_t)(p->items[i].value->offset - bank->offset);
}

int ember_params_count(const ember_params *p) { return p ? p->count : 0; }

ember_tensor *ember_params_at(const ember_params *p, int index)
{
    return p && index >= 0 && index < p->count ? p->items[index].value : NULL;
}

const char *ember_params_name(const ember_params *p, int index)
{
    return p && index >= 0 && index < p->count ? p->items[index].name : NULL;
}

ember_tensor *ember_params_find(const ember_params *p, const char *name)
{
    for (int i = 0; p && name && i < p->count; i++)
        if (strcmp(p->items[i].name, name) == 0)
            return p->items[i].value;
    return NULL;
}

int64_t ember_params_numel(const ember_params *p)
{
    int64_t n = 0;
    for (int i = 0; p && i < p->count; i++)
        if (!p->items[i].buffer)
            n += ember_tensor_numel(p->items[i].value);
    return n;
}

ember_status ember_params_zero_grad(ember_params *p)
{
    return p && p->flat_grad ? ember_tensor_fill(p->flat_grad, 0.0f) : EMBER_OK;
}
