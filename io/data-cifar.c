/* SPDX-License-Identifier: MIT */
/*
 * io/data-cifar.c — CIFAR-10's binary batches.
 *
 * The folder (cifar-10-batches-bin, from cifar-10-binary.tar.gz) holds
 * data_batch_1.bin to data_batch_5.bin for training and test_batch.bin for
 * testing. A batch is a run of 3073-byte records: one label byte, then a
 * 3x32x32 image stored channel by channel (all red, all green, all blue),
 * which is already ember's (C, H, W) layout. There is no header, so a file
 * is checked by its size: a whole, non-zero number of records. Every file is
 * sized before the split is allocated.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "data-impl.h"

#define CIFAR_CLASSES   10
#define CIFAR_PIXELS    (3 * 32 * 32)
#define CIFAR_RECORD    (1 + CIFAR_PIXELS)
#define CIFAR_MAX_FILES 5

/* The split's file names, NULL-terminated. */
static const char *const train_files[] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                          "data_batch_4.bin", "data_batch_5.bin", NULL};
static const char *const test_files[] = {"test_batch.bin", NULL};

static ember_status cifar_path(ember_ctx *ctx, const char *dir, const char *name, char *path, size_t len)
{
    if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
        return ember_fail(ctx, EMBER_ERR_ARG, "the data folder's path is too long: %s", dir);
    return EMBER_OK;
}

/* The number of records in one file, from its size. */
static ember_status cifar_count(ember_ctx *ctx, const char *path, int64_t *records)
{
    struct stat info;
    if (stat(path, &info) != 0)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (!S_ISREG(info.st_mode))
        return ember_fail(ctx, EMBER_ERR_IO, "%s is not a regular file: ember reads only files", path);
    int64_t bytes = (int64_t)info.st_size;
    if (bytes == 0 || bytes % CIFAR_RECORD != 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: truncated or not a CIFAR-10 batch: %lld bytes is not a whole number of "
                          "%d-byte records (1 label byte + 3x32x32 pixels)",
                          path, (long long)bytes, CIFAR_RECORD);
    *records = bytes / CIFAR_RECORD;
    return EMBER_OK;
}

/* Reads `records` records of one file into the split from sample `first` on. */
static ember_status cifar_read(ember_dataset *ds, const char *path, int64_t first, int64_t records)
{
    ember_ctx *ctx = ds->ctx;
    struct stat info;
    FILE *file = ember_fopen_regular(ctx, path, &info);
    if (!file)
        return ember_last_status(ctx);
    ember_status st = EMBER_OK;
    for (int64_t r = 0; r < records && st == EMBER_OK; r++) {
        int64_t index = first + r;
        int label = fgetc(file);
        if (label == EOF || fread(ds->pixels + index * CIFAR_PIXELS, 1, CIFAR_PIXELS, file) != CIFAR_PIXELS)
            st = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s: truncated while reading record %lld of %lld (it shrank?)", path,
                            (long long)r, (long long)records);
        else if (label >= CIFAR_CLASSES)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: label %d of record %lld is not a class (0 to %d)",
                            path, label, (long long)r, CIFAR_CLASSES - 1);
        else
            ds->labels[index] = label;
    }
    if (st == EMBER_OK && fgetc(file) != EOF)
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: more bytes than the %lld records it held a moment ago",
                        path, (long long)records);
    fclose(file);
    return st;
}

ember_status ember_data_load_cifar(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    ember_ctx *ctx = ds->ctx;
    const char *const *names = ds->split == EMBER_TRAIN ? train_files : test_files;
    char path[4096];
    int64_t records[CIFAR_MAX_FILES] = {0}, total = 0;
    ember_status st;

    for (int i = 0; names[i]; i++) {
        if ((st = cifar_path(ctx, dir, names[i], path, sizeof path)) != EMBER_OK ||
            (st = cifar_count(ctx, path, &records[i])) != EMBER_OK)
            return st;
        total += records[i]; /* each file is under 2^63 bytes, and there are five */
    }
    const int64_t shape[3] = {3, 32, 32};
    if ((st = ember_dataset_reserve(ds, total, 3, shape, CIFAR_CLASSES)) != EMBER_OK)
        return st;
    int64_t first = 0;
    for (int i = 0; names[i]; i++) {
        cifar_path(ctx, dir, names[i], path, sizeof path);
        if ((st = cifar_read(ds, path, first, records[i])) != EMBER_OK)
            return st;
        first += records[i];
    }
    /* batches.meta.txt's names, in label order */
    static const char *const names_of_classes[CIFAR_CLASSES] = {
        "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
    return ember_dataset_name_classes(ds, names_of_classes);
}
