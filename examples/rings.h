/* SPDX-License-Identifier: MIT */
/*
 * examples/rings.h — the data train_arrays.c and train_mpi.c learn: points
 * in the plane on three rings (radius 0.5, 1.5 and 2.5, with noise), one
 * class per ring. No straight line separates them, so a network needs its
 * hidden layers.
 */
#ifndef EMBER_EXAMPLES_RINGS_H
#define EMBER_EXAMPLES_RINGS_H

#include <ember.h>
#include <math.h>

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

#endif
