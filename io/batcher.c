/* SPDX-License-Identifier: MIT */
/*
 * io/batcher.c — the batcher: a data set's samples in (shuffled) order as
 * (B, sample shape...) float batches on the device, augmented on the way
 * when asked, with the epoch's last short batch as views.
 */
#include <stdlib.h>
#include <string.h>

#include "data-impl.h"
#include "engine.h"

/* Two device tensors made once, x (B, sample shape...) and y (B), refilled
 * by every step through host staging buffers of the same size. When the
 * batch does not divide the data set, views of their first `tail` rows
 * serve the epoch's last batch. A step therefore allocates nothing. */
struct ember_batcher {
    ember_ctx *ctx;
    const ember_dataset *ds; /* not owned: must outlive the batcher */
    int64_t batch, steps;
    int64_t next; /* position in `order` of the next batch's first sample */
    bool shuffle;
    uint64_t seed;
    ember_rng rng;
    int64_t epoch;         /* epochs begun before this one */
    ember_augment augment; /* crop_padding 0 and no flip: none */

    int64_t *order;       /* (count): the epoch's order of samples */
    float *x_host;        /* (batch, sample_bytes) */
    int32_t *y_host;      /* (batch), or text's (batch, context) */
    int32_t *tokens_host; /* text: x's tokens (batch, context) */
    float scale[256];     /* byte -> byte / 255.0f */

    struct ember_tensor *x, *y;           /* (batch, ...) and (batch) */
    struct ember_tensor *x_tail, *y_tail; /* (count % batch, ...) views, or NULL */
};

/* Identity order, then Fisher-Yates: every permutation equally likely, and
 * the same one for the same generator state. */
static void order_new_epoch(ember_batcher *b)
{
    int64_t count = b->ds->count;
    for (int64_t i = 0; i < count; i++)
        b->order[i] = i;
    if (!b->shuffle)
        return;
    for (int64_t i = count - 1; i > 0; i--) {
        uint64_t r = (uint64_t)ember_rng_u32(&b->rng) << 32 | ember_rng_u32(&b->rng);
        int64_t j = (int64_t)(r % (uint64_t)(i + 1));
        int64_t swap = b->order[i];
        b->order[i] = b->order[j];
        b->order[j] = swap;
    }
}

/* The generator's draws one order_new_epoch takes */
static uint64_t shuffle_draws(const ember_batcher *b)
{
    return b->shuffle && b->ds->count > 1 ? 2 * (uint64_t)(b->ds->count - 1) : 0;
}

/* One image through the augmentation, bytes to [0, 1] floats: shifted by
 * (dx, dy) in [-padding, padding] with zeros coming in at the border (a
 * random crop of the padded image, torchvision's RandomCrop(size, padding)),
 * then mirrored left-right half the time (RandomHorizontalFlip). The draw
 * comes from the seed, the epoch and the sample's place in it, so it is
 * the same on every device and after a resume. */
/* Sample `index`'s value k in [0, 1]: a byte scaled, or the caller's float. */
static inline float sample_value(const ember_batcher *b, int64_t index, int64_t k)
{
    const ember_dataset *ds = b->ds;
    int64_t at = index * ds->sample_bytes + k;
    return ds->floats ? ds->floats[at] : b->scale[ds->pixels[at]];
}

static void augment_sample(const ember_batcher *b, int64_t index, float *dst, int64_t place)
{
    const ember_dataset *ds = b->ds;
    int64_t c = ds->sample_shape[0], h = ds->sample_shape[1], w = ds->sample_shape[2];
    ember_rng rng = ember_rng_seed(b->augment.seed ^ ((uint64_t)b->epoch * 0x9e3779b97f4a7c15ull) ^
                                   ((uint64_t)place * 0xbf58476d1ce4e5b9ull));
    int64_t pad = b->augment.crop_padding, span = 2 * pad + 1;
    int64_t dx = pad ? (int64_t)(ember_rng_u32(&rng) % (uint32_t)span) - pad : 0;
    int64_t dy = pad ? (int64_t)(ember_rng_u32(&rng) % (uint32_t)span) - pad : 0;
    bool flip = b->augment.flip && (ember_rng_u32(&rng) & 1);
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                int64_t sx = (flip ? w - 1 - x : x) + dx, sy = y + dy;
                bool inside = sx >= 0 && sx < w && sy >= 0 && sy < h;
                dst[(ch * h + y) * w + x] = inside ? sample_value(b, index, (ch * h + sy) * w + sx) : 0.0f;
            }
}

ember_status ember_batcher_set_augment(ember_batcher *b, const ember_augment *augment)
{
    if (!b)
        return EMBER_ERR_ARG;
    ember_augment none = {0};
    const ember_augment *a = augment ? augment : &none;
    bool images = b->ds->sample_ndim == 3;
    if (a->crop_padding < 0 || (a->crop_padding > 0 && images && a->crop_padding >= b->ds->sample_shape[1]) ||
        ((a->crop_padding || a->flip) && !images))
        return ember_fail(b->ctx, EMBER_ERR_ARG,
                          "augmentation is for images (C, H, W), with a crop padding "
                          "from 0 to less than their height; %s has samples of %d dimensions",
                          b->ds->describe, b->ds->sample_ndim);
    b->augment = *a;
    return EMBER_OK;
}

ember_batcher *ember_batcher_new(ember_dataset *ds, int64_t batch, bool shuffle, uint64_t seed)
{
    if (!ds)
        return NULL;
    ember_ctx *ctx = ds->ctx;
    if (batch < 1) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_batcher_new: the batch size is %lld, it must be at least 1",
                   (long long)batch);
        return NULL;
    }
    if (ds->count == 0) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_batcher_new: the data set %s has no samples", ds->describe);
        return NULL;
    }
    if (!ember_ctx_ready(ctx))
        return NULL;
    if (batch > ds->count) /* one batch holds everything: no larger tensors than that */
        batch = ds->count;

    ember_batcher *b = ember_host_calloc(ctx, 1, sizeof *b);
    if (!b)
        return NULL;
    b->ctx = ctx;
    b->ds = ds;
    b->batch = batch;
    b->steps = (ds->count + batch - 1) / batch;
    b->shuffle = shuffle;
    b->seed = seed;
    b->rng = ember_rng_seed(seed);
    for (int i = 0; i < 256; i++)
        b->scale[i] = (float)i / 255.0f;

    int64_t shape[EMBER_MAX_DIMS] = {batch};
    for (int i = 0; i < ds->sample_ndim; i++)
        shape[1 + i] = ds->sample_shape[i];
    int64_t tail = ds->count % batch;
    /* text: tokens x (B, T) I32 and the next tokens y (B, T) */
    int64_t per_sample = ds->text ? ds->sample_bytes : 1;
    if (!(b->order = ember_host_alloc(ctx, (size_t)ds->count * sizeof *b->order)) ||
        (ds->text ? !(b->tokens_host = ember_host_alloc(ctx, (size_t)(batch * per_sample) * sizeof(int32_t)))
                  : !(b->x_host =
                          ember_host_alloc(ctx, (size_t)(batch * ds->sample_bytes) * sizeof *b->x_host))) ||
        !(b->y_host = ember_host_alloc(ctx, (size_t)(batch * per_sample) * sizeof *b->y_host)) ||
        !(b->x = ember_batch_tensor_new(ctx, ds->text ? EMBER_I32 : EMBER_F32, 1 + ds->sample_ndim, shape)) ||
        !(b->y = ember_batch_tensor_new(ctx, EMBER_I32, ds->text ? 2 : 1, shape)) ||
        (tail && !(b->x_tail = ember_batch_tensor_rows(b->x, tail))) ||
        (tail && !(b->y_tail = ember_batch_tensor_rows(b->y, tail)))) {
        ember_batcher_free(b);
        return NULL;
    }
    order_new_epoch(b);
    return b;
}

void ember_batcher_free(ember_batcher *b)
{
    if (!b)
        return;
    ember_batch_tensor_free(b->x_tail);
    ember_batch_tensor_free(b->y_tail);
    ember_batch_tensor_free(b->x);
    ember_batch_tensor_free(b->y);
    free(b->order);
    free(b->x_host);
    free(b->y_host);
    free(b->tokens_host);
    free(b);
}

int64_t ember_batcher_steps(const ember_batcher *b) { return b ? b->steps : 0; }

ember_status ember_batcher_seek(ember_batcher *b, int64_t epoch, int64_t step)
{
    if (!b)
        return EMBER_ERR_ARG;
    if (epoch < 0 || step < 0 || step > b->steps)
        return ember_fail(b->ctx, EMBER_ERR_ARG, "ember_batcher_seek: epoch %lld, step %lld of %lld",
                          (long long)epoch, (long long)step, (long long)b->steps);
    /* each epoch's order is drawn from where the last one left the
     * generator, and a shuffle takes the same number of draws every time:
     * epoch e's starts e shuffles' draws after the seed, reached at once
     * (a checkpoint that claims epoch 10^12 costs no more than epoch 1) */
    b->rng = ember_rng_seed(b->seed);
    ember_rng_skip(&b->rng, (uint64_t)epoch * shuffle_draws(b));
    order_new_epoch(b);
    b->epoch = epoch;
    b->next = step * b->batch < b->ds->count ? step * b->batch : b->ds->count;
    return EMBER_OK;
}

/* A batch of text windows (data-text.c): shuffled, at offsets drawn from
 * the seed, the epoch and each window's place in it; in order, side by side. */
static ember_status text_batch(ember_batcher *b, int64_t rows, double fill_start, ember_tensor **x,
                               ember_tensor **y)
{
    int64_t context = b->ds->sample_bytes;
    for (int64_t r = 0; r < rows; r++) {
        int64_t place = b->next + r;
        ember_rng rng = ember_rng_seed(b->seed ^ ((uint64_t)b->epoch * 0x9e3779b97f4a7c15ull) ^
                                       ((uint64_t)place * 0xbf58476d1ce4e5b9ull));
        ember_text_window(b->ds, b->order[place], b->shuffle ? &rng : NULL, b->tokens_host + r * context,
                          b->y_host + r * context);
    }
    ember_profile_host_end(b->ctx, "fill (host)", fill_start);
    struct ember_tensor *bx = rows == b->batch ? b->x : b->x_tail;
    struct ember_tensor *by = rows == b->batch ? b->y : b->y_tail;
    size_t bytes = (size_t)(rows * context) * sizeof(int32_t);
    ember_status st = ember_tensor_write(bx, b->tokens_host, bytes);
    if (st == EMBER_OK)
        st = ember_tensor_write(by, b->y_host, bytes);
    if (st != EMBER_OK)
        return st;
    b->next += rows;
    *x = bx;
    *y = by;
    return EMBER_OK;
}

ember_status ember_batcher_next(ember_batcher *b, ember_tensor **x, ember_tensor **y)
{
    if (x)
        *x = NULL;
    if (y)
        *y = NULL;
    if (!b)
        return EMBER_ERR_ARG;
    if (!x || !y)
        return ember_fail(b->ctx, EMBER_ERR_ARG, "ember_batcher_next: x and y must not be NULL");
    const ember_dataset *ds = b->ds;
    if (b->next >= ds->count) { /* the epoch is over (*x and *y NULL); the next call starts another */
        b->next = 0;
        b->epoch++;
        order_new_epoch(b);
        return EMBER_OK;
    }

    /* the profile's "batch" rows: filling it on the host, then the writes */
    ember_profile_op(b->ctx, "batch", NULL);
    double fill_start = ember_profile_host_begin(b->ctx);
    int64_t rows = ds->count - b->next < b->batch ? ds->count - b->next : b->batch;
    if (ds->text)
        return text_batch(b, rows, fill_start, x, y);
    int64_t sample = ds->sample_bytes;
    bool augment = b->augment.crop_padding > 0 || b->augment.flip;
    for (int64_t r = 0; r < rows; r++) {
        int64_t index = b->order[b->next + r];
        float *dst = b->x_host + r * sample;
        if (r + 2 < rows && ds->pixels) { /* a shuffled batch's images lie anywhere in the data
                                           * set: ask for the one two ahead while this one converts */
            const uint8_t *ahead = ds->pixels + b->order[b->next + r + 2] * sample;
            for (int64_t k = 0; k < sample; k += 64)
                __builtin_prefetch(ahead + k);
        }
        if (augment) {
            augment_sample(b, index, dst, b->next + r);
        } else if (ds->floats) {
            memcpy(dst, ds->floats + index * sample, (size_t)sample * sizeof *dst);
        } else {
            /* the division the table holds, written out so that it
             * vectorises (a table lookup cannot): the same floats, and
             * every thread waits for this part of the step */
            const uint8_t *src = ds->pixels + index * sample;
            for (int64_t k = 0; k < sample; k++)
                dst[k] = (float)src[k] / 255.0f;
        }
        b->y_host[r] = ds->labels[index];
    }
    ember_profile_host_end(b->ctx, "fill (host)", fill_start);
    struct ember_tensor *bx = rows == b->batch ? b->x : b->x_tail;
    struct ember_tensor *by = rows == b->batch ? b->y : b->y_tail;
    ember_status st = ember_tensor_write(bx, b->x_host, (size_t)(rows * sample) * sizeof *b->x_host);
    if (st == EMBER_OK)
        st = ember_tensor_write(by, b->y_host, (size_t)rows * sizeof *b->y_host);
    if (st != EMBER_OK)
        return st;
    b->next += rows;
    *x = bx;
    *y = by;
    return EMBER_OK;
}
