/* SPDX-License-Identifier: MIT */
/*
 * io/gguf-impl.h — GGUF files, the format llama.cpp and ollama keep
 * language models in: metadata, then a table of tensors, then their data.
 *
 * A GGUF file (versions 2 and 3; all numbers little-endian) is
 *
 *     "GGUF"  version u32  tensor_count u64  kv_count u64
 *     kv_count of:      key (string)  type u32  value
 *     tensor_count of:  name (string)  n_dims u32  dims u64 x n_dims  type u32  offset u64
 *     padding to `general.alignment` (32 unless a u32 key says otherwise)
 *     the data section: each tensor at its offset from here, aligned
 *
 * A string is a u64 length and that many bytes (no NUL). A value's type is
 * one of u8 i8 u16 i16 u32 i32 f32 bool string array u64 i64 f64; an array
 * is its element type (u32), a u64 count and the elements. A tensor's dims
 * run innermost first (ggml's ne[0] is a row's length), so the matrix
 * ggml calls (ne0, ne1) is (ne1, ne0) row-major: gguf_tensor.shape has it
 * the row-major way round. Its type is one of ggml's (F32 0, F16 1, Q4_0 2,
 * Q4_1 3, Q8_0 8, Q4_K 12, Q6_K 14, BF16 30 are read; backends/quant.h has
 * the block layouts); any other type is refused by its name.
 *
 * The file is mapped, not copied, where the platform can (base/platform.h):
 * a model's weights are read from disk as they are first used and cost no
 * second copy in memory. The reader treats every file as hostile: every
 * count and length is checked against the bytes left before anything is
 * allocated for it, counts are capped (GGUF_MAX_*), arrays nest at most
 * GGUF_MAX_DEPTH deep, a bool is 0 or 1, keys and tensor names are unique
 * and non-empty, every dimension is at least 1 and their product fits,
 * a quantised row is a whole number of blocks, and each tensor's data lies
 * inside the data section, aligned, overlapping no other. On any failure
 * nothing is held and the message says what and at which byte.
 *
 *     struct gguf_file f;
 *     if (gguf_open(ctx, "model.gguf", &f) != EMBER_OK)
 *         return ember_last_status(ctx);
 *     int64_t blocks;
 *     if (gguf_get_int(ctx, &f, "llama.block_count", 1, 1024, &blocks) != EMBER_OK) ...
 *     const struct gguf_tensor *t = gguf_tensor_find(&f, "output_norm.weight");
 *     float *w = malloc(t->numel * sizeof *w);
 *     gguf_tensor_to_f32(ctx, &f, t, w);       // any readable type, dequantised
 *     gguf_close(&f);
 */
#ifndef EMBER_GGUF_IMPL_H
#define EMBER_GGUF_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#define GGUF_MAX_KV      65536      /* metadata keys */
#define GGUF_MAX_TENSORS 65536      /* tensors in one file */
#define GGUF_MAX_ARRAY   (1u << 24) /* elements in one array (a vocabulary's tokens, its merges) */
#define GGUF_MAX_STRING  (1u << 24) /* bytes in one string (a chat template) */
#define GGUF_MAX_NAME    256        /* bytes in a key or a tensor's name */
#define GGUF_MAX_DIMS    4
#define GGUF_MAX_DEPTH   4 /* arrays of arrays */
#define GGUF_MAX_NUMEL   ((int64_t)1 << 40)

enum gguf_type {
    GGUF_U8,
    GGUF_I8,
    GGUF_U16,
    GGUF_I16,
    GGUF_U32,
    GGUF_I32,
    GGUF_F32,
    GGUF_BOOL,
    GGUF_STRING,
    GGUF_ARRAY,
    GGUF_U64,
    GGUF_I64,
    GGUF_F64,
    GGUF_TYPE_COUNT
};

/* a string inside the file: not NUL-terminated */
struct gguf_string {
    const char *data;
    uint64_t len;
};

struct gguf_kv {
    struct gguf_string key;
    enum gguf_type type; /* GGUF_ARRAY: item_type says of what */
    enum gguf_type item_type;
    uint64_t count;              /* an array's elements */
    const uint8_t *value;        /* the value, or the array's first element, in the file */
    struct gguf_string *strings; /* an array of strings: its elements, found at open */
};

struct gguf_tensor {
    struct gguf_string name;
    int ndim;
    int64_t shape[GGUF_MAX_DIMS]; /* row-major: ggml's dims reversed */
    int64_t numel;
    uint32_t type;          /* ggml's type number */
    uint64_t offset, bytes; /* in the data section */
    const uint8_t *data;
};

struct gguf_file {
    const uint8_t *data; /* the whole file: mapped, or read into `copy` */
    size_t size;
    bool mapped;
    void *copy;
    uint32_t version;
    uint64_t alignment, data_offset;
    int64_t kv_count, tensor_count;
    struct gguf_kv *kvs;
    struct gguf_tensor *tensors;
};

/* Opens and checks a whole file (mapped where the platform can); on
 * failure f is zeroed and holds nothing. */
ember_status gguf_open(ember_ctx *ctx, const char *path, struct gguf_file *f);
/* The same over bytes in memory, which must outlive f (the fuzz harness). */
ember_status gguf_open_memory(ember_ctx *ctx, const void *data, size_t size, struct gguf_file *f);
void gguf_close(struct gguf_file *f);

const struct gguf_kv *gguf_find(const struct gguf_file *f, const char *key);
const struct gguf_tensor *gguf_tensor_find(const struct gguf_file *f, const char *name);
/* "u32", "string", "array of string", ... */
const char *gguf_type_name(enum gguf_type type);
/* "Q4_K" for 12, ...; "type 99" for a number ggml has no name for (buf) */
const char *gguf_tensor_type_name(uint32_t type, char *buf, size_t len);

/* Typed metadata. Each fails with EMBER_ERR_FORMAT naming the key when it
 * is missing (the _or forms give the default instead), of another type, or
 * outside [lo, hi]. Any integer type is an integer; f32 and f64 are floats. */
ember_status gguf_get_int(ember_ctx *ctx, const struct gguf_file *f, const char *key, int64_t lo, int64_t hi,
                          int64_t *value);
ember_status gguf_get_int_or(ember_ctx *ctx, const struct gguf_file *f, const char *key, int64_t lo,
                             int64_t hi, int64_t fallback, int64_t *value);
ember_status gguf_get_float_or(ember_ctx *ctx, const struct gguf_file *f, const char *key, double fallback,
                               double *value);
ember_status gguf_get_bool_or(ember_ctx *ctx, const struct gguf_file *f, const char *key, bool fallback,
                              bool *value);
/* a string value; NULL data (and no error) when missing */
ember_status gguf_get_string(ember_ctx *ctx, const struct gguf_file *f, const char *key,
                             struct gguf_string *value);
/* an array's element i as an integer or float (any numeric item type) */
int64_t gguf_array_int(const struct gguf_kv *kv, uint64_t i);
double gguf_array_float(const struct gguf_kv *kv, uint64_t i);

/* Says a tensor's data has been copied out and will not be read again:
 * a mapped file's pages of it may leave memory (a model's weights then
 * take their memory once, on the device, not twice while loading). */
void gguf_tensor_done(const struct gguf_file *f, const struct gguf_tensor *t);

/* The dtype a tensor is kept in once loaded: F32 for F32, F16 and BF16
 * (converted), the quantised dtype for Q4_0, Q4_1, Q8_0, Q4_K and Q6_K. */
ember_dtype gguf_tensor_dtype(const struct gguf_tensor *t);
/* All numel values as floats, dequantised exactly as the `gguf` Python
 * package does. */
ember_status gguf_tensor_to_f32(ember_ctx *ctx, const struct gguf_tensor *t, float *out);

#endif /* EMBER_GGUF_IMPL_H */
