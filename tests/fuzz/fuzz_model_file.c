/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_model_file.c — a model file's text, parsed and built for
 * 3x8x8 samples and 4 classes. Layers of absurd sizes must fail as errors
 * (out of memory is one), not as crashes.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const int64_t shape[3] = {3, 8, 8};
    ember_model_free(ember_model_parse(fuzz_ctx(), "fuzz.model", text, 3, shape, 4, 0));
    free(text);
    return 0;
}
