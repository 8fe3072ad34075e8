/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/gguf-dump.c — what io/gguf.c reads from a GGUF file, for
 * test_gguf_vs_python.py to hold against the `gguf` package's reader:
 *
 *     gguf-dump FILE OUTDIR
 *
 * prints a line per tensor ("name dtype d0,d1,..." in the row-major order
 * ember keeps) and writes its values, dequantised, as OUTDIR/<name>.f32;
 * then a line per metadata key ("key type count"). Exit 1 with ember's
 * message when the file is refused.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gguf-impl.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gguf-dump FILE OUTDIR\n");
        return 2;
    }
    ember_ctx *ctx = ember_ctx_new();
    struct gguf_file f;
    if (!ctx || gguf_open(ctx, argv[1], &f) != EMBER_OK) {
        fprintf(stderr, "%s\n", ctx ? ember_last_error(ctx) : "no context");
        ember_ctx_free(ctx);
        return 1;
    }
    int rc = 0;
    for (int64_t i = 0; i < f.tensor_count && rc == 0; i++) {
        const struct gguf_tensor *t = &f.tensors[i];
        char name[300], path[4096], type[32];
        snprintf(name, sizeof name, "%.*s", (int)t->name.len, t->name.data);
        printf("tensor %s %s ", name, gguf_tensor_type_name(t->type, type, sizeof type));
        for (int d = 0; d < t->ndim; d++)
            printf(d ? ",%lld" : "%lld", (long long)t->shape[d]);
        printf("\n");
        float *values = malloc((size_t)t->numel * sizeof *values);
        snprintf(path, sizeof path, "%s/%s.f32", argv[2], name);
        FILE *out = values ? fopen(path, "wb") : NULL;
        if (!out || gguf_tensor_to_f32(ctx, t, values) != EMBER_OK ||
            fwrite(values, sizeof *values, (size_t)t->numel, out) != (size_t)t->numel) {
            fprintf(stderr, "cannot dump %s: %s\n", name, ember_last_error(ctx));
            rc = 1;
        }
        if (out)
            fclose(out);
        free(values);
    }
    for (int64_t i = 0; i < f.kv_count; i++) {
        const struct gguf_kv *kv = &f.kvs[i];
        printf("key %.*s %s %llu\n", (int)kv->key.len, kv->key.data,
               kv->type == GGUF_ARRAY ? gguf_type_name(kv->item_type) : gguf_type_name(kv->type),
               (unsigned long long)(kv->type == GGUF_ARRAY ? kv->count : 1));
    }
    gguf_close(&f);
    ember_ctx_free(ctx);
    return rc;
}
