/* SPDX-License-Identifier: MIT */
/*
 * tools/cli-mpi.c — `ember train` as one rank of many, under mpirun
 * (docs/parallel.md, "Many processes").
 *
 * mpirun starts the same command N times; each rank finds its place in the
 * environment the launcher sets and joins through MPI. Only ember-mpi, the
 * program built with MPI (CMake finds Debian's Open MPI when it is
 * installed), can; `ember` itself never links MPI, so that its every other
 * run does not load libmpi, and under mpirun it runs the ember-mpi beside
 * it in its place. Without one, it says how to get one rather than train N
 * separate copies of the model.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "platform.h"

#ifdef EMBER_HAVE_MPI
#include <mpi.h>

#include "ember-mpi.h"

static ember_mpi mpi;
#endif
static int mpi_size = 1, mpi_rank = 0;

/* How many processes the launcher started: Open MPI's and the PMI
 * launchers' variables (MPICH, Slurm); 1 when not under one. */
static int launched_size(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v && atoi(v) > 0)
            return atoi(v);
    }
    return 1;
}

int cli_mpi_start(int *argc, char ***argv)
{
    int launched = launched_size();
    if (launched < 2)
        return EXIT_OK;
#ifdef EMBER_HAVE_MPI
    const char *limit = getenv("EMBER_MPI_TIMEOUT");
    double timeout = limit ? atof(limit) : 60.0;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        cli_error("MPI_Init failed: this process cannot join the other %d", launched - 1);
        return EXIT_DEVICE;
    }
    if (ember_mpi_open(&mpi, MPI_COMM_WORLD, timeout) != 0) {
        cli_error("%s", mpi.error);
        MPI_Abort(MPI_COMM_WORLD, EXIT_DEVICE);
        return EXIT_DEVICE;
    }
    mpi_rank = mpi.collective.rank;
    mpi_size = mpi.collective.size;
    return EXIT_OK;
#else
    (void)argc;
    (void)argv;
    /* ember-mpi, the same program with MPI, beside this one: it takes over */
    char self[PATH_MAX], other[PATH_MAX + 16];
    if (ember_program_file(self, sizeof self) && cli_argv) {
        char *slash = strrchr(self, '/');
        snprintf(other, sizeof other, "%.*s/ember-mpi" EMBER_PROGRAM_SUFFIX, slash ? (int)(slash - self) : 0,
                 self);
        if (ember_is_program(other)) {
            cli_argv[0] = other;
            execv(other, cli_argv);
            cli_error("cannot run %s, the ember built with MPI, as one of %d processes: %s", other, launched,
                      strerror(errno));
            return EXIT_FAILURE_OTHER;
        }
    }
    cli_error("this ember was built without MPI, so it cannot train as one of %d processes: install Open MPI "
              "(apt-get install libopenmpi-dev openmpi-bin, or scripts/setup.sh --tests) and build again, "
              "which adds ember-mpi beside ember (docs/parallel.md)",
              launched);
    return EXIT_USAGE;
#endif
}

const ember_collective *cli_mpi_collective(void)
{
#ifdef EMBER_HAVE_MPI
    if (mpi_size > 1)
        return &mpi.collective;
#endif
    return NULL;
}

int cli_mpi_rank(void) { return mpi_rank; }
int cli_mpi_size(void) { return mpi_size; }

int cli_mpi_end(int rc)
{
#ifdef EMBER_HAVE_MPI
    if (mpi_size > 1) {
        /* 128 + a signal: every rank stopped after the same step (ember_parallel_stopping)
         * and ends as one; any other failure may leave the others waiting: end them all, now */
        bool agreed = rc > 128 && rc < 128 + 32;
        if (rc != EXIT_OK && !agreed) {
            fprintf(stderr, "ember: rank %d of %d stops every rank (MPI_Abort, exit %d)\n", mpi_rank,
                    mpi_size, rc);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, rc);
        }
        ember_mpi_close(&mpi);
        MPI_Finalize();
    }
#endif
    return rc;
}
