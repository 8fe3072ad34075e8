/* SPDX-License-Identifier: MIT */
/*
 * examples/rings.h — the data train_arrays.c and train_mpi.c learn: points
 * in the plane on three rings (radius 0.5, 1.5 and 2.5, with noise), one
 * class per ring. No straight line separates them, so a network needs its
 * hidden layers. rings_datasets hands them to ember as arrays the program
 * keeps (ember_dataset_from_arrays): ember reads them, copying nothing.
 */
#ifndef EMBER_EXAMPLES_RINGS_H
#define EMBER_EXAMPLES_RINGS_H

#include <ember.h>
#include <math.h>
#include <stdbool.h>

enum { CLASSES = 3, TRAIN = 3000, TEST = 600 };

/* count points (x, y) into points (count, 2) and their rings into labels */
static inline void make_rings(ember_rng *rng, int64_t count, float *points, int32_t *labels)
{
    for (int64_t i = 0; i < count; i++) {
        int ring = (int)(ember_rng_u32(rng) % CLASSES);
        float angle = ember_rng_uniform(rng, 0.0f, 6.2831853f);
        float radius = 0.5f + (float)ring + ember_rng_uniform(rng, -0.3f, 0.3f);
        points[2 * i] = radius * cosf(angle);
        points[2 * i + 1] = radius * sinf(angle);
        labels[i] = ring;
    }
}

/* A training set of TRAIN points and a test set of TEST, drawn from rng,
 * as data sets of ctx: false, with the reason in ctx, on an error. The
 * points live in static arrays, alive as long as the program (one call a
 * program: a second would draw over the first's). */
static inline bool rings_datasets(ember_ctx *ctx, ember_rng *rng, ember_dataset **train, ember_dataset **test)
{
    static float train_points[TRAIN * 2], test_points[TEST * 2];
    static int32_t train_labels[TRAIN], test_labels[TEST];
    static const char *const names[CLASSES] = {"inner", "middle", "outer"};
    make_rings(rng, TRAIN, train_points, train_labels);
    make_rings(rng, TEST, test_points, test_labels);
    ember_array_data arrays = {.count = TRAIN,
                               .sample_ndim = 1, /* a point: 2 features */
                               .sample_shape = {2},
                               .images = train_points,
                               .labels = train_labels,
                               .classes = CLASSES,
                               .class_names = names,
                               .name = "rings"};
    *train = ember_dataset_from_arrays(ctx, &arrays);
    arrays.count = TEST, arrays.images = test_points, arrays.labels = test_labels;
    *test = ember_dataset_from_arrays(ctx, &arrays);
    return *train && *test;
}

#endif
