/*
 * models/mlp.c — a multi-layer perceptron, 784-256-128-10 on MNIST-sized
 * input, the network behind many published MNIST and Fashion-MNIST figures:
 *
 *     Flatten -> Linear(features, 256) -> ReLU -> Linear(256, 128) -> ReLU
 *     -> Linear(128, classes)
 */
#include <stdio.h>

#include "models-impl.h"

enum { FC1_W, FC1_B, FC2_W, FC2_B, FC3_W, FC3_B };

static ember_status mlp_build(struct ember_model *m, ember_rng *rng)
{
    int64_t in = 1;
    for (int i = 0; i < m->sample_ndim; i++)
        in *= m->sample_shape[i];
    ember_status st = ember_layer_linear(m->params, "fc1", in, 256, rng, &m->p[FC1_W], &m->p[FC1_B]);
    if (st == EMBER_OK)
        st = ember_layer_linear(m->params, "fc2", 256, 128, rng, &m->p[FC2_W], &m->p[FC2_B]);
    if (st == EMBER_OK)
        st = ember_layer_linear(m->params, "fc3", 128, m->classes, rng, &m->p[FC3_W], &m->p[FC3_B]);
    snprintf(m->describe, sizeof m->describe, "mlp: Linear(%lld,256) ReLU Linear(256,128) ReLU Linear(128,%d)",
             (long long)in, m->classes);
    return st;
}

static ember_tensor *mlp_forward(struct ember_model *m, ember_tensor *x)
{
    ember_tensor *h = ember_tensor_ndim(x) > 2 ? ember_flatten(x) : x; /* (N, features) */
    h = ember_relu(ember_linear(h, m->p[FC1_W], m->p[FC1_B]));       /* (N, 256) */
    h = ember_relu(ember_linear(h, m->p[FC2_W], m->p[FC2_B]));       /* (N, 128) */
    return ember_linear(h, m->p[FC3_W], m->p[FC3_B]);                 /* (N, classes) */
}

const struct ember_model_def ember_model_mlp = {
    .name = "mlp",
    .summary = "Linear(features,256) ReLU Linear(256,128) ReLU Linear(128,classes): for published MLP figures",
    .build = mlp_build,
    .forward = mlp_forward,
};
