/* SPDX-License-Identifier: MIT */
/*
 * ember-mpi.h — an ember_collective over an MPI communicator, for
 * data-parallel training across processes and machines (docs/parallel.md).
 *
 *     #include <mpi.h>
 *     #include <ember-mpi.h>
 *
 *     MPI_Init(&argc, &argv);
 *     ember_mpi mpi;
 *     if (ember_mpi_open(&mpi, MPI_COMM_WORLD, 60.0) != 0) { ... mpi.error ... }
 *     ember_parallel_options po = {.collective = &mpi.collective};
 *     ember_parallel *par = ember_parallel_new(net, opt, &po);
 *     ...
 *     ember_parallel_free(par);
 *     ember_mpi_close(&mpi);
 *     MPI_Finalize();
 *
 * The library itself does not link MPI: this header is compiled into your
 * program with your MPI's mpi.h, so libember works with whichever MPI (and
 * whichever version of it) the program uses.
 *
 * Every wait is bounded: a rank that died, hangs or was stopped makes the
 * others fail within `timeout_seconds` with a message, never wait forever.
 * What to do then is the program's call; `ember train` calls MPI_Abort,
 * which ends every rank.
 */
#ifndef EMBER_MPI_H
#define EMBER_MPI_H

#include <mpi.h>
#include <stdio.h>
#include <time.h>

#include "ember.h"

typedef struct ember_mpi {
    ember_collective collective; /* hand &collective to ember_parallel_options */
    MPI_Comm comm;               /* a duplicate of the caller's: errors return, never abort */
    double timeout_seconds;
    MPI_Request requests[64]; /* one per bucket in flight */
    char error[512];
} ember_mpi;

/* Waits for `request`, polling, for at most the timeout. */
static inline ember_status ember_mpi_wait(ember_mpi *m, MPI_Request *request, const char *what)
{
    double start = MPI_Wtime();
    for (;;) {
        int done = 0, rc = MPI_Test(request, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, text, &len);
            snprintf(m->error, sizeof m->error, "%s: MPI says %s", what, text);
            return EMBER_ERR_DEVICE;
        }
        if (done)
            return EMBER_OK;
        if (MPI_Wtime() - start > m->timeout_seconds) {
            snprintf(m->error, sizeof m->error,
                     "%s: no answer from the other ranks for %.0f s: one of them has stopped, died or hangs "
                     "(the limit is EMBER_MPI_TIMEOUT's)",
                     what, m->timeout_seconds);
            return EMBER_ERR_DEVICE;
        }
        /* MPI moves the data while it is polled: poll hard for the first
         * milliseconds (a sum takes well under one on a fast link), then
         * gently, so that a long wait does not burn the core */
        if (MPI_Wtime() - start > 0.005) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
    }
}

static inline ember_status ember_mpi_sum_start(void *user, int bucket, float *data, size_t count)
{
    ember_mpi *m = (ember_mpi *)user;
    if (bucket < 0 || bucket >= 64) {
        snprintf(m->error, sizeof m->error, "bucket %d of at most 64", bucket);
        return EMBER_ERR_ARG;
    }
    int rc =
        MPI_Iallreduce(MPI_IN_PLACE, data, (int)count, MPI_FLOAT, MPI_SUM, m->comm, &m->requests[bucket]);
    if (rc != MPI_SUCCESS) {
        snprintf(m->error, sizeof m->error, "MPI_Iallreduce failed (error %d)", rc);
        return EMBER_ERR_DEVICE;
    }
    return EMBER_OK;
}

static inline ember_status ember_mpi_sum_wait(void *user, int bucket)
{
    ember_mpi *m = (ember_mpi *)user;
    return ember_mpi_wait(m, &m->requests[bucket], "the sum across ranks");
}

static inline ember_status ember_mpi_broadcast(void *user, float *data, size_t count)
{
    ember_mpi *m = (ember_mpi *)user;
    MPI_Request request;
    int rc = MPI_Ibcast(data, (int)count, MPI_FLOAT, 0, m->comm, &request);
    if (rc != MPI_SUCCESS) {
        snprintf(m->error, sizeof m->error, "MPI_Ibcast failed (error %d)", rc);
        return EMBER_ERR_DEVICE;
    }
    return ember_mpi_wait(m, &request, "the copy from rank 0");
}

static inline ember_status ember_mpi_poll(void *user)
{
    ember_mpi *m = (ember_mpi *)user;
    for (int i = 0; i < 64; i++) {
        int done = 0;
        if (m->requests[i] != MPI_REQUEST_NULL &&
            MPI_Test(&m->requests[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            snprintf(m->error, sizeof m->error, "MPI_Test failed while a sum was in flight");
            return EMBER_ERR_DEVICE;
        }
    }
    return EMBER_OK;
}

static inline const char *ember_mpi_error(void *user) { return ((ember_mpi *)user)->error; }

/* Sets `m` up over `comm` (duplicated; collective: every rank calls it).
 * Returns 0, or an MPI error code with the reason in m->error. */
static inline int ember_mpi_open(ember_mpi *m, MPI_Comm comm, double timeout_seconds)
{
    int rank = 0, size = 1, rc = MPI_Comm_dup(comm, &m->comm);
    m->error[0] = '\0';
    for (int i = 0; i < 64; i++)
        m->requests[i] = MPI_REQUEST_NULL;
    m->timeout_seconds = timeout_seconds > 0 ? timeout_seconds : 60.0;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(m->comm, &rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_size(m->comm, &size);
    if (rc != MPI_SUCCESS)
        snprintf(m->error, sizeof m->error, "cannot set up the MPI communicator (error %d)", rc);
    m->collective = (ember_collective){.rank = rank,
                                       .size = size,
                                       .user = m,
                                       .sum_start = ember_mpi_sum_start,
                                       .sum_wait = ember_mpi_sum_wait,
                                       .broadcast = ember_mpi_broadcast,
                                       .poll = ember_mpi_poll,
                                       .error = ember_mpi_error};
    return rc;
}

static inline void ember_mpi_close(ember_mpi *m) { MPI_Comm_free(&m->comm); }

#endif /* EMBER_MPI_H */
