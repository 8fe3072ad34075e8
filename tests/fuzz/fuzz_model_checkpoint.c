/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_model_checkpoint.c — a model built from what a
 * checkpoint's metadata says (ember_model_from_checkpoint_memory): its
 * model text or built-in name, input shape and class count, then its
 * tensors loaded into it. A checkpoint is a claim: the model it describes
 * is checked against its tensors before anything is allocated, so a small
 * input must never cost a large model (libFuzzer's -malloc_limit_mb and
 * -rss_limit_mb). A model that builds classifies one sample.
 */
#include <math.h>
#include <stdlib.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_ctx *ctx = fuzz_ctx();
    ember_model *m = ember_model_from_checkpoint_memory(ctx, data, size);
    if (!m)
        return 0;
    int64_t shape[3], numel = 1;
    int ndim = ember_model_sample_shape(m, shape), classes = ember_model_classes(m);
    for (int i = 0; i < ndim; i++)
        numel *= shape[i];
    if (numel <= 4096 && classes <= 4096) {
        float x[4096], probs[4096];
        for (int64_t i = 0; i < numel; i++)
            x[i] = (float)(i % 13) / 13.0f;
        if (ember_model_predict_probs(m, x, 1, probs) != EMBER_OK)
            abort(); /* a model that loaded runs */
    }
    ember_model_free(m);
    return 0;
}
