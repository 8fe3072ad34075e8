/* SPDX-License-Identifier: MIT */
/*
 * core/ctx-impl.h — the context: its device, its pools, its last error.
 *
 * Errors travel in three tiers (docs/design.md, "Errors and logging"): assert for programmer bugs,
 * ember_status from every public function that can fail, and the message
 * recorded here by ember_fail, which carries the driver's or parser's own
 * words. Logging goes through the context's callback.
 */
#ifndef EMBER_CTX_IMPL_H
#define EMBER_CTX_IMPL_H

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "backend.h"
#include "ember.h"
#include "engine.h"

struct ember_tensor;
struct ember_storage;
struct ember_node;

/* A cached device buffer, free for reuse by a request of the same size. */
struct ember_cached_buffer {
    void *buf;
    size_t bytes;
};

struct ember_ctx {
    /* the last failure (ember_last_status, ember_last_error) */
    ember_status status;
    char error[4096];

    ember_log_fn log_fn;
    void *log_user;
    ember_log_level log_level;
    /* long waits (ember_ctx_set_progress): the callback, and the wait under way (core/wait.c) */
    ember_progress_fn progress_fn;
    void *progress_user;
    struct ember_wait *wait;

    /* the device: its backend's table and the backend's own state */
    const struct ember_backend_ops *ops;
    void *dev;
    struct ember_host host;
    int threads;
    ember_matmul_precision matmul_precision; /* stamped on every product (ember_ctx_sgemm) */
    char device_name[256];
    char device_choice[1536]; /* what auto chose and what it passed over */

    /* Pools, so that a steady-state step allocates nothing: tensor and
     * storage records are recycled through free lists, device buffers
     * through a cache of exact sizes (a training step asks for the same
     * sizes every time). */
    struct ember_tensor *free_tensors;
    struct ember_storage *free_storages;
    struct ember_cached_buffer *cache;
    int cache_len, cache_cap;
    /* The cache keeps at most twice as many bytes as the context has ever
     * had in use at once (and 16 MiB more): a training step's working set
     * and its temporaries fit, so steady steps still allocate nothing, but
     * a long-lived context that builds networks of many sizes does not keep
     * a buffer of every size it ever used (the fuzzer saw RSS pass 2.5 GB
     * that way). */
    uint64_t cached_bytes, in_use_peak;
    /* the most bytes held from the backend at once, the cache included
     * (ember_ctx_memory_peak) */
    uint64_t held_peak;
    /* EMBER_EXACT_BUFFERS=1: buffers of exactly the bytes a tensor needs,
     * not rounded up (ctx.c, round_request) */
    bool exact_buffers;

    /* the autograd tape: every tensor the ops made, and the recorded nodes */
    struct ember_tensor **tape_tensors;
    int64_t tape_len, tape_cap;
    struct ember_node *nodes;
    int64_t node_len, node_cap;
    bool grad_enabled;
    ember_grad_ready_fn grad_ready; /* ember_set_grad_ready */
    void *grad_ready_user;
    /* selective recomputation (core/ops-recompute.c): the outputs of the
     * products a function under ember_recompute_selective made the first
     * time, taken off the tape and kept here until its node's backward
     * pass hands them back to the second run in the same order; `keeping`
     * says which run is on, and [kept_next, kept_end) is the second run's
     * part of the list */
    struct ember_tensor **kept;
    int64_t kept_len, kept_cap, kept_next, kept_end;
    enum { EMBER_KEEPING_OFF, EMBER_KEEPING_FIRST_RUN, EMBER_KEEPING_SECOND_RUN } keeping;

    ember_memory_stats stats;

    /* while profiling (core/profile-impl.h), ops and dev are the profiler's */
    struct ember_profiler *profiler;
};

/* ember_fail, ember_vfail and the counted host allocations: engine.h */

/* Device buffers through the cache. ember_buffer_get rounds `bytes` up,
 * reuses a cached buffer of that size or allocates one; on out of memory it
 * empties the cache and tries once more before failing with the sizes. */
ember_status ember_buffer_get(ember_ctx *ctx, size_t bytes, void **buf, size_t *rounded);
void ember_buffer_put(ember_ctx *ctx, void *buf, size_t bytes);
/* the same, straight back to the device, not into the cache */
void ember_buffer_give_back(ember_ctx *ctx, void *buf, size_t bytes);
void ember_buffer_cache_release(ember_ctx *ctx);

/* A wait the host is told about (ember_ctx_set_progress; core/wait.c):
 * begin announces `what` and, when the host listens, starts a thread that
 * reports the seconds so far each second; end stops it and reports the
 * total. A wait that is `maybe_short` (a driver's compile that its own
 * cache may answer at once) is announced only once it has lasted a second,
 * and not at all if it ends sooner. One at a time per context; end without
 * begin does nothing. */
void ember_wait_begin(ember_ctx *ctx, const char *what, bool maybe_short);
void ember_wait_end(ember_ctx *ctx);

/* ember_ctx_ready: engine.h */

#endif /* EMBER_CTX_IMPL_H */
