/* SPDX-License-Identifier: MIT */
/*
 * core/ops-resize.c — ember_upsample2d, PyTorch's nn.Upsample at an integer
 * scale: nearest, or bilinear with align_corners=False.
 *
 * Resizing a plane is linear along each axis on its own: every output row
 * is a weighted sum of at most two input rows, and likewise for columns.
 * So y = A_h x A_w^T, A_h (s H, H) and A_w (s W, W) holding each output
 * position's weights (a one for nearest; 1 - f and f for bilinear), and
 * the op is two ember_linear products with constant weights and a
 * transpose: its gradient is the same products transposed, which the tape
 * records, and every backend runs it on the products it already has. The
 * matrices are small (s H x H), and a feature map upsampled in a network
 * for a small device is a few dozen positions a side.
 */
#include <math.h>
#include <stdlib.h>

#include "ops-impl.h"

/* A (out, in) resizing `in` positions to out = scale * in, as PyTorch's:
 * nearest takes floor(o / scale); bilinear reads source position
 * (o + 0.5) / scale - 0.5, clamped at 0, between its two neighbours */
static struct ember_tensor *resize_matrix(ember_ctx *ctx, int64_t in, int scale, bool bilinear)
{
    int64_t out = in * scale, shape[2] = {out, in};
    float *a = calloc((size_t)(out * in), sizeof *a);
    struct ember_tensor *t = a ? ember_op_out(ctx, 2, shape) : NULL;
    if (!a) {
        ember_fail(ctx, EMBER_ERR_NOMEM, "ember_upsample2d: out of host memory");
        return NULL;
    }
    for (int64_t o = 0; t && o < out; o++) {
        if (!bilinear) {
            a[o * in + o / scale] = 1.0f;
            continue;
        }
        double src = ((double)o + 0.5) / scale - 0.5;
        src = src < 0.0 ? 0.0 : src;
        int64_t i0 = (int64_t)src, i1 = i0 + 1 < in ? i0 + 1 : in - 1;
        float f = (float)(src - (double)i0);
        a[o * in + i0] += 1.0f - f;
        a[o * in + i1] += f;
    }
    if (t && ember_tensor_write(t, a, (size_t)(out * in) * sizeof *a) != EMBER_OK)
        t = NULL;
    free(a);
    return t;
}

ember_tensor *ember_upsample2d(ember_tensor *x, int scale, bool bilinear)
{
    ember_ctx *ctx = ember_op_begin("ember_upsample2d", x, NULL, NULL);
    if (!ctx)
        return NULL;
    char sx[96];
    if (x->ndim != 4 || scale < 1 || scale > 64) {
        ember_fail(ctx, EMBER_ERR_ARG,
                   "ember_upsample2d takes x (N, C, H, W) and a scale of 1 to 64; got x %s, %d",
                   ember_shape_str(x, sx, sizeof sx), scale);
        return NULL;
    }
    if (scale == 1)
        return x;
    struct ember_tensor *aw = resize_matrix(ctx, x->shape[3], scale, bilinear);
    struct ember_tensor *ah = aw ? resize_matrix(ctx, x->shape[2], scale, bilinear) : NULL;
    if (!ah)
        return NULL;
    ember_tensor *wide = ember_linear(x, aw, NULL);                           /* (N, C, H, sW) */
    ember_tensor *tall = ember_linear(ember_transpose(wide, 2, 3), ah, NULL); /* (N, C, sW, sH) */
    return ember_contiguous(ember_transpose(tall, 2, 3));
}
