/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_backend_e2e.c — a GPU backend trains as the CPU does.
 *
 *   test_backend_e2e [DEVICE] [--steps N] [--no-eval] [--data-dir DIR]     DEVICE: opencl:0 (default),
 * cuda:0, ...
 *
 * simplecnn on Fashion-MNIST (Debian's dataset-fashion-mnist), batch 64,
 * Adam lr 0.001, model seed 0 and the same batch order, trained on "cpu"
 * and on DEVICE in two contexts side by side, one step each in turn:
 *   - each of the first 50 steps' losses is within 1e-3 (relative) of the
 *     CPU's;
 *   - after the whole epoch (938 steps; about 20 s on PoCL with 2 cores),
 *     or the first N steps with --steps (the CUDA test double, which runs
 *     the kernels on the CPU one work-item at a time, takes the first 200),
 *     the test accuracy over the 10000 test images is within 0.5 points of
 *     the CPU's.
 * --no-eval stops after the steps, without the test accuracy (the simulated
 * GPUs, which execute every instruction of the PTX, take 3 steps: each
 * loss within 1e-3 of the CPU's, as ever).
 * --data-dir reads Fashion-MNIST from another folder than Debian's (a GPU
 * machine given the files by scripts/gpu-pack.sh). With a folder of fewer
 * images, the epoch is however many steps they make.
 * The two runs drift apart slowly, as float sums in another order do; a
 * wrong kernel shows in the first steps. Skipped (77) when DEVICE cannot be
 * opened; a missing data set is a failure, as in test_train_e2e.sh.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

#define CHECKED_STEPS   50
#define LOSS_TOLERANCE  1e-3
#define ACCURACY_POINTS 0.5

struct run {
    ember_ctx *ctx;
    ember_dataset *train, *test;
    ember_model *model;
    ember_optim *opt;
    ember_batcher *batches;
};

static const char *data_dir; /* NULL: Debian's */

static bool run_open(struct run *r, ember_ctx *ctx)
{
    ember_data_options data = {.kind = "fashion-mnist", .dir = data_dir};
    r->ctx = ctx;
    r->train = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    r->test = r->train ? ember_dataset_open(ctx, &data, EMBER_TEST) : NULL;
    r->model = r->test ? ember_model_new(ctx, "simplecnn", r->train, 0) : NULL;
    r->opt = r->model ? ember_adam_new(ember_model_params(r->model), ember_adam_defaults(0.001f)) : NULL;
    r->batches = r->opt ? ember_batcher_new(r->train, 64, true, 0x5eed) : NULL;
    CHECK(r->batches != NULL, "%s: setting up failed: %s", ember_ctx_device_name(ctx), ember_last_error(ctx));
    return r->batches != NULL;
}

static void run_close(struct run *r)
{
    ember_batcher_free(r->batches);
    ember_optim_free(r->opt);
    ember_model_free(r->model);
    ember_dataset_free(r->test);
    ember_dataset_free(r->train);
    ember_ctx_free(r->ctx);
}

/* One training step; false at the end of the epoch or on an error. */
static bool run_step(struct run *r, float *loss_value)
{
    ember_tensor *x, *y;
    if (ember_batcher_next(r->batches, &x, &y) != EMBER_OK || !x)
        return false;
    ember_optim_zero_grad(r->opt);
    ember_tensor *loss = ember_cross_entropy(ember_model_forward(r->model, x), y);
    bool ok = ember_backward(loss) == EMBER_OK && ember_optim_step(r->opt) == EMBER_OK &&
              ember_tensor_item(loss, loss_value) == EMBER_OK;
    CHECK(ok, "%s: a training step failed: %s", ember_ctx_device_name(r->ctx), ember_last_error(r->ctx));
    ember_tape_clear(r->ctx);
    return ok;
}

int main(int argc, char **argv)
{
    const char *device = argc > 1 ? argv[1] : "opencl:0";
    int limit = 0; /* the whole epoch */
    bool evaluate = true;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--no-eval") == 0)
            evaluate = false;
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            limit = atoi(argv[++i]);
        else if (strcmp(argv[i], "--data-dir") == 0 && i + 1 < argc)
            data_dir = argv[++i];
        else
            limit = -1;
    }
    if (limit < 0) {
        fprintf(stderr, "usage: test_backend_e2e [DEVICE] [--steps N] [--no-eval] [--data-dir DIR]\n");
        return 2;
    }
    ember_ctx *dev_ctx = test_ctx(device);
    if (!dev_ctx)
        return TEST_SKIP;
    ember_ctx *cpu_ctx = test_ctx("cpu");
    struct run cpu = {0}, dev = {0};
    if (!cpu_ctx || !run_open(&cpu, cpu_ctx) || !run_open(&dev, dev_ctx)) {
        if (!cpu.ctx)
            ember_ctx_free(cpu_ctx);
        if (!dev.ctx)
            ember_ctx_free(dev_ctx);
        run_close(&cpu);
        run_close(&dev);
        return test_finish("test_backend_e2e");
    }
    printf("cpu:    %s\n%s: %s\n", ember_ctx_device_name(cpu.ctx), device, ember_ctx_device_name(dev.ctx));

    int steps = 0;
    double worst = 0.0;
    float a = 0.0f, b = 0.0f;
    while ((!limit || steps < limit) && run_step(&cpu, &a)) {
        bool more = run_step(&dev, &b);
        CHECK(more, "%s ran out of batches at step %d before the cpu did", device, steps + 1);
        if (!more)
            break;
        steps++;
        if (steps <= CHECKED_STEPS) {
            double rel = fabs((double)b - a) / fmax(fabs((double)a), 1e-12);
            worst = rel > worst ? rel : worst;
            CHECK(rel <= LOSS_TOLERANCE, "step %d: loss %.7f on %s, %.7f on the cpu (%.2e relative)", steps,
                  b, device, a, rel);
            if (steps == 1 || steps == CHECKED_STEPS)
                printf("step %2d: loss %.6f on the cpu, %.6f on %s\n", steps, a, b, device);
        }
    }
    printf("first %d steps: losses within %.2e of the cpu's (relative)\n",
           steps < CHECKED_STEPS ? steps : CHECKED_STEPS, worst);
    int64_t epoch = (ember_dataset_count(cpu.train) + 63) / 64;
    CHECK(steps == (limit && limit < epoch ? limit : epoch), "%d steps, not %lld", steps,
          (long long)(limit && limit < epoch ? limit : epoch));

    if (!evaluate) {
        printf("test accuracy not compared (--no-eval)\n");
        run_close(&cpu);
        run_close(&dev);
        return test_finish("test_backend_e2e");
    }
    double acc_cpu = 0.0, acc_dev = 0.0;
    CHECK_OK(cpu.ctx, ember_model_evaluate(cpu.model, cpu.test, 500, &acc_cpu, NULL));
    CHECK_OK(dev.ctx, ember_model_evaluate(dev.model, dev.test, 500, &acc_dev, NULL));
    printf("after %d steps: test accuracy %.4f on the cpu, %.4f on %s\n", steps, acc_cpu, acc_dev, device);
    CHECK(fabs(acc_dev - acc_cpu) * 100.0 <= ACCURACY_POINTS, "test accuracy %.2f%% on %s, %.2f%% on the cpu",
          acc_dev * 100.0, device, acc_cpu * 100.0);
    run_close(&cpu);
    run_close(&dev);
    return test_finish("test_backend_e2e");
}
