/* SPDX-License-Identifier: MIT */
/* tools/progress.c — see progress.h. */
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"

#define BAR_WIDTH 24

void progress_begin(struct progress *p, int epoch, int epochs, int64_t total_steps, bool quiet)
{
    *p = (struct progress){.tty = isatty(STDERR_FILENO),
                           .quiet = quiet,
                           .epoch = epoch,
                           .epochs = epochs,
                           .total = total_steps,
                           .start = cli_now()};
    p->next_report = (p->total + 9) / 10;
}

static void format_eta(double seconds, char *out, size_t len)
{
    long s = seconds > 0 && seconds < 1e7 ? (long)(seconds + 0.5) : 0;
    if (s >= 3600)
        snprintf(out, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else
        snprintf(out, len, "%ld:%02ld", s / 60, s % 60);
}

void progress_update(struct progress *p, int64_t step, float loss)
{
    if (p->quiet)
        return;
    double now = cli_now(), elapsed = now - p->start;
    bool last = step >= p->total;
    if (p->tty ? (now - p->last_draw < 0.1 && !last) : (step < p->next_report && !last))
        return;
    p->last_draw = now;
    while (p->next_report <= step)
        p->next_report += (p->total + 9) / 10;
    double rate = elapsed > 0 ? (double)step / elapsed : 0.0;
    char eta[32];
    format_eta(rate > 0 ? (double)(p->total - step) / rate : 0.0, eta, sizeof eta);
    if (p->tty) {
        char bar[BAR_WIDTH + 1];
        int filled = p->total > 0 ? (int)(step * BAR_WIDTH / p->total) : BAR_WIDTH;
        for (int i = 0; i < BAR_WIDTH; i++)
            bar[i] = i < filled ? '=' : i == filled ? '>' : ' ';
        bar[BAR_WIDTH] = '\0';
        fprintf(stderr, "\r\033[Kepoch %d/%d [%s] %lld/%lld  %.1f steps/s  loss %.4f  ETA %s", p->epoch,
                p->epochs, bar, (long long)step, (long long)p->total, rate, loss, eta);
    } else {
        fprintf(stderr, "epoch %d/%d step %lld/%lld  %.1f steps/s  loss %.4f  ETA %s\n", p->epoch, p->epochs,
                (long long)step, (long long)p->total, rate, loss, eta);
    }
    fflush(stderr);
}

void progress_end(struct progress *p)
{
    if (p->tty && !p->quiet)
        fputc('\n', stderr);
}
