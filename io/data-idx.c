/* SPDX-License-Identifier: MIT */
/*
 * io/data-idx.c — MNIST and Fashion-MNIST: IDX files, gzipped or not.
 *
 * An IDX file is a 4-byte magic (0, 0, a dtype byte, the number of
 * dimensions), one big-endian uint32 per dimension, then the data in
 * row-major order. ember reads the unsigned-byte kind (dtype 0x08): images
 * (count, H, W) and labels (count). The split's two files are
 *
 *     train-images-idx3-ubyte[.gz]  train-labels-idx1-ubyte[.gz]
 *     t10k-images-idx3-ubyte[.gz]   t10k-labels-idx1-ubyte[.gz]
 *
 * with the .gz name tried first; a file is gzip when it starts with gzip's
 * magic bytes (1f 8b), and read as it is otherwise.
 *
 * Nothing is allocated before the header is checked against the file: a
 * plain file must hold header + declared data; a gzipped one may declare at
 * most 1032 times its compressed size (deflate's largest ratio), so a small
 * file cannot ask for gigabytes. Bytes after the declared data are an error
 * (the header and the data disagree, or two files were joined). A gzip file
 * is inflated here with zlib's inflate, to the end of its stream: only
 * there does inflate check the trailer (the CRC-32 and the length of what
 * it inflated), so a file cut anywhere, its trailer included, is refused.
 * (zlib's gzread, used before, took a file cut by up to 10 bytes when the
 * pixels were read in one piece: it read the whole input, then took the
 * end of the input for the end of the stream.) Nothing may follow the
 * stream's end either.
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
/* inflate writes at most an unsigned int at a time */
#define READ_CHUNK ((int64_t)1 << 30)
/* compressed bytes read at a time: fewer, larger reads inflate faster */
#define INPUT_BYTES (1 << 18)

struct idx_file {
    char path[4096];
    int fd;
    struct stat info;
    int64_t file_bytes; /* on disk, compressed or not */
    bool gzipped;
    /* a gzip file's inflation: its input buffer, where it stands */
    z_stream z;
    bool inflating;  /* z is initialised */
    bool input_end;  /* the file has no more bytes for z */
    bool stream_end; /* inflate reached the stream's end and checked its trailer */
    uint8_t *input;
    int64_t dim[3];
    int64_t header_bytes;
};

/* Opens f->path, gzipped or not. */
static ember_status idx_open_path(ember_ctx *ctx, struct idx_file *f)
{
    f->fd = ember_open_regular(ctx, f->path, &f->info);
    if (f->fd < 0)
        return ember_last_status(ctx);
    f->file_bytes = (int64_t)f->info.st_size;
    uint8_t magic[2];
    f->gzipped = read(f->fd, magic, 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (lseek(f->fd, 0, SEEK_SET) != 0)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", f->path, strerror(errno));
    if (!f->gzipped)
        return EMBER_OK;
    if (!(f->input = ember_host_alloc(ctx, INPUT_BYTES)))
        return EMBER_ERR_NOMEM;
    /* 16 + MAX_WBITS: a gzip stream (header and trailer), nothing else */
    if (inflateInit2(&f->z, 16 + MAX_WBITS) != Z_OK)
        return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: zlib could not start inflating it (out of memory)",
                          f->path);
    f->inflating = true;
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
    if (f->inflating)
        inflateEnd(&f->z);
    f->inflating = false;
    free(f->input);
    f->input = NULL;
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

/* Up to `bytes` of a plain file into dst; how many, or -1 with errno set. */
static int64_t read_plain(int fd, uint8_t *dst, int64_t bytes)
{
    int64_t done = 0;
    while (done < bytes) {
        ssize_t got = read(fd, dst + done, (size_t)(bytes - done < READ_CHUNK ? bytes - done : READ_CHUNK));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        done += got;
    }
    return done;
}

/* Inflates up to `bytes` into dst, stopping early only at the stream's
 * end; sets *done. A failure is the file's: cut short, corrupt (a CRC or
 * length in the trailer that does not match included) or unreadable.
 * `what` names what is read, for messages; NULL: the stream's end. */
static ember_status inflate_into(ember_ctx *ctx, struct idx_file *f, uint8_t *dst, int64_t bytes,
                                 int64_t *done, const char *what)
{
    *done = 0;
    while (*done < bytes && !f->stream_end) {
        if (f->z.avail_in == 0 && !f->input_end) {
            int64_t got = read_plain(f->fd, f->input, INPUT_BYTES);
            if (got < 0)
                return ember_fail(ctx, EMBER_ERR_IO, "%s: cannot read it: %s", f->path, strerror(errno));
            f->input_end = got == 0;
            f->z.next_in = f->input;
            f->z.avail_in = (uInt)got;
        }
        int64_t want = bytes - *done < READ_CHUNK ? bytes - *done : READ_CHUNK;
        f->z.next_out = dst + *done;
        f->z.avail_out = (uInt)want;
        int ret = inflate(&f->z, Z_NO_FLUSH);
        *done += want - (int64_t)f->z.avail_out;
        if (ret == Z_STREAM_END) {
            f->stream_end = true;
        } else if (ret == Z_BUF_ERROR && f->z.avail_in == 0 && f->input_end) {
            if (!what) /* past the data: what is missing is the stream's last block or trailer */
                return ember_fail(ctx, EMBER_ERR_FORMAT,
                                  "%s: truncated or corrupt gzip: the file ends before "
                                  "the stream does (its last bytes, the CRC-32 and length, are missing)",
                                  f->path);
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated or corrupt gzip: the file ends inside %s",
                              f->path, what);
        } else if (ret == Z_MEM_ERROR) {
            return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: out of memory inflating it", f->path);
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: truncated or corrupt gzip: bad data in %s (zlib: %s)", f->path,
                              what ? what : "its end", f->z.msg ? f->z.msg : "no message");
        }
    }
    return EMBER_OK;
}

/* Reads exactly `bytes`; a short read is a truncated file or corrupt gzip. */
static ember_status idx_read(ember_ctx *ctx, struct idx_file *f, void *dst, int64_t bytes, const char *what)
{
    int64_t done = 0;
    if (f->gzipped) {
        ember_status st = inflate_into(ctx, f, dst, bytes, &done, what);
        if (st != EMBER_OK)
            return st;
    } else if ((done = read_plain(f->fd, dst, bytes)) < 0) {
        return ember_fail(ctx, EMBER_ERR_IO, "%s: cannot read %s: %s", f->path, what, strerror(errno));
    }
    if (done == bytes)
        return EMBER_OK;
    return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated: expected %lld bytes of %s, found %lld%s",
                      f->path, (long long)bytes, what, (long long)done,
                      f->gzipped ? " before the gzip stream ends" : "");
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
    if (!f->gzipped) {
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

/* The declared data must be the end of the file, and a gzip file's stream
 * must end there too, its trailer checked (see the top). */
static ember_status idx_check_end(ember_ctx *ctx, struct idx_file *f)
{
    uint8_t extra[64];
    int64_t got = 0;
    ember_status st = EMBER_OK;
    if (!f->gzipped) {
        if ((got = read_plain(f->fd, extra, 1)) < 0)
            return ember_fail(ctx, EMBER_ERR_IO, "%s: cannot read its end: %s", f->path, strerror(errno));
    } else {
        st = inflate_into(ctx, f, extra, sizeof extra, &got, NULL);
        /* the stream's end must also be the file's */
        if (st == EMBER_OK && got == 0 && (f->z.avail_in > 0 || read_plain(f->fd, extra, 1) != 0))
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: bytes follow the end of its gzip stream (joined files?)", f->path);
    }
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
    struct idx_file images = {.fd = -1}, labels = {.fd = -1};
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
    bool gzipped = images.gzipped, cached = false;
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
    struct idx_file f = {.fd = -1};
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
