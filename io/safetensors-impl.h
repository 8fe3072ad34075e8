/* SPDX-License-Identifier: MIT */
/*
 * io/safetensors-impl.h — reading and writing safetensors files.
 *
 * The format is Hugging Face's safetensors, as its reference implementation
 * reads and writes it:
 *
 *     N (u64, little-endian) | N bytes of UTF-8 JSON | the data section
 *
 * The JSON is one object. Every key but one is a tensor name, mapped to
 *
 *     {"dtype": "F32", "shape": [16, 1, 3, 3], "data_offsets": [begin, end]}
 *
 * with byte offsets into the data section (end exclusive); the optional key
 * "__metadata__" maps to an object of string values. Data are row-major and
 * little-endian. Writers pad the JSON with spaces so that the data section
 * starts on a multiple of 8 bytes.
 *
 * This file knows nothing of parameter sets: it reads a header into a list of
 * entries and copies an entry's bytes out, and it writes F32 host arrays.
 * io/checkpoint.c builds ember_params_save and ember_params_load on it.
 *
 * The reader treats every file as hostile, and checks each number in it
 * against the file's real size before allocating anything for it. It refuses
 *   - a header length of 0, over EMBER_SAFETENSORS_MAX_HEADER, or past the
 *     end of the file;
 *   - JSON outside the subset above (its own small parser): duplicate keys,
 *     unknown fields, bytes after the object, invalid UTF-8, lone surrogates,
 *     "\u0000", numbers that are negative, fractional or over 2^64 - 1;
 *   - an unknown dtype, more than EMBER_SAFETENSORS_MAX_DIMS dimensions, a
 *     byte size (shape product times dtype width) that overflows or differs
 *     from end - begin;
 *   - offsets that do not tile the data section exactly: sorted by begin,
 *     the first tensor starts at 0, each starts where the one before ended,
 *     the last ends at the end of the file. The reference implementation asks
 *     the same, so no bytes hide in a file and no two tensors share any.
 *
 *     struct ember_safetensors st;
 *     if (ember_safetensors_open(ctx, path, &st) != EMBER_OK)
 *         return ember_last_status(ctx);          // the message names the problem
 *     const struct ember_safetensors_entry *e = ember_safetensors_find(&st, "fc.bias");
 *     if (e && strcmp(e->dtype, "F32") == 0)
 *         status = ember_safetensors_read_f32(ctx, &st, e, values);   // (end - begin) / 4 floats
 *     ember_safetensors_close(&st);
 *
 *     const int64_t shape[1] = {10};
 *     struct ember_safetensors_tensor t = {.name = "fc.bias", .ndim = 1, .shape = shape, .values = bias};
 *     const char *const meta[] = {"format", "pt", NULL};
 *     status = ember_safetensors_save(ctx, "net.safetensors", &t, 1, meta);
 */
#ifndef EMBER_SAFETENSORS_IMPL_H
#define EMBER_SAFETENSORS_IMPL_H

#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "read-file-impl.h"

/* The largest JSON header accepted, in bytes: the reference implementation's
 * limit. Real headers are kilobytes. */
#define EMBER_SAFETENSORS_MAX_HEADER 100000000u
/* The most dimensions an entry may have. */
#define EMBER_SAFETENSORS_MAX_DIMS 16

/* One tensor as the header describes it. */
struct ember_safetensors_entry {
    char *name;     /* UTF-8, without NUL bytes */
    char dtype[16]; /* as written: "F32", "BF16", ... (known dtypes only) */
    int ndim;
    uint64_t shape[EMBER_SAFETENSORS_MAX_DIMS];
    uint64_t begin, end; /* bytes into the data section, end exclusive */
};

/* One "__metadata__" pair. */
struct ember_safetensors_meta {
    char *key, *value; /* UTF-8, without NUL bytes */
};

/* An open, fully checked file. */
struct ember_safetensors {
    FILE *file;
    char *path;                              /* for messages */
    uint64_t data_start;                     /* 8 + N: where the data section starts in the file */
    uint64_t data_bytes;                     /* the data section's length: the rest of the file */
    struct ember_safetensors_entry *entries; /* in the header's order */
    int count;
    struct ember_safetensors_meta *meta; /* sorted by key */
    int meta_count;
    struct ember_safetensors_entry **by_name; /* entries sorted by name, for find */
    void *memory;                             /* opened from memory: the copy `file` reads */
};

/* Opens `path` and checks all of its header (the list above); the data are
 * read later, entry by entry. The status is EMBER_ERR_IO when the file cannot
 * be opened or read and EMBER_ERR_FORMAT when it is not a well-formed
 * safetensors file, with the path in the message. On failure nothing is held
 * (closing *st anyway is harmless). */
ember_status ember_safetensors_open(ember_ctx *ctx, const char *path, struct ember_safetensors *st);
void ember_safetensors_close(struct ember_safetensors *st);
/* The same for `size` bytes at `data`, which are copied (a checkpoint held
 * in memory); `what` names it in messages. */
ember_status ember_safetensors_open_memory(ember_ctx *ctx, const char *what, const void *data, size_t size,
                                           struct ember_safetensors *st);

/* Parses and checks a header held in memory: `json` is the N bytes after the
 * length, `data_bytes` the length of the data section that follows them.
 * `what` names the source in messages. ember_safetensors_open calls it; tests
 * and fuzzers may too. On success st->file and st->path are NULL (there is
 * nothing to read from), and ember_safetensors_close frees the rest; on
 * failure nothing is held. */
ember_status ember_safetensors_parse(ember_ctx *ctx, const char *what, const unsigned char *json, size_t len,
                                     uint64_t data_bytes, struct ember_safetensors *st);

/* The entry called `name`, or NULL. */
const struct ember_safetensors_entry *ember_safetensors_find(const struct ember_safetensors *st,
                                                             const char *name);
/* The metadata value under `key`, or NULL. */
const char *ember_safetensors_meta_get(const struct ember_safetensors *st, const char *key);
/* "(16, 1, 3, 3)" into buf, for messages */
const char *ember_safetensors_shape_str(const struct ember_safetensors_entry *e, char *buf, size_t len);

/* Reads an F32 entry of an open file into `values` ((end - begin) / 4
 * floats, in the host's byte order). A NaN or an infinity is
 * EMBER_ERR_FORMAT naming the tensor: everything ember loads is a model's
 * or an optimizer's state, where such a value means a run that diverged or
 * a damaged file, and loading it would only make every answer wrong. */
ember_status ember_safetensors_read_f32(ember_ctx *ctx, const struct ember_safetensors *st,
                                        const struct ember_safetensors_entry *e, float *values);

/* Whether ember reads entries of `dtype` as float32 (F32, F16, BF16, F64,
 * I64, I32: what PyTorch's state_dicts hold), and reads one so
 * (io/safetensors-convert.c): (end - begin) / width floats into `values`.
 * A value float32 cannot hold (an integer past 2^24, a double past its
 * range, NaN, an infinity) is EMBER_ERR_FORMAT naming the tensor and index. */
bool ember_safetensors_convertible(const char *dtype);
ember_status ember_safetensors_read_as_f32(ember_ctx *ctx, const struct ember_safetensors *st,
                                           const struct ember_safetensors_entry *e, float *values);

/* One tensor to write: F32 values in host memory, in the host's byte order. */
struct ember_safetensors_tensor {
    const char *name;     /* UTF-8, unique, not "__metadata__" */
    int ndim;             /* 0 to EMBER_SAFETENSORS_MAX_DIMS */
    const int64_t *shape; /* (ndim) */
    const float *values;  /* (shape...) */
};

/* Writes the tensors to `path`, back to back in the order given, with
 * `metadata` (NULL or a NULL-terminated list of key, value, key, value ...
 * strings) under "__metadata__". The file appears whole or not at all: it is
 * written to path.tmp.XXXXXX in the same folder, flushed, fsynced and renamed
 * over `path`, and the folder is fsynced; it keeps the mode of the file it
 * replaces (a new one gets 0644). Bad names or metadata (not UTF-8,
 * repeated) are EMBER_ERR_ARG; any failure to write is EMBER_ERR_IO naming the
 * path and the system's reason, and leaves no temporary file behind. */
ember_status ember_safetensors_save(ember_ctx *ctx, const char *path,
                                    const struct ember_safetensors_tensor *tensors, int count,
                                    const char *const *metadata);

/* The same file's bytes into a buffer to free(), *size long. */
ember_status ember_safetensors_save_memory(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors,
                                           int count, const char *const *metadata, void **data, size_t *size);

/* Matching a file's tensors to a parameter set (checkpoint.c,
 * checkpoint-init.c): the problems found, gathered into one message as
 * PyTorch's strict load_state_dict gathers them ("missing fc.weight (10,
 * 784); size mismatch for ..."), and whether an entry has a tensor's shape. */
struct ember_mismatch {
    char text[3072];
    size_t len;
    int count;
};
void ember_mismatch_note(struct ember_mismatch *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A hint for a file whose names all begin with "module.", as PyTorch's
 * nn.DataParallel and DistributedDataParallel save them, or "" otherwise:
 * appended to a mismatch's message. */
const char *ember_mismatch_hint(const struct ember_safetensors *st);
struct ember_tensor;
bool ember_entry_fits(const struct ember_tensor *t, const struct ember_safetensors_entry *e);

#endif /* EMBER_SAFETENSORS_IMPL_H */
