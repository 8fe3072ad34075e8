/* SPDX-License-Identifier: MIT */
/* core/ops-loss.c — cross-entropy through the fused softmax primitive, over samples or over
 * every position of sequences, and with some targets left out (a chat's
 * assistant-only loss). */
#include <stdlib.h>

#include "ops-impl.h"

/* Sequences, logits (N, T, classes) and targets (N, T): every position a
 * row, as PyTorch's F.cross_entropy(logits.view(-1, classes),
 * targets.view(-1)), the mean over all N * T. */
static ember_tensor *cross_entropy_sequence(ember_tensor *logits, ember_tensor *target)
{
    int64_t rows = logits->shape[0] * logits->shape[1], shape[2] = {rows, logits->shape[2]}, one = 1;
    if (!ember_tensor_is_contiguous(target)) {
        ember_fail(logits->ctx, EMBER_ERR_ARG, "ember_cross_entropy: the targets must be contiguous");
        return NULL;
    }
    struct ember_tensor *flat = ember_tensor_view(target, 1, &rows, &one, target->offset, EMBER_OWNER_TAPE);
    return flat ? ember_cross_entropy(ember_reshape(logits, 2, shape), flat) : NULL;
}

/* loss = mean over n of -log softmax(logits_n)[target_n] */
ember_tensor *ember_cross_entropy(ember_tensor *logits, ember_tensor *target)
{
    ember_ctx *ctx = ember_op_begin("ember_cross_entropy", logits, NULL, NULL);
    if (!ctx || !target)
        return NULL;
    if (logits->ndim == 3 && target->ndim == 2 && target->shape[0] == logits->shape[0] &&
        target->shape[1] == logits->shape[1] && target->dtype == EMBER_I32 && target->ctx == ctx)
        return cross_entropy_sequence(logits, target);
    char s1[96], s2[96];
    if (logits->ndim != 2 || target->ndim != 1 || target->shape[0] != logits->shape[0] ||
        target->dtype != EMBER_I32 || target->ctx != ctx) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_cross_entropy takes logits (N, classes) F32 and targets (N) I32, or a sequence's "
                   "(N, T, classes) and (N, T), from one context; got %s and %s%s",
                   ember_shape_str(logits, s1, sizeof s1), ember_shape_str(target, s2, sizeof s2),
                   target->dtype != EMBER_I32 ? " F32" : "");
        return NULL;
    }
    int64_t n = logits->shape[0], classes = logits->shape[1];
    if (!ember_tensor_is_contiguous(target)) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_cross_entropy: the targets must be contiguous");
        return NULL;
    }
    if (n == 0 || classes == 0) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_cross_entropy: empty batch %s",
                   ember_shape_str(logits, s1, sizeof s1));
        return NULL;
    }
    struct ember_tensor *x = ember_contiguous(logits), *t = target;
    struct ember_tensor *prob = x ? ember_op_out_like(x) : NULL;
    struct ember_tensor *losses = prob ? ember_op_out(ctx, 1, &n) : NULL;
    struct ember_tensor *loss = losses ? ember_op_out(ctx, 0, NULL) : NULL;
    if (!loss)
        return NULL;
    ember_status st =
        ctx->ops->cross_entropy_forward(ctx->dev, n, classes, ember_tensor_ptr(x), ember_tensor_ptr(t),
                                        ember_tensor_ptr(prob), ember_tensor_ptr(losses));
    if (st != EMBER_OK ||
        ember_reduce_into(EMBER_SUM, loss, losses, 1, n, 1, 1.0f / (float)n, 0.0f) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *node = ember_record_saving(EMBER_OP_CROSS_ENTROPY, loss, x, t, NULL, prob, NULL);
        if (!node)
            return NULL;
    }
    return loss;
}

/* dlogits = (softmax(logits) - onehot(target)) * dloss / N */
ember_status ember_backward_cross_entropy(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *target = n->in[1], *prob = n->saved[0];
    ember_ctx *ctx = x->ctx;
    int64_t rows = x->shape[0], classes = x->shape[1];
    struct ember_tensor *dx = ember_op_out_like(x);
    if (!dx)
        return ctx->status;
    ember_status st = ctx->ops->cross_entropy_backward(
        ctx->dev, rows, classes, ember_tensor_ptr(prob), ember_tensor_ptr(target),
        ember_tensor_ptr(n->out->grad), 1.0f / (float)rows, ember_tensor_ptr(dx));
    return st == EMBER_OK ? ember_grad_commit(x, dx) : st;
}

/* The mean over the targets that are not EMBER_IGNORE_INDEX: every row
 * scored by the fused primitive, an ignored one against class 0, then
 * weighted, 1 / kept for a row that counts and 0 for one that does not;
 * backward, the primitive's gradient row by row times the same weights.
 * Every tensor has the logits' shape whatever the mask, so a training
 * step's buffers are the same each step (rows gathered by the mask would
 * be of another size each step, and the buffer cache would keep one of
 * each). The targets are read to the host to make the weights: a step's
 * few kilobytes. */
ember_tensor *ember_cross_entropy_ignore(ember_tensor *logits, ember_tensor *target)
{
    ember_ctx *ctx = ember_op_begin("ember_cross_entropy_ignore", logits, NULL, NULL);
    if (!ctx || !target)
        return NULL;
    bool sequence = logits->ndim == 3 && target->ndim == 2;
    if (!(sequence || (logits->ndim == 2 && target->ndim == 1)) || target->dtype != EMBER_I32 ||
        target->ctx != ctx || !ember_tensor_is_contiguous(target) ||
        ember_tensor_numel(target) != ember_tensor_numel(logits) / logits->shape[logits->ndim - 1])
        return ember_cross_entropy(logits, target); /* its message says what it takes */
    int64_t rows = ember_tensor_numel(target), classes = logits->shape[logits->ndim - 1], kept = 0;
    int32_t *t = malloc((size_t)rows * sizeof *t);
    float *w = malloc((size_t)rows * sizeof *w);
    if (!t || !w) {
        free(t);
        free(w);
        ember_fail(ctx, EMBER_ERR_NOMEM, "ember_cross_entropy_ignore: out of host memory for %lld targets",
                   (long long)rows);
        return NULL;
    }
    ember_tensor *loss = NULL;
    if (ember_tensor_read(target, t, (size_t)rows * sizeof *t) != EMBER_OK)
        goto done;
    for (int64_t i = 0; i < rows; i++)
        kept += t[i] != EMBER_IGNORE_INDEX;
    if (kept == rows) {
        loss = ember_cross_entropy(logits, target);
        goto done;
    }
    for (int64_t i = 0; i < rows; i++) { /* none kept: every weight 0, a loss of 0 and no gradient */
        bool counts = t[i] != EMBER_IGNORE_INDEX;
        w[i] = counts ? 1.0f / (float)kept : 0.0f;
        t[i] = counts ? t[i] : 0;
    }
    int64_t flat[2] = {rows, classes};
    struct ember_tensor *x = ember_contiguous(logits->ndim == 2 ? logits : ember_reshape(logits, 2, flat));
    struct ember_tensor *scored = x ? ember_tensor_alloc(ctx, EMBER_I32, 1, &rows, EMBER_OWNER_TAPE) : NULL;
    struct ember_tensor *weights = scored ? ember_op_out(ctx, 1, &rows) : NULL;
    struct ember_tensor *prob = weights ? ember_op_out_like(x) : NULL;
    struct ember_tensor *losses = prob ? ember_op_out(ctx, 1, &rows) : NULL;
    struct ember_tensor *out = losses ? ember_op_out(ctx, 0, NULL) : NULL;
    if (!out || ember_tensor_write(scored, t, (size_t)rows * sizeof *t) != EMBER_OK ||
        ember_tensor_write(weights, w, (size_t)rows * sizeof *w) != EMBER_OK ||
        ctx->ops->cross_entropy_forward(ctx->dev, rows, classes, ember_tensor_ptr(x),
                                        ember_tensor_ptr(scored), ember_tensor_ptr(prob),
                                        ember_tensor_ptr(losses)) != EMBER_OK ||
        ember_binary_into(EMBER_MUL, losses, losses, weights, 0.0f) != EMBER_OK ||
        ember_reduce_into(EMBER_SUM, out, losses, 1, rows, 1, 1.0f, 0.0f) != EMBER_OK)
        goto done;
    if (ember_grad_needed(ctx, x, NULL, NULL)) {
        struct ember_node *node =
            ember_record_saving(EMBER_OP_CROSS_ENTROPY_IGNORE, out, x, scored, weights, prob, NULL);
        if (!node)
            goto done;
    }
    loss = out;
done:
    free(t);
    free(w);
    return loss;
}

/* dlogits = (softmax(logits) - onehot(target)) * dloss * weight, row by row */
ember_status ember_backward_cross_entropy_ignore(struct ember_node *n)
{
    struct ember_tensor *x = n->in[0], *target = n->in[1], *weights = n->in[2], *prob = n->saved[0];
    ember_ctx *ctx = x->ctx;
    int64_t rows = x->shape[0], classes = x->shape[1], column[2] = {rows, 1}, stride[2] = {1, 1};
    struct ember_tensor *dx = ember_op_out_like(x);
    struct ember_tensor *per_row =
        dx ? ember_tensor_view(weights, 2, column, stride, weights->offset, EMBER_OWNER_TAPE) : NULL;
    if (!per_row)
        return ctx->status;
    ember_status st = ctx->ops->cross_entropy_backward(
        ctx->dev, rows, classes, ember_tensor_ptr(prob), ember_tensor_ptr(target),
        ember_tensor_ptr(n->out->grad), 1.0f, ember_tensor_ptr(dx));
    if (st == EMBER_OK)
        st = ember_binary_into(EMBER_MUL, dx, dx, per_row, 0.0f);
    return st == EMBER_OK ? ember_grad_commit(x, dx) : st;
}
