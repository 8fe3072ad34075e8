/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_safetensors.c — a checkpoint into a model: the input is
 * loaded into a small model (linear layers and a BatchNorm, so buffers too)
 * and its metadata read, both from memory. A failed load must leave the
 * model as it was, which is checked on every input; an input that does
 * load is undone, so that every input meets the same model.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"

static ember_model *model;
static void *original;
static size_t original_size;

static void setup(void)
{
    const int64_t shape[1] = {6};
    model = ember_model_parse(fuzz_ctx(), "fuzz", "fc: linear 4\nbn: batch_norm1d\nout: linear classes\n", 1,
                              shape, 3, 1);
    if (!model || ember_model_save_memory(model, NULL, &original, &original_size) != EMBER_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!model)
        setup();
    ember_ctx *ctx = fuzz_ctx();
    float in[2 * 6] = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, before[6], after[6];
    if (ember_model_predict(model, in, 2, before) != EMBER_OK)
        abort();
    if (ember_model_load_memory(model, data, size) == EMBER_OK) {
        if (ember_model_load_memory(model, original, original_size) != EMBER_OK)
            abort();
    } else if (ember_model_predict(model, in, 2, after) != EMBER_OK ||
               memcmp(before, after, sizeof before) != 0) {
        abort(); /* a failed load changed the model */
    }
    ember_checkpoint *ck = ember_checkpoint_open_memory(ctx, data, size);
    for (int i = 0; i < ember_checkpoint_meta_count(ck); i++) {
        const char *value = NULL;
        const char *key = ember_checkpoint_meta_at(ck, i, &value);
        if (!key || !value || strlen(key) > size || strlen(value) > size)
            abort();
    }
    ember_checkpoint_close(ck);
    return 0;
}
