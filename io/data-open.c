/* SPDX-License-Identifier: MIT */
/*
 * io/data-open.c — ember_dataset_open: the kinds of data set, each with its
 * loader and default folder, and the checks made before a loader runs. The
 * loaders (io/data-<kind>.c) fill the data set through io/data.c's helpers,
 * never through this file, so the two never call each other.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "data-impl.h"

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
    {"cifar100", ember_data_load_cifar100, true, false, NULL,
     "the folder is cifar-100-binary, unpacked from cifar-100-binary.tar.gz"},
    {"folder", ember_data_load_folder, true, false, NULL, NULL},
    {"random", ember_data_load_random, false, false, NULL, NULL},
    {"npy", ember_data_load_npy, true, true, NULL, NULL},
    {"csv", ember_data_load_csv, true, true, NULL, NULL},
    {"text", ember_data_load_text, true, true, NULL, "name the text file with ember_data_options.dir", true},
};
#define KIND_COUNT (int)(sizeof kinds / sizeof kinds[0])

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
    char message[4096];
    if (hint) {
        snprintf(message, sizeof message, "%s; %s", ember_last_error(ctx), hint);
        ember_error_restore(ctx, ember_last_status(ctx), message);
    }
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
