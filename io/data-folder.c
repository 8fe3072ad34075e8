/* SPDX-License-Identifier: MIT */
/*
 * io/data-folder.c — a folder of images, one subfolder per class:
 *
 *     dir/<class>/<image>.png|.jpg|.jpeg|.bmp               (a held-out test split)
 *     dir/train/<class>/...  and  dir/test/<class>/...      (given splits)
 *
 * Classes are the subfolder names in byte order (strcmp), numbered from 0;
 * images within a class are read in name order too, so a folder loads the
 * same way everywhere. With given splits the classes come from train/, and
 * every folder in test/ must be one of them (a class may have no test
 * images); a train/ without a test/, or the reverse, is an error. Without
 * them, each class holds out round(n / 10) of its n images (at least one
 * when n >= 2), chosen by a generator seeded from the seed and the class's
 * name, so that one class's split does not move when another changes.
 *
 * Every image is converted to the data set's channels and size: channels 1
 * (gray, by stb_image's luma weights) or 3 (RGB; gray copied to all three;
 * alpha dropped), taken from options->sample_shape or, where that is 0, from
 * the first image of the first class of train. An image of another size is
 * an error naming it, unless options->resize asks for a bilinear resize
 * (half-pixel centres, edges clamped, as PyTorch's align_corners=False
 * without antialiasing: fine for modest changes, aliased for large
 * reductions).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "data-impl.h"
#include "text-impl.h"

/* stb_image's dimension cap (image.c), and the largest image file read */
#define FOLDER_MAX_SIDE 8192
#define FOLDER_PATH_MAX 4096

/* --------------------------------------------------------------- listings */

/* A sorted list of names, each its own allocation. */
struct name_list {
    char **names;
    int64_t len, cap;
};

static void names_free(struct name_list *list)
{
    for (int64_t i = 0; i < list->len; i++)
        free(list->names[i]);
    free(list->names);
    memset(list, 0, sizeof *list);
}

static ember_status names_add(ember_ctx *ctx, struct name_list *list, const char *name)
{
    ember_status st =
        ember_host_grow(ctx, (void **)&list->names, &list->cap, list->len + 1, sizeof *list->names);
    if (st != EMBER_OK)
        return st;
    char *copy = ember_host_strdup(ctx, name);
    if (!copy)
        return EMBER_ERR_NOMEM;
    list->names[list->len++] = copy;
    return EMBER_OK;
}

static int names_compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool names_contain(const struct name_list *list, const char *name)
{
    return list->len > 0 &&
           bsearch(&name, list->names, (size_t)list->len, sizeof *list->names, names_compare) != NULL;
}

static ember_status path_join(ember_ctx *ctx, char *out, const char *dir, const char *name)
{
    if ((size_t)snprintf(out, FOLDER_PATH_MAX, "%s/%s", dir, name) >= FOLDER_PATH_MAX)
        return ember_fail(ctx, EMBER_ERR_ARG, "the path %s/%s is too long", dir, name);
    return EMBER_OK;
}

static bool is_dir(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

static bool is_image_name(const char *name)
{
    static const char *const extensions[] = {".png", ".jpg", ".jpeg", ".bmp"};
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof extensions / sizeof extensions[0]; i++)
        if (strcasecmp(dot, extensions[i]) == 0)
            return true;
    return false;
}

/* The subfolders of dir (want_dirs) or its image files, sorted; names that
 * start with a dot are skipped, as are files of other types. */
static ember_status list_dir(ember_ctx *ctx, const char *dir, bool want_dirs, struct name_list *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot open the folder %s: %s", dir, strerror(errno));
    ember_status st = EMBER_OK;
    char path[FOLDER_PATH_MAX];
    int64_t skipped = 0;
    for (struct dirent *e; st == EMBER_OK && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if ((st = path_join(ctx, path, dir, e->d_name)) != EMBER_OK)
            break;
        bool entry_is_dir = is_dir(path);
        if (want_dirs ? entry_is_dir : !entry_is_dir && is_image_name(e->d_name))
            st = names_add(ctx, out, e->d_name);
        else if (!want_dirs && !entry_is_dir)
            skipped++;
    }
    closedir(d);
    if (st != EMBER_OK)
        return st;
    if (skipped)
        ember_log(ctx, EMBER_LOG_INFO, "%s: skipped %lld files that are not .png, .jpg, .jpeg or .bmp", dir,
                  (long long)skipped);
    if (out->len > 1) /* an empty list has no array: qsort may not see NULL */
        qsort(out->names, (size_t)out->len, sizeof *out->names, names_compare);
    return EMBER_OK;
}

/* ---------------------------------------------------------------- samples */

struct sample {
    char *path;
    int32_t label;
};

struct sample_list {
    struct sample *items;
    int64_t len, cap;
};

static void samples_free(struct sample_list *list)
{
    for (int64_t i = 0; i < list->len; i++)
        free(list->items[i].path);
    free(list->items);
}

static ember_status samples_add(ember_ctx *ctx, struct sample_list *list, const char *dir, const char *name,
                                int32_t label)
{
    char path[FOLDER_PATH_MAX];
    ember_status st = path_join(ctx, path, dir, name);
    if (st == EMBER_OK)
        st = ember_host_grow(ctx, (void **)&list->items, &list->cap, list->len + 1, sizeof *list->items);
    if (st != EMBER_OK)
        return st;
    char *copy = ember_host_strdup(ctx, path);
    if (!copy)
        return EMBER_ERR_NOMEM;
    list->items[list->len++] = (struct sample){.path = copy, .label = label};
    return EMBER_OK;
}

ember_status ember_data_hold_out(ember_ctx *ctx, int64_t n, uint64_t seed, const char *class_name,
                                 bool *is_test)
{
    if (n < 2)
        return EMBER_OK;
    int64_t held = (n + 5) / 10 > 0 ? (n + 5) / 10 : 1;
    int64_t *perm = ember_host_alloc(ctx, (size_t)n * sizeof *perm);
    if (!perm)
        return EMBER_ERR_NOMEM;
    /* the first `held` steps of a Fisher-Yates shuffle pick them */
    ember_rng rng =
        ember_rng_seed(seed ^ ember_hash_bytes(class_name, strlen(class_name))); /* the name mixed in */
    for (int64_t i = 0; i < n; i++)
        perm[i] = i;
    for (int64_t i = 0; i < held; i++) {
        int64_t j = i + (int64_t)(ember_rng_u32(&rng) % (uint64_t)(n - i));
        int64_t swap = perm[i];
        perm[i] = perm[j];
        perm[j] = swap;
        is_test[perm[i]] = true;
    }
    free(perm);
    return EMBER_OK;
}

/* Adds the files of one class that belong to `split`: all of them with
 * given splits, else the held-out share (test) or the rest (train). */
static ember_status samples_add_class(ember_ctx *ctx, struct sample_list *list, const char *class_dir,
                                      const struct name_list *files, int32_t label, bool hold_out,
                                      ember_split split, uint64_t seed, const char *class_name)
{
    int64_t n = files->len;
    bool *is_test = NULL;
    if (hold_out && n >= 2) {
        if (!(is_test = ember_host_calloc(ctx, (size_t)n, sizeof *is_test)))
            return EMBER_ERR_NOMEM;
        ember_status st = ember_data_hold_out(ctx, n, seed, class_name, is_test);
        if (st != EMBER_OK) {
            free(is_test);
            return st;
        }
    }
    ember_status st = EMBER_OK;
    for (int64_t i = 0; i < n && st == EMBER_OK; i++) {
        bool test = is_test && is_test[i];
        if (!hold_out || test == (split == EMBER_TEST))
            st = samples_add(ctx, list, class_dir, files->names[i], label);
    }
    free(is_test);
    return st;
}

/* ----------------------------------------------------------------- pixels */

/* The data set's (C, H, W): the options' values, zeros filled from the
 * first image's header. */
static ember_status folder_geometry(ember_ctx *ctx, const ember_data_options *options, const char *first,
                                    int64_t shape[3])
{
    static const int64_t from_image[3] = {0, 0, 0};
    const int64_t *want = options->sample_ndim ? options->sample_shape : from_image;
    if (options->sample_ndim != 0 && options->sample_ndim != 3)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "folder: the shape of its images is CxHxW (ember_data_options.sample_shape "
                          "3x64x64, or none for the first image's), not %d dimensions",
                          options->sample_ndim);
    if ((want[0] != 0 && want[0] != 1 && want[0] != 3) || want[1] < 0 || want[1] > FOLDER_MAX_SIDE ||
        want[2] < 0 || want[2] > FOLDER_MAX_SIDE)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "folder: the shape %lldx%lldx%lld (ember_data_options.sample_shape): channels are "
                          "1 or 3, sides 1 "
                          "to %d (0: the first image's)",
                          (long long)want[0], (long long)want[1], (long long)want[2], FOLDER_MAX_SIDE);
    uint8_t *bytes = NULL;
    int64_t cap = 0;
    size_t len = 0;
    int width = 0, height = 0, channels = 0;
    ember_status st = ember_file_read(ctx, first, &bytes, &cap, &len);
    if (st == EMBER_OK)
        st = ember_image_info(ctx, first, bytes, len, &width, &height, &channels);
    free(bytes);
    if (st != EMBER_OK)
        return st;
    shape[0] = want[0] ? want[0] : channels >= 3 ? 3 : 1;
    shape[1] = want[1] ? want[1] : height;
    shape[2] = want[2] ? want[2] : width;
    return EMBER_OK;
}

/* Decodes every sample into the data set. `size_from` says what set the
 * size, for the message about an image that does not match. */
static ember_status folder_decode(ember_dataset *ds, const struct sample_list *samples, bool resize,
                                  const char *size_from)
{
    ember_ctx *ctx = ds->ctx;
    int c = (int)ds->sample_shape[0], h = (int)ds->sample_shape[1], w = (int)ds->sample_shape[2];
    uint8_t *bytes = NULL;
    int64_t cap = 0;
    ember_status st = EMBER_OK;
    for (int64_t i = 0; i < samples->len && st == EMBER_OK; i++) {
        const char *path = samples->items[i].path;
        size_t len;
        if ((st = ember_file_read(ctx, path, &bytes, &cap, &len)) == EMBER_OK)
            st = ember_image_sample(ctx, path, bytes, len, c, h, w, resize, size_from,
                                    ds->pixels + i * ds->sample_bytes);
        ds->labels[i] = samples->items[i].label;
    }
    free(bytes);
    return st;
}

/* ------------------------------------------------------------------ load */

/* The image files of one class folder; `required`: none is an error. */
static ember_status class_images(ember_ctx *ctx, const char *class_dir, bool required,
                                 struct name_list *files)
{
    names_free(files);
    ember_status st = list_dir(ctx, class_dir, false, files);
    if (st == EMBER_OK && required && files->len == 0)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: the class folder holds no .png, .jpg, .jpeg or .bmp images", class_dir);
    return st;
}

/* The classes: train_root's subfolders. With given splits, test_root's must
 * be among them. */
static ember_status folder_classes(ember_ctx *ctx, const char *train_root, const char *test_root,
                                   struct name_list *classes)
{
    struct name_list test_classes = {0};
    ember_status st = list_dir(ctx, train_root, true, classes);
    if (st != EMBER_OK)
        return st;
    if (classes->len == 0 || classes->len > INT32_MAX)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: no class subfolders; a folder data set is DIR/<class>/<image>.png (or .jpg, "
                          ".jpeg, .bmp), optionally split as DIR/train/<class> and DIR/test/<class>",
                          train_root);
    if (!test_root)
        return EMBER_OK;
    st = list_dir(ctx, test_root, true, &test_classes);
    for (int64_t i = 0; i < test_classes.len && st == EMBER_OK; i++)
        if (!names_contain(classes, test_classes.names[i]))
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s/%s: the class \"%s\" is not a folder in %s", test_root,
                            test_classes.names[i], test_classes.names[i], train_root);
    names_free(&test_classes);
    return st;
}

/* The split's samples, class by class, from `root` (train_root or
 * test_root); with hold_out, root holds both splits. */
static ember_status folder_samples(ember_dataset *ds, const char *root, bool hold_out, uint64_t seed,
                                   const struct name_list *classes, struct sample_list *samples)
{
    ember_ctx *ctx = ds->ctx;
    bool given_test = !hold_out && ds->split == EMBER_TEST;
    char class_dir[FOLDER_PATH_MAX];
    struct name_list files = {0};
    ember_status st = EMBER_OK;
    for (int64_t k = 0; k < classes->len && st == EMBER_OK; k++) {
        if ((st = path_join(ctx, class_dir, root, classes->names[k])) != EMBER_OK)
            break;
        if (given_test && !is_dir(class_dir)) /* a class with no test images */
            continue;
        if ((st = class_images(ctx, class_dir, !given_test, &files)) == EMBER_OK)
            st = samples_add_class(ctx, samples, class_dir, &files, (int32_t)k, hold_out, ds->split, seed,
                                   classes->names[k]);
    }
    names_free(&files);
    return st;
}

ember_status ember_data_load_folder(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    ember_ctx *ctx = ds->ctx;
    char train_root[FOLDER_PATH_MAX], test_root[FOLDER_PATH_MAX], class_dir[FOLDER_PATH_MAX];
    char first[FOLDER_PATH_MAX];
    struct name_list classes = {0}, files = {0};
    struct sample_list samples = {0};
    ember_status st;

    if ((st = path_join(ctx, train_root, dir, "train")) != EMBER_OK ||
        (st = path_join(ctx, test_root, dir, "test")) != EMBER_OK)
        return st;
    bool has_train = is_dir(train_root), has_test = is_dir(test_root), hold_out = !has_train;
    if (has_train != has_test)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s has a %s folder but no %s folder: give both splits, or neither and let ember "
                          "hold out a tenth of each class",
                          dir, has_train ? "train" : "test", has_train ? "test" : "train");
    if (hold_out)
        snprintf(train_root, sizeof train_root, "%s", dir);
    const char *root = hold_out || ds->split == EMBER_TRAIN ? train_root : test_root;
    if ((st = folder_classes(ctx, train_root, hold_out ? NULL : test_root, &classes)) != EMBER_OK ||
        (st = folder_samples(ds, root, hold_out, options->seed, &classes, &samples)) != EMBER_OK)
        goto cleanup;

    /* the first image of train sets the geometry, for both splits */
    int64_t shape[3];
    if ((st = path_join(ctx, class_dir, train_root, classes.names[0])) != EMBER_OK ||
        (st = class_images(ctx, class_dir, true, &files)) != EMBER_OK ||
        (st = path_join(ctx, first, class_dir, files.names[0])) != EMBER_OK ||
        (st = folder_geometry(ctx, options, first, shape)) != EMBER_OK ||
        (st = ember_dataset_reserve(ds, samples.len, 3, shape, (int)classes.len)) != EMBER_OK)
        goto cleanup;
    bool size_given = options->sample_ndim == 3 && options->sample_shape[1] && options->sample_shape[2];
    st = folder_decode(ds, &samples, options->resize,
                       size_given ? "the shape asked for (ember_data_options.sample_shape)" : first);
    if (st == EMBER_OK) /* the subfolders' names */
        st = ember_dataset_name_classes(ds, (const char *const *)classes.names);

cleanup:
    samples_free(&samples);
    names_free(&files);
    names_free(&classes);
    return st;
}
