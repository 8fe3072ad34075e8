/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-impl.h — the CPU backend's insides.
 *
 * Buffers are plain aligned host memory; an ember_ptr is a float pointer
 * plus an offset. Work is spread over a small thread pool of our own
 * (cpu_parallel_for) and OpenBLAS runs single-threaded inside each task, so
 * the two never compete for cores (cpu-gemm.c sets that for the length of
 * each call and restores the host program's setting after).
 */
#ifndef EMBER_CPU_IMPL_H
#define EMBER_CPU_IMPL_H

#include "../../core/backend.h"

struct cpu_pool;

struct cpu_device {
    struct ember_host host;
    struct cpu_pool *pool;
    int threads;
    bool blas; /* sgemm through OpenBLAS (else the plain loop): cpu-gemm.c */
};

static inline float *cpu_f32(ember_ptr p)
{
    return (float *)p.buf + p.off;
}

static inline int32_t *cpu_i32(ember_ptr p)
{
    return (int32_t *)p.buf + p.off;
}

/* ------------------------------------------------------------ threads */

typedef void (*cpu_task_fn)(void *arg, int64_t begin, int64_t end);

/* A pool of threads - 1 workers; the calling thread is the last worker. */
struct cpu_pool *cpu_pool_new(int threads);
void cpu_pool_free(struct cpu_pool *pool);

/* Runs fn over [0, n) cut into one contiguous chunk per thread and returns
 * when every chunk is done. Chunks are at least `grain` long, so a small
 * job runs on the calling thread alone, with no hand-off cost. */
void cpu_parallel_for(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg);

/* Planes per task for a job over (image, channel) planes of this much work
 * each: enough planes that a task is worth handing to a thread. */
static inline int64_t cpu_plane_grain(int64_t work_per_plane)
{
    return 16384 / (work_per_plane + 1) + 1;
}

/* --------------------------------------------------------- primitives */

/* cpu_fill, cpu_unary, ...: each primitive of core/backend.h's list, in
 * the file of its family (cpu-elementwise.c, cpu-reduce.c, cpu-gemm.c,
 * cpu-conv.c, cpu-pool.c, cpu-loss.c, cpu-optim.c) */
#define CPU_PRIMITIVE_DECLARE(name, params, ...) ember_status cpu_##name params;
EMBER_PRIMITIVES(CPU_PRIMITIVE_DECLARE)
#undef CPU_PRIMITIVE_DECLARE

/* The plain loop (cpu-gemm.c): C = alpha op(A) op(B) + beta C for the m x n
 * part given, without OpenBLAS; also the skinny kernels' last columns. */
void cpu_gemm_plain(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b, float *c);

/* The products with one short side (cpu-gemm-skinny.c): computes C for the
 * m x n part given and returns true, or returns false for a shape it does
 * not take (or a CPU without AVX2 and FMA, or EMBER_CPU_GEMM=blas). */
bool cpu_gemm_skinny(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b, float *c);

/* "OpenBLAS 0.3.21" or "built-in sgemm (no OpenBLAS)": the build's, and
 * the device's (the built-in one where OpenBLAS does not fit) */
const char *cpu_blas_library(void);
const char *cpu_blas_name(const struct cpu_device *d);
/* Whether OpenBLAS's work buffers for `threads` threads fit below the
 * process's address-space limit, with room to spare; why not, if not. */
bool cpu_blas_fits(int threads, char *why, size_t why_len);

#endif /* EMBER_CPU_IMPL_H */
