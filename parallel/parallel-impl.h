/* SPDX-License-Identifier: MIT */
/*
 * parallel/parallel-impl.h — the data-parallel trainer's insides
 * (docs/parallel.md): replicas, their threads, and how a batch is shared.
 *
 * This layer sits above the models and uses nothing but include/ember.h
 * and pthreads: a replica is a context, a model and a thread, as a program
 * embedding ember would make them itself.
 *
 * One step, for a batch of B rows on this process:
 *
 *     split B into shares           balance.c, by each device's speed
 *     every replica, at once:       its share's forward, cross-entropy and
 *                                   backward; its gradients (times its
 *                                   rows) and BatchNorm's statistics to
 *                                   the host
 *     sum them, device 0 first      a fixed order: the same sum every run
 *     sum across processes          the collective, in buckets
 *     divide by the rows in all     the whole batch's mean gradient
 *     one optimizer step            on the master copy (device 0)
 *     its parameters to the host    every replica writes them before its
 *                                   next share: identical bit for bit
 */
#ifndef EMBER_PARALLEL_IMPL_H
#define EMBER_PARALLEL_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ember.h"

#define PARALLEL_MAX_DEVICES 16
#define PARALLEL_BUCKETS     64 /* one step's sums in flight at once (ember_collective) */

struct ember_parallel;

/* What follows the contributions in the sum: the step's loss (times rows),
 * right predictions, rows, and the processes asking to stop. */
enum { TRAILER_LOSS, TRAILER_CORRECT, TRAILER_ROWS, TRAILER_STOPS, TRAILER };

/* One device's copy of the model and what it did this step. */
struct replica {
    struct ember_parallel *par;
    char device[32]; /* "cpu", "opencl:0": as given */
    ember_ctx *ctx;  /* replica 0: the model's own */
    ember_model *model;
    pthread_t thread; /* replicas 1 and up: their own */
    bool started;

    /* this step: rows [lo, lo + rows) of the process's part of the batch */
    int64_t lo, rows;
    bool load_params;    /* write the master's parameters before the share */
    float *contribution; /* (total): rows * gradient for parameters, rows * value for buffers */
    float *logits;       /* (rows, classes), to count the right predictions */
    int64_t logits_cap;
    double loss_sum; /* rows * the share's mean loss */
    int64_t correct;
    double seconds; /* the share's wall time */
    ember_status status;
    char error[1024];

    /* balance.c */
    double speed;  /* rows a second, smoothed; 0 until measured */
    bool left_out; /* slows the whole down: trains no more rows */
};

/* A bucket of the sum across processes: whole tensors, contiguous in the
 * vector. Buckets run from the last tensors to the first, the order the
 * backward pass finishes them; one more, after them, holds the loss. */
struct bucket {
    int first, last; /* tensor indices */
    int pending;     /* parameters whose gradients are not in the sum yet */
};

/* The leave-out trial: a few steps with every device, then a few without
 * each of the others; a device the step is faster without is left out. */
struct trial {
    int phase;    /* -1: over; 0: every device; k: without replica k */
    int steps;    /* steps of this phase so far, warm-up included */
    int64_t rows; /* rows and seconds of this phase's measured steps */
    double seconds;
    double rate[PARALLEL_MAX_DEVICES]; /* rows a second of each phase */
};

struct ember_parallel {
    ember_model *model; /* the master copy, on replica 0 */
    ember_optim *opt;
    ember_ctx *ctx;
    struct replica replicas[PARALLEL_MAX_DEVICES];
    int count;
    bool fixed_shares, keep_all;
    ember_collective collective; /* size 1 when this process is alone */
    bool has_collective;

    /* the parameter set's tensors, in order, laid end to end in one vector */
    int tensors;
    int64_t *offset, *numel;
    bool *is_buffer, *is_count; /* a buffer; a scalar buffer (num_batches_tracked) */
    int64_t total;
    float *sum; /* (total + TRAILER): the sum of the contributions, then the trailer */

    /* the sums across processes: the same buckets on every rank, started
     * in the same order (collectives match by order) */
    struct bucket bucket[PARALLEL_BUCKETS];
    int buckets;     /* of tensors; bucket[buckets] is the loss's */
    int *bucket_of;  /* (tensors) */
    bool *delivered; /* (tensors): in the sum this step */
    int next_bucket; /* the next to start */
    bool overlap;    /* this step: buckets start during replica 0's backward */
    ember_status overlap_status;
    float *values; /* (total): the master's parameters and buffers after the step */

    /* the step's batch on the host, and the share every replica reads */
    float *x_host;
    int32_t *y_host;
    int64_t x_cap, y_cap;
    int sample_ndim;
    int64_t sample_shape[EMBER_MAX_DIMS - 1], sample_numel;
    int classes;
    int64_t process_lo; /* this process's first row of the batch */

    /* the workers: a generation number per step, and how many are still busy */
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t generation;
    int busy;
    bool quit;

    bool stop_asked; /* ember_parallel_request_stop: sent with the next step */
    bool stopping;   /* the last step's sum said some process asked */
    struct trial trial;
    int64_t steps;
    double sum_seconds; /* in the sums across processes, over every step */
    char describe[512];
};

/* balance.c: this step's shares of `rows` (replica 0 always has one when
 * there is one), and what the step's timings teach */
void parallel_split(struct ember_parallel *par, int64_t rows);
void parallel_learn(struct ember_parallel *par, int64_t rows, double seconds);

#endif /* EMBER_PARALLEL_IMPL_H */
