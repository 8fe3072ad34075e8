/* SPDX-License-Identifier: MIT */
/*
 * tools/predict.h — what `ember predict` reads besides images, and what it
 * writes with --output (tools/predict-arrays.c).
 */
#ifndef EMBER_PREDICT_H
#define EMBER_PREDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "ember.h"

/* a .npy or .csv file's name */
bool predict_is_array_name(const char *name);
/* "npy" or "csv" for an --output path of that ending, else NULL */
const char *predict_output_kind(const char *path);
/* The samples of an array file as the model takes them: (count, shape...)
 * floats in an array to free(), uint8 scaled to [0, 1]; a CSV table's
 * rows, and an array's for a model trained on a table, standardised with
 * the checkpoint's statistics. NULL after saying
 * what is wrong (a shape that is not (N, the model's sample shape), a
 * table the model was not trained on). */
float *predict_array_samples(ember_ctx *ctx, const char *path, const int64_t *shape, int ndim,
                             const ember_checkpoint *ck, int64_t *count);
/* Writes (count, classes) results: .npy as they are, .csv a row per input
 * (input, class, then a column per class name). Returns an exit status. */
int predict_write_output(ember_ctx *ctx, const char *path, const float *results, int64_t count, int classes,
                         const char *const *class_names, const char *const *inputs, bool logits);

#endif /* EMBER_PREDICT_H */
