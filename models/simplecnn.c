/*
 * models/simplecnn.c — the PyTorch document's SimpleCNN:
 *
 *     Conv2d(C, 16, 3, padding=1) -> ReLU -> MaxPool2d(2, 2) -> Flatten
 *     -> Linear(16 * (H/2) * (W/2), classes)
 *
 * On 3x32x32 input this is exactly the document's network; on Fashion-MNIST
 * (1x28x28) the linear layer takes 16 * 14 * 14 = 3136 features.
 */
#include <stdio.h>

#include "models-impl.h"

enum { CONV1_W, CONV1_B, FC_W, FC_B };

static ember_status simplecnn_build(struct ember_model *m, ember_rng *rng)
{
    if (m->sample_ndim != 3 || m->sample_shape[1] < 2 || m->sample_shape[2] < 2)
        return ember_set_error(m->ctx, EMBER_ERR_ARG,
                               "simplecnn takes images (channels, height, width) of at least 2x2");
    int64_t c = m->sample_shape[0], h = m->sample_shape[1], w = m->sample_shape[2];
    int64_t features = 16 * (h / 2) * (w / 2);
    ember_status st = ember_layer_conv2d(m->params, "conv1", c, 16, 3, rng, &m->p[CONV1_W], &m->p[CONV1_B]);
    if (st == EMBER_OK)
        st = ember_layer_linear(m->params, "fc", features, m->classes, rng, &m->p[FC_W], &m->p[FC_B]);
    snprintf(m->describe, sizeof m->describe,
             "simplecnn: Conv2d(%lld,16,3,padding=1) ReLU MaxPool2d(2,2) Flatten Linear(%lld,%d)",
             (long long)c, (long long)features, m->classes);
    return st;
}

static ember_tensor *simplecnn_forward(struct ember_model *m, ember_tensor *x)
{
    ember_tensor *h = ember_conv2d(x, m->p[CONV1_W], m->p[CONV1_B], 1, 1); /* (N, 16, H, W) */
    h = ember_relu(h);
    h = ember_max_pool2d(h, 2, 2);                                        /* (N, 16, H/2, W/2) */
    h = ember_flatten(h);                                                 /* (N, 16 * H/2 * W/2) */
    return ember_linear(h, m->p[FC_W], m->p[FC_B]);                       /* (N, classes) */
}

const struct ember_model_def ember_model_simplecnn = {
    .name = "simplecnn",
    .summary = "Conv2d(C,16,3,padding 1) ReLU MaxPool2d(2) Flatten Linear: the PyTorch document's SimpleCNN",
    .build = simplecnn_build,
    .forward = simplecnn_forward,
};
