/* SPDX-License-Identifier: MIT */
/*
 * bench/limits.c — what this machine can do for ember's CPU work: OpenBLAS's
 * sgemm at a large size, the same sgemm at the shapes the models' layers
 * give it at batch 64, and a stream-copy bandwidth; on each thread count.
 *
 *   cc -O2 -Wall -Wextra bench/limits.c $(pkg-config --cflags --libs openblas) -lpthread \
 *       -o build-bench/limits
 *   build-bench/limits [--threads 1,2] [--size 2048] [--seconds 0.5] \
 *       [--models simplecnn,kerascnn,resnet8,vgg8]
 *
 * (bench/compute_bound.sh builds and runs it.) Prints Markdown.
 *
 * The large sgemm is one (S, S) @ (S, S) product on OpenBLAS's own threads:
 * the machine's compute rate. The models' products are the ones ember's CPU
 * backend makes in a training step (core/ops-conv.c, core/ops-gemm.c), run
 * as it runs them: OpenBLAS on one thread inside each of our threads, a
 * batch of products split by items, a single product split along the longer
 * side of C. A convolution of x (N, C, H, W) by w (OC, C, KH, KW) is, for
 * each image b, with P = OH * OW output positions and CKK = C * KH * KW:
 *
 *   forward          y[b] (OC, P)    = w (OC, CKK) @ col[b] (CKK, P)
 *   weight gradient  dw[b] (OC, CKK) = dy[b] (OC, P) @ col[b]^T (P, CKK)
 *   input gradient   dcol[b] (CKK, P) = w^T (CKK, OC) @ dy[b] (OC, P)   (not for the first layer)
 *
 * and a linear layer of x (64, in) and w (out, in):
 *
 *   forward          y (64, out) = x (64, in) @ w^T (in, out)
 *   input gradient   dx (64, in) = dy (64, out) @ w (out, in)
 *   weight gradient  dw (out, in) = dy^T (out, 64) @ x (64, in)
 *
 * Each figure is the best of three rounds of at least --seconds / 3 each,
 * after one call to warm up. The copy is memcpy between two 256 MiB
 * arrays, each thread its own slice, counted as bytes read plus written.
 * The multiply-add peak is what no product can pass: on each thread, twelve
 * independent chains of fused multiply-adds on the widest vectors the CPU
 * has (AVX-512, AVX2, or on other CPUs what the compiler makes of plain C),
 * enough chains that none waits for its last result.
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#define BATCH       64
#define MAX_THREADS 64
#define COPY_FLOATS ((size_t)64 << 20) /* 256 MiB */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ the pool */

/* Threads that wait for a call, run their share of it, and say so; the
 * calling thread runs share 0. They spin (yielding) between calls, so the
 * pool lives only while the models' products are timed, not beside
 * OpenBLAS's own threads. */
struct pool {
    int threads;
    pthread_t id[MAX_THREADS];
    void (*fn)(void *arg, int share, int shares);
    void *arg;
    atomic_uint generation;
    atomic_int finished;
    atomic_bool quit;
};

struct worker {
    struct pool *pool;
    int share;
};

static struct worker workers[MAX_THREADS];

static void *pool_worker(void *p)
{
    struct worker *w = p;
    struct pool *pool = w->pool;
    unsigned seen = 0;
    for (;;) {
        while (atomic_load(&pool->generation) == seen)
            sched_yield();
        seen = atomic_load(&pool->generation);
        if (atomic_load(&pool->quit))
            return NULL;
        pool->fn(pool->arg, w->share, pool->threads);
        atomic_fetch_add(&pool->finished, 1);
    }
}

static int pool_start(struct pool *pool, int threads)
{
    memset(pool, 0, sizeof *pool);
    pool->threads = threads;
    for (int i = 1; i < threads; i++) {
        workers[i] = (struct worker){pool, i};
        if (pthread_create(&pool->id[i], NULL, pool_worker, &workers[i]) != 0) {
            pool->threads = i;
            return -1;
        }
    }
    return 0;
}

static void pool_run(struct pool *pool, void (*fn)(void *, int, int), void *arg)
{
    pool->fn = fn;
    pool->arg = arg;
    atomic_store(&pool->finished, 0);
    atomic_fetch_add(&pool->generation, 1);
    fn(arg, 0, pool->threads);
    while (atomic_load(&pool->finished) < pool->threads - 1)
        sched_yield();
}

static void pool_stop(struct pool *pool)
{
    atomic_store(&pool->quit, true);
    atomic_fetch_add(&pool->generation, 1);
    for (int i = 1; i < pool->threads; i++)
        pthread_join(pool->id[i], NULL);
}

/* the best time of one call over three rounds of at least `seconds` / 3 */
static double best_time(void (*call)(void *), void *arg, double seconds)
{
    call(arg);
    double best = 1e30;
    for (int round = 0; round < 3; round++) {
        int calls = 0;
        double start = now(), elapsed;
        do {
            call(arg);
            calls++;
            elapsed = now() - start;
        } while (elapsed < seconds / 3);
        if (elapsed / calls < best)
            best = elapsed / calls;
    }
    return best;
}

/* ------------------------------------------------------------ products */

/* C (M, N) = op(A) (M, K) @ op(B) (K, N) for each of `batch` items, one A
 * for all of them when shared_a (a convolution's weights). The matrices are
 * contiguous and row-major, one after another. */
struct gemm {
    const char *layer, *pass;
    bool trans_a, trans_b, shared_a;
    int m, n, k, batch;
};

static int lda(const struct gemm *g) { return g->trans_a ? g->m : g->k; }
static int ldb(const struct gemm *g) { return g->trans_b ? g->k : g->n; }
static double gemm_flops(const struct gemm *g) { return 2.0 * g->m * g->n * g->k * g->batch; }
static size_t stride_a(const struct gemm *g) { return g->shared_a ? 0 : (size_t)g->m * g->k; }
static size_t stride_b(const struct gemm *g) { return (size_t)g->k * g->n; }
static size_t stride_c(const struct gemm *g) { return (size_t)g->m * g->n; }

static void sgemm(const struct gemm *g, int m, int n, const float *a, const float *b, float *c)
{
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans,
                m, n, g->k, 1.0f, a, lda(g), b, ldb(g), 0.0f, c, g->n);
}

struct gemm_call {
    const struct gemm *g;
    const float *a, *b;
    float *c;
    struct pool *pool;
};

/* share `share` of `shares`: items of a batch; rows or columns of one product
 * (of at least 200k flops; a smaller one runs on share 0 alone, as in ember) */
static void gemm_share(void *p, int share, int shares)
{
    const struct gemm_call *x = p;
    const struct gemm *g = x->g;
    if (g->batch > 1) {
        for (int i = g->batch * share / shares; i < g->batch * (share + 1) / shares; i++)
            sgemm(g, g->m, g->n, x->a + i * stride_a(g), x->b + i * stride_b(g), x->c + i * stride_c(g));
        return;
    }
    if (gemm_flops(g) < 200000) {
        if (share == 0)
            sgemm(g, g->m, g->n, x->a, x->b, x->c);
        return;
    }
    bool rows = g->m >= g->n;
    int len = rows ? g->m : g->n, begin = len * share / shares, end = len * (share + 1) / shares;
    if (begin == end)
        return;
    if (rows)
        sgemm(g, end - begin, g->n, g->trans_a ? x->a + begin : x->a + (size_t)begin * lda(g), x->b,
              x->c + (size_t)begin * g->n);
    else
        sgemm(g, g->m, end - begin, x->a, g->trans_b ? x->b + (size_t)begin * ldb(g) : x->b + begin,
              x->c + begin);
}

static void gemm_call(void *p)
{
    struct gemm_call *x = p;
    pool_run(x->pool, gemm_share, x);
}

static void large_call(void *p)
{
    const struct gemm_call *x = p;
    sgemm(x->g, x->g->m, x->g->n, x->a, x->b, x->c);
}

static float *filled(size_t n)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "limits: out of memory (%zu floats)\n", n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        v[i] = 0.01f * (float)(i % 7) - 0.03f;
    return v;
}

/* seconds per call of product g on the pool's threads */
static double time_gemm(const struct gemm *g, struct pool *pool, double seconds)
{
    size_t na = (size_t)g->m * g->k * (g->shared_a ? 1 : g->batch);
    struct gemm_call x = {g, filled(na), filled(stride_b(g) * g->batch), filled(stride_c(g) * g->batch),
                          pool};
    double t = best_time(gemm_call, &x, seconds);
    free((void *)x.a);
    free((void *)x.b);
    free(x.c);
    return t;
}

/* ------------------------------------------------------------ the models */

/* A layer as `ember summary` lists it: a convolution (kernel > 0) of
 * c x h x w input, or a linear layer of c inputs (kernel 0); first: no
 * input gradient. */
struct layer {
    const char *name;
    int c, h, w, out, kernel, stride, pad;
    bool first;
};

struct model {
    const char *name;
    struct layer layers[12];
};

static const struct model models[] = {
    {"simplecnn", {{"conv1", 1, 28, 28, 16, 3, 1, 1, true}, {"fc", 3136, 1, 1, 10, 0, 1, 0, false}}},
    {"kerascnn", {{"conv1", 1, 28, 28, 32, 3, 1, 0, true}, {"fc", 21632, 1, 1, 10, 0, 1, 0, false}}},
    {"resnet8",
     {{"conv1", 1, 28, 28, 16, 3, 1, 1, true},
      {"layer1.0.conv1", 16, 28, 28, 16, 3, 1, 1, false},
      {"layer1.0.conv2", 16, 28, 28, 16, 3, 1, 1, false},
      {"layer2.0.conv1", 16, 28, 28, 32, 3, 2, 1, false},
      {"layer2.0.conv2", 32, 14, 14, 32, 3, 1, 1, false},
      {"layer2.0.downsample.0", 16, 28, 28, 32, 1, 2, 0, false},
      {"layer3.0.conv1", 32, 14, 14, 64, 3, 2, 1, false},
      {"layer3.0.conv2", 64, 7, 7, 64, 3, 1, 1, false},
      {"layer3.0.downsample.0", 32, 14, 14, 64, 1, 2, 0, false},
      {"fc", 64, 1, 1, 10, 0, 1, 0, false}}},
    {"vgg8",
     {{"features.0", 1, 28, 28, 16, 3, 1, 1, true},
      {"features.3", 16, 28, 28, 16, 3, 1, 1, false},
      {"features.7", 16, 14, 14, 32, 3, 1, 1, false},
      {"features.10", 32, 14, 14, 32, 3, 1, 1, false},
      {"features.14", 32, 7, 7, 64, 3, 1, 1, false},
      {"features.17", 64, 7, 7, 64, 3, 1, 1, false},
      {"classifier.1", 576, 1, 1, 256, 0, 1, 0, false},
      {"classifier.4", 256, 1, 1, 10, 0, 1, 0, false}}},
};

enum { A_T = 1, B_T = 2, A_SHARED = 4 }; /* A or B stored transposed; one A for the batch */

static struct gemm product(const struct layer *l, const char *pass, int flags, int m, int n, int k, int batch)
{
    return (struct gemm){.layer = l->name,
                         .pass = pass,
                         .trans_a = flags & A_T,
                         .trans_b = flags & B_T,
                         .shared_a = flags & A_SHARED,
                         .m = m,
                         .n = n,
                         .k = k,
                         .batch = batch};
}

/* the products of one layer's training step into out[]; their count */
static int layer_gemms(const struct layer *l, struct gemm *out)
{
    int n = 0;
    if (l->kernel == 0) { /* x (64, in), w (out, in) */
        out[n++] = product(l, "forward", B_T, BATCH, l->out, l->c, 1);
        if (!l->first)
            out[n++] = product(l, "input gradient", 0, BATCH, l->c, l->out, 1);
        out[n++] = product(l, "weight gradient", A_T, l->out, l->c, BATCH, 1);
        return n;
    }
    int oh = (l->h + 2 * l->pad - l->kernel) / l->stride + 1;
    int ow = (l->w + 2 * l->pad - l->kernel) / l->stride + 1;
    int p = oh * ow, ckk = l->c * l->kernel * l->kernel, oc = l->out;
    out[n++] = product(l, "forward", A_SHARED, oc, p, ckk, BATCH);
    out[n++] = product(l, "weight gradient", B_T, oc, ckk, p, BATCH);
    if (!l->first)
        out[n++] = product(l, "input gradient", A_T | A_SHARED, ckk, p, oc, BATCH);
    return n;
}

static const char *stored(const struct gemm *g)
{
    if (g->trans_a)
        return ", A stored transposed";
    return g->trans_b ? ", B stored transposed" : "";
}

static void model_table(const struct model *m, const int *threads, int nthreads, double seconds)
{
    struct gemm gemms[64];
    int count = 0;
    for (const struct layer *l = m->layers; l->name; l++)
        count += layer_gemms(l, gemms + count);

    double total[MAX_THREADS] = {0}, flops = 0;
    double rate[64][MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        struct pool pool;
        if (pool_start(&pool, threads[t]) != 0) {
            fprintf(stderr, "limits: cannot start %d threads\n", threads[t]);
            exit(1);
        }
        for (int i = 0; i < count; i++) {
            double s = time_gemm(&gemms[i], &pool, seconds);
            rate[i][t] = gemm_flops(&gemms[i]) / s / 1e9;
            total[t] += s;
        }
        pool_stop(&pool);
    }

    printf("\n### %s: its products at batch %d, as ember makes them\n\n", m->name, BATCH);
    printf("| layer | pass | product: batch x (M x K) @ (K x N) | MFLOP per step |");
    for (int t = 0; t < nthreads; t++)
        printf(" %d thread%s, GFLOP/s |", threads[t], threads[t] > 1 ? "s" : "");
    printf("\n|---|---|---|---|");
    for (int t = 0; t < nthreads; t++)
        printf("---|");
    printf("\n");
    for (int i = 0; i < count; i++) {
        const struct gemm *g = &gemms[i];
        flops += gemm_flops(g);
        printf("| %s | %s | %d x (%d x %d) @ (%d x %d)%s | %.2f |", g->layer, g->pass, g->batch, g->m, g->k,
               g->k, g->n, stored(g), gemm_flops(g) / 1e6);
        for (int t = 0; t < nthreads; t++)
            printf(" %.1f |", rate[i][t]);
        printf("\n");
    }
    printf("| all products | | | %.2f |", flops / 1e6);
    for (int t = 0; t < nthreads; t++)
        printf(" %.1f |", flops / total[t] / 1e9);
    printf("\n| images/s, products alone | | | %.3f per image |", flops / BATCH / 1e6);
    for (int t = 0; t < nthreads; t++)
        printf(" %.0f |", BATCH / total[t]);
    printf("\n");
}

/* ------------------------------------------------------------ copy */

struct copy_call {
    const float *from;
    float *to;
    struct pool *pool;
};

static void copy_share(void *p, int share, int shares)
{
    const struct copy_call *x = p;
    size_t begin = COPY_FLOATS * share / shares, end = COPY_FLOATS * (share + 1) / shares;
    memcpy(x->to + begin, x->from + begin, (end - begin) * sizeof *x->to);
}

static void copy_call(void *p)
{
    struct copy_call *x = p;
    pool_run(x->pool, copy_share, x);
}

/* ------------------------------------------------- the multiply-add peak */

#define CHAIN_STEPS 4000000L

/* chains_NAME: twelve chains of vectors of WIDTH floats, in GNU C's vector
 * types, which the compiler turns into fused multiply-adds (-ffp-contract
 * is "fast" in GNU C) on the instructions its attribute allows */
#define CHAINS(name, width, attribute)                                                                       \
    attribute static float chains_##name(void)                                                               \
    {                                                                                                        \
        typedef float vec __attribute__((vector_size(width * sizeof(float))));                               \
        vec acc[12], x = (vec){0} + 0.999f, y = (vec){0} + 1e-4f;                                            \
        for (int i = 0; i < 12; i++)                                                                         \
            acc[i] = (vec){0} + (float)i;                                                                    \
        for (long step = 0; step < CHAIN_STEPS; step++) { /* unrolled, the twelve stay in registers */       \
            _Pragma("GCC unroll 12") for (int i = 0; i < 12; i++) acc[i] = acc[i] * x + y;                   \
        }                                                                                                    \
        float sum = 0;                                                                                       \
        for (int i = 0; i < 12; i++)                                                                         \
            for (int k = 0; k < width; k++)                                                                  \
                sum += acc[i][k];                                                                            \
        return sum;                                                                                          \
    }
#if defined(__x86_64__) && defined(__GNUC__)
CHAINS(avx512, 16, __attribute__((target("avx512f"))))
CHAINS(avx2, 8, __attribute__((target("avx2,fma"))))
#endif
CHAINS(plain, 1, )

struct peak_call {
    float (*chains)(void);
    struct pool *pool;
    volatile float sink[MAX_THREADS]; /* each share's result, so that none is left out */
};

static void peak_share(void *p, int share, int shares)
{
    (void)shares;
    struct peak_call *x = p;
    x->sink[share] = x->chains();
}

static void peak_call(void *p)
{
    struct peak_call *x = p;
    pool_run(x->pool, peak_share, x);
}

/* the widest chains this CPU runs, and their floats a vector */
static float (*widest_chains(int *lanes, const char **name))(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return *lanes = 16, *name = "AVX-512", chains_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return *lanes = 8, *name = "AVX2", chains_avx2;
#endif
    return *lanes = 1, *name = "plain C", chains_plain;
}

/* ------------------------------------------------------------ main */

static const char usage[] = "usage: limits [--threads 1,2] [--size 2048] [--seconds 0.5]\n"
                            "              [--models simplecnn,kerascnn,resnet8,vgg8|none]\n";

int main(int argc, char **argv)
{
    int threads[MAX_THREADS], nthreads = 0, size = 2048;
    double seconds = 0.5;
    const char *thread_list = "1,2", *model_list = "simplecnn,kerascnn,resnet8";
    static const struct option options[] = {
        {"threads", required_argument, NULL, 't'}, {"size", required_argument, NULL, 's'},
        {"seconds", required_argument, NULL, 'S'}, {"models", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    for (int o; (o = getopt_long(argc, argv, "h", options, NULL)) != -1;) {
        switch (o) {
        case 't': thread_list = optarg; break;
        case 's': size = atoi(optarg); break;
        case 'S': seconds = atof(optarg); break;
        case 'm': model_list = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        default: fputs(usage, stderr); return 2;
        }
    }
    for (const char *s = thread_list; *s && nthreads < MAX_THREADS;) { /* "1,2" */
        char *end;
        long t = strtol(s, &end, 10);
        if (end == s || t < 1 || t > MAX_THREADS || (*end && *end != ',')) {
            fprintf(stderr, "limits: --threads takes counts from 1 to %d, as 1,2; not '%s'\n", MAX_THREADS,
                    thread_list);
            return 2;
        }
        threads[nthreads++] = (int)t;
        s = *end ? end + 1 : end;
    }
    if (optind != argc || nthreads == 0 || size < 16 || !(seconds > 0)) {
        fputs(usage, stderr);
        return 2;
    }

    printf("## Machine limits\n\n");
    printf("- **OpenBLAS**: %s (kernels for %s)\n", openblas_get_config(), openblas_get_corename());
    printf("- **Command**: `");
    for (int i = 0; i < argc; i++)
        printf("%s%s", i ? " " : "", argv[i]);
    printf("`\n- Each figure: the best of three rounds of at least %.2f s each\n\n", seconds / 3);

    printf("| what |");
    for (int t = 0; t < nthreads; t++)
        printf(" %d thread%s |", threads[t], threads[t] > 1 ? "s" : "");
    printf("\n|---|");
    for (int t = 0; t < nthreads; t++)
        printf("---|");

    struct gemm large = {.m = size, .n = size, .k = size, .batch = 1};
    struct gemm_call x = {&large, filled((size_t)size * size), filled((size_t)size * size),
                          filled((size_t)size * size), NULL};
    printf("\n| sgemm %d^3, GFLOP/s (OpenBLAS's threads) |", size);
    for (int t = 0; t < nthreads; t++) {
        openblas_set_num_threads(threads[t]);
        printf(" %.1f |", gemm_flops(&large) / best_time(large_call, &x, seconds) / 1e9);
        fflush(stdout);
    }
    free((void *)x.a);
    free((void *)x.b);
    free(x.c);
    openblas_set_num_threads(1); /* from here on, each of our threads calls it on one */

    struct copy_call copy = {filled(COPY_FLOATS), filled(COPY_FLOATS), NULL};
    printf("\n| stream copy (memcpy, 256 MiB), GB/s read + written |");
    for (int t = 0; t < nthreads; t++) {
        struct pool pool;
        if (pool_start(&pool, threads[t]) != 0) {
            fprintf(stderr, "limits: cannot start %d threads\n", threads[t]);
            return 1;
        }
        copy.pool = &pool;
        printf(" %.1f |", 2.0 * COPY_FLOATS * sizeof(float) / best_time(copy_call, &copy, seconds) / 1e9);
        fflush(stdout);
        pool_stop(&pool);
    }
    int lanes;
    const char *widest;
    struct peak_call peak = {.chains = widest_chains(&lanes, &widest)};
    printf("\n| multiply-add peak (%s), GFLOP/s |", widest);
    for (int t = 0; t < nthreads; t++) {
        struct pool pool;
        if (pool_start(&pool, threads[t]) != 0) {
            fprintf(stderr, "limits: cannot start %d threads\n", threads[t]);
            return 1;
        }
        peak.pool = &pool;
        double flops = 2.0 * 12 * lanes * CHAIN_STEPS * threads[t];
        printf(" %.1f |", flops / best_time(peak_call, &peak, seconds) / 1e9);
        fflush(stdout);
        pool_stop(&pool);
    }
    printf("\n");
    free((void *)copy.from);
    free(copy.to);

    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        if (strstr(model_list, models[i].name))
            model_table(&models[i], threads, nthreads, seconds);
    return 0;
}
