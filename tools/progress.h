/* SPDX-License-Identifier: MIT */
/*
 * tools/progress.h — the training progress line on stderr.
 *
 * On a terminal: one line redrawn in place, about ten times a second:
 *   epoch 1/2 [=======>          ] 412/938  143.2 steps/s  loss 0.4321  ETA 0:04
 * Elsewhere (a log file, CI): one plain line at every tenth of the epoch.
 */
#ifndef EMBER_PROGRESS_H
#define EMBER_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct progress {
    bool tty, quiet;
    int epoch, epochs;
    int64_t total, next_report;
    double start, last_draw;
};

void progress_begin(struct progress *p, int epoch, int epochs, int64_t total_steps, bool quiet);
/* after `step` steps (1-based) with the latest loss */
void progress_update(struct progress *p, int64_t step, float loss);
/* ends the line on a terminal */
void progress_end(struct progress *p);

#endif /* EMBER_PROGRESS_H */
