/*
 * models/linear.c — the data-parallel document's model, one Linear layer:
 * Linear(100, 10) on its 100-feature random data. Here the input size comes
 * from the data (a sample of any shape is flattened), and the parameters
 * are named as a bare nn.Linear's state_dict names them: weight, bias.
 */
#include <stdio.h>

#include "models-impl.h"

enum { W, B };

static int64_t features_of(const struct ember_model *m)
{
    int64_t n = 1;
    for (int i = 0; i < m->sample_ndim; i++)
        n *= m->sample_shape[i];
    return n;
}

static ember_status linear_build(struct ember_model *m, ember_rng *rng)
{
    int64_t in = features_of(m), shape_w[2] = {m->classes, in}, shape_b[1] = {m->classes};
    /* no layer prefix: a bare nn.Linear's names */
    m->p[W] = ember_params_add(m->params, "weight", 2, shape_w);
    m->p[B] = m->p[W] ? ember_params_add(m->params, "bias", 1, shape_b) : NULL;
    if (!m->p[B])
        return ember_last_status(m->ctx);
    snprintf(m->describe, sizeof m->describe, "linear: Linear(%lld,%d)", (long long)in, m->classes);
    return ember_init_default(m->p[W], m->p[B], rng);
}

static ember_tensor *linear_forward(struct ember_model *m, ember_tensor *x)
{
    ember_tensor *h = ember_tensor_ndim(x) > 2 ? ember_flatten(x) : x; /* (N, features) */
    return ember_linear(h, m->p[W], m->p[B]);                         /* (N, classes) */
}

const struct ember_model_def ember_model_linear = {
    .name = "linear",
    .summary = "Linear(features, classes): the data-parallel document's model (Linear(100,10) on --shape 100)",
    .build = linear_build,
    .forward = linear_forward,
};
