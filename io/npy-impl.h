/* SPDX-License-Identifier: MIT */
/*
 * io/npy-impl.h — NumPy arrays read as a stream of bytes, from a .npy file
 * (npy.c) or from an entry of a .npz archive (npz.c: a zip of .npy files,
 * stored or deflated), so that a data set's array goes straight to its
 * place in memory without a second copy of the file.
 *
 *     struct npy_stream s;
 *     struct npy_header h;
 *     if (npy_open_file(ctx, "x_train.npy", &s) == EMBER_OK &&
 *         npy_read_header(&s, &h) == EMBER_OK && ...allocate h.numel values...
 *         npy_read_values(&s, &h, floats, NULL) == EMBER_OK && npy_stream_end(&s) == EMBER_OK)
 *         ...
 *     npy_stream_close(&s);
 *
 * Both are untrusted input (docs/design.md decision 7): the header's shape
 * must account for exactly the bytes the file (or the archive's entry)
 * holds, which is known before anything is allocated; an archive's entry
 * is checked against its CRC-32 and its declared sizes, and inflating
 * stops at the size declared, which deflate's densest packing bounds
 * (npz.c), so a small file cannot become a large allocation. Every
 * failure names the file (and the entry).
 */
#ifndef EMBER_NPY_IMPL_H
#define EMBER_NPY_IMPL_H

#include <stdio.h>
#include <zlib.h>

#include "engine.h"
#include "read-file-impl.h"

struct npy_stream {
    ember_ctx *ctx;
    char name[600]; /* "dir/x_train.npy", or "data.npz: x_train.npy" */
    FILE *f;
    uint64_t left; /* bytes of the array's file not yet read */
    /* an archive's entry: its CRC-32, and for a deflated one, zlib's state */
    bool zip, deflated, z_open;
    uint32_t crc, want_crc;
    uint64_t packed_left; /* compressed bytes not yet given to zlib */
    z_stream z;
    unsigned char *in; /* compressed input, NPY_STREAM_CHUNK bytes */
};
#define NPY_STREAM_CHUNK 65536

/* A .npy file's header: the dtype (EMBER_NUM_*, or NPY_UINT8), the shape
 * and its number of elements. */
#define NPY_UINT8 (-1)
struct npy_header {
    int kind;
    size_t width; /* bytes per element */
    int ndim;
    int64_t shape[EMBER_MAX_DIMS];
    uint64_t numel;
};

/* A .npy file as a stream. */
ember_status npy_open_file(ember_ctx *ctx, const char *path, struct npy_stream *s);
/* The entry `entry` ("x_train.npy") of the .npz archive `path` as a
 * stream; *found (may be NULL) false and EMBER_ERR_FORMAT naming the
 * entries there when it has none of that name. */
ember_status npz_open_entry(ember_ctx *ctx, const char *path, const char *entry, struct npy_stream *s,
                            bool *found);
/* Exactly n bytes; reading past the end is an error naming the file. */
ember_status npy_stream_read(struct npy_stream *s, void *dst, size_t n);
/* After the last value: an archive's entry must have ended there and
 * match its CRC-32. */
ember_status npy_stream_end(struct npy_stream *s);
void npy_stream_close(struct npy_stream *s);

/* The header, checked: a dtype ember reads, C order, and a shape whose
 * values are exactly the bytes left in the stream. */
ember_status npy_read_header(struct npy_stream *s, struct npy_header *h);
/* Every value, as floats (each checked as ember_convert_to_f32 checks it)
 * into `floats`, or for uint8 as they are into `bytes` when it is not NULL
 * (else as floats 0 to 255). */
ember_status npy_read_values(struct npy_stream *s, const struct npy_header *h, float *floats, uint8_t *bytes);

#endif /* EMBER_NPY_IMPL_H */
