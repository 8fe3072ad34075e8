/* SPDX-License-Identifier: MIT */
/*
 * io/onnx-read.c — an ONNX file's bytes into struct onnx_model
 * (io/onnx-impl.h lists the fields kept and the limits).
 *
 * One function per message, each a loop over its fields: a known field is
 * read, an unknown one skipped by its wire type. Nested messages are read
 * by the function of their type, so the nesting is the schema's and never
 * the input's. Everything is copied out of the input; on a failure the
 * caller frees what was read so far, and nothing is returned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert-impl.h"
#include "onnx-impl.h"
#include "text-impl.h"

struct rd {
    ember_ctx *ctx;
    const char *what;
    const uint8_t *start; /* for the offset in messages */
};

static ember_status bad(struct rd *rd, const struct pb_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ember_status bad(struct rd *rd, const struct pb_reader *r, const char *fmt, ...)
{
    char why[512];
    EMBER_FORMAT_ARGS(why, fmt);
    return ember_set_error(rd->ctx, EMBER_ERR_FORMAT, "%s is not a well-formed ONNX file: %s (at byte %lld)",
                           rd->what, why, r ? (long long)(r->at - rd->start) : 0LL);
}

/* The walk over a message's fields, written once for every reader below:
 *
 *     while (next_field(rd, &r, &field, &wire, &st))
 *         if (field == 1) st = read_...; else st = skip_field(rd, &r, field, wire);
 *
 * next_field is false at the message's end, once *st is an error, or on a
 * key that is not one (*st then says so). */
static bool next_field(struct rd *rd, struct pb_reader *r, uint32_t *field, int *wire, ember_status *st)
{
    if (*st != EMBER_OK || r->at >= r->end)
        return false;
    if (!pb_read_key(r, field, wire)) {
        *st = bad(rd, r, "a field key that is not one");
        return false;
    }
    return true;
}

/* past a field the reader does not use */
static ember_status skip_field(struct rd *rd, struct pb_reader *r, uint32_t field, int wire)
{
    return pb_skip(r, wire) ? EMBER_OK : bad(rd, r, "field %u cannot be skipped", field);
}

static ember_status nomem(struct rd *rd)
{
    return ember_set_error(rd->ctx, EMBER_ERR_NOMEM, "out of host memory reading %s", rd->what);
}

/* grows *items (of *count, room for *cap) by one zeroed element, up to max */
static void *grow(struct rd *rd, const struct pb_reader *r, void **items, int *count, int *cap, size_t size,
                  int max, const char *what, ember_status *st)
{
    if (*count >= max) {
        *st = bad(rd, r, "more than %d %s", max, what);
        return NULL;
    }
    if (*count == *cap) {
        int next = *cap ? 2 * *cap : 4;
        void *more = realloc(*items, (size_t)next * size);
        if (!more) {
            *st = nomem(rd);
            return NULL;
        }
        *items = more;
        *cap = next;
    }
    void *item = (char *)*items + (size_t)(*count)++ * size;
    memset(item, 0, size);
    return item;
}

/* a string field, copied: at most `max` bytes and no NUL */
static ember_status read_string(struct rd *rd, struct pb_reader *r, int wire, size_t max, char **out)
{
    struct pb_reader s;
    if (wire != PB_BYTES || !pb_read_bytes(r, &s))
        return bad(rd, r, "a string field that is not length-delimited");
    size_t len = (size_t)(s.end - s.at);
    if (len > max || memchr(s.at, '\0', len))
        return bad(rd, r, "a string of %zu bytes%s", len, len > max ? ", over the limit" : " holding a NUL");
    char *copy = malloc(len + 1);
    if (!copy)
        return nomem(rd);
    memcpy(copy, s.at, len);
    copy[len] = '\0';
    free(*out);
    *out = copy;
    return EMBER_OK;
}

static ember_status read_int(struct rd *rd, struct pb_reader *r, int wire, int64_t *out)
{
    uint64_t v;
    if (wire != PB_VARINT || !pb_read_varint(r, &v))
        return bad(rd, r, "an integer field that is not a varint");
    *out = (int64_t)v;
    return EMBER_OK;
}

/* Repeated numbers, packed (one length-delimited run) or one per field,
 * of `kind`: 0 varints, 4 fixed32, 8 fixed64. They are read in two
 * passes: the message's own pass counts them without decoding (a packed
 * run of varints holds as many as it has bytes below 0x80), so that the
 * count is checked against its limit (8 dimensions, a tensor's elements by
 * its dims) before anything is allocated for it; numbers_each then
 * decodes only what was asked for, straight into its place. Decoding
 * first cost 8 bytes for each 1-byte varint, 16 while the array doubled:
 * a 400 MB file took 3.5 GB before a dimension count was refused. */
static int single_wire(int kind) { return kind == 0 ? PB_VARINT : kind == 4 ? PB_FIXED32 : PB_FIXED64; }

static ember_status count_numbers(struct rd *rd, struct pb_reader *r, int wire, int kind, size_t *count)
{
    struct pb_reader run;
    uint64_t v;
    uint32_t v32;
    if (wire == single_wire(kind)) {
        bool ok = kind == 0   ? pb_read_varint(r, &v)
                  : kind == 4 ? pb_read_fixed32(r, &v32)
                              : pb_read_fixed64(r, &v);
        if (!ok)
            return bad(rd, r, "a repeated number cut short");
        ++*count;
        return EMBER_OK;
    }
    if (wire != PB_BYTES || !pb_read_bytes(r, &run))
        return bad(rd, r, "a repeated number of the wrong wire type");
    size_t len = (size_t)(run.end - run.at);
    if (kind != 0) {
        if (len == 0 || len % (size_t)kind)
            return bad(rd, r, "a packed run of %zu bytes is not whole %d-byte numbers", len, kind);
        *count += len / (size_t)kind;
        return EMBER_OK;
    }
    int in_varint = 0; /* bytes of the varint being counted */
    for (const uint8_t *at = run.at; at < run.end; at++) {
        if (++in_varint > 10)
            return bad(rd, r, "a varint of over 10 bytes");
        if (*at < 0x80)
            ++*count, in_varint = 0;
    }
    if (len == 0 || in_varint)
        return bad(rd, r, "a repeated number cut short");
    return EMBER_OK;
}

/* Hands each number of the fields numbered `want` or `also` (0: none) in a
 * message that count_numbers has been through to each(arg, value), in
 * order; false when each() does. */
static bool numbers_each(struct pb_reader r, uint32_t want, uint32_t also, int kind,
                         bool (*each)(void *arg, uint64_t v), void *arg)
{
    uint32_t field;
    int wire;
    while (r.at < r.end) {
        if (!pb_read_key(&r, &field, &wire))
            return false;
        if (field != want && (!also || field != also)) {
            if (!pb_skip(&r, wire))
                return false;
            continue;
        }
        struct pb_reader run = r;
        if (wire == PB_BYTES && !pb_read_bytes(&r, &run))
            return false;
        do {
            uint64_t v = 0;
            uint32_t v32;
            bool ok = kind == 0   ? pb_read_varint(&run, &v)
                      : kind == 4 ? (pb_read_fixed32(&run, &v32) && ((v = v32), 1))
                                  : pb_read_fixed64(&run, &v);
            if (!ok || !each(arg, v))
                return false;
        } while (wire == PB_BYTES && run.at < run.end);
        if (wire != PB_BYTES)
            r.at = run.at;
    }
    return true;
}

/* numbers_each into an array of `count` uint64s (a tensor's dims, an attribute's ints or floats' bits) */
struct number_array {
    uint64_t *v;
    size_t count, at;
};

static bool number_store(void *arg, uint64_t v)
{
    struct number_array *a = arg;
    if (a->at == a->count)
        return false;
    a->v[a->at++] = v;
    return true;
}

/* ---------------------------------------------------------------- tensors */

void onnx_tensor_free(struct onnx_tensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->values);
    free(t->ints);
    *t = (struct onnx_tensor){0};
}

/* How many numbers each of a tensor's repeated fields holds (count_numbers). */
struct tensor_counts {
    size_t dims, fixed32, fixed64, varints;
};

/* One element into values or ints, as numbers_each hands it over. */
struct element_sink {
    struct onnx_tensor *t;
    enum ember_num_kind kind;
    size_t at;
    bool bad_value; /* a NaN, an infinity or beyond float32 at index at */
};

static bool element_store(void *arg, uint64_t bits)
{
    struct element_sink *e = arg;
    struct onnx_tensor *t = e->t;
    if (e->at == (size_t)t->numel)
        return false;
    if (t->ints) {
        t->ints[e->at++] = e->kind == EMBER_NUM_I32 ? (int64_t)(int32_t)(uint32_t)bits : (int64_t)bits;
        return true;
    }
    uint8_t le[8];
    for (size_t b = 0; b < 8; b++)
        le[b] = (uint8_t)(bits >> (8 * b));
    size_t wrong;
    if (!ember_convert_to_f32(e->kind, le, 1, &t->values[e->at], &wrong)) {
        e->bad_value = true;
        return false;
    }
    e->at++;
    return true;
}

/* The tensor's elements from whichever field held them, into values (for
 * floating-point types) or ints (for integer ones); `msg` is the whole
 * TensorProto, its numbers counted in `c`. */
static ember_status tensor_data(struct rd *rd, const struct pb_reader *at, struct onnx_tensor *t,
                                const struct pb_reader *raw, struct pb_reader msg,
                                const struct tensor_counts *c)
{
    enum ember_num_kind kind;
    switch (t->type) {
    case ONNX_FLOAT: kind = EMBER_NUM_F32; break;
    case ONNX_FLOAT16: kind = EMBER_NUM_F16; break;
    case ONNX_BFLOAT16: kind = EMBER_NUM_BF16; break;
    case ONNX_DOUBLE: kind = EMBER_NUM_F64; break;
    case ONNX_INT64: kind = EMBER_NUM_I64; break;
    case ONNX_INT32:
    case ONNX_BOOL: kind = EMBER_NUM_I32; break; /* a bool's int32_data, or raw bytes of one */
    default: return EMBER_OK; /* kept by type alone: the importer names it if a node needs it */
    }
    bool integer = kind == EMBER_NUM_I64 || kind == EMBER_NUM_I32;
    size_t n = (size_t)t->numel, width = t->type == ONNX_BOOL ? 1 : ember_convert_width(kind);
    size_t given = raw                     ? (size_t)(raw->end - raw->at) / width
                   : kind == EMBER_NUM_F32 ? c->fixed32
                   : kind == EMBER_NUM_F64 ? c->fixed64
                                           : c->varints; /* int32_data, int64_data, and half's bits */
    if (raw && (size_t)(raw->end - raw->at) % width)
        return bad(rd, at, "tensor \"%.200s\": raw_data of %zu bytes is not whole elements", t->name,
                   (size_t)(raw->end - raw->at));
    if (given != n)
        return bad(rd, at, "tensor \"%.200s\" has %lld elements by its dims but its data holds %zu", t->name,
                   (long long)t->numel, given);
    if (integer ? !(t->ints = malloc((n ? n : 1) * sizeof *t->ints))
                : !(t->values = malloc((n ? n : 1) * sizeof *t->values)))
        return nomem(rd);
    struct element_sink sink = {t, kind, 0, false};
    if (!raw) {
        uint32_t field = kind == EMBER_NUM_F32 ? 4 : kind == EMBER_NUM_F64 ? 10 : 5;
        int number = kind == EMBER_NUM_F32 ? 4 : kind == EMBER_NUM_F64 ? 8 : 0;
        numbers_each(msg, field, field == 5 ? 7 : 0, number, element_store, &sink);
    }
    for (size_t i = 0; raw && i < n && !sink.bad_value; i++) {
        uint64_t bits = 0;
        for (size_t b = width; b-- > 0;)
            bits = bits << 8 | raw->at[i * width + b];
        element_store(&sink, bits);
    }
    if (sink.bad_value)
        return bad(rd, at,
                   "tensor \"%.200s\" holds at index %zu a NaN, an infinity or a value beyond float32",
                   t->name, sink.at);
    return EMBER_OK;
}

static ember_status read_tensor(struct rd *rd, struct pb_reader r, struct onnx_tensor *t)
{
    struct tensor_counts c = {0};
    struct pb_reader raw = {0}, start = r;
    bool has_raw = false;
    int64_t type = 0;
    ember_status st = EMBER_OK;
    uint32_t field;
    int wire;
    while (next_field(rd, &r, &field, &wire, &st)) {
        switch (field) {
        case 1: st = count_numbers(rd, &r, wire, 0, &c.dims); break;
        case 2: st = read_int(rd, &r, wire, &type); break;
        case 4: st = count_numbers(rd, &r, wire, 4, &c.fixed32); break;
        case 5: /* int32_data: INT32, and the bits of FLOAT16 and BFLOAT16 */
        case 7: st = count_numbers(rd, &r, wire, 0, &c.varints); break;
        case 8: st = read_string(rd, &r, wire, ONNX_MAX_STRING, &t->name); break;
        case 9:
            if (wire != PB_BYTES || !pb_read_bytes(&r, &raw))
                st = bad(rd, &r, "raw_data that is not length-delimited");
            has_raw = true;
            break;
        case 10: st = count_numbers(rd, &r, wire, 8, &c.fixed64); break;
        case 13:
        case 14:
            st = bad(rd, &r,
                     "tensor \"%.200s\" keeps its data in an external file, which ember does not read "
                     "(save the model with its weights inside: onnx.save(model, path, "
                     "save_as_external_data=False))",
                     t->name ? t->name : "");
            break;
        default: st = skip_field(rd, &r, field, wire);
        }
    }
    if (!t->name && st == EMBER_OK && !(t->name = strdup("")))
        st = nomem(rd);
    if (st == EMBER_OK && c.dims > ONNX_MAX_DIMS)
        st = bad(rd, &start, "tensor \"%.200s\" has %zu dimensions, over %d", t->name, c.dims, ONNX_MAX_DIMS);
    uint64_t dims[ONNX_MAX_DIMS];
    struct number_array d = {dims, c.dims, 0};
    if (st == EMBER_OK && !numbers_each(start, 1, 0, 0, number_store, &d))
        st = bad(rd, &start, "tensor \"%.200s\": its dims cannot be read", t->name);
    if (st == EMBER_OK) {
        t->type = (int)type;
        t->ndim = (int)c.dims;
        t->numel = 1;
        for (int i = 0; i < t->ndim && st == EMBER_OK; i++) {
            int64_t dim = (int64_t)dims[i];
            t->dims[i] = dim;
            /* the data must be in the file, so no honest count passes its size */
            if (dim < 0 || (dim && t->numel > (int64_t)ONNX_MAX_FILE / dim))
                st =
                    bad(rd, &start, "tensor \"%.200s\" has dimension %d of %lld", t->name, i, (long long)dim);
            else
                t->numel *= dim;
        }
    }
    if (st == EMBER_OK)
        st = tensor_data(rd, &start, t, has_raw ? &raw : NULL, start, &c);
    return st;
}

ember_status onnx_tensor_read(ember_ctx *ctx, const char *what, const void *data, size_t size,
                              struct onnx_tensor *t)
{
    *t = (struct onnx_tensor){0};
    struct rd rd = {ctx, what, data};
    if (size > ONNX_MAX_FILE)
        return bad(&rd, NULL, "over 2 GiB");
    ember_status st = read_tensor(&rd, (struct pb_reader){data, (const uint8_t *)data + size}, t);
    if (st != EMBER_OK)
        onnx_tensor_free(t);
    return st;
}

/* ------------------------------------------------------- nodes, attributes */

static void attr_free(struct onnx_attr *a)
{
    free(a->name);
    free(a->s);
    onnx_tensor_free(a->t);
    free(a->t);
    free(a->ints);
    free(a->floats);
}

static ember_status read_attr(struct rd *rd, struct pb_reader r, struct onnx_attr *a)
{
    size_t int_count = 0, float_count = 0;
    struct pb_reader start = r;
    ember_status st = EMBER_OK;
    int64_t type = 0;
    uint32_t field;
    int wire;
    while (next_field(rd, &r, &field, &wire, &st)) {
        struct pb_reader inner;
        uint32_t bits;
        switch (field) {
        case 1: st = read_string(rd, &r, wire, ONNX_MAX_STRING, &a->name); break;
        case 2:
            if (wire != PB_FIXED32 || !pb_read_fixed32(&r, &bits))
                st = bad(rd, &r, "attribute f that is not a float");
            else
                memcpy(&a->f, &bits, 4);
            break;
        case 3: st = read_int(rd, &r, wire, &a->i); break;
        case 4: st = read_string(rd, &r, wire, ONNX_MAX_STRING, &a->s); break;
        case 5:
            if (a->t || wire != PB_BYTES || !pb_read_bytes(&r, &inner)) {
                st = bad(rd, &r, "attribute t given twice or not a message");
                break;
            }
            if (!(a->t = calloc(1, sizeof *a->t)))
                st = nomem(rd);
            else
                st = read_tensor(rd, inner, a->t);
            break;
        case 7: st = count_numbers(rd, &r, wire, 4, &float_count); break;
        case 8: st = count_numbers(rd, &r, wire, 0, &int_count); break;
        case 20: st = read_int(rd, &r, wire, &type); break;
        default: st = skip_field(rd, &r, field, wire);
        }
    }
    a->type = (int)type;
    if (st == EMBER_OK && !a->name)
        st = bad(rd, &r, "an attribute without a name");
    for (int k = 0; k < 2 && st == EMBER_OK; k++) { /* ints, then floats: counted, then decoded */
        size_t count = k == 0 ? int_count : float_count;
        if (count > ONNX_MAX_STRING) {
            st = bad(rd, &r, "attribute %s holds %zu %s", a->name, count, k == 0 ? "integers" : "floats");
            break;
        }
        if (!count)
            continue;
        struct number_array v = {malloc(count * sizeof *v.v), count, 0};
        if (!v.v) {
            st = nomem(rd);
            break;
        }
        numbers_each(start, k == 0 ? 8 : 7, 0, k == 0 ? 0 : 4, number_store, &v);
        if (k == 0 && (a->ints = malloc(count * sizeof *a->ints))) {
            for (size_t i = 0; i < count; i++)
                a->ints[i] = (int64_t)v.v[i];
            a->int_count = (int)count;
        } else if (k == 1 && (a->floats = malloc(count * sizeof *a->floats))) {
            for (size_t i = 0; i < count; i++) {
                uint32_t u = (uint32_t)v.v[i];
                memcpy(&a->floats[i], &u, 4);
            }
            a->float_count = (int)count;
        } else {
            st = nomem(rd);
        }
        free(v.v);
    }
    return st;
}

void onnx_node_free(struct onnx_node *n)
{
    free(n->name);
    free(n->op_type);
    free(n->domain);
    for (int i = 0; i < n->input_count; i++)
        free(n->inputs[i]);
    for (int i = 0; i < n->output_count; i++)
        free(n->outputs[i]);
    free(n->inputs);
    free(n->outputs);
    for (int i = 0; i < n->attr_count; i++)
        attr_free(&n->attrs[i]);
    free(n->attrs);
}

static ember_status read_node(struct rd *rd, struct pb_reader r, struct onnx_node *n)
{
    ember_status st = EMBER_OK;
    int in_cap = 0, out_cap = 0, attr_cap = 0;
    uint32_t field;
    int wire;
    while (next_field(rd, &r, &field, &wire, &st)) {
        struct pb_reader inner;
        char **slot;
        struct onnx_attr *a;
        switch (field) {
        case 1:
        case 2:
            slot = field == 1 ? grow(rd, &r, (void **)&n->inputs, &n->input_count, &in_cap, sizeof *slot,
                                     ONNX_MAX_INPUTS, "inputs of a node", &st)
                              : grow(rd, &r, (void **)&n->outputs, &n->output_count, &out_cap, sizeof *slot,
                                     ONNX_MAX_INPUTS, "outputs of a node", &st);
            if (slot)
                st = read_string(rd, &r, wire, ONNX_MAX_STRING, slot);
            break;
        case 3: st = read_string(rd, &r, wire, ONNX_MAX_STRING, &n->name); break;
        case 4: st = read_string(rd, &r, wire, ONNX_MAX_STRING, &n->op_type); break;
        case 5:
            if (wire != PB_BYTES || !pb_read_bytes(&r, &inner)) {
                st = bad(rd, &r, "an attribute that is not a message");
                break;
            }
            a = grow(rd, &r, (void **)&n->attrs, &n->attr_count, &attr_cap, sizeof *a, ONNX_MAX_ATTRS,
                     "attributes of a node", &st);
            if (a)
                st = read_attr(rd, inner, a);
            break;
        case 7: st = read_string(rd, &r, wire, ONNX_MAX_STRING, &n->domain); break;
        default: st = skip_field(rd, &r, field, wire);
        }
    }
    if (st == EMBER_OK && !n->op_type)
        st = bad(rd, &r, "a node without an op_type");
    if (st == EMBER_OK && (!n->name && !(n->name = strdup(""))))
        st = nomem(rd);
    if (st == EMBER_OK && (!n->domain && !(n->domain = strdup(""))))
        st = nomem(rd);
    return st;
}

const struct onnx_attr *onnx_attr_find(const struct onnx_node *n, const char *name)
{
    for (int i = 0; i < n->attr_count; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

/* ------------------------------------------------------- values, graphs */

static ember_status read_shape(struct rd *rd, struct pb_reader r, struct onnx_value *v)
{
    uint32_t field;
    int wire;
    ember_status st = EMBER_OK;
    v->ndim = 0;
    while (next_field(rd, &r, &field, &wire, &st)) {
        struct pb_reader dim;
        if (field != 1) {
            st = skip_field(rd, &r, field, wire);
            continue;
        }
        if (wire != PB_BYTES || !pb_read_bytes(&r, &dim))
            return bad(rd, &r, "a dimension that is not a message");
        if (v->ndim == ONNX_MAX_DIMS)
            return bad(rd, &r, "value %s has over %d dimensions", v->name ? v->name : "", ONNX_MAX_DIMS);
        int d = v->ndim++;
        v->dims[d] = -1;
        while (next_field(rd, &dim, &field, &wire, &st))
            if (field == 1)
                st = read_int(rd, &dim, wire, &v->dims[d]);
            else if (field == 2)
                st = read_string(rd, &dim, wire, ONNX_MAX_STRING, &v->dim_names[d]);
            else
                st = skip_field(rd, &dim, field, wire);
    }
    return st;
}

static void value_free(struct onnx_value *v)
{
    free(v->name);
    for (int i = 0; i < ONNX_MAX_DIMS; i++)
        free(v->dim_names[i]);
}

/* ValueInfoProto -> TypeProto -> TypeProto.Tensor -> TensorShapeProto */
static ember_status read_value(struct rd *rd, struct pb_reader r, struct onnx_value *v)
{
    v->ndim = -1;
    uint32_t field;
    int wire;
    ember_status st = EMBER_OK;
    while (next_field(rd, &r, &field, &wire, &st)) {
        struct pb_reader type, tensor;
        if (field == 1) {
            st = read_string(rd, &r, wire, ONNX_MAX_STRING, &v->name);
            continue;
        }
        if (field != 2) {
            st = skip_field(rd, &r, field, wire);
            continue;
        }
        if (wire != PB_BYTES || !pb_read_bytes(&r, &type))
            return bad(rd, &r, "a type that is not a message");
        while (next_field(rd, &type, &field, &wire, &st)) {
            if (field != 1) { /* sequences, maps, optionals: left as no shape */
                st = skip_field(rd, &type, field, wire);
                continue;
            }
            if (wire != PB_BYTES || !pb_read_bytes(&type, &tensor))
                return bad(rd, &type, "a tensor type that is not a message");
            while (next_field(rd, &tensor, &field, &wire, &st)) {
                struct pb_reader shape;
                int64_t elem = 0;
                if (field == 1) {
                    st = read_int(rd, &tensor, wire, &elem);
                    v->type = (int)elem;
                } else if (field == 2) {
                    if (wire != PB_BYTES || !pb_read_bytes(&tensor, &shape))
                        return bad(rd, &tensor, "a shape that is not a message");
                    st = read_shape(rd, shape, v);
                } else {
                    st = skip_field(rd, &tensor, field, wire);
                }
            }
        }
    }
    if (st == EMBER_OK && !v->name && !(v->name = strdup("")))
        st = nomem(rd);
    return st;
}

static ember_status read_graph(struct rd *rd, struct pb_reader r, struct onnx_graph *g)
{
    int node_cap = 0, init_cap = 0, in_cap = 0, out_cap = 0;
    ember_status st = EMBER_OK;
    uint32_t field;
    int wire;
    while (next_field(rd, &r, &field, &wire, &st)) {
        struct pb_reader inner;
        if (field != 1 && field != 2 && field != 5 && field != 11 && field != 12) {
            st = skip_field(rd, &r, field, wire);
            continue;
        }
        if (field == 2) {
            st = read_string(rd, &r, wire, ONNX_MAX_STRING, &g->name);
            continue;
        }
        if (wire != PB_BYTES || !pb_read_bytes(&r, &inner))
            return bad(rd, &r, "graph field %u is not a message", field);
        if (field == 1) {
            struct onnx_node *n = grow(rd, &r, (void **)&g->nodes, &g->node_count, &node_cap, sizeof *n,
                                       ONNX_MAX_NODES, "nodes", &st);
            if (n)
                st = read_node(rd, inner, n);
        } else if (field == 5) {
            struct onnx_tensor *t = grow(rd, &r, (void **)&g->initializers, &g->initializer_count, &init_cap,
                                         sizeof *t, ONNX_MAX_TENSORS, "initializers", &st);
            if (t)
                st = read_tensor(rd, inner, t);
        } else {
            struct onnx_value *v = field == 11
                                       ? grow(rd, &r, (void **)&g->inputs, &g->input_count, &in_cap,
                                              sizeof *v, ONNX_MAX_TENSORS, "graph inputs", &st)
                                       : grow(rd, &r, (void **)&g->outputs, &g->output_count, &out_cap,
                                              sizeof *v, ONNX_MAX_TENSORS, "graph outputs", &st);
            if (v)
                st = read_value(rd, inner, v);
        }
    }
    if (st == EMBER_OK && !g->name && !(g->name = strdup("")))
        st = nomem(rd);
    return st;
}

/* -------------------------------------------------------------- the model */

void onnx_model_free(struct onnx_model *m)
{
    if (!m)
        return;
    struct onnx_graph *g = &m->graph;
    for (int i = 0; i < g->node_count; i++)
        onnx_node_free(&g->nodes[i]);
    for (int i = 0; i < g->initializer_count; i++)
        onnx_tensor_free(&g->initializers[i]);
    for (int i = 0; i < g->input_count; i++)
        value_free(&g->inputs[i]);
    for (int i = 0; i < g->output_count; i++)
        value_free(&g->outputs[i]);
    free(g->nodes);
    free(g->initializers);
    free(g->inputs);
    free(g->outputs);
    free(g->name);
    for (int i = 0; i < m->meta_count; i++) {
        free(m->meta_keys[i]);
        free(m->meta_values[i]);
    }
    free(m->meta_keys);
    free(m->meta_values);
    free(m->producer);
    *m = (struct onnx_model){0};
}

/* OperatorSetIdProto: the default domain's version is the opset */
static ember_status read_opset(struct rd *rd, struct pb_reader r, struct onnx_model *m)
{
    char *domain = NULL;
    int64_t version = 0;
    ember_status st = EMBER_OK;
    uint32_t field;
    int wire;
    while (next_field(rd, &r, &field, &wire, &st)) {
        if (field == 1)
            st = read_string(rd, &r, wire, ONNX_MAX_STRING, &domain);
        else if (field == 2)
            st = read_int(rd, &r, wire, &version);
        else
            st = skip_field(rd, &r, field, wire);
    }
    if (st == EMBER_OK && (!domain || !domain[0] || strcmp(domain, "ai.onnx") == 0))
        m->opset = version;
    free(domain);
    return st;
}

/* StringStringEntryProto: ember.model_text may be a whole model file */
static ember_status read_metadata(struct rd *rd, struct pb_reader r, struct onnx_model *m, int *cap)
{
    if (m->meta_count == ONNX_MAX_METADATA)
        return bad(rd, &r, "more than %d metadata entries", ONNX_MAX_METADATA);
    if (m->meta_count == *cap) {
        int next = *cap ? 2 * *cap : 8;
        char **keys = realloc(m->meta_keys, (size_t)next * sizeof *keys);
        if (keys)
            m->meta_keys = keys;
        char **values = keys ? realloc(m->meta_values, (size_t)next * sizeof *values) : NULL;
        if (!values)
            return nomem(rd);
        m->meta_values = values;
        *cap = next;
    }
    char *key = NULL, *value = NULL;
    ember_status st = EMBER_OK;
    uint32_t field;
    int wire;
    while (next_field(rd, &r, &field, &wire, &st)) {
        if (field == 1)
            st = read_string(rd, &r, wire, ONNX_MAX_STRING, &key);
        else if (field == 2)
            st = read_string(rd, &r, wire, 1 << 20, &value);
        else
            st = skip_field(rd, &r, field, wire);
    }
    if (st == EMBER_OK && (key || (key = strdup(""))) && (value || (value = strdup("")))) {
        m->meta_keys[m->meta_count] = key;
        m->meta_values[m->meta_count++] = value;
        return EMBER_OK;
    }
    free(key);
    free(value);
    return st == EMBER_OK ? nomem(rd) : st;
}

ember_status onnx_model_read(ember_ctx *ctx, const char *what, const void *data, size_t size,
                             struct onnx_model *m)
{
    *m = (struct onnx_model){.opset = 1};
    struct rd rd = {ctx, what, data};
    if (size > ONNX_MAX_FILE)
        return bad(&rd, NULL, "over 2 GiB");
    struct pb_reader r = {data, (const uint8_t *)data + size};
    bool has_graph = false;
    int meta_cap = 0;
    ember_status st = EMBER_OK;
    uint32_t field;
    int wire;
    while (next_field(&rd, &r, &field, &wire, &st)) {
        struct pb_reader inner;
        switch (field) {
        case 1: st = read_int(&rd, &r, wire, &m->ir_version); break;
        case 2: st = read_string(&rd, &r, wire, ONNX_MAX_STRING, &m->producer); break;
        case 7:
        case 8:
        case 14:
            if (wire != PB_BYTES || !pb_read_bytes(&r, &inner)) {
                st = bad(&rd, &r, "model field %u is not a message", field);
            } else if (field == 7) {
                st = has_graph ? bad(&rd, &r, "a second graph") : read_graph(&rd, inner, &m->graph);
                has_graph = true;
            } else {
                st = field == 8 ? read_opset(&rd, inner, m) : read_metadata(&rd, inner, m, &meta_cap);
            }
            break;
        default: st = skip_field(&rd, &r, field, wire);
        }
    }
    if (st == EMBER_OK && !has_graph)
        st = bad(&rd, NULL, "no graph (is it an ONNX model at all?)");
    if (st == EMBER_OK && !m->producer && !(m->producer = strdup("")))
        st = nomem(&rd);
    if (st != EMBER_OK)
        onnx_model_free(m);
    return st;
}
