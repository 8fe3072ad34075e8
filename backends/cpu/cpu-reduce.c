/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-reduce.c — sums and maxima over the middle axis of
 * (outer, r, inner).
 */
#include <math.h>
#include <string.h>

#include "cpu-impl.h"

/* elements per task below which threading costs more than it gains */
#define REDUCE_GRAIN 16384

/* Inner positions handled together by one task, each with its own
 * accumulator, so that the reads of in stay sequential. */
#define REDUCE_TILE 256
/* A contiguous run is summed in 8 float lanes over blocks of this many
 * elements, each block's total then added in double: the lanes keep the
 * loop vectorised and free of a serial dependency, the short blocks keep
 * float rounding from growing with the length. */
#define SUM_BLOCK 256

struct reduce_job {
    const struct ember_reduce *r;
    bool max;
    float *out;
    const float *in;
    int64_t tiles; /* per outer index */
};

static double sum_run(const float *x, int64_t n)
{
    double total = 0.0;
    for (int64_t start = 0; start < n; start += SUM_BLOCK) {
        int64_t len = n - start < SUM_BLOCK ? n - start : SUM_BLOCK, i = 0;
        float lane[8] = {0};
        for (; i + 8 <= len; i += 8)
            for (int k = 0; k < 8; k++)
                lane[k] += x[start + i + k];
        for (; i < len; i++)
            lane[0] += x[start + i];
        total += ((double)lane[0] + lane[1]) + ((double)lane[2] + lane[3]) + ((double)lane[4] + lane[5]) +
                 ((double)lane[6] + lane[7]);
    }
    return total;
}

/* the maximum of a run; NaN wins, as in PyTorch */
static float max_run(const float *x, int64_t n)
{
    float m = -INFINITY;
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        m = x[i] > m ? x[i] : m;
        nan |= x[i] != x[i];
    }
    return nan ? NAN : m;
}

static void store(float *out, double value, const struct ember_reduce *r)
{
    *out = (float)(r->alpha * value) + (r->beta != 0.0f ? r->beta * *out : 0.0f);
}

/* inner == 1: each output reduces one contiguous row */
static void reduce_rows(void *p, int64_t begin, int64_t end)
{
    const struct reduce_job *j = p;
    const struct ember_reduce *r = j->r;
    for (int64_t o = begin; o < end; o++) {
        const float *row = j->in + o * r->r;
        store(&j->out[o], j->max ? max_run(row, r->r) : sum_run(row, r->r), r);
    }
}

/* inner > 1: a tile of neighbouring outputs walks down r together */
static void reduce_tiles(void *p, int64_t begin, int64_t end)
{
    const struct reduce_job *j = p;
    const struct ember_reduce *r = j->r;
    double acc[REDUCE_TILE];
    bool nan[REDUCE_TILE];
    for (int64_t unit = begin; unit < end; unit++) {
        int64_t o = unit / j->tiles, i0 = unit % j->tiles * REDUCE_TILE;
        int64_t n = r->inner - i0 < REDUCE_TILE ? r->inner - i0 : REDUCE_TILE;
        const float *in = j->in + o * r->r * r->inner + i0;
        for (int64_t i = 0; i < n; i++) {
            acc[i] = j->max ? -INFINITY : 0.0;
            nan[i] = false;
        }
        for (int64_t k = 0; k < r->r; k++, in += r->inner) {
            if (j->max) {
                for (int64_t i = 0; i < n; i++) {
                    acc[i] = in[i] > acc[i] ? in[i] : acc[i];
                    nan[i] |= in[i] != in[i];
                }
            } else {
                for (int64_t i = 0; i < n; i++)
                    acc[i] += in[i];
            }
        }
        float *out = j->out + o * r->inner + i0;
        for (int64_t i = 0; i < n; i++)
            store(&out[i], nan[i] ? NAN : acc[i], r);
    }
}

ember_status cpu_reduce(void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out,
                        ember_ptr in)
{
    struct cpu_device *d = dev;
    struct reduce_job j = {.r = r,
                           .max = op == EMBER_MAX,
                           .out = cpu_f32(out),
                           .in = cpu_f32(in),
                           .tiles = (r->inner + REDUCE_TILE - 1) / REDUCE_TILE};
    if (r->inner == 1) {
        cpu_parallel_for(d->pool, r->outer, REDUCE_GRAIN / (r->r + 1) + 1, reduce_rows, &j);
        return EMBER_OK;
    }
    int64_t units = r->outer * j.tiles;
    int64_t work_per_unit = r->r * (r->inner < REDUCE_TILE ? r->inner : REDUCE_TILE);
    cpu_parallel_for(d->pool, units, REDUCE_GRAIN / (work_per_unit + 1) + 1, reduce_tiles, &j);
    return EMBER_OK;
}
