/* SPDX-License-Identifier: MIT */
/*
 * io/safetensors-parse.c — a safetensors header, checked: the JSON parser,
 * the checks on its entries, looking entries and metadata up, and freeing
 * what it made (safetensors-impl.h says what is refused).
 *
 * The parser here (its pieces in json.c) reads exactly the header's subset of JSON: one object
 * of tensor entries and an optional "__metadata__" object of strings. It is
 * written against that schema, not as a general JSON reader, so nesting is
 * bounded by construction and every unexpected token is an error that says
 * where it is.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json-impl.h"
#include "safetensors-impl.h"

#define METADATA_KEY "__metadata__"

/* ---------------------------------------------------------------- dtypes */

/* Every dtype the reference implementation knows, with its width in bits
 * (F4 and F6 pack elements below a byte). */
static const struct dtype {
    const char *name;
    unsigned bits;
} dtypes[] = {
    {"BOOL", 8},        {"U8", 8},          {"I8", 8},    {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
    {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"F4", 4},    {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"I16", 16},
    {"U16", 16},        {"F16", 16},        {"BF16", 16}, {"I32", 32},    {"U32", 32},    {"F32", 32},
    {"I64", 64},        {"U64", 64},        {"F64", 64},  {"C64", 64},
};

static const struct dtype *dtype_find(const char *name)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(dtypes[i].name, name) == 0)
            return &dtypes[i];
    return NULL;
}

/* A non-negative integer that fits in 64 bits, in JSON's spelling. */
static ember_status parse_u64(struct json_parser *ps, uint64_t *out, const char *field)
{
    char buf[32];
    json_skip_space(ps);
    if (ps->p < ps->end && *ps->p == '-')
        return json_fail(ps, "\"%s\" holds a negative number", field);
    if (ps->p == ps->end || *ps->p < '0' || *ps->p > '9')
        return json_fail(ps, "expected a non-negative integer in \"%s\", found %s", field,
                         json_found(ps, buf, sizeof buf));
    if (*ps->p == '0' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9')
        return json_fail(ps, "\"%s\" holds a number with a leading zero", field);
    uint64_t v = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        unsigned d = (unsigned)(*ps->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return json_fail(ps, "\"%s\" holds a number over 2^64 - 1", field);
        v = v * 10 + d;
        ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return json_fail(ps, "\"%s\" holds a number that is not an integer", field);
    *out = v;
    return EMBER_OK;
}

/* [u64, u64, ...] with at most `max` numbers, into vals; *n is the count. */
static ember_status parse_u64_list(struct json_parser *ps, uint64_t *vals, int max, int *n, const char *field,
                                   const char *tensor)
{
    char buf[32];
    ember_status st = json_expect(ps, '[', "to open a list");
    *n = 0;
    if (st != EMBER_OK || json_accept(ps, ']'))
        return st;
    for (;;) {
        if (*n == max)
            return json_fail(ps, "\"%s\" of tensor \"%.200s\" has more than %d numbers", field, tensor, max);
        if ((st = parse_u64(ps, &vals[(*n)++], field)) != EMBER_OK)
            return st;
        if (json_accept(ps, ']'))
            return EMBER_OK;
        if (!json_accept(ps, ','))
            return json_fail(ps, "expected ',' or ']' in \"%s\", found %s", field,
                             json_found(ps, buf, sizeof buf));
    }
}

/* {"dtype": ..., "shape": [...], "data_offsets": [begin, end]}, each once */
enum entry_field { FIELD_DTYPE, FIELD_SHAPE, FIELD_OFFSETS, FIELD_COUNT };
static const char *const entry_fields[FIELD_COUNT] = {"dtype", "shape", "data_offsets"};

static ember_status parse_entry(struct json_parser *ps, struct ember_safetensors_entry *e)
{
    bool seen[FIELD_COUNT] = {false};
    char *key = NULL, *dtype = NULL, buf[32];
    ember_status st = json_expect(ps, '{', "to open a tensor's entry");
    if (st != EMBER_OK || json_accept(ps, '}'))
        goto check;
    for (;;) {
        if ((st = json_string(ps, &key)) != EMBER_OK ||
            (st = json_expect(ps, ':', "after a key")) != EMBER_OK)
            goto done;
        int f = 0;
        while (f < FIELD_COUNT && strcmp(key, entry_fields[f]) != 0)
            f++;
        if (f == FIELD_COUNT) {
            st = json_fail(ps, "tensor \"%.200s\" has an unknown field \"%.200s\"", e->name, key);
            goto done;
        }
        if (seen[f]) {
            st = json_fail(ps, "tensor \"%.200s\" has \"%s\" twice", e->name, key);
            goto done;
        }
        seen[f] = true;
        if (f == FIELD_DTYPE) {
            if ((st = json_string(ps, &dtype)) != EMBER_OK)
                goto done;
            if (!dtype_find(dtype)) {
                st = json_fail(ps, "tensor \"%.200s\" has an unknown dtype \"%.40s\"", e->name, dtype);
                goto done;
            }
            strcpy(e->dtype, dtype); /* fits: every known name is short */
            free(dtype);
            dtype = NULL;
        } else if (f == FIELD_SHAPE) {
            st = parse_u64_list(ps, e->shape, EMBER_SAFETENSORS_MAX_DIMS, &e->ndim, "shape", e->name);
        } else {
            uint64_t offsets[2] = {0, 0};
            int n;
            st = parse_u64_list(ps, offsets, 2, &n, "data_offsets", e->name);
            if (st == EMBER_OK && n != 2)
                st = json_fail(ps, "\"data_offsets\" of tensor \"%.200s\" must be [begin, end]", e->name);
            e->begin = offsets[0], e->end = offsets[1];
        }
        free(key);
        key = NULL;
        if (st != EMBER_OK || json_accept(ps, '}'))
            break;
        if (!json_accept(ps, ',')) {
            st = json_fail(ps, "expected ',' or '}' in tensor \"%.200s\", found %s", e->name,
                           json_found(ps, buf, sizeof buf));
            goto done;
        }
    }
check:
    for (int f = 0; f < FIELD_COUNT && st == EMBER_OK; f++)
        if (!seen[f])
            st = json_fail(ps, "tensor \"%.200s\" has no \"%s\"", e->name, entry_fields[f]);
done:
    free(key);
    free(dtype);
    return st;
}

/* {"key": "value", ...} */
static ember_status parse_metadata(struct json_parser *ps, struct ember_safetensors *st)
{
    char buf[32];
    int64_t meta_cap = 0;
    ember_status status = json_expect(ps, '{', "to open \"" METADATA_KEY "\"");
    if (status != EMBER_OK || json_accept(ps, '}'))
        return status;
    for (;;) {
        status =
            ember_host_grow(ps->ctx, (void **)&st->meta, &meta_cap, st->meta_count + 1, sizeof *st->meta);
        if (status != EMBER_OK)
            return status;
        struct ember_safetensors_meta *m = &st->meta[st->meta_count++];
        *m = (struct ember_safetensors_meta){0};
        if ((status = json_string(ps, &m->key)) != EMBER_OK ||
            (status = json_expect(ps, ':', "after a key")) != EMBER_OK)
            return status;
        json_skip_space(ps);
        if (ps->p < ps->end && *ps->p != '"')
            return json_fail(ps, "the value of \"" METADATA_KEY "\" key \"%.200s\" is not a string", m->key);
        if ((status = json_string(ps, &m->value)) != EMBER_OK)
            return status;
        if (json_accept(ps, '}'))
            return EMBER_OK;
        if (!json_accept(ps, ','))
            return json_fail(ps, "expected ',' or '}' in \"" METADATA_KEY "\", found %s",
                             json_found(ps, buf, sizeof buf));
    }
}

/* the whole header: {"name": entry, ..., "__metadata__": {...}} and nothing after */
static ember_status parse_header(struct json_parser *ps, struct ember_safetensors *st)
{
    char buf[32];
    bool has_meta = false;
    int64_t entries_cap = 0;
    ember_status status;
    /* the reference implementation insists on '{' first, so no space before it */
    if (ps->p == ps->end || *ps->p != '{')
        return json_fail(ps, "the header must start with '{', not %s", json_found(ps, buf, sizeof buf));
    ps->p++;
    if (!json_accept(ps, '}')) {
        for (;;) {
            char *key;
            if ((status = json_string(ps, &key)) != EMBER_OK)
                return status;
            if ((status = json_expect(ps, ':', "after a key")) != EMBER_OK) {
                free(key);
                return status;
            }
            if (strcmp(key, METADATA_KEY) == 0) {
                free(key);
                if (has_meta)
                    return json_fail(ps, "\"" METADATA_KEY "\" appears twice");
                has_meta = true;
                status = parse_metadata(ps, st);
            } else {
                status = ember_host_grow(ps->ctx, (void **)&st->entries, &entries_cap, st->count + 1,
                                         sizeof *st->entries);
                if (status != EMBER_OK) {
                    free(key);
                    return status;
                }
                struct ember_safetensors_entry *e = &st->entries[st->count++];
                *e = (struct ember_safetensors_entry){.name = key};
                status = parse_entry(ps, e);
            }
            if (status != EMBER_OK || json_accept(ps, '}'))
                break;
            if (!json_accept(ps, ','))
                return json_fail(ps, "expected ',' or '}' after a tensor, found %s",
                                 json_found(ps, buf, sizeof buf));
        }
        if (status != EMBER_OK)
            return status;
    }
    json_skip_space(ps);
    if (ps->p != ps->end)
        return json_fail(ps, "%s after the header's JSON object (only whitespace may pad it)",
                         json_found(ps, buf, sizeof buf));
    return EMBER_OK;
}

/* ------------------------------------------------------ checking entries */

const char *ember_safetensors_shape_str(const struct ember_safetensors_entry *e, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < e->ndim && used < len; i++)
        used +=
            (size_t)snprintf(buf + used, len - used, i ? ", %llu" : "%llu", (unsigned long long)e->shape[i]);
    if (used < len)
        snprintf(buf + used, len - used, ")");
    return buf;
}

/* The entry's offsets lie in the data section and hold exactly its shape's
 * bytes (computed without overflow). */
static ember_status check_entry(ember_ctx *ctx, const char *what, const struct ember_safetensors_entry *e,
                                uint64_t data_bytes)
{
    char shape[256];
    const struct dtype *dt = dtype_find(e->dtype);
    uint64_t numel = 1;
    for (int i = 0; i < e->ndim; i++)
        if (e->shape[i] == 0)
            numel = 0;
    for (int i = 0; i < e->ndim && numel; i++) {
        if (numel > UINT64_MAX / e->shape[i] || numel * e->shape[i] > UINT64_MAX / dt->bits)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" has shape %s, too large to exist",
                              what, e->name, ember_safetensors_shape_str(e, shape, sizeof shape));
        numel *= e->shape[i];
    }
    if (numel * dt->bits % 8)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" (%s %s) does not fill whole bytes",
                          what, e->name, e->dtype, ember_safetensors_shape_str(e, shape, sizeof shape));
    uint64_t bytes = numel * dt->bits / 8;
    if (e->begin > e->end)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: tensor \"%.200s\" has data_offsets [%llu, %llu], which end before they begin",
                          what, e->name, (unsigned long long)e->begin, (unsigned long long)e->end);
    if (e->end > data_bytes)
        return ember_fail(
            ctx, EMBER_ERR_FORMAT,
            "%s: tensor \"%.200s\" has data_offsets [%llu, %llu], past the end of the data section "
            "(%llu bytes; is the file truncated?)",
            what, e->name, (unsigned long long)e->begin, (unsigned long long)e->end,
            (unsigned long long)data_bytes);
    if (e->end - e->begin != bytes)
        return ember_fail(
            ctx, EMBER_ERR_FORMAT,
            "%s: tensor \"%.200s\" is %s %s, %llu bytes, but its data_offsets [%llu, %llu] hold %llu", what,
            e->name, e->dtype, ember_safetensors_shape_str(e, shape, sizeof shape), (unsigned long long)bytes,
            (unsigned long long)e->begin, (unsigned long long)e->end,
            (unsigned long long)(e->end - e->begin));
    return EMBER_OK;
}

static int by_name(const void *a, const void *b)
{
    const struct ember_safetensors_entry *x = *(struct ember_safetensors_entry *const *)a;
    const struct ember_safetensors_entry *y = *(struct ember_safetensors_entry *const *)b;
    return strcmp(x->name, y->name);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct ember_safetensors_meta *)a)->key,
                  ((const struct ember_safetensors_meta *)b)->key);
}

static int by_offset(const void *a, const void *b)
{
    const struct ember_safetensors_entry *x = *(struct ember_safetensors_entry *const *)a;
    const struct ember_safetensors_entry *y = *(struct ember_safetensors_entry *const *)b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* Names and metadata keys are unique; st->by_name is filled. */
static ember_status check_unique(ember_ctx *ctx, const char *what, struct ember_safetensors *st)
{
    st->by_name = ember_host_alloc(ctx, (size_t)st->count * sizeof *st->by_name);
    if (!st->by_name)
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < st->count; i++)
        st->by_name[i] = &st->entries[i];
    qsort(st->by_name, (size_t)st->count, sizeof *st->by_name, by_name);
    for (int i = 1; i < st->count; i++)
        if (strcmp(st->by_name[i - 1]->name, st->by_name[i]->name) == 0)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: tensor \"%.200s\" appears twice in the header",
                              what, st->by_name[i]->name);
    if (st->meta_count > 1)
        qsort(st->meta, (size_t)st->meta_count, sizeof *st->meta, by_key);
    for (int i = 1; i < st->meta_count; i++)
        if (strcmp(st->meta[i - 1].key, st->meta[i].key) == 0)
            return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: \"" METADATA_KEY "\" has the key \"%.200s\" twice",
                              what, st->meta[i].key);
    return EMBER_OK;
}

/* The entries, sorted by offset, cover the data section exactly once. */
static ember_status check_tiling(ember_ctx *ctx, const char *what, const struct ember_safetensors *st,
                                 uint64_t data_bytes)
{
    struct ember_safetensors_entry **order = ember_host_alloc(ctx, (size_t)st->count * sizeof *order);
    if (!order)
        return EMBER_ERR_NOMEM;
    memcpy(order, st->by_name, (size_t)st->count * sizeof *order);
    qsort(order, (size_t)st->count, sizeof *order, by_offset);
    ember_status status = EMBER_OK;
    uint64_t covered = 0;
    for (int i = 0; i < st->count && status == EMBER_OK; i++) {
        if (order[i]->begin < covered)
            status = ember_fail(ctx, EMBER_ERR_FORMAT,
                                "%s: tensors \"%.200s\" and \"%.200s\" overlap (bytes %llu to %llu)", what,
                                order[i - 1]->name, order[i]->name, (unsigned long long)order[i]->begin,
                                (unsigned long long)covered);
        else if (order[i]->begin > covered)
            status = ember_fail(ctx, EMBER_ERR_FORMAT,
                                "%s: bytes %llu to %llu of the data section belong to no tensor", what,
                                (unsigned long long)covered, (unsigned long long)order[i]->begin);
        covered = order[i]->end;
    }
    if (status == EMBER_OK && covered != data_bytes)
        status = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s: the data section has %llu bytes after the last tensor's data", what,
                            (unsigned long long)(data_bytes - covered));
    free(order);
    return status;
}

ember_status ember_safetensors_parse(ember_ctx *ctx, const char *what, const unsigned char *json, size_t len,
                                     uint64_t data_bytes, struct ember_safetensors *st)
{
    *st = (struct ember_safetensors){.data_bytes = data_bytes};
    /* the JSON starts at byte 8, after the header's length */
    struct json_parser ps = {.ctx = ctx,
                             .what = what,
                             .kind = "safetensors header",
                             .start = json,
                             .p = json,
                             .end = json + len,
                             .base = 8};
    ember_status status = parse_header(&ps, st);
    for (int i = 0; i < st->count && status == EMBER_OK; i++)
        status = check_entry(ctx, what, &st->entries[i], data_bytes);
    if (status == EMBER_OK)
        status = check_unique(ctx, what, st);
    if (status == EMBER_OK)
        status = check_tiling(ctx, what, st, data_bytes);
    if (status != EMBER_OK)
        ember_safetensors_close(st);
    return status;
}

void ember_safetensors_close(struct ember_safetensors *st)
{
    if (!st)
        return;
    if (st->file)
        fclose(st->file);
    free(st->memory);
    for (int i = 0; i < st->count; i++)
        free(st->entries[i].name);
    for (int i = 0; i < st->meta_count; i++) {
        free(st->meta[i].key);
        free(st->meta[i].value);
    }
    free(st->entries);
    free(st->meta);
    free(st->by_name);
    free(st->path);
    *st = (struct ember_safetensors){0};
}

const struct ember_safetensors_entry *ember_safetensors_find(const struct ember_safetensors *st,
                                                             const char *name)
{
    struct ember_safetensors_entry key = {.name = (char *)name}, *keyp = &key;
    if (!st || !name || !st->by_name)
        return NULL;
    struct ember_safetensors_entry **hit =
        bsearch(&keyp, st->by_name, (size_t)st->count, sizeof *st->by_name, by_name);
    return hit ? *hit : NULL;
}

const char *ember_safetensors_meta_get(const struct ember_safetensors *st, const char *key)
{
    for (int i = 0; st && key && i < st->meta_count; i++)
        if (strcmp(st->meta[i].key, key) == 0)
            return st->meta[i].value;
    return NULL;
}
