/*
 * backends/kernels/gpu-conv.c — im2col, col2im and max-pooling through
 * conv.kc and pool.kc, for every GPU backend: one work-item per output
 * element. im2col and max-pooling launch planes along the grid's y (and
 * im2col's taps along z), the rows of a plane along x, split into several
 * launches where the grid's limits or fast_div's (common.kh) require; the
 * gathers (col2im, the backward pass of overlapping windows) run
 * grid-stride launches.
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

/* One launch of a plane kernel: planes [plane0, plane0 + planes) along y,
 * rows [row0, row0 + rows) of `width` positions along x, `depth` along z. */
struct plane_chunk {
    int64_t plane0, planes, row0, rows;
    size_t groups[3], local;
};

/* fast_div's dividends stay below this (2^24) */
#define FAST_DIV_LIMIT ((int64_t)1 << 24)

/* Runs `launch` over `planes` planes of `rows` rows of `width` positions,
 * `depth` deep, in launches within the grid's limits and fast_div's. */
static ember_status gpu_plane_launches(
    struct ember_gpu *gpu, const char *primitive, int64_t planes, int64_t rows, int64_t width, size_t depth,
    ember_status (*launch)(struct ember_gpu *, const void *, const struct plane_chunk *), const void *args)
{
    int64_t small = gpu->tuning.wg_size < 64 ? gpu->tuning.wg_size : 64; /* ember_gpu_local_for's least */
    int64_t most = (int64_t)gpu->max_groups * small;                     /* positions per launch */
    most = most < FAST_DIV_LIMIT ? most : FAST_DIV_LIMIT;
    if (width >= most)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_UNSUPPORTED,
                              "%s: %s over rows of %lld positions: at most %lld", gpu->name, primitive,
                              (long long)width, (long long)most - 1);
    int64_t rows_per = (most - 1) / width;
    for (int64_t plane0 = 0; plane0 < planes; plane0 += EMBER_GPU_GRID_YZ)
        for (int64_t row0 = 0; row0 < rows; row0 += rows_per) {
            struct plane_chunk c = {.plane0 = plane0, .row0 = row0};
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

struct conv_args {
    const struct ember_conv_geom *g;
    ember_ptr x, col;
    int64_t tap0;
};

static ember_status gpu_im2col_chunk(struct ember_gpu *gpu, const void *p, const struct plane_chunk *c)
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
    if (taps >= FAST_DIV_LIMIT)
        return gpu->host.fail(gpu->host.ctx, EMBER_ERR_UNSUPPORTED, "%s: im2col of a %lldx%lld kernel",
                              gpu->name, (long long)g->kh, (long long)g->kw);
    for (int64_t tap0 = 0; tap0 < taps && st == EMBER_OK; tap0 += EMBER_GPU_GRID_YZ) {
        struct conv_args a = {.g = g, .x = x, .col = col, .tap0 = tap0};
        size_t depth = (size_t)(taps - tap0 < EMBER_GPU_GRID_YZ ? taps - tap0 : EMBER_GPU_GRID_YZ);
        st = gpu_plane_launches(gpu, "im2col", g->n * g->c, g->oh, g->ow, depth, gpu_im2col_chunk, &a);
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
};

static ember_status gpu_pool_forward_chunk(struct ember_gpu *gpu, const void *p, const struct plane_chunk *c)
{
    const struct pool_args *a = p;
    const struct ember_pool_geom *g = a->g;
    int64_t hw = g->h * g->w, ohw = g->oh * g->ow;
    ember_ptr x = {a->in.buf, a->in.off + (size_t)(c->plane0 * hw)};
    ember_ptr y = {a->out.buf, a->out.off + (size_t)(c->plane0 * ohw)};
    ember_ptr arg = {a->argmax.buf, a->argmax.off + (size_t)(c->plane0 * ohw)};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_maxpool_forward, c->groups, c->local, GPU_PTR(x), GPU_PTR(y),
                      GPU_PTR(arg), GPU_INT(g->h), GPU_INT(g->w), GPU_INT(g->k), GPU_INT(g->stride),
                      GPU_INT(g->oh), GPU_INT(g->ow), GPU_INT(c->row0), GPU_INT(c->rows),
                      GPU_FLOAT(1.0f / (float)g->ow));
}

static ember_status gpu_pool_scatter_chunk(struct ember_gpu *gpu, const void *p, const struct plane_chunk *c)
{
    const struct pool_args *a = p;
    const struct ember_pool_geom *g = a->g;
    int64_t hw = g->h * g->w, ohw = g->oh * g->ow;
    ember_ptr dy = {a->in.buf, a->in.off + (size_t)(c->plane0 * ohw)};
    ember_ptr dx = {a->out.buf, a->out.off + (size_t)(c->plane0 * hw)};
    ember_ptr arg = {a->argmax.buf, a->argmax.off + (size_t)(c->plane0 * ohw)};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_maxpool_backward_scatter, c->groups, c->local, GPU_PTR(dy),
                      GPU_PTR(arg), GPU_PTR(dx), GPU_INT(hw), GPU_INT(ohw), GPU_INT(c->row0),
                      GPU_INT(c->rows), GPU_INT(g->ow));
}

/* 2x2 windows at stride 2 on a CPU device (run > 1): maxpool2_forward or
 * _backward by output rows, groups of one row wide, in launches of at most
 * EMBER_GPU_GRID_YZ planes. False when they do not apply. */
static bool gpu_pool2(struct ember_gpu *gpu, enum ember_kernel kernel, const struct ember_pool_geom *g,
                      ember_ptr in, ember_ptr argmax, ember_ptr out, ember_status *st)
{
    if (gpu->tuning.run == 1 || g->k != 2 || g->stride != 2 || g->oh > EMBER_GPU_GRID_YZ ||
        (kernel == EMBER_KERNEL_maxpool2_backward && (g->h != 2 * g->oh || g->w != 2 * g->ow)))
        return false;
    size_t local = 1;
    while ((int64_t)local < g->ow && (int)local < gpu->tuning.wg_size)
        local *= 2;
    int64_t planes = g->n * g->c, hw = g->h * g->w, ohw = g->oh * g->ow;
    int64_t in_plane = kernel == EMBER_KERNEL_maxpool2_forward ? hw : ohw, out_plane = hw + ohw - in_plane;
    size_t groups[3] = {(size_t)((g->ow + (int64_t)local - 1) / (int64_t)local), (size_t)g->oh, 0};
    if (groups[0] > gpu->max_groups)
        return false;
    *st = EMBER_OK;
    for (int64_t plane0 = 0; plane0 < planes && *st == EMBER_OK; plane0 += EMBER_GPU_GRID_YZ) {
        groups[2] = (size_t)(planes - plane0 < EMBER_GPU_GRID_YZ ? planes - plane0 : EMBER_GPU_GRID_YZ);
        ember_ptr i = {in.buf, in.off + (size_t)(plane0 * in_plane)},
                  o = {out.buf, out.off + (size_t)(plane0 * out_plane)};
        ember_ptr a = {argmax.buf, argmax.off + (size_t)(plane0 * ohw)};
        *st = kernel == EMBER_KERNEL_maxpool2_forward
                  ? GPU_LAUNCH(gpu, kernel, groups, local, GPU_PTR(i), GPU_PTR(o), GPU_PTR(a), GPU_INT(g->h),
                               GPU_INT(g->w), GPU_INT(g->oh), GPU_INT(g->ow))
                  : GPU_LAUNCH(gpu, kernel, groups, local, GPU_PTR(i), GPU_PTR(a), GPU_PTR(o), GPU_INT(g->h),
                               GPU_INT(g->w), GPU_INT(g->oh), GPU_INT(g->ow));
    }
    return true;
}

ember_status ember_gpu_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                       ember_ptr argmax)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_pool_check(gpu, "maxpool_forward", g, x, y, argmax);
    if (st != EMBER_OK || g->n * g->c * g->oh * g->ow == 0)
        return st;
    if (gpu_pool2(gpu, EMBER_KERNEL_maxpool2_forward, g, x, argmax, y, &st))
        return st;
    struct pool_args a = {.g = g, .in = x, .out = y, .argmax = argmax};
    return gpu_plane_launches(gpu, "maxpool_forward", g->n * g->c, g->oh, g->ow, 1, gpu_pool_forward_chunk,
                              &a);
}

ember_status ember_gpu_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                        ember_ptr argmax, ember_ptr dx)
{
    struct ember_gpu *gpu = dev;
    ember_status st = gpu_pool_check(gpu, "maxpool_backward", g, dx, dy, argmax);
    int64_t planes = g->n * g->c, total = planes * g->h * g->w;
    if (st != EMBER_OK || total == 0)
        return st;
    if (gpu_pool2(gpu, EMBER_KERNEL_maxpool2_backward, g, dy, argmax, dx, &st))
        return st;
    if (g->stride >= g->k) { /* windows do not overlap: zeros, then each dy at its argmax */
        struct pool_args a = {.g = g, .in = dy, .out = dx, .argmax = argmax};
        st = ember_gpu_fill(gpu, dx, (size_t)total, 0.0f);
        return st != EMBER_OK ? st
                              : gpu_plane_launches(gpu, "maxpool_backward", planes, g->oh, g->ow, 1,
                                                   gpu_pool_scatter_chunk, &a);
    }
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_maxpool_backward, total, GPU_PTR(dy), GPU_PTR(argmax), GPU_PTR(dx),
                         GPU_INT(planes), GPU_INT(g->h), GPU_INT(g->w), GPU_INT(g->k), GPU_INT(g->stride),
                         GPU_INT(g->oh), GPU_INT(g->ow));
}
