/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-embedding.c — an embedding's gather (forward) and its
 * scatter-add (backward).
 *
 * The backward pass adds each row of dy into the row of dweight its index
 * names. Two rows may name the same one, so the threads split the columns,
 * not the rows: each adds its own columns of every row, in order of the
 * rows, and no two ever write the same element.
 */
#include <math.h>
#include <string.h>

#include "cpu-impl.h"

struct embedding_job {
    int64_t n, dim, vocab;
    const int32_t *index;
    const float *weight, *dy;
    float *out, *dweight;
};

static void embedding_forward_rows(void *p, int64_t begin, int64_t end)
{
    const struct embedding_job *j = p;
    for (int64_t i = begin; i < end; i++) {
        int32_t v = j->index[i];
        float *out = j->out + i * j->dim;
        if (v >= 0 && v < j->vocab)
            memcpy(out, j->weight + v * j->dim, (size_t)j->dim * sizeof *out);
        else /* an index outside the table: a row anyone will notice */
            for (int64_t c = 0; c < j->dim; c++)
                out[c] = NAN;
    }
}

static void embedding_backward_columns(void *p, int64_t begin, int64_t end)
{
    const struct embedding_job *j = p;
    for (int64_t i = 0; i < j->n; i++) {
        int32_t v = j->index[i];
        if (v < 0 || v >= j->vocab)
            continue;
        const float *dy = j->dy + i * j->dim;
        float *dw = j->dweight + v * j->dim;
        for (int64_t c = begin; c < end; c++)
            dw[c] += dy[c];
    }
}

/* the rows and their indices, the same both ways */
static struct embedding_job job_of(int64_t n, int64_t dim, int64_t vocab, ember_ptr index)
{
    return (struct embedding_job){.n = n, .dim = dim, .vocab = vocab, .index = cpu_i32(index)};
}

ember_status cpu_embedding_forward(void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index,
                                   ember_ptr weight, ember_ptr out)
{
    struct cpu_device *d = dev;
    struct embedding_job j = job_of(n, dim, vocab, index);
    j.weight = cpu_f32(weight), j.out = cpu_f32(out);
    cpu_parallel_for(d->pool, n, 16384 / (dim + 1) + 1, embedding_forward_rows, &j);
    return EMBER_OK;
}

ember_status cpu_embedding_backward(void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index,
                                    ember_ptr dy, ember_ptr dweight)
{
    struct cpu_device *d = dev;
    struct embedding_job j = job_of(n, dim, vocab, index);
    j.dy = cpu_f32(dy), j.dweight = cpu_f32(dweight);
    /* at least 16 columns (a cache line) a task, so no two threads share one */
    int64_t grain = 16384 / (n + 1) + 1;
    cpu_parallel_for(d->pool, dim, grain < 16 ? 16 : grain, embedding_backward_columns, &j);
    return EMBER_OK;
}
