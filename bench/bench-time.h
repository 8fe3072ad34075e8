/* SPDX-License-Identifier: MIT */
/*
 * bench/bench-time.h — what the C benchmarks share to time a call: a
 * monotonic clock in milliseconds, and timings sorted so that the median
 * (or another percentile) can be read. The machines these run on are shared
 * and noisy: a median of repetitions passes over the runs another program
 * slowed, where a mean would not. Each program includes it from its own
 * folder ("bench-time.h"), so the compile commands in their headers need
 * nothing more.
 */
#ifndef EMBER_BENCH_TIME_H
#define EMBER_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

static inline double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static inline int compare_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* sorts the n timings in ms, fastest first */
static inline void sort_ms(double *ms, int n) { qsort(ms, (size_t)n, sizeof *ms, compare_ms); }

/* the median of the n timings in ms (sorting them) */
static inline double median_ms(double *ms, int n)
{
    sort_ms(ms, n);
    return ms[n / 2];
}

#endif
