/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-conv.c — im2col and col2im through conv.kc, for
 * every GPU backend: one work-item per output element. im2col launches
 * planes along the grid's y and taps along z, the rows of a plane along x
 * (ember_gpu_plane_launches); col2im, a gather, runs grid-stride launches.
 */
#include "gpu.h"

static ember_status gpu_conv_check(struct ember_gpu *gpu, const char *primitive,
                                   const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    ember_status st = ember_gpu_check_extent(gpu, primitive, x, g->n * g->c * g->h * g->w);
    return st != EMBER_OK
               ? st
               : ember_gpu_check_extent(gpu, primitive, col, g->n * g->c * g->kh * g->kw * g->oh * g->ow);
}

struct conv_args {
    const struct ember_conv_geom *g;
    ember_ptr x, col;
    int64_t tap0;
};

static ember_status gpu_im2col_chunk(struct ember_gpu *gpu, const void *p,
                                     const struct ember_gpu_plane_chunk *c)
{
    const struct conv_args *a = p;
    const struct ember_conv_geom *g = a->g;
    int64_t taps = g->kh * g->kw;
    ember_ptr x = {a->x.buf, a->x.off + (size_t)(c->plane0 * g->h * g->w)};
    ember_ptr col = {a->col.buf, a->col.off + (size_t)(c->plane0 * taps * g->oh * g->ow)};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_im2col, c->groups, c->local, GPU_PTR(x), GPU_PTR(col), GPU_INT(g->h),
                      GPU_INT(g->w), GPU_INT(g->kh), GPU_INT(g->kw), GPU_INT(g->stride), GPU_INT(g->pad),
                      GPU_INT(g->oh), GPU_INT(g->ow), GPU_INT(c->row0), GPU_INT(c->rows),
                      GPU_FLOAT(1.0f / (float)g->ow), GPU_INT(a->tap0), GPU_FLOAT(1.0f / (float)g->kw));
}

ember_status ember_gpu_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_conv_check(gpu, "im2col", g, x, col);
    int64_t taps = g->kh * g->kw;
    if (st != EMBER_OK || g->n * g->c * taps * g->oh * g->ow == 0)
        return st;
    if (taps >= EMBER_GPU_FAST_DIV_LIMIT)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_UNSUPPORTED, "%s: im2col of a %lldx%lld kernel",
                              gpu->name, (long long)g->kh, (long long)g->kw);
    for (int64_t tap0 = 0; tap0 < taps && st == EMBER_OK; tap0 += EMBER_GPU_GRID_YZ) {
        struct conv_args a = {.g = g, .x = x, .col = col, .tap0 = tap0};
        size_t depth = (size_t)(taps - tap0 < EMBER_GPU_GRID_YZ ? taps - tap0 : EMBER_GPU_GRID_YZ);
        st = ember_gpu_plane_launches(gpu, "im2col", g->n * g->c, g->oh, g->ow, depth, gpu_im2col_chunk, &a);
    }
    return st;
}

#define CONV_GEOMETRY(g)                                                                                     \
    GPU_INT((g)->n), GPU_INT((g)->c), GPU_INT((g)->h), GPU_INT((g)->w), GPU_INT((g)->kh), GPU_INT((g)->kw),  \
        GPU_INT((g)->stride), GPU_INT((g)->pad), GPU_INT((g)->oh), GPU_INT((g)->ow)

ember_status ember_gpu_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_conv_check(gpu, "col2im", g, dx, col);
    int64_t total = g->n * g->c * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_col2im, total, GPU_PTR(col), GPU_PTR(dx), CONV_GEOMETRY(g));
}
