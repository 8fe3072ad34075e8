/* SPDX-License-Identifier: MIT */
/*
 * parallel/balance.c — how a batch is shared between devices, and which
 * devices are worth their share (docs/parallel.md, "Shares").
 *
 * Each device gets rows in proportion to its speed: rows a second over its
 * last steps, smoothed. A fast GPU beside a CPU core takes most of the
 * batch, and when either slows (another program, a clock that drops) the
 * shares follow within a few steps. Equal finishing times are the goal:
 * the step waits for the slowest share.
 *
 * A device can cost more than it gives: every share pays a fixed price (its
 * thread, its kernel launches, the parameters copied to it and its
 * gradients read back), and a CPU share also takes cores from the device
 * driving a GPU. Rather than model that, the trainer measures it: a few
 * steps with every device, then a few without each device but the first,
 * and a device without which the step is clearly faster is left out.
 */
#include <stdio.h>

#include "parallel-impl.h"

enum {
    TRIAL_WARMUP = 2, /* steps of a phase not measured: the first ones compile kernels, fill caches */
    TRIAL_STEPS = 6,  /* steps measured in each phase */
};
#define TRIAL_BETTER    1.05 /* leaving out must be this much faster: not the noise */
#define SPEED_SMOOTHING 0.3  /* the weight of the newest step in a device's speed */

/* Whether replica k trains this step. */
static bool trains(const struct ember_parallel *par, int k)
{
    return !par->replicas[k].left_out && par->trial.phase != k;
}

void parallel_split(struct ember_parallel *par, int64_t rows)
{
    double weight[PARALLEL_MAX_DEVICES], total = 0.0;
    for (int k = 0; k < par->count; k++) {
        const struct replica *r = &par->replicas[k];
        /* equal until measured; a device with no speed yet gets the mean of the others' */
        weight[k] = !trains(par, k) ? 0.0 : par->fixed_shares || r->speed <= 0.0 ? 1.0 : r->speed;
    }
    if (!par->fixed_shares) { /* speeds in rows a second; unmeasured ones at the measured mean */
        double measured = 0.0;
        int n = 0;
        for (int k = 0; k < par->count; k++)
            if (weight[k] > 0.0 && par->replicas[k].speed > 0.0) {
                measured += par->replicas[k].speed;
                n++;
            }
        for (int k = 0; k < par->count; k++)
            if (weight[k] > 0.0 && par->replicas[k].speed <= 0.0 && n)
                weight[k] = measured / n;
    }
    for (int k = 0; k < par->count; k++)
        total += weight[k];
    /* whole rows by the largest remainder, ties to the earlier device */
    int64_t given = 0;
    double remainder[PARALLEL_MAX_DEVICES];
    for (int k = 0; k < par->count; k++) {
        double exact = total > 0.0 ? (double)rows * weight[k] / total : 0.0;
        par->replicas[k].rows = (int64_t)exact;
        remainder[k] = exact - (double)par->replicas[k].rows;
        given += par->replicas[k].rows;
    }
    while (given < rows) {
        int best = -1;
        for (int k = 0; k < par->count; k++)
            if (weight[k] > 0.0 && (best < 0 || remainder[k] > remainder[best]))
                best = k;
        par->replicas[best].rows++;
        remainder[best] = -1.0;
        given++;
    }
    /* the master copy always trains (its BatchNorm count is the model's):
     * a row from the largest share when it has none */
    if (rows > 0 && par->replicas[0].rows == 0) {
        int largest = 0;
        for (int k = 1; k < par->count; k++)
            if (par->replicas[k].rows > par->replicas[largest].rows)
                largest = k;
        par->replicas[largest].rows--;
        par->replicas[0].rows++;
    }
    int64_t lo = 0;
    for (int k = 0; k < par->count; k++) {
        par->replicas[k].lo = lo;
        lo += par->replicas[k].rows;
    }
}

/* The trial's next phase: the next device that could be left out, or the
 * verdict. */
static void trial_next(struct ember_parallel *par)
{
    struct trial *t = &par->trial;
    t->rate[t->phase] = t->seconds > 0.0 ? (double)t->rows / t->seconds : 0.0;
    t->steps = 0;
    t->rows = 0;
    t->seconds = 0.0;
    if (++t->phase < par->count)
        return;
    int best = 0;
    for (int k = 1; k < par->count; k++)
        if (t->rate[k] > t->rate[best])
            best = k;
    t->phase = -1;
    if (best == 0 || t->rate[best] < TRIAL_BETTER * t->rate[0])
        return;
    par->replicas[best].left_out = true;
    ember_log(par->ctx, EMBER_LOG_WARN,
              "leaving %s out of the training: the step ran at %.0f images/s with it and %.0f without "
              "(docs/parallel.md, \"Shares\"; ember_parallel_options.keep_all keeps every device)",
              par->replicas[best].device, t->rate[0], t->rate[best]);
}

void parallel_learn(struct ember_parallel *par, int64_t rows, double seconds)
{
    if (!par->fixed_shares && par->steps > 1) /* the first step compiles and allocates */
        for (int k = 0; k < par->count; k++) {
            struct replica *r = &par->replicas[k];
            if (r->rows == 0 || r->seconds <= 0.0)
                continue;
            double speed = (double)r->rows / r->seconds;
            r->speed = r->speed > 0.0 ? (1.0 - SPEED_SMOOTHING) * r->speed + SPEED_SMOOTHING * speed : speed;
        }
    struct trial *t = &par->trial;
    if (t->phase < 0)
        return;
    if (++t->steps > TRIAL_WARMUP) {
        t->rows += rows;
        t->seconds += seconds;
    }
    if (t->steps == TRIAL_WARMUP + TRIAL_STEPS)
        trial_next(par);
}
