/*
 * models/models-impl.h — how a model is defined.
 *
 * A model is a name, a build function that adds its parameters to a set
 * (through the public layer helpers, so they get PyTorch's names and
 * initialisation), and a forward function written with the public ops.
 * Models use nothing but include/ember.h: whatever they do, a program
 * embedding ember can do the same way.
 */
#ifndef EMBER_MODELS_IMPL_H
#define EMBER_MODELS_IMPL_H

#include "ember.h"

#define EMBER_MODEL_MAX_TENSORS 8

struct ember_model {
    ember_ctx *ctx;
    const struct ember_model_def *def;
    ember_params *params;
    /* parameters in the order the build added them (the model's own enum indexes them) */
    ember_tensor *p[EMBER_MODEL_MAX_TENSORS];
    /* the input it was built for: one sample's shape, and the class count */
    int sample_ndim;
    int64_t sample_shape[3];
    int classes;
    char describe[256];
};

struct ember_model_def {
    const char *name;
    const char *summary;
    /* adds the parameters for m's input shape and classes, fills m->p and
     * m->describe; fails with a message when the input does not suit */
    ember_status (*build)(struct ember_model *m, ember_rng *rng);
    /* x is (N, sample shape...); returns logits (N, classes) */
    ember_tensor *(*forward)(struct ember_model *m, ember_tensor *x);
};

extern const struct ember_model_def ember_model_simplecnn;
extern const struct ember_model_def ember_model_kerascnn;
extern const struct ember_model_def ember_model_linear;
extern const struct ember_model_def ember_model_mlp;

#endif /* EMBER_MODELS_IMPL_H */
