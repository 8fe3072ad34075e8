/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-scratch.c — the CPU device's scratch memory, kept
 * between calls and grown to the largest asked for, so that a model's
 * prediction calls no malloc (conv_winograd's tiles, conv_direct's planes,
 * quant_matmul's sums). A file of its own: the primitives that use it and
 * the table in cpu.c that lists them would otherwise call each other.
 */
#include "cpu-impl.h"
#include "platform.h"

ember_status cpu_scratch(struct cpu_device *d, size_t floats, const char *primitive)
{
    if (d->scratch_floats >= floats)
        return EMBER_OK;
    ember_aligned_free(d->scratch);
    d->scratch_floats = 0;
    d->scratch = ember_aligned_alloc(64, (floats + 15) / 16 * 64);
    if (!d->scratch)
        return d->host.fail(d->host.ctx, EMBER_ERR_NOMEM, "%s: no memory for %lld MiB of scratch", primitive,
                            (long long)(floats >> 18));
    d->scratch_floats = floats;
    return EMBER_OK;
}
