/* SPDX-License-Identifier: MIT */
/*
 * io/onnx-write.c — struct onnx_model into ModelProto bytes: the fields
 * io/onnx-impl.h lists, in field order, each message built in a writer of
 * its own and appended to its parent's. Tensors go out as raw_data
 * (little-endian), as every producer writes large ones.
 */
#include <stdlib.h>
#include <string.h>

#include "onnx-impl.h"

static void write_tensor(struct pb_writer *w, const struct onnx_tensor *t)
{
    for (int i = 0; i < t->ndim; i++)
        pb_write_varint(w, 1, (uint64_t)t->dims[i]);
    pb_write_varint(w, 2, (uint64_t)t->type);
    pb_write_string(w, 8, t->name);
    size_t n = (size_t)t->numel, width = t->type == ONNX_INT64 ? 8 : 4;
    uint8_t *raw = malloc(n * width + 1);
    if (!raw) {
        w->failed = true;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = 0;
        if (t->type == ONNX_INT64) {
            bits = (uint64_t)t->ints[i];
        } else {
            uint32_t u;
            memcpy(&u, &t->values[i], 4);
            bits = u;
        }
        for (size_t b = 0; b < width; b++)
            raw[i * width + b] = (uint8_t)(bits >> (8 * b));
    }
    pb_write_bytes(w, 9, raw, n * width);
    free(raw);
}

static void write_attr(struct pb_writer *w, const struct onnx_attr *a)
{
    struct pb_writer inner = {0};
    pb_write_string(w, 1, a->name);
    switch (a->type) {
    case ONNX_ATTR_FLOAT: pb_write_float(w, 2, a->f); break;
    case ONNX_ATTR_INT: pb_write_varint(w, 3, (uint64_t)a->i); break;
    case ONNX_ATTR_STRING: pb_write_string(w, 4, a->s); break;
    case ONNX_ATTR_TENSOR:
        write_tensor(&inner, a->t);
        pb_write_message(w, 5, &inner);
        break;
    case ONNX_ATTR_FLOATS:
        for (int i = 0; i < a->float_count; i++)
            pb_write_float(w, 7, a->floats[i]);
        break;
    case ONNX_ATTR_INTS:
        for (int i = 0; i < a->int_count; i++)
            pb_write_varint(w, 8, (uint64_t)a->ints[i]);
        break;
    }
    pb_write_varint(w, 20, (uint64_t)a->type);
    pb_writer_free(&inner);
}

static void write_node(struct pb_writer *w, const struct onnx_node *n)
{
    struct pb_writer inner = {0};
    for (int i = 0; i < n->input_count; i++)
        pb_write_string(w, 1, n->inputs[i]);
    for (int i = 0; i < n->output_count; i++)
        pb_write_string(w, 2, n->outputs[i]);
    pb_write_string(w, 3, n->name);
    pb_write_string(w, 4, n->op_type);
    for (int i = 0; i < n->attr_count; i++) {
        write_attr(&inner, &n->attrs[i]);
        pb_write_message(w, 5, &inner);
    }
    if (n->domain && n->domain[0])
        pb_write_string(w, 7, n->domain);
    pb_writer_free(&inner);
}

/* ValueInfoProto { name, TypeProto { tensor_type { elem_type, shape { dim... } } } } */
static void write_value(struct pb_writer *w, const struct onnx_value *v)
{
    struct pb_writer dim = {0}, shape = {0}, tensor = {0}, type = {0};
    pb_write_string(w, 1, v->name);
    for (int i = 0; i < v->ndim; i++) {
        if (v->dim_names[i])
            pb_write_string(&dim, 2, v->dim_names[i]);
        else
            pb_write_varint(&dim, 1, (uint64_t)v->dims[i]);
        pb_write_message(&shape, 1, &dim);
    }
    pb_write_varint(&tensor, 1, (uint64_t)v->type);
    if (v->ndim >= 0)
        pb_write_message(&tensor, 2, &shape);
    pb_write_message(&type, 1, &tensor);
    pb_write_message(w, 2, &type);
    w->failed |= dim.failed || shape.failed || tensor.failed || type.failed;
    pb_writer_free(&dim);
    pb_writer_free(&shape);
    pb_writer_free(&tensor);
    pb_writer_free(&type);
}

ember_status onnx_model_write(ember_ctx *ctx, const struct onnx_model *m, void **data, size_t *size)
{
    struct pb_writer w = {0}, graph = {0}, inner = {0};
    const struct onnx_graph *g = &m->graph;
    pb_write_varint(&w, 1, (uint64_t)m->ir_version);
    pb_write_string(&w, 2, m->producer ? m->producer : "");
    for (int i = 0; i < g->node_count; i++) {
        write_node(&inner, &g->nodes[i]);
        pb_write_message(&graph, 1, &inner);
    }
    pb_write_string(&graph, 2, g->name ? g->name : "graph");
    for (int i = 0; i < g->initializer_count; i++) {
        write_tensor(&inner, &g->initializers[i]);
        pb_write_message(&graph, 5, &inner);
    }
    for (int i = 0; i < g->input_count; i++) {
        write_value(&inner, &g->inputs[i]);
        pb_write_message(&graph, 11, &inner);
    }
    for (int i = 0; i < g->output_count; i++) {
        write_value(&inner, &g->outputs[i]);
        pb_write_message(&graph, 12, &inner);
    }
    pb_write_message(&w, 7, &graph);
    pb_write_varint(&inner, 2, (uint64_t)m->opset); /* the default domain: no field 1 */
    pb_write_message(&w, 8, &inner);
    for (int i = 0; i < m->meta_count; i++) {
        pb_write_string(&inner, 1, m->meta_keys[i]);
        pb_write_string(&inner, 2, m->meta_values[i]);
        pb_write_message(&w, 14, &inner);
    }
    bool failed = w.failed || graph.failed || inner.failed;
    pb_writer_free(&graph);
    pb_writer_free(&inner);
    if (failed) {
        pb_writer_free(&w);
        return ember_set_error(ctx, EMBER_ERR_NOMEM, "out of host memory writing an ONNX model");
    }
    *data = w.data;
    *size = w.len;
    return EMBER_OK;
}
