/* SPDX-License-Identifier: MIT */
/* core/layers.c — Conv2d and Linear parameters, named and initialised as in PyTorch. */
#include <stdio.h>

#include "params-impl.h"

/* name.weight with `wshape`, name.bias (out), both initialised by ember_init_default */
static ember_status add_layer(ember_params *params, const char *name, int wdim, const int64_t *wshape,
                              ember_rng *rng, ember_tensor **weight, ember_tensor **bias)
{
    if (!params)
        return EMBER_ERR_ARG;
    if (!name || !rng || !weight || !bias)
        return ember_fail(params->ctx, EMBER_ERR_ARG, "adding a layer: the %s is NULL",
                          !name  ? "name"
                          : !rng ? "generator"
                                 : "weight or bias pointer");
    char wname[256], bname[256];
    snprintf(wname, sizeof wname, "%s.weight", name);
    snprintf(bname, sizeof bname, "%s.bias", name);
    ember_tensor *w = ember_params_add(params, wname, wdim, wshape);
    ember_tensor *b = w ? ember_params_add(params, bname, 1, wshape) : NULL;
    if (!b)
        return params->ctx->status;
    ember_status st = ember_init_default(w, b, rng);
    if (st == EMBER_OK) {
        *weight = w;
        *bias = b;
    }
    return st;
}

ember_status ember_layer_conv2d(ember_params *params, const char *name, int64_t in_channels,
                                int64_t out_channels, int64_t kernel, ember_rng *rng, ember_tensor **weight,
                                ember_tensor **bias)
{
    int64_t shape[4] = {out_channels, in_channels, kernel, kernel};
    return add_layer(params, name, 4, shape, rng, weight, bias);
}

ember_status ember_layer_linear(ember_params *params, const char *name, int64_t in_features,
                                int64_t out_features, ember_rng *rng, ember_tensor **weight,
                                ember_tensor **bias)
{
    int64_t shape[2] = {out_features, in_features};
    return add_layer(params, name, 2, shape, rng, weight, bias);
}
