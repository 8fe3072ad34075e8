/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-pool.c — max- and average-pooling through pool.kc,
 * for every GPU backend: one work-item per output element, planes along
 * the grid's y and the rows of a plane along x (ember_gpu_plane_launches);
 * the backward passes that gather (overlapping max windows, every average)
 * run grid-stride launches.
 */
#include "gpu.h"

static ember_status gpu_pool_check(struct ember_gpu *gpu, const char *primitive,
                                   const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                   ember_ptr argmax)
{
    int64_t planes = g->n * g->c;
    ember_status st = ember_gpu_check_extent(gpu, primitive, x, planes * g->h * g->w);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, primitive, y, planes * g->oh * g->ow);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, primitive, argmax, planes * g->oh * g->ow);
    return st;
}

struct pool_args {
    const struct ember_pool_geom *g;
    ember_ptr in, out, argmax; /* x, y, argmax forward; dy, dx, argmax backward */
    bool backward;
};

/* a's tensors where the chunk's planes start in them: x and dx have
 * planes of h w elements, y, dy and argmax of oh ow */
static struct pool_args chunk_planes(const struct pool_args *a, const struct ember_gpu_plane_chunk *c)
{
    int64_t hw = a->g->h * a->g->w, ohw = a->g->oh * a->g->ow;
    return (struct pool_args){.g = a->g,
                              .in = ember_gpu_planes_on(a->in, c->plane0, a->backward ? ohw : hw),
                              .out = ember_gpu_planes_on(a->out, c->plane0, a->backward ? hw : ohw),
                              .argmax = ember_gpu_planes_on(a->argmax, c->plane0, ohw),
                              .backward = a->backward};
}

static ember_status gpu_pool_forward_chunk(struct ember_gpu *gpu, const void *p,
                                           const struct ember_gpu_plane_chunk *c)
{
    struct pool_args at = chunk_planes(p, c);
    const struct ember_pool_geom *g = at.g;
    return GPU_LAUNCH(gpu, EMBER_KERNEL_max_pool2d_forward, c->groups, c->local, GPU_PTR(at.in),
                      GPU_PTR(at.out), GPU_PTR(at.argmax), GPU_INT(g->h), GPU_INT(g->w), GPU_INT(g->k),
                      GPU_INT(g->stride), GPU_INT(g->oh), GPU_INT(g->ow), GPU_INT(c->row0), GPU_INT(c->rows),
                      GPU_FLOAT(1.0f / (float)g->ow));
}

static ember_status gpu_pool_scatter_chunk(struct ember_gpu *gpu, const void *p,
                                           const struct ember_gpu_plane_chunk *c)
{
    struct pool_args at = chunk_planes(p, c);
    const struct ember_pool_geom *g = at.g;
    return GPU_LAUNCH(gpu, EMBER_KERNEL_max_pool2d_backward_scatter, c->groups, c->local, GPU_PTR(at.in),
                      GPU_PTR(at.argmax), GPU_PTR(at.out), GPU_INT(g->h * g->w), GPU_INT(g->oh * g->ow),
                      GPU_INT(c->row0), GPU_INT(c->rows), GPU_INT(g->ow));
}

/* 2x2 windows at stride 2 on a CPU device (run > 1): max_pool2d_2x2_forward or
 * _backward by output rows, groups of one row wide, in launches of at most
 * EMBER_GPU_GRID_YZ planes. False when they do not apply. */
static bool gpu_pool2(struct ember_gpu *gpu, enum ember_kernel kernel, const struct ember_pool_geom *g,
                      ember_ptr in, ember_ptr argmax, ember_ptr out, ember_status *st)
{
    if (gpu->tuning.run == 1 || g->k != 2 || g->stride != 2 || g->oh > EMBER_GPU_GRID_YZ ||
        (kernel == EMBER_KERNEL_max_pool2d_2x2_backward && (g->h != 2 * g->oh || g->w != 2 * g->ow)))
        return false;
    size_t local = 1;
    while ((int64_t)local < g->ow && (int)local < gpu->tuning.wg_size)
        local *= 2;
    int64_t planes = g->n * g->c, hw = g->h * g->w, ohw = g->oh * g->ow;
    int64_t in_plane = kernel == EMBER_KERNEL_max_pool2d_2x2_forward ? hw : ohw,
            out_plane = hw + ohw - in_plane;
    size_t groups[3] = {(size_t)((g->ow + (int64_t)local - 1) / (int64_t)local), (size_t)g->oh, 0};
    if (groups[0] > gpu->max_groups)
        return false;
    *st = EMBER_OK;
    for (int64_t plane0 = 0; plane0 < planes && *st == EMBER_OK; plane0 += EMBER_GPU_GRID_YZ) {
        groups[2] = (size_t)(planes - plane0 < EMBER_GPU_GRID_YZ ? planes - plane0 : EMBER_GPU_GRID_YZ);
        ember_ptr i = ember_gpu_planes_on(in, plane0, in_plane),
                  o = ember_gpu_planes_on(out, plane0, out_plane);
        ember_ptr a = ember_gpu_planes_on(argmax, plane0, ohw);
        *st = kernel == EMBER_KERNEL_max_pool2d_2x2_forward
                  ? GPU_LAUNCH(gpu, kernel, groups, local, GPU_PTR(i), GPU_PTR(o), GPU_PTR(a), GPU_INT(g->h),
                               GPU_INT(g->w), GPU_INT(g->oh), GPU_INT(g->ow))
                  : GPU_LAUNCH(gpu, kernel, groups, local, GPU_PTR(i), GPU_PTR(a), GPU_PTR(o), GPU_INT(g->h),
                               GPU_INT(g->w), GPU_INT(g->oh), GPU_INT(g->ow));
    }
    return true;
}

ember_status ember_gpu_max_pool2d_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x,
                                          ember_ptr y, ember_ptr argmax)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_pool_check(gpu, "max_pool2d_forward", g, x, y, argmax);
    if (st != EMBER_OK || g->n * g->c * g->oh * g->ow == 0)
        return st;
    if (gpu_pool2(gpu, EMBER_KERNEL_max_pool2d_2x2_forward, g, x, argmax, y, &st))
        return st;
    struct pool_args a = {.g = g, .in = x, .out = y, .argmax = argmax};
    return ember_gpu_plane_launches(gpu, "max_pool2d_forward", g->n * g->c, g->oh, g->ow, 1,
                                    gpu_pool_forward_chunk, &a);
}

ember_status ember_gpu_max_pool2d_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                           ember_ptr argmax, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_pool_check(gpu, "max_pool2d_backward", g, dx, dy, argmax);
    int64_t planes = g->n * g->c, total = planes * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    if (gpu_pool2(gpu, EMBER_KERNEL_max_pool2d_2x2_backward, g, dy, argmax, dx, &st))
        return st;
    if (g->stride >= g->k) { /* windows do not overlap: zeros, then each dy at its argmax */
        struct pool_args a = {.g = g, .in = dy, .out = dx, .argmax = argmax, .backward = true};
        st = ember_gpu_fill(gpu, dx, (size_t)total, 0.0f);
        return st != EMBER_OK ? st
                              : ember_gpu_plane_launches(gpu, "max_pool2d_backward", planes, g->oh, g->ow, 1,
                                                         gpu_pool_scatter_chunk, &a);
    }
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_max_pool2d_backward, total, GPU_PTR(dy), GPU_PTR(argmax),
                         GPU_PTR(dx), GPU_INT(planes), GPU_INT(g->h), GPU_INT(g->w), GPU_INT(g->k),
                         GPU_INT(g->stride), GPU_INT(g->oh), GPU_INT(g->ow));
}

/* ------------------------------------------------------------ average */

static ember_status gpu_avg_pool_forward_chunk(struct ember_gpu *gpu, const void *p,
                                               const struct ember_gpu_plane_chunk *c)
{
    struct pool_args at = chunk_planes(p, c);
    const struct ember_pool_geom *g = at.g;
    return GPU_LAUNCH(gpu, EMBER_KERNEL_avg_pool2d_forward, c->groups, c->local, GPU_PTR(at.in),
                      GPU_PTR(at.out), GPU_INT(g->h), GPU_INT(g->w), GPU_INT(g->k), GPU_INT(g->stride),
                      GPU_INT(g->oh), GPU_INT(g->ow), GPU_INT(c->row0), GPU_INT(c->rows),
                      GPU_FLOAT(1.0f / (float)g->ow), GPU_FLOAT(1.0f / (float)(g->k * g->k)));
}

static ember_status gpu_avg_pool_check(struct ember_gpu *gpu, const char *primitive,
                                       const struct ember_pool_geom *g, ember_ptr x, ember_ptr y)
{
    ember_status st = ember_gpu_check_extent(gpu, primitive, x, g->n * g->c * g->h * g->w);
    return st != EMBER_OK ? st : ember_gpu_check_extent(gpu, primitive, y, g->n * g->c * g->oh * g->ow);
}

ember_status ember_gpu_avg_pool2d_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x,
                                          ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_avg_pool_check(gpu, "avg_pool2d_forward", g, x, y);
    if (st != EMBER_OK || g->n * g->c * g->oh * g->ow == 0)
        return st;
    struct pool_args a = {.g = g, .in = x, .out = y};
    return ember_gpu_plane_launches(gpu, "avg_pool2d_forward", g->n * g->c, g->oh, g->ow, 1,
                                    gpu_avg_pool_forward_chunk, &a);
}

ember_status ember_gpu_avg_pool2d_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                           ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_avg_pool_check(gpu, "avg_pool2d_backward", g, dx, dy);
    int64_t planes = g->n * g->c, total = planes * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_avg_pool2d_backward, total, GPU_PTR(dy), GPU_PTR(dx),
                         GPU_INT(planes), GPU_INT(g->h), GPU_INT(g->w), GPU_INT(g->k), GPU_INT(g->stride),
                         GPU_INT(g->oh), GPU_INT(g->ow), GPU_FLOAT(1.0f / (float)(g->k * g->k)));
}
