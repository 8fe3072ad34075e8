/* SPDX-License-Identifier: MIT */
/*
 * core/optim-impl.h — an optimizer's state (optim.c), shared with the code
 * that saves and loads it as PyTorch names it (io/optim-state.c).
 */
#ifndef EMBER_OPTIM_IMPL_H
#define EMBER_OPTIM_IMPL_H
#include "params-impl.h"

enum optim_kind { OPTIM_ADAM, OPTIM_ADAMW, OPTIM_SGD };

struct ember_optim {
    enum optim_kind kind;
    ember_params *params;
    ember_adam_options adam;
    ember_sgd_options sgd;
    int64_t steps;
    /* state, shaped like params->flat: Adam's moments, or SGD's velocity in m */
    struct ember_tensor *m, *v;
};

#endif /* EMBER_OPTIM_IMPL_H */
