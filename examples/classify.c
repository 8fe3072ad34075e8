/*
 * examples/classify.c — one image through a trained model.
 *
 *   classify CHECKPOINT IMAGE [DEVICE]    prints the top class and its
 *                                         probability: "Ankle boot 0.973"
 *
 * The checkpoint is one `ember train --save` wrote: it holds the model, its
 * input shape and, in its metadata, the class names ("ember.class_names", a
 * JSON array of strings). DEVICE is "auto" unless given.
 */
#include <ember.h>
#include <stdio.h>
#include <stdlib.h>

/* The index-th string of a JSON array such as ["T-shirt/top", "Trouser"]
 * into out; false when there is none. A backslash keeps the character
 * after it, which is all the escapes class names need. */
static bool class_name(const char *json, int index, char *out, size_t len)
{
    for (const char *p = json; p && *p; p++) {
        if (*p != '"')
            continue;
        size_t n = 0;
        for (p++; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1])
                p++;
            if (index == 0 && n + 1 < len)
                out[n++] = *p;
        }
        if (index-- == 0) {
            out[n] = '\0';
            return true;
        }
        if (!*p)
            break;
    }
    return false;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: classify CHECKPOINT IMAGE [DEVICE]\n");
        return 2;
    }
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx)
        return 1;
    ember_model *model = NULL;
    ember_checkpoint *checkpoint = NULL;
    float *pixels = NULL, *probs = NULL;
    int64_t shape[3]; /* (C, H, W) */
    int status = 1;
    if (ember_ctx_use_device(ctx, argc == 4 ? argv[3] : "auto") != EMBER_OK ||
        !(model = ember_model_from_checkpoint(ctx, argv[1])) ||
        !(checkpoint = ember_checkpoint_open(ctx, argv[1])))
        goto done;
    if (ember_model_sample_shape(model, shape) != 3) {
        ember_set_error(ctx, EMBER_ERR_ARG, "%s holds a model of %s, not of images", argv[1],
                        ember_model_name(model));
        goto done;
    }
    int classes = ember_model_classes(model);
    pixels = malloc((size_t)(shape[0] * shape[1] * shape[2]) * sizeof *pixels);
    probs = malloc((size_t)classes * sizeof *probs);
    if (!pixels || !probs) {
        ember_set_error(ctx, EMBER_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* as a folder data set loads it: the model's channels and size, in [0, 1] */
    int channels = (int)shape[0], height = (int)shape[1], width = (int)shape[2];
    if (ember_image_load(ctx, argv[2], channels, height, width, true, pixels) != EMBER_OK ||
        ember_model_predict_probs(model, pixels, 1, probs) != EMBER_OK)
        goto done;

    int best = 0;
    for (int k = 1; k < classes; k++)
        best = probs[k] > probs[best] ? k : best;
    char name[256];
    if (!class_name(ember_checkpoint_meta(checkpoint, "ember.class_names"), best, name, sizeof name))
        snprintf(name, sizeof name, "%d", best); /* a checkpoint without names: the index */
    printf("%s %.3f\n", name, probs[best]);
    status = 0;
done:
    if (status != 0)
        fprintf(stderr, "classify: %s\n", ember_last_error(ctx));
    free(pixels);
    free(probs);
    ember_checkpoint_close(checkpoint);
    ember_model_free(model);
    ember_ctx_free(ctx);
    return status;
}
