/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/lm-run.c — a GGUF language model run by ember, for
 * test_lm_vs_torch.py to hold against its PyTorch twin:
 *
 *     lm-run MODEL.gguf LOGITS.f32 COUNT TOKEN...
 *
 * feeds the tokens (the prompt) through the key/value cache, writes the
 * last position's scores (vocab floats) to LOGITS.f32, then generates
 * COUNT tokens greedily and prints them on one line; with COUNT negative,
 * it instead runs the prompt through ember_lm_forward (no cache, every
 * position) and writes every position's scores (T x vocab). The device
 * is $EMBER_TEST_DEVICE (cpu by default); EMBER_TEST_MATMUL_PRECISION=medium
 * sets EMBER_MATMUL_MEDIUM (the CPU's 8-bit activations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"
#include "test-util.h"

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: lm-run MODEL.gguf LOGITS.f32 COUNT TOKEN...\n");
        return 2;
    }
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    const char *precision = getenv("EMBER_TEST_MATMUL_PRECISION");
    if (precision && strcmp(precision, "medium") == 0)
        ember_ctx_set_matmul_precision(ctx, EMBER_MATMUL_MEDIUM);
    ember_lm *lm = ember_lm_load(ctx, argv[1], NULL);
    if (!lm) {
        fprintf(stderr, "%s\n", ember_last_error(ctx));
        ember_ctx_free(ctx);
        return 1;
    }
    fprintf(stderr, "%s\n", ember_lm_describe(lm));
    int n = argc - 4, count = atoi(argv[3]), rc = 0;
    int32_t *tokens = malloc((size_t)n * sizeof *tokens);
    int64_t vocab = ember_lm_vocab(lm);
    float *logits = malloc((size_t)(vocab * n) * sizeof *logits);
    for (int i = 0; i < n; i++)
        tokens[i] = atoi(argv[4 + i]);
    FILE *out = fopen(argv[2], "wb");
    if (count < 0) { /* every position, by the tape's forward pass */
        const int64_t shape[2] = {1, n};
        ember_tensor *ids = ember_tensor_new(ctx, EMBER_I32, 2, shape);
        ember_tensor *scores = ids && ember_tensor_write(ids, tokens, (size_t)n * 4) == EMBER_OK
                                   ? ember_lm_forward(lm, ids)
                                   : NULL;
        rc = !scores || ember_tensor_read(scores, logits, (size_t)(vocab * n) * 4) != EMBER_OK || !out ||
             fwrite(logits, 4, (size_t)(vocab * n), out) != (size_t)(vocab * n);
        ember_tensor_free(ids);
    } else {
        rc = ember_lm_feed(lm, tokens, n, logits) != EMBER_OK || !out ||
             fwrite(logits, 4, (size_t)vocab, out) != (size_t)vocab;
        for (int i = 0; i < count && !rc; i++) {
            int32_t next = ember_lm_sample(lm, logits, NULL, NULL);
            printf(i ? " %d" : "%d", next);
            rc = ember_lm_feed(lm, &next, 1, logits) != EMBER_OK;
        }
        printf("\n");
    }
    if (rc)
        fprintf(stderr, "lm-run: %s\n", ember_last_error(ctx));
    if (out)
        fclose(out);
    free(tokens);
    free(logits);
    ember_lm_free(lm);
    ember_ctx_free(ctx);
    return rc;
}
