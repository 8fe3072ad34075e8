/* SPDX-License-Identifier: MIT */
/*
 * ember/data.h — data sets and the batches a training loop draws from them: a part of ember.h.
 *
 * Every format ember reads (images, IDX, CIFAR, CSV, NumPy, text, arrays
 * in memory) opens as one ember_dataset; an ember_batcher deals it out in
 * shuffled, optionally augmented batches on the context's device.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/data.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_DATA_H)
#define EMBER_PART_DATA_H

/* -------------------------------------------------------------------- data */

typedef struct ember_dataset ember_dataset;

typedef enum ember_split { EMBER_TRAIN, EMBER_TEST } ember_split;

/* Tabular data's features and how they were standardised: each column
 * becomes (value - mean) / std, with the mean and the (population) standard
 * deviation of the training split, 1 for a constant column, as
 * scikit-learn's StandardScaler does. A csv data set has one
 * (ember_dataset_scaling), a checkpoint trained on one carries it in its
 * metadata (ember_feature_scaling_meta, ember_checkpoint_scaling), and
 * eval and predict apply the same (docs/interop.md). */
typedef struct ember_feature_scaling {
    int count;         /* features */
    char **names;      /* (count) their columns' names, in the order the model takes them */
    float *mean, *std; /* (count) */
    char *label;       /* the label column's name */
} ember_feature_scaling;
EMBER_API void ember_feature_scaling_free(ember_feature_scaling *scaling);

typedef struct ember_data_options {
    /* "fashion-mnist" (the default), "mnist", "cifar10", "cifar100" (its 100
     * fine classes), "folder", "random", "npy", "csv" (docs/interop.md),
     * "text" (a file's bytes as tokens: see ember_dataset_vocab) */
    const char *kind;
    /* where the files are; NULL: the kind's default (fashion-mnist:
     * /usr/share/datasets/fashion-mnist, from Debian's dataset-fashion-mnist;
     * on Windows the folder fashion-mnist in the current folder).
     * npy: a folder of x_train.npy, y_train.npy, x_test.npy, y_test.npy, or
     * one .npz holding them; csv: a .csv file (each class holds out a tenth
     * of its rows for test, chosen by `seed`) or a folder of train.csv and
     * test.csv */
    const char *dir;
    /* random: the shape of one sample, such as {1, 28, 28} or {100};
     * folder: {channels, height, width} to load at, zeros for the first image's;
     * text: {context}, the tokens of a window (0 dimensions: 128) */
    int sample_ndim;
    int64_t sample_shape[3];
    /* random: samples in the split (0: 4096 train, 1024 test) and classes (0: 10) */
    int64_t count;
    int classes;
    /* folder: resize images of another size (bilinear) instead of rejecting them */
    bool resize;
    /* random data, and the folder's held-out test split */
    uint64_t seed;
    /* csv: the label column's name (NULL: the last column) */
    const char *label;
    /* csv: standardise with these (a checkpoint's, for eval) instead of the
     * training split's; the file's columns are then found by name */
    const ember_feature_scaling *scaling;
    /* csv: the classes' names in index order, `classes` of them (a
     * checkpoint's), instead of the labels the training split has */
    const char *const *class_names;
} ember_data_options;

/* Loads a split into host memory as bytes; every file is checked before
 * anything is allocated for it. */
EMBER_API ember_dataset *ember_dataset_open(ember_ctx *ctx, const ember_data_options *options,
                                            ember_split split);
EMBER_API void ember_dataset_free(ember_dataset *ds);
EMBER_API int64_t ember_dataset_count(const ember_dataset *ds);
EMBER_API int ember_dataset_classes(const ember_dataset *ds);
/* The shape of one sample, without the batch axis: (C, H, W) or (features). */
EMBER_API int ember_dataset_sample_ndim(const ember_dataset *ds);
EMBER_API const int64_t *ember_dataset_sample_shape(const ember_dataset *ds);
/* "fashion-mnist train (60000 x 1x28x28, 10 classes)" */
EMBER_API const char *ember_dataset_describe(const ember_dataset *ds);
/* A class's name: Fashion-MNIST's ("T-shirt/top", ...), CIFAR-10's, a
 * folder's subfolder names; the index ("0", "1", ...) for MNIST and random
 * data. NULL for an index out of range. */
EMBER_API const char *ember_dataset_class_name(const ember_dataset *ds, int index);

/* Text (kind "text", `dir` the file): every byte a token, the vocabulary
 * the file's distinct bytes in order, token k being vocab[k]; the first
 * 90% of the file is the training split, the last 10% the test split. A
 * sample is a window of `context` tokens, x (context) I32, and its target
 * y (context), the tokens one place on; batches are x (B, context) I32 and
 * y (B, context). Shuffled batches take windows at offsets drawn from the
 * seed (an epoch: as many as fit in the split side by side); unshuffled
 * ones the side-by-side windows in order. The classes are the vocabulary's
 * tokens. Fills vocab (256 bytes, or NULL) and returns its size: 0 for
 * data that is not text, and for a tokenizer's tokens
 * (ember_dataset_from_tokens), whose vocabulary is the tokenizer's. */
EMBER_API int ember_dataset_vocab(const ember_dataset *ds, uint8_t *vocab);
/* Whether a sample is a sequence with a target at every position (text,
 * and a tokenizer's tokens): its batches' y is (B, T), not (B). */
EMBER_API bool ember_dataset_is_sequence(const ember_dataset *ds);
/* Whether some of its targets are EMBER_IGNORE_INDEX (a chat's prompts,
 * ember_lm_chat_dataset): its loss is ember_cross_entropy_ignore's, and
 * its accuracy counts the other targets alone. */
EMBER_API bool ember_dataset_ignores(const ember_dataset *ds);
/* How a sample's stored values became the model's inputs: "pixel / 255"
 * (bytes: images, and uint8 arrays), "none" (floats used as they are),
 * "none (token indices into ember.vocab)" (text), or
 * "(value - ember.feature_mean) / ember.feature_std" (a CSV table's
 * standardised features). */
EMBER_API const char *ember_dataset_normalize(const ember_dataset *ds);
/* A csv data set's features and standardisation (NULL for other kinds). */
EMBER_API const ember_feature_scaling *ember_dataset_scaling(const ember_dataset *ds);
/* The checkpoint metadata that carries a scaling: four keys and their
 * values, "ember.features" (a JSON array of the names), "ember.label",
 * "ember.feature_mean" and "ember.feature_std" (JSON arrays of numbers
 * that read back as the same floats), into kv[0..7] with kv[8] NULL; the
 * values (odd indices) are to ember_free(). */
EMBER_API ember_status ember_feature_scaling_meta(ember_ctx *ctx, const ember_feature_scaling *scaling,
                                                  char *kv[9]);
/* A checkpoint's scaling, read back: *scaling NULL when it has none, and
 * EMBER_ERR_FORMAT when its metadata is malformed; the same from metadata
 * pairs (key, value, ..., NULL), as ember_feature_scaling_meta writes them. */
EMBER_API ember_status ember_checkpoint_scaling(ember_ctx *ctx, const ember_checkpoint *ck,
                                                ember_feature_scaling **scaling);
EMBER_API ember_status ember_feature_scaling_from_meta(ember_ctx *ctx, const char *const *kv,
                                                       ember_feature_scaling **scaling);
/* The rows of a CSV table as a model trained on `scaling` takes them:
 * (rows, count) floats standardised, in an array to ember_free(). Columns are
 * found by name; the label column may be there (it is not read); any
 * other column, a missing feature or a cell that is not a number is an
 * error naming the line and the column. */
EMBER_API float *ember_csv_features(ember_ctx *ctx, const char *path, const ember_feature_scaling *scaling,
                                    int64_t *rows);
/* `rows` samples of scaling->count features (a NumPy array of a table's
 * rows), standardised in place as ember_csv_features standardises a
 * table's; a value whose result is past float32's range is
 * EMBER_ERR_FORMAT naming its row and feature (`what` names the data). */
EMBER_API ember_status ember_feature_scaling_apply(ember_ctx *ctx, const ember_feature_scaling *scaling,
                                                   float *values, int64_t rows, const char *what);

/* A data set over arrays the caller owns, for training and evaluating on
 * data ember has no loader for. Nothing is copied: the arrays must stay
 * alive and unchanged while the data set is in use. Give the images as
 * floats (used as they are) or as bytes (scaled to [0, 1] as ember's own
 * data sets are), not both. */
typedef struct ember_array_data {
    int64_t count;   /* samples, at least 1 */
    int sample_ndim; /* 1 (features) or 3 (C, H, W) */
    int64_t sample_shape[3];
    const float *images;            /* (count, sample shape...) floats, or NULL */
    const uint8_t *image_bytes;     /* (count, sample shape...) bytes, or NULL */
    const int32_t *labels;          /* (count) class indices, each in [0, classes) */
    int classes;                    /* at least 2 */
    const char *const *class_names; /* (classes) names, or NULL for "0", "1", ... */
    const char *name;               /* in messages and ember_dataset_describe; NULL: "arrays" */
} ember_array_data;
/* Checks every label and the shape; NULL with the reason on a mistake. */
EMBER_API ember_dataset *ember_dataset_from_arrays(ember_ctx *ctx, const ember_array_data *arrays);

/* A stream of tokens as a data set, as text's (ember_dataset_vocab): the
 * first 90% the training split, the last 10% the validation split
 * (EMBER_TEST), a sample a window of `context` tokens x and y the same
 * window one token on, batches x and y (B, context) I32. The classes are
 * the `vocab` token ids, without names. The split's tokens are copied.
 * ember_lm_dataset makes one from a text file and a model's tokenizer,
 * ember_lm_chat_dataset from conversations, with labels: a token labelled
 * EMBER_IGNORE_INDEX is read but never a target the loss counts (the
 * user's turns), and ember_dataset_ignores says to score with
 * ember_cross_entropy_ignore. */
typedef struct ember_token_data {
    const int32_t *tokens; /* (count), each in [0, vocab) */
    int64_t count;
    int32_t vocab;
    int64_t context;  /* a window's tokens */
    const char *name; /* in messages and ember_dataset_describe; NULL: "tokens" */
    /* (count) or NULL: token i's label when it is a target, tokens[i] or
     * EMBER_IGNORE_INDEX; NULL: every token its own */
    const int32_t *labels;
    /* the validation split's first token (a conversation's start); 0: the
     * last tenth's */
    int64_t validation_start;
} ember_token_data;
/* NULL with the reason: a token out of range, or a split too short to hold
 * a window and the token after it. */
EMBER_API ember_dataset *ember_dataset_from_tokens(ember_ctx *ctx, const ember_token_data *data,
                                                   ember_split split);

/* An image file (PNG, JPEG, BMP) as one sample, as a folder data set
 * would load it: converted to `channels` (1: gray, 3: RGB), planar
 * (channels, height, width) floats in [0, 1] into `out`. An image of
 * another size is resized (bilinear) when `resize`, else refused with both
 * sizes in the message. */
EMBER_API ember_status ember_image_load(ember_ctx *ctx, const char *path, int channels, int height, int width,
                                        bool resize, float *out);

/* The size and channels an image file (PNG, JPEG, BMP) declares, read from
 * its header without decoding it: channels 1 (gray), 2 (gray and alpha), 3
 * (RGB) or 4 (RGBA). ember_image_load then converts to the channels asked
 * for (alpha dropped) and resizes to the size asked for: a program can say
 * what it did. */
EMBER_API ember_status ember_image_file_info(ember_ctx *ctx, const char *path, int *width, int *height,
                                             int *channels);

/* What images look like, in the [0, 1] the batches have them in: the mean
 * pixel, the mean of the pixels on the images' edges (the background: near
 * 0 for Fashion-MNIST's light things on black), and how far the images'
 * own means spread (their standard deviation), so that an image unlike a
 * model's training data can be told apart from one that is merely
 * brighter. */
typedef struct ember_image_stats {
    double mean, mean_spread;     /* over every pixel; the images' own means' standard deviation */
    double border, border_spread; /* the same of the pixels on each image's edge */
} ember_image_stats;
/* Of a data set of images (sample shape (C, H, W)): EMBER_ERR_ARG for
 * other data. Reads every sample once (60,000 28x28 images: a few ms). */
EMBER_API ember_status ember_dataset_image_stats(const ember_dataset *ds, ember_image_stats *stats);
/* Of n images in the caller's buffer, (n, C, H, W) floats. */
EMBER_API void ember_image_stats_of(const float *images, int64_t n, int channels, int height, int width,
                                    ember_image_stats *stats);

/* The images of an IDX file (Fashion-MNIST's and MNIST's format, gzipped or
 * not) as samples: (count, 1, height, width) floats in [0, 1], checked as
 * ember_dataset_open checks them, in an array to ember_free(). */
EMBER_API float *ember_idx_images(ember_ctx *ctx, const char *path, int64_t *count, int *height, int *width);

/* NumPy's .npy files (docs/interop.md). Loading gives the array's values
 * as floats in an array to ember_free(), its shape in ndim and shape
 * [EMBER_MAX_DIMS]; uint8, float16/32/64 and int32/64 (little-endian, C
 * order) are read, and *bytes (may be NULL) says whether it was uint8
 * (images, which ember scales to [0, 1]; the values here are 0 to 255).
 * An integer past 2^24 or a float past float32's range is refused. Saving
 * writes float32 as numpy.load reads it. */
EMBER_API float *ember_npy_load(ember_ctx *ctx, const char *path, int *ndim, int64_t *shape, bool *bytes);
EMBER_API ember_status ember_npy_save(ember_ctx *ctx, const char *path, const float *values, int ndim,
                                      const int64_t *shape);

/* Batches: pixels scaled to [0, 1] as F32 (B, C, H, W), targets as I32 (B).
 * With shuffle, each epoch visits the samples in a fresh order drawn from the
 * seed. The last batch of an epoch may be smaller. */
typedef struct ember_batcher ember_batcher;
EMBER_API ember_batcher *ember_batcher_new(ember_dataset *ds, int64_t batch, bool shuffle, uint64_t seed);
EMBER_API void ember_batcher_free(ember_batcher *b);
EMBER_API int64_t ember_batcher_steps(const ember_batcher *b); /* batches per epoch */
/* Augmentation of training images, as torchvision's RandomCrop(size,
 * padding=crop_padding) and RandomHorizontalFlip(): each sample shifted by
 * up to crop_padding pixels each way (zeros come in at the border) and, when
 * `flip`, mirrored left-right half the time; drawn from `seed`, the epoch
 * and the sample's place in it, so that every device, and a resumed run,
 * sees the same images. NULL (or zeros) turns it off. */
typedef struct ember_augment {
    int crop_padding;
    bool flip;
    uint64_t seed;
} ember_augment;
EMBER_API ember_status ember_batcher_set_augment(ember_batcher *b, const ember_augment *augment);
/* Goes to where a batcher made with the same data, batch, shuffle and seed
 * would be after `epoch` whole epochs and `step` batches of the next: the
 * same order, so a resumed run sees the batches an unbroken one would. It
 * takes the same time for any epoch (no epochs are replayed). */
EMBER_API ember_status ember_batcher_seek(ember_batcher *b, int64_t epoch, int64_t step);
/* Fills *x and *y with the next batch and returns EMBER_OK. At the end of
 * the epoch it returns EMBER_OK with *x and *y NULL, and the next call
 * starts the next epoch; on a failure (a device error) it returns its
 * status, *x and *y NULL. So an epoch is
 *
 *     ember_status st;
 *     while ((st = ember_batcher_next(b, &x, &y)) == EMBER_OK && x) { ... }
 *     if (st != EMBER_OK) ...                  // a failure, not the epoch's end */
EMBER_API ember_status ember_batcher_next(ember_batcher *b, ember_tensor **x, ember_tensor **y);

#endif /* EMBER_PART_DATA_H */
