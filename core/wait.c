/* SPDX-License-Identifier: MIT */
/*
 * core/wait.c — telling the host about work it waits for (ember_ctx_set_progress).
 *
 * Compiling a device's kernels takes seconds the first time (PoCL: about
 * 9 s on two cores; NVRTC much the same for the whole program), inside one
 * driver call that gives no progress of its own. So the host is told when
 * it starts, and a thread of ours reports the seconds so far each second
 * while the calling thread is inside the driver, and the total at the end.
 * Nothing starts when the host does not listen.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ctx-impl.h"
#include "platform.h"

struct ember_wait {
    ember_progress_fn fn;
    void *user;
    char what[1024];
    struct timespec start;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_condattr_t attr;
    bool stop, ticking;
    bool announced; /* fn has heard of it: at once, or after a second for a wait that may be short */
    pthread_t ticker;
};

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) * 1e-9;
}

/* Each whole second after the start until told to stop. */
static void *tick(void *arg)
{
    struct ember_wait *w = arg;
    ember_name_this_thread("ember-wait");
    pthread_mutex_lock(&w->lock);
    for (long second = 1; !w->stop; second++) {
        struct timespec at = w->start;
        at.tv_sec += second;
        while (!w->stop && pthread_cond_timedwait(&w->wake, &w->lock, &at) != ETIMEDOUT) {
        }
        if (w->stop)
            break;
        pthread_mutex_unlock(&w->lock);
        if (!w->announced)
            w->fn(w->user, w->what, 0.0, false);
        w->announced = true;
        w->fn(w->user, w->what, seconds_since(&w->start), false);
        pthread_mutex_lock(&w->lock);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

void ember_wait_begin(ember_ctx *ctx, const char *what, bool maybe_short)
{
    if (!ctx || !ctx->progress_fn || ctx->wait)
        return;
    struct ember_wait *w = calloc(1, sizeof *w);
    if (!w)
        return; /* the work goes on, unannounced */
    w->fn = ctx->progress_fn;
    w->user = ctx->progress_user;
    snprintf(w->what, sizeof w->what, "%s", what);
    clock_gettime(CLOCK_MONOTONIC, &w->start);
    pthread_mutex_init(&w->lock, NULL);
    /* the ticker's deadlines are on the monotonic clock, as the start is */
    pthread_condattr_init(&w->attr);
    pthread_condattr_setclock(&w->attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake, &w->attr);
    ctx->wait = w;
    w->announced = !maybe_short;
    if (w->announced)
        w->fn(w->user, w->what, 0.0, false);
    w->ticking = pthread_create(&w->ticker, NULL, tick, w) == 0; /* without it: the start and the end */
}

void ember_wait_end(ember_ctx *ctx)
{
    struct ember_wait *w = ctx ? ctx->wait : NULL;
    if (!w)
        return;
    ctx->wait = NULL;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (w->ticking)
        pthread_join(w->ticker, NULL);
    if (w->announced)
        w->fn(w->user, w->what, seconds_since(&w->start), true);
    pthread_cond_destroy(&w->wake);
    pthread_condattr_destroy(&w->attr);
    pthread_mutex_destroy(&w->lock);
    free(w);
}
