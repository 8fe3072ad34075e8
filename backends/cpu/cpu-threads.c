/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-threads.c — a tiny fork-join pool.
 *
 * A training step launches a few dozen primitives of a few microseconds to
 * a few milliseconds each, so the hand-off must be cheap: workers spin for
 * a short while on the job counter before they sleep on a condition
 * variable, and the caller works too.
 *
 * A job is cut into chunks, and every thread, the caller included, claims
 * the next unclaimed chunk from a shared counter until none are left. So a
 * worker that the system has not scheduled (the machine is busy: a second
 * test, another program) costs nothing but its share of the speed-up: the
 * caller runs the chunks it did not claim, instead of waiting for it to
 * wake. The chunks are the same whoever runs them, so results are too.
 *
 * A worker the system takes off its core after it has claimed a chunk
 * still holds the caller up until it runs again (a few milliseconds on a
 * core shared with a busy program). So the caller times each job: a wait
 * of more than 0.5 ms for a worker's chunk, longer than its own share
 * took, is a straggler. Three within 100 ms mean a worker keeps losing its
 * core (beside one busy program: 60 to 120 a second; on an idle VM: one or
 * two a second, when the host takes a virtual CPU away), and the caller
 * runs the following jobs' chunks alone for a while (50 ms, twice as long
 * each time it happens again soon after, a second at most), then tries the
 * workers again. On a busy machine ember then trains at the speed of one
 * thread instead of at the speed of the slowest; idle, nothing changes.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "cpu-impl.h"
#include "platform.h"

/* An idle worker first spins on the job counter with the CPU's pause hint
 * (a hand-off within microseconds), then yields its core for a while, then
 * sleeps on the condition variable. */
#define SPIN_ROUNDS  4000
#define YIELD_ROUNDS 2000

/* a wait for a worker longer than this (and than the caller's own share)
 * is a straggler; STRAGGLERS of them within STRAGGLER_WINDOW seconds send
 * the caller solo for SOLO_FIRST seconds, twice as long each time that
 * happens again within SOLO_CALM of the last stretch's end, SOLO_LONGEST
 * at most */
#define STRAGGLER_WAIT   0.0005
#define STRAGGLERS       3
#define STRAGGLER_WINDOW 0.1
#define SOLO_FIRST       0.05
#define SOLO_LONGEST     1.0
#define SOLO_CALM        2.0

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct cpu_pool {
    int threads; /* workers + the caller */
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    atomic_uint generation; /* bumped for every job */
    atomic_bool quit;

    /* the current job, written before its first claim is published */
    cpu_task_fn fn;
    void *arg;
    int64_t n, chunk;
    /* the next claim: the job's generation (32 bits), its number of chunks
     * (16) and the next chunk (16), in one word, so that a claim can only
     * ever be made on the job it was meant for */
    atomic_ullong claim;
    atomic_llong done; /* chunks finished */

    /* the caller's own bookkeeping (one caller per pool): when the last
     * stragglers were (a ring), until when it runs jobs alone, and how
     * long that stretch is */
    double straggler_at[STRAGGLERS];
    int stragglers;
    double solo_until, solo_length;
};

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A worker held the caller up at `now`: the third time within the window,
 * the caller goes solo (see the top). */
static void straggler(struct cpu_pool *pool, double now)
{
    pool->straggler_at[pool->stragglers++ % STRAGGLERS] = now;
    double oldest = pool->straggler_at[pool->stragglers % STRAGGLERS];
    if (pool->stragglers < STRAGGLERS || now - oldest > STRAGGLER_WINDOW)
        return;
    bool again = now - pool->solo_until < SOLO_CALM;
    pool->solo_length = !again                                 ? SOLO_FIRST
                        : pool->solo_length * 2 < SOLO_LONGEST ? pool->solo_length * 2
                                                               : SOLO_LONGEST;
    pool->solo_until = now + pool->solo_length;
    pool->stragglers = 0;
}

#define CLAIM(gen, chunks, next)                                                                             \
    ((unsigned long long)(gen) << 32 | (unsigned long long)(chunks) << 16 | (unsigned long long)(next))

struct worker_arg {
    struct cpu_pool *pool;
    int index; /* 1 .. threads - 1; the caller is 0 */
};

/* Claims and runs job `gen`'s chunks until none are left. A thread late to
 * a job finds the claim word of a newer one and leaves it alone; a claim
 * that succeeds holds the job's fields still (the caller waits for every
 * claimed chunk before it writes the next job's). */
static void run_chunks(struct cpu_pool *pool, unsigned gen)
{
    unsigned long long c = atomic_load_explicit(&pool->claim, memory_order_acquire);
    for (;;) {
        int64_t chunks = (int64_t)(c >> 16 & 0xffff), k = (int64_t)(c & 0xffff);
        if ((unsigned)(c >> 32) != gen || k >= chunks)
            return;
        if (!atomic_compare_exchange_weak_explicit(&pool->claim, &c, c + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue; /* c now holds the word as it is: look again */
        int64_t begin = k * pool->chunk;
        int64_t end = begin + pool->chunk < pool->n ? begin + pool->chunk : pool->n;
        if (begin < end)
            pool->fn(pool->arg, begin, end);
        atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
        c = atomic_load_explicit(&pool->claim, memory_order_acquire);
    }
}

static void *worker_main(void *p)
{
    struct worker_arg *wa = p;
    struct cpu_pool *pool = wa->pool;
    free(wa);
    ember_name_this_thread("ember-cpu");
    unsigned seen = 0;
    for (;;) {
        unsigned gen = atomic_load_explicit(&pool->generation, memory_order_acquire);
        for (int spin = 0; gen == seen && spin < SPIN_ROUNDS + YIELD_ROUNDS && !atomic_load(&pool->quit);
             spin++) {
            if (spin < SPIN_ROUNDS)
                cpu_relax();
            else
                sched_yield();
            gen = atomic_load_explicit(&pool->generation, memory_order_acquire);
        }
        if (gen == seen) {
            pthread_mutex_lock(&pool->lock);
            while ((gen = atomic_load(&pool->generation)) == seen && !atomic_load(&pool->quit))
                pthread_cond_wait(&pool->wake, &pool->lock);
            pthread_mutex_unlock(&pool->lock);
        }
        if (atomic_load(&pool->quit))
            return NULL;
        seen = gen;
        run_chunks(pool, gen);
    }
}

struct cpu_pool *cpu_pool_new(int threads)
{
    struct cpu_pool *pool = calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    pool->threads = threads < 1 ? 1 : threads;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    if (pool->threads > 1) {
        pool->workers = calloc((size_t)pool->threads - 1, sizeof *pool->workers);
        if (!pool->workers) {
            cpu_pool_free(pool);
            return NULL;
        }
    }
    for (int i = 1; i < pool->threads; i++) {
        struct worker_arg *wa = malloc(sizeof *wa);
        if (wa)
            *wa = (struct worker_arg){.pool = pool, .index = i};
        if (!wa || pthread_create(&pool->workers[i - 1], NULL, worker_main, wa) != 0) {
            free(wa);
            pool->threads = i; /* run with the workers that did start */
            break;
        }
    }
    return pool;
}

void cpu_pool_free(struct cpu_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->quit, true);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 1; i < pool->threads; i++)
        pthread_join(pool->workers[i - 1], NULL);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->wake);
    free(pool->workers);
    free(pool);
}

void cpu_parallel_for(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int64_t chunks = (n + grain - 1) / grain;
    if (!pool || pool->threads == 1 || chunks == 1) {
        fn(arg, 0, n);
        return;
    }
    if (chunks > pool->threads)
        chunks = pool->threads;
    if (chunks > 0xffff)
        chunks = 0xffff;
    pool->fn = fn;
    pool->arg = arg;
    pool->n = n;
    pool->chunk = (n + chunks - 1) / chunks;
    chunks = (n + pool->chunk - 1) / pool->chunk;
    double start = seconds_now();
    if (start < pool->solo_until) { /* the same chunks, on the caller */
        for (int64_t begin = 0; begin < n; begin += pool->chunk)
            fn(arg, begin, begin + pool->chunk < n ? begin + pool->chunk : n);
        return;
    }
    unsigned gen = atomic_load_explicit(&pool->generation, memory_order_relaxed) + 1;
    atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
    atomic_store_explicit(&pool->claim, CLAIM(gen, chunks, 0), memory_order_release);
    pthread_mutex_lock(&pool->lock);
    atomic_store_explicit(&pool->generation, gen, memory_order_release);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    run_chunks(pool, gen);
    double own = seconds_now();
    /* only chunks a worker has claimed and not finished are waited for */
    if (atomic_load_explicit(&pool->done, memory_order_acquire) >= chunks)
        return;
    while (atomic_load_explicit(&pool->done, memory_order_acquire) < chunks)
        cpu_relax();
    double end = seconds_now(), waited = end - own;
    if (waited > STRAGGLER_WAIT && waited > own - start)
        straggler(pool, end);
}
