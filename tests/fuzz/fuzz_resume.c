/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_resume.c — `ember train --resume` reading a checkpoint
 * and its training state (tools/train-state.c), as the command does: the
 * settings from the checkpoint's metadata, the model it describes, the
 * optimizer's state and the position from the state file, the learning
 * rate's schedule, and the data order sought to that position. The input is
 * both files: a 4-byte little-endian length, the checkpoint, then the
 * state. Whatever the files say, what is accepted must be in the ranges
 * the command line's options have, and nothing may hang (libFuzzer's
 * -timeout) or overflow (UBSan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-util.h"
#include "train.h"

/* the settings any accepted checkpoint gives are values the command line could */
static void check_settings(const struct train_options *o)
{
    ember_augment augment;
    bool ok = o->epochs >= 1 && o->epochs <= TRAIN_MAX_EPOCHS && o->batch >= 1 && o->batch <= (1 << 20) &&
              isfinite(o->lr) && o->lr >= 0 && o->lr <= 1e6 && o->warmup >= 0 && o->warmup <= 1e6 &&
              o->gamma >= 0 && o->gamma <= 1 && o->step_epochs >= 0 && o->step_epochs <= 1e6 &&
              o->min_lr >= 0 && o->min_lr <= 1e6 && o->momentum >= 0 && o->momentum <= 1e6 &&
              o->weight_decay >= 0 && o->weight_decay <= 1e6 &&
              (strcmp(o->optim, "adam") == 0 || strcmp(o->optim, "sgd") == 0) &&
              (strcmp(o->schedule, "constant") == 0 || strcmp(o->schedule, "step") == 0 ||
               strcmp(o->schedule, "cosine") == 0) &&
              train_parse_augment(o->augment, &augment, 0);
    if (!ok)
        abort();
}

static void resume(ember_ctx *ctx, struct train_options *o)
{
    ember_model *model = ember_model_from_checkpoint(ctx, o->resume);
    int64_t shape[3], numel = 1;
    int ndim = model ? ember_model_sample_shape(model, shape) : 0;
    for (int i = 0; i < ndim; i++)
        numel *= shape[i];
    if (!model || numel > 4096) { /* a sample this big makes the data slow, not the reading wrong */
        ember_model_free(model);
        return;
    }
    /* a small random data set of the model's shape: the position is checked against its steps */
    ember_data_options data = {.kind = "random",
                               .sample_ndim = ndim,
                               .count = 64,
                               .classes = ember_model_classes(model),
                               .seed = o->seed};
    memcpy(data.sample_shape, shape, sizeof shape);
    ember_dataset *train = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    ember_optim *opt = strcmp(o->optim, "sgd") == 0
                           ? ember_sgd_new(ember_model_params(model), ember_sgd_defaults((float)o->lr))
                           : ember_adam_new(ember_model_params(model), ember_adam_defaults((float)o->lr));
    ember_batcher *batches = train ? ember_batcher_new(train, o->batch, true, o->seed) : NULL;
    struct train_position pos;
    if (opt && batches && train_resume_state(ctx, o, opt, ember_batcher_steps(batches), &pos) == EXIT_OK) {
        int64_t per_epoch = ember_batcher_steps(batches);
        if (pos.epochs_done < 0 || pos.epochs_done > TRAIN_MAX_EPOCHS || pos.step_in_epoch < 0 ||
            pos.step_in_epoch > per_epoch ||
            pos.total_steps != pos.epochs_done * per_epoch + pos.step_in_epoch || !isfinite(pos.loss_sum) ||
            pos.correct > pos.seen)
            abort();
        ember_lr_schedule schedule = train_schedule(o, per_epoch);
        float lr = ember_lr_at(&schedule, pos.total_steps);
        if (!isfinite(lr) || ember_batcher_seek(batches, pos.epochs_done, pos.step_in_epoch) != EMBER_OK)
            abort();
    }
    ember_batcher_free(batches);
    ember_optim_free(opt);
    ember_dataset_free(train);
    ember_model_free(model);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    size_t first = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 | (size_t)data[3] << 24;
    first = first < size - 4 ? first : size - 4;
    char checkpoint[512];
    const char *path = fuzz_write("run.safetensors", data + 4, first);
    if (!path)
        return 0;
    snprintf(checkpoint, sizeof checkpoint, "%s", path); /* fuzz_write's buffer is used again below */
    if (!fuzz_write("run.state.safetensors", data + 4 + first, size - 4 - first))
        return 0;
    ember_ctx *ctx = fuzz_ctx();
    /* train_parse_options' defaults in tools/train-options.c */
    /* clang-format off */
    struct train_options o = {.model = "simplecnn", .optim = "adam", .epochs = 1, .batch = 64, .lr = 0.001,
                              .eval = true, .schedule = "constant", .gamma = 0.1, .augment = "none",
                              .device = "cpu", .data = {.kind = "fashion-mnist"}, .resume = checkpoint,
                              /* clang-format on */
                              .quiet = true};
    if (train_resume_settings(ctx, &o) == EXIT_OK) {
        check_settings(&o);
        resume(ctx, &o);
    }
    train_options_free(&o);
    return 0;
}
