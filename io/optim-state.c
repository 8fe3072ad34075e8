/* SPDX-License-Identifier: MIT */
/*
 * io/optim-state.c — an optimizer's state (core/optim.c) saved and loaded
 * as safetensors, under the names PyTorch's optimizers give it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "safetensors-impl.h"

/* ------------------------------------------------------------ checkpoints
 *
 * The state as PyTorch's optimizers name it, per parameter: Adam's
 * "<name>.exp_avg" and "<name>.exp_avg_sq", SGD's "<name>.momentum_buffer",
 * with the step count in the metadata ("ember.optimizer_steps"). Loading
 * checks the kind, every name and shape first, as ember_params_load does. */

static const char *const adam_state[] = {"exp_avg", "exp_avg_sq"};
static const char *const sgd_state[] = {"momentum_buffer"};

static const char *state_name(const ember_optim *opt, int k)
{
    return ember_optim_state_count(opt) == 1 ? sgd_state[k] : adam_state[k];
}

/* The trained parameters' indices in the set (buffers have no state). */
static int trained_items(const ember_params *p, int *index)
{
    int n = 0;
    for (int i = 0; i < ember_params_count(p); i++)
        if (!ember_params_is_buffer(p, i))
            index[n++] = i;
    return n;
}

ember_status ember_optim_save(const ember_optim *opt, const char *path, const char *const *metadata)
{
    if (!opt)
        return EMBER_ERR_ARG;
    const ember_params *p = ember_optim_params(opt);
    ember_ctx *ctx = ember_params_ctx(p);
    int kinds = ember_optim_state_count(opt),
        *index = ember_host_alloc(ctx, (size_t)ember_params_count(p) * sizeof *index + 1);
    int n = index ? trained_items(p, index) : 0;
    size_t used = (size_t)ember_params_flat_used(p, false), extra = 0;
    float *host = index ? ember_host_alloc(ctx, (size_t)kinds * used * sizeof *host + 1) : NULL;
    char **names = host ? ember_host_calloc(ctx, (size_t)(n * kinds) + 1, sizeof *names) : NULL;
    struct ember_safetensors_tensor *t =
        names ? ember_host_alloc(ctx, (size_t)(n * kinds) * sizeof *t + 1) : NULL;
    const char **meta = NULL;
    char steps[32];
    ember_status st = t ? EMBER_OK : EMBER_ERR_NOMEM;
    for (int k = 0; k < kinds && st == EMBER_OK; k++)
        st = ember_tensor_read(ember_optim_state(opt, k), host + (size_t)k * used, used * sizeof *host);
    for (int k = 0; k < kinds && st == EMBER_OK; k++)
        for (int j = 0; j < n && st == EMBER_OK; j++) {
            const char *item = ember_params_name(p, index[j]);
            const ember_tensor *value = ember_params_at(p, index[j]);
            size_t len = strlen(item) + strlen(state_name(opt, k)) + 2;
            char *name = names[k * n + j] = ember_host_alloc(ctx, len);
            if (!name) {
                st = EMBER_ERR_NOMEM;
                break;
            }
            snprintf(name, len, "%s.%s", item, state_name(opt, k));
            t[k * n + j] = (struct ember_safetensors_tensor){.name = name,
                                                             .ndim = ember_tensor_ndim(value),
                                                             .shape = ember_tensor_shape(value),
                                                             .values = host + (size_t)k * used +
                                                                       ember_params_flat_index(p, index[j])};
        }
    while (metadata && metadata[extra])
        extra++;
    if (st == EMBER_OK && !(meta = ember_host_calloc(ctx, extra + 5, sizeof *meta)))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK) {
        snprintf(steps, sizeof steps, "%lld", (long long)ember_optim_steps(opt));
        meta[0] = "ember.optimizer", meta[1] = ember_optim_kind(opt);
        meta[2] = "ember.optimizer_steps", meta[3] = steps;
        memcpy(meta + 4, metadata, extra * sizeof *meta);
        st = ember_safetensors_save(ctx, path, t, n * kinds, meta);
    }
    for (int i = 0; names && i < n * kinds; i++)
        free(names[i]);
    free(meta);
    free(t);
    free(names);
    free(host);
    free(index);
    return st;
}

ember_status ember_optim_load(ember_optim *opt, const char *path)
{
    if (!opt)
        return EMBER_ERR_ARG;
    ember_params *p = ember_optim_params(opt);
    ember_ctx *ctx = ember_params_ctx(p);
    struct ember_safetensors st;
    ember_status status = ember_safetensors_open(ctx, path, &st);
    if (status != EMBER_OK)
        return status;
    const char *kind = ember_safetensors_meta_get(&st, "ember.optimizer");
    const char *steps = ember_safetensors_meta_get(&st, "ember.optimizer_steps");
    const char *want = ember_optim_kind(opt);
    int kinds = ember_optim_state_count(opt),
        *index = ember_host_alloc(ctx, (size_t)ember_params_count(p) * sizeof *index + 1);
    int n = index ? trained_items(p, index) : 0;
    size_t used = (size_t)ember_params_flat_used(p, false);
    float *host = NULL;
    char *end = NULL;
    errno = 0;
    long long count = steps ? strtoll(steps, &end, 10) : -1;
    if (!index) {
        status = EMBER_ERR_NOMEM;
    } else if (!kind || strcmp(kind, want) != 0) {
        status = ember_fail(ctx, EMBER_ERR_FORMAT, "%s holds %s%s state, not this %s optimizer's", path,
                            kind ? kind : "no optimizer", kind ? "'s" : "", want);
    } else if (count < 0 || count > EMBER_OPTIM_MAX_STEPS || errno || !end || *end) {
        /* a step count near 2^63 would overflow at the next step */
        status =
            ember_fail(ctx, EMBER_ERR_FORMAT, "%s: its ember.optimizer_steps is not a count from 0 to %lld",
                       path, (long long)EMBER_OPTIM_MAX_STEPS);
    } else if (st.count != n * kinds) {
        status = ember_fail(ctx, EMBER_ERR_FORMAT, "%s holds %d tensors; this optimizer's state is %d", path,
                            st.count, n * kinds);
    } else if (!(host = ember_host_calloc(ctx, (size_t)kinds * used + 1, sizeof *host))) {
        status = EMBER_ERR_NOMEM;
    }
    /* every entry is there with its parameter's shape before anything is read */
    char name[512];
    for (int k = 0; k < kinds && status == EMBER_OK; k++)
        for (int j = 0; j < n && status == EMBER_OK; j++) {
            const char *item = ember_params_name(p, index[j]);
            const ember_tensor *value = ember_params_at(p, index[j]);
            snprintf(name, sizeof name, "%s.%s", item, state_name(opt, k));
            const struct ember_safetensors_entry *e = ember_safetensors_find(&st, name);
            bool same = e && strcmp(e->dtype, "F32") == 0 && e->ndim == ember_tensor_ndim(value);
            for (int d = 0; same && d < e->ndim; d++)
                same = e->shape[d] == (uint64_t)ember_tensor_dim(value, d);
            if (!same)
                status = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %s is %s, not an F32 tensor of %s's shape",
                                    path, name, e ? "another shape or type" : "missing", item);
        }
    for (int k = 0; k < kinds && status == EMBER_OK; k++)
        for (int j = 0; j < n && status == EMBER_OK; j++) {
            snprintf(name, sizeof name, "%s.%s", ember_params_name(p, index[j]), state_name(opt, k));
            status =
                ember_safetensors_read_f32(ctx, &st, ember_safetensors_find(&st, name),
                                           host + (size_t)k * used + ember_params_flat_index(p, index[j]));
        }
    /* Adam's second moments are means of squares: one below zero is no state
     * a run could have (its square root would make every step NaN) */
    for (int j = 0; ember_optim_state_count(opt) == 2 && j < n && status == EMBER_OK; j++) {
        const float *v = host + used + ember_params_flat_index(p, index[j]);
        for (int64_t i = 0; i < ember_tensor_numel(ember_params_at(p, index[j])) && status == EMBER_OK; i++)
            if (v[i] < 0.0f)
                status = ember_fail(ctx, EMBER_ERR_FORMAT,
                                    "%s: %s.exp_avg_sq holds %g at index %lld: a mean of "
                                    "squares cannot be negative",
                                    path, ember_params_name(p, index[j]), (double)v[i], (long long)i);
    }
    for (int k = 0; k < kinds && status == EMBER_OK; k++)
        status = ember_tensor_write(ember_optim_state(opt, k), host + (size_t)k * used, used * sizeof *host);
    if (status == EMBER_OK)
        ember_optim_set_steps(opt, count);
    free(host);
    free(index);
    ember_safetensors_close(&st);
    return status;
}
