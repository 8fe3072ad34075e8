/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-rope.c — rotary position embedding through
 * rope.kc, for every GPU backend: one work-item per pair turned and per
 * value copied.
 */
#include "gpu.h"

ember_status ember_gpu_rope(void *dev, const struct ember_rope *r, ember_ptr x, ember_ptr table, ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    const char *name = "rope";
    int64_t rows = r->batch * r->seq * r->heads, units = r->rot / 2 + r->dim - r->rot;
    ember_status st = ember_gpu_check_extent(gpu, name, x, rows * r->dim);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, y, rows * r->dim);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, name, table, (r->position + r->seq) * r->rot);
    if (st != EMBER_OK || rows * units == 0)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_rope, rows * units, GPU_PTR(x), GPU_PTR(table), GPU_PTR(y),
                           GPU_INT(rows * units), GPU_INT(r->heads), GPU_INT(r->seq), GPU_INT(r->dim),
                           GPU_INT(r->rot), GPU_INT(r->position), GPU_INT(r->neox), GPU_INT(r->inverse));
}
