/*
 * core/params-impl.h — the inside of a parameter set, for the optimizers
 * and checkpoints that walk it.
 */
#ifndef EMBER_PARAMS_IMPL_H
#define EMBER_PARAMS_IMPL_H

#include "tensor-impl.h"

/* Each parameter starts on a multiple of 16 elements (64 bytes), so that
 * vector loads never straddle two parameters. The padding stays zero. */
#define PARAM_ALIGN 16

struct ember_param {
    char *name;
    struct ember_tensor *value; /* a view into params->flat, with .grad a view into flat_grad */
};

struct ember_params {
    ember_ctx *ctx;
    struct ember_param *items;
    int count, cap;
    struct ember_tensor *flat;      /* every parameter, back to back (1-d) */
    struct ember_tensor *flat_grad; /* every gradient, at the same offsets */
    int64_t used;                   /* elements of flat in use, padding included */
};

#endif /* EMBER_PARAMS_IMPL_H */
