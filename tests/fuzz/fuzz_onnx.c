/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_onnx.c — an ONNX file into a model: the input is read as
 * ModelProto and imported (ember_onnx_to_checkpoint_memory: the graph
 * walked into a model file, the model built and its weights written), and
 * as a lone TensorProto. An import that succeeds must give a checkpoint
 * that loads back into a model of the same class count.
 */
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
