/* tests/reference.c — see reference.h. Each function is its definition. */
#include <math.h>
#include <string.h>

#include "reference.h"

void ref_fill(float *out, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        out[i] = value;
}

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

void ref_unary(enum ember_unary_op op, const struct ember_ewise *e, float *out, const float *a, float alpha)
{
    for (int64_t i = 0; i < e->numel; i++) {
        int64_t oo, oa, ob;
        ewise_offsets(e, i, &oo, &oa, &ob);
        float x = a[oa], y = 0;
        switch (op) {
        case EMBER_COPY: y = x; break;
        case EMBER_NEG: y = -x; break;
        case EMBER_RELU: y = isnan(x) ? x : x > 0 ? x : 0.0f; break;
        case EMBER_EXP: y = (float)exp(x); break;
        case EMBER_LOG: y = (float)log(x); break;
        case EMBER_SCALE: y = alpha * x; break;
        case EMBER_ADD_SCALAR: y = x + alpha; break;
        case EMBER_UNARY_COUNT: break;
        }
        out[oo] = y;
    }
}

void ref_binary(enum ember_binary_op op, const struct ember_ewise *e, float *out, const float *a, const float *b)
{
    for (int64_t i = 0; i < e->numel; i++) {
        int64_t oo, oa, ob;
        ewise_offsets(e, i, &oo, &oa, &ob);
        float x = a[oa], z = b[ob], y = 0;
        switch (op) {
        case EMBER_ADD: y = x + z; break;
        case EMBER_SUB: y = x - z; break;
        case EMBER_MUL: y = x * z; break;
        case EMBER_DIV: y = x / z; break;
        case EMBER_RELU_BACKWARD: y = z > 0 ? x : 0.0f; break;
        case EMBER_BINARY_COUNT: break;
        }
        out[oo] = y;
    }
}

void ref_reduce(enum ember_reduce_op op, const struct ember_reduce *r, float *out, const float *in)
{
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
}

void ref_sgemm(const struct ember_gemm *g, const float *a, const float *b, float *c)
{
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
}

void ref_im2col(const struct ember_conv_geom *g, const float *x, float *col)
{
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
}

void ref_col2im(const struct ember_conv_geom *g, const float *col, float *dx)
{
    int64_t ckk = g->c * g->kh * g->kw, hw = g->oh * g->ow;
    memset(dx, 0, (size_t)(g->n * g->c * g->h * g->w) * sizeof *dx);
    for (int64_t b = 0; b < g->n; b++)
        for (int64_t row = 0; row < ckk; row++) {
            int64_t ci = row / (g->kh * g->kw), ki = row / g->kw % g->kh, kj = row % g->kw;
            for (int64_t oy = 0; oy < g->oh; oy++)
                for (int64_t ox = 0; ox < g->ow; ox++) {
                    int64_t iy = oy * g->stride - g->pad + ki, ix = ox * g->stride - g->pad + kj;
                    if (iy >= 0 && iy < g->h && ix >= 0 && ix < g->w)
                        dx[((b * g->c + ci) * g->h + iy) * g->w + ix] += col[(b * ckk + row) * hw + oy * g->ow + ox];
                }
        }
}

void ref_maxpool_forward(const struct ember_pool_geom *g, const float *x, float *y, int32_t *argmax)
{
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t oy = 0; oy < g->oh; oy++)
            for (int64_t ox = 0; ox < g->ow; ox++) {
                const float *plane = x + p * g->h * g->w;
                int64_t best = -1;
                for (int64_t ky = 0; ky < g->k; ky++)
                    for (int64_t kx = 0; kx < g->k; kx++) {
                        int64_t at = (oy * g->stride + ky) * g->w + ox * g->stride + kx;
                        /* the first maximum; the first NaN beats everything */
                        if (best < 0 || (!isnan(plane[best]) && (plane[at] > plane[best] || isnan(plane[at]))))
                            best = at;
                    }
                y[(p * g->oh + oy) * g->ow + ox] = plane[best];
                argmax[(p * g->oh + oy) * g->ow + ox] = (int32_t)best;
            }
}

void ref_maxpool_backward(const struct ember_pool_geom *g, const float *dy, const int32_t *argmax, float *dx)
{
    memset(dx, 0, (size_t)(g->n * g->c * g->h * g->w) * sizeof *dx);
    for (int64_t p = 0; p < g->n * g->c; p++)
        for (int64_t o = 0; o < g->oh * g->ow; o++)
            dx[p * g->h * g->w + argmax[p * g->oh * g->ow + o]] += dy[p * g->oh * g->ow + o];
}

void ref_softmax_xent_forward(int64_t n, int64_t classes, const float *logits, const int32_t *target, float *prob,
                              float *loss)
{
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
}

void ref_softmax_xent_backward(int64_t n, int64_t classes, const float *prob, const int32_t *target,
                               const float *dloss, float scale, float *dlogits)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < classes; k++)
            dlogits[i * classes + k] =
                (float)(((double)prob[i * classes + k] - (k == target[i] ? 1.0 : 0.0)) * scale * dloss[0]);
}

void ref_adam_step(size_t n, const struct ember_adam_step *s, float *param, const float *grad, float *m, float *v)
{
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + s->weight_decay * (double)param[i];
        m[i] = (float)(s->beta1 * (double)m[i] + (1.0 - s->beta1) * g);
        v[i] = (float)(s->beta2 * (double)v[i] + (1.0 - s->beta2) * g * g);
        double denom = sqrt((double)v[i]) / sqrt((double)s->bias_correction2) + s->eps;
        param[i] = (float)(param[i] - s->lr / s->bias_correction1 * (double)m[i] / denom);
    }
}

void ref_sgd_step(size_t n, const struct ember_sgd_step *s, float *param, const float *grad, float *velocity)
{
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + s->weight_decay * (double)param[i];
        if (s->momentum != 0.0f) {
            velocity[i] = (float)(s->first ? g : s->momentum * (double)velocity[i] + (1.0 - s->dampening) * g);
            g = s->nesterov ? g + s->momentum * (double)velocity[i] : velocity[i];
        }
        param[i] = (float)(param[i] - s->lr * g);
    }
}
