/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-reduce.c — sums and maxima through reduce.kc, for
 * every GPU backend: rows of neighbouring values one group of lanes each
 * (reduce_rows), else groups of neighbouring inner positions walking r.
 */
#include "gpu.h"

ember_status ember_gpu_reduce(void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out,
                              ember_ptr in)
{
    struct ember_gpu *gpu = dev;
    if (r->outer == 0 || r->inner == 0)
        return EMBER_OK;
    ember_status st = ember_gpu_check_extent(gpu, "reduce", in, r->outer * r->r * r->inner);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, "reduce", out, r->outer * r->inner);
    if (st != EMBER_OK)
        return st;
    if (r->inner == 1) {
        /* lanes: the work-items of a row, a power of two. A CPU device
         * (run > 1) gives each row one work-item; a GPU enough to cover it,
         * up to a group. */
        int lanes = 1;
        while (gpu->tuning.run == 1 && lanes < r->r && lanes < gpu->tuning.wg_size)
            lanes *= 2;
        int64_t rows = gpu->tuning.wg_size / lanes, groups = (r->outer + rows - 1) / rows;
        if (groups <= (int64_t)gpu->max_groups)
            return GPU_LAUNCH(gpu, EMBER_KERNEL_reduce_rows, ((const size_t[3]){(size_t)groups, 1, 1}),
                              (size_t)gpu->tuning.wg_size, GPU_INT(op), GPU_PTR(out), GPU_PTR(in),
                              GPU_INT(r->outer), GPU_INT(r->r), GPU_INT(lanes), GPU_FLOAT(r->alpha),
                              GPU_FLOAT(r->beta));
    }
    /* lanes: the inner positions one group covers, a power of two */
    int lanes = 1;
    while (lanes < r->inner && lanes < gpu->tuning.wg_size)
        lanes *= 2;
    int64_t units = r->outer * ((r->inner + lanes - 1) / lanes);
    size_t groups = units < (int64_t)gpu->max_groups ? (size_t)units : gpu->max_groups;
    return GPU_LAUNCH(gpu, EMBER_KERNEL_reduce, ((const size_t[3]){groups, 1, 1}),
                      (size_t)gpu->tuning.wg_size, GPU_INT(op), GPU_PTR(out), GPU_PTR(in), GPU_INT(r->outer),
                      GPU_INT(r->r), GPU_INT(r->inner), GPU_INT(lanes), GPU_FLOAT(r->alpha),
                      GPU_FLOAT(r->beta));
}
