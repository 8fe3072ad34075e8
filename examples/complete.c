/* SPDX-License-Identifier: MIT */
/*
 * examples/complete.c — a pretrained language model inside a program:
 *
 *     complete MODEL.gguf "The capital of France is" [TOKENS] [DEVICE]
 *
 * loads a GGUF model (scripts/fetch-model.sh fetches SmolLM2-135M-Instruct
 * into build/models), feeds the prompt, and prints the most likely next
 * tokens as they come, until TOKENS (default 32) or the model's end token.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: complete MODEL.gguf PROMPT [TOKENS] [DEVICE]\n");
        return 2;
    }
    int count = argc > 3 ? atoi(argv[3]) : 32;
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx || ember_ctx_use_device(ctx, argc > 4 ? argv[4] : "auto") != EMBER_OK) {
        fprintf(stderr, "%s\n", ctx ? ember_last_error(ctx) : "no context");
        return 1;
    }
    ember_lm *lm = ember_lm_load(ctx, argv[1], NULL);
    float *logits = lm ? malloc((size_t)ember_lm_vocab(lm) * sizeof *logits) : NULL;
    int32_t prompt[512];
    int64_t n = lm ? ember_lm_tokenize(lm, argv[2], strlen(argv[2]), false, prompt, 512) : -1;
    if (!logits || n < 1 || n > 512 || ember_lm_feed(lm, prompt, n, logits) != EMBER_OK) {
        fprintf(stderr, "%s\n", n > 512 ? "the prompt is over 512 tokens" : ember_last_error(ctx));
        return 1;
    }
    fputs(argv[2], stdout);
    ember_sample_options greedy = {0};
    for (int i = 0; i < count; i++) {
        int32_t next = ember_lm_sample(lm, logits, &greedy, NULL);
        if (next < 0 || ember_lm_is_end(lm, next))
            break;
        char piece[256];
        fwrite(piece, 1, ember_lm_token_bytes(lm, next, piece, sizeof piece), stdout);
        fflush(stdout);
        if (ember_lm_feed(lm, &next, 1, logits) != EMBER_OK) {
            fprintf(stderr, "\n%s\n", ember_last_error(ctx));
            return 1;
        }
    }
    putchar('\n');
    free(logits);
    ember_lm_free(lm);
    ember_ctx_free(ctx);
    return 0;
}
