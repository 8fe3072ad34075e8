/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/lora-run.c — LoRA fine-tuning of a GGUF language model by
 * ember, for test_lora_vs_torch.py to hold against its PyTorch twin:
 *
 *     lora-run MODEL.gguf WINDOWS.i32 STEPS BATCH CONTEXT LR OUT_DIR TARGETS RANK ALPHA
 *
 * adds LoRA adapters (seed 1, no dropout; TARGETS "full": every weight
 * trained instead, ember_lm_full), saves them as they start to
 * OUT_DIR/initial.safetensors, then trains them with AdamW (PyTorch's
 * defaults, weight decay 0.01) for STEPS steps, step s on the batch of
 * BATCH windows of CONTEXT + 1 tokens at s * BATCH in WINDOWS.i32 (x the
 * first CONTEXT tokens of a window, y the last CONTEXT; a token written
 * as -(t + 1) is t in x and, as a target, EMBER_IGNORE_INDEX, which a batch
 * holding one scores with ember_cross_entropy_ignore), printing each
 * step's loss; then saves them to OUT_DIR/final.safetensors, and the model
 * with them merged to OUT_DIR/merged-TYPE.gguf for TYPE F32, F16, Q8_0 and
 * Q4_0. The device is $EMBER_TEST_DEVICE (cpu by default); its products
 * are EMBER_MATMUL_HIGH's when $EMBER_TEST_MATMUL_PRECISION is "high" (a
 * skip, exit 77, where that changes nothing: no AMX).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"
#include "test-util.h"

static int fail(ember_ctx *ctx, const char *what)
{
    fprintf(stderr, "lora-run: %s: %s\n", what, ember_last_error(ctx));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 11) {
        fprintf(stderr,
                "usage: lora-run MODEL.gguf WINDOWS.i32 STEPS BATCH CONTEXT LR OUT_DIR TARGETS RANK ALPHA\n");
        return 2;
    }
    int steps = atoi(argv[3]), batch = atoi(argv[4]), context = atoi(argv[5]);
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    const char *precision = getenv("EMBER_TEST_MATMUL_PRECISION");
    if (precision && strcmp(precision, "high") == 0) {
        if (!ember_ctx_matmul_precision_matters(ctx, EMBER_MATMUL_HIGH)) {
            fprintf(stderr, "lora-run: EMBER_MATMUL_HIGH changes nothing on %s (no AMX)\n",
                    ember_ctx_device_name(ctx));
            return TEST_SKIP;
        }
        ember_ctx_set_matmul_precision(ctx, EMBER_MATMUL_HIGH);
    }
    ember_lm *lm = ember_lm_load(ctx, argv[1], &(ember_lm_options){.context = context});
    if (!lm)
        return fail(ctx, "load");
    ember_lora_options lo = {
        .rank = atoi(argv[9]), .alpha = (float)atof(argv[10]), .targets = argv[8], .seed = 1};
    bool full = strcmp(argv[8], "full") == 0;
    ember_params *adapters = full ? ember_lm_full(lm) : ember_lm_lora(lm, &lo);
    if (!adapters)
        return fail(ctx, "lora");
    char line[256], path[4096];
    fprintf(stderr, "%s\n%s\n", ember_lm_describe(lm),
            full ? "every weight trained" : ember_lm_lora_describe(lm, line, sizeof line));
    const char *meta[] = {"lora_alpha", argv[10], NULL};
    snprintf(path, sizeof path, "%s/initial.safetensors", argv[7]);
    if (ember_params_save(adapters, path, meta) != EMBER_OK)
        return fail(ctx, "save");
    ember_adam_options ao = ember_adam_defaults((float)atof(argv[6]));
    ao.weight_decay = 0.01f;
    ember_optim *opt = ember_adamw_new(adapters, ao);
    FILE *f = fopen(argv[2], "rb");
    size_t per = (size_t)batch * (size_t)(context + 1);
    int32_t *w = malloc(per * sizeof *w), *x = malloc((size_t)batch * context * sizeof *x),
            *y = malloc((size_t)batch * context * sizeof *y);
    const int64_t shape[2] = {batch, context};
    ember_tensor *tx = ember_tensor_new(ctx, EMBER_I32, 2, shape),
                 *ty = ember_tensor_new(ctx, EMBER_I32, 2, shape);
    if (!f || !opt || !w || !x || !y || !tx || !ty || ember_lm_set_training(lm, true) != EMBER_OK)
        return fail(ctx, "setup");
    for (int s = 0; s < steps; s++) {
        if (fread(w, sizeof *w, per, f) != per) {
            fprintf(stderr, "lora-run: %s holds fewer than %d batches\n", argv[2], steps);
            return 1;
        }
        bool ignores = false;
        for (int b = 0; b < batch; b++)
            for (int t = 0; t < context; t++) {
                int32_t in = w[b * (context + 1) + t], out = w[b * (context + 1) + t + 1];
                x[b * context + t] = in < 0 ? -in - 1 : in;
                y[b * context + t] = out < 0 ? EMBER_IGNORE_INDEX : out;
                ignores |= out < 0;
            }
        float loss_value;
        ember_tensor *loss = NULL;
        if (ember_tensor_write(tx, x, (size_t)batch * context * sizeof *x) != EMBER_OK ||
            ember_tensor_write(ty, y, (size_t)batch * context * sizeof *y) != EMBER_OK ||
            ember_optim_zero_grad(opt) != EMBER_OK ||
            !(loss = (ignores ? ember_cross_entropy_ignore : ember_cross_entropy)(ember_lm_forward(lm, tx),
                                                                                  ty)) ||
            ember_backward(loss) != EMBER_OK || ember_tensor_item(loss, &loss_value) != EMBER_OK ||
            ember_optim_step(opt) != EMBER_OK)
            return fail(ctx, "step");
        printf("%.9g\n", (double)loss_value);
        ember_tape_clear(ctx);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/final.safetensors", argv[7]);
    if (ember_params_save(adapters, path, meta) != EMBER_OK)
        return fail(ctx, "save");
    static const char *const types[] = {"F32", "F16", "Q8_0", "Q4_0"};
    for (int i = 0; i < 4; i++) { /* the adapters merged into the model's own file */
        snprintf(path, sizeof path, "%s/merged-%s.gguf", argv[7], types[i]);
        if (ember_lm_save_merged(lm, path, types[i]) != EMBER_OK)
            return fail(ctx, "save merged");
    }
    free(w);
    free(x);
    free(y);
    ember_tensor_free(tx);
    ember_tensor_free(ty);
    ember_optim_free(opt);
    ember_lm_free(lm);
    ember_ctx_free(ctx);
    return 0;
}
