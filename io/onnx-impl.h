/* SPDX-License-Identifier: MIT */
/*
 * io/onnx-impl.h — ONNX files: the few protobuf messages a model is made
 * of, read into plain C structs and written back out.
 *
 * An ONNX file is one protobuf message, ModelProto, and protobuf's wire
 * format is small: a message is a run of fields, each a key (the field's
 * number << 3 | its wire type) then its value: a varint (wire type 0), 8
 * bytes (1), a length and that many bytes (2: strings, bytes, nested
 * messages, packed repeated numbers) or 4 bytes (5). A reader keeps the
 * fields it knows and skips the rest by their wire type, which is how
 * protobuf stays compatible across versions. So ember has its own reader
 * and writer (io/onnx-wire.c, a few hundred lines) rather than a protobuf
 * library and generated code (docs/design.md, "ONNX").
 *
 * The messages kept, by field number (onnx.proto3):
 *
 *   ModelProto      1 ir_version, 2 producer_name, 7 graph, 8 opset_import
 *                   (OperatorSetIdProto: 1 domain, 2 version), 14
 *                   metadata_props (StringStringEntryProto: 1 key, 2 value)
 *   GraphProto      1 node, 2 name, 5 initializer, 11 input, 12 output
 *   NodeProto       1 input, 2 output, 3 name, 4 op_type, 5 attribute, 7 domain
 *   AttributeProto  1 name, 2 f, 3 i, 4 s, 5 t, 7 floats, 8 ints, 20 type
 *   TensorProto     1 dims, 2 data_type, 4 float_data, 5 int32_data, 7
 *                   int64_data, 8 name, 9 raw_data, 10 double_data, 13
 *                   external_data (refused)
 *   ValueInfoProto  1 name, 2 type -> TypeProto 1 tensor_type -> 1
 *                   elem_type, 2 shape -> TensorShapeProto 1 dim -> 1
 *                   dim_value, 2 dim_param
 *
 * Subgraphs (If, Loop) and sparse tensors are skipped unread: ember has no
 * operator that takes them, and the importer names any node it cannot run.
 *
 *     struct onnx_model m;
 *     if (onnx_model_read(ctx, "net.onnx", bytes, size, &m) != EMBER_OK)
 *         return ember_last_status(ctx);       // the message says what and where
 *     for (int i = 0; i < m.graph.node_count; i++)
 *         printf("%s %s\n", m.graph.nodes[i].op_type, m.graph.nodes[i].name);
 *     onnx_model_free(&m);
 *
 * The reader treats every file as hostile. Every length is checked against
 * the bytes left before anything is allocated for it; the messages nest as
 * the schema says and no deeper (ModelProto to a dimension is 7 levels; it
 * never recurses on the input), varints stop at 10 bytes, and counts are
 * capped: ONNX_MAX_NODES nodes, ONNX_MAX_TENSORS initializers,
 * ONNX_MAX_DIMS dimensions, ONNX_MAX_ATTRS attributes per node, strings of
 * ONNX_MAX_STRING bytes. A tensor's data must be exactly its shape's
 * elements. On any failure nothing is held.
 */
#ifndef EMBER_ONNX_IMPL_H
#define EMBER_ONNX_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"

#define ONNX_MAX_FILE     ((size_t)2 << 30) /* protobuf's own limit on a message */
#define ONNX_MAX_NODES    100000
#define ONNX_MAX_TENSORS  100000
#define ONNX_MAX_DIMS     8
#define ONNX_MAX_ATTRS    64
#define ONNX_MAX_INPUTS   64   /* of a node */
#define ONNX_MAX_STRING   4096 /* a name, an op type, a metadata value is longer only as ember.model_text */
#define ONNX_MAX_METADATA 64

/* TensorProto.DataType values ember reads */
enum onnx_type {
    ONNX_FLOAT = 1,
    ONNX_INT32 = 6,
    ONNX_INT64 = 7,
    ONNX_BOOL = 9, /* read as ints of 0 and 1 */
    ONNX_FLOAT16 = 10,
    ONNX_DOUBLE = 11,
    ONNX_BFLOAT16 = 16,
};

/* A tensor: an initializer, a Constant's value, or a test case's .pb. */
struct onnx_tensor {
    char *name;
    int type; /* enum onnx_type */
    int ndim;
    int64_t dims[ONNX_MAX_DIMS];
    int64_t numel;
    float *values; /* floating-point types, as float32 (numel); NULL otherwise */
    int64_t *ints; /* INT64 and INT32 (numel); NULL otherwise */
};

/* AttributeProto.AttributeType */
/* clang-format off */
enum onnx_attr_type { ONNX_ATTR_FLOAT = 1, ONNX_ATTR_INT = 2, ONNX_ATTR_STRING = 3, ONNX_ATTR_TENSOR = 4,
                      ONNX_ATTR_FLOATS = 6, ONNX_ATTR_INTS = 7 };
/* clang-format on */

struct onnx_attr {
    char *name;
    int type; /* enum onnx_attr_type; others are kept as their type alone */
    float f;
    int64_t i;
    char *s;
    struct onnx_tensor *t;
    int64_t *ints;
    int int_count;
    float *floats;
    int float_count;
};

struct onnx_node {
    char *name, *op_type, *domain;
    char **inputs, **outputs; /* "" is an input left out */
    int input_count, output_count;
    struct onnx_attr *attrs;
    int attr_count;
};

/* A graph input or output: a name, an element type and a shape whose
 * dimensions are numbers or names ("batch": dims[i] is then -1). */
struct onnx_value {
    char *name;
    int type;
    int ndim; /* -1: no shape given */
    int64_t dims[ONNX_MAX_DIMS];
    char *dim_names[ONNX_MAX_DIMS]; /* NULL, or the dimension's name */
};

struct onnx_graph {
    char *name;
    struct onnx_node *nodes;
    int node_count;
    struct onnx_tensor *initializers;
    int initializer_count;
    struct onnx_value *inputs, *outputs;
    int input_count, output_count;
};

struct onnx_model {
    int64_t ir_version;
    int64_t opset; /* of the default domain ("" or "ai.onnx") */
    char *producer;
    struct onnx_graph graph;
    char **meta_keys, **meta_values;
    int meta_count;
};

/* Parses `size` bytes of a ModelProto; `what` names it in messages. */
ember_status onnx_model_read(ember_ctx *ctx, const char *what, const void *data, size_t size,
                             struct onnx_model *m);
/* A TensorProto on its own (ONNX's test cases keep inputs and outputs so). */
ember_status onnx_tensor_read(ember_ctx *ctx, const char *what, const void *data, size_t size,
                              struct onnx_tensor *t);
void onnx_model_free(struct onnx_model *m);
void onnx_tensor_free(struct onnx_tensor *t);
void onnx_node_free(struct onnx_node *n);

/* The model as ModelProto bytes, in a buffer to free(). Float tensors are
 * written as raw_data (little-endian float32), INT64 ones as raw_data too. */
ember_status onnx_model_write(ember_ctx *ctx, const struct onnx_model *m, void **data, size_t *size);

/* A node's attribute by name, or NULL. */
const struct onnx_attr *onnx_attr_find(const struct onnx_node *n, const char *name);

/* The whole file at `path` (a regular file of at most ONNX_MAX_FILE bytes)
 * in a buffer to free(). */
ember_status onnx_file_slurp(ember_ctx *ctx, const char *path, void **data, size_t *size);

/* --------------------------------------------------------- wire format */

/* A message being read: the bytes left, and where we are for messages. */
struct pb_reader {
    const uint8_t *at, *end;
};

/* A message being written: bytes that grow. `failed` sticks after an
 * allocation fails; the writer checks it once at the end. */
struct pb_writer {
    uint8_t *data;
    size_t len, cap;
    bool failed;
};

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_BYTES = 2, PB_FIXED32 = 5 };

/* Reading: each returns false on bytes that cannot be a field. */
bool pb_read_varint(struct pb_reader *r, uint64_t *v);
bool pb_read_key(struct pb_reader *r, uint32_t *field, int *wire);
/* a length-delimited field's bytes, as a reader of their own */
bool pb_read_bytes(struct pb_reader *r, struct pb_reader *inner);
bool pb_read_fixed32(struct pb_reader *r, uint32_t *v);
bool pb_read_fixed64(struct pb_reader *r, uint64_t *v);
/* skips one field's value of wire type `wire` */
bool pb_skip(struct pb_reader *r, int wire);

/* Writing: the key and the value. */
void pb_write_varint(struct pb_writer *w, uint32_t field, uint64_t v);
void pb_write_bytes(struct pb_writer *w, uint32_t field, const void *data, size_t len);
void pb_write_string(struct pb_writer *w, uint32_t field, const char *s);
void pb_write_float(struct pb_writer *w, uint32_t field, float v);
/* a nested message: its bytes, written into `inner`, appended as a field
 * (and `inner` emptied for reuse) */
void pb_write_message(struct pb_writer *w, uint32_t field, struct pb_writer *inner);
void pb_writer_free(struct pb_writer *w);

#endif /* EMBER_ONNX_IMPL_H */
