/* SPDX-License-Identifier: MIT */
/*
 * io/data-npy.c — a data set from NumPy arrays (docs/interop.md):
 *
 *     dir/x_train.npy  dir/y_train.npy  dir/x_test.npy  dir/y_test.npy
 *     data.npz   holding the same four (numpy.savez or savez_compressed)
 *
 * x is (N, C, H, W) images or (N, F) feature vectors: uint8 is kept as
 * bytes and scaled to [0, 1] as ember's image data sets are; float16/32/64
 * and int32/64 become floats used as they are. y is (N,) class indices,
 * int64 as NumPy makes them (or int32, uint8), each from 0 to 2^20. The
 * classes are 0 to the largest label of either split, so that both splits
 * (and the model) agree on the count whatever labels the test split lacks;
 * at least half of them must have a sample, so that one wrong label cannot
 * size the model. Both splits' headers are read and checked against each
 * other (counts, one sample shape) before any values are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert-impl.h"
#include "data-impl.h"
#include "npy-impl.h"

#define NPY_MAX_CLASSES (1 << 20)

/* Opens the array `what` ("x_train") of the folder or archive. */
static ember_status open_array(ember_ctx *ctx, const char *dir, bool archive, const char *what,
                               struct npy_stream *s)
{
    char name[4200];
    snprintf(name, sizeof name, archive ? "%s.npy" : "%s/%s.npy", archive ? what : dir, what);
    return archive ? npz_open_entry(ctx, dir, name, s, NULL) : npy_open_file(ctx, name, s);
}

/* A split's two arrays, open, their headers read and checked against
 * each other: y (N,) integers, x (N, C, H, W) or (N, features). Every
 * header of both splits is read before any values are, so that a wrong
 * shape or count costs nothing: an x_test of another sample shape was
 * found after a whole epoch of training, and a y of a billion labels was
 * inflated before its count was compared with x's. */
struct split_arrays {
    struct npy_stream y, x;
    struct npy_header hy, hx;
};

static ember_status open_split(ember_ctx *ctx, const char *dir, bool archive, ember_split split,
                               struct split_arrays *a)
{
    bool train = split == EMBER_TRAIN;
    ember_status st = open_array(ctx, dir, archive, train ? "y_train" : "y_test", &a->y);
    if (st == EMBER_OK && (st = npy_read_header(&a->y, &a->hy)) == EMBER_OK &&
        (a->hy.ndim != 1 || a->hy.kind == EMBER_NUM_F16 || a->hy.kind == EMBER_NUM_F32 ||
         a->hy.kind == EMBER_NUM_F64))
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: labels are a 1-dimensional array of integers (class indices), "
                        "not %d dimensions of %s",
                        a->y.name, a->hy.ndim,
                        a->hy.kind == NPY_UINT8 || a->hy.kind == EMBER_NUM_I32 || a->hy.kind == EMBER_NUM_I64
                            ? "integers"
                            : "floats (convert with y.astype(numpy.int64))");
    int64_t count = st == EMBER_OK ? (int64_t)a->hy.numel : 0;
    if (st == EMBER_OK &&
        (st = open_array(ctx, dir, archive, train ? "x_train" : "x_test", &a->x)) == EMBER_OK &&
        (st = npy_read_header(&a->x, &a->hx)) == EMBER_OK && (a->hx.ndim == 2 || a->hx.ndim == 4) &&
        a->hx.shape[0] != count)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s holds %lld samples but %s %lld labels: x and y are the same samples, row for row "
                        "(a split made with different lengths, or one array filtered and not the other?)",
                        a->x.name, (long long)a->hx.shape[0], a->y.name, (long long)count);
    else if (st == EMBER_OK && a->hx.ndim != 2 && a->hx.ndim != 4)
        st =
            ember_fail(ctx, EMBER_ERR_FORMAT,
                       "%s has %d dimensions (%lld first); ember takes (N, C, H, W) images or "
                       "(N, features) vectors, with N the %lld labels of y",
                       a->x.name, a->hx.ndim, a->hx.ndim ? (long long)a->hx.shape[0] : 0ll, (long long)count);
    return st;
}

static void close_split(struct split_arrays *a)
{
    npy_stream_close(&a->y);
    npy_stream_close(&a->x);
}

/* A split's labels, from its open y: (count) class indices into `labels`
 * (allocated), their largest into *most. */
static ember_status read_labels(ember_ctx *ctx, struct split_arrays *a, int32_t **labels, int32_t *most)
{
    struct npy_stream *s = &a->y;
    const struct npy_header *h = &a->hy;
    float *values = NULL;
    ember_status st = EMBER_OK;
    if (!(values = ember_host_alloc(ctx, (size_t)h->numel * sizeof *values + 1)) ||
        !(*labels = ember_host_alloc(ctx, (size_t)h->numel * sizeof **labels + 1)))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK && (st = npy_read_values(s, h, values, NULL)) == EMBER_OK)
        st = npy_stream_end(s);
    *most = -1;
    for (uint64_t i = 0; st == EMBER_OK && i < h->numel; i++) {
        if (values[i] < 0 || values[i] >= NPY_MAX_CLASSES)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: label %llu is %.0f, not a class index from 0 to %d",
                            s->name, (unsigned long long)i, (double)values[i], NPY_MAX_CLASSES - 1);
        else if (((*labels)[i] = (int32_t)values[i]) > *most)
            *most = (*labels)[i];
    }
    free(values);
    return st;
}

/* The class count is the largest label + 1, so one wrong label would size
 * the model: a 2.4 KB y_train holding 10^6 gave a head of 65 M parameters.
 * At least half of the classes must have a sample in one split or the
 * other. */
static ember_status check_classes(ember_ctx *ctx, const char *dir, const int32_t *a, int64_t na,
                                  const int32_t *b, int64_t nb, int classes)
{
    unsigned char *seen = ember_host_calloc(ctx, (size_t)classes, 1);
    if (!seen)
        return EMBER_ERR_NOMEM;
    int count = 0;
    for (int64_t i = 0; i < na + nb; i++) {
        int32_t label = i < na ? a[i] : b[i - na];
        count += !seen[label];
        seen[label] = 1;
    }
    free(seen);
    if (2 * (int64_t)count >= classes)
        return EMBER_OK;
    return ember_fail(
        ctx, EMBER_ERR_FORMAT,
        "%s: the labels go up to %d, so the model would have %d classes, but only %d of them have "
        "a sample: a label is wrong, or number the classes from 0 without gaps",
        dir, classes - 1, classes, count);
}

ember_status ember_data_load_npy(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    (void)options;
    ember_ctx *ctx = ds->ctx;
    struct stat info;
    bool archive = stat(dir, &info) == 0 && !S_ISDIR(info.st_mode);
    ember_split split = ds->split, other_split = split == EMBER_TRAIN ? EMBER_TEST : EMBER_TRAIN;
    struct split_arrays mine = {0}, other = {0};
    ember_status st = open_split(ctx, dir, archive, split, &mine);
    if (st == EMBER_OK)
        st = open_split(ctx, dir, archive, other_split, &other);
    /* both splits' samples have one shape: the model is built for it */
    bool same = st == EMBER_OK && mine.hx.ndim == other.hx.ndim;
    for (int i = 1; same && i < mine.hx.ndim; i++)
        same = mine.hx.shape[i] == other.hx.shape[i];
    if (st == EMBER_OK && !same) {
        char a[96] = "", b[96] = "";
        for (int i = 1; i < mine.hx.ndim; i++)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", i > 1 ? ", " : "",
                     (long long)mine.hx.shape[i]);
        for (int i = 1; i < other.hx.ndim; i++)
            snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", i > 1 ? ", " : "",
                     (long long)other.hx.shape[i]);
        st = ember_fail(
            ctx, EMBER_ERR_FORMAT,
            "%s holds samples of shape (%s) but %s of shape (%s): both splits' samples must have one "
            "shape",
            mine.x.name, a, other.x.name, b);
    }
    /* the classes: both splits' labels */
    int32_t *labels = NULL, *other_labels = NULL, most = -1, other_most = -1;
    int64_t count = (int64_t)mine.hy.numel;
    if (st == EMBER_OK)
        st = read_labels(ctx, &mine, &labels, &most);
    if (st == EMBER_OK)
        st = read_labels(ctx, &other, &other_labels, &other_most);
    close_split(&other);
    int classes = (most > other_most ? most : other_most) + 1;
    if (st == EMBER_OK && classes < 2)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: the labels name %d class%s; a classifier needs at least two", dir, classes,
                        classes == 1 ? "" : "es");
    if (st == EMBER_OK)
        st = check_classes(ctx, dir, labels, count, other_labels, (int64_t)other.hy.numel, classes);
    free(other_labels);

    struct npy_header h = mine.hx;
    if (st == EMBER_OK) {
        bool bytes = h.kind == NPY_UINT8;
        st = (bytes ? ember_dataset_reserve : ember_dataset_reserve_floats)(ds, count, h.ndim - 1,
                                                                            h.shape + 1, classes);
        if (st == EMBER_OK)
            st = npy_read_values(&mine.x, &h, ds->owned_floats, ds->pixels);
        if (st == EMBER_OK)
            st = npy_stream_end(&mine.x);
        if (st == EMBER_OK)
            memcpy(ds->labels, labels, (size_t)count * sizeof *labels);
    }
    close_split(&mine);
    free(labels);
    return st;
}
