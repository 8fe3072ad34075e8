/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-conv.c — im2col, col2im, conv_direct and conv_grouped through
 * conv.kc, for every GPU backend. im2col gives a work-item an element of
 * the columns, launching planes along the grid's y and taps along z, the
 * rows of a plane along x (ember_gpu_plane_launches); col2im, a gather,
 * runs grid-stride launches. conv_direct's forward pass and input gradient
 * run grid-stride over the batch's positions along x, a block of channels
 * a group along y (the input gradient at stride 1 as a forward pass, by the
 * weights turned around); its weight gradient a work-group for each block
 * of weights and slice of the batch. conv_grouped's passes run
 * grid-stride, a work-item for each element written.
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
    ember_ptr x = ember_gpu_planes_on(a->x, c->plane0, g->h * g->w);
    ember_ptr col = ember_gpu_planes_on(a->col, c->plane0, taps * g->oh * g->ow);
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

/* a work-group of conv_direct's weight gradient sums DW_ROWS filters by
 * DW_TAPS weights of each (conv.kc); the other two passes take the
 * tuning's wide_rows channels a work-item (DIRECT_ROWS there) */
#define DIRECT_DW_ROWS 4
#define DIRECT_DW_TAPS 9

/* conv_direct_forward's neighbouring positions a work-item (DIRECT_COLS
 * in conv.kc): as many as leave at least DIRECT_MIN_ITEMS work-items in
 * all, so that a large GPU still has work enough (an H100 holds 270,000 at
 * once; ResNet-8's 7x7 layers at batch 256 take 2, the others 4) */
#define DIRECT_COLS      4
#define DIRECT_MIN_ITEMS 32768

/* the forward convolution of x (g) into y, oc channels, by the weights W(o,
 * ci, k) = w[o * w_out + ci * w_in + k] (flip: taps - 1 - k) */
static ember_status direct_forward(struct ember_gpu *gpu, const struct ember_conv_geom *g, int64_t oc,
                                   float beta, ember_ptr x, ember_ptr w, ember_ptr y, int64_t w_out,
                                   int64_t w_in, int flip)
{
    int64_t rows = gpu->tuning.wide_rows, blocks = (oc + rows - 1) / rows, cols = DIRECT_COLS;
    while (cols > 1 && g->n * g->oh * ((g->ow + cols - 1) / cols) * blocks < DIRECT_MIN_ITEMS)
        cols /= 2;
    size_t groups[3] = {ember_gpu_groups_for(gpu, g->n * g->oh * ((g->ow + cols - 1) / cols)), (size_t)blocks,
                        1};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_conv_direct_forward, groups, (size_t)gpu->tuning.wg_size, GPU_PTR(x),
                      GPU_PTR(w), GPU_PTR(y), CONV_GEOMETRY(g), GPU_INT(oc), GPU_FLOAT(beta), GPU_INT(w_out),
                      GPU_INT(w_in), GPU_INT(flip), GPU_INT(cols));
}

/* At stride 1 (and a square window), dx is the forward convolution of dy
 * (oc channels of oh x ow) into c channels of h x w, by the weights turned
 * around: W'(ci, o, k) = w[o, ci, taps - 1 - k], padded kh - 1 - pad.
 * Otherwise the gather of conv_direct_input_grad. */
static ember_status conv_direct_input_grad(struct ember_gpu *gpu, const struct ember_conv_job *c,
                                           ember_ptr dx, ember_ptr w, ember_ptr dy)
{
    const struct ember_conv_geom *g = &c->g;
    int64_t rows = gpu->tuning.wide_rows, taps = g->kh * g->kw;
    if (g->stride == 1 && g->kh == g->kw) {
        struct ember_conv_geom turned = {.n = g->n,
                                         .c = c->oc,
                                         .h = g->oh,
                                         .w = g->ow,
                                         .kh = g->kh,
                                         .kw = g->kw,
                                         .stride = 1,
                                         .pad = g->kh - 1 - g->pad,
                                         .oh = g->h,
                                         .ow = g->w};
        return direct_forward(gpu, &turned, g->c, 0.0f, dy, w, dx, taps, g->c * taps, 1);
    }
    size_t groups[3] = {ember_gpu_groups_for(gpu, g->n * g->h * g->w), (size_t)((g->c + rows - 1) / rows), 1};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_conv_direct_input_grad, groups, (size_t)gpu->tuning.wg_size,
                      GPU_PTR(dx), GPU_PTR(w), GPU_PTR(dy), CONV_GEOMETRY(g), GPU_INT(c->oc));
}

static ember_status conv_direct_weight_grad(struct ember_gpu *gpu, const struct ember_conv_job *c,
                                            ember_ptr x, ember_ptr dw, ember_ptr dy)
{
    const struct ember_conv_geom *g = &c->g;
    int64_t ckk = g->c * g->kh * g->kw, slices = c->slices > 1 ? c->slices : 1;
    size_t groups[3] = {(size_t)((ckk + DIRECT_DW_TAPS - 1) / DIRECT_DW_TAPS),
                        (size_t)((c->oc + DIRECT_DW_ROWS - 1) / DIRECT_DW_ROWS), (size_t)slices};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_conv_direct_weight_grad, groups, (size_t)gpu->tuning.wg_size,
                      GPU_PTR(x), GPU_PTR(dw), GPU_PTR(dy), CONV_GEOMETRY(g), GPU_INT(c->oc),
                      GPU_FLOAT(slices > 1 ? 0.0f : c->beta), GPU_INT((g->n + slices - 1) / slices));
}

ember_status ember_gpu_conv_direct(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                                   ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    const struct ember_conv_geom *g = &c->g;
    int64_t ckk = g->c * g->kh * g->kw, rows = gpu->tuning.wide_rows;
    int64_t slices = c->pass == EMBER_CONV_WEIGHT_GRAD && c->slices > 1 ? c->slices : 1;
    ember_status st = ember_gpu_check_extent(gpu, "conv_direct", x, g->n * g->c * g->h * g->w);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, "conv_direct", w, slices * c->oc * ckk);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, "conv_direct", y, g->n * c->oc * g->oh * g->ow);
    if (st != EMBER_OK)
        return st;
    int64_t blocks = c->pass == EMBER_CONV_FORWARD      ? (c->oc + rows - 1) / rows
                     : c->pass == EMBER_CONV_INPUT_GRAD ? (g->c + rows - 1) / rows
                                                        : (c->oc + DIRECT_DW_ROWS - 1) / DIRECT_DW_ROWS;
    if (blocks > EMBER_GPU_GRID_YZ || slices > EMBER_GPU_GRID_YZ)
        return gpu->host.fail(
            gpu->host.ctx, EMBER_ERR_UNSUPPORTED, "%s: conv_direct of %lld channels in %lld slices",
            gpu->name, (long long)(c->pass == EMBER_CONV_INPUT_GRAD ? g->c : c->oc), (long long)slices);
    switch (c->pass) {
    case EMBER_CONV_FORWARD:
        return g->n * c->oc * g->oh * g->ow == 0
                   ? EMBER_OK
                   : direct_forward(gpu, g, c->oc, c->beta, x, w, y, ckk, g->kh * g->kw, 0);
    case EMBER_CONV_INPUT_GRAD:
        return g->n * g->c * g->h * g->w == 0 ? EMBER_OK : conv_direct_input_grad(gpu, c, x, w, y);
    default: return c->oc * ckk == 0 ? EMBER_OK : conv_direct_weight_grad(gpu, c, x, w, y);
    }
}

/* conv_grouped: every pass a grid-stride launch over what it writes */
ember_status ember_gpu_conv_grouped(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                                    ember_ptr y)
{
    struct ember_gpu *gpu = dev;
    const struct ember_conv_geom *g = &c->g;
    int64_t groups = c->groups > 1 ? c->groups : 1, weights = c->oc * (g->c / groups) * g->kh * g->kw;
    int64_t slices = c->pass == EMBER_CONV_WEIGHT_GRAD && c->slices > 1 ? c->slices : 1;
    ember_status st = ember_gpu_check_extent(gpu, "conv_grouped", x, g->n * g->c * g->h * g->w);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, "conv_grouped", w, slices * weights);
    if (st == EMBER_OK)
        st = ember_gpu_check_extent(gpu, "conv_grouped", y, g->n * c->oc * g->oh * g->ow);
    int64_t work = c->pass == EMBER_CONV_FORWARD      ? g->n * c->oc * g->oh * g->ow
                   : c->pass == EMBER_CONV_INPUT_GRAD ? g->n * g->c * g->h * g->w
                                                      : slices * weights;
    if (st != EMBER_OK || work == 0)
        return st;
    switch (c->pass) {
    case EMBER_CONV_FORWARD:
        return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_conv_grouped_forward, work, GPU_PTR(x), GPU_PTR(w), GPU_PTR(y),
                             CONV_GEOMETRY(g), GPU_INT(c->oc), GPU_INT(groups), GPU_FLOAT(c->beta));
    case EMBER_CONV_INPUT_GRAD:
        return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_conv_grouped_input_grad, work, GPU_PTR(x), GPU_PTR(w),
                             GPU_PTR(y), CONV_GEOMETRY(g), GPU_INT(c->oc), GPU_INT(groups));
    default:
        return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_conv_grouped_weight_grad, work, GPU_PTR(x), GPU_PTR(w),
                             GPU_PTR(y), CONV_GEOMETRY(g), GPU_INT(c->oc), GPU_INT(groups),
                             GPU_FLOAT(slices > 1 ? 0.0f : c->beta), GPU_INT(slices),
                             GPU_INT((g->n + slices - 1) / slices));
    }
}
