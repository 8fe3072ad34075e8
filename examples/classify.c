/* SPDX-License-Identifier: MIT */
/*
 * examples/classify.c — one image through a trained model.
 *
 *   classify CHECKPOINT IMAGE [DEVICE]    prints the top class and its
 *                                         probability: "Ankle boot 0.747" for
 *                                         examples/images/boot.png and a
 *                                         simplecnn of one epoch
 *
 * The checkpoint is one `ember train --save` wrote: it holds the model, its
 * input shape and the class names. DEVICE is "auto" unless given.
 */
#include <ember.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: classify CHECKPOINT IMAGE [DEVICE]\n");
        return 2;
    }
    ember_ctx *ctx = ember_ctx_new();
    ember_model *model = NULL;
    ember_checkpoint *checkpoint = NULL;
    int64_t shape[3] = {0}; /* (C, H, W) */
    static float pixels[3 * 256 * 256], probs[1000];
    int status = 1;
    if (ember_ctx_use_device(ctx, argc == 4 ? argv[3] : "auto") != EMBER_OK ||
        !(model = ember_model_from_checkpoint(ctx, argv[1])) ||
        !(checkpoint = ember_checkpoint_open(ctx, argv[1])))
        goto done;
    int classes = ember_model_classes(model);
    if (ember_model_sample_shape(model, shape) != 3 || shape[0] * shape[1] * shape[2] > 3 * 256 * 256 ||
        classes > 1000) {
        ember_set_error(ctx, EMBER_ERR_ARG, "%s is not a model of images up to 256x256", argv[1]);
        goto done;
    }
    /* as a folder data set loads it: the model's channels and size, in [0, 1] */
    if (ember_image_load(ctx, argv[2], (int)shape[0], (int)shape[1], (int)shape[2], true, pixels) !=
            EMBER_OK ||
        ember_model_predict_probs(model, pixels, 1, probs) != EMBER_OK)
        goto done;
    int best = 0;
    for (int k = 1; k < classes; k++)
        best = probs[k] > probs[best] ? k : best;
    const char *name = ember_checkpoint_class_name(checkpoint, best);
    if (name)
        printf("%s %.3f\n", name, probs[best]);
    else /* a checkpoint without names: the index */
        printf("%d %.3f\n", best, probs[best]);
    status = 0;
done:
    if (status != 0)
        fprintf(stderr, "classify: %s\n", ctx ? ember_last_error(ctx) : "out of memory");
    ember_checkpoint_close(checkpoint);
    ember_model_free(model);
    ember_ctx_free(ctx);
    return status;
}
