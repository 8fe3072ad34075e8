/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_onnx.c — an ONNX file into a model: the input is read as
 * ModelProto and imported (ember_onnx_to_checkpoint_memory: the graph
 * walked into a model file, the model built and its weights written), and
 * as a lone TensorProto. An import that succeeds must give a checkpoint
 * that loads back into a model of the same class count.
 *
 * Under libFuzzer the inputs are also mutated as graphs, not only as
 * bytes (LLVMFuzzerCustomMutator): an input that reads as a model gets a
 * cycle (a node fed by its own output or a later one's, an Identity of
 * itself), a long chain of
 * Relus or of residual blocks, branches crossed (an input rewired to any
 * value), a node's operator changed, or an initializer whose packed dims
 * or data are far past their limits, and is written back. Byte mutations
 * alone took 903,795 executions without reaching the Identity cycle that a
 * 287-byte hand-made file hung the importer with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "onnx-impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_ctx *ctx = fuzz_ctx();
    void *ck = NULL;
    size_t ck_size = 0;
    if (ember_onnx_to_checkpoint_memory(ctx, "fuzz.onnx", data, size, &ck, &ck_size) == EMBER_OK) {
        ember_model *m = ember_model_from_checkpoint_memory(ctx, ck, ck_size);
        if (!m || ember_model_classes(m) < 1)
            abort(); /* an import that cannot be loaded back */
        ember_model_free(m);
    } else if (ck || ck_size) {
        abort(); /* a failed import left something behind */
    }
    free(ck);
    struct onnx_tensor t;
    if (onnx_tensor_read(ctx, "fuzz.pb", data, size, &t) == EMBER_OK) {
        if (t.numel < 0 || t.ndim > ONNX_MAX_DIMS)
            abort();
        onnx_tensor_free(&t);
    }
    ember_clear_error(ctx);
    return 0;
}

#ifdef EMBER_LIBFUZZER
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint32_t next_random(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static char *dup_name(const char *fmt, unsigned a, unsigned b)
{
    char name[64];
    snprintf(name, sizeof name, fmt, a, b);
    return strdup(name);
}

/* a node appended to the graph: op(in0[, in1]) -> out, its strings owned */
static bool add_node(struct onnx_graph *g, const char *op, char *in0, char *in1, char *out)
{
    struct onnx_node *more = realloc(g->nodes, (size_t)(g->node_count + 1) * sizeof *more);
    if (!more)
        return false;
    g->nodes = more;
    struct onnx_node *n = &g->nodes[g->node_count++];
    memset(n, 0, sizeof *n);
    n->name = strdup("");
    n->op_type = strdup(op);
    n->domain = strdup("");
    n->inputs = calloc(2, sizeof *n->inputs);
    n->outputs = calloc(1, sizeof *n->outputs);
    if (n->inputs) {
        n->inputs[n->input_count++] = in0;
        if (in1)
            n->inputs[n->input_count++] = in1;
    }
    if (n->outputs)
        n->outputs[n->output_count++] = out;
    return n->name && n->op_type && n->domain && n->inputs && n->outputs && in0 &&
           (in1 || n->input_count == 1) && out;
}

/* the value names a mutation may pick: every node's first output, and the graph's input */
static const char *some_value(const struct onnx_graph *g, uint32_t *r)
{
    int k = (int)(next_random(r) % (uint32_t)(g->node_count + 1));
    if (k < g->node_count && g->nodes[k].output_count)
        return g->nodes[k].outputs[0];
    return g->input_count ? g->inputs[0].name : "x";
}

/* A chain of `count` Relus (or Relu + Add blocks) from the value feeding
 * node 0's first input into it. */
static void add_chain(struct onnx_graph *g, unsigned count, bool residual, uint32_t *r)
{
    if (!g->node_count || !g->nodes[0].input_count)
        return;
    unsigned tag = next_random(r) % 1000;
    char *from = strdup(g->nodes[0].inputs[0]);
    for (unsigned i = 0; i < count && from; i++) {
        char *relu = dup_name("m%u_r%u", tag, i);
        if (!add_node(g, "Relu", strdup(from), NULL, relu))
            break;
        char *next = relu ? strdup(relu) : NULL;
        if (residual) {
            free(next);
            next = dup_name("m%u_h%u", tag, i);
            if (!add_node(g, "Add", strdup(relu), strdup(from), next ? strdup(next) : NULL))
                break;
        }
        free(from);
        from = next;
    }
    if (from) {
        free(g->nodes[0].inputs[0]);
        g->nodes[0].inputs[0] = from;
    }
}

/* The graph's values the writer can write: a tensor it cannot (no numbers
 * read: an unknown type) becomes an empty INT64 one. */
static void make_writable(struct onnx_tensor *t)
{
    if (t->ints && t->type != ONNX_INT64)
        t->type = ONNX_INT64;
    if (t->values && t->type != ONNX_FLOAT)
        t->type = ONNX_FLOAT;
    if (!t->values && !t->ints) {
        t->type = ONNX_INT64;
        t->ndim = 1;
        t->dims[0] = 0;
        t->numel = 0;
    }
}

static void put_raw(struct pb_writer *w, const void *p, size_t n)
{
    if (w->failed || !n)
        return;
    if (w->len + n > w->cap) {
        size_t cap = 2 * (w->len + n) + 64;
        uint8_t *more = realloc(w->data, cap);
        if (!more) {
            w->failed = true;
            return;
        }
        w->data = more;
        w->cap = cap;
    }
    memcpy(w->data + w->len, p, n);
    w->len += n;
}

/* ModelProto bytes with one more initializer in its graph: a tensor whose
 * dims (field 1) or int64_data (field 7) is a packed run of `count`
 * varints; written to out (max bytes), its size or 0 */
static size_t with_packed(const uint8_t *model, size_t size, unsigned count, bool dims, uint8_t *out,
                          size_t max)
{
    struct pb_reader r = {model, model + size};
    struct pb_writer w = {0}, graph = {0}, tensor = {0};
    uint8_t *run = malloc(count + 1);
    if (!run)
        return 0;
    memset(run, 1, count);
    if (!dims)
        pb_write_varint(&tensor, 1, 1);
    pb_write_varint(&tensor, 2, ONNX_INT64);
    pb_write_string(&tensor, 8, "packed");
    pb_write_bytes(&tensor, dims ? 1 : 7, run, count);
    free(run);
    uint32_t field;
    int wire;
    for (const uint8_t *start = r.at; r.at < r.end && pb_read_key(&r, &field, &wire); start = r.at) {
        struct pb_reader inner;
        if (field == 7 && wire == PB_BYTES && pb_read_bytes(&r, &inner)) { /* the graph, one tensor more */
            put_raw(&graph, inner.at, (size_t)(inner.end - inner.at));
            pb_write_message(&graph, 5, &tensor);
            pb_write_message(&w, 7, &graph);
        } else if (pb_skip(&r, wire)) { /* any other field as it was */
            put_raw(&w, start, (size_t)(r.at - start));
        } else {
            break;
        }
    }
    size_t n = !w.failed && !graph.failed && !tensor.failed && w.len <= max ? w.len : 0;
    if (n)
        memcpy(out, w.data, n);
    pb_writer_free(&w);
    pb_writer_free(&graph);
    pb_writer_free(&tensor);
    return n;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint32_t r = seed;
    struct onnx_model m;
    ember_ctx *ctx = fuzz_ctx();
    if (next_random(&r) % 2 || onnx_model_read(ctx, "mutated.onnx", data, size, &m) != EMBER_OK) {
        ember_clear_error(ctx);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    struct onnx_graph *g = &m.graph;
    unsigned room = max_size > size ? (unsigned)((max_size - size) / 24) : 0; /* about 24 bytes a node */
    unsigned long_one = 1 + next_random(&r) % (room < 4000 ? room + 1 : 4000);
    int what = (int)(next_random(&r) % 8);
    if (g->node_count && what == 7) { /* a = Identity(a): a value its own source, whoever reads it */
        struct onnx_node *n = &g->nodes[next_random(&r) % (uint32_t)g->node_count];
        if (n->input_count && n->output_count) {
            free(n->op_type);
            n->op_type = strdup("Identity");
            free(n->inputs[0]);
            n->inputs[0] = strdup(n->outputs[0]);
            while (n->input_count > 1)
                free(n->inputs[--n->input_count]);
        }
    } else if (g->node_count && what == 0) { /* a cycle: a node fed by its own output, or a later node's */
        int i = (int)(next_random(&r) % (uint32_t)g->node_count),
            j = i + (int)(next_random(&r) % (uint32_t)(g->node_count - i));
        struct onnx_node *n = &g->nodes[i];
        if (n->input_count && g->nodes[j].output_count) {
            free(n->inputs[0]);
            n->inputs[0] = strdup(g->nodes[j].outputs[0]);
        }
    } else if (what == 1 || what == 2) { /* a long chain of Relus, or of residual blocks */
        add_chain(g, what == 1 ? long_one : long_one / 2 + 1, what == 2, &r);
    } else if (g->node_count && what == 3) { /* branches crossed: any input of any node to any value */
        struct onnx_node *n = &g->nodes[next_random(&r) % (uint32_t)g->node_count];
        if (n->input_count) {
            int k = (int)(next_random(&r) % (uint32_t)n->input_count);
            free(n->inputs[k]);
            n->inputs[k] = strdup(some_value(g, &r));
        }
    } else if (g->node_count && what == 4) { /* another operator, of those the walk treats specially */
        static const char *const ops[] = {"Identity", "Add",    "Mul",    "Relu", "Constant", "Reshape",
                                          "Shape",    "Gather", "Concat", "Erf",  "Div",      "Sigmoid"};
        struct onnx_node *n = &g->nodes[next_random(&r) % (uint32_t)g->node_count];
        free(n->op_type);
        n->op_type = strdup(ops[next_random(&r) % (sizeof ops / sizeof ops[0])]);
    }
    for (int i = 0; i < g->initializer_count; i++)
        make_writable(&g->initializers[i]);
    for (int i = 0; i < g->node_count; i++)
        for (int k = 0; k < g->nodes[i].attr_count; k++) {
            struct onnx_attr *a = &g->nodes[i].attrs[k];
            if (a->t)
                make_writable(a->t);
            else if (a->type == ONNX_ATTR_TENSOR) /* a tensor attribute without its tensor: its name alone */
                a->type = 0;
            if (a->type == ONNX_ATTR_STRING && !a->s) /* a string attribute without its string, likewise */
                a->type = 0;
        }
    void *bytes = NULL;
    size_t n = 0;
    bool written = onnx_model_write(ctx, &m, &bytes, &n) == EMBER_OK;
    onnx_model_free(&m);
    ember_clear_error(ctx);
    if (written && (what == 5 || what == 6)) { /* packed dims or data far past their limits */
        unsigned count = 9 + next_random(&r) % (max_size > n + 64 ? (unsigned)(max_size - n - 64) : 1);
        n = with_packed(bytes, n, count, what == 5, data, max_size);
        free(bytes);
        return n ? n : LLVMFuzzerMutate(data, size, max_size);
    }
    if (!written || n > max_size) {
        free(bytes);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memcpy(data, bytes, n);
    free(bytes);
    return n;
}
#endif
