/* SPDX-License-Identifier: MIT */
/*
 * io/npy.c — NumPy's .npy files, read and written (ember_npy_load,
 * ember_npy_save in ember.h; docs/interop.md), and the streams that read
 * them from files and from .npz archives (npy-impl.h; npz.c finds an
 * archive's entry).
 *
 * A .npy file is a magic string, a version, a header's length, the header
 * (a Python dict literal such as {'descr': '<f4', 'fortran_order': False,
 * 'shape': (100, 1, 28, 28), }, padded with spaces to a multiple of 64
 * bytes) and then the array's bytes, row-major. The reader takes the dtypes
 * NumPy gives images, features and labels (uint8, float16/32/64, int32/64,
 * little-endian) and refuses the rest by name: big-endian data, Fortran
 * order, objects (a pickle, which NumPy itself will not load unasked). The
 * header is parsed for those three keys only, and the data must be exactly
 * the shape's bytes: the file's size is checked before anything is
 * allocated. Values are converted a chunk at a time, so reading costs the
 * array's own memory and no copy of the file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert-impl.h"
#include "npy-impl.h"

#define NPY_MAGIC      "\x93NUMPY"
#define NPY_MAX_HEADER 65536

/* the value after 'key': in the header, or NULL */
static const char *header_value(const char *header, const char *key)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *at = strstr(header, quoted);
    if (!at)
        return NULL;
    at += strlen(quoted);
    while (*at == ' ')
        at++;
    if (*at++ != ':')
        return NULL;
    while (*at == ' ')
        at++;
    return at;
}

/* (d0, d1, ...) or (d0,) or () */
static bool parse_shape(const char *at, int *ndim, int64_t *shape)
{
    if (*at++ != '(')
        return false;
    *ndim = 0;
    for (;;) {
        while (*at == ' ')
            at++;
        if (*at == ')')
            return true;
        if (!isdigit((unsigned char)*at) || *ndim == EMBER_MAX_DIMS)
            return false;
        char *end;
        errno = 0;
        long long v = strtoll(at, &end, 10);
        if (errno || v < 0 || v > ((int64_t)1 << 40))
            return false;
        shape[(*ndim)++] = v;
        at = end;
        while (*at == ' ')
            at++;
        if (*at == ',')
            at++;
        else if (*at != ')')
            return false;
    }
}

/* ------------------------------------------------------------------ streams */

ember_status npy_open_file(ember_ctx *ctx, const char *path, struct npy_stream *s)
{
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    snprintf(s->name, sizeof s->name, "%s", path);
    struct stat info;
    if (!(s->f = ember_fopen_regular(ctx, path, &info)))
        return ember_last_status(ctx);
    s->left = (uint64_t)info.st_size;
    return EMBER_OK;
}

/* n bytes of a deflated entry, inflated into dst; with n 0, checks
 * instead that the compressed stream ends here. */
static ember_status inflate_some(struct npy_stream *s, unsigned char *dst, size_t n)
{
    unsigned char past;
    bool at_end = n == 0;
    s->z.next_out = at_end ? &past : dst;
    s->z.avail_out = at_end ? 1u : (uInt)n;
    for (;;) {
        if (s->z.avail_in == 0 && s->packed_left > 0) {
            size_t want = s->packed_left < NPY_STREAM_CHUNK ? (size_t)s->packed_left : NPY_STREAM_CHUNK;
            if (fread(s->in, 1, want, s->f) != want)
                return ember_fail(s->ctx, EMBER_ERR_IO, "%s: cannot read it: %s", s->name,
                                  ferror(s->f) ? strerror(errno) : "the archive ended early");
            s->packed_left -= want;
            s->z.next_in = s->in;
            s->z.avail_in = (uInt)want;
        }
        int z = inflate(&s->z, Z_NO_FLUSH);
        if (at_end && s->z.avail_out == 0)
            return ember_fail(s->ctx, EMBER_ERR_FORMAT,
                              "%s: its compressed data goes on past its declared size", s->name);
        if (!at_end && s->z.avail_out == 0)
            return EMBER_OK;
        if (z == Z_STREAM_END)
            return at_end ? EMBER_OK
                          : ember_fail(s->ctx, EMBER_ERR_FORMAT,
                                       "%s: its compressed data ends before its declared size", s->name);
        if (z == Z_BUF_ERROR && s->z.avail_in == 0 && s->packed_left == 0)
            return ember_fail(s->ctx, EMBER_ERR_FORMAT, "%s: its compressed data is cut short", s->name);
        if (z != Z_OK && z != Z_BUF_ERROR)
            return ember_fail(s->ctx, EMBER_ERR_FORMAT, "%s: its compressed data is damaged (zlib: %s)",
                              s->name, s->z.msg ? s->z.msg : zError(z));
    }
}

ember_status npy_stream_read(struct npy_stream *s, void *dst, size_t n)
{
    if (n > s->left)
        return ember_fail(s->ctx, EMBER_ERR_FORMAT, "%s: cut short (%llu bytes left where %zu are needed)",
                          s->name, (unsigned long long)s->left, n);
    for (size_t done = 0; done < n;) { /* zlib counts in uInt: at most a chunk at a time */
        size_t part = n - done < NPY_STREAM_CHUNK ? n - done : NPY_STREAM_CHUNK;
        unsigned char *at = (unsigned char *)dst + done;
        ember_status st = EMBER_OK;
        if (s->deflated)
            st = inflate_some(s, at, part);
        else if (fread(at, 1, part, s->f) != part)
            st = ember_fail(s->ctx, EMBER_ERR_IO, "cannot read %s: %s", s->name,
                            ferror(s->f) ? strerror(errno) : "it ended early");
        if (st != EMBER_OK)
            return st;
        if (s->zip)
            s->crc = (uint32_t)crc32(s->crc, at, (uInt)part);
        done += part;
    }
    s->left -= n;
    return EMBER_OK;
}

ember_status npy_stream_end(struct npy_stream *s)
{
    if (s->left)
        return ember_fail(s->ctx, EMBER_ERR_FORMAT, "%s: %llu bytes past the array", s->name,
                          (unsigned long long)s->left);
    ember_status st =
        s->deflated ? inflate_some(s, NULL, 0) : EMBER_OK; /* its compressed stream ends here too */
    if (st != EMBER_OK)
        return st;
    if (s->zip && s->crc != s->want_crc)
        return ember_fail(s->ctx, EMBER_ERR_FORMAT,
                          "%s: its CRC-32 is %08x, not the %08x the archive records: "
                          "the file is damaged",
                          s->name, (unsigned)s->crc, (unsigned)s->want_crc);
    return EMBER_OK;
}

void npy_stream_close(struct npy_stream *s)
{
    if (s->z_open)
        inflateEnd(&s->z);
    free(s->in);
    if (s->f)
        fclose(s->f);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ arrays */

ember_status npy_read_header(struct npy_stream *s, struct npy_header *h)
{
    ember_ctx *ctx = s->ctx;
    const char *path = s->name;
    unsigned char lead[12];
    memset(h, 0, sizeof *h);
    if (s->left < 10 || npy_stream_read(s, lead, 10) != EMBER_OK || memcmp(lead, NPY_MAGIC, 6) != 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s is not a NumPy .npy file (it does not start with \\x93NUMPY); "
                          "write it with numpy.save",
                          path);
    int version = lead[6];
    uint64_t header_len = (uint64_t)lead[8] | (uint64_t)lead[9] << 8;
    if (version >= 2) {
        if (npy_stream_read(s, lead + 10, 2) != EMBER_OK)
            return ember_last_status(ctx);
        header_len |= (uint64_t)lead[10] << 16 | (uint64_t)lead[11] << 24;
    }
    if (version < 1 || version > 3 || header_len > NPY_MAX_HEADER || header_len > s->left)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: .npy version %d with a %llu-byte header is not one ember reads", path, version,
                          (unsigned long long)header_len);
    char *header = ember_host_alloc(ctx, header_len + 1);
    if (!header)
        return EMBER_ERR_NOMEM;
    ember_status st = npy_stream_read(s, header, header_len);
    if (st != EMBER_OK) {
        free(header);
        return st;
    }
    header[header_len] = '\0';
    /* a NUL would end the header for the parser early, and a key given
     * twice has two meanings: NumPy writes neither, so neither is guessed at */
    const char *twice = NULL;
    static const char *const keys[] = {"descr", "fortran_order", "shape"};
    for (int i = 0; i < 3 && !twice; i++) {
        const char *first = header_value(header, keys[i]);
        if (first && header_value(first, keys[i]))
            twice = keys[i];
    }
    if (memchr(header, '\0', header_len) || twice) {
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: its header %s%s%s; write it with numpy.save", path,
                        twice ? "gives '" : "holds a NUL byte", twice ? twice : "", twice ? "' twice" : "");
        free(header);
        return st;
    }
    const char *descr = header_value(header, "descr"), *order = header_value(header, "fortran_order");
    const char *shape_text = header_value(header, "shape");
    static const struct {
        const char *descr;
        int kind;
    } types[] = {{"'|u1'", NPY_UINT8},     {"'<f4'", EMBER_NUM_F32}, {"'<f8'", EMBER_NUM_F64},
                 {"'<f2'", EMBER_NUM_F16}, {"'<i8'", EMBER_NUM_I64}, {"'<i4'", EMBER_NUM_I32}};
    int type = -1;
    for (int i = 0; descr && i < (int)(sizeof types / sizeof types[0]); i++)
        if (strncmp(descr, types[i].descr, strlen(types[i].descr)) == 0)
            type = i;
    if (type < 0) {
        char shown[16] = "?";
        if (descr)
            snprintf(shown, sizeof shown, "%.*s", (int)strcspn(descr, ",}"), descr);
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s holds dtype %s; ember reads uint8, float16, float32, float64, int32 "
                        "and int64, little-endian (convert with array.astype(numpy.float32))",
                        path, shown);
    } else if (!order || strncmp(order, "False", 5) != 0) {
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s is in Fortran order; save numpy.ascontiguousarray(array) instead", path);
    } else if (!shape_text || !parse_shape(shape_text, &h->ndim, h->shape)) {
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: its header's shape is not one of up to %d whole numbers",
                        path, EMBER_MAX_DIMS);
    }
    free(header);
    if (st != EMBER_OK)
        return st;
    h->kind = types[type].kind;
    h->width = h->kind == NPY_UINT8 ? 1 : ember_convert_width((enum ember_num_kind)h->kind);
    bool overflow = false;
    h->numel = 1;
    for (int i = 0; i < h->ndim; i++)
        overflow |= __builtin_mul_overflow(h->numel, (uint64_t)h->shape[i], &h->numel);
    if (overflow || h->numel > s->left / h->width || h->numel * h->width != s->left)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: its shape needs %llu bytes of data but the file holds %llu after "
                          "its header",
                          path, overflow ? 0ull : (unsigned long long)(h->numel * h->width),
                          (unsigned long long)s->left);
    return EMBER_OK;
}

ember_status npy_read_values(struct npy_stream *s, const struct npy_header *h, float *floats, uint8_t *bytes)
{
    enum { CHUNK = 16384 }; /* elements converted at a time */
    unsigned char *raw = ember_host_alloc(s->ctx, CHUNK * 8);
    if (!raw)
        return EMBER_ERR_NOMEM;
    ember_status st = EMBER_OK;
    for (uint64_t at = 0; at < h->numel && st == EMBER_OK; at += CHUNK) {
        size_t n = h->numel - at < CHUNK ? (size_t)(h->numel - at) : CHUNK, bad = 0;
        if (h->kind == NPY_UINT8 && bytes) {
            st = npy_stream_read(s, bytes + at, n);
            continue;
        }
        if ((st = npy_stream_read(s, raw, n * h->width)) != EMBER_OK)
            break;
        if (h->kind == NPY_UINT8) {
            for (size_t i = 0; i < n; i++)
                floats[at + i] = (float)raw[i];
        } else if (!ember_convert_to_f32((enum ember_num_kind)h->kind, raw, n, floats + at, &bad)) {
            st = ember_fail(s->ctx, EMBER_ERR_FORMAT,
                            "%s holds at index %llu a value float32 cannot hold (NaN, an "
                            "infinity, a double beyond its range or an integer past 2^24)",
                            s->name, (unsigned long long)(at + bad));
        }
    }
    free(raw);
    return st;
}

float *ember_npy_load(ember_ctx *ctx, const char *path, int *ndim, int64_t *shape, bool *bytes)
{
    if (!ctx)
        return NULL;
    if (!path || !ndim || !shape) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_npy_load: NULL %s", !path ? "path" : "shape");
        return NULL;
    }
    struct npy_stream s;
    struct npy_header h;
    float *values = NULL;
    if (npy_open_file(ctx, path, &s) == EMBER_OK && npy_read_header(&s, &h) == EMBER_OK &&
        (values = ember_host_alloc(ctx, (size_t)h.numel * sizeof *values + 1)) &&
        (npy_read_values(&s, &h, values, NULL) != EMBER_OK || npy_stream_end(&s) != EMBER_OK)) {
        free(values);
        values = NULL;
    }
    npy_stream_close(&s);
    if (values) {
        *ndim = h.ndim;
        memcpy(shape, h.shape, (size_t)h.ndim * sizeof *shape);
        if (bytes)
            *bytes = h.kind == NPY_UINT8;
    }
    return values;
}

ember_status ember_npy_save(ember_ctx *ctx, const char *path, const float *values, int ndim,
                            const int64_t *shape)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!path || !values || ndim < 0 || ndim > EMBER_MAX_DIMS || (ndim && !shape))
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_npy_save: a NULL argument or %d dimensions", ndim);
    char header[256];
    int at = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        at += snprintf(header + at, sizeof header - (size_t)at, "%lld%s", (long long)shape[i],
                       ndim == 1 || i + 1 < ndim ? ", " : "");
        numel *= shape[i];
    }
    at += snprintf(header + at, sizeof header - (size_t)at, "), }");
    /* spaces and a newline up to a multiple of 64 bytes, magic and lengths included */
    int total = (10 + at + 1 + 63) / 64 * 64;
    while (10 + at + 1 < total)
        header[at++] = ' ';
    header[at++] = '\n';
    unsigned char lead[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)at, (unsigned char)(at >> 8)};
    FILE *f = fopen(path, "wb");
    if (!f)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    bool ok = fwrite(lead, 1, 10, f) == 10 && fwrite(header, 1, (size_t)at, f) == (size_t)at;
    for (int64_t i = 0; ok && i < numel; i++) {
        uint32_t u;
        memcpy(&u, &values[i], 4);
        unsigned char le[4] = {(unsigned char)u, (unsigned char)(u >> 8), (unsigned char)(u >> 16),
                               (unsigned char)(u >> 24)};
        ok = fwrite(le, 1, 4, f) == 4;
    }
    if (fclose(f) != 0 || !ok)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return EMBER_OK;
}
