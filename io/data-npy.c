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
 * (and the model) agree on the count whatever labels the test split lacks.
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

/* A split's labels: (count) class indices into `labels` (allocated),
 * their largest into *most. */
static ember_status read_labels(ember_ctx *ctx, const char *dir, bool archive, ember_split split,
                                int32_t **labels, int64_t *count, int32_t *most)
{
    struct npy_stream s;
    struct npy_header h;
    float *values = NULL;
    *labels = NULL;
    ember_status st = open_array(ctx, dir, archive, split == EMBER_TRAIN ? "y_train" : "y_test", &s);
    if (st == EMBER_OK && (st = npy_read_header(&s, &h)) == EMBER_OK &&
        (h.ndim != 1 || h.kind == EMBER_NUM_F16 || h.kind == EMBER_NUM_F32 || h.kind == EMBER_NUM_F64))
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: labels are a 1-dimensional array of integers (class indices), "
                        "not %d dimensions of %s",
                        s.name, h.ndim,
                        h.kind == NPY_UINT8 || h.kind == EMBER_NUM_I32 || h.kind == EMBER_NUM_I64
                            ? "integers"
                            : "floats (convert with y.astype(numpy.int64))");
    if (st == EMBER_OK && (!(values = ember_host_alloc(ctx, (size_t)h.numel * sizeof *values + 1)) ||
                           !(*labels = ember_host_alloc(ctx, (size_t)h.numel * sizeof **labels + 1))))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK && (st = npy_read_values(&s, &h, values, NULL)) == EMBER_OK)
        st = npy_stream_end(&s);
    *most = -1;
    for (uint64_t i = 0; st == EMBER_OK && i < h.numel; i++) {
        if (values[i] < 0 || values[i] >= NPY_MAX_CLASSES)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: label %llu is %.0f, not a class index from 0 to %d",
                            s.name, (unsigned long long)i, (double)values[i], NPY_MAX_CLASSES - 1);
        else if (((*labels)[i] = (int32_t)values[i]) > *most)
            *most = (*labels)[i];
    }
    npy_stream_close(&s);
    free(values);
    if (st != EMBER_OK) {
        free(*labels);
        *labels = NULL;
    } else {
        *count = (int64_t)h.numel;
    }
    return st;
}

ember_status ember_data_load_npy(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    (void)options;
    ember_ctx *ctx = ds->ctx;
    struct stat info;
    bool archive = stat(dir, &info) == 0 && !S_ISDIR(info.st_mode);
    /* the classes: both splits' labels */
    int32_t *labels = NULL, *other = NULL, most = -1, other_most = -1;
    int64_t count = 0, other_count = 0;
    ember_split split = ds->split, other_split = split == EMBER_TRAIN ? EMBER_TEST : EMBER_TRAIN;
    ember_status st = read_labels(ctx, dir, archive, split, &labels, &count, &most);
    if (st == EMBER_OK)
        st = read_labels(ctx, dir, archive, other_split, &other, &other_count, &other_most);
    free(other);
    int classes = (most > other_most ? most : other_most) + 1;
    if (st == EMBER_OK && classes < 2)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: the labels name %d class%s; a classifier needs at least two", dir, classes,
                        classes == 1 ? "" : "es");

    struct npy_stream s = {0};
    struct npy_header h;
    if (st == EMBER_OK &&
        (st = open_array(ctx, dir, archive, split == EMBER_TRAIN ? "x_train" : "x_test", &s)) == EMBER_OK &&
        (st = npy_read_header(&s, &h)) == EMBER_OK && ((h.ndim != 2 && h.ndim != 4) || h.shape[0] != count))
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s has %d dimensions (%lld first); ember takes (N, C, H, W) images or "
                        "(N, features) vectors, with N the %lld labels of y",
                        s.name, h.ndim, h.ndim ? (long long)h.shape[0] : 0ll, (long long)count);
    if (st == EMBER_OK) {
        bool bytes = h.kind == NPY_UINT8;
        st = (bytes ? ember_dataset_reserve : ember_dataset_reserve_floats)(ds, count, h.ndim - 1,
                                                                            h.shape + 1, classes);
        if (st == EMBER_OK)
            st = npy_read_values(&s, &h, ds->owned_floats, ds->pixels);
        if (st == EMBER_OK)
            st = npy_stream_end(&s);
        if (st == EMBER_OK)
            memcpy(ds->labels, labels, (size_t)count * sizeof *labels);
    }
    npy_stream_close(&s);
    free(labels);
    return st;
}
