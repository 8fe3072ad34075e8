/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_gguf.c — a GGUF file from memory: the header, metadata
 * and tensor table checked (io/gguf.c), every tensor's values converted to
 * floats, and the tokenizer built from the metadata (models/lm-tokenizer.c)
 * and run on a fixed text, special tokens and all. An input that opens must
 * hold only tensors whose data lies inside it; one that does not must leave
 * nothing held (the sanitizers' leak check).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "gguf-impl.h"
#include "lm-impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_ctx *ctx = fuzz_ctx();
    struct gguf_file f;
    if (gguf_open_memory(ctx, data, size, &f) != EMBER_OK)
        return 0;
    for (int64_t i = 0; i < f.tensor_count; i++) {
        const struct gguf_tensor *t = &f.tensors[i];
        if (t->data < data || t->data + t->bytes > data + size)
            abort(); /* a tensor outside the file passed the checks */
        float *values = t->numel <= (1 << 22) ? malloc((size_t)t->numel * sizeof *values) : NULL;
        if (values)
            gguf_tensor_to_f32(ctx, t, values);
        free(values);
    }
    struct lm_tokenizer *tok = lm_tokenizer_load(ctx, &f);
    if (tok) {
        static const char text[] =
            "Hello, world! It's 2026: <|im_start|>user\n\xc3\xa9\xe2\x82\xac \xff\xfe  ok\n";
        int32_t ids[256];
        int64_t n = lm_tokenize(ctx, tok, text, sizeof text - 1, true, ids, 256);
        char piece[64];
        for (int64_t i = 0; i < n && i < 256; i++)
            lm_token_bytes(tok, ids[i], piece, sizeof piece);
        lm_tokenizer_free(tok);
    }
    gguf_close(&f);
    return 0;
}
