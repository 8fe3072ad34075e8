/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-elementwise.c — fill, unary and binary: choosing the
 * kernel of elementwise.kc and its launch, for every GPU backend.
 *
 * A strided launch is first simplified: axes of size 1 go, and neighbours
 * that every operand walks as one contiguous run merge, so a transposed or
 * broadcast tensor of up to 6 axes mostly ends up with 2 or 3. The kernels
 * take 4; any axes beyond those are looped over here, one launch each.
 * A strided copy whose last axis is long (the bias that conv2d and linear
 * repeat over their output) goes row by row through copy_rows.
 */
#include <string.h>

#include "gpu.h"

#define KERNEL_AXES 4

/* shape, and strides of out, a and b, over up to EMBER_MAX_DIMS axes */
struct ewise_geometry {
    int ndim;
    int64_t shape[EMBER_MAX_DIMS];
    int64_t stride[3][EMBER_MAX_DIMS];
};

static void gpu_ewise_simplify(const struct ember_ewise *e, struct ewise_geometry *g)
{
    const int64_t *strides[3] = {e->stride_out, e->stride_a, e->stride_b};
    g->ndim = 0;
    for (int d = 0; d < e->ndim; d++) {
        if (e->shape[d] == 1)
            continue;
        int last = g->ndim - 1;
        bool merge = last >= 0;
        for (int op = 0; op < 3 && merge; op++)
            merge = g->stride[op][last] == strides[op][d] * e->shape[d];
        if (merge) {
            g->shape[last] *= e->shape[d];
            for (int op = 0; op < 3; op++)
                g->stride[op][last] = strides[op][d];
            continue;
        }
        g->shape[g->ndim] = e->shape[d];
        for (int op = 0; op < 3; op++)
            g->stride[op][g->ndim] = strides[op][d];
        g->ndim++;
    }
    if (g->ndim == 0) { /* a single element */
        g->ndim = 1;
        g->shape[0] = 1;
        g->stride[0][0] = g->stride[1][0] = g->stride[2][0] = 0;
    }
}

/* elements from an operand's offset to the last one it touches, plus one */
static int64_t gpu_ewise_extent(const struct ewise_geometry *g, int op)
{
    int64_t extent = 1;
    for (int d = 0; d < g->ndim; d++)
        extent += (g->shape[d] - 1) * g->stride[op][d];
    return extent;
}

struct ewise_job {
    bool binary;
    int op;
    float alpha;
    ember_ptr at[3]; /* out, a, b */
};

/* copy_rows suits a last axis at least this long (shorter ones would leave
 * most of each work-group idle) and at most this many launches along the
 * first axis; other copies go to copy_strided. */
#define ROWS_MIN_WIDTH    32
#define ROWS_MAX_LAUNCHES 16

/* A strided copy over 4 axes, row by row (copy_rows): groups along x cover
 * the last axis, along y and z the two before it, and the first is looped
 * here. False when the shape does not suit it. */
static bool gpu_copy_rows(struct ember_gpu *gpu, const int64_t *shape, int64_t (*s)[KERNEL_AXES],
                          ember_ptr out, ember_ptr a, ember_status *st)
{
    size_t local = ember_gpu_local_for(gpu, shape[3]);
    size_t groups[3] = {(size_t)((shape[3] + (int64_t)local - 1) / (int64_t)local), (size_t)shape[2],
                        (size_t)shape[1]};
    if (shape[3] < ROWS_MIN_WIDTH || shape[0] > ROWS_MAX_LAUNCHES || groups[0] > gpu->max_groups ||
        shape[2] > EMBER_GPU_GRID_YZ || shape[1] > EMBER_GPU_GRID_YZ)
        return false;
    *st = EMBER_OK;
    for (int64_t i0 = 0; i0 < shape[0] && *st == EMBER_OK; i0++) {
        ember_ptr o = {out.buf, out.off + (size_t)(i0 * s[0][0])},
                  x = {a.buf, a.off + (size_t)(i0 * s[1][0])};
        *st = GPU_LAUNCH(gpu, EMBER_KERNEL_copy_rows, groups, local, GPU_PTR(o), GPU_PTR(x),
                         GPU_INT(shape[3]), GPU_INT(s[0][1]), GPU_INT(s[0][2]), GPU_INT(s[0][3]),
                         GPU_INT(s[1][1]), GPU_INT(s[1][2]), GPU_INT(s[1][3]));
    }
    return true;
}

/* One strided launch over 4 axes: shape, and the strides s[operand][axis]. */
static ember_status gpu_ewise_launch4(struct ember_gpu *gpu, const struct ewise_job *j, const int64_t *shape,
                                      int64_t (*s)[KERNEL_AXES], ember_ptr out, ember_ptr a, ember_ptr b)
{
    int64_t n = shape[0] * shape[1] * shape[2] * shape[3];
    ember_status st;
    if (!j->binary && j->op == EMBER_COPY && gpu_copy_rows(gpu, shape, s, out, a, &st))
        return st;
#define AXES(op) GPU_INT(s[op][0]), GPU_INT(s[op][1]), GPU_INT(s[op][2]), GPU_INT(s[op][3])
    if (j->binary)
        return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_binary_strided, n, GPU_INT(j->op), GPU_PTR(out), GPU_PTR(a),
                             GPU_PTR(b), GPU_INT(n), GPU_FLOAT(j->alpha), GPU_INT(shape[1]),
                             GPU_INT(shape[2]), GPU_INT(shape[3]), AXES(0), AXES(1), AXES(2));
    if (j->op == EMBER_COPY)
        return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_copy_strided, n, GPU_PTR(out), GPU_PTR(a), GPU_INT(n),
                             GPU_INT(shape[1]), GPU_INT(shape[2]), GPU_INT(shape[3]), AXES(0), AXES(1));
    return GPU_LAUNCH_1D(gpu, EMBER_KERNEL_unary_strided, n, GPU_INT(j->op), GPU_PTR(out), GPU_PTR(a),
                         GPU_INT(n), GPU_FLOAT(j->alpha), GPU_INT(shape[1]), GPU_INT(shape[2]),
                         GPU_INT(shape[3]), AXES(0), AXES(1));
#undef AXES
}

/* The ops whose formulas call a math function run in kernels of their own
 * (elementwise.kc); ember_*_needs_math come from the same rows as the
 * kernels' cases (base/elementwise-impl.h), so the two cannot disagree. */
static ember_status gpu_ewise_dense(struct ember_gpu *gpu, const struct ewise_job *j, int64_t n)
{
    if (j->binary)
        return GPU_LAUNCH_EACH(
            gpu, ember_binary_needs_math[j->op] ? EMBER_KERNEL_binary_dense_math : EMBER_KERNEL_binary_dense,
            n, GPU_INT(j->op), GPU_PTR(j->at[0]), GPU_PTR(j->at[1]), GPU_PTR(j->at[2]), GPU_INT(n),
            GPU_FLOAT(j->alpha));
    if (j->op == EMBER_COPY)
        return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_copy_dense, n, GPU_PTR(j->at[0]), GPU_PTR(j->at[1]),
                               GPU_INT(n));
    return GPU_LAUNCH_EACH(
        gpu, ember_unary_needs_math[j->op] ? EMBER_KERNEL_unary_dense_math : EMBER_KERNEL_unary_dense, n,
        GPU_INT(j->op), GPU_PTR(j->at[0]), GPU_PTR(j->at[1]), GPU_INT(n), GPU_FLOAT(j->alpha));
}

static ember_status gpu_ewise_run(struct ember_gpu *gpu, const struct ewise_job *j,
                                  const struct ember_ewise *e)
{
    static const char *const names[3] = {"output", "first input", "second input"};
    if (e->numel == 0)
        return EMBER_OK;
    struct ewise_geometry g;
    gpu_ewise_simplify(e, &g);
    int operands = j->binary ? 3 : 2;
    for (int op = 0; op < operands; op++) {
        ember_status st =
            ember_gpu_check_extent(gpu, names[op], j->at[op], e->dense ? e->numel : gpu_ewise_extent(&g, op));
        if (st != EMBER_OK)
            return st;
    }
    bool dense = e->dense || (g.ndim == 1 && g.stride[0][0] == 1 && g.stride[1][0] == 1 &&
                              (!j->binary || g.stride[2][0] == 1));
    if (dense)
        return gpu_ewise_dense(gpu, j, e->numel);

    /* front-pad to 4 axes; the axes before the last 4 are looped here */
    int nd = g.ndim < KERNEL_AXES ? KERNEL_AXES : g.ndim, pad = nd - g.ndim, outer_axes = nd - KERNEL_AXES;
    int64_t shape[EMBER_MAX_DIMS], s[3][EMBER_MAX_DIMS];
    for (int axis = 0; axis < nd; axis++) {
        shape[axis] = axis < pad ? 1 : g.shape[axis - pad];
        for (int op = 0; op < 3; op++)
            s[op][axis] = axis < pad ? 0 : g.stride[op][axis - pad];
    }
    int64_t outer = 1, inner_s[3][KERNEL_AXES];
    for (int axis = 0; axis < outer_axes; axis++)
        outer *= shape[axis];
    for (int op = 0; op < 3; op++)
        memcpy(inner_s[op], &s[op][outer_axes], sizeof inner_s[op]);
    for (int64_t o = 0; o < outer; o++) {
        ember_ptr at[3] = {j->at[0], j->at[1], j->at[2]};
        for (int64_t axis = outer_axes - 1, rest = o; axis >= 0; axis--) {
            int64_t i = rest % shape[axis];
            rest /= shape[axis];
            for (int op = 0; op < 3; op++)
                at[op].off += (size_t)(i * s[op][axis]);
        }
        ember_status st = gpu_ewise_launch4(gpu, j, &shape[outer_axes], inner_s, at[0], at[1], at[2]);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

ember_status ember_gpu_unary(void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out,
                             ember_ptr a, float alpha)
{
    struct ewise_job j = {.op = op, .alpha = alpha, .at = {out, a, a}};
    return gpu_ewise_run(dev, &j, e);
}

ember_status ember_gpu_binary(void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out,
                              ember_ptr a, ember_ptr b, float alpha)
{
    struct ewise_job j = {.binary = true, .op = op, .alpha = alpha, .at = {out, a, b}};
    return gpu_ewise_run(dev, &j, e);
}

ember_status ember_gpu_fill(void *dev, ember_ptr out, size_t n, float value)
{
    struct ember_gpu *gpu = dev;
    if (n == 0)
        return EMBER_OK;
    ember_status st = ember_gpu_check_extent(gpu, "fill", out, (int64_t)n);
    if (st != EMBER_OK)
        return st;
    return GPU_LAUNCH_EACH(gpu, EMBER_KERNEL_fill, (int64_t)n, GPU_PTR(out), GPU_INT(n), GPU_FLOAT(value));
}
