/* SPDX-License-Identifier: MIT */
/* backends/kernels/gpu-launch.c — what every launch plan needs (see gpu.h). */
#include "gpu.h"

size_t ember_gpu_groups_for(const struct ember_gpu *gpu, int64_t work)
{
    int64_t wg = gpu->tuning.wg_size, groups = (work + wg - 1) / wg;
    if (groups < 1)
        groups = 1;
    return groups < (int64_t)gpu->max_groups ? (size_t)groups : gpu->max_groups;
}

ember_status ember_gpu_launch_each(struct ember_gpu *gpu, enum ember_kernel kernel, int64_t n,
                                   struct ember_gpu_arg *args, int nargs)
{
    int64_t wg = gpu->tuning.wg_size, per_launch = (int64_t)gpu->max_groups * wg;
    for (int64_t first = 0; first < n; first += per_launch) {
        int64_t count = n - first < per_launch ? n - first : per_launch;
        args[nargs - 1] = GPU_INT(first);
        ember_status st = gpu->launch(gpu, kernel, (const size_t[3]){(size_t)((count + wg - 1) / wg), 1, 1},
                                      (size_t)wg, args, nargs);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

size_t ember_gpu_local_for(const struct ember_gpu *gpu, int64_t width)
{
    int64_t wg = gpu->tuning.wg_size, best = wg, least = wg * ((width + wg - 1) / wg) - width;
    for (int64_t size = wg / 2; size >= 64; size /= 2) {
        int64_t idle = size * ((width + size - 1) / size) - width;
        if (idle < least) {
            least = idle;
            best = size;
        }
    }
    return (size_t)best;
}

ember_status ember_gpu_check_extent(struct ember_gpu *gpu, const char *primitive, ember_ptr p, int64_t extent)
{
    if (extent < 0 || (int64_t)p.off + extent > EMBER_GPU_INDEX_LIMIT)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_UNSUPPORTED,
                              "%s: %s over %lld elements at offset %zu: the kernels index with 32-bit "
                              "integers, up to %lld elements per buffer",
                              gpu->name, primitive, (long long)extent, p.off,
                              (long long)EMBER_GPU_INDEX_LIMIT);
    return EMBER_OK;
}

ember_status ember_gpu_check_extents(struct ember_gpu *gpu, const char *primitive, int64_t extent, int count,
                                     const ember_ptr *p)
{
    for (int i = 0; i < count; i++) {
        ember_status st = ember_gpu_check_extent(gpu, primitive, p[i], extent);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

ember_status ember_gpu_check_each(struct ember_gpu *gpu, const char *primitive, int count, const ember_ptr *p,
                                  const int64_t *extent)
{
    for (int i = 0; i < count; i++) {
        ember_status st = ember_gpu_check_extent(gpu, primitive, p[i], extent[i]);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

ember_status ember_gpu_plane_launches(struct ember_gpu *gpu, const char *primitive, int64_t planes,
                                      int64_t rows, int64_t width, size_t depth,
                                      ember_status (*launch)(struct ember_gpu *, const void *,
                                                             const struct ember_gpu_plane_chunk *),
                                      const void *args)
{
    int64_t small = gpu->tuning.wg_size < 64 ? gpu->tuning.wg_size : 64; /* ember_gpu_local_for's least */
    int64_t most = (int64_t)gpu->max_groups * small;                     /* positions per launch */
    most = most < EMBER_GPU_FAST_DIV_LIMIT ? most : EMBER_GPU_FAST_DIV_LIMIT;
    if (width >= most)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_UNSUPPORTED,
                              "%s: %s over rows of %lld positions: at most %lld", gpu->name, primitive,
                              (long long)width, (long long)most - 1);
    int64_t rows_per = (most - 1) / width;
    for (int64_t plane0 = 0; plane0 < planes; plane0 += EMBER_GPU_GRID_YZ)
        for (int64_t row0 = 0; row0 < rows; row0 += rows_per) {
            struct ember_gpu_plane_chunk c = {.plane0 = plane0, .row0 = row0};
            c.planes = planes - plane0 < EMBER_GPU_GRID_YZ ? planes - plane0 : EMBER_GPU_GRID_YZ;
            c.rows = rows - row0 < rows_per ? rows - row0 : rows_per;
            c.local = ember_gpu_local_for(gpu, c.rows * width);
            c.groups[0] = (size_t)((c.rows * width + (int64_t)c.local - 1) / (int64_t)c.local);
            c.groups[1] = (size_t)c.planes;
            c.groups[2] = depth;
            ember_status st = launch(gpu, args, &c);
            if (st != EMBER_OK)
                return st;
        }
    return EMBER_OK;
}
