/* SPDX-License-Identifier: MIT */
/*
 * core/npy.c — NumPy's .npy files, read and written (ember_npy_load,
 * ember_npy_save in ember.h; docs/interop.md).
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
 * allocated.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert-impl.h"
#include "ctx-impl.h"

#define NPY_MAGIC "\x93NUMPY"
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

float *ember_npy_load(ember_ctx *ctx, const char *path, int *ndim, int64_t *shape, bool *bytes)
{
    if (!ctx)
        return NULL;
    if (!path || !ndim || !shape) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_npy_load: NULL %s", !path ? "path" : "shape");
        return NULL;
    }
    struct stat info;
    FILE *f = ember_fopen_regular(ctx, path, &info);
    if (!f)
        return NULL;
    float *values = NULL;
    unsigned char *raw = NULL;
    char *header = NULL;
    unsigned char lead[12];
    uint64_t size = (uint64_t)info.st_size;
    if (size < 10 || fread(lead, 1, 10, f) != 10 || memcmp(lead, NPY_MAGIC, 6) != 0) {
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s is not a NumPy .npy file (it does not start with \\x93NUMPY); "
                   "write it with numpy.save", path);
        goto done;
    }
    int version = lead[6];
    uint64_t header_len = (uint64_t)lead[8] | (uint64_t)lead[9] << 8, start = 10;
    if (version >= 2) {
        if (size < 12 || fread(lead + 10, 1, 2, f) != 2) {
            ember_fail(ctx, EMBER_ERR_FORMAT, "%s: cut short in its header", path);
            goto done;
        }
        header_len |= (uint64_t)lead[10] << 16 | (uint64_t)lead[11] << 24;
        start = 12;
    }
    if (version < 1 || version > 3 || header_len > NPY_MAX_HEADER || start + header_len > size) {
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s: .npy version %d with a %llu-byte header is not one ember reads", path,
                   version, (unsigned long long)header_len);
        goto done;
    }
    if (!(header = ember_host_alloc(ctx, header_len + 1)) || fread(header, 1, header_len, f) != header_len) {
        if (header)
            ember_fail(ctx, EMBER_ERR_IO, "cannot read %s", path);
        goto done;
    }
    header[header_len] = '\0';
    const char *descr = header_value(header, "descr"), *order = header_value(header, "fortran_order");
    const char *shape_text = header_value(header, "shape");
    static const struct {
        const char *descr;
        int kind; /* enum ember_num_kind, or -1 for bytes */
    } types[] = {{"'|u1'", -1}, {"'<f4'", EMBER_NUM_F32}, {"'<f8'", EMBER_NUM_F64}, {"'<f2'", EMBER_NUM_F16},
                 {"'<i8'", EMBER_NUM_I64}, {"'<i4'", EMBER_NUM_I32}};
    int type = -1;
    for (int i = 0; descr && i < (int)(sizeof types / sizeof types[0]); i++)
        if (strncmp(descr, types[i].descr, strlen(types[i].descr)) == 0)
            type = i;
    if (type < 0) {
        char shown[16] = "?";
        if (descr)
            snprintf(shown, sizeof shown, "%.*s", (int)strcspn(descr, ",}"), descr);
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s holds dtype %s; ember reads uint8, float16, float32, float64, int32 and "
                   "int64, little-endian (convert with array.astype(numpy.float32))", path, shown);
        goto done;
    }
    if (!order || strncmp(order, "False", 5) != 0) {
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s is in Fortran order; save numpy.ascontiguousarray(array) instead", path);
        goto done;
    }
    if (!shape_text || !parse_shape(shape_text, ndim, shape)) {
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s: its header's shape is not one of up to %d whole numbers", path,
                   EMBER_MAX_DIMS);
        goto done;
    }
    int kind = types[type].kind;
    size_t width = kind < 0 ? 1 : ember_convert_width((enum ember_num_kind)kind);
    uint64_t numel = 1;
    bool overflow = false;
    for (int i = 0; i < *ndim; i++)
        overflow |= __builtin_mul_overflow(numel, (uint64_t)shape[i], &numel);
    if (overflow || numel > (size - start - header_len) / width || numel * width != size - start - header_len) {
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s: its shape needs %llu bytes of data but the file holds %llu after its "
                   "header", path, (unsigned long long)(numel * width), (unsigned long long)(size - start - header_len));
        goto done;
    }
    if (!(raw = ember_host_alloc(ctx, (size_t)(numel * width) + 1)) ||
        !(values = ember_host_alloc(ctx, (size_t)numel * sizeof *values + 1)))
        goto done;
    if (fread(raw, width, (size_t)numel, f) != numel) {
        ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", path, ferror(f) ? strerror(errno) : "it ended early");
        free(values);
        values = NULL;
        goto done;
    }
    size_t bad;
    if (kind < 0) {
        for (uint64_t i = 0; i < numel; i++)
            values[i] = (float)raw[i];
    } else if (!ember_convert_to_f32((enum ember_num_kind)kind, raw, (size_t)numel, values, &bad)) {
        ember_fail(ctx, EMBER_ERR_FORMAT, "%s holds at index %zu a value float32 cannot hold (NaN, an infinity, a "
                   "double beyond its range or an integer past 2^24)", path, bad);
        free(values);
        values = NULL;
        goto done;
    }
    if (bytes)
        *bytes = kind < 0;
done:
    free(raw);
    free(header);
    fclose(f);
    return values;
}

ember_status ember_npy_save(ember_ctx *ctx, const char *path, const float *values, int ndim, const int64_t *shape)
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
    unsigned char lead[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)at, (unsigned char)(at >> 8)};
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
