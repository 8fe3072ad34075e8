/* SPDX-License-Identifier: MIT */
/*
 * ember/inspect.h — seeing what ember does: the profile, the kernels and their PTX: a part of ember.h.
 *
 * Nothing a training program needs: where a context's time goes, and the
 * GPU kernels every GPU backend runs, their PTX and what a simulated GPU
 * saw of them.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/inspect.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_INSPECT_H)
#define EMBER_PART_INSPECT_H

/* -------------------------------------------------------------- inspection
 *
 * Seeing what ember does rather than doing it, last because a training
 * program needs none of it: where a context's time goes (the profile), and
 * the GPU kernels every GPU backend runs, written once (backends/kernels),
 * for teaching and for checking what a device gets (their PTX, and what a
 * simulated GPU saw of them). */

/* Profiling: where a context's time goes (docs/how-it-works.md).
 *
 *     ember_profile_start(ctx, false);
 *     ... train or evaluate ...
 *     ember_profile_stop(ctx);
 *     char *table = ember_profile_table(ctx);
 *     fputs(table, stdout);
 *     ember_free(table);
 *
 * While it runs, every primitive the context's ops call is timed until the
 * device has finished it, under the op that called it ("conv2d forward",
 * "conv2d backward", "adam step"), with its FLOPs and bytes; on GPUs each
 * kernel is also timed by the device's own events. It waits for the device
 * after every primitive, so a profiled run is slower on a GPU; a context
 * that is not profiling pays nothing. Start and stop may be repeated: the
 * rows add up until ember_profile_clear. With `trace`, every call is also
 * kept (up to a million) for ember_profile_write_trace. Needs an open
 * device. Profiling is per context, from the thread that uses it. */
EMBER_API ember_status ember_profile_start(ember_ctx *ctx, bool trace);
/* ember_profile_stop waits for the device to finish what was timed: its
 * status is that wait's (a kernel that failed meanwhile), EMBER_OK when
 * profiling was not on. */
EMBER_API ember_status ember_profile_stop(ember_ctx *ctx);
/* The table: one row per op, slowest first, and under it each primitive
 * (and kernel) with calls, total and mean time, share of the profiled
 * time, GFLOP/s and GB/s. A string to ember_free(); NULL when nothing was
 * profiled or out of memory. */
EMBER_API char *ember_profile_table(const ember_ctx *ctx);
/* The profiled seconds (between starts and stops) and the sum of the rows. */
EMBER_API void ember_profile_totals(const ember_ctx *ctx, double *wall_seconds, double *row_seconds);
/* Writes the trace as JSON in the Trace Event Format, which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: process 1 is the host (op
 * spans with the calls they made inside them), process 2 the device (the
 * kernels it ran; on the CPU, the primitives). Times in microseconds. */
EMBER_API ember_status ember_profile_write_trace(ember_ctx *ctx, const char *path);
/* Stops profiling and forgets the rows and the trace. */
EMBER_API void ember_profile_clear(ember_ctx *ctx);

/* How many kernels there are; the name and a one-line summary of each
 * (NULL for an index out of range). The list is in every build, one
 * without GPU backends included: it names the kernels ember has, whether
 * or not this build can run them. */
EMBER_API int ember_kernel_count(void);
EMBER_API const char *ember_kernel_name_at(int index, const char **summary);

/* The PTX ember loads for `kernel` (NULL: every kernel), as the CUDA
 * backend would compile it for `arch` ("sm_86"; NULL: the first GPU
 * present): through the newest NVRTC that targets that arch or one below
 * it, or, with `baseline` set or no such NVRTC, the built-in sm_30 PTX.
 * `how` (may be NULL) receives which it was. Works without a GPU given an
 * arch. Returns a string to ember_free(), or NULL with the reason in `why`: in
 * a build without the CUDA backend (-DEMBER_CUDA=OFF), always NULL, with
 * "this build has no CUDA backend" in `why`. */
EMBER_API char *ember_ptx(const char *kernel, const char *arch, bool baseline, char *how, size_t how_len,
                          char *why, size_t why_len);

/* What a simulated GPU saw. A context on "ptxsim:N" runs the kernels the
 * CUDA backend would give one of four real GPUs (0 a Quadro K2100M, 1 a
 * Tesla K40m, 2 a GeForce GTX 1080, 3 an H100) in ember's PTX simulator,
 * checking every launch (docs/how-it-works.md). This reports the first
 * launch of `kernel` there: instructions per thread by class, warp
 * execution efficiency, each global access's coalescing, shared-memory bank
 * conflicts, occupancy on that GPU with `registers` a thread (0: counted
 * from the PTX; `registers_from` says where a given count came from) and a
 * roofline estimate of its time; with `kernel` NULL, a line per kernel
 * launched. Text to ember_free(), or NULL with the reason in `why` (a device that
 * is not simulated, a kernel it never launched). */
EMBER_API char *ember_kernel_report(ember_ctx *ctx, const char *kernel, int registers,
                                    const char *registers_from, char *why, size_t why_len);

#endif /* EMBER_PART_INSPECT_H */
