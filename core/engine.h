/* SPDX-License-Identifier: MIT */
/*
 * core/engine.h — the engine as io/'s loaders and writers see it: the
 * public API (ember.h) and this, and nothing of the engine's own structs.
 * tests/project/test_layers.py fails when a file of io/ includes any other
 * header of core/ (the -impl.h ones are the engine's private parts).
 *
 * What a loader or writer needs beyond the public API: to fail with a
 * message on the context and to count its host memory there; a shape as
 * text; to skip a random generator ahead; to time its host work in the
 * profile; the batcher's views of a batch's first rows; and the flat
 * storage behind a parameter set and an optimizer's state, which
 * checkpoints read and write in one pass rather than tensor by tensor.
 */
#ifndef EMBER_ENGINE_H
#define EMBER_ENGINE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"

/* Records status and message on the context and returns the status, so
 * that `return ember_fail(ctx, EMBER_ERR_ARG, "...")` reads as one step.
 * The message is also logged at debug level (the caller decides whether
 * the failure is worth printing). The engine's name for the public
 * ember_set_error, which code built on ember uses the same way. */
#define ember_fail ember_set_error
ember_status ember_vfail(ember_ctx *ctx, ember_status status, const char *fmt, va_list ap);

/* Host allocations the context counts (memory stats). They report out of
 * memory on the context and return NULL. */
void *ember_host_alloc(ember_ctx *ctx, size_t bytes);
void *ember_host_calloc(ember_ctx *ctx, size_t count, size_t size);
/* a counted copy of s */
char *ember_host_strdup(ember_ctx *ctx, const char *s);
/* grows *array (of `elem` bytes each) to hold at least `need` elements */
ember_status ember_host_grow(ember_ctx *ctx, void **array, int64_t *cap, int64_t need, size_t elem);

/* the product of shape's ndim sizes; "(64, 16, 28, 28)" into buf, for messages */
int64_t ember_shape_numel(int ndim, const int64_t *shape);
const char *ember_shape_str(const ember_tensor *t, char *buf, size_t len);

/* Moves the generator on by `draws` draws (ember_rng_u32 calls) at once:
 * SplitMix64's state is a counter, so draw k is a function of the seed and
 * k alone (core/rng.c). */
void ember_rng_skip(ember_rng *rng, uint64_t draws);

/* A stretch of host work with no primitive in it (the batcher filling a
 * batch), timed as a row of its own under the op label that
 * ember_profile_op set (core/profile.c; cheap when not profiling).
 * ember_profile_host_begin returns the start, for ember_profile_host_end. */
void ember_profile_op(ember_ctx *ctx, const char *op, const char *phase);
double ember_profile_host_begin(ember_ctx *ctx);
void ember_profile_host_end(ember_ctx *ctx, const char *what, double start);

/* true when a device is open; otherwise records why not */
bool ember_ctx_ready(ember_ctx *ctx);
/* Puts back a failure taken earlier from ember_last_status and
 * ember_last_error, after a try that may fail and does not matter. */
void ember_error_restore(ember_ctx *ctx, ember_status status, const char *message);

/* ------------------------------------------------------------- tensors */

/* the shape: ember_tensor_ndim(t) sizes */
const int64_t *ember_tensor_shape(const ember_tensor *t);
/* The batcher's tensors, which it owns and frees (ember_batcher_free)
 * rather than the caller, and views of their first `rows` rows for a
 * short last batch. */
ember_tensor *ember_batch_tensor_new(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape);
ember_tensor *ember_batch_tensor_rows(ember_tensor *t, int64_t rows);
void ember_batch_tensor_free(ember_tensor *t);

/* ------------------------------------------------------ parameter sets
 * Every parameter is a view of one flat tensor, and every buffer of
 * another: a checkpoint reads or writes each in one transfer. */
ember_ctx *ember_params_ctx(const ember_params *p);
/* the flat tensor of the parameters (buffers false) or the buffers (true),
 * NULL when there are none; the elements of it in use, padding included */
ember_tensor *ember_params_flat(const ember_params *p, bool buffers);
int64_t ember_params_flat_used(const ember_params *p, bool buffers);
/* where item i's values start in its flat tensor, in elements */
int64_t ember_params_flat_index(const ember_params *p, int i);

/* --------------------------------------------------------- optimizers
 * Their state, laid out as their parameters' flat tensor, which
 * ember_optim_save writes under PyTorch's names (io/optim-state.c). */
ember_params *ember_optim_params(const ember_optim *opt);
/* "sgd", "adam" or "adamw" */
const char *ember_optim_kind(const ember_optim *opt);
/* 1 (SGD's momentum) or 2 (Adam's first and second moments), and each */
int ember_optim_state_count(const ember_optim *opt);
ember_tensor *ember_optim_state(const ember_optim *opt, int k);
void ember_optim_set_steps(ember_optim *opt, int64_t steps);
/* The most steps a loaded state may claim: far past any run, and exact as
 * the double its bias correction is computed in. */
#define EMBER_OPTIM_MAX_STEPS ((int64_t)1 << 53)

#endif /* EMBER_ENGINE_H */
