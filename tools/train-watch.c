/* SPDX-License-Identifier: MIT */
/*
 * tools/train-watch.c — training that is not learning, said while it runs
 * (tools/train.h).
 *
 * Three signs, the first met said once a run as a warning naming the
 * likely causes; the loss is watched as its mean over intervals of steps
 * (--log-every's, or a tenth of an epoch, and never fewer than 10 steps:
 * one batch's loss swings by tens of per cent, and an epoch of a small
 * folder of images is a step or two):
 *
 *   - the loss is worse than guessing: an interval's mean above twice
 *     ln(classes), the loss of a uniform guess, which an untrained model
 *     starts near. A learning rate far too high gets there within the
 *     first interval (--lr 100 on simplecnn: a mean of 41,000 over the
 *     first 93 steps).
 *   - the loss grows: three intervals in a row, to more than twice the
 *     lowest interval's. Noise once training has settled moves an
 *     interval's mean by a few per cent, so both conditions together do
 *     not fire on a healthy run.
 *   - the accuracy is chance after an epoch: at most 1.5 times 1/classes,
 *     once three intervals have been trained and when the accuracy is over
 *     at least 20 samples a class (fewer, and a model that learned can
 *     score chance by luck); --data random is noise by design, and is left
 *     alone.
 *
 * With --stop-if-diverging a sign stops the run: the model is put back to
 * where its loss was lowest (kept in memory at each new lowest interval)
 * and saved to --save, unless it never did better than a guess, and the
 * exit status says the training diverged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

enum { GROWING = 3 };             /* intervals of growth in a row */
enum { MIN_INTERVAL = 10 };       /* steps an interval has at least */
enum { SAMPLES_PER_CLASS = 20 };  /* an accuracy judged chance is over at least this many a class */
static const double GROWTH = 2.0; /* ... ending above this times the lowest */
static const double CHANCE = 1.5; /* accuracy at most this times 1/classes */

void train_watch_begin(struct train_watch *w, const struct train_options *o, int64_t per_epoch, int classes,
                       bool speak)
{
    int64_t every = o->log_every ? o->log_every : per_epoch / 10;
    *w = (struct train_watch){.every = every > MIN_INTERVAL ? every : MIN_INTERVAL,
                              .lowest = INFINITY,
                              .guess = log(classes >= 2 ? classes : 2),
                              .speak = speak,
                              .warned = !speak};
}

void train_watch_free(struct train_watch *w)
{
    free(w->good);
    w->good = NULL;
}

/* the likely causes, in the words of the options that set them */
static void say_causes(const struct train_options *o)
{
    bool sgd_momentum = strcmp(o->optim, "sgd") == 0 && o->momentum >= 0.9;
    fprintf(stderr,
            "ember: likely causes: a learning rate too high (--lr %g: try %g)%s%s; or labels that do not "
            "match the images.%s\n",
            o->lr, o->lr / 10.0, sgd_momentum ? ", a --momentum too high" : "",
            o->warmup == 0.0 ? ", no warm-up (--warmup 1 rises to the rate over an epoch)" : "",
            o->stop_if_diverging
                ? ""
                : " --stop-if-diverging stops such a run and keeps the model of its lowest loss");
}

bool train_watch_step(struct train_watch *w, const struct train_options *o, ember_model *model,
                      const struct train_position *pos, double loss)
{
    w->sum += loss;
    if (++w->count < w->every)
        return false;
    double mean = w->sum / (double)w->count;
    w->sum = 0.0;
    w->count = 0;
    if (mean < w->lowest) { /* the best so far: the model to go back to */
        w->lowest = mean;
        w->lowest_position = *pos;
        if (o->stop_if_diverging) {
            free(w->good);
            w->good = NULL;
            if (ember_model_save_memory(model, NULL, &w->good, &w->good_size) != EMBER_OK)
                w->good = NULL; /* out of memory: nothing to go back to, said at the stop */
        }
    }
    w->growing = w->intervals > 0 && mean > w->last ? w->growing + 1 : 0;
    w->last = mean;
    w->intervals++;
    bool worse_than_guessing = mean > GROWTH * w->guess;
    if (!worse_than_guessing && (w->growing < GROWING || mean <= GROWTH * w->lowest))
        return false;
    if (!w->warned && worse_than_guessing) {
        w->warned = true;
        fprintf(stderr,
                "ember: warning: the training loss is %.4g over steps %lld to %lld, more than twice a "
                "uniform guess's (%.2f): the run is diverging\n",
                mean, (long long)(pos->total_steps - w->every + 1), (long long)pos->total_steps, w->guess);
        say_causes(o);
    } else if (!w->warned) {
        w->warned = true;
        fprintf(stderr,
                "ember: warning: the training loss has grown for %d intervals of %lld steps in a row, to "
                "%.4g at step %lld, %.1f times its lowest (%.4g at step %lld): the run is diverging\n",
                w->growing, (long long)w->every, mean, (long long)pos->total_steps, mean / w->lowest,
                w->lowest, (long long)w->lowest_position.total_steps);
        say_causes(o);
    }
    return o->stop_if_diverging;
}

bool train_watch_epoch(struct train_watch *w, const struct train_options *o, int64_t epoch, double accuracy,
                       int64_t samples, int classes)
{
    if (strcmp(o->data.kind, "random") == 0 || classes < 2 || accuracy > CHANCE / classes ||
        w->intervals < GROWING || samples < (int64_t)SAMPLES_PER_CLASS * classes)
        return false;
    if (!w->warned) {
        w->warned = true;
        fprintf(stderr,
                "ember: warning: after epoch %lld the accuracy, %.4f, is chance for %d classes (%.4f): the "
                "model is not learning\n",
                (long long)epoch, accuracy, classes, 1.0 / classes);
        say_causes(o);
    }
    return o->stop_if_diverging;
}

int train_watch_stop(struct train_watch *w, const struct train_options *o, ember_ctx *ctx, ember_model *model,
                     const ember_dataset *train)
{
    const struct train_position *at = &w->lowest_position;
    if (!o->save) {
        fprintf(stderr,
                "ember: stopped: the run was not learning (--stop-if-diverging); nothing saved (--save FILE "
                "keeps the model of its lowest loss)\n");
        return EXIT_FAILURE_OTHER;
    }
    if (!w->good || w->lowest >= w->guess) {
        fprintf(stderr,
                "ember: stopped: the run was not learning (--stop-if-diverging), and its loss never did "
                "better than a uniform guess's (%.2f): nothing saved\n",
                w->guess);
        return EXIT_FAILURE_OTHER;
    }
    if (ember_model_load_memory(model, w->good, w->good_size) != EMBER_OK)
        return cli_fail(ctx, "cannot go back to the model of the lowest loss");
    int rc = train_save_model(o, ctx, model, train, at, o->save);
    if (rc == EXIT_OK)
        fprintf(
            stderr,
            "ember: stopped: the run was not learning (--stop-if-diverging); saved %s: the model of "
            "step %lld, where the loss was lowest (%.4g over its %lld steps). It has no optimizer state to "
            "resume from: train again, with a lower --lr\n",
            o->save, (long long)at->total_steps, w->lowest, (long long)w->every);
    return rc == EXIT_OK ? EXIT_FAILURE_OTHER : rc;
}
