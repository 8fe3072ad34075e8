/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-rope.c — rotary position embedding: each head's pairs
 * turned by their position's angles (struct ember_rope in backend.h).
 * The threads split the (batch, position, head) rows.
 */
#include "cpu-impl.h"

struct rope_job {
    const struct ember_rope *r;
    const float *x, *table;
    float *y;
};

static void rope_rows(void *p, int64_t begin, int64_t end)
{
    const struct rope_job *j = p;
    const struct ember_rope *r = j->r;
    int64_t half = r->rot / 2;
    float sign = r->inverse ? -1.0f : 1.0f;
    for (int64_t row = begin; row < end; row++) {
        int64_t t = row / r->heads % r->seq;
        const float *x = j->x + row * r->dim, *angle = j->table + (r->position + t) * half * 2;
        float *y = j->y + row * r->dim;
        for (int64_t i = 0; i < half; i++) {
            int64_t a = r->neox ? i : 2 * i, b = r->neox ? i + half : 2 * i + 1;
            float c = angle[2 * i], s = sign * angle[2 * i + 1], xa = x[a], xb = x[b];
            y[a] = xa * c - xb * s;
            y[b] = xa * s + xb * c;
        }
        if (y != x)
            for (int64_t i = r->rot; i < r->dim; i++)
                y[i] = x[i];
    }
}

ember_status cpu_rope(void *dev, const struct ember_rope *r, ember_ptr x, ember_ptr table, ember_ptr y)
{
    struct cpu_device *d = dev;
    struct rope_job j = {.r = r, .x = cpu_f32(x), .table = cpu_f32(table), .y = cpu_f32(y)};
    cpu_parallel_for(d->pool, r->batch * r->seq * r->heads, 16384 / (r->dim + 1) + 1, rope_rows, &j);
    return EMBER_OK;
}
