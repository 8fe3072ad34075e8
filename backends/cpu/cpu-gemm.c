/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-gemm.c — sgemm through OpenBLAS's cblas, threaded by
 * our pool: a batch is split by matrices, a single product by rows or
 * columns of C. Without OpenBLAS (EMBER_HAVE_OPENBLAS unset), or where
 * its buffers would not fit an address-space limit, a plain blocked loop
 * stands in (cpu-gemm-plain.c), correct but several times slower. The
 * products with one short side go to cpu-gemm-skinny.c first, and under
 * EMBER_MATMUL_HIGH the large ones to the AMX tile unit where the CPU has
 * one (cpu-gemm-amx.c).
 */
#include "cpu-impl.h"
#include "limits-impl.h"
#include <pthread.h>
#include <stdio.h>

#ifdef EMBER_HAVE_OPENBLAS
#include "cpu-blas.h"

/* "OpenBLAS 0.3.21" (openblas_get_config() reads "OpenBLAS 0.3.21 DYNAMIC_ARCH ...") */
static const char *openblas_name(void)
{
    static char name[64];
    if (!name[0]) {
        const char *config = openblas_get_config();
        int len = 0;
        for (int spaces = 0; config[len] && !(config[len] == ' ' && ++spaces == 2); len++)
            ;
        snprintf(name, sizeof name, "%.*s", len, config);
    }
    return name;
}

/* OpenBLAS takes a work buffer of BUFFER_SIZE (128 MiB of address space on
 * x86-64) for each thread that calls it, and when the allocation fails it
 * tries again forever. Under an address-space limit (ulimit -v) that is a
 * hang, so a device whose threads' buffers would not fit below the limit,
 * with room left for the data and the model, uses the plain sgemm. */
#define OPENBLAS_BUFFER_BYTES ((uint64_t)128 << 20)
#define ROOM_FOR_THE_REST     ((uint64_t)256 << 20)

bool cpu_blas_fits(int threads, char *why, size_t why_len)
{
    char limit[256];
    if (ember_address_space_fits((uint64_t)threads * OPENBLAS_BUFFER_BYTES + ROOM_FOR_THE_REST, limit,
                                 sizeof limit))
        return true;
    snprintf(why, why_len, "%s for OpenBLAS's buffers (%d x 128 MiB) and 256 MiB for the rest", limit,
             threads);
    return false;
}

static void gemm_one(const struct ember_gemm *g, bool blas, int64_t m, int64_t n, const float *a,
                     const float *b, float *c)
{
    if (cpu_gemm_amx(g, m, n, a, b, c) || cpu_gemm_skinny(g, m, n, a, b, c))
        return;
    if (!blas) {
        cpu_gemm_plain(g, m, n, a, b, c);
        return;
    }
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)g->k, g->alpha, a, (int)g->lda, b, (int)g->ldb, g->beta, c, (int)g->ldc);
}

/* OpenBLAS's thread count is the whole process's, and the host program
 * may use OpenBLAS too (numpy in the same process, its own solvers). ember
 * wants it single-threaded inside its own pool's tasks, so it sets 1 for
 * the length of each of its calls and puts the caller's count back after:
 * two stores, against a product of at least thousands of flops. Several
 * contexts may multiply at once (data-parallel replicas, docs/parallel.md),
 * so the first one in sets 1 and the last one out restores: no call runs
 * while another has put the caller's count back. */
static pthread_mutex_t blas_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_threads_inside, blas_threads_theirs;

static void blas_threads_enter(void)
{
    pthread_mutex_lock(&blas_threads_lock);
    if (blas_threads_inside++ == 0) {
        blas_threads_theirs = openblas_get_num_threads();
        if (blas_threads_theirs != 1)
            openblas_set_num_threads(1);
    }
    pthread_mutex_unlock(&blas_threads_lock);
}

static void blas_threads_leave(void)
{
    pthread_mutex_lock(&blas_threads_lock);
    if (--blas_threads_inside == 0 && blas_threads_theirs != 1)
        openblas_set_num_threads(blas_threads_theirs);
    pthread_mutex_unlock(&blas_threads_lock);
}

const char *cpu_blas_library(void) { return openblas_name(); }

const char *cpu_blas_name(const struct cpu_device *d)
{
    return d->blas ? openblas_name() : "built-in sgemm (OpenBLAS does not fit the address-space limit)";
}

#else

bool cpu_blas_fits(int threads, char *why, size_t why_len)
{
    snprintf(why, why_len, "built without OpenBLAS");
    return false;
}

static void gemm_one(const struct ember_gemm *g, bool blas, int64_t m, int64_t n, const float *a,
                     const float *b, float *c)
{
    (void)blas;
    if (!cpu_gemm_amx(g, m, n, a, b, c))
        cpu_gemm_plain(g, m, n, a, b, c);
}

static void blas_threads_enter(void) {}

static void blas_threads_leave(void) {}

const char *cpu_blas_library(void) { return "built-in sgemm (no OpenBLAS)"; }

const char *cpu_blas_name(const struct cpu_device *d)
{
    (void)d;
    return cpu_blas_library();
}

#endif

struct gemm_job {
    const struct ember_gemm *g;
    bool blas;
    const float *a, *b;
    float *c;
    bool split_rows; /* for a single product: split C's rows, else its columns */
};

static void gemm_batch_range(void *p, int64_t begin, int64_t end)
{
    const struct gemm_job *j = p;
    const struct ember_gemm *g = j->g;
    for (int64_t i = begin; i < end; i++)
        gemm_one(g, j->blas, g->m, g->n, j->a + i * g->stride_a, j->b + i * g->stride_b,
                 j->c + i * g->stride_c);
}

static void gemm_part_range(void *p, int64_t begin, int64_t end)
{
    const struct gemm_job *j = p;
    const struct ember_gemm *g = j->g;
    if (j->split_rows) {
        const float *a = g->trans_a ? j->a + begin : j->a + begin * g->lda;
        gemm_one(g, j->blas, end - begin, g->n, a, j->b, j->c + begin * g->ldc);
    } else {
        const float *b = g->trans_b ? j->b + begin * g->ldb : j->b + begin;
        gemm_one(g, j->blas, g->m, end - begin, j->a, b, j->c + begin);
    }
}

ember_status cpu_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c)
{
    struct cpu_device *d = dev;
    struct gemm_job j = {.g = g, .blas = d->blas, .a = cpu_f32(a), .b = cpu_f32(b), .c = cpu_f32(c)};
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return EMBER_OK;
    if (g->k == 0) { /* an empty sum: C = beta * C */
        for (int64_t i = 0; i < g->batch; i++)
            for (int64_t r = 0; r < g->m; r++)
                for (int64_t col = 0; col < g->n; col++) {
                    float *x = j.c + i * g->stride_c + r * g->ldc + col;
                    *x = g->beta != 0.0f ? g->beta * *x : 0.0f;
                }
        return EMBER_OK;
    }
    int64_t flops = 2 * g->m * g->n * g->k;
    blas_threads_enter();
    if (g->batch > 1) {
        /* one task per matrix, at least ~100k flops per task */
        cpu_parallel_for(d->pool, g->batch, 100000 / flops + 1, gemm_batch_range, &j);
    } else {
        /* one product: cut the longer side of C into panels of at least 32 */
        j.split_rows = g->m >= g->n;
        int64_t len = j.split_rows ? g->m : g->n;
        int64_t grain = flops < 200000 ? len : 32;
        cpu_parallel_for(d->pool, len, grain, gemm_part_range, &j);
    }
    blas_threads_leave();
    return EMBER_OK;
}
