/* SPDX-License-Identifier: MIT */
/*
 * tools/train-init.c — `ember train --init FILE`: fine-tuning a model
 * trained elsewhere (docs/interop.md). FILE is an ember checkpoint, a
 * state_dict PyTorch saved as safetensors, or an ONNX model; the model is
 * the one FILE holds, built afresh for this data (its shape, its classes,
 * --seed's initialisation), then given FILE's weights, but for the layers
 * --init-skip names. The optimizer and the schedule start new.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

ember_model *train_init_model(ember_ctx *ctx, const struct train_options *o, const ember_dataset *train,
                              int *rc)
{
    ember_checkpoint *ck = NULL;
    void *data = NULL;
    size_t size = 0;
    ember_model *model = NULL;
    char *skip_copy = o->init_skip ? strdup(o->init_skip) : NULL;
    const char *skip[64] = {NULL};
    int n = 0;
    for (char *part = skip_copy ? strtok(skip_copy, ",") : NULL; part && n < 63; part = strtok(NULL, ","))
        skip[n++] = part;
    if ((*rc = cli_open_checkpoint(ctx, o->init, &ck, &data, &size)) != EXIT_OK)
        goto done;
    const char *text = ember_checkpoint_meta(ck, "ember.model_text");
    const char *name = ember_checkpoint_meta(ck, "ember.model");
    if (text && !o->model_given)
        model = ember_model_parse(ctx, name ? name : o->init, text, ember_dataset_sample_ndim(train),
                                  ember_dataset_sample_shape(train), ember_dataset_classes(train), o->seed);
    else if (!text && !o->model_given && name)
        model = ember_model_new(ctx, name, train, o->seed);
    else
        model = ember_model_new(ctx, o->model, train, o->seed);
    if (!model) {
        *rc = cli_fail(ctx, "cannot build the model to start from --init");
        goto done;
    }
    if (ember_params_init_from(ember_model_params(model), o->init, data, size, skip) != EMBER_OK) {
        *rc = cli_fail(ctx, "cannot start from --init");
        ember_model_free(model);
        model = NULL;
        goto done;
    }
    fprintf(stderr, "ember: starting from %s%s%s\n", o->init, n ? ", leaving freshly initialised: " : "",
            n ? o->init_skip : "");
    if (!text && !name) /* a bare state_dict: which network its weights went into is this run's guess */
        fprintf(stderr,
                "ember: %s names no model (a state_dict without ember's metadata): its weights were read "
                "into %s%s\n",
                o->init, o->model,
                o->model_given ? ", as --model says" : ", the default; give --model if it is another");
done:
    free(skip_copy);
    free(data);
    ember_checkpoint_close(ck);
    return model;
}
