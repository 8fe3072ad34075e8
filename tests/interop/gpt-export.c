/* SPDX-License-Identifier: MIT */
/*
 * tests/interop/gpt-export.c — gpt-tiny trained on a text file, with everything a
 * PyTorch twin needs to take the same steps: tests/interop/test_gpt_vs_torch.py.
 *
 *   gpt-export CORPUS OUT_DIR STEPS BATCH [LR]
 *
 * Builds gpt-tiny for the text's vocabulary (context 128, seed 1) and saves
 * it as OUT_DIR/init.safetensors, and as ONNX (ember_model_export_onnx) as
 * OUT_DIR/init.onnx. Then it trains STEPS steps on batches of
 * BATCH random windows (the batcher's, seed 5): AdamW (lr LR, default
 * 2e-3, betas 0.9 and 0.99, weight decay 0.1 on the weights and
 * embeddings) with the gradients clipped to a global norm of 1. Into
 * OUT_DIR/io.safetensors it writes every batch's tokens ("x", "y": STEPS x
 * BATCH x 128, as floats), the logits of the first batch before any step
 * ("logits0"), each step's loss and gradient norm before clipping
 * ("loss", "norm"), and the validation split's mean loss after the last
 * step ("val_loss"), the split's windows side by side. The device is cpu,
 * or $EMBER_TEST_DEVICE.
 */
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

/* out[name] = a copy of `values` shaped `shape` */
static bool keep(ember_params *out, const char *name, int ndim, const int64_t *shape, const float *values)
{
    ember_tensor *p = ember_params_add(out, name, ndim, shape);
    return p && ember_tensor_write(p, values, (size_t)ember_tensor_numel(p) * sizeof *values) == EMBER_OK;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: gpt-export CORPUS OUT_DIR STEPS BATCH [LR]\n");
        return 2;
    }
    const char *corpus = argv[1], *out = argv[2];
    int64_t steps = atoll(argv[3]), batch = atoll(argv[4]), context = 128;
    float lr = argc == 6 ? strtof(argv[5], NULL) : 2e-3f;
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    ember_data_options data = {.kind = "text", .dir = corpus, .sample_ndim = 1, .sample_shape = {context}};
    ember_dataset *train = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    ember_dataset *val = train ? ember_dataset_open(ctx, &data, EMBER_TEST) : NULL;
    ember_model *model = val ? ember_model_new(ctx, "gpt-tiny", train, 1) : NULL;
    ember_adam_options adam = ember_adam_defaults(lr);
    adam.beta2 = 0.99f;
    adam.weight_decay = 0.1f;
    ember_optim *opt = model ? ember_adamw_new(ember_model_params(model), adam) : NULL;
    ember_batcher *batches = opt ? ember_batcher_new(train, batch, true, 5) : NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/init.safetensors", out);
    char onnx[4096];
    snprintf(onnx, sizeof onnx, "%s/init.onnx", out);
    if (!batches || ember_model_save(model, path, NULL) != EMBER_OK ||
        ember_model_export_onnx(model, onnx, NULL) != EMBER_OK) {
        fprintf(stderr, "gpt-export: %s\n", ember_last_error(ctx));
        return 1;
    }
    int64_t classes = ember_dataset_classes(train), window = batch * context;
    float *x_all = malloc((size_t)(steps * window) * sizeof *x_all);
    float *y_all = malloc((size_t)(steps * window) * sizeof *y_all);
    float *logits0 = malloc((size_t)(window * classes) * sizeof *logits0);
    float *losses = malloc((size_t)steps * sizeof *losses), *norms = malloc((size_t)steps * sizeof *norms);
    int32_t *tokens = malloc((size_t)window * sizeof *tokens);
    bool ok = x_all && y_all && logits0 && losses && norms && tokens;
    for (int64_t s = 0; ok && s < steps; s++) {
        ember_tensor *x, *y;
        /* whole batches only: past an epoch's end (false) and its short last batch, the next epoch's */
        int tries = 0;
        while (tries++ < 3 &&
               ((ember_batcher_next(batches, &x, &y) != EMBER_OK || !x) || ember_tensor_dim(x, 0) != batch))
            continue;
        if (tries > 3) {
            ok = false;
            break;
        }
        ok = ember_tensor_read(x, tokens, (size_t)window * sizeof *tokens) == EMBER_OK;
        for (int64_t i = 0; ok && i < window; i++)
            x_all[s * window + i] = (float)tokens[i];
        ok = ok && ember_tensor_read(y, tokens, (size_t)window * sizeof *tokens) == EMBER_OK;
        for (int64_t i = 0; ok && i < window; i++)
            y_all[s * window + i] = (float)tokens[i];
        ember_optim_zero_grad(opt);
        ember_tensor *logits = ember_model_forward(model, x);
        ember_tensor *loss = ember_cross_entropy(logits, y);
        ok = ok && loss &&
             (s > 0 || ember_tensor_read(logits, logits0, (size_t)(window * classes) * 4) == EMBER_OK) &&
             ember_backward(loss) == EMBER_OK &&
             ember_clip_grad_norm(ember_model_params(model), 1.0f, &norms[s]) == EMBER_OK &&
             ember_optim_step(opt) == EMBER_OK && ember_tensor_item(loss, &losses[s]) == EMBER_OK;
        ember_tape_clear(ctx);
    }
    double val_loss = 0.0;
    ok = ok && ember_model_evaluate(model, val, 32, NULL, &val_loss) == EMBER_OK;
    float val_f = (float)val_loss;
    ember_params *io = ok ? ember_params_new(ctx) : NULL;
    int64_t xs[3] = {steps, batch, context}, ls[3] = {batch, context, classes};
    ok = io && keep(io, "x", 3, xs, x_all) && keep(io, "y", 3, xs, y_all) &&
         keep(io, "logits0", 3, ls, logits0) && keep(io, "loss", 1, &steps, losses) &&
         keep(io, "norm", 1, &steps, norms) && keep(io, "val_loss", 1, (const int64_t[]){1}, &val_f);
    snprintf(path, sizeof path, "%s/io.safetensors", out);
    ok = ok && ember_params_save(io, path, NULL) == EMBER_OK;
    if (!ok)
        fprintf(stderr, "gpt-export: %s\n", ember_last_error(ctx));
    else
        printf("gpt-export: %lld steps on %s, loss %.4f -> %.4f, validation loss %.4f\n", (long long)steps,
               ember_ctx_device_name(ctx), losses[0], losses[steps - 1], val_f);
    free(x_all), free(y_all), free(logits0), free(losses), free(norms), free(tokens);
    ember_params_free(io);
    ember_batcher_free(batches);
    ember_optim_free(opt);
    ember_model_free(model);
    ember_dataset_free(train);
    ember_dataset_free(val);
    ember_ctx_free(ctx);
    return ok ? 0 : 1;
}
