/* SPDX-License-Identifier: MIT */
/*
 * tools/progress.h — the training progress line on stderr.
 *
 * On a terminal: one line redrawn in place, about ten times a second:
 *   epoch 2/5 [==>                     ] 414/938  143.2 steps/s  loss 0.4321  ETA 0:04, run 0:27
 * Elsewhere (a log file, CI): one plain line at every tenth of the epoch.
 *
 * Steps are numbered as the epoch's, a resumed run's too (it goes on from
 * step 355 of 938, not from 0 of 583), and count to where this epoch
 * stops (--steps may stop it sooner). The ETA is the epoch's; when the
 * run goes on past it, the run's follows, from the pace of every step and
 * test pass so far.
 */
#ifndef EMBER_PROGRESS_H
#define EMBER_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* The run as this process trains it: when it began and from which of the
 * run's steps, and the step it ends after. */
struct progress_run {
    double start;
    int64_t first_step, last_step;
};

struct progress {
    bool tty, quiet;
    int epoch, epochs;
    const struct progress_run *run;
    int64_t first, last; /* the epoch's steps done before, and the one it stops after */
    int64_t run_first;   /* the run's steps done before this epoch's first here */
    int64_t next_report; /* of this epoch's steps done here, where the next plain line is due */
    double start, last_draw;
};

/* An epoch's line: `first` of its steps were done before (a resume), and
 * it stops after step `last`; `run_steps` of the run's steps are done. */
void progress_begin(struct progress *p, const struct progress_run *run, int epoch, int epochs, int64_t first,
                    int64_t last, int64_t run_steps, bool quiet);
/* after `done` of the epoch's steps here (1-based) with the latest loss */
void progress_update(struct progress *p, int64_t done, float loss);
/* ends the line on a terminal */
void progress_end(struct progress *p);

#endif /* EMBER_PROGRESS_H */
