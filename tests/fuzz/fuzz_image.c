/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_image.c — an image file as the folder loader and
 * ember_image_load read it: its size, then decoded to gray and to RGB, then
 * resized into a sample. Built three times (tests/fuzz/CMakeLists.txt) with
 * FUZZ_MAGIC set to PNG's, JPEG's or BMP's first bytes, which overwrite the
 * input's, so that each harness stays inside one decoder.
 */
#include <stdlib.h>
#include <string.h>

#include "data-impl.h"
#include "fuzz-util.h"

#ifndef FUZZ_MAGIC
#error "build with FUZZ_MAGIC, the format's first bytes"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char magic[] = FUZZ_MAGIC;
    size_t m = sizeof magic - 1;
    uint8_t *bytes = malloc(size > m ? size : m);
    if (!bytes)
        return 0;
    memcpy(bytes, data, size);
    memcpy(bytes, magic, m);
    size = size > m ? size : m;
    ember_ctx *ctx = fuzz_ctx();
    int width, height, channels;
    if (ember_image_info(ctx, "fuzz", bytes, size, &width, &height, &channels) == EMBER_OK) {
        for (int c = 1; c <= 3; c += 2) {
            uint8_t *pixels = NULL;
            if (ember_image_decode(ctx, "fuzz", bytes, size, c, &width, &height, &pixels) == EMBER_OK) {
                /* every pixel is there to be read (ASan checks the reads) */
                unsigned sum = 0;
                for (size_t i = 0; i < (size_t)width * (size_t)height * (size_t)c; i++)
                    sum += pixels[i];
                (void)sum;
            }
            ember_image_free(pixels);
        }
        uint8_t sample[3 * 5 * 7];
        ember_image_sample(ctx, "fuzz", bytes, size, 3, 5, 7, true, "the fuzzer", sample);
    }
    free(bytes);
    return 0;
}
