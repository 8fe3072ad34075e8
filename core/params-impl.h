/* SPDX-License-Identifier: MIT */
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

/* A parameter is trained: the optimizer updates it from its gradient. A
 * buffer is state the forward pass keeps (BatchNorm's running statistics):
 * saved and loaded with the parameters, as in PyTorch's state_dict, but
 * never given a gradient or touched by an optimizer. */
struct ember_param {
    char *name;
    /* a view into params->flat, with .grad a view into flat_grad; for a
     * buffer, a view into params->buffers without a gradient */
    struct ember_tensor *value;
    bool buffer;
};

struct ember_params {
    ember_ctx *ctx;
    struct ember_param *items; /* parameters and buffers, in the order added */
    int count, cap;
    struct ember_tensor *flat;      /* every parameter, back to back (1-d) */
    struct ember_tensor *flat_grad; /* every gradient, at the same offsets */
    int64_t used;                   /* elements of flat in use, padding included */
    struct ember_tensor *buffers;   /* every buffer, back to back, likewise */
    int64_t buffers_used;
};

/* ember_params_flat_index: engine.h */

#endif /* EMBER_PARAMS_IMPL_H */
