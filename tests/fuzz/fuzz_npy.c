/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_npy.c — NumPy's files: the input as a .npz archive of a
 * data set (--data npy: its zip directory, stored and deflated entries,
 * CRC-32s, then each array's .npy header and values), and as a lone .npy
 * file (ember_npy_load, which predict uses). What loads must be what its
 * header says: labels within the classes, a shape that matches.
 */
#include <stdlib.h>

#include "data-impl.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_ctx *ctx = fuzz_ctx();
    const char *path = fuzz_write("data.npz", data, size);
    for (int split = 0; path && split < 2; split++) {
        ember_data_options options = {.kind = "npy", .dir = path};
        ember_dataset *ds = ember_dataset_open(ctx, &options, split ? EMBER_TEST : EMBER_TRAIN);
        for (int64_t i = 0; ds && i < ds->count; i++)
            if (ds->labels[i] < 0 || ds->labels[i] >= ds->classes)
                abort();
        if (ds && (!ds->pixels == !ds->floats || (ds->sample_ndim != 1 && ds->sample_ndim != 3)))
            abort();
        ember_dataset_free(ds);
    }
    if ((path = fuzz_write("array.npy", data, size))) {
        int ndim = -1;
        int64_t shape[EMBER_MAX_DIMS];
        float *values = ember_npy_load(ctx, path, &ndim, shape, NULL);
        if (values && (ndim < 0 || ndim > EMBER_MAX_DIMS))
            abort();
        free(values);
    }
    ember_clear_error(ctx);
    return 0;
}
