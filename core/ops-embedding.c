/* SPDX-License-Identifier: MIT */
/*
 * core/ops-embedding.c — an embedding: a table lookup forward, a
 * scatter-add backward, through the embedding primitives.
 *
 *   index (...) I32, weight (vocab, dim)  ->  y (..., dim), y[i, :] = weight[index[i], :]
 *   dweight[v, :] += the sum of dy[i, :] over every i with index[i] == v
 *
 * as PyTorch's nn.Embedding. No gradient reaches the indices: they are
 * integers.
 */
#include <string.h>

#include "ops-impl.h"
#include "profile-impl.h"

/* y[i, :] = row index[i] of a quantised table, dequantised (a language
 * model's token embedding, which GGUF files keep in blocks) */
static ember_tensor *embedding_quantised(struct ember_tensor *idx, struct ember_tensor *w)
{
    ember_ctx *ctx = idx->ctx;
    int64_t n = ember_tensor_numel(idx), vocab = w->shape[0], dim = w->shape[1], shape[EMBER_MAX_DIMS];
    memcpy(shape, idx->shape, (size_t)idx->ndim * sizeof *shape);
    shape[idx->ndim] = dim;
    struct ember_tensor *y = ember_op_out(ctx, idx->ndim + 1, shape);
    if (!y || ctx->ops->dequantize(ctx->dev, w->dtype, n, dim, vocab, ember_tensor_ptr(idx),
                                   ember_tensor_ptr(w), ember_tensor_ptr(y)) != EMBER_OK)
        return NULL;
    return y;
}

ember_tensor *ember_embedding(ember_tensor *index, ember_tensor *weight)
{
    if (!index || !weight)
        return NULL;
    ember_ctx *ctx = index->ctx;
    char si[96], sw[96];
    bool quantised = ember_dtype_quantised(weight->dtype);
    if (weight->ctx != ctx || index->dtype != EMBER_I32 || (weight->dtype != EMBER_F32 && !quantised) ||
        weight->ndim != 2 || index->ndim + 1 > EMBER_MAX_DIMS) {
        ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_embedding takes token indices (...) I32 and a table (vocab, dim), F32 or quantised, "
            "from one context; got %s %s and %s %s",
            ember_shape_str(index, si, sizeof si), ember_dtype_name(index->dtype),
            ember_shape_str(weight, sw, sizeof sw), ember_dtype_name(weight->dtype));
        return NULL;
    }
    ember_profile_label(ctx, "embedding", "forward");
    struct ember_tensor *idx = index;
    if (!ember_tensor_is_contiguous(index)) { /* a copy of the indices' bits: COPY moves I32 too */
        idx = ember_tensor_alloc(ctx, EMBER_I32, index->ndim, index->shape, EMBER_OWNER_TAPE);
        if (!idx || ember_unary_into(EMBER_COPY, idx, index, 0.0f) != EMBER_OK)
            return NULL;
    }
    if (quantised) /* the rows looked up, dequantised; a quantised table takes no gradient */
        return embedding_quantised(idx, weight);
    struct ember_tensor *w = ember_contiguous(weight);
    if (!w)
        return NULL;
    int64_t n = ember_tensor_numel(idx), vocab = w->shape[0], dim = w->shape[1], shape[EMBER_MAX_DIMS];
    memcpy(shape, idx->shape, (size_t)idx->ndim * sizeof *shape);
    shape[idx->ndim] = dim;
    struct ember_tensor *y = ember_op_out(ctx, idx->ndim + 1, shape);
    if (!y || ctx->ops->embedding_forward(ctx->dev, n, dim, vocab, ember_tensor_ptr(idx), ember_tensor_ptr(w),
                                          ember_tensor_ptr(y)) != EMBER_OK)
        return NULL;
    if (ember_grad_needed(ctx, w, NULL, NULL) && !ember_record(EMBER_OP_EMBEDDING, y, w, idx, NULL))
        return NULL;
    return y;
}

/* dweight += the rows of dy, each added to the row its index names */
ember_status ember_backward_embedding(struct ember_node *n)
{
    struct ember_tensor *w = n->in[0], *idx = n->in[1];
    ember_ctx *ctx = w->ctx;
    struct ember_tensor *dy = ember_contiguous(n->out->grad);
    float beta;
    struct ember_tensor *dw = dy ? ember_grad_target(w, &beta) : NULL;
    if (!dw)
        return ctx->status;
    if (beta == 0.0f &&
        ember_tensor_fill(dw, 0.0f) != EMBER_OK) /* a fresh tensor: the primitive adds to it */
        return ctx->status;
    ember_status st =
        ctx->ops->embedding_backward(ctx->dev, ember_tensor_numel(idx), w->shape[1], w->shape[0],
                                     ember_tensor_ptr(idx), ember_tensor_ptr(dy), ember_tensor_ptr(dw));
    return st == EMBER_OK ? ember_grad_commit(w, dw) : st;
}
