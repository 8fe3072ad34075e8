/* SPDX-License-Identifier: MIT */
/* io/gguf.c — reading GGUF files: the header, metadata and tensor table
 * (the format and the checks are in gguf-impl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gguf-impl.h"
#include "platform.h"
#include "quant.h"
#include "read-file-impl.h"
#include "text-impl.h"

/* ------------------------------------------------------------- the cursor */

struct cursor {
    ember_ctx *ctx;
    const char *name; /* the file, for messages */
    const uint8_t *data;
    uint64_t size, at;
    bool failed;
};

static bool fail(struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(struct cursor *c, const char *fmt, ...)
{
    if (c->failed)
        return false;
    char what[384];
    EMBER_FORMAT_ARGS(what, fmt);
    ember_set_error(c->ctx, EMBER_ERR_FORMAT, "%s is not a GGUF file ember can read: %s (at byte %llu)",
                    c->name, what, (unsigned long long)c->at);
    c->failed = true;
    return false;
}

static bool take(struct cursor *c, uint64_t n, const uint8_t **p, const char *what)
{
    *p = c->data + c->at;
    if (c->failed)
        return false;
    if (n > c->size - c->at)
        return fail(c, "the file ends inside %s (%llu bytes wanted, %llu left)", what, (unsigned long long)n,
                    (unsigned long long)(c->size - c->at));
    *p = c->data + c->at;
    c->at += n;
    return true;
}

static uint64_t le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool u32(struct cursor *c, uint32_t *v, const char *what)
{
    const uint8_t *p;
    *v = 0;
    if (!take(c, 4, &p, what))
        return false;
    *v = (uint32_t)le(p, 4);
    return true;
}

static bool u64(struct cursor *c, uint64_t *v, const char *what)
{
    const uint8_t *p;
    *v = 0;
    if (!take(c, 8, &p, what))
        return false;
    *v = le(p, 8);
    return true;
}

static bool string(struct cursor *c, struct gguf_string *s, uint64_t max, const char *what)
{
    const uint8_t *p;
    if (!u64(c, &s->len, what))
        return false;
    if (s->len > max)
        return fail(c, "%s is %llu bytes long, over the %llu allowed", what, (unsigned long long)s->len,
                    (unsigned long long)max);
    if (!take(c, s->len, &p, what))
        return false;
    s->data = (const char *)p;
    return true;
}

/* ------------------------------------------------------------- metadata */

static const char *const type_names[GGUF_TYPE_COUNT] = {"u8",   "i8",     "u16",   "i16", "u32", "i32", "f32",
                                                        "bool", "string", "array", "u64", "i64", "f64"};
static const uint8_t type_bytes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_type_name(enum gguf_type type)
{
    return (unsigned)type < GGUF_TYPE_COUNT ? type_names[type] : "an unknown type";
}

static bool value_type(struct cursor *c, enum gguf_type *type, const char *key)
{
    uint32_t t;
    *type = GGUF_U8;
    if (!u32(c, &t, "a value's type"))
        return false;
    if (t >= GGUF_TYPE_COUNT)
        return fail(c, "key %s has value type %u, which GGUF does not define", key, t);
    *type = (enum gguf_type)t;
    return true;
}

/* Steps over one value of `type` (an array: its item type, count and
 * items), checking it; strings of an array go into `strings` when given. */
static bool value(struct cursor *c, enum gguf_type type, int depth, const char *key, struct gguf_kv *kv)
{
    const uint8_t *p;
    if (type == GGUF_STRING) {
        struct gguf_string s;
        return string(c, &s, GGUF_MAX_STRING, "a string value");
    }
    if (type == GGUF_BOOL) {
        if (!take(c, 1, &p, "a bool"))
            return false;
        return *p <= 1 || fail(c, "key %s holds a bool of %u, not 0 or 1", key, *p);
    }
    if (type != GGUF_ARRAY)
        return take(c, type_bytes[type], &p, "a number");
    if (depth >= GGUF_MAX_DEPTH)
        return fail(c, "key %s nests arrays more than %d deep", key, GGUF_MAX_DEPTH);
    enum gguf_type item;
    uint64_t count;
    if (!value_type(c, &item, key) || !u64(c, &count, "an array's length"))
        return false;
    /* every item takes a byte at least, so a count the file cannot hold is refused before any allocation */
    if (count > GGUF_MAX_ARRAY || count > c->size - c->at)
        return fail(c, "key %s is an array of %llu items, more than %s", key, (unsigned long long)count,
                    count > GGUF_MAX_ARRAY ? "ember allows" : "the file holds");
    if (kv) {
        kv->item_type = item;
        kv->count = count;
        kv->value = c->data + c->at;
    }
    if (item != GGUF_STRING && item != GGUF_ARRAY && item != GGUF_BOOL)
        return take(c, count * type_bytes[item], &p, "an array");
    if (kv && item == GGUF_STRING && count > 0) {
        kv->strings = malloc(count * sizeof *kv->strings);
        if (!kv->strings)
            return fail(c, "out of host memory for key %s's %llu strings", key, (unsigned long long)count);
    }
    for (uint64_t i = 0; i < count; i++) {
        if (kv && kv->strings) {
            if (!string(c, &kv->strings[i], GGUF_MAX_STRING, "a string in an array"))
                return false;
        } else if (!value(c, item, depth + 1, key, NULL))
            return false;
    }
    return true;
}

static int compare_names(const struct gguf_string *a, const struct gguf_string *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    int d = memcmp(a->data, b->data, n);
    return d ? d : (a->len > b->len) - (a->len < b->len);
}

static int compare_kv(const void *a, const void *b)
{
    return compare_names(&((const struct gguf_kv *)a)->key, &((const struct gguf_kv *)b)->key);
}

static int compare_tensor(const void *a, const void *b)
{
    return compare_names(&((const struct gguf_tensor *)a)->name, &((const struct gguf_tensor *)b)->name);
}

/* a key or name for messages: at most 64 bytes, printable */
static const char *shown(const struct gguf_string *s, char *buf, size_t len)
{
    size_t n = 0;
    for (uint64_t i = 0; i < s->len && n + 4 < len && i < 64; i++)
        buf[n++] = s->data[i] >= 0x20 && s->data[i] < 0x7f ? s->data[i] : '?';
    buf[n] = 0;
    return buf;
}

static bool read_kv(struct cursor *c, struct gguf_kv *kv)
{
    char key[80];
    if (!string(c, &kv->key, GGUF_MAX_NAME, "a key"))
        return false;
    if (kv->key.len == 0)
        return fail(c, "a key is empty");
    if (!value_type(c, &kv->type, shown(&kv->key, key, sizeof key)))
        return false;
    kv->value = c->data + c->at;
    return value(c, kv->type, 0, key, kv);
}

/* ---------------------------------------------------------------- tensors */

/* ggml's types this reader reads: its number, name, block (elements,
 * bytes) and the dtype it is kept in */
static const struct tensor_type {
    uint32_t id;
    const char *name;
    int64_t elements, bytes;
    ember_dtype dtype;
} tensor_types[] = {
    {0, "F32", 1, 4, EMBER_F32},        {1, "F16", 1, 2, EMBER_F32},     {2, "Q4_0", 32, 18, EMBER_Q4_0},
    {3, "Q4_1", 32, 20, EMBER_Q4_1},    {8, "Q8_0", 32, 34, EMBER_Q8_0}, {12, "Q4_K", 256, 144, EMBER_Q4_K},
    {14, "Q6_K", 256, 210, EMBER_Q6_K}, {30, "BF16", 1, 2, EMBER_F32},
};
/* the others ggml has, for a refusal that names them */
static const char *const other_types[] = {
    [6] = "Q5_0",   [7] = "Q5_1",     [9] = "Q8_1",    [10] = "Q2_K",    [11] = "Q3_K",  [13] = "Q5_K",
    [15] = "Q8_K",  [16] = "IQ2_XXS", [17] = "IQ2_XS", [18] = "IQ3_XXS", [19] = "IQ1_S", [20] = "IQ4_NL",
    [21] = "IQ3_S", [22] = "IQ2_S",   [23] = "IQ4_XS", [24] = "I8",      [25] = "I16",   [26] = "I32",
    [27] = "I64",   [28] = "F64",     [29] = "IQ1_M",  [34] = "TQ1_0",   [35] = "TQ2_0", [39] = "MXFP4"};

static const struct tensor_type *tensor_type(uint32_t id)
{
    for (size_t i = 0; i < sizeof tensor_types / sizeof tensor_types[0]; i++)
        if (tensor_types[i].id == id)
            return &tensor_types[i];
    return NULL;
}

const char *gguf_tensor_type_name(uint32_t type, char *buf, size_t len)
{
    const struct tensor_type *t = tensor_type(type);
    if (t)
        return t->name;
    if (type < sizeof other_types / sizeof other_types[0] && other_types[type])
        return other_types[type];
    snprintf(buf, len, "type %u", type);
    return buf;
}

static bool read_tensor(struct cursor *c, struct gguf_tensor *t)
{
    char name[80], tn[32];
    uint32_t ndim;
    if (!string(c, &t->name, GGUF_MAX_NAME, "a tensor's name"))
        return false;
    if (t->name.len == 0)
        return fail(c, "a tensor's name is empty");
    shown(&t->name, name, sizeof name);
    if (!u32(c, &ndim, "a tensor's dimension count"))
        return false;
    if (ndim < 1 || ndim > GGUF_MAX_DIMS)
        return fail(c, "tensor %s has %u dimensions; GGUF allows 1 to %d", name, ndim, GGUF_MAX_DIMS);
    t->ndim = (int)ndim;
    t->numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        uint64_t d;
        if (!u64(c, &d, "a tensor's dimension"))
            return false;
        if (d < 1 || d > (uint64_t)(GGUF_MAX_NUMEL / t->numel))
            return fail(c, "tensor %s's dimension %d is %llu: 0, or too many elements in all", name, i,
                        (unsigned long long)d);
        t->shape[t->ndim - 1 - i] = (int64_t)d; /* ggml's ne[0] is the innermost */
        t->numel *= (int64_t)d;
    }
    if (!u32(c, &t->type, "a tensor's type") || !u64(c, &t->offset, "a tensor's offset"))
        return false;
    const struct tensor_type *type = tensor_type(t->type);
    if (!type)
        return fail(c,
                    "tensor %s is of type %s, which ember does not read (it reads F32, F16, BF16, Q4_0, "
                    "Q4_1, Q8_0, Q4_K and Q6_K)",
                    name, gguf_tensor_type_name(t->type, tn, sizeof tn));
    if (t->shape[t->ndim - 1] % type->elements != 0)
        return fail(c, "tensor %s's rows of %lld are not a whole number of %s blocks of %lld", name,
                    (long long)t->shape[t->ndim - 1], type->name, (long long)type->elements);
    t->bytes = (uint64_t)(t->numel / type->elements * type->bytes);
    return true;
}

static int compare_offset(const void *a, const void *b)
{
    uint64_t x = (*(const struct gguf_tensor *const *)a)->offset,
             y = (*(const struct gguf_tensor *const *)b)->offset;
    return (x > y) - (x < y);
}

/* each tensor's data inside the data section, aligned, none overlapping */
static bool place_tensors(struct cursor *c, struct gguf_file *f)
{
    char name[80];
    uint64_t data_size = f->size - f->data_offset;
    struct gguf_tensor **order = malloc((size_t)(f->tensor_count ? f->tensor_count : 1) * sizeof *order);
    if (!order)
        return fail(c, "out of host memory for %lld tensors", (long long)f->tensor_count);
    for (int64_t i = 0; i < f->tensor_count; i++) {
        struct gguf_tensor *t = &f->tensors[i];
        order[i] = t;
        if (t->offset % f->alignment != 0 || t->offset > data_size || t->bytes > data_size - t->offset) {
            fail(c, "tensor %s's %llu bytes at offset %llu are %s the data section of %llu bytes",
                 shown(&t->name, name, sizeof name), (unsigned long long)t->bytes,
                 (unsigned long long)t->offset, t->offset % f->alignment ? "not aligned in" : "outside",
                 (unsigned long long)data_size);
            free(order);
            return false;
        }
        t->data = f->data + f->data_offset + t->offset;
    }
    qsort(order, (size_t)f->tensor_count, sizeof *order, compare_offset);
    for (int64_t i = 1; i < f->tensor_count; i++)
        if (order[i - 1]->offset + order[i - 1]->bytes > order[i]->offset) {
            fail(c, "tensors %s and %.64s overlap", shown(&order[i - 1]->name, name, sizeof name),
                 order[i]->name.data);
            free(order);
            return false;
        }
    free(order);
    return true;
}

/* ------------------------------------------------------------ the file */

void gguf_close(struct gguf_file *f)
{
    if (!f)
        return;
    for (int64_t i = 0; f->kvs && i < f->kv_count; i++)
        free(f->kvs[i].strings);
    free(f->kvs);
    free(f->tensors);
    if (f->mapped)
        ember_unmap_file(f->data, f->size);
    free(f->copy);
    memset(f, 0, sizeof *f);
}

static ember_status parse(ember_ctx *ctx, const char *name, struct gguf_file *f)
{
    struct cursor c = {.ctx = ctx, .name = name, .data = f->data, .size = f->size};
    const uint8_t *magic;
    uint64_t tensors, kvs;
    if (!take(&c, 4, &magic, "the magic number"))
        return EMBER_ERR_FORMAT;
    if (memcmp(magic, "GGUF", 4) != 0) {
        fail(&c, "it does not start with \"GGUF\"");
        return EMBER_ERR_FORMAT;
    }
    if (!u32(&c, &f->version, "the version"))
        return EMBER_ERR_FORMAT;
    if (f->version != 2 && f->version != 3) {
        uint32_t swapped = __builtin_bswap32(f->version);
        fail(&c,
             swapped == 2 || swapped == 3
                 ? "it is a big-endian GGUF (version %u byte-swapped), which ember does not read"
             : f->version == 1
                 ? "it is GGUF version %u (2023's first files); convert it again with a current "
                   "llama.cpp"
                 : "its GGUF version is %u; ember reads versions 2 and 3",
             swapped == 2 || swapped == 3 ? swapped : f->version);
        return EMBER_ERR_FORMAT;
    }
    if (!u64(&c, &tensors, "the tensor count") || !u64(&c, &kvs, "the key count"))
        return EMBER_ERR_FORMAT;
    if (tensors > GGUF_MAX_TENSORS || kvs > GGUF_MAX_KV) {
        fail(&c, "it claims %llu tensors and %llu keys; ember allows %d and %d", (unsigned long long)tensors,
             (unsigned long long)kvs, GGUF_MAX_TENSORS, GGUF_MAX_KV);
        return EMBER_ERR_FORMAT;
    }
    f->kvs = calloc(kvs ? kvs : 1, sizeof *f->kvs);
    f->tensors = calloc(tensors ? tensors : 1, sizeof *f->tensors);
    if (!f->kvs || !f->tensors)
        return ember_set_error(ctx, EMBER_ERR_NOMEM, "%s: out of host memory for its tables", name);
    /* each key counted before it is read, so that gguf_close frees what a
     * key that fails half-way made (its strings) */
    for (uint64_t i = 0; i < kvs; i++)
        if (f->kv_count++, !read_kv(&c, &f->kvs[i]))
            return EMBER_ERR_FORMAT;
    for (uint64_t i = 0; i < tensors; i++, f->tensor_count++)
        if (!read_tensor(&c, &f->tensors[i]))
            return EMBER_ERR_FORMAT;

    /* unique keys and names; kept sorted, so lookups are binary searches */
    qsort(f->kvs, (size_t)f->kv_count, sizeof *f->kvs, compare_kv);
    qsort(f->tensors, (size_t)f->tensor_count, sizeof *f->tensors, compare_tensor);
    char shown_name[80];
    for (int64_t i = 1; i < f->kv_count; i++)
        if (compare_kv(&f->kvs[i - 1], &f->kvs[i]) == 0) {
            fail(&c, "key %s appears twice", shown(&f->kvs[i].key, shown_name, sizeof shown_name));
            return EMBER_ERR_FORMAT;
        }
    for (int64_t i = 1; i < f->tensor_count; i++)
        if (compare_tensor(&f->tensors[i - 1], &f->tensors[i]) == 0) {
            fail(&c, "tensor %s appears twice", shown(&f->tensors[i].name, shown_name, sizeof shown_name));
            return EMBER_ERR_FORMAT;
        }

    f->alignment = 32;
    const struct gguf_kv *align = gguf_find(f, "general.alignment");
    if (align) {
        if (align->type != GGUF_U32) {
            fail(&c, "general.alignment is a %s, not a u32", gguf_type_name(align->type));
            return EMBER_ERR_FORMAT;
        }
        f->alignment = le(align->value, 4);
        if (f->alignment == 0 || (f->alignment & (f->alignment - 1)) || f->alignment > 65536) {
            fail(&c, "general.alignment is %llu, not a power of two up to 65536",
                 (unsigned long long)f->alignment);
            return EMBER_ERR_FORMAT;
        }
    }
    f->data_offset = (c.at + f->alignment - 1) / f->alignment * f->alignment;
    if (f->data_offset > f->size) {
        if (f->tensor_count == 0) {
            f->data_offset = f->size; /* metadata alone: no data section needed */
            return EMBER_OK;
        }
        c.at = f->size;
        fail(&c, "the file ends before its data section");
        return EMBER_ERR_FORMAT;
    }
    return place_tensors(&c, f) ? EMBER_OK : EMBER_ERR_FORMAT;
}

ember_status gguf_open_memory(ember_ctx *ctx, const void *data, size_t size, struct gguf_file *f)
{
    memset(f, 0, sizeof *f);
    f->data = data;
    f->size = size;
    ember_status st = parse(ctx, "the GGUF data", f);
    if (st != EMBER_OK)
        gguf_close(f);
    return st;
}

ember_status gguf_open(ember_ctx *ctx, const char *path, struct gguf_file *f)
{
    memset(f, 0, sizeof *f);
    struct stat info;
    int fd = ember_open_regular(ctx, path, &info);
    if (fd < 0)
        return ember_last_status(ctx);
    f->size = (size_t)info.st_size;
    f->data = ember_map_file(fd, f->size);
    f->mapped = f->data != NULL;
    if (!f->mapped && f->size > 0) { /* no mapping here: read it */
        f->copy = malloc(f->size);
        size_t got = 0;
        while (f->copy && got < f->size) {
            ssize_t n = read(fd, (char *)f->copy + got, f->size - got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        if (!f->copy || got < f->size) {
            close(fd);
            gguf_close(f);
            return ember_set_error(ctx, f->copy ? EMBER_ERR_IO : EMBER_ERR_NOMEM, "cannot read %s: %s", path,
                                   f->copy ? strerror(errno) : "out of host memory");
        }
        f->data = f->copy;
    }
    close(fd);
    ember_status st = parse(ctx, path, f);
    if (st != EMBER_OK)
        gguf_close(f);
    return st;
}

/* ---------------------------------------------------------------- lookups */

const struct gguf_kv *gguf_find(const struct gguf_file *f, const char *key)
{
    struct gguf_kv want = {.key = {key, strlen(key)}};
    return f->kv_count ? bsearch(&want, f->kvs, (size_t)f->kv_count, sizeof *f->kvs, compare_kv) : NULL;
}

const struct gguf_tensor *gguf_tensor_find(const struct gguf_file *f, const char *name)
{
    struct gguf_tensor want = {.name = {name, strlen(name)}};
    return f->tensor_count
               ? bsearch(&want, f->tensors, (size_t)f->tensor_count, sizeof *f->tensors, compare_tensor)
               : NULL;
}

/* a number of an integer type as int64 (u64 past INT64_MAX saturates) */
static bool as_int(enum gguf_type type, const uint8_t *p, int64_t *v)
{
    switch (type) {
    case GGUF_U8: *v = p[0]; return true;
    case GGUF_I8: *v = (int8_t)p[0]; return true;
    case GGUF_U16: *v = (int64_t)le(p, 2); return true;
    case GGUF_I16: *v = (int16_t)le(p, 2); return true;
    case GGUF_U32: *v = (int64_t)le(p, 4); return true;
    case GGUF_I32: *v = (int32_t)le(p, 4); return true;
    case GGUF_U64: *v = le(p, 8) > INT64_MAX ? INT64_MAX : (int64_t)le(p, 8); return true;
    case GGUF_I64: *v = (int64_t)le(p, 8); return true;
    default: return false;
    }
}

static bool as_float(enum gguf_type type, const uint8_t *p, double *v)
{
    int64_t i;
    if (type == GGUF_F32) {
        uint32_t bits = (uint32_t)le(p, 4);
        float x;
        memcpy(&x, &bits, sizeof x);
        *v = x;
        return true;
    }
    if (type == GGUF_F64) {
        uint64_t bits = le(p, 8);
        memcpy(v, &bits, sizeof *v);
        return true;
    }
    if (as_int(type, p, &i)) {
        *v = (double)i;
        return true;
    }
    return false;
}

int64_t gguf_array_int(const struct gguf_kv *kv, uint64_t i)
{
    int64_t v = 0;
    if (kv->type == GGUF_ARRAY && i < kv->count && kv->item_type < GGUF_TYPE_COUNT &&
        type_bytes[kv->item_type])
        as_int(kv->item_type, kv->value + i * type_bytes[kv->item_type], &v);
    return v;
}

double gguf_array_float(const struct gguf_kv *kv, uint64_t i)
{
    double v = 0.0;
    if (kv->type == GGUF_ARRAY && i < kv->count && kv->item_type < GGUF_TYPE_COUNT &&
        type_bytes[kv->item_type])
        as_float(kv->item_type, kv->value + i * type_bytes[kv->item_type], &v);
    return v;
}

static ember_status wrong_type(ember_ctx *ctx, const char *key, const struct gguf_kv *kv, const char *want)
{
    return ember_set_error(ctx, EMBER_ERR_FORMAT, "the model's %s is a %s%s%s, not %s", key,
                           gguf_type_name(kv->type), kv->type == GGUF_ARRAY ? " of " : "",
                           kv->type == GGUF_ARRAY ? gguf_type_name(kv->item_type) : "", want);
}

ember_status gguf_get_int_or(ember_ctx *ctx, const struct gguf_file *f, const char *key, int64_t lo,
                             int64_t hi, int64_t fallback, int64_t *value)
{
    const struct gguf_kv *kv = gguf_find(f, key);
    int64_t v = fallback;
    if (kv && !as_int(kv->type, kv->value, &v))
        return wrong_type(ctx, key, kv, "an integer");
    if (v < lo || v > hi)
        return ember_set_error(ctx, EMBER_ERR_FORMAT, "the model's %s is %lld, outside [%lld, %lld]", key,
                               (long long)v, (long long)lo, (long long)hi);
    *value = v;
    return EMBER_OK;
}

ember_status gguf_get_int(ember_ctx *ctx, const struct gguf_file *f, const char *key, int64_t lo, int64_t hi,
                          int64_t *value)
{
    if (!gguf_find(f, key))
        return ember_set_error(ctx, EMBER_ERR_FORMAT, "the model has no %s", key);
    return gguf_get_int_or(ctx, f, key, lo, hi, 0, value);
}

ember_status gguf_get_float_or(ember_ctx *ctx, const struct gguf_file *f, const char *key, double fallback,
                               double *value)
{
    const struct gguf_kv *kv = gguf_find(f, key);
    *value = fallback;
    if (kv && !as_float(kv->type, kv->value, value))
        return wrong_type(ctx, key, kv, "a number");
    return EMBER_OK;
}

ember_status gguf_get_bool_or(ember_ctx *ctx, const struct gguf_file *f, const char *key, bool fallback,
                              bool *value)
{
    const struct gguf_kv *kv = gguf_find(f, key);
    *value = fallback;
    if (kv && kv->type != GGUF_BOOL)
        return wrong_type(ctx, key, kv, "a bool");
    if (kv)
        *value = kv->value[0] != 0;
    return EMBER_OK;
}

ember_status gguf_get_string(ember_ctx *ctx, const struct gguf_file *f, const char *key,
                             struct gguf_string *value)
{
    const struct gguf_kv *kv = gguf_find(f, key);
    *value = (struct gguf_string){NULL, 0};
    if (kv && kv->type != GGUF_STRING)
        return wrong_type(ctx, key, kv, "a string");
    if (kv) {
        value->len = le(kv->value, 8);
        value->data = (const char *)kv->value + 8;
    }
    return EMBER_OK;
}

/* --------------------------------------------------------------- values */

void gguf_tensor_done(const struct gguf_file *f, const struct gguf_tensor *t)
{
    if (f->mapped && t->data)
        ember_map_done(t->data, (size_t)t->bytes);
}

ember_dtype gguf_tensor_dtype(const struct gguf_tensor *t)
{
    const struct tensor_type *type = tensor_type(t->type);
    return type ? type->dtype : EMBER_F32;
}

ember_status gguf_tensor_to_f32(ember_ctx *ctx, const struct gguf_tensor *t, float *out)
{
    const uint8_t *p = t->data;
    switch (t->type) {
    case 0:
        for (int64_t i = 0; i < t->numel; i++) {
            uint32_t bits = (uint32_t)le(p + 4 * i, 4);
            memcpy(&out[i], &bits, sizeof bits);
        }
        return EMBER_OK;
    case 1:
        for (int64_t i = 0; i < t->numel; i++)
            out[i] = ember_half_to_float((uint16_t)le(p + 2 * i, 2));
        return EMBER_OK;
    case 30:
        for (int64_t i = 0; i < t->numel; i++)
            out[i] = ember_bf16_to_float((uint16_t)le(p + 2 * i, 2));
        return EMBER_OK;
    default: {
        ember_dtype dtype = gguf_tensor_dtype(t);
        if (!ember_dtype_quantised(dtype))
            return ember_set_error(ctx, EMBER_ERR_UNSUPPORTED, "no conversion for tensor %.64s",
                                   t->name.data);
        ember_dequantize(dtype, p, t->numel, out);
        return EMBER_OK;
    }
    }
}
