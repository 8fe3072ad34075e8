/* SPDX-License-Identifier: MIT */
/* tests/ops/reference.c — see reference.h. Each function is its definition. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

ember_status ref_fill(void *dev, ember_ptr out_p, size_t n, float value)
{
    float *out = REF_F32(out_p);
    for (size_t i = 0; i < n; i++)
        out[i] = value;
    return EMBER_OK;
}

/* The vocabulary of the elementwise ops' formulas (base/elementwise-impl.h)
 * in double, from libm: each formula is then computed in double, rounded
 * once to float. */
#define EXPF(x)       exp(x)
#define LOGF(x)       log(x)
#define LOG1PF(x)     log1p(x)
#define SQRTF(x)      sqrt(x)
#define TANHF(x)      tanh(x)
#define NORMAL_CDF(x) (0.5 * erfc(-(x) / sqrt(2.0)))
#define NORMAL_PDF(x) (exp(-0.5 * (x) * (x)) / sqrt(2.0 * 3.14159265358979323846))

/* the element offsets of flat index i in each operand */
static void ewise_offsets(const struct ember_ewise *e, int64_t i, int64_t *oo, int64_t *oa, int64_t *ob)
{
    *oo = *oa = *ob = 0;
    for (int d = e->ndim - 1; d >= 0; d--) {
        int64_t idx = i % e->shape[d];
        i /= e->shape[d];
        *oo += idx * e->stride_out[d];
        *oa += idx * e->stride_a[d];
        *ob += idx * e->stride_b[d];
    }
}

/* each op's row, its formula in double */
/* clang-format off */
#define UNARY_CASE(NAME, name, f, ...)             case EMBER_##NAME: return (float)(f);
#define ACTIVATION_CASE(NAME, name, param, f, ...) case EMBER_##NAME: return (float)(f);
#define BINARY_CASE(NAME, name, f, math)           case EMBER_##NAME: return (float)(f);
#define BACKWARD_CASE(NAME, name, param, f, fmath, saves, g, ...)                                            \
    case EMBER_##NAME##_BACKWARD: {                                                                          \
        double dy = a, saves = b;                                                                            \
        return (float)(g);                                                                                   \
    }
/* clang-format on */

static float unary_value(enum ember_unary_op op, double x, double alpha)
{
    switch (op) {
        EMBER_UNARY_PRIMITIVES(UNARY_CASE)
        EMBER_ACTIVATIONS(ACTIVATION_CASE)
    case EMBER_UNARY_COUNT: break;
    }
    return NAN;
}

static float binary_value(enum ember_binary_op op, double a, double b, double alpha)
{
    switch (op) {
        EMBER_BINARY_PRIMITIVES(BINARY_CASE)
        EMBER_ACTIVATIONS(BACKWARD_CASE)
    case EMBER_BINARY_COUNT: break;
    }
    return NAN;
}
#undef UNARY_CASE
#undef ACTIVATION_CASE
#undef BINARY_CASE
#undef BACKWARD_CASE

ember_status ref_unary(void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out_p,
                       ember_ptr a_p, float alpha)
{
    float *out = REF_F32(out_p);
    const float *a = REF_F32(a_p);
    for (int64_t i = 0; i < e->numel; i++) {
        int64_t oo, oa, ob;
        ewise_offsets(e, i, &oo, &oa, &ob);
        out[oo] = unary_value(op, a[oa], alpha);
    }
    return EMBER_OK;
}

ember_status ref_binary(void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out_p,
                        ember_ptr a_p, ember_ptr b_p, float alpha)
{
    float *out = REF_F32(out_p);
    const float *a = REF_F32(a_p), *b = REF_F32(b_p);
    for (int64_t i = 0; i < e->numel; i++) {
        int64_t oo, oa, ob;
        ewise_offsets(e, i, &oo, &oa, &ob);
        out[oo] = binary_value(op, a[oa], b[ob], alpha);
    }
    return EMBER_OK;
}

ember_status ref_reduce(void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out_p,
                        ember_ptr in_p)
{
    float *out = REF_F32(out_p);
    const float *in = REF_F32(in_p);
    for (int64_t o = 0; o < r->outer; o++)
        for (int64_t i = 0; i < r->inner; i++) {
            double acc = op == EMBER_MAX ? -INFINITY : 0.0;
            for (int64_t k = 0; k < r->r; k++) {
                float x = in[(o * r->r + k) * r->inner + i];
                if (op == EMBER_SUM)
                    acc += x;
                else if (isnan(x) || x > acc)
                    acc = isnan(acc) ? acc : x;
            }
            float *y = &out[o * r->inner + i];
            *y = (float)(r->alpha * acc) + (r->beta != 0.0f ? r->beta * *y : 0.0f);
        }
    return EMBER_OK;
}

ember_status ref_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a_p, ember_ptr b_p, ember_ptr c_p)
{
    const float *a = REF_F32(a_p), *b = REF_F32(b_p);
    float *c = REF_F32(c_p);
    for (int64_t bi = 0; bi < g->batch; bi++) {
        const float *A = a + bi * g->stride_a, *B = b + bi * g->stride_b;
        float *C = c + bi * g->stride_c;
        for (int64_t i = 0; i < g->m; i++)
            for (int64_t j = 0; j < g->n; j++) {
                double acc = 0.0;
                for (int64_t p = 0; p < g->k; p++) {
                    float aip = g->trans_a ? A[p * g->lda + i] : A[i * g->lda + p];
                    float bpj = g->trans_b ? B[j * g->ldb + p] : B[p * g->ldb + j];
                    acc += (double)aip * bpj;
                }
                float *y = &C[i * g->ldc + j];
                *y = (float)(g->alpha * acc) + (g->beta != 0.0f ? g->beta * *y : 0.0f);
            }
    }
    return EMBER_OK;
}

ember_status ref_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x_p, ember_ptr col_p)
{
    const float *x = REF_F32(x_p);
    float *col = REF_F32(col_p);
    int64_t ckk = g->c * g->kh * g->kw, hw = g->oh * g->ow;
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t row = 0; row < ckk; row++) {
            int64_t ci = row / (g->kh * g->kw), ki = row / g->kw % g->kh, kj = row % g->kw;
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    int64_t iy = oy * g->stride - g->pad + ki, ix = ox * g->stride - g->pad + kj;
                    bool inside = iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
                    col[(b * ckk + row) * hw + oy * g->ow + ox] =
                        inside ? x[((b * g->c + ci) * g->h + iy) * g->w + ix] : 0.0f;
                }
        }
    return EMBER_OK;
}

ember_status ref_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col_p, ember_ptr dx_p)
{
    const float *col = REF_F32(col_p);
    float *dx = REF_F32(dx_p);
    int64_t ckk = g->c * g->kh * g->kw, hw = g->oh * g->ow;
    memset(dx, 0, (size_t)(g->n * g->c * g->h * g->w) * sizeof *dx);
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t row = 0; row < ckk; row++) {
            int64_t ci = row / (g->kh * g->kw), ki = row / g->kw % g->kh, kj = row % g->kw;
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    int64_t iy = oy * g->stride - g->pad + ki, ix = ox * g->stride - g->pad + kj;
                    if (iy >= 0 && iy < g->h && ix >= 0 && ix < g->w)
                        dx[((b * g->c + ci) * g->h + iy) * g->w + ix] +=
                            col[(b * ckk + row) * hw + oy * g->ow + ox];
                }
        }
    return EMBER_OK;
}

/* The direct convolution, summed in double, in the pass's direction:
 * y[b, o, oy, ox] = sum over (ci, ki, kj) of w[o, ci, ki, kj] x[b, ci0 + ci, oy * s - p + ki, ox * s - p +
 * kj] with ci over the c / groups channels of o's group, from ci0 = o / (oc / groups) * (c / groups)
 * (conv_direct's, conv_winograd's and conv_grouped's passes alike) */
ember_status ref_conv_direct(void *dev, const struct ember_conv_job *c, ember_ptr x_p, ember_ptr w_p,
                             ember_ptr y_p)
{
    const struct ember_conv_geom *g = &c->g;
    float *x = REF_F32(x_p), *w = REF_F32(w_p), *y = REF_F32(y_p);
    int64_t groups = c->groups > 1 ? c->groups : 1, cg = g->c / groups, ocg = c->oc / groups;
    int64_t nx = g->n * g->c * g->h * g->w, nw = c->oc * cg * g->kh * g->kw,
            ny = g->n * c->oc * g->oh * g->ow;
    /* a weight gradient in slices: slice s sums the images [s * per, (s + 1) * per) */
    bool sliced = c->pass == EMBER_CONV_WEIGHT_GRAD && c->slices > 1;
    int64_t slices = sliced ? c->slices : 1, per = (g->n + slices - 1) / slices;
    /* the sums in double, then the pass's output in float */
    double *sum = calloc((size_t)(c->pass == EMBER_CONV_FORWARD      ? ny
                                  : c->pass == EMBER_CONV_INPUT_GRAD ? nx
                                                                     : nw * slices) +
                             1,
                         sizeof *sum);
    if (!sum)
        return EMBER_ERR_NOMEM;
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t o = 0; o < c->oc; o++)
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    int64_t yi = ((b * c->oc + o) * g->oh + oy) * g->ow + ox;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ki = 0; ki < g->kh; ki++)
                            for (int64_t kj = 0; kj < g->kw; kj++) {
                                int64_t iy = oy * g->stride - g->pad + ki, ix = ox * g->stride - g->pad + kj;
                                if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
                                    continue;
                                int64_t xi = ((b * g->c + o / ocg * cg + ci) * g->h + iy) * g->w + ix;
                                int64_t wi = ((o * cg + ci) * g->kh + ki) * g->kw + kj;
                                if (c->pass == EMBER_CONV_FORWARD)
                                    sum[yi] += (double)w[wi] * x[xi];
                                else if (c->pass == EMBER_CONV_INPUT_GRAD)
                                    sum[xi] += (double)w[wi] * y[yi];
                                else
                                    sum[b / per * nw + wi] += (double)y[yi] * x[xi];
                            }
                }
    bool add = c->beta != 0.0f && !sliced;
    if (c->pass == EMBER_CONV_FORWARD)
        for (int64_t i = 0; i < ny; i++)
            y[i] = (float)(sum[i] + (add ? y[i] : 0.0));
    else if (c->pass == EMBER_CONV_INPUT_GRAD)
        for (int64_t i = 0; i < nx; i++)
            x[i] = (float)sum[i];
    else
        for (int64_t i = 0; i < nw * slices; i++)
            w[i] = (float)(sum[i] + (add ? w[i] : 0.0));
    free(sum);
    return EMBER_OK;
}

ember_status ref_conv_winograd(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                               ember_ptr y)
{
    return ref_conv_direct(dev, c, x, w, y);
}

ember_status ref_conv_grouped(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                              ember_ptr y)
{
    return ref_conv_direct(dev, c, x, w, y);
}

ember_status ref_max_pool2d_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x_p, ember_ptr y_p,
                                    ember_ptr argmax_p)
{
    const float *x = REF_F32(x_p);
    float *y = REF_F32(y_p);
    int32_t *argmax = REF_I32(argmax_p);
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                const float *plane = x + p * g->h * g->w;
                int64_t best = -1;
                for (int64_t ky = 0; ky < g->k; ky++)
                    for (int64_t kx = 0; kx < g->k; kx++) {
                        int64_t at = (oy * g->stride + ky) * g->w + ox * g->stride + kx;
                        /* the first maximum; the first NaN beats everything */
                        if (best < 0 ||
                            (!isnan(plane[best]) && (plane[at] > plane[best] || isnan(plane[at]))))
                            best = at;
                    }
                y[(p * g->oh + oy) * g->ow + ox] = plane[best];
                argmax[(p * g->oh + oy) * g->ow + ox] = (int32_t)best;
            }
    return EMBER_OK;
}

ember_status ref_max_pool2d_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy_p,
                                     ember_ptr argmax_p, ember_ptr dx_p)
{
    const float *dy = REF_F32(dy_p);
    const int32_t *argmax = REF_I32(argmax_p);
    float *dx = REF_F32(dx_p);
    memset(dx, 0, (size_t)(g->n * g->c * g->h * g->w) * sizeof *dx);
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t o = 0; o < g->oh * g->ow; o++)
            dx[p * g->h * g->w + argmax[p * g->oh * g->ow + o]] += dy[p * g->oh * g->ow + o];
    return EMBER_OK;
}

ember_status ref_avg_pool2d_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x_p, ember_ptr y_p)
{
    const float *x = REF_F32(x_p);
    float *y = REF_F32(y_p);
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                double sum = 0.0;
                for (int64_t ky = 0; ky < g->k; ky++)
                    for (int64_t kx = 0; kx < g->k; kx++)
                        sum += x[(p * g->h + oy * g->stride + ky) * g->w + ox * g->stride + kx];
                y[(p * g->oh + oy) * g->ow + ox] = (float)(sum / (double)(g->k * g->k));
            }
    return EMBER_OK;
}

ember_status ref_avg_pool2d_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy_p,
                                     ember_ptr dx_p)
{
    const float *dy = REF_F32(dy_p);
    float *dx = REF_F32(dx_p);
    memset(dx, 0, (size_t)(g->n * g->c * g->h * g->w) * sizeof *dx);
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++)
                for (int64_t ky = 0; ky < g->k; ky++)
                    for (int64_t kx = 0; kx < g->k; kx++)
                        dx[(p * g->h + oy * g->stride + ky) * g->w + ox * g->stride + kx] +=
                            (float)(dy[(p * g->oh + oy) * g->ow + ox] / (double)(g->k * g->k));
    return EMBER_OK;
}

ember_status ref_dropout_mask(void *dev, ember_ptr mask_p, size_t n, float p, uint64_t seed)
{
    float *mask = REF_F32(mask_p);
    for (size_t i = 0; i < n; i++) /* keep with probability 1 - p, by the hash every backend shares */
        mask[i] =
            ember_dropout_hash(seed, (uint32_t)i) >= ember_dropout_threshold(p) ? 1.0f / (1.0f - p) : 0.0f;
    return EMBER_OK;
}

ember_status ref_cross_entropy_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits_p,
                                       ember_ptr target_p, ember_ptr prob_p, ember_ptr loss_p)
{
    const float *logits = REF_F32(logits_p);
    const int32_t *target = REF_I32(target_p);
    float *prob = REF_F32(prob_p), *loss = REF_F32(loss_p);
    for (int64_t i = 0; i < n; i++) {
        const float *x = logits + i * classes;
        double m = -INFINITY, sum = 0.0;
        for (int64_t k = 0; k < classes; k++)
            if (isnan(x[k]) || x[k] > m)
                m = isnan(m) ? m : x[k];
        for (int64_t k = 0; k < classes; k++)
            sum += exp(x[k] - m);
        for (int64_t k = 0; k < classes; k++)
            prob[i * classes + k] = (float)(exp(x[k] - m) / sum);
        int32_t t = target[i];
        loss[i] = t >= 0 && t < classes ? (float)(m + log(sum) - x[t]) : NAN;
    }
    return EMBER_OK;
}

ember_status ref_cross_entropy_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob_p,
                                        ember_ptr target_p, ember_ptr dloss_p, float scale,
                                        ember_ptr dlogits_p)
{
    const float *prob = REF_F32(prob_p), *dloss = REF_F32(dloss_p);
    const int32_t *target = REF_I32(target_p);
    float *dlogits = REF_F32(dlogits_p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < classes; k++)
            dlogits[i * classes + k] =
                (float)(((double)prob[i * classes + k] - (k == target[i] ? 1.0 : 0.0)) * scale * dloss[0]);
    return EMBER_OK;
}

ember_status ref_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param_p,
                           ember_ptr grad_p, ember_ptr m_p, ember_ptr v_p)
{
    float *param = REF_F32(param_p), *m = REF_F32(m_p), *v = REF_F32(v_p);
    const float *grad = REF_F32(grad_p);
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + (s->decoupled ? 0.0 : s->weight_decay * (double)param[i]);
        if (s->decoupled) /* AdamW: the parameter shrinks first */
            param[i] = (float)((double)param[i] * (1.0 - (double)s->lr * s->weight_decay));
        m[i] = (float)(s->beta1 * (double)m[i] + (1.0 - s->beta1) * g);
        v[i] = (float)(s->beta2 * (double)v[i] + (1.0 - s->beta2) * g * g);
        double denom = sqrt((double)v[i]) / sqrt((double)s->bias_correction2) + s->eps;
        param[i] = (float)(param[i] - s->lr / s->bias_correction1 * (double)m[i] / denom);
    }
    return EMBER_OK;
}

ember_status ref_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param_p,
                          ember_ptr grad_p, ember_ptr velocity_p)
{
    float *param = REF_F32(param_p), *velocity = REF_F32(velocity_p);
    const float *grad = REF_F32(grad_p);
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + s->weight_decay * (double)param[i];
        if (s->momentum != 0.0f) {
            velocity[i] =
                (float)(s->first ? g : s->momentum * (double)velocity[i] + (1.0 - s->dampening) * g);
            g = s->nesterov ? g + s->momentum * (double)velocity[i] : velocity[i];
        }
        param[i] = (float)(param[i] - s->lr * g);
    }
    return EMBER_OK;
}

ember_status ref_softmax_forward(void *dev, int64_t rows, int64_t cols, int64_t causal_rows, ember_ptr x_p,
                                 ember_ptr y_p)
{
    const float *x = REF_F32(x_p);
    float *y = REF_F32(y_p);
    for (int64_t r = 0; r < rows; r++) {
        /* the keys this row's query sees: all, or those up to its position */
        int64_t seen = cols;
        if (causal_rows > 0) {
            seen = r % causal_rows + cols - causal_rows + 1;
            seen = seen < 0 ? 0 : seen > cols ? cols : seen;
        }
        const float *xr = x + r * cols;
        double m = -INFINITY, sum = 0.0;
        for (int64_t k = 0; k < seen; k++)
            if (isnan(xr[k]) || xr[k] > m)
                m = isnan(m) ? m : xr[k];
        for (int64_t k = 0; k < seen; k++)
            sum += exp(xr[k] - m);
        for (int64_t k = 0; k < cols; k++)
            y[r * cols + k] = k < seen ? (float)(exp(xr[k] - m) / sum) : 0.0f;
    }
    return EMBER_OK;
}

ember_status ref_softmax_backward(void *dev, int64_t rows, int64_t cols, ember_ptr y_p, ember_ptr dy_p,
                                  ember_ptr dx_p)
{
    const float *y = REF_F32(y_p), *dy = REF_F32(dy_p);
    float *dx = REF_F32(dx_p);
    for (int64_t r = 0; r < rows; r++) {
        double dot = 0.0;
        for (int64_t k = 0; k < cols; k++)
            dot += (double)dy[r * cols + k] * y[r * cols + k];
        for (int64_t k = 0; k < cols; k++)
            dx[r * cols + k] = (float)(y[r * cols + k] * (dy[r * cols + k] - dot));
    }
    return EMBER_OK;
}

ember_status ref_layer_norm_forward(void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x_p,
                                    ember_ptr weight_p, ember_ptr bias_p, ember_ptr y_p, ember_ptr xhat_p,
                                    ember_ptr rstd_p)
{
    const float *x = REF_F32(x_p), *weight = REF_F32(weight_p), *bias = REF_F32(bias_p);
    float *y = REF_F32(y_p), *xhat = REF_F32(xhat_p), *rstd = REF_F32(rstd_p);
    for (int64_t r = 0; r < rows; r++) {
        double mean = 0.0, var = 0.0;
        for (int64_t k = 0; k < cols; k++)
            mean += x[r * cols + k];
        mean /= (double)cols;
        for (int64_t k = 0; k < cols; k++)
            var += (x[r * cols + k] - mean) * (x[r * cols + k] - mean);
        double inv = 1.0 / sqrt(var / (double)cols + eps);
        for (int64_t k = 0; k < cols; k++) {
            double h = (x[r * cols + k] - mean) * inv;
            xhat[r * cols + k] = (float)h;
            y[r * cols + k] = (float)(h * weight[k] + bias[k]);
        }
        rstd[r] = (float)inv;
    }
    return EMBER_OK;
}

ember_status ref_rms_norm_forward(void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x_p,
                                  ember_ptr weight_p, int weighted, ember_ptr y_p, ember_ptr rrms_p)
{
    const float *x = REF_F32(x_p), *weight = REF_F32(weight_p);
    float *y = REF_F32(y_p), *rrms = REF_F32(rrms_p);
    for (int64_t r = 0; r < rows; r++) {
        double squares = 0.0;
        for (int64_t k = 0; k < cols; k++)
            squares += (double)x[r * cols + k] * x[r * cols + k];
        double inv = 1.0 / sqrt(squares / (double)cols + eps);
        for (int64_t k = 0; k < cols; k++)
            y[r * cols + k] = (float)(x[r * cols + k] * inv * (weighted ? weight[k] : 1.0));
        rrms[r] = (float)inv;
    }
    return EMBER_OK;
}

ember_status ref_layer_norm_backward(void *dev, int64_t rows, int64_t cols, ember_ptr dy_p, ember_ptr xhat_p,
                                     ember_ptr weight_p, ember_ptr rstd_p, ember_ptr dx_p)
{
    const float *dy = REF_F32(dy_p), *xhat = REF_F32(xhat_p), *weight = REF_F32(weight_p),
                *rstd = REF_F32(rstd_p);
    float *dx = REF_F32(dx_p);
    for (int64_t r = 0; r < rows; r++) {
        double g_mean = 0.0, gx_mean = 0.0;
        for (int64_t k = 0; k < cols; k++) {
            double g = (double)dy[r * cols + k] * weight[k];
            g_mean += g;
            gx_mean += g * xhat[r * cols + k];
        }
        g_mean /= (double)cols;
        gx_mean /= (double)cols;
        for (int64_t k = 0; k < cols; k++)
            dx[r * cols + k] = (float)(rstd[r] * ((double)dy[r * cols + k] * weight[k] - g_mean -
                                                  xhat[r * cols + k] * gx_mean));
    }
    return EMBER_OK;
}

/* batch norm, a channel at a time in double over its n * s values, without
 * the planes the backends sum by (work is left alone) */
ember_status ref_batch_norm_stats(void *dev, const struct ember_batch_norm *b, ember_ptr x_p,
                                  ember_ptr work_p, ember_ptr mean_p, ember_ptr invstd_p,
                                  ember_ptr running_mean_p, ember_ptr running_var_p)
{
    const float *x = REF_F32(x_p);
    float *mean = REF_F32(mean_p), *invstd = REF_F32(invstd_p), *rm = REF_F32(running_mean_p),
          *rv = REF_F32(running_var_p);
    double m = (double)(b->n * b->s);
    for (int64_t ch = 0; ch < b->c; ch++) {
        double sum = 0.0, squares = 0.0;
        for (int64_t i = 0; i < b->n; i++)
            for (int64_t k = 0; k < b->s; k++)
                sum += x[(i * b->c + ch) * b->s + k];
        double mu = sum / m;
        for (int64_t i = 0; i < b->n; i++)
            for (int64_t k = 0; k < b->s; k++)
                squares += (x[(i * b->c + ch) * b->s + k] - mu) * (x[(i * b->c + ch) * b->s + k] - mu);
        double var = squares / m;
        mean[ch] = (float)mu;
        invstd[ch] = (float)(1.0 / sqrt(var + b->eps));
        rm[ch] = (float)((1.0 - b->momentum) * rm[ch] + b->momentum * mu);
        rv[ch] = (float)((1.0 - b->momentum) * rv[ch] + b->momentum * var * m / (m - 1.0));
    }
    return EMBER_OK;
}

ember_status ref_batch_norm_forward(void *dev, const struct ember_batch_norm *b, ember_ptr x_p,
                                    ember_ptr mean_p, ember_ptr invstd_p, ember_ptr weight_p,
                                    ember_ptr bias_p, ember_ptr xhat_p, ember_ptr y_p)
{
    const float *x = REF_F32(x_p), *mean = REF_F32(mean_p), *invstd = REF_F32(invstd_p),
                *weight = REF_F32(weight_p), *bias = REF_F32(bias_p);
    float *xhat = REF_F32(xhat_p), *y = REF_F32(y_p);
    for (int64_t i = 0; i < b->n * b->c * b->s; i++) {
        int64_t ch = i / b->s % b->c;
        double h = ((double)x[i] - mean[ch]) * invstd[ch];
        double out = h * weight[ch] + bias[ch];
        xhat[i] = (float)h;
        y[i] = (float)(b->relu && out < 0.0 ? 0.0 : out);
    }
    return EMBER_OK;
}

/* dy, or with the fused ReLU dy where y was positive */
static double ref_batch_norm_grad(const struct ember_batch_norm *b, double dy, double xhat, double weight,
                                  double bias)
{
    return !b->relu || xhat * weight + bias > 0.0 ? dy : 0.0;
}

ember_status ref_batch_norm_backward(void *dev, const struct ember_batch_norm *b, ember_ptr dy_p,
                                     ember_ptr xhat_p, ember_ptr weight_p, ember_ptr bias_p,
                                     ember_ptr invstd_p, ember_ptr work_p, ember_ptr dweight_p,
                                     ember_ptr dbias_p, ember_ptr dx_p)
{
    const float *dy = REF_F32(dy_p), *xhat = REF_F32(xhat_p), *weight = REF_F32(weight_p),
                *bias = REF_F32(bias_p), *invstd = REF_F32(invstd_p);
    float *dweight = REF_F32(dweight_p), *dbias = REF_F32(dbias_p), *dx = REF_F32(dx_p);
    int64_t total = b->n * b->c * b->s;
    double m = (double)(b->n * b->s);
    for (int64_t ch = 0; ch < b->c; ch++) {
        double sum = 0.0, dot = 0.0;
        for (int64_t i = 0; i < total; i++)
            if (i / b->s % b->c == ch) {
                double g = ref_batch_norm_grad(b, dy[i], xhat[i], weight[ch], bias[ch]);
                sum += g, dot += g * xhat[i];
            }
        dbias[ch] = (float)sum;
        dweight[ch] = (float)dot;
        for (int64_t i = 0; i < total; i++)
            if (i / b->s % b->c == ch) {
                double g = ref_batch_norm_grad(b, dy[i], xhat[i], weight[ch], bias[ch]);
                dx[i] = (float)((double)weight[ch] * invstd[ch] *
                                (b->training ? g - sum / m - xhat[i] * dot / m : g));
            }
    }
    return EMBER_OK;
}

ember_status ref_embedding_forward(void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index_p,
                                   ember_ptr weight_p, ember_ptr out_p)
{
    const int32_t *index = REF_I32(index_p);
    const float *weight = REF_F32(weight_p);
    float *out = REF_F32(out_p);
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < dim; c++)
            out[i * dim + c] = index[i] >= 0 && index[i] < vocab ? weight[index[i] * dim + c] : NAN;
    return EMBER_OK;
}

ember_status ref_embedding_backward(void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index_p,
                                    ember_ptr dy_p, ember_ptr dweight_p)
{
    const int32_t *index = REF_I32(index_p);
    const float *dy = REF_F32(dy_p);
    float *dweight = REF_F32(dweight_p);
    for (int64_t v = 0; v < vocab; v++)
        for (int64_t c = 0; c < dim; c++) {
            double sum = dweight[v * dim + c];
            for (int64_t i = 0; i < n; i++)
                sum += index[i] == v ? dy[i * dim + c] : 0.0;
            dweight[v * dim + c] = (float)sum;
        }
    return EMBER_OK;
}

ember_status ref_quant_matmul(void *dev, const struct ember_quant_gemm *q, ember_ptr x_p, ember_ptr w_p,
                              ember_ptr y_p)
{
    const float *x = REF_F32(x_p);
    const uint8_t *w = (const uint8_t *)REF_F32(w_p);
    float *y = REF_F32(y_p);
    int64_t elements = 1, bytes = 1;
    ember_quant_block(q->type, &elements, &bytes);
    int64_t row_bytes = q->k / elements * bytes;
    for (int64_t i = 0; i < q->m; i++)
        for (int64_t r = 0; r < q->n; r++) {
            double sum = q->beta != 0.0f ? y[i * q->n + r] : 0.0;
            for (int64_t c = 0; c < q->k; c++)
                sum += (double)x[i * q->k + c] * ember_quant_weight(q->type,
                                                                    w + r * row_bytes + c / elements * bytes,
                                                                    (int)(c % elements));
            y[i * q->n + r] = (float)sum;
        }
    return EMBER_OK;
}

ember_status ref_dequantize(void *dev, ember_dtype type, int64_t rows, int64_t cols, int64_t vocab,
                            ember_ptr index_p, ember_ptr w_p, ember_ptr out_p)
{
    const int32_t *index = index_p.buf ? REF_I32(index_p) : NULL;
    const uint8_t *w = (const uint8_t *)REF_F32(w_p);
    float *out = REF_F32(out_p);
    int64_t elements = 1, bytes = 1;
    ember_quant_block(type, &elements, &bytes);
    int64_t row_bytes = cols / elements * bytes;
    for (int64_t i = 0; i < rows; i++) {
        int64_t v = index ? index[i] : i;
        for (int64_t c = 0; c < cols; c++)
            out[i * cols + c] =
                v >= 0 && v < vocab
                    ? ember_quant_weight(type, w + v * row_bytes + c / elements * bytes, (int)(c % elements))
                    : NAN;
    }
    return EMBER_OK;
}

ember_status ref_rope(void *dev, const struct ember_rope *r, ember_ptr x_p, ember_ptr table_p, ember_ptr y_p)
{
    const float *x = REF_F32(x_p), *table = REF_F32(table_p);
    float *y = REF_F32(y_p);
    int64_t half = r->rot / 2;
    for (int64_t row = 0; row < r->batch * r->seq * r->heads; row++) {
        int64_t t = row / r->heads % r->seq;
        const float *xr = x + row * r->dim, *angle = table + (r->position + t) * half * 2;
        float *yr = y + row * r->dim;
        for (int64_t i = r->rot; i < r->dim; i++)
            yr[i] = xr[i];
        for (int64_t j = 0; j < half; j++) {
            int64_t a = r->neox ? j : 2 * j, b = r->neox ? j + half : 2 * j + 1;
            double c = angle[2 * j], s = r->inverse ? -angle[2 * j + 1] : angle[2 * j + 1], xa = xr[a],
                   xb = xr[b];
            yr[a] = (float)(xa * c - xb * s);
            yr[b] = (float)(xa * s + xb * c);
        }
    }
    return EMBER_OK;
}
