/* SPDX-License-Identifier: MIT */
/* tools/progress.c — see progress.h. */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"

#define BAR_WIDTH 24

void progress_begin(struct progress *p, const struct progress_run *run, int epoch, int epochs, int64_t first,
                    int64_t last, int64_t run_steps, bool quiet)
{
    *p = (struct progress){.tty = isatty(STDERR_FILENO),
                           .quiet = quiet,
                           .epoch = epoch,
                           .epochs = epochs,
                           .run = run,
                           .first = first,
                           .last = last,
                           .run_first = run_steps,
                           .start = cli_now()};
    p->next_report = (last - first + 9) / 10;
}

static void format_eta(double seconds, char *out, size_t len)
{
    long s = seconds > 0 && seconds < 1e7 ? (long)(seconds + 0.5) : 0;
    if (s >= 3600)
        snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

void progress_update(struct progress *p, int64_t done, float loss)
{
    if (p->quiet)
        return;
    double now = cli_now(), elapsed = now - p->start;
    int64_t steps = p->last - p->first, step = p->first + done;
    bool last = step >= p->last;
    if (p->tty ? (now - p->last_draw < 0.1 && !last) : (done < p->next_report && !last))
        return;
    p->last_draw = now;
    while (p->next_report <= done)
        p->next_report += (steps + 9) / 10;
    double rate = elapsed > 0 ? (double)done / elapsed : 0.0;
    char eta[24], run_eta[32] = "";
    format_eta(rate > 0 ? (double)(p->last - step) / rate : 0.0, eta, sizeof eta);
    /* the run's, while epochs remain: at the pace of the run so far here, its test passes included */
    int64_t run_at = p->run_first + done, run_done = run_at - p->run->first_step;
    int64_t run_left = p->run->last_step - run_at;
    double run_elapsed = now - p->run->start;
    if (run_left > p->last - step && run_done > 0 && run_elapsed > 0) {
        char left[24];
        format_eta((double)run_left * run_elapsed / (double)run_done, left, sizeof left);
        snprintf(run_eta, sizeof run_eta, ", run %s", left);
    }
    if (p->tty) {
        char bar[BAR_WIDTH + 1];
        int filled = p->last > 0 ? (int)(step * BAR_WIDTH / p->last) : BAR_WIDTH;
        for (int i = 0; i < BAR_WIDTH; i++)
            bar[i] = i < filled ? '=' : i == filled ? '>' : ' ';
        bar[BAR_WIDTH] = '\0';
        fprintf(stderr, "\r\033[Kepoch %d/%d [%s] %lld/%lld  %.1f steps/s  loss %.4f  ETA %s%s", p->epoch,
                p->epochs, bar, (long long)step, (long long)p->last, rate, loss, eta, run_eta);
    } else {
        fprintf(stderr, "epoch %d/%d step %lld/%lld  %.1f steps/s  loss %.4f  ETA %s%s\n", p->epoch,
                p->epochs, (long long)step, (long long)p->last, rate, loss, eta, run_eta);
    }
    fflush(stderr);
}

void progress_end(struct progress *p)
{
    if (p->tty && !p->quiet)
        fputc('\n', stderr);
}
