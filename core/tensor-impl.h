/* SPDX-License-Identifier: MIT */
/*
 * core/tensor-impl.h — tensors, their storage, and who owns them.
 *
 * A tensor is a view: shape, strides and an offset into a refcounted
 * storage, which holds one device buffer. Views (reshape, transpose) share
 * the storage; the buffer returns to the context's cache when the last view
 * goes.
 *
 * Each tensor has one owner, which alone frees it:
 *   EMBER_OWNER_USER     ember_tensor_new / ember_tensor_copy: ember_tensor_free
 *   EMBER_OWNER_TAPE     made by an op: ember_tape_clear
 *   EMBER_OWNER_PARAMS   a parameter: ember_params_free
 *   EMBER_OWNER_BATCHER  a batch: ember_batcher_free
 */
#ifndef EMBER_TENSOR_IMPL_H
#define EMBER_TENSOR_IMPL_H

#include "ctx-impl.h"

struct ember_storage {
    ember_ctx *ctx;
    void *buf;
    size_t bytes;
    int refs;
    /* given back to the device when freed instead of kept in the context's
     * cache: a parameter bank's, replaced by a larger one at each layer a
     * network adds, whose old sizes never come back */
    bool uncached;
    struct ember_storage *next_free;
    /* in-place writes since it was made (ember_tensor_writes): a cache of
     * something computed from it is good while this stays */
    uint64_t writes;
};

enum ember_owner {
    EMBER_OWNER_USER,
    EMBER_OWNER_TAPE,
    EMBER_OWNER_PARAMS,
    EMBER_OWNER_BATCHER,
};

struct ember_tensor {
    ember_ctx *ctx;
    ember_dtype dtype;
    int ndim;
    int64_t shape[EMBER_MAX_DIMS];
    int64_t stride[EMBER_MAX_DIMS]; /* in elements */
    size_t offset;                  /* in elements, into storage */
    struct ember_storage *storage;
    enum ember_owner owner;

    /* autograd. Tensors the ops make (owned by the tape) are interior
     * nodes; every other tensor is a leaf. A leaf's gradient is its own and
     * accumulates in place; an interior tensor's gradient is a tape tensor,
     * set by the first contribution and replaced, never changed in place,
     * by later ones, so one gradient may safely serve several tensors. */
    bool requires_grad;
    bool grad_seen; /* ember_backward's scratch: a node using this leaf was found */
    struct ember_tensor *grad;
    /* a gradient tape tensor's: how many interior tensors have it as their
     * gradient still to be used; at 0 ember_backward gives its storage back
     * (core/backward.c), as PyTorch keeps no gradient of a non-leaf */
    int grad_holders;

    struct ember_tensor *next_free;
};

/* A new tensor with fresh, uninitialised, contiguous storage (from the
 * cache), owned by `owner`. Tape-owned tensors join the tape. */
struct ember_tensor *ember_tensor_alloc(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape,
                                        enum ember_owner owner);
/* A new tensor sharing t's storage with the given shape and strides. */
struct ember_tensor *ember_tensor_view(struct ember_tensor *t, int ndim, const int64_t *shape,
                                       const int64_t *stride, size_t offset, enum ember_owner owner);
/* Drops the tensor's record and its hold on the storage (not its owner's
 * business: called by the owner). Also releases a leaf's own gradient. */
void ember_tensor_release(struct ember_tensor *t);
/* Takes a tensor an op made off the tape, so that ember_tape_clear and
 * ember_tape_release_since pass it by (false: it was not on it), and puts
 * one back: for the products selective recomputation keeps
 * (core/ops-recompute.c), which releases them itself. */
bool ember_tape_take(struct ember_tensor *t);
ember_status ember_tape_put(struct ember_tensor *t);
/* Gives a tape tensor's storage back to the pool before the tape is
 * cleared (its record stays on the tape, holding nothing): for a gradient
 * nothing will read again. */
void ember_tensor_drop_storage(struct ember_tensor *t);

/* Where the tensor's first element lives, for the backend. */
static inline ember_ptr ember_tensor_ptr(const struct ember_tensor *t)
{
    return (ember_ptr){.buf = t->storage->buf, .off = t->offset};
}

bool ember_tensor_is_contiguous(const struct ember_tensor *t);
void ember_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride);
bool ember_same_shape(const struct ember_tensor *a, const struct ember_tensor *b);

/* Elementwise geometry over `out`'s shape, with a and b (either may be NULL)
 * broadcast into it: axes are aligned from the right, and an axis of size 1
 * (or a missing one) gets stride 0. Adjacent axes that are contiguous for all
 * operands are merged, so the common case becomes one flat loop. */
void ember_ewise_init(struct ember_ewise *e, const struct ember_tensor *out, const struct ember_tensor *a,
                      const struct ember_tensor *b);

/* out[i] = value over the whole (contiguous) tensor */
ember_status ember_tensor_fill(struct ember_tensor *t, float value);

#endif /* EMBER_TENSOR_IMPL_H */
