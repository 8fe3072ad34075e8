/* SPDX-License-Identifier: MIT */
/*
 * examples/train_mpi.c — one model trained by several processes, each with
 * its own devices, through an MPI communicator the program owns.
 *
 *   mpirun -np 2 train_mpi [DEVICE,DEVICE...]    (default: cpu)
 *
 * The same rings as train_arrays.c, a network of three linear layers
 * written as a model file, and ember_parallel over MPI_COMM_WORLD:
 * every rank draws the same batches and trains its part of each; the
 * gradients are summed across the ranks; rank 0 prints the test accuracy.
 * Exits 0 when the accuracy is above 0.9 and the ranks hold the same
 * parameters.
 */
#include <ember-mpi.h>
#include <ember.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "rings.h"

enum { EPOCHS = 20 };

static const char net_text[] = "fc1: linear 32\n"
                               "relu\n"
                               "fc2: linear 32\n"
                               "relu\n"
                               "fc3: linear classes\n";

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ember_mpi mpi;
    if (ember_mpi_open(&mpi, MPI_COMM_WORLD, 60.0) != 0) {
        fprintf(stderr, "train_mpi: %s\n", mpi.error);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank = mpi.collective.rank;

    /* this rank's devices: the first keeps the model, the others get replicas */
    char list[256];
    snprintf(list, sizeof list, "%s", argc > 1 ? argv[1] : "cpu");
    const char *devices[8];
    int count = 0;
    for (char *d = strtok(list, ","); d && count < 8; d = strtok(NULL, ","))
        devices[count++] = d;

    ember_ctx *ctx = ember_ctx_new();
    ember_dataset *train = NULL, *test = NULL;
    ember_model *model = NULL;
    ember_optim *adam = NULL;
    ember_batcher *batches = NULL;
    ember_parallel *par = NULL;
    double accuracy = 0;
    bool drifted = true;
    int status = 1;
    ember_rng rng = ember_rng_seed(1); /* the same data on every rank */
    if (!ctx || ember_ctx_use_device(ctx, devices[0]) != EMBER_OK ||
        !rings_datasets(ctx, &rng, &train, &test))
        goto done;
    const int64_t shape[1] = {2};
    /* each rank may start from its own seed: ember_parallel_new sends rank 0's parameters to all */
    if (!(model = ember_model_parse(ctx, "rings-mlp", net_text, 1, shape, CLASSES, 7 + rank)) ||
        !(adam = ember_adam_new(ember_model_params(model), ember_adam_defaults(0.01f))) ||
        !(batches = ember_batcher_new(train, 64, true, 0))) /* the same shuffle on every rank */
        goto done;
    ember_parallel_options po = {
        .devices = devices + 1, .device_count = count - 1, .collective = &mpi.collective};
    if (!(par = ember_parallel_new(model, adam, &po)))
        goto done;

    ember_tensor *x, *y; /* x is (64, 2), y is (64): the whole batch; this rank trains its part */
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        while (ember_batcher_next(batches, &x, &y) == EMBER_OK && x)
            if (ember_parallel_step(par, x, y, NULL, NULL) != EMBER_OK)
                goto done;
        if (ember_last_status(ctx) != EMBER_OK)
            goto done;
    }
    if (ember_parallel_check(par, &drifted) != EMBER_OK ||
        ember_model_evaluate(model, test, 256, &accuracy, NULL) != EMBER_OK)
        goto done;
    if (rank == 0)
        printf("test accuracy %.4f on %d points, trained by %d processes (%s)\n", accuracy, TEST,
               mpi.collective.size, ember_parallel_describe(par));
    status = 0;
done:
    if (status != 0)
        fprintf(stderr, "train_mpi: rank %d: %s\n", rank, ctx ? ember_last_error(ctx) : "out of memory");
    else if (accuracy <= 0.9 || drifted) {
        fprintf(stderr, "train_mpi: rank %d: accuracy %.4f%s\n", rank, accuracy,
                drifted ? ", and the ranks' parameters had drifted apart" : ", not above 0.9");
        status = 1;
    }
    ember_parallel_free(par);
    ember_batcher_free(batches);
    ember_optim_free(adam);
    ember_model_free(model);
    ember_dataset_free(test);
    ember_dataset_free(train);
    ember_ctx_free(ctx);
    ember_mpi_close(&mpi);
    if (status != 0) /* the other ranks may be waiting on this one */
        MPI_Abort(MPI_COMM_WORLD, status);
    MPI_Finalize();
    return status;
}
