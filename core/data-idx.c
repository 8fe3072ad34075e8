/* SPDX-License-Identifier: MIT */
/*
 * core/data-idx.c — MNIST and Fashion-MNIST: IDX files, gzipped or not.
 *
 * An IDX file is a 4-byte magic (0, 0, a dtype byte, the number of
 * dimensions), one big-endian uint32 per dimension, then the data in
 * row-major order. ember reads the unsigned-byte kind (dtype 0x08): images
 * (count, H, W) and labels (count). The split's two files are
 *
 *     train-images-idx3-ubyte[.gz]  train-labels-idx1-ubyte[.gz]
 *     t10k-images-idx3-ubyte[.gz]   t10k-labels-idx1-ubyte[.gz]
 *
 * with the .gz name tried first. zlib reads both: gzread passes a plain
 * file through unchanged.
 *
 * Nothing is allocated before the header is checked against the file: a
 * plain file must hold header + declared data; a gzipped one may declare at
 * most 1032 times its compressed size (deflate's largest ratio), so a small
 * file cannot ask for gigabytes. Bytes after the declared data are an error
 * (the header and the data disagree, or two files were joined), and reading
 * past the data is also what makes zlib check the gzip trailer's CRC. Like
 * gzip itself, zlib ignores anything after the end of the gzip stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data-impl.h"

#define IDX_UBYTE   0x08
#define IDX_CLASSES 10

/* Fashion-MNIST's labels, as Zalando's README names them */
static const char *const fashion_classes[IDX_CLASSES] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
/* deflate cannot compress better than 1032:1 */
#define DEFLATE_MAX_RATIO 1032
/* zlib reads at most an unsigned int at a time */
#define READ_CHUNK ((int64_t)1 << 30)

struct idx_file {
    char path[4096];
    gzFile gz;
    struct stat info;
    int64_t file_bytes; /* on disk, compressed or not */
    int64_t dim[3];
    int64_t header_bytes;
};

/* Opens f->path, gzipped or not. */
static ember_status idx_open_path(ember_ctx *ctx, struct idx_file *f)
{
    int fd = ember_open_regular(ctx, f->path, &f->info);
    if (fd < 0)
        return ember_last_status(ctx);
    f->file_bytes = (int64_t)f->info.st_size;
    if ((f->gz = gzdopen(fd, "rb")))
        gzbuffer(f->gz, 1 << 18); /* fewer, larger reads: inflate runs faster */
    if (!f->gz) {
        close(fd);
        return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: zlib could not open it (out of memory)", f->path);
    }
    return EMBER_OK;
}

/* Opens dir/name.gz, else dir/name. */
static ember_status idx_open(ember_ctx *ctx, const char *dir, const char *name, struct idx_file *f)
{
    char plain[sizeof f->path];
    if ((size_t)snprintf(f->path, sizeof f->path, "%s/%s.gz", dir, name) >= sizeof f->path)
        return ember_fail(ctx, EMBER_ERR_ARG, "the data folder's path is too long: %s", dir);
    snprintf(plain, sizeof plain, "%s/%s", dir, name);
    if (access(f->path, F_OK) != 0 && errno == ENOENT) {
        if (access(plain, F_OK) != 0 && errno == ENOENT)
            return ember_fail(ctx, EMBER_ERR_IO, "cannot open %s (nor %s without .gz): %s", f->path, plain,
                              strerror(errno));
        memcpy(f->path, plain, sizeof plain);
    }
    return idx_open_path(ctx, f);
}

static void idx_close(struct idx_file *f)
{
    if (f->gz)
        gzclose(f->gz);
    f->gz = NULL;
}

/* The failure zlib has recorded on f, if any: a read error, a gzip stream
 * that stops early (Z_BUF_ERROR) or corrupt data, in zlib's own words. */
static ember_status idx_zlib_error(ember_ctx *ctx, struct idx_file *f, const char *what)
{
    int zerr = Z_OK;
    const char *zmsg = gzerror(f->gz, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return EMBER_OK;
    /* zlib names a file opened by descriptor "<fd:3>"; the path says more */
    if (strncmp(zmsg, "<fd:", 4) == 0 && strstr(zmsg, ": "))
        zmsg = strstr(zmsg, ": ") + 2;
    if (zerr == Z_ERRNO)
        return ember_fail(ctx, EMBER_ERR_IO, "%s: cannot read %s: %s", f->path, what, zmsg);
    if (zerr == Z_BUF_ERROR)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated or corrupt gzip: the stream ends inside %s (zlib: %s)",
                          f->path, what, zmsg);
    return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated or corrupt gzip: bad data in %s (zlib: %s)", f->path,
                      what, zmsg);
}

/* Reads exactly `bytes`; a short read is a truncated file or corrupt gzip. */
static ember_status idx_read(ember_ctx *ctx, struct idx_file *f, void *dst, int64_t bytes, const char *what)
{
    int64_t done = 0;
    while (done < bytes) {
        int64_t want = bytes - done < READ_CHUNK ? bytes - done : READ_CHUNK;
        int got = gzread(f->gz, (char *)dst + done, (unsigned)want);
        if (got <= 0)
            break;
        done += got;
    }
    if (done == bytes)
        return EMBER_OK;
    ember_status st = idx_zlib_error(ctx, f, what);
    if (st != EMBER_OK)
        return st;
    return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated: expected %lld bytes of %s, found %lld", f->path,
                      (long long)bytes, what, (long long)done);
}

/* Reads and checks the header: unsigned bytes, `ndim` dimensions, each in
 * [1, EMBER_DATA_MAX_DIM], declaring no more data than the file can hold. */
static ember_status idx_header(ember_ctx *ctx, struct idx_file *f, int ndim, const char *what)
{
    uint8_t magic[4], dims[12];
    ember_status st = idx_read(ctx, f, magic, sizeof magic, "the header");
    if (st != EMBER_OK)
        return st;
    if (magic[0] != 0 || magic[1] != 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: not an IDX file: it starts with bytes %02x %02x, an IDX file with 00 00",
                          f->path, magic[0], magic[1]);
    if (magic[2] != IDX_UBYTE)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: IDX data type 0x%02x; ember reads unsigned bytes (0x08) only", f->path,
                          magic[2]);
    if (magic[3] != ndim)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %d dimensions, but an IDX file of %s has %d", f->path,
                          magic[3], what, ndim);
    if ((st = idx_read(ctx, f, dims, 4 * ndim, "the header")) != EMBER_OK)
        return st;

    f->header_bytes = 4 + 4 * ndim;
    int64_t payload = 1;
    for (int i = 0; i < ndim; i++) {
        const uint8_t *d = dims + 4 * i;
        f->dim[i] = (int64_t)d[0] << 24 | (int64_t)d[1] << 16 | (int64_t)d[2] << 8 | d[3];
        if (f->dim[i] < 1 || f->dim[i] > EMBER_DATA_MAX_DIM)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: dimension %d is %lld, outside 1 to %lld", f->path,
                              i, (long long)f->dim[i], (long long)EMBER_DATA_MAX_DIM);
        payload *= f->dim[i]; /* three factors of at most 2^20: no overflow */
    }
    if (payload > EMBER_DATA_MAX_BYTES)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: declares %lld bytes, beyond ember's limit of %lld",
                          f->path, (long long)payload, (long long)EMBER_DATA_MAX_BYTES);
    /* after a read, zlib knows whether the file is gzip or passed through */
    if (gzdirect(f->gz)) {
        if (f->header_bytes + payload > f->file_bytes)
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: truncated: the header declares %lld bytes of %s, but %lld follow it",
                              f->path, (long long)payload, what,
                              (long long)(f->file_bytes - f->header_bytes));
    } else if (payload > DEFLATE_MAX_RATIO * f->file_bytes) {
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: the header declares %lld bytes of %s, more than %d times the %lld compressed "
                          "bytes could hold",
                          f->path, (long long)payload, what, DEFLATE_MAX_RATIO, (long long)f->file_bytes);
    }
    return EMBER_OK;
}

/* The declared data must be the end of the file (see the top). */
static ember_status idx_check_end(ember_ctx *ctx, struct idx_file *f)
{
    uint8_t extra;
    int got = gzread(f->gz, &extra, 1);
    ember_status st = idx_zlib_error(ctx, f, "its end");
    if (st != EMBER_OK)
        return st;
    if (got > 0)
        return ember_fail(
            ctx, EMBER_ERR_FORMAT,
            "%s: more bytes follow the data its header declares (a wrong count, or joined files)", f->path);
    return EMBER_OK;
}

/* Reads the labels as int32, checking each against the class count. */
static ember_status idx_read_labels(ember_ctx *ctx, struct idx_file *f, int32_t *labels, int64_t count)
{
    uint8_t chunk[4096];
    for (int64_t done = 0; done < count;) {
        int64_t n = count - done < (int64_t)sizeof chunk ? count - done : (int64_t)sizeof chunk;
        ember_status st = idx_read(ctx, f, chunk, n, "labels");
        if (st != EMBER_OK)
            return st;
        for (int64_t i = 0; i < n; i++) {
            if (chunk[i] >= IDX_CLASSES)
                return ember_fail(ctx, EMBER_ERR_FORMAT,
                                  "%s: label %d at index %lld is not a class (0 to %d)", f->path, chunk[i],
                                  (long long)(done + i), IDX_CLASSES - 1);
            labels[done + i] = chunk[i];
        }
        done += n;
    }
    return EMBER_OK;
}

ember_status ember_data_load_idx(ember_dataset *ds, const char *dir, const ember_data_options *options)
{
    ember_ctx *ctx = ds->ctx;
    const char *prefix = ds->split == EMBER_TRAIN ? "train" : "t10k";
    char image_name[64], label_name[64];
    snprintf(image_name, sizeof image_name, "%s-images-idx3-ubyte", prefix);
    snprintf(label_name, sizeof label_name, "%s-labels-idx1-ubyte", prefix);
    struct idx_file images = {0}, labels = {0};
    ember_status st;

    if ((st = idx_open(ctx, dir, image_name, &images)) != EMBER_OK ||
        (st = idx_header(ctx, &images, 3, "images")) != EMBER_OK)
        goto close_images;
    if ((st = idx_open(ctx, dir, label_name, &labels)) != EMBER_OK ||
        (st = idx_header(ctx, &labels, 1, "labels")) != EMBER_OK)
        goto close_labels;
    if (images.dim[0] != labels.dim[0]) {
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s holds %lld images but %s holds %lld labels", images.path,
                        (long long)images.dim[0], labels.path, (long long)labels.dim[0]);
        goto close_labels;
    }

    int64_t count = images.dim[0];
    int64_t shape[3] = {1, images.dim[1], images.dim[2]};
    if ((st = ember_dataset_reserve(ds, count, 3, shape, IDX_CLASSES)) != EMBER_OK)
        goto close_labels;
    /* gzipped images inflated before: their checked copy (data-cache.c) */
    bool gzipped = !gzdirect(images.gz), cached = false;
    int64_t pixel_bytes = count * ds->sample_bytes;
    if (gzipped)
        cached = ember_data_cache_load(ctx, images.path, &images.info, ds->pixels, pixel_bytes);
    if ((!cached && ((st = idx_read(ctx, &images, ds->pixels, pixel_bytes, "pixels")) != EMBER_OK ||
                     (st = idx_check_end(ctx, &images)) != EMBER_OK)) ||
        (st = idx_read_labels(ctx, &labels, ds->labels, count)) != EMBER_OK ||
        (st = idx_check_end(ctx, &labels)) != EMBER_OK)
        goto close_labels;
    if (gzipped && !cached) /* every check passed: worth keeping */
        ember_data_cache_store(ctx, images.path, &images.info, ds->pixels, pixel_bytes);
    if (strcmp(ds->kind, "fashion-mnist") == 0)
        st = ember_dataset_name_classes(ds, fashion_classes); /* MNIST's digits are their indices */

close_labels:
    idx_close(&labels);
close_images:
    idx_close(&images);
    return st;
}

float *ember_idx_images(ember_ctx *ctx, const char *path, int64_t *count, int *height, int *width)
{
    if (!ctx)
        return NULL;
    struct idx_file f = {0};
    if (!path || !count || !height || !width ||
        (size_t)snprintf(f.path, sizeof f.path, "%s", path) >= sizeof f.path) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_idx_images: a path (under 4096 bytes) and three outputs");
        return NULL;
    }
    uint8_t *bytes = NULL;
    float *images = NULL;
    ember_status st = idx_open_path(ctx, &f);
    if (st == EMBER_OK)
        st = idx_header(ctx, &f, 3, "images");
    int64_t n = f.dim[0] * f.dim[1] * f.dim[2];
    if (st == EMBER_OK && (!(bytes = ember_host_alloc(ctx, (size_t)n)) ||
                           !(images = ember_host_alloc(ctx, (size_t)n * sizeof *images))))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK)
        st = idx_read(ctx, &f, bytes, n, "pixels");
    if (st == EMBER_OK)
        st = idx_check_end(ctx, &f);
    for (int64_t i = 0; st == EMBER_OK && i < n; i++)
        images[i] = (float)bytes[i] / 255.0f; /* as the batcher scales */
    idx_close(&f);
    free(bytes);
    if (st != EMBER_OK) {
        free(images);
        return NULL;
    }
    *count = f.dim[0];
    *height = (int)f.dim[1];
    *width = (int)f.dim[2];
    return images;
}
