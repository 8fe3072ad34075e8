/*
 * models/kerascnn.c — the Keras document's model:
 *
 *     Conv2D(32, (3, 3), activation="relu") -> Flatten -> Dense(classes, softmax)
 *
 * trained with sparse categorical cross-entropy. The softmax is left to the
 * loss (ember_cross_entropy takes logits), which is the same function with
 * better numerics. Initialisation follows PyTorch's defaults, as every ember
 * model does, rather than Keras's Glorot-uniform.
 */
#include <stdio.h>

#include "models-impl.h"

enum { CONV1_W, CONV1_B, FC_W, FC_B };

static ember_status kerascnn_build(struct ember_model *m, ember_rng *rng)
{
    if (m->sample_ndim != 3 || m->sample_shape[1] < 3 || m->sample_shape[2] < 3)
        return ember_set_error(m->ctx, EMBER_ERR_ARG,
                               "kerascnn takes images (channels, height, width) of at least 3x3");
    int64_t c = m->sample_shape[0], h = m->sample_shape[1], w = m->sample_shape[2];
    int64_t features = 32 * (h - 2) * (w - 2);
    ember_status st = ember_layer_conv2d(m->params, "conv1", c, 32, 3, rng, &m->p[CONV1_W], &m->p[CONV1_B]);
    if (st == EMBER_OK)
        st = ember_layer_linear(m->params, "fc", features, m->classes, rng, &m->p[FC_W], &m->p[FC_B]);
    snprintf(m->describe, sizeof m->describe, "kerascnn: Conv2D(%lld->32,3x3,valid) ReLU Flatten Dense(%lld,%d)",
             (long long)c, (long long)features, m->classes);
    return st;
}

static ember_tensor *kerascnn_forward(struct ember_model *m, ember_tensor *x)
{
    ember_tensor *h = ember_conv2d(x, m->p[CONV1_W], m->p[CONV1_B], 1, 0); /* (N, 32, H-2, W-2) */
    h = ember_relu(h);
    h = ember_flatten(h);                                                 /* (N, 32 * (H-2) * (W-2)) */
    return ember_linear(h, m->p[FC_W], m->p[FC_B]);                       /* (N, classes) */
}

const struct ember_model_def ember_model_kerascnn = {
    .name = "kerascnn",
    .summary = "Conv2D(32,3x3) ReLU Flatten Dense: the Keras document's model",
    .build = kerascnn_build,
    .forward = kerascnn_forward,
};
