/* SPDX-License-Identifier: MIT */
/*
 * ember/parallel.h — one model trained on several devices and processes: a part of ember.h.
 *
 * Data parallelism: a replica per device, the batch split between them
 * in proportion to their speed, gradients summed into the master copy.
 *
 * Include <ember.h>, which includes this part in its place among the
 * others; the conventions at the top of ember.h hold here too.
 */
#ifndef EMBER_H
#error "include <ember.h>: ember/parallel.h is a part of it, not a header of its own"
#elif !defined(EMBER_PART_PARALLEL_H)
#define EMBER_PART_PARALLEL_H

/* ----------------------------------------------------------- data parallel
 *
 * One model trained on several devices at once, and across processes
 * (docs/parallel.md). The model and its optimizer stay where they are: the
 * model's own context is the first device and holds the master copy. Every
 * other device gets a replica, in a context and a thread of its own. A
 * step splits the batch between the devices in proportion to their
 * measured speed, runs each share's forward and backward at the same time,
 * sums the gradients on the host in a fixed order (weighted by each share's
 * rows, so the sum is the whole batch's mean gradient), takes one
 * optimizer step on the master copy and writes its parameters back to
 * every replica: the replicas stay identical bit for bit, whatever mix of
 * devices they run on.
 *
 *     const char *others[] = {"opencl:0"};
 *     ember_parallel_options po = {.devices = others, .device_count = 1};
 *     ember_parallel *par = ember_parallel_new(net, opt, &po);
 *     while (ember_batcher_next(batches, &x, &y) == EMBER_OK && x)
 *         if (ember_parallel_step(par, x, y, &loss, &correct) != EMBER_OK) break;
 *
 * Across processes, `collective` sums the gradients over every process
 * after each one's own devices have: each process trains its part of every
 * batch (rank r of N the rows [B - (N-r)B/N, B - (N-r-1)B/N) of a batch of
 * B, rounding down: as even as B divides, rank 0 never without a row; all
 * draw the same batches), and each takes the same optimizer step. The sums go
 * in buckets of whole parameters, the last layer's first; on a process
 * with one device training, each bucket starts during the backward pass,
 * as soon as its gradients are final.
 * include/ember-mpi.h makes an ember_collective of an MPI communicator. */
typedef struct ember_parallel ember_parallel;

/* Sums across processes, implemented by the caller over its transport
 * (ember-mpi.h: MPI). Every function returns EMBER_OK, or a failure whose
 * reason `error` then gives ("no answer from the other ranks for 60 s"). */
typedef struct ember_collective {
    int rank, size; /* this process's place, and how many take part */
    void *user;     /* handed back to every call */
    /* Starts summing `count` floats over every process, in place; after
     * sum_wait of the same `bucket` (0 up to 63, one step's sums in
     * flight at once) every process holds the same sums. */
    ember_status (*sum_start)(void *user, int bucket, float *data, size_t count);
    ember_status (*sum_wait)(void *user, int bucket);
    /* Copies `count` floats from rank 0 to every other rank, in place. */
    ember_status (*broadcast)(void *user, float *data, size_t count);
    /* Lets the sums in flight move (MPI progresses while it is called);
     * called between parameters during the backward pass. May be NULL. */
    ember_status (*poll)(void *user);
    const char *(*error)(void *user);
} ember_collective;

typedef struct ember_parallel_options {
    const char *const *devices; /* the other devices: "cuda:1", "cpu", "opencl:0" */
    int device_count;
    int threads;                        /* CPU threads of each cpu device, the model's own included
                                         * (0: the cores shared between them) */
    bool keep_all;                      /* never leave a slow device out (see below) */
    bool fixed_shares;                  /* equal shares, never rebalanced: the same split every run */
    const ember_collective *collective; /* NULL: this process alone */
    int64_t bucket_floats;              /* the least floats in one sum across processes (0: 65536) */
} ember_parallel_options;

/* Sets up replicas of `model` (built from a model file or a built-in: a
 * wrapped C network cannot be copied to another device) on the other
 * devices; with a collective, every process starts from rank 0's
 * parameters. `opt` must be the model's optimizer. Neither is taken over:
 * free the parallel trainer before them. Unless keep_all, the trainer
 * times its first steps with every device and then without each of the
 * others, and leaves out a device the step is faster without (a note
 * through the log says so); the model's own device always trains. */
EMBER_API ember_parallel *ember_parallel_new(ember_model *model, ember_optim *opt,
                                             const ember_parallel_options *options);
EMBER_API void ember_parallel_free(ember_parallel *par);
/* One training step over the batch x (B, sample shape...) and y (B), on
 * the model's context: zero_grad, forward, cross-entropy, backward and the
 * optimizer's step on every device. `loss` (the mean) and `correct` (right
 * predictions) are the whole batch's, over every process; either may be
 * NULL. A device that fails stops the step with its name and reason; the
 * master copy is then as it was before the step. */
EMBER_API ember_status ember_parallel_step(ember_parallel *par, ember_tensor *x, ember_tensor *y, float *loss,
                                           int64_t *correct);
/* Checks that every process holds the same parameters (rank 0's hash of
 * them, compared on each); if not, rank 0's go to all and *drifted says so. */
EMBER_API ember_status ember_parallel_check(ember_parallel *par, bool *drifted);
/* A coordinated stop (Ctrl-C on one machine of many): the request goes
 * with the next step's sums, so after that step ember_parallel_stopping is
 * true on every process at once, and all can save and end together. */
EMBER_API void ember_parallel_request_stop(ember_parallel *par);
EMBER_API bool ember_parallel_stopping(const ember_parallel *par);
/* "cpu 41% + opencl:0 59%": the devices and this step's shares */
EMBER_API const char *ember_parallel_describe(ember_parallel *par);

#endif /* EMBER_PART_PARALLEL_H */
