/* SPDX-License-Identifier: MIT */
/*
 * models/lm-model.c — a language model with its LoRA adapters, or with all
 * its weights to train (lm-full.c), as an ember_model (ember_lm_model), so
 * that `ember train`'s loop, evaluation and checkpoints take it as they
 * take any model: samples are windows of tokens, the output every
 * position's scores, the parameters the adapters or the weights.
 */
#include <stdio.h>
#include <string.h>

#include "lm-impl.h"
#include "models-impl.h"

static ember_tensor *model_forward(void *user, ember_params *params, ember_tensor *x, bool training)
{
    ember_lm *lm = user;
    (void)params; /* the adapters or weights, which the forward pass finds in the blocks */
    lm->training = training;
    /* dropout's masks from the model's count of training forwards, which its
     * checkpoint keeps: a resumed run draws the masks an unbroken one would */
    lm->forwards = lm->model->forwards;
    return ember_lm_forward(lm, x);
}

ember_model *ember_lm_model(ember_lm *lm, int64_t context)
{
    if (!lm)
        return NULL;
    if (lm->model)
        return lm->model;
    ember_params *trained = lm->lora ? lm->lora : lm->full;
    if (!trained) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG,
                        "ember_lm_model: the model has nothing to train: give it adapters (ember_lm_lora) or "
                        "make its weights parameters (ember_lm_full)");
        return NULL;
    }
    if (context < 1 || context > lm->context) {
        ember_set_error(lm->ctx, EMBER_ERR_ARG, "ember_lm_model: a context of %lld, not 1 to the %lld kept",
                        (long long)context, (long long)lm->context);
        return NULL;
    }
    char name[MODEL_NAME_MAX], lora[256];
    const char *said = lm->describe, *paren = strstr(said, " (");
    snprintf(name, sizeof name, "%.*s+%s", paren ? (int)(paren - said > 40 ? 40 : paren - said) : 2,
             paren ? said : "lm", lm->lora ? "lora" : "full");
    if (!(lm->model =
              ember_model_wrap(lm->ctx, name, trained, 1, &context, (int)lm->vocab, model_forward, lm)))
        return NULL;
    if (lm->lora)
        snprintf(lm->model->describe, sizeof lm->model->describe, "%.300s; %s", lm->describe,
                 ember_lm_lora_describe(lm, lora, sizeof lora));
    else
        snprintf(lm->model->describe, sizeof lm->model->describe,
                 "%.300s; every weight trained in F32: %lld parameters", lm->describe,
                 (long long)ember_params_numel(trained));
    return lm->model;
}
