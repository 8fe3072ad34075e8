/* SPDX-License-Identifier: MIT */
/*
 * tools/train-init.c — `ember train --init FILE`: fine-tuning a model
 * trained elsewhere (docs/interop.md). FILE is an ember checkpoint, a
 * state_dict PyTorch saved as safetensors, or an ONNX model; the model is
 * the one FILE holds, built afresh for this data (its shape, its classes,
 * --seed's initialisation), then given FILE's weights, but for the layers
 * --init-skip names; a folder of images is loaded at FILE's input. The
 * optimizer and the schedule start new. And --freeze: the layers whose
 * weights stay (transfer learning's "train only the head"), frozen by
 * their requires_grad, which the optimizer reads (include/ember.h,
 * ember_optim_step).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

int train_init_shape(ember_ctx *ctx, struct train_options *o)
{
    if (!o->init || o->shape_given || strcmp(o->data.kind, "folder") != 0)
        return EXIT_OK;
    ember_checkpoint *ck = NULL;
    void *data = NULL;
    size_t size = 0;
    int rc = cli_open_checkpoint(ctx, o->init, &ck, &data, &size);
    const char *input = rc == EXIT_OK ? ember_checkpoint_meta(ck, "ember.input") : NULL;
    char shown[96];
    if (input && !cli_parse_shape_quiet(input, &o->data.sample_ndim, o->data.sample_shape)) {
        cli_error("%s: ember.input is \"%s\", not a shape", o->init, cli_printable(input, shown, 64));
        rc = EXIT_DATA;
    } else if (input) {
        fprintf(stderr,
                "ember: the folder's images are loaded at %s, the input of %s (--shape for another%s)\n",
                input, o->init, o->data.resize ? "" : "; --resize for images of other sizes");
    }
    free(data);
    ember_checkpoint_close(ck);
    return rc;
}

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
    if (ember_checkpoint_meta(ck, "ember.onnx_batch_norm"))
        fprintf(stderr,
                "ember: note: %s's BatchNorm layers were folded into its convolutions (torch.onnx.export in "
                "evaluation mode), so they train as convolutions with a bias; for BatchNorm layers that "
                "train, export the model after model.train() with training=torch.onnx.TrainingMode.PRESERVE "
                "(docs/interop.md)\n",
                o->init);
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

/* whether parameter `name` is under layer `layer`: the layer itself, or a dotted child */
static bool under(const char *name, const char *layer)
{
    size_t n = strlen(layer);
    return strncmp(name, layer, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

int train_freeze(struct train_options *o, ember_model *model, bool say)
{
    if (strcmp(o->freeze, "none") == 0)
        return EXIT_OK;
    if (strcmp(o->freeze, "backbone") == 0) { /* every layer but the new head, as the checkpoint keeps it */
        char *spelt = malloc(strlen(o->init_skip) + 8);
        if (!spelt || o->n_owned == (int)(sizeof o->owned / sizeof o->owned[0])) {
            free(spelt);
            cli_error("out of host memory");
            return EXIT_FAILURE_OTHER;
        }
        sprintf(spelt, "except:%s", o->init_skip);
        o->owned[o->n_owned++] = spelt;
        o->freeze = spelt;
    }
    bool except = strncmp(o->freeze, "except:", 7) == 0;
    char *copy = strdup(o->freeze + (except ? 7 : 0));
    if (!copy) {
        cli_error("out of host memory");
        return EXIT_FAILURE_OTHER;
    }
    const char *names[64];
    int count = 0;
    for (char *part = strtok(copy, ","); part && count < 64; part = strtok(NULL, ","))
        names[count++] = part;
    ember_params *params = ember_model_params(model);
    int total = ember_params_count(params), rc = EXIT_OK;
    for (int k = 0; k < count && rc == EXIT_OK; k++) { /* every name must be some layer's */
        bool found = false;
        for (int i = 0; i < total && !found; i++)
            found = under(ember_params_name(params, i), names[k]);
        if (!found) {
            cli_error("--freeze %s: no layer of %s is named %s (ember summary lists them)", o->freeze,
                      ember_model_name(model), names[k]);
            rc = EXIT_USAGE;
        }
    }
    int64_t frozen = 0, all = 0;
    for (int i = 0; i < total && rc == EXIT_OK; i++) {
        if (ember_params_is_buffer(params, i))
            continue;
        bool named = false;
        for (int k = 0; k < count && !named; k++)
            named = under(ember_params_name(params, i), names[k]);
        ember_tensor *p = ember_params_at(params, i);
        all += ember_tensor_numel(p);
        if (named != except) {
            ember_tensor_set_requires_grad(p, false);
            frozen += ember_tensor_numel(p);
        }
    }
    if (rc == EXIT_OK && say)
        fprintf(stderr, "ember: --freeze %s: %lld of %lld weights frozen, %lld training\n", o->freeze,
                (long long)frozen, (long long)all, (long long)(all - frozen));
    free(copy);
    return rc;
}
