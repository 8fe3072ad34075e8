/* SPDX-License-Identifier: MIT */
/*
 * io/safetensors.c — a strict reader of safetensors files (the format, and
 * what the reader refuses: safetensors-impl.h): the file's sizes, its header
 * through safetensors-parse.c, and tensors read as float32. The writer is
 * safetensors-write.c.
 */
#define _FILE_OFFSET_BITS 64 /* files over 2 GB on 32-bit hosts too */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "safetensors-impl.h"

/* ------------------------------------------------------------ byte order */

/* The file is little-endian whatever the host. Going through bytes with
 * shifts is right on every host, so the one path every test runs is also
 * the big-endian path. */
static uint64_t load_le64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static void f32_from_le(float *values, size_t n)
{
    const unsigned char *b = (const unsigned char *)values;
    for (size_t i = 0; i < n; i++, b += 4) {
        uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        memcpy(&values[i], &u, 4);
    }
}

/* n host floats into little-endian bytes at out (4 n bytes) */
/* ------------------------------------------------------------------ files */

/* A short read after the sizes were checked means an error or a file that
 * changed under us. */
static ember_status read_failed(ember_ctx *ctx, FILE *f, const char *path)
{
    if (ferror(f))
        return ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    return ember_fail(ctx, EMBER_ERR_IO, "%s ended early: did it change while being read?", path);
}

/* What torch.save writes: a zip archive ("PK\3\4", PyTorch 1.6 on) or a
 * bare pickle (opcode PROTO 0x80, then protocol 2 to 5). A safetensors
 * file starts with its header's length instead: read from a zip's
 * signature that is at least 67 MB of JSON, which no checkpoint has; a
 * pickle's is taken for one only when the length is impossible anyway, so
 * a real header of 640 bytes (0x80 0x02) is still read. */
static bool is_torch_pickle(const unsigned char *b, uint64_t claimed, uint64_t size)
{
    bool absurd = claimed == 0 || claimed > size - 8 || claimed > EMBER_SAFETENSORS_MAX_HEADER;
    return (b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) ||
           (absurd && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5);
}

/* Reads and checks the header of an open stream of `size` bytes; on
 * success st holds the stream, else the caller closes it. */
static ember_status open_stream(ember_ctx *ctx, FILE *f, const char *path, uint64_t size,
                                struct ember_safetensors *st)
{
    unsigned char prefix[8], *json = NULL;
    ember_status status;
    if (size < 8)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s is %llu bytes, too short for a safetensors file "
                          "(it starts with an 8-byte header length)",
                          path, (unsigned long long)size);
    if (fread(prefix, 1, 8, f) != 8)
        return read_failed(ctx, f, path);
    uint64_t claimed = load_le64(prefix);
    if (is_torch_pickle(prefix, claimed, size))
        return ember_fail(
            ctx, EMBER_ERR_FORMAT,
            "%s is a PyTorch pickle (torch.save), which ember does not read: loading a pickle runs "
            "whatever code it holds. Save the state_dict as safetensors instead: python3 -c \"import "
            "torch, safetensors.torch as s; s.save_file(torch.load('%s', map_location='cpu'), "
            "'model.safetensors')\"",
            path, path);
    uint64_t n = load_le64(prefix);
    if (n == 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: the safetensors header length is 0 (even an empty header is \"{}\")", path);
    if (n > size - 8 || n > EMBER_SAFETENSORS_MAX_HEADER)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: the safetensors header length %llu is %s", path,
                          (unsigned long long)n,
                          n > size - 8 ? "past the end of the file (is it truncated, or not safetensors?)"
                                       : "over the 100 MB that readers accept");
    if (!(json = ember_host_alloc(ctx, (size_t)n)))
        return EMBER_ERR_NOMEM;
    if (fread(json, 1, (size_t)n, f) != n) {
        status = read_failed(ctx, f, path);
        goto free_json;
    }
    status = ember_safetensors_parse(ctx, path, json, (size_t)n, size - 8 - n, st);
    if (status != EMBER_OK)
        goto free_json;
    if (!(st->path = ember_host_strdup(ctx, path))) {
        status = EMBER_ERR_NOMEM;
        ember_safetensors_close(st);
        goto free_json;
    }
    st->file = f;
    st->data_start = 8 + n;
free_json:
    free(json);
    return status;
}

ember_status ember_safetensors_open(ember_ctx *ctx, const char *path, struct ember_safetensors *st)
{
    *st = (struct ember_safetensors){0};
    if (!path)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_safetensors_open: NULL path");
    struct stat info;
    FILE *f = ember_fopen_regular(ctx, path, &info);
    if (!f)
        return ember_last_status(ctx);
    ember_status status = open_stream(ctx, f, path, (uint64_t)info.st_size, st);
    if (status != EMBER_OK)
        fclose(f);
    return status;
}

ember_status ember_safetensors_open_memory(ember_ctx *ctx, const char *what, const void *data, size_t size,
                                           struct ember_safetensors *st)
{
    *st = (struct ember_safetensors){0};
    if (!data && size)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: NULL data of %zu bytes", what, size);
    if (size < 8) /* fmemopen refuses an empty buffer: say what is wrong first */
        return open_stream(ctx, NULL, what, size, st);
    /* a copy the stream owns: the caller's buffer may go as soon as we return */
    void *copy = ember_host_alloc(ctx, size);
    if (!copy)
        return EMBER_ERR_NOMEM;
    memcpy(copy, data, size);
    FILE *f = ember_memory_reader(copy, size);
    if (!f) {
        free(copy);
        return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: cannot open %zu bytes as a stream: %s", what, size,
                          strerror(errno));
    }
    ember_status status = open_stream(ctx, f, what, size, st);
    if (status != EMBER_OK) {
        fclose(f);
        free(copy);
        return status;
    }
    st->memory = copy;
    return EMBER_OK;
}

ember_status ember_safetensors_read_f32(ember_ctx *ctx, const struct ember_safetensors *st,
                                        const struct ember_safetensors_entry *e, float *values)
{
    uint64_t bytes = e->end - e->begin;
    if (strcmp(e->dtype, "F32") != 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" is %s, not F32", st->path, e->name,
                          e->dtype);
    if (bytes > SIZE_MAX)
        return ember_fail(ctx, EMBER_ERR_NOMEM, "%s: tensor \"%.200s\" does not fit in this host's memory",
                          st->path, e->name);
    if (bytes == 0)
        return EMBER_OK;
    if (fseeko(st->file, (off_t)(st->data_start + e->begin), SEEK_SET) != 0)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot seek in %s: %s", st->path, strerror(errno));
    if (fread(values, 1, (size_t)bytes, st->file) != bytes)
        return read_failed(ctx, st->file, st->path);
    f32_from_le(values, (size_t)(bytes / 4));
    for (size_t i = 0; i < (size_t)(bytes / 4); i++)
        if (!isfinite(values[i]))
            return ember_fail(
                ctx, EMBER_ERR_FORMAT,
                "%s: tensor \"%.200s\" holds %s at index %zu: the run that saved it had diverged, "
                "or the file is damaged; refusing to load it",
                st->path, e->name, isnan(values[i]) ? "NaN" : "an infinity", i);
    return EMBER_OK;
}
