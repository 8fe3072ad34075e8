/* SPDX-License-Identifier: MIT */
/*
 * io/onnx-wire.c — protobuf's wire format, both ways, and reading a whole
 * file (io/onnx-impl.h describes the format).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx-impl.h"
#include "platform.h"

/* ---------------------------------------------------------------- reading */

bool pb_read_varint(struct pb_reader *r, uint64_t *v)
{
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) { /* ten bytes at most */
        if (r->at >= r->end)
            return false;
        uint8_t b = *r->at++;
        value |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = value;
            return true;
        }
    }
    return false;
}

bool pb_read_key(struct pb_reader *r, uint32_t *field, int *wire)
{
    uint64_t key;
    if (!pb_read_varint(r, &key) || key >> 32)
        return false;
    *field = (uint32_t)(key >> 3);
    *wire = (int)(key & 7);
    return *field != 0;
}

bool pb_read_bytes(struct pb_reader *r, struct pb_reader *inner)
{
    uint64_t len;
    if (!pb_read_varint(r, &len) || len > (uint64_t)(r->end - r->at))
        return false;
    inner->at = r->at;
    inner->end = r->at + len;
    r->at += len;
    return true;
}

static bool read_fixed(struct pb_reader *r, int bytes, uint64_t *v)
{
    if (r->end - r->at < bytes)
        return false;
    *v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        *v = *v << 8 | r->at[i];
    r->at += bytes;
    return true;
}

bool pb_read_fixed32(struct pb_reader *r, uint32_t *v)
{
    uint64_t wide;
    if (!read_fixed(r, 4, &wide))
        return false;
    *v = (uint32_t)wide;
    return true;
}

bool pb_read_fixed64(struct pb_reader *r, uint64_t *v) { return read_fixed(r, 8, v); }

bool pb_skip(struct pb_reader *r, int wire)
{
    uint64_t ignored;
    struct pb_reader inner;
    switch (wire) {
    case PB_VARINT: return pb_read_varint(r, &ignored);
    case PB_FIXED64: return read_fixed(r, 8, &ignored);
    case PB_BYTES: return pb_read_bytes(r, &inner);
    case PB_FIXED32: return read_fixed(r, 4, &ignored);
    default: return false; /* groups (3, 4) are long gone from protobuf; 6 and 7 never were */
    }
}

/* ---------------------------------------------------------------- writing */

static void put(struct pb_writer *w, const void *data, size_t len)
{
    if (w->failed)
        return;
    if (w->len + len > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + len)
            cap *= 2;
        uint8_t *grown = realloc(w->data, cap);
        if (!grown) {
            w->failed = true;
            return;
        }
        w->data = grown;
        w->cap = cap;
    }
    if (len)
        memcpy(w->data + w->len, data, len);
    w->len += len;
}

static void put_varint(struct pb_writer *w, uint64_t v)
{
    uint8_t bytes[10];
    int n = 0;
    do {
        bytes[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put(w, bytes, (size_t)n);
}

void pb_write_varint(struct pb_writer *w, uint32_t field, uint64_t v)
{
    put_varint(w, (uint64_t)field << 3 | PB_VARINT);
    put_varint(w, v);
}

void pb_write_bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len)
{
    put_varint(w, (uint64_t)field << 3 | PB_BYTES);
    put_varint(w, len);
    put(w, data, len);
}

void pb_write_string(struct pb_writer *w, uint32_t field, const char *s)
{
    pb_write_bytes(w, field, s, strlen(s));
}

void pb_write_float(struct pb_writer *w, uint32_t field, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    put_varint(w, (uint64_t)field << 3 | PB_FIXED32);
    put(w, b, 4);
}

void pb_write_message(struct pb_writer *w, uint32_t field, struct pb_writer *inner)
{
    w->failed |= inner->failed;
    pb_write_bytes(w, field, inner->data, inner->len);
    inner->len = 0;
    inner->failed = false;
}

void pb_writer_free(struct pb_writer *w)
{
    free(w->data);
    *w = (struct pb_writer){0};
}

/* ------------------------------------------------------------------ files */

ember_status onnx_file_slurp(ember_ctx *ctx, const char *path, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer */
    int fd = ember_open_no_wait(path, O_RDONLY);
    if (fd < 0)
        return ember_set_error(ctx, EMBER_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat info;
    ember_status st = EMBER_OK;
    uint8_t *buf = NULL;
    FILE *f = NULL;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || !(f = fdopen(fd, "rb"))) {
        close(fd);
        st = ember_set_error(ctx, EMBER_ERR_IO, "%s is not a regular file: ember reads only files", path);
    } else if ((uint64_t)info.st_size > ONNX_MAX_FILE) {
        st =
            ember_set_error(ctx, EMBER_ERR_FORMAT,
                            "%s is %lld bytes, over the 2 GiB that an ONNX file can be "
                            "(larger models keep their weights in external files, which ember does not read)",
                            path, (long long)info.st_size);
    } else if (!(buf = malloc((size_t)info.st_size + 1))) {
        st = ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", path);
    } else if (fread(buf, 1, (size_t)info.st_size, f) != (size_t)info.st_size) {
        st = ember_set_error(ctx, EMBER_ERR_IO, "cannot read %s: %s", path,
                             ferror(f) ? strerror(errno) : "it ended early");
    }
    if (f)
        fclose(f);
    if (st != EMBER_OK) {
        free(buf);
        return st;
    }
    *data = buf;
    *size = (size_t)info.st_size;
    return EMBER_OK;
}
