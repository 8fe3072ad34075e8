/* SPDX-License-Identifier: MIT */
/*
 * io/data-cifar.c — CIFAR-10's and CIFAR-100's binary batches.
 *
 *   cifar10   the folder cifar-10-batches-bin (from cifar-10-binary.tar.gz):
 *             data_batch_1.bin to data_batch_5.bin for training,
 *             test_batch.bin for testing; 3073-byte records, one label
 *             byte then the image; the ten classes' names are fixed
 *   cifar100  the folder cifar-100-binary (from cifar-100-binary.tar.gz):
 *             train.bin and test.bin; 3074-byte records, a coarse label
 *             byte (20 superclasses), a fine label byte (the 100 classes
 *             ember trains on), then the image; the classes' names come
 *             from fine_label_names.txt, one a line, when it is there
 *
 * The image is 3x32x32 stored channel by channel (all red, all green, all
 * blue), which is already ember's (C, H, W) layout. There is no header, so a
 * file is checked by its size: a whole, non-zero number of records. Every
 * file is sized before the split is allocated.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "data-impl.h"

#define CIFAR_PIXELS      (3 * 32 * 32)
#define CIFAR_MAX_FILES   5
#define CIFAR_MAX_CLASSES 100

/* What tells one CIFAR from the other. */
struct cifar_layout {
    const char *name;                       /* for messages: "CIFAR-10" */
    int label_bytes;                        /* bytes before the pixels */
    int label_at;                           /* the one of them that is the class */
    int classes;                            /* labels run from 0 to classes - 1 */
    const char *const *train, *const *test; /* the splits' files, NULL-terminated */
    const char *const *names;               /* the classes' names, or NULL: names_file's */
    const char *names_file;
};

static const char *const cifar10_train[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                            "data_batch_4.bin", "data_batch_5.bin", NULL};
static const char *const cifar10_test[] = {"test_batch.bin", NULL};
/* batches.meta.txt's names, in label order */
static const char *const cifar10_names[] = {"airplane", "automobile", "bird",  "cat",  "deer",
                                            "dog",      "frog",       "horse", "ship", "truck"};
static const struct cifar_layout cifar10 = {"CIFAR-10",    1,   0, 10, cifar10_train, cifar10_test,
                                            cifar10_names, NULL};

static const char *const cifar100_train[] = {"train.bin", NULL};
static const char *const cifar100_test[] = {"test.bin", NULL};
static const struct cifar_layout cifar100 = {
    "CIFAR-100", 2, 1, 100, cifar100_train, cifar100_test, NULL, "fine_label_names.txt"};

static ember_status cifar_path(ember_ctx *ctx, const char *dir, const char *name, char *path, size_t len)
{
    if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
        return ember_fail(ctx, EMBER_ERR_ARG, "the data folder's path is too long: %s", dir);
    return EMBER_OK;
}

/* The number of records in one file, from its size. */
static ember_status cifar_count(ember_ctx *ctx, const struct cifar_layout *c, const char *path,
                                int64_t *records)
{
    struct stat info;
    if (stat(path, &info) != 0)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (!S_ISREG(info.st_mode))
        return ember_fail(ctx, EMBER_ERR_IO, "%s is not a regular file: ember reads only files", path);
    int64_t bytes = (int64_t)info.st_size, record = c->label_bytes + CIFAR_PIXELS;
    if (bytes == 0 || bytes % record != 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: truncated or not a %s batch: %lld bytes is not a whole number of "
                          "%lld-byte records (%d label byte%s + 3x32x32 pixels)",
                          path, c->name, (long long)bytes, (long long)record, c->label_bytes,
                          c->label_bytes > 1 ? "s" : "");
    *records = bytes / record;
    return EMBER_OK;
}

/* Reads `records` records of one file into the split from sample `first` on. */
static ember_status cifar_read(ember_dataset *ds, const struct cifar_layout *c, const char *path,
                               int64_t first, int64_t records)
{
    ember_ctx *ctx = ds->ctx;
    struct stat info;
    FILE *file = ember_fopen_regular(ctx, path, &info);
    if (!file)
        return ember_last_status(ctx);
    ember_status st = EMBER_OK;
    for (int64_t r = 0; r < records && st == EMBER_OK; r++) {
        int64_t index = first + r;
        unsigned char labels[2];
        if (fread(labels, 1, (size_t)c->label_bytes, file) != (size_t)c->label_bytes ||
            fread(ds->pixels + index * CIFAR_PIXELS, 1, CIFAR_PIXELS, file) != CIFAR_PIXELS)
            st = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s: truncated while reading record %lld of %lld (it shrank?)", path,
                            (long long)r, (long long)records);
        else if (labels[c->label_at] >= c->classes)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: label %d of record %lld is not a class (0 to %d)",
                            path, labels[c->label_at], (long long)r, c->classes - 1);
        else
            ds->labels[index] = labels[c->label_at];
    }
    if (st == EMBER_OK && fgetc(file) != EOF)
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: more bytes than the %lld records it held a moment ago",
                        path, (long long)records);
    fclose(file);
    return st;
}

/* The classes' names from `path`, one a line in label order, when the file
 * is there: without it the classes keep their numbers. */
static ember_status cifar_names_file(ember_dataset *ds, const struct cifar_layout *c, const char *path)
{
    ember_ctx *ctx = ds->ctx;
    struct stat info;
    if (stat(path, &info) != 0 && errno == ENOENT)
        return EMBER_OK;
    FILE *file = ember_fopen_regular(ctx, path, &info);
    if (!file)
        return ember_last_status(ctx);
    char text[CIFAR_MAX_CLASSES * 64]; /* CIFAR-100's names take about 900 bytes */
    size_t len = fread(text, 1, sizeof text - 1, file);
    bool whole = fgetc(file) == EOF;
    fclose(file);
    text[len] = '\0';
    const char *names[CIFAR_MAX_CLASSES];
    int count = 0;
    for (char *line = text, *end; whole && *line && count <= c->classes; line = end) {
        end = line + strcspn(line, "\n");
        if (*end)
            *end++ = '\0';
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r') /* written on Windows */
            line[--n] = '\0';
        if (n == 0 && !*end)
            break; /* the newline after the last name */
        if (n == 0 || count == c->classes)
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: line %d is %s; the file names the %d classes, one a line", path, count + 1,
                              n ? "one too many" : "empty", c->classes);
        names[count++] = line;
    }
    if (!whole || count != c->classes)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %s; it names the %d classes, one a line", path,
                          whole ? "too few lines" : "too long", c->classes);
    return ember_dataset_name_classes(ds, names);
}

static ember_status cifar_load(ember_dataset *ds, const char *dir, const struct cifar_layout *c)
{
    ember_ctx *ctx = ds->ctx;
    const char *const *files = ds->split == EMBER_TRAIN ? c->train : c->test;
    char path[4096];
    int64_t records[CIFAR_MAX_FILES] = {0}, total = 0;
    ember_status st;

    for (int i = 0; files[i]; i++) {
        if ((st = cifar_path(ctx, dir, files[i], path, sizeof path)) != EMBER_OK ||
            (st = cifar_count(ctx, c, path, &records[i])) != EMBER_OK)
            return st;
        total += records[i]; /* each file is under 2^63 bytes, and there are five at most */
    }
    const int64_t shape[3] = {3, 32, 32};
    if ((st = ember_dataset_reserve(ds, total, 3, shape, c->classes)) != EMBER_OK)
        return st;
    int64_t first = 0;
    for (int i = 0; files[i]; i++) {
        cifar_path(ctx, dir, files[i], path, sizeof path);
        if ((st = cifar_read(ds, c, path, first, records[i])) != EMBER_OK)
            return st;
        first += records[i];
    }
    if (c->names)
        return ember_dataset_name_classes(ds, c->names);
    if ((st = cifar_path(ctx, dir, c->names_file, path, sizeof path)) != EMBER_OK)
        return st;
    return cifar_names_file(ds, c, path);
}

ember_status ember_data_load_cifar(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    return cifar_load(ds, dir, &cifar10);
}

ember_status ember_data_load_cifar100(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    return cifar_load(ds, dir, &cifar100);
}
