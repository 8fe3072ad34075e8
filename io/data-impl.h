/* SPDX-License-Identifier: MIT */
/*
 * io/data-impl.h — data sets in host memory, and the loaders that fill them.
 *
 * A data set is one split (train or test) held as bytes: pixels are uint8,
 * (count, C, H, W) in a single array, exactly as the files store them (IDX
 * and CIFAR-10 already are channel-major), and labels are int32. Bytes keep
 * Fashion-MNIST's training set at 47 MB instead of 188 MB of floats; the
 * batcher scales each batch to [0, 1] floats on its way to the device.
 *
 * ember_dataset_open (data-open.c) picks a loader by kind, resolves the
 * folder (or file, for npy and csv) and checks it exists; the loader reads
 * its files and fills the data set through ember_dataset_reserve (data.c).
 *
 * Files are untrusted (docs/reliability.md): a loader checks every header
 * field and the file's size before it asks for memory, and every failure
 * names the file.
 *
 *     data-open.c     open: the kinds, their loaders and default folders
 *     data.c          reserve, name the classes, accessors, free
 *     batcher.c       the batcher
 *     data-idx.c      fashion-mnist, mnist: IDX files, gzipped or not
 *     data-cifar.c    cifar10, cifar100: the binary batches
 *     data-folder.c   folder: dir/<class>/<image>, each through data-image.c
 *     data-image.c    an image file as one sample (also ember_image_load)
 *     data-random.c   random: seeded bytes, for benchmarks
 *     data-arrays.c   arrays: the caller's own, borrowed
 *     data-text.c     text: a file's bytes as tokens, in windows
 *     data-tokens.c   tokens: a tokenizer's stream, in windows as text's
 *     data-npy.c      npy: NumPy arrays, a folder of .npy files or a .npz
 *                     (npy.c, npz.c: npy-impl.h)
 *     data-csv.c      csv: a CSV table, standardised (csv.c: csv-impl.h;
 *                     feature-scaling.c: the standardisation)
 *     image*.c        image files: PNG (libpng), JPEG (libjpeg-turbo), BMP
 *                     (stb_image, held to ember's checks): image-impl.h
 */
#ifndef EMBER_DATA_IMPL_H
#define EMBER_DATA_IMPL_H

#include "engine.h"
#include "read-file-impl.h"

/* The most bytes of pixels one split may hold (16 GiB): far beyond the
 * data sets ember trains on, small enough that no size computation on a
 * checked header can overflow. */
#define EMBER_DATA_MAX_BYTES ((int64_t)1 << 34)
/* The largest any one dimension in a file may be: the largest side a
 * model is built for (ember.h). */
#define EMBER_DATA_MAX_DIM ((int64_t)EMBER_MAX_SAMPLE_SIDE)

struct ember_dataset {
    ember_ctx *ctx;
    const char *kind; /* a static name: "fashion-mnist" */
    ember_split split;

    int64_t count;
    int classes;
    int sample_ndim;
    int64_t sample_shape[3];
    int64_t sample_bytes; /* product of sample_shape */

    uint8_t *pixels; /* (count, sample_shape...) */
    int32_t *labels; /* (count), each in [0, classes) */
    /* a data set over the caller's arrays (ember_dataset_from_arrays):
     * pixels and labels point into them and are not freed; floats, when
     * given, stand in for the bytes */
    bool borrowed;
    const float *floats;          /* (count, sample_shape...) or NULL */
    float *owned_floats;          /* floats, when the data set holds them itself */
    ember_feature_scaling *table; /* csv: the features and their standardisation */
    char **class_names;           /* (classes): "0", "1", ... unless the loader names them */
    /* text (data-text.c): pixels holds the split's token_count tokens, each
     * an index into vocab, the file's distinct bytes; no labels, and a
     * sample is a window of sample_shape[0] tokens (ember_text_window) */
    bool text;
    int64_t token_count;
    int32_t *tokens;       /* a token stream's (data-tokens.c), in place of pixels; vocab unused */
    int32_t *token_labels; /* its labels (EMBER_IGNORE_INDEX: not a target the loss counts), or NULL */
    uint8_t vocab[256];
    int vocab_size;

    char describe[256];
};

/* Sets the split's geometry and allocates its pixels and labels. Called once
 * by a loader, after the files are checked; count may be 0. */
ember_status ember_dataset_reserve(ember_dataset *ds, int64_t count, int sample_ndim,
                                   const int64_t *sample_shape, int classes);

/* The same with floats (ds->floats) in place of the bytes. */
ember_status ember_dataset_reserve_floats(ember_dataset *ds, int64_t count, int sample_ndim,
                                          const int64_t *sample_shape, int classes);

/* Which of a class's n samples the held-out test split takes (data-folder.c,
 * for folders and CSV tables without given splits): round(n / 10) of them,
 * at least one when n >= 2, chosen by a generator seeded from `seed` and the
 * class's name, so that one class's split does not move when another
 * changes. Sets is_test[0..n) (zeroed by the caller). */
ember_status ember_data_hold_out(ember_ctx *ctx, int64_t n, uint64_t seed, const char *class_name,
                                 bool *is_test);

/* Names the classes (after ember_dataset_reserve): copies `names[classes]`. */
ember_status ember_dataset_name_classes(ember_dataset *ds, const char *const *names);

/* "train" or "test" */
const char *ember_split_name(ember_split split);

/* An empty standardisation of `count` features (io/feature-scaling.c), or
 * NULL with the failure recorded; freed with ember_feature_scaling_free. */
ember_feature_scaling *ember_feature_scaling_new(ember_ctx *ctx, int count, const char *label);
/* Feature f's value standardised in place, (value - mean) / std in double
 * precision; false, *v untouched and the result in *z, when that is past
 * float32's range (the model could only answer NaN). */
bool ember_feature_standardize(const ember_feature_scaling *s, int f, float *v, double *z);

/* The loaders. `dir` is the folder, already known to exist (NULL for
 * random). Each fills ds through ember_dataset_reserve, or records a failure
 * on ds->ctx and returns it; the caller frees ds either way. */
ember_status ember_data_load_idx(ember_dataset *ds, const char *dir, const ember_data_options *options);
ember_status ember_data_load_cifar(ember_dataset *ds, const char *dir, const ember_data_options *options);
ember_status ember_data_load_cifar100(ember_dataset *ds, const char *dir, const ember_data_options *options);
ember_status ember_data_load_folder(ember_dataset *ds, const char *dir, const ember_data_options *options);
ember_status ember_data_load_random(ember_dataset *ds, const char *dir, const ember_data_options *options);
ember_status ember_data_load_npy(ember_dataset *ds, const char *dir, const ember_data_options *options);
ember_status ember_data_load_csv(ember_dataset *ds, const char *dir, const ember_data_options *options);
/* text: `dir` is the file */
ember_status ember_data_load_text(ember_dataset *ds, const char *dir, const ember_data_options *options);

/* A text sample: window `index` of the side-by-side windows, or, given a
 * generator, a window at an offset drawn from it; x is its tokens and y
 * the tokens one place on (each of sample_shape[0]). */
void ember_text_window(const ember_dataset *ds, int64_t index, const ember_rng *random, int32_t *x,
                       int32_t *y);

/* An inflated, checked copy of a gzipped data file in the cache folder
 * (data-cache.c): load fills dst with the source's `bytes` of payload and
 * returns true only when an entry matches the source as it is now and its
 * checksum; store keeps one (quietly doing nothing where it cannot). */
bool ember_data_cache_load(ember_ctx *ctx, const char *source, const struct stat *info, uint8_t *dst,
                           int64_t bytes);
void ember_data_cache_store(ember_ctx *ctx, const char *source, const struct stat *info, const uint8_t *src,
                            int64_t bytes);

/* Reads a whole file into *buf, grown as needed (data-image.c); files over
 * 256 MiB are refused. */
ember_status ember_file_read(ember_ctx *ctx, const char *path, uint8_t **buf, int64_t *cap, size_t *len);
/* An image file's bytes as one sample: decoded, converted to `c` channels,
 * resized bilinearly to h x w when `resize` (else another size is an error
 * that says what set the size, `size_from`), planar (c, h, w) into dst. */
ember_status ember_image_sample(ember_ctx *ctx, const char *path, const uint8_t *bytes, size_t len, int c,
                                int h, int w, bool resize, const char *size_from, uint8_t *dst);

/* Images (image.c), from bytes already in memory; `name` (the file's path)
 * is for messages. A malformed image is EMBER_ERR_FORMAT with the decoding
 * library's reason. */

/* The size and channel count the file declares, without decoding it. */
ember_status ember_image_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                              int *height, int *channels);
/* Decodes to 8-bit pixels interleaved as (H, W, channels), converting to
 * `channels` (1 or 3): RGB to gray by the luma (77 R + 150 G + 29 B) / 256
 * (a JPEG's own Y channel), gray to RGB by copying, alpha dropped. Sides
 * are 1 to EMBER_IMAGE_MAX_SIDE. Free *pixels with ember_image_free. */
ember_status ember_image_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len,
                                int channels, int *width, int *height, uint8_t **pixels);
void ember_image_free(uint8_t *pixels);

#endif /* EMBER_DATA_IMPL_H */
