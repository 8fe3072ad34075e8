/* SPDX-License-Identifier: MIT */
/*
 * core/ctx-close.c — closing a context, which takes down what the rest of
 * the engine hung on it: a wait's thread (wait.c), the profile and the
 * backend table it stood in for (profile.c), the tape (tensor.c), the
 * buffer cache and the device. A file of its own so that ctx.c, which all
 * of those call, calls none of them back.
 */
#include <stdlib.h>

#include "autograd-impl.h"
#include "profile-impl.h"
#include "tensor-impl.h"

void ember_ctx_free(ember_ctx *ctx)
{
    if (!ctx)
        return;
    ember_wait_end(ctx);
    ember_profile_free(ctx); /* puts the backend's own table back */
    ember_tape_clear(ctx);
    while (ctx->free_tensors) {
        struct ember_tensor *t = ctx->free_tensors;
        ctx->free_tensors = t->next_free;
        free(t);
    }
    while (ctx->free_storages) {
        struct ember_storage *s = ctx->free_storages;
        ctx->free_storages = s->next_free;
        free(s);
    }
    ember_buffer_cache_release(ctx);
    if (ctx->ops)
        ctx->ops->device_close(ctx->dev);
    free(ctx->cache);
    free(ctx->tape_tensors);
    free(ctx->kept);
    free(ctx->nodes);
    free(ctx);
}
