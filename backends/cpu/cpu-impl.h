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

#include "backend.h"

struct cpu_pool;

struct cpu_device {
    struct ember_host host;
    struct cpu_pool *pool;
    int threads;
    bool blas; /* sgemm through OpenBLAS (else the plain loop): cpu-gemm.c */
    /* conv_winograd's transformed tiles and conv_direct's planes, kept
     * between calls and grown to the largest asked for, so that a model's
     * prediction calls no malloc (cpu-winograd.c, cpu-conv-direct.c) */
    float *scratch;
    size_t scratch_floats;
    int64_t *taps; /* conv_direct's tap offsets, the same way */
    size_t taps_count;
};

/* d->scratch grown to at least `floats` (64-byte aligned), or
 * EMBER_ERR_NOMEM reported for `primitive` */
ember_status cpu_scratch(struct cpu_device *d, size_t floats, const char *primitive);

static inline float *cpu_f32(ember_ptr p) { return (float *)p.buf + p.off; }

static inline int32_t *cpu_i32(ember_ptr p) { return (int32_t *)p.buf + p.off; }

/* e^x without libm, in plain arithmetic the compiler vectorises (glibc's
 * expf and tanhf are calls, one element at a time, and were a third of
 * LeNet-5's training step). x = k ln 2 + r, |r| <= ln 2 / 2; e^r from its
 * Taylor series to r^6 (error below 2e-7 relative), 2^k put straight into
 * the exponent bits. k is rounded by adding and taking away 1.5 * 2^23,
 * which needs no rounding instruction, and the sum's low bits then hold k
 * itself, read as an unsigned integer: no float-to-int cast, which for a
 * NaN input would be undefined (a NaN still comes out NaN, through p). x is
 * clamped to where 2^k is a normal float, so e^x saturates to about 1e-38
 * and 2e38 beyond. */
static inline float poly_expf(float x)
{
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    union {
        float f;
        uint32_t u;
    } rounded = {.f = x * 1.44269504f + 12582912.0f};
    float k = rounded.f - 12582912.0f;
    float r = (x - k * 0.693145752f) - k * 1.42860677e-6f; /* ln 2 in two parts: k * hi is exact */
    float p =
        1.0f +
        r * (1.0f + r * (0.5f + r * (1.66666667e-1f +
                                     r * (4.16666667e-2f + r * (8.33333333e-3f + r * 1.38888889e-3f)))));
    /* 0x4B400000 is 1.5 * 2^23's bits; unsigned arithmetic wraps, defined */
    union {
        uint32_t u;
        float f;
    } scale = {.u = (rounded.u - 0x4B400000u + 127u) << 23};
    return p * scale.f;
}

/* Loops bound by arithmetic (exponentials, divisions, square roots per
 * element) are compiled for wider vectors too, and the widest the CPU has
 * is picked when the library loads; the build itself assumes only SSE2.
 * No clone fuses a multiply and an add (C11 keeps them apart), so every
 * clone gives the same bits. The choice at load time needs the ELF
 * loader's ifunc, which Windows' PE format has no counterpart of: there
 * these loops are SSE2 only (docs/windows.md has what that costs). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(_WIN32)
#define CPU_WIDEST_VECTORS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CPU_WIDEST_VECTORS
#endif

/* The widest vector instructions ember's hand-written kernels may use
 * (cpu-conv-direct.c, cpu-gemm-skinny.c, cpu-quant.c): what the CPU has,
 * asked once, or less when EMBER_CPU_SIMD says so ("avx2", "none"; to
 * compare, and to run the narrower kernels on a wider CPU in the tests).
 * On 64-bit ARM it is NEON, which every ARMv8-A core has, unless
 * EMBER_CPU_SIMD=none. The loops of CPU_WIDEST_VECTORS are the loader's
 * choice and do not follow it; on ARM the compiler makes those loops NEON
 * loops whatever it says. The kernels of eight-float vectors (cpu-vec8.h)
 * run for every level but CPU_SIMD_NONE; at CPU_SIMD_AVX512, those written
 * for every width (cpu-vec.h) run on sixteen (cpu-vec16.h) instead. */
enum cpu_simd { CPU_SIMD_NONE = 0, CPU_SIMD_NEON = 1, CPU_SIMD_AVX2 = 2, CPU_SIMD_AVX512 = 3 };
enum cpu_simd cpu_simd(void);

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
static inline int64_t cpu_plane_grain(int64_t work_per_plane) { return 16384 / (work_per_plane + 1) + 1; }

/* --------------------------------------------------------- primitives */

/* cpu_fill, cpu_unary, ...: each primitive of backends/backend.h's list, in
 * the file of its family (cpu-elementwise.c, cpu-reduce.c, cpu-gemm.c,
 * cpu-conv.c, cpu-pool.c, cpu-loss.c, cpu-optim.c, cpu-dropout.c,
 * cpu-softmax.c, cpu-norm.c, cpu-embedding.c, cpu-quant.c, cpu-rope.c) */
#define CPU_PRIMITIVE_DECLARE(name, params, ...) ember_status cpu_##name params;
EMBER_PRIMITIVES(CPU_PRIMITIVE_DECLARE)
#undef CPU_PRIMITIVE_DECLARE

/* The plain loop (cpu-gemm-plain.c): C = alpha op(A) op(B) + beta C for
 * the m x n part given, without OpenBLAS; also the skinny kernels' last
 * columns. */
void cpu_gemm_plain(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                    float *c);

/* the backend table's conv_direct_fast (cpu-conv-direct.c) */
bool cpu_conv_direct_fast(void *dev, const struct ember_conv_geom *g);

/* The products with one short side (cpu-gemm-skinny.c): computes C for the
 * m x n part given and returns true, or returns false for a shape it does
 * not take (or a CPU without AVX2 and FMA, or EMBER_CPU_GEMM=blas). */
bool cpu_gemm_skinny(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                     float *c);

/* The products on the AMX tile unit (cpu-gemm-amx.c), for
 * EMBER_MATMUL_HIGH and MEDIUM: computes C for the m x n part given and
 * returns true, or returns false for a product it does not take
 * (EMBER_MATMUL_HIGHEST, a small one, no AMX). cpu_amx: the CPU has the
 * tile unit, Linux lets ember use it, and EMBER_CPU_SIMD does not narrow
 * the kernels ("avx512" keeps AVX-512 and leaves AMX out). */
bool cpu_gemm_amx(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b, float *c);
bool cpu_amx(void);

/* Whether quant_matmul at EMBER_MATMUL_MEDIUM rounds x to 8-bit integers
 * for Q4_0, Q4_1 and Q8_0 weights (cpu-quant.c): the CPU has AVX2 and F16C
 * or NEON, and EMBER_CPU_SIMD does not say "none". */
bool cpu_quant_i8(void);

/* "OpenBLAS 0.3.21" or "built-in sgemm (no OpenBLAS)": the build's, and
 * the device's (the built-in one where OpenBLAS does not fit) */
const char *cpu_blas_library(void);
const char *cpu_blas_name(const struct cpu_device *d);
/* Whether OpenBLAS's work buffers for `threads` threads fit below the
 * process's address-space limit, with room to spare; why not, if not. */
bool cpu_blas_fits(int threads, char *why, size_t why_len);

#endif /* EMBER_CPU_IMPL_H */
