/* SPDX-License-Identifier: MIT */
/*
 * core/profile-impl.h — the profiler: a backend that wraps a backend.
 *
 * While a context profiles (ember_profile_start), its backend table is
 * swapped for one whose every entry times the real backend's entry and
 * then calls it: the core and the backends do not change, and with
 * profiling off nothing is swapped, so it costs nothing (docs/design.md,
 * "Seeing where the time goes"). What is timed:
 *
 *   op rows        which op of the core was running: "conv2d forward" (set
 *                  by ember_op_begin), "conv2d backward" (ember_backward),
 *                  "adam step", "batch" (the batcher, host work included)
 *   primitive rows each primitive the op called, on the host's clock after
 *                  the device has finished it (the profiler waits for the
 *                  device after every primitive, so a GPU's asynchronous
 *                  launches are counted where they run)
 *   kernel rows    on GPUs, each kernel a primitive launched, timed by the
 *                  device itself (OpenCL and CUDA events), reported by the
 *                  backend through ember_host.kernel_timed
 *
 * with the work of each call (FLOPs and bytes moved, from the primitive's
 * geometry) for GFLOP/s and GB/s, and, when asked, every call as an event
 * of a Chrome trace, with the shapes of the inputs of the op it served.
 */
#ifndef EMBER_PROFILE_IMPL_H
#define EMBER_PROFILE_IMPL_H

#include "ctx-impl.h"

struct ember_profiler;

/* The profiler's own, through the inline helpers below. */
void ember_profile_set_label(struct ember_profiler *p, const char *op, const char *phase);
/* the label now and the shapes of its op's inputs, so that a helper op can
 * put them back when it is done (ember_contiguous) */
struct ember_profile_mark {
    const char *op, *phase, *inputs;
};
struct ember_profile_mark ember_profile_get_mark(const struct ember_profiler *p);
void ember_profile_put_mark(struct ember_profiler *p, struct ember_profile_mark mark);

/* What runs now, for the op rows: `op` and `phase` are static strings
 * ("conv2d", "forward"). Cheap when the context is not profiling. A new
 * phase of the same op ("forward [im2col]") keeps its inputs' shapes. */
static inline void ember_profile_label(ember_ctx *ctx, const char *op, const char *phase)
{
    if (ctx->profiler)
        ember_profile_set_label(ctx->profiler, op, phase);
}
static inline struct ember_profile_mark ember_profile_save(const ember_ctx *ctx)
{
    return ctx->profiler ? ember_profile_get_mark(ctx->profiler) : (struct ember_profile_mark){0};
}
static inline void ember_profile_restore(ember_ctx *ctx, struct ember_profile_mark mark)
{
    if (ctx->profiler && mark.op)
        ember_profile_put_mark(ctx->profiler, mark);
}

/* The shapes of the inputs of the op now running (any may be NULL), for
 * the trace's events ("inputs": [[64, 1, 28, 28], [8, 1, 3, 3]]): set
 * after its label, by ember_op_begin and by the backward pass. Cheap when
 * the context is not tracing. */
struct ember_tensor;
void ember_profile_set_inputs(struct ember_profiler *p, const struct ember_tensor *const in[3]);
static inline void ember_profile_inputs(ember_ctx *ctx, const struct ember_tensor *const in[3])
{
    if (ctx->profiler)
        ember_profile_set_inputs(ctx->profiler, in);
}

/* ember_profile_host_begin, ember_profile_host_end and ember_profile_op
 * (the label, from outside the engine): engine.h */

/* ember_host.kernel_timed: a backend's report of one kernel's device time
 * and its launch (`groups` work-groups or blocks of `local` threads),
 * which belongs to the primitive running now */
void ember_profile_kernel_timed(void *ctx, const char *kernel, const size_t groups[3], size_t local,
                                double seconds);

/* Stops profiling and frees everything (ember_ctx_free). */
void ember_profile_free(ember_ctx *ctx);

#endif /* EMBER_PROFILE_IMPL_H */
