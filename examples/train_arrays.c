/* SPDX-License-Identifier: MIT */
/*
 * examples/train_arrays.c — a network written in C, trained on arrays the
 * program makes itself.
 *
 *   train_arrays [CHECKPOINT]     trains, prints the test accuracy, exits 0
 *                                 when it is above 0.9; saves the model
 *                                 to CHECKPOINT when given one
 *
 * The data: points in the plane on three rings (radius 0.5, 1.5 and 2.5,
 * with noise), one class per ring. No straight line separates them, so the
 * network needs its hidden layers: 2 -> 32 -> 32 -> 3, with ReLU.
 */
#include <ember.h>
#include <stdio.h>
#include <stdlib.h>

#include "rings.h"

enum { HIDDEN = 32, EPOCHS = 20 };

struct net {
    ember_tensor *w1, *b1, *w2, *b2, *w3, *b3;
};

/* x (N, 2) -> logits (N, 3) */
static ember_tensor *forward(void *user, ember_params *params, ember_tensor *x, bool training)
{
    (void)params, (void)training; /* the tensors are in *user; no Dropout or BatchNorm to switch */
    const struct net *n = user;
    ember_tensor *h = ember_relu(ember_linear(x, n->w1, n->b1)); /* (N, 32) */
    h = ember_relu(ember_linear(h, n->w2, n->b2));               /* (N, 32) */
    return ember_linear(h, n->w3, n->b3);                        /* (N, 3) */
}

int main(int argc, char **argv)
{
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx)
        return 1;
    ember_dataset *train = NULL, *test = NULL;
    ember_model *model = NULL;
    ember_optim *adam = NULL;
    ember_batcher *batches = NULL;
    struct net net;
    double accuracy = 0;
    int status = 1;
    ember_rng rng = ember_rng_seed(1);
    if (ember_ctx_use_device(ctx, "auto") != EMBER_OK || !rings_datasets(ctx, &rng, &train, &test))
        goto done;

    /* the parameters, initialised as PyTorch's nn.Linear; the model owns them */
    ember_params *params = ember_params_new(ctx);
    if (!params || ember_layer_linear(params, "fc1", 2, HIDDEN, &rng, &net.w1, &net.b1) != EMBER_OK ||
        ember_layer_linear(params, "fc2", HIDDEN, HIDDEN, &rng, &net.w2, &net.b2) != EMBER_OK ||
        ember_layer_linear(params, "fc3", HIDDEN, CLASSES, &rng, &net.w3, &net.b3) != EMBER_OK) {
        ember_params_free(params);
        goto done;
    }
    const int64_t shape[1] = {2};
    if (!(model = ember_model_wrap(ctx, "rings-mlp", params, 1, shape, CLASSES, forward, &net))) {
        ember_params_free(params); /* not taken over */
        goto done;
    }

    adam = ember_adam_new(ember_model_params(model), ember_adam_defaults(0.01f));
    batches = ember_batcher_new(train, 64, true, 0);
    if (!adam || !batches)
        goto done;
    ember_tensor *x, *y; /* x is (64, 2), y is (64) */
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        while (ember_batcher_next(batches, &x, &y) == EMBER_OK && x) {
            ember_optim_zero_grad(adam);
            ember_backward(ember_cross_entropy(ember_model_forward(model, x), y));
            ember_optim_step(adam);
            ember_tape_clear(ctx);
        }
        if (ember_last_status(ctx) != EMBER_OK) /* the ops record a failure and go on: check once */
            goto done;
    }
    if (ember_model_evaluate(model, test, 256, &accuracy, NULL) != EMBER_OK)
        goto done;
    printf("test accuracy %.4f on %d points\n", accuracy, TEST);
    if (argc > 1 && ember_model_save(model, argv[1], NULL) != EMBER_OK)
        goto done;
    if (argc > 1)
        printf("saved %s\n", argv[1]);
    status = 0;
done:
    if (status != 0) {
        fprintf(stderr, "train_arrays: %s\n", ember_last_error(ctx));
    } else if (accuracy <= 0.9) {
        fprintf(stderr, "train_arrays: the accuracy, %.4f, is not above 0.9\n", accuracy);
        status = 1;
    }
    ember_batcher_free(batches);
    ember_optim_free(adam);
    ember_model_free(model);
    ember_dataset_free(test);
    ember_dataset_free(train);
    ember_ctx_free(ctx);
    return status;
}
