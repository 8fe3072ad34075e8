/* SPDX-License-Identifier: MIT */
/*
 * io/data.c — opening a data set by kind, its accessors, and the batcher
 * that turns its bytes into (B, C, H, W) float batches on the device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "data-impl.h"
#include "profile-impl.h"
#include "tensor-impl.h"

typedef ember_status (*data_loader)(ember_dataset *ds, const char *dir, const ember_data_options *options);

/* The kinds, the first being the default. A kind with no default folder and
 * needs_dir set must be given one. */
static const struct data_kind {
    const char *name;
    data_loader load;
    bool needs_dir;
    bool file_ok; /* the path may be a file rather than a folder */
    const char *default_dir;
    const char *hint; /* added to a missing-file error */
    bool file;        /* the "folder" given is a file */
} kinds[] = {
#ifdef _WIN32 /* no package manager brings it: the folder fashion-mnist where ember runs */
    {"fashion-mnist", ember_data_load_idx, true, false, "fashion-mnist",
     "download its four .gz files (github.com/zalandoresearch/fashion-mnist, folder data/fashion) into a "
     "folder fashion-mnist here, or name their folder with ember_data_options.dir"},
#else
    {"fashion-mnist", ember_data_load_idx, true, false, "/usr/share/datasets/fashion-mnist",
     "install Debian's dataset-fashion-mnist (apt install dataset-fashion-mnist) or name its folder with "
     "ember_data_options.dir"},
#endif
    {"mnist", ember_data_load_idx, true, false, NULL, NULL},
    {"cifar10", ember_data_load_cifar, true, false, NULL,
     "the folder is cifar-10-batches-bin, unpacked from cifar-10-binary.tar.gz"},
    {"folder", ember_data_load_folder, true, false, NULL, NULL},
    {"random", ember_data_load_random, false, false, NULL, NULL},
    {"npy", ember_data_load_npy, true, true, NULL, NULL},
    {"csv", ember_data_load_csv, true, true, NULL, NULL},
    {"text", ember_data_load_text, true, true, NULL, "name the text file with ember_data_options.dir", true},
};
#define KIND_COUNT (int)(sizeof kinds / sizeof kinds[0])

const char *ember_split_name(ember_split split) { return split == EMBER_TRAIN ? "train" : "test"; }

static const struct data_kind *kind_find(ember_ctx *ctx, const char *name)
{
    if (!name)
        return &kinds[0];
    for (int i = 0; i < KIND_COUNT; i++)
        if (strcmp(kinds[i].name, name) == 0)
            return &kinds[i];
    char known[256] = "";
    for (int i = 0; i < KIND_COUNT; i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", kinds[i].name);
    }
    ember_fail(ctx, EMBER_ERR_ARG, "unknown data set kind \"%s\"; the kinds are %s", name, known);
    return NULL;
}

/* Appends "; hint" to the context's message. */
static void add_hint(ember_ctx *ctx, const char *hint)
{
    size_t used = strlen(ctx->error);
    if (hint && used < sizeof ctx->error)
        snprintf(ctx->error + used, sizeof ctx->error - used, "; %s", hint);
}

/* The folder to read: the caller's, or the kind's default; it must exist.
 * NULL for a kind that reads no files. */
static ember_status dir_resolve(ember_ctx *ctx, const struct data_kind *kind, const char *given,
                                const char **dir)
{
    *dir = NULL;
    if (!kind->needs_dir)
        return EMBER_OK;
    *dir = given ? given : kind->default_dir;
    if (!*dir)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s has no default %s: name the %s with ember_data_options.dir",
                          kind->name, kind->file ? "file" : "folder",
                          kind->file ? "file" : "folder that holds its files");
    struct stat info;
    if (stat(*dir, &info) != 0) {
        ember_fail(ctx, EMBER_ERR_IO, "cannot open the data folder %s (%s): %s", *dir, kind->name,
                   strerror(errno));
        add_hint(ctx, kind->hint ? kind->hint : "name the right folder with ember_data_options.dir");
        return EMBER_ERR_IO;
    }
    if (kind->file && S_ISDIR(info.st_mode))
        return ember_fail(ctx, EMBER_ERR_IO, "%s is a folder; %s data is one file: give its path", *dir,
                          kind->name);
    if (!S_ISDIR(info.st_mode) && !kind->file_ok)
        return ember_fail(ctx, EMBER_ERR_IO, "the data folder %s (%s) is not a folder", *dir, kind->name);
    return EMBER_OK;
}

static void describe(ember_dataset *ds)
{
    char shape[96] = "";
    for (int i = 0; i < ds->sample_ndim; i++) {
        size_t used = strlen(shape);
        snprintf(shape + used, sizeof shape - used, i ? "x%lld" : "%lld", (long long)ds->sample_shape[i]);
    }
    snprintf(ds->describe, sizeof ds->describe, "%s %s (%lld x %s, %d classes)", ds->kind,
             ember_split_name(ds->split), (long long)ds->count, shape, ds->classes);
}

static void free_class_names(ember_dataset *ds)
{
    for (int i = 0; ds->class_names && i < ds->classes; i++)
        free(ds->class_names[i]);
    free(ds->class_names);
    ds->class_names = NULL;
}

/* ember_dataset_reserve and ember_dataset_reserve_floats: `elem` bytes a value */
static ember_status reserve(ember_dataset *ds, int64_t count, int sample_ndim, const int64_t *sample_shape,
                            int classes, size_t elem)
{
    ember_ctx *ctx = ds->ctx;
    int64_t bytes = count < 0 ? EMBER_DATA_MAX_BYTES + 1 : count;
    for (int i = 0; i < sample_ndim && bytes <= EMBER_DATA_MAX_BYTES; i++) {
        if (sample_shape[i] < 1 || sample_shape[i] > EMBER_DATA_MAX_DIM)
            return ember_fail(ctx, EMBER_ERR_ARG, "%s: dimension %d of a sample is %lld, not 1 to %lld",
                              ds->kind, i, (long long)sample_shape[i], (long long)EMBER_DATA_MAX_DIM);
        bytes *= sample_shape[i]; /* at most 2^34 * 2^20: no overflow */
    }
    if (bytes > EMBER_DATA_MAX_BYTES)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "%s %s: %lld samples of that shape exceed ember's %lld-byte limit", ds->kind,
                          ember_split_name(ds->split), (long long)count, (long long)EMBER_DATA_MAX_BYTES);
    ds->count = count;
    ds->classes = classes;
    ds->sample_ndim = sample_ndim;
    for (int i = 0; i < sample_ndim; i++)
        ds->sample_shape[i] = sample_shape[i];
    ds->sample_bytes = count ? bytes / count : ember_shape_numel(sample_ndim, sample_shape);
    if (elem == 1)
        ds->pixels = ember_host_alloc(ctx, (size_t)bytes);
    else
        ds->floats = ds->owned_floats = ember_host_alloc(ctx, (size_t)bytes * elem + 1);
    ds->labels = ember_host_alloc(ctx, (size_t)count * sizeof *ds->labels + 1);
    if ((!ds->pixels && !ds->floats) || !ds->labels)
        return EMBER_ERR_NOMEM;
    /* the classes' names until the loader gives better ones: their indices */
    if (!(ds->class_names = ember_host_calloc(ctx, (size_t)classes + 1, sizeof *ds->class_names)))
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < classes; i++) {
        char number[16];
        snprintf(number, sizeof number, "%d", i);
        if (!(ds->class_names[i] = ember_host_strdup(ctx, number)))
            return EMBER_ERR_NOMEM;
    }
    return EMBER_OK;
}

ember_status ember_dataset_reserve(ember_dataset *ds, int64_t count, int sample_ndim,
                                   const int64_t *sample_shape, int classes)
{
    return reserve(ds, count, sample_ndim, sample_shape, classes, 1);
}

ember_status ember_dataset_reserve_floats(ember_dataset *ds, int64_t count, int sample_ndim,
                                          const int64_t *sample_shape, int classes)
{
    return reserve(ds, count, sample_ndim, sample_shape, classes, sizeof(float));
}

ember_status ember_dataset_name_classes(ember_dataset *ds, const char *const *names)
{
    char **copy = ember_host_calloc(ds->ctx, (size_t)ds->classes + 1, sizeof *copy);
    for (int i = 0; copy && i < ds->classes; i++) {
        if (!(copy[i] = ember_host_strdup(ds->ctx, names[i]))) {
            for (int k = 0; k < i; k++)
                free(copy[k]);
            free(copy);
            copy = NULL;
        }
    }
    if (!copy)
        return EMBER_ERR_NOMEM;
    free_class_names(ds);
    ds->class_names = copy;
    return EMBER_OK;
}

ember_dataset *ember_dataset_open(ember_ctx *ctx, const ember_data_options *options, ember_split split)
{
    static const ember_data_options defaults = {0};
    if (!ctx)
        return NULL;
    if (!options)
        options = &defaults;
    if (split != EMBER_TRAIN && split != EMBER_TEST) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_dataset_open: split %d is neither EMBER_TRAIN nor EMBER_TEST",
                   (int)split);
        return NULL;
    }
    const struct data_kind *kind = kind_find(ctx, options->kind);
    const char *dir;
    if (!kind || dir_resolve(ctx, kind, options->dir, &dir) != EMBER_OK)
        return NULL;

    ember_dataset *ds = ember_host_calloc(ctx, 1, sizeof *ds);
    if (!ds)
        return NULL;
    ds->ctx = ctx;
    ds->kind = kind->name;
    ds->split = split;
    ember_status st = kind->load(ds, dir, options);
    if (st != EMBER_OK) {
        if (st == EMBER_ERR_IO)
            add_hint(ctx, kind->hint);
        ember_dataset_free(ds);
        return NULL;
    }
    describe(ds);
    ember_log(ctx, EMBER_LOG_INFO, "loaded %s from %s", ds->describe, dir ? dir : "the seed");
    return ds;
}

void ember_dataset_free(ember_dataset *ds)
{
    if (!ds)
        return;
    if (!ds->borrowed) {
        free(ds->pixels);
        free(ds->labels);
    }
    free(ds->owned_floats);
    ember_feature_scaling_free(ds->table);
    free_class_names(ds);
    free(ds);
}

int64_t ember_dataset_count(const ember_dataset *ds) { return ds ? ds->count : 0; }
int ember_dataset_classes(const ember_dataset *ds) { return ds ? ds->classes : 0; }
int ember_dataset_sample_ndim(const ember_dataset *ds) { return ds ? ds->sample_ndim : 0; }
const int64_t *ember_dataset_sample_shape(const ember_dataset *ds) { return ds ? ds->sample_shape : NULL; }
const char *ember_dataset_describe(const ember_dataset *ds) { return ds ? ds->describe : ""; }

const char *ember_dataset_normalize(const ember_dataset *ds)
{
    return !ds          ? ""
           : ds->table  ? "(value - ember.feature_mean) / ember.feature_std"
           : ds->text   ? "none (token indices into ember.vocab)"
           : ds->floats ? "none"
                        : "pixel / 255";
}

const char *ember_dataset_class_name(const ember_dataset *ds, int index)
{
    return ds && ds->class_names && index >= 0 && index < ds->classes ? ds->class_names[index] : NULL;
}

/* ----------------------------------------------------------------- batcher */

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

/* The first `rows` rows of t, as a view owned by the batcher. */
static struct ember_tensor *rows_view(struct ember_tensor *t, int64_t rows)
{
    int64_t shape[EMBER_MAX_DIMS];
    memcpy(shape, t->shape, sizeof shape);
    shape[0] = rows;
    return ember_tensor_view(t, t->ndim, shape, t->stride, t->offset, EMBER_OWNER_BATCHER);
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
        !(b->x = ember_tensor_alloc(ctx, ds->text ? EMBER_I32 : EMBER_F32, 1 + ds->sample_ndim, shape,
                                    EMBER_OWNER_BATCHER)) ||
        !(b->y = ember_tensor_alloc(ctx, EMBER_I32, ds->text ? 2 : 1, shape, EMBER_OWNER_BATCHER)) ||
        (tail && !(b->x_tail = rows_view(b->x, tail))) || (tail && !(b->y_tail = rows_view(b->y, tail)))) {
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
    ember_tensor_release(b->x_tail);
    ember_tensor_release(b->y_tail);
    ember_tensor_release(b->x);
    ember_tensor_release(b->y);
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
static bool text_batch(ember_batcher *b, int64_t rows, double fill_start, ember_tensor **x, ember_tensor **y)
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
    if (ember_tensor_write(bx, b->tokens_host, bytes) != EMBER_OK ||
        ember_tensor_write(by, b->y_host, bytes) != EMBER_OK)
        return false;
    b->next += rows;
    *x = bx;
    *y = by;
    return true;
}

bool ember_batcher_next(ember_batcher *b, ember_tensor **x, ember_tensor **y)
{
    if (x)
        *x = NULL;
    if (y)
        *y = NULL;
    if (!b)
        return false;
    if (!x || !y) {
        ember_fail(b->ctx, EMBER_ERR_ARG, "ember_batcher_next: x and y must not be NULL");
        return false;
    }
    const ember_dataset *ds = b->ds;
    if (b->next >= ds->count) { /* the epoch is over; the next call starts another */
        b->next = 0;
        b->epoch++;
        order_new_epoch(b);
        return false;
    }

    /* the profile's "batch" rows: filling it on the host, then the writes */
    ember_profile_label(b->ctx, "batch", NULL);
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
    if (ember_tensor_write(bx, b->x_host, (size_t)(rows * sample) * sizeof *b->x_host) != EMBER_OK ||
        ember_tensor_write(by, b->y_host, (size_t)rows * sizeof *b->y_host) != EMBER_OK)
        return false;
    b->next += rows;
    *x = bx;
    *y = by;
    return true;
}
