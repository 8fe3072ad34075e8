/* SPDX-License-Identifier: MIT */
/* core/tensor.c — tensor records, storage, views, host transfers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "profile-impl.h"
#include "quant.h"
#include "tensor-impl.h"

/* Largest tensor ember agrees to make: far beyond any device it runs on,
 * small enough that byte counts never overflow. */
#define MAX_TENSOR_BYTES ((int64_t)1 << 40)

int64_t ember_shape_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

void ember_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride)
{
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        stride[i] = s;
        s *= shape[i];
    }
}

bool ember_tensor_is_contiguous(const struct ember_tensor *t)
{
    int64_t s = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->stride[i] != s)
            return false;
        s *= t->shape[i];
    }
    return true;
}

bool ember_same_shape(const struct ember_tensor *a, const struct ember_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

const char *ember_shape_str(const struct ember_tensor *t, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < t->ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, ")");
    return buf;
}

/* ------------------------------------------------------ records and pools */

static struct ember_tensor *tensor_record(ember_ctx *ctx)
{
    struct ember_tensor *t = ctx->free_tensors;
    if (t)
        ctx->free_tensors = t->next_free;
    else if (!(t = ember_host_alloc(ctx, sizeof *t)))
        return NULL;
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    return t;
}

static void tensor_record_free(struct ember_tensor *t)
{
    ember_ctx *ctx = t->ctx;
    t->next_free = ctx->free_tensors;
    ctx->free_tensors = t;
}

static struct ember_storage *storage_new(ember_ctx *ctx, size_t bytes)
{
    struct ember_storage *s = ctx->free_storages;
    if (s)
        ctx->free_storages = s->next_free;
    else if (!(s = ember_host_alloc(ctx, sizeof *s)))
        return NULL;
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    if (ember_buffer_get(ctx, bytes, &s->buf, &s->bytes) != EMBER_OK) {
        s->next_free = ctx->free_storages;
        ctx->free_storages = s;
        return NULL;
    }
    s->refs = 1;
    return s;
}

static void storage_unref(struct ember_storage *s)
{
    if (--s->refs > 0)
        return;
    ember_ctx *ctx = s->ctx;
    if (s->uncached)
        ember_buffer_give_back(ctx, s->buf, s->bytes);
    else
        ember_buffer_put(ctx, s->buf, s->bytes);
    s->next_free = ctx->free_storages;
    ctx->free_storages = s;
}

static ember_status tape_push(struct ember_tensor *t)
{
    ember_ctx *ctx = t->ctx;
    ember_status st = ember_host_grow(ctx, (void **)&ctx->tape_tensors, &ctx->tape_cap, ctx->tape_len + 1,
                                      sizeof *ctx->tape_tensors);
    if (st != EMBER_OK)
        return st;
    ctx->tape_tensors[ctx->tape_len++] = t;
    return EMBER_OK;
}

bool ember_tape_take(struct ember_tensor *t)
{
    ember_ctx *ctx = t->ctx;
    for (int64_t i = ctx->tape_len - 1; i >= 0; i--) /* a tensor just made: at the end, or near it */
        if (ctx->tape_tensors[i] == t) {
            memmove(ctx->tape_tensors + i, ctx->tape_tensors + i + 1,
                    (size_t)(ctx->tape_len - i - 1) * sizeof *ctx->tape_tensors);
            ctx->tape_len--;
            return true;
        }
    return false;
}

ember_status ember_tape_put(struct ember_tensor *t) { return tape_push(t); }

static bool shape_ok(ember_ctx *ctx, int ndim, const int64_t *shape)
{
    if (ndim < 0 || ndim > EMBER_MAX_DIMS) {
        ember_fail(ctx, EMBER_ERR_ARG, "a tensor has 0 to %d dimensions, not %d", EMBER_MAX_DIMS, ndim);
        return false;
    }
    if (ndim > 0 && !shape) {
        ember_fail(ctx, EMBER_ERR_ARG, "the shape is NULL");
        return false;
    }
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0 || (shape[i] > 0 && n > MAX_TENSOR_BYTES / 4 / shape[i])) {
            ember_fail(ctx, EMBER_ERR_ARG, "dimension %d of size %lld is negative or too large", i,
                       (long long)shape[i]);
            return false;
        }
        n *= shape[i];
    }
    return true;
}

/* the bytes a contiguous tensor's values take: 4 an element, or a
 * quantised matrix's blocks (its last axis a whole number of them) */
static size_t data_bytes(ember_dtype dtype, int ndim, const int64_t *shape)
{
    int64_t elements, bytes, numel = ember_shape_numel(ndim, shape);
    if (!ember_quant_block(dtype, &elements, &bytes))
        return (size_t)numel * 4;
    return (size_t)(numel / elements * bytes);
}

struct ember_tensor *ember_tensor_alloc(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape,
                                        enum ember_owner owner)
{
    if (!ember_ctx_ready(ctx) || !shape_ok(ctx, ndim, shape))
        return NULL;
    struct ember_tensor *t = tensor_record(ctx);
    if (!t)
        return NULL;
    t->dtype = dtype;
    t->ndim = ndim;
    t->owner = owner;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = shape[i];
    ember_contiguous_strides(ndim, shape, t->stride);
    /* whole 4-byte words, which is how the backends address memory */
    t->storage = storage_new(ctx, (data_bytes(dtype, ndim, shape) + 3) / 4 * 4);
    if (!t->storage) {
        tensor_record_free(t);
        return NULL;
    }
    if (owner == EMBER_OWNER_TAPE && tape_push(t) != EMBER_OK) {
        ember_tensor_release(t);
        return NULL;
    }
    return t;
}

struct ember_tensor *ember_tensor_view(struct ember_tensor *src, int ndim, const int64_t *shape,
                                       const int64_t *stride, size_t offset, enum ember_owner owner)
{
    ember_ctx *ctx = src->ctx;
    if (!shape_ok(ctx, ndim, shape))
        return NULL;
    struct ember_tensor *t = tensor_record(ctx);
    if (!t)
        return NULL;
    t->dtype = src->dtype;
    t->ndim = ndim;
    t->owner = owner;
    t->offset = offset;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        t->stride[i] = stride[i];
    }
    t->storage = src->storage;
    t->storage->refs++;
    if (owner == EMBER_OWNER_TAPE && tape_push(t) != EMBER_OK) {
        ember_tensor_release(t);
        return NULL;
    }
    return t;
}

void ember_tensor_release(struct ember_tensor *t)
{
    if (!t)
        return;
    if (t->owner != EMBER_OWNER_TAPE && t->grad)
        ember_tensor_release(t->grad);
    if (t->storage)
        storage_unref(t->storage);
    tensor_record_free(t);
}

void ember_tensor_drop_storage(struct ember_tensor *t)
{
    if (t && t->storage) {
        storage_unref(t->storage);
        t->storage = NULL;
    }
}

void ember_tape_clear(ember_ctx *ctx)
{
    if (!ctx)
        return;
    for (int64_t i = 0; i < ctx->tape_len; i++)
        ember_tensor_release(ctx->tape_tensors[i]);
    for (int64_t i = 0; i < ctx->kept_len; i++) /* the products selective recomputation kept */
        ember_tensor_release(ctx->kept[i]);
    ctx->tape_len = 0;
    ctx->node_len = 0;
    ctx->kept_len = 0;
}

ember_tape_mark ember_tape_mark_now(ember_ctx *ctx)
{
    return ctx ? (ember_tape_mark){.tensors = ctx->tape_len, .nodes = ctx->node_len} : (ember_tape_mark){0};
}

ember_status ember_tape_release_since(ember_ctx *ctx, ember_tape_mark mark, ember_tensor *keep)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (ctx->tape_len < mark.tensors || ctx->node_len < mark.nodes)
        return ember_fail(
            ctx, EMBER_ERR_ARG,
            "ember_tape_release_since: the tape was cleared past the mark (%lld tensors on it, the "
            "mark at %lld); take a new mark after ember_tape_clear",
            (long long)ctx->tape_len, (long long)mark.tensors);
    if (ctx->node_len != mark.nodes) /* recorded since: their backward pass needs them */
        return EMBER_OK;
    bool kept = false;
    for (int64_t i = mark.tensors; i < ctx->tape_len; i++) {
        if (ctx->tape_tensors[i] == keep)
            kept = true; /* made since the mark: it moves down to the mark */
        else
            ember_tensor_release(ctx->tape_tensors[i]);
    }
    ctx->tape_len = mark.tensors;
    if (kept)
        ctx->tape_tensors[ctx->tape_len++] = keep;
    return EMBER_OK;
}

/* ----------------------------------------------------------- elementwise */

void ember_ewise_init(struct ember_ewise *e, const struct ember_tensor *out, const struct ember_tensor *a,
                      const struct ember_tensor *b)
{
    const struct ember_tensor *operand[3] = {out, a, b};
    int64_t shape[EMBER_MAX_DIMS], stride[3][EMBER_MAX_DIMS];
    int nd = out->ndim;

    /* align every operand to out's axes from the right; broadcast axes get 0 */
    for (int i = 0; i < nd; i++) {
        shape[i] = out->shape[i];
        for (int k = 0; k < 3; k++) {
            const struct ember_tensor *t = operand[k];
            int j = t ? i - (nd - t->ndim) : -1;
            stride[k][i] = (j < 0 || t->shape[j] == 1) ? 0 : t->stride[j];
        }
    }

    /* drop axes of size 1, and merge an axis into the one before it when
     * every operand steps through the pair as through one axis */
    memset(e, 0, sizeof *e);
    e->numel = ember_shape_numel(out->ndim, out->shape);
    int64_t *merged[3] = {e->stride_out, e->stride_a, e->stride_b};
    int m = 0;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == 1)
            continue;
        bool merge = m > 0;
        for (int k = 0; k < 3 && merge; k++)
            merge = merged[k][m - 1] == stride[k][i] * shape[i];
        int at = merge ? m - 1 : m++;
        e->shape[at] = merge ? e->shape[at] * shape[i] : shape[i];
        for (int k = 0; k < 3; k++)
            merged[k][at] = stride[k][i];
    }
    if (m == 0) { /* one element (or none): a single axis of that length */
        e->shape[0] = e->numel;
        e->stride_out[0] = 1;
        e->stride_a[0] = a ? 1 : 0;
        e->stride_b[0] = b ? 1 : 0;
        m = 1;
    }
    e->ndim = m;
    e->dense = m == 1 && e->stride_out[0] == 1 && (!a || e->stride_a[0] == 1) && (!b || e->stride_b[0] == 1);
}

ember_status ember_tensor_fill(struct ember_tensor *t, float value)
{
    ember_ctx *ctx = t->ctx;
    t->storage->writes++;
    return ctx->ops->fill(ctx->dev, ember_tensor_ptr(t), (size_t)ember_shape_numel(t->ndim, t->shape), value);
}

/* ----------------------------------------------------------- public API */

ember_tensor *ember_tensor_new(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape)
{
    if (!ctx)
        return NULL;
    int64_t elements, bytes;
    bool quantised = ember_quant_block(dtype, &elements, &bytes);
    if (dtype != EMBER_F32 && dtype != EMBER_I32 && !quantised) {
        ember_fail(ctx, EMBER_ERR_ARG, "unknown dtype %d", (int)dtype);
        return NULL;
    }
    if (quantised && (ndim < 1 || !shape || shape[ndim - 1] % elements != 0)) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "a %s tensor's last dimension is a whole number of blocks of %lld weights, not %lld",
                   ember_dtype_name(dtype), (long long)elements,
                   ndim >= 1 && shape ? (long long)shape[ndim - 1] : 0LL);
        return NULL;
    }
    struct ember_tensor *t = ember_tensor_alloc(ctx, dtype, ndim, shape, EMBER_OWNER_USER);
    /* zero bytes are zero weights in every format (each scale 0) */
    if (t && ctx->ops->fill(ctx->dev, ember_tensor_ptr(t), t->storage->bytes / 4, 0.0f) != EMBER_OK) {
        ember_tensor_release(t);
        return NULL;
    }
    return t;
}

/* Copies src into dst (same shape, any strides) with the COPY primitive;
 * a quantised tensor's blocks (always contiguous) as a run of 4-byte words. */
static ember_status copy_into(struct ember_tensor *dst, const struct ember_tensor *src)
{
    ember_ctx *ctx = dst->ctx;
    struct ember_ewise e;
    if (ember_dtype_quantised(src->dtype)) {
        size_t words = (data_bytes(src->dtype, src->ndim, src->shape) + 3) / 4;
        e = (struct ember_ewise){.ndim = 1,
                                 .dense = true,
                                 .numel = (int64_t)words,
                                 .shape = {(int64_t)words},
                                 .stride_out = {1},
                                 .stride_a = {1}};
        return ctx->ops->unary(ctx->dev, EMBER_COPY, &e, ember_tensor_ptr(dst), ember_tensor_ptr(src), 0.0f);
    }
    ember_ewise_init(&e, dst, src, NULL);
    return ctx->ops->unary(ctx->dev, EMBER_COPY, &e, ember_tensor_ptr(dst), ember_tensor_ptr(src), 0.0f);
}

ember_tensor *ember_tensor_copy(const ember_tensor *src)
{
    if (!src)
        return NULL;
    struct ember_tensor *t =
        ember_tensor_alloc(src->ctx, src->dtype, src->ndim, src->shape, EMBER_OWNER_USER);
    if (t && copy_into(t, src) != EMBER_OK) {
        ember_tensor_release(t);
        return NULL;
    }
    return t;
}

ember_status ember_tensor_copy_from(ember_tensor *dst, const ember_tensor *src)
{
    if (!dst || !src)
        return dst ? ember_fail(dst->ctx, EMBER_ERR_ARG, "ember_tensor_copy_from: NULL source")
                   : EMBER_ERR_ARG;
    if (src->ctx != dst->ctx || src->dtype != dst->dtype || !ember_same_shape(dst, src) ||
        (ember_dtype_quantised(dst->dtype) && (!ember_tensor_is_contiguous(dst) || dst->offset != 0))) {
        char sd[96], ss[96];
        return ember_fail(
            dst->ctx, EMBER_ERR_ARG,
            "ember_tensor_copy_from copies between tensors of one context, shape and dtype; got "
            "%s %s and %s %s",
            ember_shape_str(dst, sd, sizeof sd), ember_dtype_name(dst->dtype),
            ember_shape_str(src, ss, sizeof ss), ember_dtype_name(src->dtype));
    }
    return copy_into(dst, src);
}

void ember_tensor_free(ember_tensor *t)
{
    if (!t)
        return;
    if (t->owner != EMBER_OWNER_USER) {
        ember_log(t->ctx, EMBER_LOG_WARN, "ember_tensor_free: ignored a tensor owned by the %s",
                  t->owner == EMBER_OWNER_TAPE     ? "tape (ember_tape_clear frees it)"
                  : t->owner == EMBER_OWNER_PARAMS ? "parameter set"
                                                   : "batcher");
        return;
    }
    ember_tensor_release(t);
}

ember_ctx *ember_tensor_ctx(const ember_tensor *t) { return t ? t->ctx : NULL; }
ember_dtype ember_tensor_dtype(const ember_tensor *t) { return t ? t->dtype : EMBER_F32; }
int ember_tensor_ndim(const ember_tensor *t) { return t ? t->ndim : 0; }

int64_t ember_tensor_dim(const ember_tensor *t, int axis)
{
    if (!t)
        return 0;
    if (axis < 0)
        axis += t->ndim;
    return axis >= 0 && axis < t->ndim ? t->shape[axis] : 0;
}

int64_t ember_tensor_numel(const ember_tensor *t) { return t ? ember_shape_numel(t->ndim, t->shape) : 0; }

size_t ember_tensor_bytes(const ember_tensor *t) { return t ? data_bytes(t->dtype, t->ndim, t->shape) : 0; }

const char *ember_dtype_name(ember_dtype dtype) { return ember_dtype_label(dtype); }

static ember_status check_bytes(const ember_tensor *t, size_t bytes, const char *what)
{
    size_t want = ember_tensor_bytes(t);
    if (bytes != want)
        return ember_fail(t->ctx, EMBER_ERR_ARG, "%s: %zu bytes given for a tensor of %zu bytes", what, bytes,
                          want);
    return EMBER_OK;
}

ember_status ember_tensor_write(ember_tensor *t, const void *src, size_t bytes)
{
    if (!t || (!src && bytes))
        return t ? ember_fail(t->ctx, EMBER_ERR_ARG, "ember_tensor_write: NULL source") : EMBER_ERR_ARG;
    ember_ctx *ctx = t->ctx;
    ember_status st = check_bytes(t, bytes, "ember_tensor_write");
    if (st != EMBER_OK)
        return st;
    t->storage->writes++;
    if (ember_tensor_is_contiguous(t))
        return ctx->ops->write(ctx->dev, ember_tensor_ptr(t), src, bytes);
    /* strided: stage contiguously on the device, then scatter by strides */
    struct ember_tensor *tmp = ember_tensor_alloc(ctx, t->dtype, t->ndim, t->shape, EMBER_OWNER_USER);
    if (!tmp)
        return ctx->status;
    st = ctx->ops->write(ctx->dev, ember_tensor_ptr(tmp), src, bytes);
    if (st == EMBER_OK)
        st = copy_into(t, tmp);
    ember_tensor_release(tmp);
    return st;
}

uint64_t ember_tensor_writes(const ember_tensor *t) { return t ? t->storage->writes : 0; }

ember_status ember_tensor_read(const ember_tensor *t, void *dst, size_t bytes)
{
    if (!t || (!dst && bytes))
        return t ? ember_fail(t->ctx, EMBER_ERR_ARG, "ember_tensor_read: NULL destination") : EMBER_ERR_ARG;
    ember_ctx *ctx = t->ctx;
    ember_status st = check_bytes(t, bytes, "ember_tensor_read");
    if (st != EMBER_OK)
        return st;
    ember_profile_label(ctx, "tensor_read", NULL);
    if (ember_tensor_is_contiguous(t))
        return ctx->ops->read(ctx->dev, dst, ember_tensor_ptr(t), bytes);
    struct ember_tensor *tmp = ember_tensor_alloc(ctx, t->dtype, t->ndim, t->shape, EMBER_OWNER_USER);
    if (!tmp)
        return ctx->status;
    st = copy_into(tmp, t);
    if (st == EMBER_OK)
        st = ctx->ops->read(ctx->dev, dst, ember_tensor_ptr(tmp), bytes);
    ember_tensor_release(tmp);
    return st;
}

ember_status ember_tensor_item(const ember_tensor *t, float *value)
{
    if (!t || !value)
        return t ? ember_fail(t->ctx, EMBER_ERR_ARG, "ember_tensor_item: NULL value") : EMBER_ERR_ARG;
    if (ember_tensor_numel(t) != 1 || t->dtype != EMBER_F32) {
        char shape[96];
        return ember_fail(t->ctx, EMBER_ERR_ARG, "ember_tensor_item needs a one-element F32 tensor, not %s",
                          ember_shape_str(t, shape, sizeof shape));
    }
    return ember_tensor_read(t, value, sizeof *value);
}

ember_status ember_tensor_set_requires_grad(ember_tensor *t, bool requires_grad)
{
    if (!t)
        return EMBER_ERR_ARG;
    if (t->owner == EMBER_OWNER_TAPE)
        return ember_fail(t->ctx, EMBER_ERR_ARG,
                          "only leaf tensors (made by ember_tensor_new or a parameter set) can be "
                          "marked as requiring grad; an op's result requires grad when its inputs do");
    if (requires_grad && t->dtype != EMBER_F32)
        return ember_fail(t->ctx, EMBER_ERR_ARG, "only F32 tensors can require grad");
    t->requires_grad = requires_grad;
    return EMBER_OK;
}

bool ember_tensor_requires_grad(const ember_tensor *t) { return t && t->requires_grad; }

ember_tensor *ember_tensor_grad(const ember_tensor *t) { return t ? t->grad : NULL; }
