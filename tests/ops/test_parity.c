/* SPDX-License-Identifier: MIT */
/*
 * tests/ops/test_parity.c — every primitive on every backend against the
 * reference (tests/ops/reference.c), one table row per case.
 *
 *   test_parity [-o PRIMITIVE] [-b BACKEND] [--perf] [--perf-square N]
 *
 * Each row runs one primitive on random inputs (odd sizes that no tile
 * divides, NaN and Inf sprinkled in where the op defines them) and compares
 * the output with the reference:
 *   - normalised mean squared error, sum (got - want)^2 / sum want^2, at
 *     most 1e-7 for elementwise ops, reductions, pooling and the fused ops,
 *     5e-4 for sgemm and the convolution helpers, and 1e-11 for conv_winograd
 *     in 2x2 tiles, 1.5e-10 in 4x4 (their measured errors, with room:
 *     TOL_WINOGRAD, TOL_WINOGRAD4);
 *   - NaN and Inf in exactly the same places; integer outputs exact;
 *   - guard bytes: every output buffer has 64 elements of a sentinel on
 *     each side, which must come back untouched.
 * A backend without a device here is skipped; -b naming one is a skip
 * (exit 77); any failure exits 1. --perf adds a timing table of the main
 * primitives at training sizes (GFLOP/s or GB/s), and of a square sgemm of
 * 512, or N with --perf-square (2048 fills a big GPU).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctx-impl.h"
#include "reference.h"
#include "test-util.h"

#define GUARD        64
#define SENTINEL     0x7FA5A5A5u /* a NaN no primitive produces */
#define TOL_EXACTISH 1e-7
#define TOL_GEMM     5e-4
/* Winograd's transforms add rounding of their own to the products': the
 * conv_winograd rows measured 1e-14 to 6e-14 forward and for the input
 * gradient, and 4.1e-13 for the weight gradient summed over 70 images of
 * 16x16 (the longest sums, 4480 terms) with OpenBLAS, 3.2e-12 with the
 * built-in sgemm of a build without it, which sums them in plain order;
 * three times that still catches a wrong transform, which is off by order 1 */
#define TOL_WINOGRAD 1e-11
/* F(4x4, 3x3)'s constants (up to 8, and 1/6, 1/24, not exact in float)
 * round more: its rows measured 3e-13 to 1.2e-12, and 6.3e-12 for the
 * weight gradient over 70 images with OpenBLAS, 5.2e-11 with the built-in
 * sgemm; three times that */
#define TOL_WINOGRAD4    1.5e-10
#define WINO_FORWARD     EMBER_CONV_FORWARD
#define WINO_INPUT_GRAD  EMBER_CONV_INPUT_GRAD
#define WINO_WEIGHT_GRAD EMBER_CONV_WEIGHT_GRAD

struct harness {
    ember_ctx *ctx;
    const struct ember_backend_ops *ops;
    void *dev;
    ember_rng rng;
    bool skipped; /* the row just run found its primitive unsupported here */
};

/* ------------------------------------------------------- device buffers */

struct dbuf {
    void *buf;
    size_t n; /* usable elements, between the guards */
};

static ember_ptr at(struct dbuf b) { return (ember_ptr){.buf = b.buf, .off = GUARD}; }

/* n elements (from `init`, or the sentinel) between two guard bands */
static bool dbuf_new(struct harness *h, size_t n, const void *init, struct dbuf *out)
{
    size_t total = n + 2 * GUARD;
    uint32_t *host = malloc(total * 4);
    out->n = n;
    out->buf = NULL;
    if (!host || h->ops->alloc(h->dev, total * 4, &out->buf) != EMBER_OK) {
        free(host);
        return false;
    }
    for (size_t i = 0; i < total; i++)
        host[i] = SENTINEL;
    if (init)
        memcpy(host + GUARD, init, n * 4);
    bool ok = h->ops->write(h->dev, (ember_ptr){.buf = out->buf}, host, total * 4) == EMBER_OK;
    free(host);
    return ok;
}

static void dbuf_free(struct harness *h, struct dbuf *b)
{
    if (b->buf)
        h->ops->release(h->dev, b->buf);
    b->buf = NULL;
}

/* reads the n elements back; false (and a failed check) if a guard changed */
static bool dbuf_fetch(struct harness *h, struct dbuf b, void *host, const char *what)
{
    size_t total = b.n + 2 * GUARD;
    uint32_t *all = malloc(total * 4);
    bool ok = all && h->ops->read(h->dev, all, (ember_ptr){.buf = b.buf}, total * 4) == EMBER_OK;
    CHECK(ok, "%s: reading the output back failed: %s", what, ember_last_error(h->ctx));
    for (size_t i = 0; ok && i < GUARD; i++) {
        bool before = all[i] == SENTINEL, after = all[GUARD + b.n + i] == SENTINEL;
        CHECK(before && after, "%s: guard bytes overwritten %s the output (element %zu of the guard)", what,
              before ? "after" : "before", i);
        ok = before && after;
    }
    if (ok)
        memcpy(host, all + GUARD, b.n * 4);
    free(all);
    return ok;
}

/* ---------------------------------------------------------- comparison */

static bool compare_f32(const char *what, const float *got, const float *want, size_t n, double tol)
{
    double err = 0.0, norm = 0.0;
    for (size_t i = 0; i < n; i++) {
        bool gn = isnan(got[i]), wn = isnan(want[i]), gi = isinf(got[i]), wi = isinf(want[i]);
        if (gn != wn || gi != wi || (gi && got[i] != want[i])) {
            CHECK(false, "%s: element %zu is %g, the reference %g (NaN and Inf must match)", what, i, got[i],
                  want[i]);
            return false;
        }
        if (gn || gi)
            continue;
        double d = (double)got[i] - want[i];
        err += d * d;
        norm += (double)want[i] * want[i];
    }
    double nmse = norm > 0 ? err / norm : err;
    CHECK(nmse <= tol, "%s: normalised mean squared error %.3e above %.0e", what, nmse, tol);
    return nmse <= tol;
}

static bool compare_i32(const char *what, const int32_t *got, const int32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            CHECK(false, "%s: element %zu is %d, the reference %d", what, i, got[i], want[i]);
            return false;
        }
    return true;
}

/* the same bits, element for element (a dropout mask) */
static bool compare_exact(const char *what, const float *got, const float *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof got[i]) != 0) {
            CHECK(false, "%s: element %zu is %g, the reference %g", what, i, got[i], want[i]);
            return false;
        }
    return true;
}

/* ------------------------------------------------------------- inputs */

static float *random_floats(struct harness *h, size_t n, float lo, float hi, bool specials)
{
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = ember_rng_uniform(&h->rng, lo, hi);
    if (specials && n > 16) { /* a few values every op must treat the same way */
        v[3] = NAN;
        v[7] = INFINITY;
        v[11] = -INFINITY;
        v[13] = 0.0f;
        v[15] = -0.0f;
    }
    return v;
}

/* ---------------------------------------------------------------- rows */

/* A row's numbers, meaning per runner (see each run_*). */
typedef int64_t dims[13];

struct row {
    const char *prim;  /* the backend entry it tests: -o filters on this */
    const char *label; /* what is special about the case */
    bool (*run)(struct harness *h, const struct row *r, const char *what);
    dims d;
};

static bool run_fill(struct harness *h, const struct row *r, const char *what)
{
    size_t n = (size_t)r->d[0];
    struct dbuf out;
    float *got = malloc(n * 4), *want = malloc(n * 4);
    bool ok = dbuf_new(h, n, NULL, &out) && h->ops->fill(h->dev, at(out), n, -1.25f) == EMBER_OK &&
              dbuf_fetch(h, out, got, what);
    ref_fill(NULL, REF_PTR(want), n, -1.25f);
    ok = ok && compare_f32(what, got, want, n, 0.0);
    dbuf_free(h, &out);
    free(got);
    free(want);
    return ok;
}

/* Layouts of an elementwise launch: d[1] picks one, d[2], d[3], d[4] size it. */
enum layout {
    /* clang-format off */
    DENSE, A_TRANSPOSED, B_ROW_BROADCAST, B_COL_BROADCAST, PERMUTED_3D, OUT_STRIDED, REVERSED_6D, BIAS_3D,
    /* clang-format on */
    TILED_4D
};

static void make_layout(enum layout kind, const int64_t *d, struct ember_ewise *e, size_t *na, size_t *nb,
                        size_t *nout)
{
    int64_t r = d[2], c = d[3], s = d[4];
    memset(e, 0, sizeof *e);
    switch (kind) {
    case DENSE:
        *e = (struct ember_ewise){.ndim = 1,
                                  .dense = true,
                                  .numel = r,
                                  .shape = {r},
                                  .stride_out = {1},
                                  .stride_a = {1},
                                  .stride_b = {1}};
        *na = *nb = *nout = (size_t)r;
        return;
    case A_TRANSPOSED: /* a is stored (c, r) and read as (r, c) */
        *e = (struct ember_ewise){.ndim = 2,
                                  .numel = r * c,
                                  .shape = {r, c},
                                  .stride_out = {c, 1},
                                  .stride_a = {1, r},
                                  .stride_b = {c, 1}};
        *na = *nb = *nout = (size_t)(r * c);
        return;
    case B_ROW_BROADCAST: /* b is one row of c, repeated */
        *e = (struct ember_ewise){.ndim = 2,
                                  .numel = r * c,
                                  .shape = {r, c},
                                  .stride_out = {c, 1},
                                  .stride_a = {c, 1},
                                  .stride_b = {0, 1}};
        *na = *nout = (size_t)(r * c);
        *nb = (size_t)c;
        return;
    case B_COL_BROADCAST: /* b is one column of r, repeated */
        *e = (struct ember_ewise){.ndim = 2,
                                  .numel = r * c,
                                  .shape = {r, c},
                                  .stride_out = {c, 1},
                                  .stride_a = {c, 1},
                                  .stride_b = {1, 0}};
        *na = *nout = (size_t)(r * c);
        *nb = (size_t)r;
        return;
    case PERMUTED_3D: /* a stored (s, c, r) read as (r, c, s); b (c) broadcast along r and s */
        *e = (struct ember_ewise){.ndim = 3,
                                  .numel = r * c * s,
                                  .shape = {r, c, s},
                                  .stride_out = {c * s, s, 1},
                                  .stride_a = {1, r, r * c},
                                  .stride_b = {0, 1, 0}};
        *na = *nout = (size_t)(r * c * s);
        *nb = (size_t)c;
        return;
    case OUT_STRIDED: /* the output is every other element of a buffer twice as long */
        *e = (struct ember_ewise){
            .ndim = 1, .numel = r, .shape = {r}, .stride_out = {2}, .stride_a = {1}, .stride_b = {1}};
        *na = *nb = (size_t)r;
        *nout = (size_t)(2 * r);
        return;
    case REVERSED_6D: /* (r, c, s, 2, 3, 2): a stored with its axes reversed, b (c, 3, 2) broadcast along
                       * the others; no two axes merge, so a backend must handle all six */
        *e = (struct ember_ewise){.ndim = 6,
                                  .numel = r * c * s * 12,
                                  .shape = {r, c, s, 2, 3, 2},
                                  .stride_out = {c * s * 12, s * 12, 12, 6, 2, 1},
                                  .stride_a = {1, r, r * c, r * c * s, r * c * s * 2, r * c * s * 6},
                                  .stride_b = {0, 6, 0, 2, 0, 1}};
        *na = *nout = (size_t)(r * c * s * 12);
        *nb = (size_t)(c * 6);
        return;
    case BIAS_3D: /* a (c) repeated over (r, c, s), as conv2d's bias over its output; b likewise */
        *e = (struct ember_ewise){.ndim = 3,
                                  .numel = r * c * s,
                                  .shape = {r, c, s},
                                  .stride_out = {c * s, s, 1},
                                  .stride_a = {0, 1, 0},
                                  .stride_b = {0, 1, 0}};
        *na = *nb = (size_t)c;
        *nout = (size_t)(r * c * s);
        return;
    case TILED_4D: /* (r, 2, c, s): a stored (r, s, c), read twice along the second axis, its last two
                    * swapped; b (s) along the last; four axes that do not merge */
        *e = (struct ember_ewise){.ndim = 4,
                                  .numel = r * 2 * c * s,
                                  .shape = {r, 2, c, s},
                                  .stride_out = {2 * c * s, c * s, s, 1},
                                  .stride_a = {c * s, 0, 1, c},
                                  .stride_b = {0, 0, 0, 1}};
        *na = (size_t)(r * c * s);
        *nb = (size_t)s;
        *nout = (size_t)(r * 2 * c * s);
        return;
    }
}

/* Where an op's inputs are drawn (base/elementwise-impl.h): REAL over
 * [-4, 4], PIECEWISE over [-8, 8] (past the kinks of ReLU6 and the hard
 * activations), POSITIVE over [-0.2, 4] (a few below 0, whose NaN must
 * come out too); a binary op's b likewise, its a (dy) over [-3, 3]. */
enum domain { REAL, POSITIVE, PIECEWISE };
#define UNARY_PRIMITIVE_DOMAIN(NAME, name, f, math, domain) [EMBER_##NAME] = domain,
#define ACTIVATION_DOMAIN(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, domain)          \
    [EMBER_##NAME] = domain,
#define BACKWARD_DOMAIN(NAME, name, param, f, fmath, saves, g, gmath, layer, torch, onnx, domain)            \
    [EMBER_##NAME##_BACKWARD] = domain,
static const enum domain unary_domain[EMBER_UNARY_COUNT] = {EMBER_UNARY_PRIMITIVES(UNARY_PRIMITIVE_DOMAIN)
                                                                EMBER_ACTIVATIONS(ACTIVATION_DOMAIN)};
static const enum domain binary_domain[EMBER_BINARY_COUNT] = {EMBER_ACTIVATIONS(BACKWARD_DOMAIN)};

/* d: {op, layout, sizes...}; unary when r->prim is "unary" */
static bool run_ewise(struct harness *h, const struct row *r, const char *what)
{
    bool unary = strcmp(r->prim, "unary") == 0;
    struct ember_ewise e;
    size_t na = 0, nb = 0, nout = 0;
    make_layout((enum layout)r->d[1], r->d, &e, &na, &nb, &nout);
    /* a over the op's test domain (its row's), with NaN, Inf and zeros of both signs among them */
    enum domain dom = unary ? unary_domain[r->d[0]] : binary_domain[r->d[0]];
    float lo = dom == POSITIVE    ? -0.2f
               : dom == PIECEWISE ? -8.0f
                                  : -4.0f,
          hi = dom == PIECEWISE ? 8.0f : 4.0f;
    float *a = random_floats(h, na, unary ? lo : -3.0f, unary ? hi : 3.0f, true);
    float *b = random_floats(h, nb, unary ? -3.0f : lo, unary ? 3.0f : hi, true);
    float *want = malloc(nout * 4), *got = malloc(nout * 4);
    for (size_t i = 0; i < nout; i++) /* positions the launch skips keep their value */
        want[i] = got[i] = 0.5f;
    struct dbuf da = {0}, db = {0}, dout = {0};
    bool ok = dbuf_new(h, na, a, &da) && dbuf_new(h, nb, b, &db) && dbuf_new(h, nout, want, &dout);
    /* alpha: a scale, a shift, a slope, a variance's epsilon */
    if (unary) {
        ok = ok &&
             h->ops->unary(h->dev, (enum ember_unary_op)r->d[0], &e, at(dout), at(da), 0.75f) == EMBER_OK;
        ref_unary(NULL, (enum ember_unary_op)r->d[0], &e, REF_PTR(want), REF_PTR(a), 0.75f);
    } else {
        ok = ok && h->ops->binary(h->dev, (enum ember_binary_op)r->d[0], &e, at(dout), at(da), at(db),
                                  0.25f) == EMBER_OK;
        ref_binary(NULL, (enum ember_binary_op)r->d[0], &e, REF_PTR(want), REF_PTR(a), REF_PTR(b), 0.25f);
    }
    ok = ok && dbuf_fetch(h, dout, got, what) && compare_f32(what, got, want, nout, TOL_EXACTISH);
    dbuf_free(h, &da);
    dbuf_free(h, &db);
    dbuf_free(h, &dout);
    free(a), free(b), free(want), free(got);
    return ok;
}

/* d: {op, outer, r, inner, beta, specials} */
static bool run_reduce(struct harness *h, const struct row *r, const char *what)
{
    struct ember_reduce red = {
        .outer = r->d[1], .r = r->d[2], .inner = r->d[3], .alpha = 0.5f, .beta = (float)r->d[4]};
    size_t nin = (size_t)(red.outer * red.r * red.inner), nout = (size_t)(red.outer * red.inner);
    float *in = random_floats(h, nin, -2.0f, 2.0f, r->d[5] != 0);
    float *want = random_floats(h, nout, -1.0f, 1.0f, false), *got = malloc(nout * 4);
    struct dbuf din = {0}, dout = {0};
    bool ok = dbuf_new(h, nin, in, &din) && dbuf_new(h, nout, want, &dout) &&
              h->ops->reduce(h->dev, (enum ember_reduce_op)r->d[0], &red, at(dout), at(din)) == EMBER_OK;
    ref_reduce(NULL, (enum ember_reduce_op)r->d[0], &red, REF_PTR(want), REF_PTR(in));
    ok = ok && dbuf_fetch(h, dout, got, what) && compare_f32(what, got, want, nout, TOL_EXACTISH);
    dbuf_free(h, &din);
    dbuf_free(h, &dout);
    free(in), free(want), free(got);
    return ok;
}

/* d: {m, n, k, trans_a, trans_b, batch, share_a, beta} */
static bool run_sgemm(struct harness *h, const struct row *r, const char *what)
{
    /* clang-format off */
    struct ember_gemm g = {.m = r->d[0], .n = r->d[1], .k = r->d[2], .trans_a = r->d[3], .trans_b = r->d[4],
                           .batch = r->d[5], .alpha = 1.5f, .beta = (float)r->d[7]};
    /* clang-format on */
    /* leading dimensions a little wider than the matrices, to catch ld mix-ups */
    g.lda = (g.trans_a ? g.m : g.k) + 3;
    g.ldb = (g.trans_b ? g.k : g.n) + 1;
    g.ldc = g.n + 2;
    int64_t size_a = (g.trans_a ? g.k : g.m) * g.lda, size_b = (g.trans_b ? g.n : g.k) * g.ldb,
            size_c = g.m * g.ldc;
    g.stride_a = r->d[6] ? 0 : size_a;
    g.stride_b = size_b;
    g.stride_c = size_c;
    size_t na = (size_t)(r->d[6] ? size_a : size_a * g.batch), nb = (size_t)(size_b * g.batch),
           nc = (size_t)(size_c * g.batch);
    float *a = random_floats(h, na, -1, 1, false), *b = random_floats(h, nb, -1, 1, false);
    float *want = random_floats(h, nc, -1, 1, false), *got = malloc(nc * 4);
    struct dbuf da = {0}, db = {0}, dc = {0};
    bool ok = dbuf_new(h, na, a, &da) && dbuf_new(h, nb, b, &db) && dbuf_new(h, nc, want, &dc) &&
              h->ops->sgemm(h->dev, &g, at(da), at(db), at(dc)) == EMBER_OK;
    ref_sgemm(NULL, &g, REF_PTR(a), REF_PTR(b), REF_PTR(want));
    ok = ok && dbuf_fetch(h, dc, got, what) && compare_f32(what, got, want, nc, TOL_GEMM);
    dbuf_free(h, &da), dbuf_free(h, &db), dbuf_free(h, &dc);
    free(a), free(b), free(want), free(got);
    return ok;
}

static struct ember_conv_geom conv_geom(const int64_t *d)
{
    struct ember_conv_geom g = {
        .n = d[0], .c = d[1], .h = d[2], .w = d[3], .kh = d[4], .kw = d[5], .stride = d[6], .pad = d[7]};
    g.oh = (g.h + 2 * g.pad - g.kh) / g.stride + 1;
    g.ow = (g.w + 2 * g.pad - g.kw) / g.stride + 1;
    return g;
}

/* d: {n, c, h, w, kh, kw, stride, pad}; prim "im2col" or "col2im" */
static bool run_conv(struct harness *h, const struct row *r, const char *what)
{
    struct ember_conv_geom g = conv_geom(r->d);
    bool forward = strcmp(r->prim, "im2col") == 0;
    size_t nx = (size_t)(g.n * g.c * g.h * g.w), ncol = (size_t)(g.n * g.c * g.kh * g.kw * g.oh * g.ow);
    size_t nin = forward ? nx : ncol, nout = forward ? ncol : nx;
    float *in = random_floats(h, nin, -1, 1, false), *want = malloc(nout * 4), *got = malloc(nout * 4);
    struct dbuf din = {0}, dout = {0};
    bool ok = dbuf_new(h, nin, in, &din) && dbuf_new(h, nout, NULL, &dout);
    if (forward) {
        ok = ok && h->ops->im2col(h->dev, &g, at(din), at(dout)) == EMBER_OK;
        ref_im2col(NULL, &g, REF_PTR(in), REF_PTR(want));
    } else {
        ok = ok && h->ops->col2im(h->dev, &g, at(din), at(dout)) == EMBER_OK;
        ref_col2im(NULL, &g, REF_PTR(in), REF_PTR(want));
    }
    ok = ok && dbuf_fetch(h, dout, got, what) && compare_f32(what, got, want, nout, TOL_GEMM);
    dbuf_free(h, &din), dbuf_free(h, &dout);
    free(in), free(want), free(got);
    return ok;
}

/* One pass of conv_direct, conv_winograd or conv_grouped (`prim`), as c
 * says, against the direct convolution summed in double. Its output is x's,
 * w's or y's shape as the pass says; the other two are random inputs, and
 * the output starts random too, for beta = 1 to add to. */
typedef ember_status (*conv_primitive)(void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w,
                                       ember_ptr y);
static bool check_conv_job(struct harness *h, const struct ember_conv_job *c, conv_primitive prim, double tol,
                           const char *what)
{
    const struct ember_conv_geom *g = &c->g;
    int64_t groups = c->groups > 1 ? c->groups : 1;
    size_t nx = (size_t)(g->n * g->c * g->h * g->w), nw = (size_t)(c->oc * g->c / groups * g->kh * g->kw),
           ny = (size_t)(g->n * c->oc * g->oh * g->ow);
    if (c->pass == EMBER_CONV_WEIGHT_GRAD && c->slices > 1) /* (slices, oc, c, kh, kw) */
        nw *= (size_t)c->slices;
    size_t nout = c->pass == EMBER_CONV_FORWARD ? ny : c->pass == EMBER_CONV_INPUT_GRAD ? nx : nw;
    float *x = random_floats(h, nx, -1, 1, false), *w = random_floats(h, nw, -1, 1, false);
    float *y = random_floats(h, ny, -1, 1, false), *got = malloc((nout ? nout : 1) * 4);
    struct dbuf dx = {0}, dw = {0}, dy = {0};
    bool ok = dbuf_new(h, nx, x, &dx) && dbuf_new(h, nw, w, &dw) && dbuf_new(h, ny, y, &dy);
    ember_status st = !ok ? EMBER_ERR_NOMEM : prim(h->dev, c, at(dx), at(dw), at(dy));
    if (st == EMBER_ERR_UNSUPPORTED) { /* a backend without it: the chooser never asks it */
        h->skipped = true;
        ok = true;
    } else {
        ref_conv_direct(NULL, c, REF_PTR(x), REF_PTR(w), REF_PTR(y));
        struct dbuf out = c->pass == EMBER_CONV_FORWARD ? dy : c->pass == EMBER_CONV_INPUT_GRAD ? dx : dw;
        float *want = c->pass == EMBER_CONV_FORWARD ? y : c->pass == EMBER_CONV_INPUT_GRAD ? x : w;
        ok = st == EMBER_OK && dbuf_fetch(h, out, got, what) && compare_f32(what, got, want, nout, tol);
    }
    dbuf_free(h, &dx), dbuf_free(h, &dw), dbuf_free(h, &dy);
    free(x), free(w), free(y), free(got);
    return ok;
}

/* d: {n, c, h, w, oc, pad, pass, beta, tile (0: 2)}: conv_winograd's pass, 3x3 at stride 1 */
static bool run_winograd(struct harness *h, const struct row *r, const char *what)
{
    struct ember_conv_job c = {.oc = r->d[4],
                               .pass = (enum ember_conv_pass)r->d[6],
                               .beta = (float)r->d[7],
                               .tile = r->d[8] ? (int)r->d[8] : 2};
    const int64_t geom[8] = {r->d[0], r->d[1], r->d[2], r->d[3], 3, 3, 1, r->d[5]};
    c.g = conv_geom(geom);
    return check_conv_job(h, &c, h->ops->conv_winograd, c.tile == 4 ? TOL_WINOGRAD4 : TOL_WINOGRAD, what);
}

/* d: {n, c, h, w, kh, kw, stride, pad, oc, pass, beta, slices}: conv_direct's pass, any geometry */
static bool run_direct(struct harness *h, const struct row *r, const char *what)
{
    struct ember_conv_job c = {
        .oc = r->d[8], .pass = (enum ember_conv_pass)r->d[9], .beta = (float)r->d[10], .slices = r->d[11]};
    c.g = conv_geom(r->d);
    return check_conv_job(h, &c, h->ops->conv_direct, TOL_GEMM, what);
}

/* d: {n, c, h, w, kh, kw, stride, pad, oc, pass, beta, slices, groups}: conv_grouped's pass */
static bool run_grouped(struct harness *h, const struct row *r, const char *what)
{
    struct ember_conv_job c = {.oc = r->d[8],
                               .pass = (enum ember_conv_pass)r->d[9],
                               .beta = (float)r->d[10],
                               .slices = r->d[11],
                               .groups = r->d[12]};
    c.g = conv_geom(r->d);
    return check_conv_job(h, &c, h->ops->conv_grouped, TOL_GEMM, what);
}

/* d: {n, c, h, w, k, stride, specials}; prim "max_pool2d_forward" or "max_pool2d_backward" */
static bool run_max_pool2d(struct harness *h, const struct row *r, const char *what)
{
    struct ember_pool_geom g = {
        .n = r->d[0], .c = r->d[1], .h = r->d[2], .w = r->d[3], .k = r->d[4], .stride = r->d[5]};
    g.oh = (g.h - g.k) / g.stride + 1;
    g.ow = (g.w - g.k) / g.stride + 1;
    size_t nx = (size_t)(g.n * g.c * g.h * g.w), ny = (size_t)(g.n * g.c * g.oh * g.ow);
    float *x = random_floats(h, nx, -1, 1, r->d[6] != 0);
    if (!r->d[6]) /* repeated values exercise the first-maximum rule */
        for (size_t i = 0; i < nx; i += 5)
            x[i] = 0.5f;
    float *y = malloc(ny * 4), *dy = random_floats(h, ny, -1, 1, false);
    int32_t *arg = malloc(ny * 4), *got_arg = malloc(ny * 4);
    ref_max_pool2d_forward(NULL, &g, REF_PTR(x), REF_PTR(y), REF_PTR(arg));
    struct dbuf dx = {0}, dyb = {0}, darg = {0};
    bool ok;
    if (strcmp(r->prim, "max_pool2d_forward") == 0) {
        float *got = malloc(ny * 4);
        ok = dbuf_new(h, nx, x, &dx) && dbuf_new(h, ny, NULL, &dyb) && dbuf_new(h, ny, NULL, &darg) &&
             h->ops->max_pool2d_forward(h->dev, &g, at(dx), at(dyb), at(darg)) == EMBER_OK &&
             dbuf_fetch(h, dyb, got, what) && dbuf_fetch(h, darg, got_arg, what) &&
             compare_f32(what, got, y, ny, TOL_EXACTISH) && compare_i32(what, got_arg, arg, ny);
        free(got);
    } else {
        float *want = malloc(nx * 4), *got = malloc(nx * 4);
        ref_max_pool2d_backward(NULL, &g, REF_PTR(dy), REF_PTR(arg), REF_PTR(want));
        ok = dbuf_new(h, ny, dy, &dyb) && dbuf_new(h, ny, arg, &darg) && dbuf_new(h, nx, NULL, &dx) &&
             h->ops->max_pool2d_backward(h->dev, &g, at(dyb), at(darg), at(dx)) == EMBER_OK &&
             dbuf_fetch(h, dx, got, what) && compare_f32(what, got, want, nx, TOL_EXACTISH);
        free(want), free(got);
    }
    dbuf_free(h, &dx), dbuf_free(h, &dyb), dbuf_free(h, &darg);
    free(x), free(y), free(dy), free(arg), free(got_arg);
    return ok;
}

/* d: {n, c, h, w, k, stride}; prim "avg_pool2d_forward" or "avg_pool2d_backward" */
static bool run_avg_pool2d(struct harness *h, const struct row *r, const char *what)
{
    struct ember_pool_geom g = {
        .n = r->d[0], .c = r->d[1], .h = r->d[2], .w = r->d[3], .k = r->d[4], .stride = r->d[5]};
    g.oh = (g.h - g.k) / g.stride + 1;
    g.ow = (g.w - g.k) / g.stride + 1;
    bool forward = strcmp(r->prim, "avg_pool2d_forward") == 0;
    size_t nx = (size_t)(g.n * g.c * g.h * g.w), ny = (size_t)(g.n * g.c * g.oh * g.ow);
    size_t nin = forward ? nx : ny, nout = forward ? ny : nx;
    float *in = random_floats(h, nin, -1, 1, false), *want = malloc(nout * 4), *got = malloc(nout * 4);
    if (forward)
        ref_avg_pool2d_forward(NULL, &g, REF_PTR(in), REF_PTR(want));
    else
        ref_avg_pool2d_backward(NULL, &g, REF_PTR(in), REF_PTR(want));
    struct dbuf din = {0}, dout = {0};
    bool ok = dbuf_new(h, nin, in, &din) && dbuf_new(h, nout, NULL, &dout) &&
              (forward ? h->ops->avg_pool2d_forward(h->dev, &g, at(din), at(dout))
                       : h->ops->avg_pool2d_backward(h->dev, &g, at(din), at(dout))) == EMBER_OK &&
              dbuf_fetch(h, dout, got, what) && compare_f32(what, got, want, nout, TOL_EXACTISH);
    dbuf_free(h, &din), dbuf_free(h, &dout);
    free(in), free(want), free(got);
    return ok;
}

/* d: {n, p x 100, seed}: the mask must be the reference's, bit for bit */
static bool run_dropout(struct harness *h, const struct row *r, const char *what)
{
    size_t n = (size_t)r->d[0];
    float p = (float)r->d[1] / 100.0f;
    uint64_t seed = (uint64_t)r->d[2] * 0x9e3779b97f4a7c15ull;
    float *want = malloc(n * 4), *got = malloc(n * 4);
    ref_dropout_mask(NULL, REF_PTR(want), n, p, seed);
    struct dbuf mask = {0};
    bool ok = dbuf_new(h, n, NULL, &mask) && h->ops->dropout_mask(h->dev, at(mask), n, p, seed) == EMBER_OK &&
              dbuf_fetch(h, mask, got, what) && compare_exact(what, got, want, n);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += want[i] != 0.0f;
    /* and it is a fair coin: the share kept is 1 - p within five standard deviations */
    double share = (double)kept / (double)n, sd = sqrt(p * (1.0 - p) / (double)n);
    CHECK(fabs(share - (1.0 - p)) <= 5.0 * sd + 1e-12, "%s: kept %.4f of the elements, want %.4f", what,
          share, 1.0 - p);
    dbuf_free(h, &mask);
    free(want), free(got);
    return ok;
}

/* d: {n, classes, logit scale, a bad target}; prim "cross_entropy_forward" or "..._backward" */
static bool run_cross_entropy(struct harness *h, const struct row *r, const char *what)
{
    int64_t n = r->d[0], c = r->d[1];
    float scale = (float)r->d[2];
    float *logits = random_floats(h, (size_t)(n * c), -scale, scale, false);
    int32_t *target = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        target[i] = (int32_t)(ember_rng_u32(&h->rng) % (uint32_t)c);
    if (r->d[3])
        target[n / 2] = (int32_t)c; /* out of range: that row's loss is NaN */
    float *prob = malloc((size_t)(n * c) * 4), *loss = malloc((size_t)n * 4);
    ref_cross_entropy_forward(NULL, n, c, REF_PTR(logits), REF_PTR(target), REF_PTR(prob), REF_PTR(loss));
    struct dbuf dl = {0}, dt = {0}, dp = {0}, dloss = {0}, dd = {0};
    bool ok;
    if (strcmp(r->prim, "cross_entropy_forward") == 0) {
        float *got_p = malloc((size_t)(n * c) * 4), *got_l = malloc((size_t)n * 4);
        ok = dbuf_new(h, (size_t)(n * c), logits, &dl) && dbuf_new(h, (size_t)n, target, &dt) &&
             dbuf_new(h, (size_t)(n * c), NULL, &dp) && dbuf_new(h, (size_t)n, NULL, &dloss) &&
             h->ops->cross_entropy_forward(h->dev, n, c, at(dl), at(dt), at(dp), at(dloss)) == EMBER_OK &&
             dbuf_fetch(h, dp, got_p, what) && dbuf_fetch(h, dloss, got_l, what) &&
             compare_f32(what, got_p, prob, (size_t)(n * c), TOL_EXACTISH) &&
             compare_f32(what, got_l, loss, (size_t)n, TOL_EXACTISH);
        free(got_p), free(got_l);
    } else {
        float dl1 = 0.75f, *want = malloc((size_t)(n * c) * 4), *got = malloc((size_t)(n * c) * 4);
        ref_cross_entropy_backward(NULL, n, c, REF_PTR(prob), REF_PTR(target), REF_PTR(&dl1), 1.0f / (float)n,
                                   REF_PTR(want));
        ok = dbuf_new(h, (size_t)(n * c), prob, &dp) && dbuf_new(h, (size_t)n, target, &dt) &&
             dbuf_new(h, 1, &dl1, &dloss) && dbuf_new(h, (size_t)(n * c), NULL, &dd) &&
             h->ops->cross_entropy_backward(h->dev, n, c, at(dp), at(dt), at(dloss), 1.0f / (float)n,
                                            at(dd)) == EMBER_OK &&
             dbuf_fetch(h, dd, got, what) && compare_f32(what, got, want, (size_t)(n * c), TOL_EXACTISH);
        free(want), free(got);
    }
    dbuf_free(h, &dl), dbuf_free(h, &dt), dbuf_free(h, &dp), dbuf_free(h, &dloss), dbuf_free(h, &dd);
    free(logits), free(target), free(prob), free(loss);
    return ok;
}

/* d: {n, weight decay x1000, step or first, momentum x100, nesterov}; prim "adam_step" or "sgd_step" */
static bool run_optim(struct harness *h, const struct row *r, const char *what)
{
    size_t n = (size_t)r->d[0];
    bool adam = strcmp(r->prim, "adam_step") == 0;
    float *param = random_floats(h, n, -1, 1, false), *grad = random_floats(h, n, -1, 1, false);
    float *m = random_floats(h, n, -0.1f, 0.1f, false), *v = random_floats(h, n, 0, 0.01f, false);
    float *got = malloc(n * 4), *got_m = malloc(n * 4), *got_v = malloc(n * 4);
    struct dbuf dp = {0}, dg = {0}, dm = {0}, dv = {0};
    bool ok = dbuf_new(h, n, param, &dp) && dbuf_new(h, n, grad, &dg) && dbuf_new(h, n, m, &dm) &&
              dbuf_new(h, n, v, &dv);
    if (adam) {
        double step = (double)r->d[2];
        struct ember_adam_step s = {.lr = 1e-3f,
                                    .beta1 = 0.9f,
                                    .beta2 = 0.999f,
                                    .eps = 1e-8f,
                                    .weight_decay = (float)r->d[1] / 1000.0f,
                                    .bias_correction1 = (float)(1 - pow(0.9, step)),
                                    .bias_correction2 = (float)(1 - pow(0.999, step)),
                                    .decoupled = r->d[4]};
        ok = ok && h->ops->adam_step(h->dev, n, &s, at(dp), at(dg), at(dm), at(dv)) == EMBER_OK;
        ref_adam_step(NULL, n, &s, REF_PTR(param), REF_PTR(grad), REF_PTR(m), REF_PTR(v));
        ok = ok && dbuf_fetch(h, dv, got_v, what) && compare_f32(what, got_v, v, n, TOL_EXACTISH);
    } else {
        struct ember_sgd_step s = {.lr = 0.05f,
                                   .momentum = (float)r->d[3] / 100.0f,
                                   .dampening = 0.0f,
                                   .weight_decay = (float)r->d[1] / 1000.0f,
                                   .nesterov = r->d[4],
                                   .first = r->d[2] == 1};
        ok = ok && h->ops->sgd_step(h->dev, n, &s, at(dp), at(dg), at(dm)) == EMBER_OK;
        ref_sgd_step(NULL, n, &s, REF_PTR(param), REF_PTR(grad), REF_PTR(m));
    }
    ok = ok && dbuf_fetch(h, dp, got, what) && compare_f32(what, got, param, n, TOL_EXACTISH) &&
         dbuf_fetch(h, dm, got_m, what) && compare_f32(what, got_m, m, n, TOL_EXACTISH);
    dbuf_free(h, &dp), dbuf_free(h, &dg), dbuf_free(h, &dm), dbuf_free(h, &dv);
    free(param), free(grad), free(m), free(v), free(got), free(got_m), free(got_v);
    return ok;
}

#define U(op) EMBER_##op
/* softmax over rows: d = {rows, cols, causal_rows, logit scale, specials} */
static bool run_softmax(struct harness *h, const struct row *r, const char *what)
{
    int64_t rows = r->d[0], cols = r->d[1], causal = r->d[2];
    size_t n = (size_t)(rows * cols);
    float *x = random_floats(h, n, -(float)r->d[3], (float)r->d[3], r->d[4]);
    float *y = malloc(n * 4), *got = malloc(n * 4);
    ref_softmax_forward(NULL, rows, cols, causal, REF_PTR(x), REF_PTR(y));
    struct dbuf dx = {0}, dy = {0}, dd = {0};
    bool ok;
    if (strcmp(r->prim, "softmax_forward") == 0) {
        ok = dbuf_new(h, n, x, &dx) && dbuf_new(h, n, NULL, &dy) &&
             h->ops->softmax_forward(h->dev, rows, cols, causal, at(dx), at(dy)) == EMBER_OK &&
             dbuf_fetch(h, dy, got, what) && compare_f32(what, got, y, n, TOL_EXACTISH);
    } else { /* the backward pass of that forward's y, x standing in for dy */
        float *want = malloc(n * 4);
        ref_softmax_backward(NULL, rows, cols, REF_PTR(y), REF_PTR(x), REF_PTR(want));
        ok = dbuf_new(h, n, y, &dy) && dbuf_new(h, n, x, &dx) && dbuf_new(h, n, NULL, &dd) &&
             h->ops->softmax_backward(h->dev, rows, cols, at(dy), at(dx), at(dd)) == EMBER_OK &&
             dbuf_fetch(h, dd, got, what) && compare_f32(what, got, want, n, TOL_EXACTISH);
        free(want);
    }
    dbuf_free(h, &dx), dbuf_free(h, &dy), dbuf_free(h, &dd);
    free(x), free(y), free(got);
    return ok;
}

/* layer norm over rows: d = {rows, cols, offset of the values, eps x 1e6} */
static bool run_layer_norm(struct harness *h, const struct row *r, const char *what)
{
    int64_t rows = r->d[0], cols = r->d[1];
    size_t n = (size_t)(rows * cols);
    float off = (float)r->d[2], eps = (float)r->d[3] * 1e-6f;
    float *x = random_floats(h, n, off - 2.0f, off + 2.0f, false);
    float *w = random_floats(h, (size_t)cols, 0.5f, 1.5f, false),
          *b = random_floats(h, (size_t)cols, -1, 1, false);
    float *y = malloc(n * 4), *xhat = malloc(n * 4), *rstd = malloc((size_t)rows * 4);
    float *got = malloc(n * 4), *got_h = malloc(n * 4), *got_r = malloc((size_t)rows * 4);
    ref_layer_norm_forward(NULL, rows, cols, eps, REF_PTR(x), REF_PTR(w), REF_PTR(b), REF_PTR(y),
                           REF_PTR(xhat), REF_PTR(rstd));
    struct dbuf dx = {0}, dw = {0}, db = {0}, dy = {0}, dh = {0}, dr = {0}, dd = {0};
    bool ok =
        dbuf_new(h, n, x, &dx) && dbuf_new(h, (size_t)cols, w, &dw) && dbuf_new(h, (size_t)cols, b, &db);
    if (strcmp(r->prim, "layer_norm_forward") == 0) {
        ok = ok && dbuf_new(h, n, NULL, &dy) && dbuf_new(h, n, NULL, &dh) &&
             dbuf_new(h, (size_t)rows, NULL, &dr) &&
             h->ops->layer_norm_forward(h->dev, rows, cols, eps, at(dx), at(dw), at(db), at(dy), at(dh),
                                        at(dr)) == EMBER_OK &&
             dbuf_fetch(h, dy, got, what) && compare_f32(what, got, y, n, TOL_EXACTISH) &&
             dbuf_fetch(h, dh, got_h, what) && compare_f32(what, got_h, xhat, n, TOL_EXACTISH) &&
             dbuf_fetch(h, dr, got_r, what) && compare_f32(what, got_r, rstd, (size_t)rows, TOL_EXACTISH);
    } else { /* the backward pass of that forward, x standing in for dy */
        float *want = malloc(n * 4);
        ref_layer_norm_backward(NULL, rows, cols, REF_PTR(x), REF_PTR(xhat), REF_PTR(w), REF_PTR(rstd),
                                REF_PTR(want));
        ok = ok && dbuf_new(h, n, xhat, &dh) && dbuf_new(h, (size_t)rows, rstd, &dr) &&
             dbuf_new(h, n, NULL, &dd) &&
             h->ops->layer_norm_backward(h->dev, rows, cols, at(dx), at(dh), at(dw), at(dr), at(dd)) ==
                 EMBER_OK &&
             dbuf_fetch(h, dd, got, what) && compare_f32(what, got, want, n, TOL_EXACTISH);
        free(want);
    }
    dbuf_free(h, &dx), dbuf_free(h, &dw), dbuf_free(h, &db), dbuf_free(h, &dy), dbuf_free(h, &dh);
    dbuf_free(h, &dr), dbuf_free(h, &dd);
    free(x), free(w), free(b), free(y), free(xhat), free(rstd), free(got), free(got_h), free(got_r);
    return ok;
}

/* RMS norm's forward pass over rows: d = {rows, cols, offset of the values, eps x 1e6, weighted} */
static bool run_rms_norm(struct harness *h, const struct row *r, const char *what)
{
    int64_t rows = r->d[0], cols = r->d[1];
    size_t n = (size_t)(rows * cols);
    float off = (float)r->d[2], eps = (float)r->d[3] * 1e-6f;
    int weighted = (int)r->d[4];
    float *x = random_floats(h, n, off - 2.0f, off + 2.0f, false);
    float *w = random_floats(h, (size_t)cols, 0.5f, 1.5f, false);
    float *y = malloc(n * 4), *rrms = malloc((size_t)rows * 4);
    float *got = malloc(n * 4), *got_r = malloc((size_t)rows * 4);
    ref_rms_norm_forward(NULL, rows, cols, eps, REF_PTR(x), REF_PTR(w), weighted, REF_PTR(y), REF_PTR(rrms));
    struct dbuf dx = {0}, dw = {0}, dy = {0}, dr = {0};
    /* unweighted, the weight given is x itself: the primitive must not read it */
    bool ok = dbuf_new(h, n, x, &dx) && (!weighted || dbuf_new(h, (size_t)cols, w, &dw)) &&
              dbuf_new(h, n, NULL, &dy) && dbuf_new(h, (size_t)rows, NULL, &dr) &&
              h->ops->rms_norm_forward(h->dev, rows, cols, eps, at(dx), weighted ? at(dw) : at(dx), weighted,
                                       at(dy), at(dr)) == EMBER_OK &&
              dbuf_fetch(h, dy, got, what) && compare_f32(what, got, y, n, TOL_EXACTISH) &&
              dbuf_fetch(h, dr, got_r, what) && compare_f32(what, got_r, rrms, (size_t)rows, TOL_EXACTISH);
    dbuf_free(h, &dx), dbuf_free(h, &dw), dbuf_free(h, &dy), dbuf_free(h, &dr);
    free(x), free(w), free(y), free(rrms), free(got), free(got_r);
    return ok;
}

/* batch norm over (n, c, s): d = {n, c, s, offset of the values, eps x 1e6, training, relu}. The
 * forward pass and the backward pass start from the reference's statistics and xhat; dy is
 * drawn apart from x (x itself would make dx cancel to nearly nothing) */
static bool run_batch_norm(struct harness *h, const struct row *r, const char *what)
{
    struct ember_batch_norm b = {.n = r->d[0],
                                 .c = r->d[1],
                                 .s = r->d[2],
                                 .eps = (float)r->d[4] * 1e-6f,
                                 .momentum = 0.1f,
                                 .training = r->d[5] != 0,
                                 .relu = r->d[6] != 0};
    size_t n = (size_t)(b.n * b.c * b.s), c = (size_t)b.c, work_n = (size_t)(2 * b.n * b.c);
    float off = (float)r->d[3];
    float *x = random_floats(h, n, off - 2.0f, off + 2.0f, false);
    float *dy = random_floats(h, n, -1, 1, false);
    float *w = random_floats(h, c, 0.5f, 1.5f, false), *bias = random_floats(h, c, -1, 1, false);
    float *rm = random_floats(h, c, -1, 1, false), *rv = random_floats(h, c, 0.5f, 2.0f, false);
    float *rm0 = malloc(c * 4), *rv0 = malloc(c * 4), *mean = malloc(c * 4), *invstd = malloc(c * 4);
    float *xhat = malloc(n * 4), *y = malloc(n * 4), *dw = malloc(c * 4), *db = malloc(c * 4),
          *dx = malloc(n * 4);
    float *got = malloc(n * 4), *got_c = malloc(c * 4);
    memcpy(rm0, rm, c * 4), memcpy(rv0, rv, c * 4);
    ember_ptr none = {0};
    ref_batch_norm_stats(NULL, &b, REF_PTR(x), none, REF_PTR(mean), REF_PTR(invstd), REF_PTR(rm),
                         REF_PTR(rv));
    ref_batch_norm_forward(NULL, &b, REF_PTR(x), REF_PTR(mean), REF_PTR(invstd), REF_PTR(w), REF_PTR(bias),
                           REF_PTR(xhat), REF_PTR(y));
    ref_batch_norm_backward(NULL, &b, REF_PTR(dy), REF_PTR(xhat), REF_PTR(w), REF_PTR(bias), REF_PTR(invstd),
                            none, REF_PTR(dw), REF_PTR(db), REF_PTR(dx));
    struct dbuf dev_x = {0}, dev_work = {0}, dev_mean = {0}, dev_invstd = {0}, dev_rm = {0}, dev_rv = {0};
    struct dbuf dev_dy = {0}, dev_w = {0}, dev_b = {0}, dev_xhat = {0}, dev_y = {0}, dev_dw = {0},
                dev_db = {0}, dev_dx = {0};
    bool ok = dbuf_new(h, n, x, &dev_x) && dbuf_new(h, work_n, NULL, &dev_work) && dbuf_new(h, c, w, &dev_w);
    if (strcmp(r->prim, "batch_norm_stats") == 0) {
        ok = ok && dbuf_new(h, c, NULL, &dev_mean) && dbuf_new(h, c, NULL, &dev_invstd) &&
             dbuf_new(h, c, rm0, &dev_rm) && dbuf_new(h, c, rv0, &dev_rv) &&
             h->ops->batch_norm_stats(h->dev, &b, at(dev_x), at(dev_work), at(dev_mean), at(dev_invstd),
                                      at(dev_rm), at(dev_rv)) == EMBER_OK &&
             dbuf_fetch(h, dev_mean, got_c, what) && compare_f32(what, got_c, mean, c, TOL_EXACTISH) &&
             dbuf_fetch(h, dev_invstd, got_c, what) && compare_f32(what, got_c, invstd, c, TOL_EXACTISH) &&
             dbuf_fetch(h, dev_rm, got_c, what) && compare_f32(what, got_c, rm, c, TOL_EXACTISH) &&
             dbuf_fetch(h, dev_rv, got_c, what) && compare_f32(what, got_c, rv, c, TOL_EXACTISH);
    } else if (strcmp(r->prim, "batch_norm_forward") == 0) {
        ok = ok && dbuf_new(h, c, mean, &dev_mean) && dbuf_new(h, c, invstd, &dev_invstd) &&
             dbuf_new(h, c, bias, &dev_b) && dbuf_new(h, n, NULL, &dev_xhat) &&
             dbuf_new(h, n, NULL, &dev_y) &&
             h->ops->batch_norm_forward(h->dev, &b, at(dev_x), at(dev_mean), at(dev_invstd), at(dev_w),
                                        at(dev_b), at(dev_xhat), at(dev_y)) == EMBER_OK &&
             dbuf_fetch(h, dev_xhat, got, what) && compare_f32(what, got, xhat, n, TOL_EXACTISH) &&
             dbuf_fetch(h, dev_y, got, what) && compare_f32(what, got, y, n, TOL_EXACTISH);
    } else {
        ok = ok && dbuf_new(h, n, dy, &dev_dy) && dbuf_new(h, n, xhat, &dev_xhat) &&
             dbuf_new(h, c, bias, &dev_b) && dbuf_new(h, c, invstd, &dev_invstd) &&
             dbuf_new(h, c, NULL, &dev_dw) && dbuf_new(h, c, NULL, &dev_db) &&
             dbuf_new(h, n, NULL, &dev_dx) &&
             h->ops->batch_norm_backward(h->dev, &b, at(dev_dy), at(dev_xhat), at(dev_w), at(dev_b),
                                         at(dev_invstd), at(dev_work), at(dev_dw), at(dev_db),
                                         at(dev_dx)) == EMBER_OK &&
             dbuf_fetch(h, dev_db, got_c, what) && compare_f32(what, got_c, db, c, TOL_EXACTISH) &&
             dbuf_fetch(h, dev_dw, got_c, what) && compare_f32(what, got_c, dw, c, TOL_EXACTISH) &&
             dbuf_fetch(h, dev_dx, got, what) && compare_f32(what, got, dx, n, TOL_EXACTISH);
    }
    struct dbuf *all[] = {&dev_x, &dev_dy, &dev_work, &dev_mean, &dev_invstd, &dev_rm, &dev_rv,
                          &dev_w, &dev_b,  &dev_xhat, &dev_y,    &dev_dw,     &dev_db, &dev_dx};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        dbuf_free(h, all[i]);
    float *host[] = {x, dy, w, bias, rm, rv, rm0, rv0, mean, invstd, xhat, y, dw, db, dx, got, got_c};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        free(host[i]);
    return ok;
}

/* an embedding: d = {n, dim, vocab, an index out of range} */
static bool run_embedding(struct harness *h, const struct row *r, const char *what)
{
    int64_t n = r->d[0], dim = r->d[1], vocab = r->d[2];
    int32_t *index = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) /* vocabularies smaller than n: rows repeat, as a text's bytes do */
        index[i] = (int32_t)(ember_rng_u32(&h->rng) % (uint32_t)vocab);
    if (r->d[3])
        index[n / 2] = (int32_t)vocab, index[n / 3] = -1;
    size_t table = (size_t)(vocab * dim), rows = (size_t)(n * dim);
    float *weight = random_floats(h, table, -1, 1, false), *dy = random_floats(h, rows, -1, 1, false);
    struct dbuf di = {0}, dw = {0}, dd = {0};
    bool ok = dbuf_new(h, (size_t)n, index, &di);
    if (strcmp(r->prim, "embedding_forward") == 0) {
        float *want = malloc(rows * 4), *got = malloc(rows * 4);
        ref_embedding_forward(NULL, n, dim, vocab, REF_PTR(index), REF_PTR(weight), REF_PTR(want));
        ok = ok && dbuf_new(h, table, weight, &dw) && dbuf_new(h, rows, NULL, &dd) &&
             h->ops->embedding_forward(h->dev, n, dim, vocab, at(di), at(dw), at(dd)) == EMBER_OK &&
             dbuf_fetch(h, dd, got, what) && compare_f32(what, got, want, rows, 0.0);
        free(want), free(got);
    } else { /* accumulating into a table that is not zero, as a gradient does */
        float *got = malloc(table * 4);
        ok = ok && dbuf_new(h, table, weight, &dw) && dbuf_new(h, rows, dy, &dd) &&
             h->ops->embedding_backward(h->dev, n, dim, vocab, at(di), at(dd), at(dw)) == EMBER_OK &&
             dbuf_fetch(h, dw, got, what);
        ref_embedding_backward(NULL, n, dim, vocab, REF_PTR(index), REF_PTR(dy), REF_PTR(weight));
        ok = ok && compare_f32(what, got, weight, table, TOL_EXACTISH);
        free(got);
    }
    dbuf_free(h, &di), dbuf_free(h, &dw), dbuf_free(h, &dd);
    free(index), free(weight), free(dy);
    return ok;
}

/* `count` random blocks of a quantised type: random integers, and scales
 * that are normal halves between 2^-6 and 2^-1 of either sign (random
 * bytes there could be Inf or NaN, which no file's scales are) */
static uint8_t *random_blocks(struct harness *h, ember_dtype type, int64_t count, size_t *words)
{
    int64_t elements = 1, bytes = 1;
    ember_quant_block(type, &elements, &bytes);
    *words = (size_t)((count * bytes + 3) / 4);
    uint8_t *b = calloc(*words, 4);
    for (int64_t i = 0; i < count * bytes; i++)
        b[i] = (uint8_t)ember_rng_u32(&h->rng);
    for (int64_t k = 0; k < count; k++) {
        uint8_t *block = b + k * bytes;
        int at[2] = {0, type == EMBER_Q4_1 || type == EMBER_Q4_K ? 2 : -1};
        if (type == EMBER_Q6_K)
            at[0] = 208;
        for (int s = 0; s < 2; s++)
            if (at[s] >= 0) {
                uint32_t u = ember_rng_u32(&h->rng);
                uint16_t half = (uint16_t)((u & 0x8000) | (9 + u % 5) << 10 | ((u >> 4) & 0x3ff));
                block[at[s]] = (uint8_t)half, block[at[s] + 1] = (uint8_t)(half >> 8);
            }
    }
    return b;
}

/* a quantised product or rows dequantised: d = {type, m (rows), n (W's rows), k, beta, an index out of range}
 */
static bool run_quant(struct harness *h, const struct row *r, const char *what)
{
    ember_dtype type = (ember_dtype)r->d[0];
    int64_t m = r->d[1], n = r->d[2], k = r->d[3], elements = 1, bytes = 1;
    ember_quant_block(type, &elements, &bytes);
    size_t words;
    uint8_t *w = random_blocks(h, type, n * (k / elements), &words);
    float *x = random_floats(h, (size_t)(m * k), -1, 1, false),
          *y0 = random_floats(h, (size_t)(m * n), -1, 1, false);
    size_t outs = strcmp(r->prim, "quant_matmul") == 0 ? (size_t)(m * n) : (size_t)(m * k);
    float *want = malloc(outs * 4), *got = malloc(outs * 4);
    struct dbuf dw = {0}, dx = {0}, dy = {0}, di = {0};
    bool ok = dbuf_new(h, words, w, &dw);
    if (strcmp(r->prim, "quant_matmul") == 0) {
        struct ember_quant_gemm q = {.type = type, .m = m, .n = n, .k = k, .beta = (float)r->d[4]};
        memcpy(want, y0, outs * 4);
        ref_quant_matmul(NULL, &q, REF_PTR(x), REF_PTR(w), REF_PTR(want));
        ok = ok && dbuf_new(h, (size_t)(m * k), x, &dx) && dbuf_new(h, outs, y0, &dy);
        ember_status st = ok ? h->ops->quant_matmul(h->dev, &q, at(dx), at(dw), at(dy)) : EMBER_ERR_NOMEM;
        ok = ok && st == EMBER_OK && dbuf_fetch(h, dy, got, what) &&
             compare_f32(what, got, want, outs, TOL_GEMM);
    } else { /* dequantize m rows of the n: by an index (with one outside when asked), or all of them */
        int32_t *index = malloc((size_t)m * 4);
        for (int64_t i = 0; i < m; i++)
            index[i] = (int32_t)(ember_rng_u32(&h->rng) % (uint32_t)n);
        if (r->d[5])
            index[m / 2] = (int32_t)n, index[m / 3] = -1;
        bool indexed = m != n;
        ref_dequantize(NULL, type, m, k, n, indexed ? REF_PTR(index) : (ember_ptr){0}, REF_PTR(w),
                       REF_PTR(want));
        ok = ok && (!indexed || dbuf_new(h, (size_t)m, index, &di)) && dbuf_new(h, outs, NULL, &dy);
        ember_status st =
            ok ? h->ops->dequantize(h->dev, type, m, k, n, indexed ? at(di) : (ember_ptr){0}, at(dw), at(dy))
               : EMBER_ERR_NOMEM;
        ok = ok && st == EMBER_OK && dbuf_fetch(h, dy, got, what) &&
             compare_f32(what, got, want, outs, TOL_EXACTISH);
        free(index);
    }
    dbuf_free(h, &dw), dbuf_free(h, &dx), dbuf_free(h, &dy), dbuf_free(h, &di);
    free(w), free(x), free(y0), free(want), free(got);
    return ok;
}

/* rotary positions: d = {batch, seq, heads, dim, rot, position, neox, inverse, in place} */
static bool run_rope(struct harness *h, const struct row *r, const char *what)
{
    struct ember_rope rp = {.batch = r->d[0],
                            .seq = r->d[1],
                            .heads = r->d[2],
                            .dim = r->d[3],
                            .rot = r->d[4],
                            .position = r->d[5],
                            .neox = r->d[6] != 0,
                            .inverse = r->d[7] != 0};
    size_t n = (size_t)(rp.batch * rp.seq * rp.heads * rp.dim),
           angles = (size_t)((rp.position + rp.seq) * rp.rot);
    float *x = random_floats(h, n, -2, 2, true), *table = malloc(angles * 4), *want = malloc(n * 4),
          *got = malloc(n * 4);
    for (size_t i = 0; i < angles / 2; i++) { /* any angles: the primitive takes the table as given */
        double a = ember_rng_uniform(&h->rng, -3.2f, 3.2f);
        table[2 * i] = (float)cos(a), table[2 * i + 1] = (float)sin(a);
    }
    ref_rope(NULL, &rp, REF_PTR(x), REF_PTR(table), REF_PTR(want));
    struct dbuf dx = {0}, dt = {0}, dy = {0};
    bool in_place = r->d[8] != 0;
    bool ok =
        dbuf_new(h, n, x, &dx) && dbuf_new(h, angles, table, &dt) && (in_place || dbuf_new(h, n, NULL, &dy));
    struct dbuf out = in_place ? dx : dy;
    ok = ok && h->ops->rope(h->dev, &rp, at(dx), at(dt), at(out)) == EMBER_OK &&
         dbuf_fetch(h, out, got, what) && compare_f32(what, got, want, n, TOL_EXACTISH);
    dbuf_free(h, &dx), dbuf_free(h, &dt), dbuf_free(h, &dy);
    free(x), free(table), free(want), free(got);
    return ok;
}

static const struct row rows[] = {
    {"fill", "1 element", run_fill, {1}},
    {"fill", "1000003 elements", run_fill, {1000003}},
/* unary and binary: {op, layout, r, c, s}. Every op of base/elementwise-impl.h dense and strided
 * (where each GPU kernel takes its own path: elementwise.kc), from its row: a row added there is
 * tested here on every backend, NaN, Inf and signed zeros among its inputs */
#define UNARY_ROWS(NAME, name, ...)                                                                          \
    {"unary", #name " dense", run_ewise, {U(NAME), DENSE, 70001}},                                           \
        {"unary", #name " permuted 3d", run_ewise, {U(NAME), PERMUTED_3D, 5, 7, 9}},
#define BINARY_ROWS(NAME, name, ...)                                                                         \
    {"binary", #name " dense", run_ewise, {U(NAME), DENSE, 70001}},                                          \
        {"binary", #name " column broadcast", run_ewise, {U(NAME), B_COL_BROADCAST, 33, 129}},
#define BACKWARD_ROWS(NAME, name, ...)                                                                       \
    {"binary", #name "_backward dense", run_ewise, {U(NAME##_BACKWARD), DENSE, 70001}},                      \
        {"binary", #name "_backward transposed", run_ewise, {U(NAME##_BACKWARD), A_TRANSPOSED, 31, 67}},
    EMBER_UNARY_PRIMITIVES(UNARY_ROWS) EMBER_ACTIVATIONS(UNARY_ROWS) EMBER_BINARY_PRIMITIVES(BINARY_ROWS)
        EMBER_ACTIVATIONS(BACKWARD_ROWS)
#undef UNARY_ROWS
#undef BINARY_ROWS
#undef BACKWARD_ROWS
    /* the layouts: sizes of 1, long rows, broadcasts, transposes, six axes */
    {"unary", "copy dense 1", run_ewise, {U(COPY), DENSE, 1}},
    {"unary", "copy dense 100003", run_ewise, {U(COPY), DENSE, 100003}},
    {"unary", "copy transposed", run_ewise, {U(COPY), A_TRANSPOSED, 37, 53}},
    {"unary", "relu transposed", run_ewise, {U(RELU), A_TRANSPOSED, 129, 7}},
    {"unary", "copy broadcast row", run_ewise, {U(COPY), B_ROW_BROADCAST, 17, 33}},
    {"unary", "scale strided out", run_ewise, {U(SCALE), OUT_STRIDED, 999}},
    {"unary", "copy reversed 6d", run_ewise, {U(COPY), REVERSED_6D, 3, 4, 5}},
    {"unary", "exp reversed 6d", run_ewise, {U(EXP), REVERSED_6D, 2, 3, 7}},
    {"unary", "tanh reversed 6d", run_ewise, {U(TANH), REVERSED_6D, 2, 3, 7}},
    {"unary", "gelu tiled 4d", run_ewise, {U(GELU), TILED_4D, 2, 3, 40}},
    {"unary", "rsqrt broadcast row", run_ewise, {U(RSQRT), B_ROW_BROADCAST, 17, 33}},
    /* long last axes: the GPU backends copy these row by row */
    {"unary", "copy bias over 3d (conv2d's)", run_ewise, {U(COPY), BIAS_3D, 5, 7, 300}},
    {"unary", "copy permuted 3d, long rows", run_ewise, {U(COPY), PERMUTED_3D, 3, 5, 100}},
    {"unary", "copy tiled 4d, long rows", run_ewise, {U(COPY), TILED_4D, 3, 4, 65}},
    {"unary", "relu tiled 4d", run_ewise, {U(RELU), TILED_4D, 2, 3, 40}},
    {"binary", "add row broadcast", run_ewise, {U(ADD), B_ROW_BROADCAST, 65, 10}},
    {"binary", "div column broadcast, long rows", run_ewise, {U(DIV), B_COL_BROADCAST, 7, 1000}},
    {"binary", "mul transposed", run_ewise, {U(MUL), A_TRANSPOSED, 31, 67}},
    {"binary", "mul permuted 3d", run_ewise, {U(MUL), PERMUTED_3D, 6, 5, 13}},
    {"binary", "add strided out", run_ewise, {U(ADD), OUT_STRIDED, 777}},
    {"binary", "mul reversed 6d", run_ewise, {U(MUL), REVERSED_6D, 3, 5, 2}},
    {"binary", "tanh_backward reversed 6d", run_ewise, {U(TANH_BACKWARD), REVERSED_6D, 3, 5, 2}},
    {"binary", "add bias over 3d", run_ewise, {U(ADD), BIAS_3D, 4, 6, 77}},
    {"binary", "div tiled 4d", run_ewise, {U(DIV), TILED_4D, 2, 5, 33}},
    {"binary", "gelu_backward permuted 3d", run_ewise, {U(GELU_BACKWARD), PERMUTED_3D, 6, 5, 13}},
    {"binary",
     "sigmoid_backward column broadcast",
     run_ewise,
     {U(SIGMOID_BACKWARD), B_COL_BROADCAST, 33, 129}},
    /* reduce: {op, outer, r, inner, beta, specials} */
    {"reduce", "sum all", run_reduce, {U(SUM), 1, 100003, 1, 0, 0}},
    {"reduce", "sum rows", run_reduce, {U(SUM), 129, 784, 1, 0, 0}},
    {"reduce", "sum columns, accumulate", run_reduce, {U(SUM), 1, 64, 3136, 1, 0}},
    {"reduce", "sum middle axis", run_reduce, {U(SUM), 7, 13, 300, 0, 0}},
    {"reduce", "sum of one", run_reduce, {U(SUM), 17, 1, 5, 1, 0}},
    {"reduce", "sum with NaN and Inf", run_reduce, {U(SUM), 3, 50, 2, 0, 1}},
    {"reduce", "max rows", run_reduce, {U(MAX), 65, 10, 1, 0, 0}},
    {"reduce", "max middle axis", run_reduce, {U(MAX), 3, 33, 17, 0, 0}},
    {"reduce", "max with NaN and Inf", run_reduce, {U(MAX), 4, 40, 3, 0, 1}},
    /* sizes no work-group divides: rows longer than a group, inner wider than one */
    {"reduce", "sum rows of 1000", run_reduce, {U(SUM), 3, 1000, 1, 0, 0}},
    {"reduce", "max rows of 257, NaN and Inf", run_reduce, {U(MAX), 5, 257, 1, 0, 1}},
    {"reduce", "sum long r, inner 3, accumulate", run_reduce, {U(SUM), 2, 5000, 3, 1, 0}},
    {"reduce", "sum inner 1000", run_reduce, {U(SUM), 2, 7, 1000, 0, 0}},
    {"reduce", "sum over nothing (r = 0)", run_reduce, {U(SUM), 3, 0, 4, 1, 0}},
    /* rows (inner 1), which the GPU backends reduce a row per work-item or per group */
    {"reduce", "sum short rows, accumulate", run_reduce, {U(SUM), 300, 3, 1, 1, 0}},
    {"reduce", "max rows of 13, NaN and Inf", run_reduce, {U(MAX), 70, 13, 1, 0, 1}},
    {"reduce", "sum 1024 rows of 784 (conv bias grad)", run_reduce, {U(SUM), 1024, 784, 1, 0, 0}},
    {"reduce", "sum rows of nothing (r = 0)", run_reduce, {U(SUM), 5, 0, 1, 1, 0}},
    /* sgemm: {m, n, k, trans_a, trans_b, batch, share_a, beta} */
    {"sgemm", "1x1x1", run_sgemm, {1, 1, 1, 0, 0, 1, 0, 0}},
    {"sgemm", "odd sizes", run_sgemm, {17, 33, 9, 0, 0, 1, 0, 0}},
    {"sgemm", "A transposed, accumulate", run_sgemm, {31, 20, 45, 1, 0, 1, 0, 1}},
    {"sgemm", "B transposed", run_sgemm, {64, 10, 300, 0, 1, 1, 0, 0}},
    {"sgemm", "both transposed", run_sgemm, {13, 29, 71, 1, 1, 1, 0, 1}},
    {"sgemm", "large k", run_sgemm, {10, 16, 3136, 0, 0, 1, 0, 0}},
    {"sgemm", "batched, shared A (conv forward)", run_sgemm, {16, 196, 9, 0, 0, 5, 1, 1}},
    {"sgemm", "batched, B transposed (conv weight grad)", run_sgemm, {16, 9, 196, 0, 1, 3, 0, 0}},
    {"sgemm", "batched, shared A transposed (conv input grad)", run_sgemm, {9, 100, 16, 1, 0, 4, 1, 0}},
    {"sgemm", "129 x 65 x 33", run_sgemm, {129, 65, 33, 0, 0, 1, 0, 0}},
    /* past whole tiles each way (GPU backends' tiled path), with ragged edges */
    {"sgemm", "batched, big k, accumulate", run_sgemm, {70, 66, 1000, 0, 0, 3, 0, 1}},
    {"sgemm", "batched, both transposed", run_sgemm, {130, 67, 40, 1, 1, 2, 0, 1}},
    {"sgemm", "A transposed, shared", run_sgemm, {65, 129, 17, 1, 0, 2, 1, 0}},
    {"sgemm", "conv weight grad at training size", run_sgemm, {16, 9, 784, 0, 1, 8, 0, 0}},
    {"sgemm", "fc forward at training size", run_sgemm, {64, 10, 3136, 0, 1, 1, 0, 0}},
    /* few rows, many columns, B as stored (GPU backends' sgemm_wide): ragged blocks both ways */
    {"sgemm", "wide, A transposed, accumulate", run_sgemm, {37, 70, 20, 1, 0, 2, 0, 1}},
    {"sgemm", "wide, k = 3, accumulate", run_sgemm, {5, 1001, 3, 0, 0, 1, 0, 1}},
    {"sgemm", "conv forward at training size", run_sgemm, {16, 784, 9, 0, 0, 4, 1, 1}},
    {"sgemm", "fc input grad at training size", run_sgemm, {64, 3136, 10, 0, 0, 1, 0, 0}},
    {"sgemm", "fc weight grad at training size", run_sgemm, {10, 3136, 64, 1, 0, 1, 0, 1}},
    /* the CPU's skinny kernels (backends/cpu/cpu-gemm-skinny.c): dots of every tile width, an odd last
     * row, k with and without a tail; columns with a ragged last block */
    {"sgemm", "B transposed, 12 wide, accumulate", run_sgemm, {5, 12, 17, 0, 1, 1, 0, 1}},
    {"sgemm", "B transposed, 11 wide", run_sgemm, {4, 11, 40, 0, 1, 2, 0, 0}},
    {"sgemm", "B transposed, 1 wide, k = 8", run_sgemm, {3, 1, 8, 0, 1, 1, 0, 0}},
    {"sgemm", "A transposed, 7 rows, ragged columns, accumulate", run_sgemm, {7, 1003, 33, 1, 0, 2, 0, 1}},
    {"sgemm", "A transposed, 12 rows", run_sgemm, {12, 64, 5, 1, 0, 1, 0, 0}},
    /* a small C over a long k (sgemm_split, or runs of k), k no run divides */
    {"sgemm", "small C, long k, A transposed", run_sgemm, {3, 5, 1000, 1, 0, 2, 0, 1}},
    {"sgemm", "small C, long k, B transposed", run_sgemm, {7, 3, 555, 0, 1, 1, 0, 0}},
    {"sgemm", "small C, very long k, accumulate", run_sgemm, {6, 2, 20001, 0, 1, 1, 0, 1}},
    {"sgemm", "small C, long k, as stored", run_sgemm, {9, 6, 333, 0, 0, 3, 0, 0}},
    /* B a few columns wide as stored (a convolution over a plane of few positions): the CPU
     * copies its columns into rows for the dot-product kernel (cpu-gemm-skinny.c, "narrow B") */
    {"sgemm", "narrow B, a 2x2 plane's 4 columns", run_sgemm, {64, 4, 576, 0, 0, 1, 0, 0}},
    {"sgemm",
     "narrow B, 8 wide, odd rows, k past a block, shared A, accumulate",
     run_sgemm,
     {33, 8, 4100, 0, 0, 3, 1, 1}},
    {"sgemm", "narrow B, 7 wide, accumulate", run_sgemm, {17, 7, 70, 0, 0, 1, 0, 1}},
    /* kerascnn's linear layer (the CPU's short-k, blocked dots and prefetching columns) */
    {"sgemm", "fc forward, kerascnn's 21632 long", run_sgemm, {64, 10, 21632, 0, 1, 1, 0, 0}},
    {"sgemm", "fc input grad, kerascnn's 21632 wide", run_sgemm, {64, 21632, 10, 0, 0, 1, 0, 0}},
    {"sgemm", "fc weight grad, kerascnn's 21632 wide, accumulate", run_sgemm, {10, 21632, 64, 1, 0, 1, 0, 1}},
    {"sgemm", "short k, ragged rows and columns, accumulate", run_sgemm, {7, 4099, 10, 0, 0, 1, 0, 1}},
    {"sgemm", "short k = 16, shared A, batched", run_sgemm, {3, 5000, 16, 0, 0, 2, 1, 0}},
    /* batches past the grid's 65535 along z */
    {"sgemm", "wide, batch of 70000", run_sgemm, {1, 32, 2, 0, 0, 70000, 1, 0}},
    {"sgemm", "long k, batch of 70000", run_sgemm, {1, 1, 32, 0, 1, 70000, 0, 0}},
    /* im2col / col2im: {n, c, h, w, kh, kw, stride, pad} */
    {"im2col", "3x3 pad 1", run_conv, {2, 3, 9, 7, 3, 3, 1, 1}},
    {"im2col", "3x3 valid", run_conv, {3, 1, 28, 28, 3, 3, 1, 0}},
    {"im2col", "stride 2 pad 2, rectangular", run_conv, {2, 2, 11, 8, 3, 2, 2, 2}},
    {"im2col", "1x1", run_conv, {2, 4, 5, 5, 1, 1, 1, 0}},
    {"im2col", "5x3 stride 2 pad 2", run_conv, {3, 2, 19, 23, 5, 3, 2, 2}},
    {"im2col", "at training size", run_conv, {64, 1, 28, 28, 3, 3, 1, 1}},
    {"im2col", "same width, 3x5, taller out", run_conv, {2, 2, 6, 2, 3, 5, 1, 2}},
    {"im2col", "same width, 5x5 on 1x1", run_conv, {2, 3, 1, 1, 5, 5, 1, 2}},
    {"im2col", "stride 1, wider out", run_conv, {2, 2, 7, 6, 3, 2, 1, 1}},
    {"col2im", "3x3 pad 1", run_conv, {2, 3, 9, 7, 3, 3, 1, 1}},
    {"col2im", "stride 2 pad 2, rectangular", run_conv, {2, 2, 11, 8, 3, 2, 2, 2}},
    {"col2im", "5x5 stride 3", run_conv, {1, 2, 17, 13, 5, 5, 3, 1}},
    /* conv_winograd: {n, c, h, w, oc, pad, pass, beta}; odd sizes leave half tiles at the
     * bottom and right edges, pad 0 and 2 shift the tiles off and past x's edge */
    {"conv_winograd", "forward pad 1, odd sizes", run_winograd, {2, 3, 9, 7, 5, 1, WINO_FORWARD, 0}},
    {"conv_winograd", "forward pad 0, even", run_winograd, {3, 4, 10, 8, 2, 0, WINO_FORWARD, 0}},
    {"conv_winograd", "forward pad 2, odd", run_winograd, {2, 2, 5, 11, 3, 2, WINO_FORWARD, 0}},
    {"conv_winograd", "forward onto bias (beta 1)", run_winograd, {2, 5, 7, 7, 4, 1, WINO_FORWARD, 1}},
    {"conv_winograd", "forward 1x1 input, pad 1", run_winograd, {2, 3, 1, 1, 2, 1, WINO_FORWARD, 0}},
    {"conv_winograd", "forward 3x3 input, pad 0", run_winograd, {1, 2, 3, 3, 2, 0, WINO_FORWARD, 0}},
    {"conv_winograd", "forward at ResNet-8 size", run_winograd, {4, 16, 32, 32, 16, 1, WINO_FORWARD, 0}},
    {"conv_winograd", "forward many channels", run_winograd, {3, 67, 8, 8, 33, 1, WINO_FORWARD, 0}},
    {"conv_winograd", "input grad pad 1, odd", run_winograd, {2, 3, 9, 7, 5, 1, WINO_INPUT_GRAD, 0}},
    {"conv_winograd", "input grad pad 0", run_winograd, {3, 4, 10, 9, 2, 0, WINO_INPUT_GRAD, 0}},
    {"conv_winograd", "input grad pad 2", run_winograd, {2, 2, 6, 5, 3, 2, WINO_INPUT_GRAD, 0}},
    {"conv_winograd", "input grad 2x2 input", run_winograd, {2, 3, 2, 2, 4, 1, WINO_INPUT_GRAD, 0}},
    {"conv_winograd", "input grad many channels", run_winograd, {3, 33, 8, 7, 67, 1, WINO_INPUT_GRAD, 0}},
    {"conv_winograd", "weight grad pad 1, odd", run_winograd, {2, 3, 9, 7, 5, 1, WINO_WEIGHT_GRAD, 0}},
    {"conv_winograd", "weight grad pad 0", run_winograd, {3, 4, 7, 10, 2, 0, WINO_WEIGHT_GRAD, 0}},
    {"conv_winograd", "weight grad pad 2", run_winograd, {2, 2, 5, 6, 3, 2, WINO_WEIGHT_GRAD, 0}},
    {"conv_winograd", "weight grad accumulated", run_winograd, {2, 5, 7, 9, 4, 1, WINO_WEIGHT_GRAD, 1}},
    /* clang-format off */
    {"conv_winograd", "weight grad at ResNet-8 size", run_winograd, {8, 16, 32, 32, 16, 1, WINO_WEIGHT_GRAD, 0}},
    {"conv_winograd", "weight grad, groups of images", run_winograd, {70, 8, 16, 16, 8, 1, WINO_WEIGHT_GRAD, 1}},
    /* clang-format on */
    /* conv_direct: {n, c, h, w, kh, kw, stride, pad, oc, pass, beta}: every pass at odd sizes, strides
     * and paddings, 1x1 and rectangular kernels, channel counts past a block of rows (8, 4) */
    /* clang-format off */
    /* conv_grouped: {n, c, h, w, kh, kw, stride, pad, oc, pass, beta, slices, groups}; depthwise
     * (groups = c = oc) as MobileNets run it, a channel multiplier, and groups of several channels */
    {"conv_grouped", "depthwise 3x3 pad 1", run_grouped, {2, 8, 9, 7, 3, 3, 1, 1, 8, WINO_FORWARD, 0, 0, 8}},
    {"conv_grouped", "depthwise stride 2, onto bias", run_grouped, {2, 6, 12, 11, 3, 3, 2, 1, 6, WINO_FORWARD, 1, 0, 6}},
    {"conv_grouped", "depthwise 5x5 stride 2 pad 2", run_grouped, {3, 5, 15, 14, 5, 5, 2, 2, 5, WINO_FORWARD, 0, 0, 5}},
    {"conv_grouped", "2 outputs a channel", run_grouped, {2, 4, 8, 8, 3, 3, 1, 1, 8, WINO_FORWARD, 0, 0, 4}},
    {"conv_grouped", "groups of 3 channels, 5x3", run_grouped, {2, 6, 10, 9, 5, 3, 1, 2, 4, WINO_FORWARD, 0, 0, 2}},
    {"conv_grouped", "input grad depthwise", run_grouped, {2, 8, 9, 7, 3, 3, 1, 1, 8, WINO_INPUT_GRAD, 0, 0, 8}},
    {"conv_grouped", "input grad depthwise stride 2", run_grouped, {2, 6, 12, 11, 3, 3, 2, 1, 6, WINO_INPUT_GRAD, 0, 0, 6}},
    {"conv_grouped", "input grad groups of 3, stride 3", run_grouped, {2, 6, 13, 10, 5, 3, 3, 2, 4, WINO_INPUT_GRAD, 0, 0, 2}},
    {"conv_grouped", "weight grad depthwise", run_grouped, {2, 8, 9, 7, 3, 3, 1, 1, 8, WINO_WEIGHT_GRAD, 0, 0, 8}},
    {"conv_grouped", "weight grad accumulated, stride 2", run_grouped, {3, 6, 12, 11, 3, 3, 2, 1, 6, WINO_WEIGHT_GRAD, 1, 0, 6}},
    {"conv_grouped", "weight grad in 3 slices", run_grouped, {8, 4, 9, 9, 3, 3, 1, 1, 8, WINO_WEIGHT_GRAD, 0, 3, 4}},
    {"conv_grouped", "weight grad groups of 3, 5x3", run_grouped, {2, 6, 10, 9, 5, 3, 1, 2, 4, WINO_WEIGHT_GRAD, 0, 0, 2}},
    {"conv_direct", "forward 3x3 pad 1, odd", run_direct, {2, 3, 9, 7, 3, 3, 1, 1, 5, WINO_FORWARD, 0}},
    {"conv_direct", "forward onto bias (beta 1)", run_direct, {2, 5, 7, 7, 3, 3, 1, 1, 11, WINO_FORWARD, 1}},
    {"conv_direct", "forward stride 2 pad 2, 5x3", run_direct, {3, 2, 19, 23, 5, 3, 2, 2, 9, WINO_FORWARD, 0}},
    {"conv_direct", "forward 1x1 stride 2", run_direct, {2, 16, 14, 14, 1, 1, 2, 0, 32, WINO_FORWARD, 0}},
    {"conv_direct", "forward one channel in", run_direct, {5, 1, 28, 28, 3, 3, 1, 1, 16, WINO_FORWARD, 0}},
    {"conv_direct", "forward many channels", run_direct, {3, 67, 8, 8, 3, 3, 1, 1, 33, WINO_FORWARD, 0}},
    /* large enough that a work-item takes 4 (then 2) positions of a row, 27 wide: a ragged last */
    {"conv_direct", "forward, 4 positions a work-item", run_direct, {40, 4, 27, 27, 3, 3, 1, 1, 40, WINO_FORWARD, 1}},
    {"conv_direct", "forward, 2 positions a work-item", run_direct, {24, 2, 27, 27, 3, 3, 1, 1, 40, WINO_FORWARD, 0}},
    {"conv_direct", "input grad, 4 positions a work-item", run_direct, {40, 40, 27, 27, 3, 3, 1, 1, 4, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad 3x3 pad 1, odd", run_direct, {2, 3, 9, 7, 3, 3, 1, 1, 5, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad stride 2 pad 2, 5x3", run_direct, {3, 2, 19, 23, 5, 3, 2, 2, 9, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad 5x5 stride 3", run_direct, {1, 2, 17, 13, 5, 5, 3, 1, 3, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad 1x1 stride 2", run_direct, {2, 16, 14, 14, 1, 1, 2, 0, 32, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad many channels", run_direct, {3, 33, 8, 7, 3, 3, 1, 1, 67, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "weight grad 3x3 pad 1, odd", run_direct, {2, 3, 9, 7, 3, 3, 1, 1, 5, WINO_WEIGHT_GRAD, 0}},
    {"conv_direct", "weight grad accumulated", run_direct, {2, 5, 7, 9, 3, 3, 1, 1, 6, WINO_WEIGHT_GRAD, 1}},
    {"conv_direct", "weight grad stride 2 pad 2, 5x3", run_direct, {3, 2, 19, 23, 5, 3, 2, 2, 9, WINO_WEIGHT_GRAD, 0}},
    {"conv_direct", "weight grad 1x1 stride 2", run_direct, {2, 16, 14, 14, 1, 1, 2, 0, 32, WINO_WEIGHT_GRAD, 0}},
    {"conv_direct", "weight grad, 7x7 planes", run_direct, {70, 8, 7, 7, 3, 3, 1, 1, 8, WINO_WEIGHT_GRAD, 1}},
    {"conv_direct", "weight grad at ResNet-8 size", run_direct, {8, 16, 28, 28, 3, 3, 1, 1, 16, WINO_WEIGHT_GRAD, 0}},
    {"conv_direct", "weight grad in 3 slices", run_direct, {8, 5, 11, 9, 3, 3, 1, 1, 7, WINO_WEIGHT_GRAD, 0, 3}},
    {"conv_direct", "weight grad in slices, 5x3", run_direct, {7, 3, 13, 12, 5, 3, 2, 2, 6, WINO_WEIGHT_GRAD, 1, 4}},
    {"conv_direct", "weight grad 1x1 in slices", run_direct, {6, 19, 6, 6, 1, 1, 1, 0, 5, WINO_WEIGHT_GRAD, 0, 2}},
    {"conv_direct", "input grad 5x5 pad 2, stride 1", run_direct, {2, 4, 10, 9, 5, 5, 1, 2, 6, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad 3x3 pad 0", run_direct, {2, 3, 8, 10, 3, 3, 1, 0, 5, WINO_INPUT_GRAD, 0}},
    {"conv_direct", "input grad 3x5, stride 1", run_direct, {2, 3, 8, 10, 3, 5, 1, 1, 4, WINO_INPUT_GRAD, 0}},
    /* clang-format on */
    /* F(4x4, 3x3): {..., 4}; heights and widths 1, 2 and 3 past a multiple of 4 */
    {"conv_winograd", "4x4 tiles: forward pad 1, odd", run_winograd, {2, 3, 9, 7, 5, 1, WINO_FORWARD, 0, 4}},
    {"conv_winograd", "4x4 tiles: forward pad 0", run_winograd, {3, 4, 10, 8, 2, 0, WINO_FORWARD, 0, 4}},
    /* clang-format off */
    {"conv_winograd", "4x4 tiles: forward pad 2, onto bias", run_winograd, {2, 2, 5, 11, 3, 2, WINO_FORWARD, 1, 4}},
    {"conv_winograd", "4x4 tiles: forward at ResNet-8 size", run_winograd, {4, 16, 28, 28, 16, 1, WINO_FORWARD, 0, 4}},
    /* clang-format on */
    {"conv_winograd", "4x4 tiles: input grad pad 1", run_winograd, {2, 3, 9, 6, 5, 1, WINO_INPUT_GRAD, 0, 4}},
    {"conv_winograd",
     "4x4 tiles: input grad pad 0",
     run_winograd,
     {3, 4, 10, 9, 2, 0, WINO_INPUT_GRAD, 0, 4}},
    {"conv_winograd", "4x4 tiles: input grad pad 2", run_winograd, {2, 2, 6, 5, 3, 2, WINO_INPUT_GRAD, 0, 4}},
    /* clang-format off */
    {"conv_winograd", "4x4 tiles: weight grad pad 1", run_winograd, {2, 3, 9, 7, 5, 1, WINO_WEIGHT_GRAD, 0, 4}},
    {"conv_winograd", "4x4 tiles: weight grad pad 0, add", run_winograd, {3, 4, 7, 10, 2, 0, WINO_WEIGHT_GRAD, 1, 4}},
    {"conv_winograd", "4x4 tiles: weight grad pad 2", run_winograd, {2, 2, 5, 6, 3, 2, WINO_WEIGHT_GRAD, 0, 4}},
    {"conv_winograd", "4x4 tiles: weight grad, many", run_winograd, {70, 8, 16, 16, 8, 1, WINO_WEIGHT_GRAD, 0, 4}},
    /* clang-format on */
    /* max-pool: {n, c, h, w, k, stride, specials} */
    {"max_pool2d_forward", "2x2 stride 2", run_max_pool2d, {2, 3, 28, 28, 2, 2, 0}},
    {"max_pool2d_forward", "odd size", run_max_pool2d, {1, 2, 7, 9, 2, 2, 0}},
    {"max_pool2d_forward", "3x3 stride 2, overlapping", run_max_pool2d, {2, 2, 11, 11, 3, 2, 0}},
    {"max_pool2d_forward", "with NaN and Inf", run_max_pool2d, {1, 1, 8, 8, 2, 2, 1}},
    {"max_pool2d_forward", "3x3 stride 3, many planes", run_max_pool2d, {3, 5, 13, 11, 3, 3, 0}},
    {"max_pool2d_forward", "at training size", run_max_pool2d, {64, 16, 28, 28, 2, 2, 0}},
    {"max_pool2d_forward",
     "2x2, 9 wide and odd: eight lanes overlapping",
     run_max_pool2d,
     {2, 3, 6, 19, 2, 2, 0}},
    {"max_pool2d_backward", "2x2 stride 2", run_max_pool2d, {2, 3, 28, 28, 2, 2, 0}},
    {"max_pool2d_backward", "2x2, odd height and width", run_max_pool2d, {2, 3, 7, 19, 2, 2, 0}},
    {"max_pool2d_backward", "2x2 with NaN and Inf", run_max_pool2d, {1, 1, 8, 8, 2, 2, 1}},
    {"max_pool2d_backward", "3x3 stride 1, overlapping", run_max_pool2d, {2, 2, 9, 10, 3, 1, 0}},
    {"max_pool2d_backward", "2x2 stride 3, gaps", run_max_pool2d, {1, 2, 11, 9, 2, 3, 0}},
    {"max_pool2d_backward", "with NaN and Inf", run_max_pool2d, {1, 1, 8, 8, 2, 2, 1}},
    /* stride >= k scatters into zeros; stride < k gathers */
    {"max_pool2d_backward", "2x2 stride 2, odd size", run_max_pool2d, {2, 3, 7, 9, 2, 2, 0}},
    {"max_pool2d_backward", "3x3 stride 3, ragged edges", run_max_pool2d, {3, 5, 13, 11, 3, 3, 0}},
    {"max_pool2d_backward", "3x3 stride 2, overlapping", run_max_pool2d, {2, 2, 11, 11, 3, 2, 0}},
    {"max_pool2d_backward", "2x2 stride 2 with NaN and Inf", run_max_pool2d, {2, 3, 10, 12, 2, 2, 1}},
    {"max_pool2d_backward", "at training size", run_max_pool2d, {64, 16, 28, 28, 2, 2, 0}},
    /* average-pool: {n, c, h, w, k, stride} */
    {"avg_pool2d_forward", "2x2 stride 2", run_avg_pool2d, {2, 3, 28, 28, 2, 2}},
    {"avg_pool2d_forward", "3x3 stride 2, overlapping, odd size", run_avg_pool2d, {2, 2, 11, 13, 3, 2}},
    {"avg_pool2d_forward", "whole plane (global)", run_avg_pool2d, {3, 5, 7, 7, 7, 1}},
    {"avg_pool2d_forward", "at training size", run_avg_pool2d, {64, 16, 28, 28, 2, 2}},
    {"avg_pool2d_backward", "2x2 stride 2", run_avg_pool2d, {2, 3, 28, 28, 2, 2}},
    {"avg_pool2d_backward", "3x3 stride 1, overlapping", run_avg_pool2d, {2, 2, 9, 10, 3, 1}},
    {"avg_pool2d_backward", "2x2 stride 3, gaps", run_avg_pool2d, {1, 2, 11, 9, 2, 3}},
    {"avg_pool2d_backward", "whole plane (global)", run_avg_pool2d, {3, 5, 7, 7, 7, 1}},
    /* dropout's mask: {n, p x 100, seed} */
    {"dropout_mask", "p 0.5", run_dropout, {100003, 50, 1}},
    {"dropout_mask", "p 0.1, another seed", run_dropout, {70001, 10, 2}},
    {"dropout_mask", "p 0 keeps everything", run_dropout, {1031, 0, 3}},
    {"dropout_mask", "p 0.9", run_dropout, {1031, 90, 4}},
    /* softmax-cross-entropy: {n, classes, logit scale, bad target} */
    {"cross_entropy_forward", "64 x 10", run_cross_entropy, {64, 10, 3, 0}},
    {"cross_entropy_forward", "one class", run_cross_entropy, {5, 1, 3, 0}},
    {"cross_entropy_forward", "1000 classes, large logits", run_cross_entropy, {7, 1000, 80, 0}},
    {"cross_entropy_forward", "target out of range", run_cross_entropy, {9, 10, 3, 1}},
    {"cross_entropy_forward", "32 classes, large logits", run_cross_entropy, {70, 32, 80, 0}},
    {"cross_entropy_forward", "33 classes, bad target", run_cross_entropy, {5, 33, 5, 1}},
    {"cross_entropy_backward", "64 x 10", run_cross_entropy, {64, 10, 3, 0}},
    {"cross_entropy_backward", "33 x 1000", run_cross_entropy, {33, 1000, 5, 0}},
    /* optimizers: {n, weight decay x1000, step, momentum x100, nesterov} */
    {"adam_step", "step 1", run_optim, {1031, 0, 1, 0, 0}},
    {"adam_step", "step 100, weight decay", run_optim, {100003, 10, 100, 0, 0}},
    {"sgd_step", "plain", run_optim, {1031, 0, 1, 0, 0}},
    {"sgd_step", "momentum, first step", run_optim, {1031, 0, 1, 90, 0}},
    {"sgd_step", "momentum, later step, weight decay", run_optim, {70001, 5, 2, 90, 0}},
    {"sgd_step", "nesterov", run_optim, {1031, 0, 3, 90, 1}},
    /* AdamW: {n, weight decay x1000, step, -, decoupled} */
    {"adam_step", "AdamW, step 7, decoupled decay", run_optim, {70001, 100, 7, 0, 1}},
    /* softmax: {rows, cols, causal_rows, logit scale, specials}; attention's rows are (batch x heads x
     * queries) of keys, gpt-tiny's 128 long */
    {"softmax_forward", "rows of 10", run_softmax, {65, 10, 0, 3, 0}},
    {"softmax_forward", "rows of 1000, large logits", run_softmax, {7, 1000, 0, 80, 0}},
    {"softmax_forward", "with NaN and Inf", run_softmax, {9, 33, 0, 3, 1}},
    {"softmax_forward", "causal 128 x 128, 3 matrices", run_softmax, {384, 128, 128, 5, 0}},
    {"softmax_forward", "causal 13 x 13 (no group divides)", run_softmax, {5 * 13, 13, 13, 5, 0}},
    {"softmax_forward", "causal, 3 new queries over 70 keys (a cache)", run_softmax, {2 * 3, 70, 3, 5, 0}},
    {"softmax_forward", "causal, one query over 129 keys", run_softmax, {4, 129, 1, 5, 0}},
    {"softmax_backward", "rows of 10", run_softmax, {65, 10, 0, 3, 0}},
    {"softmax_backward", "causal 128 x 128", run_softmax, {256, 128, 128, 5, 0}},
    {"softmax_backward", "rows of 1000", run_softmax, {7, 1000, 0, 5, 0}},
    /* layer norm: {rows, cols, offset, eps x 1e6} */
    {"layer_norm_forward", "128 wide", run_layer_norm, {300, 128, 0, 10}},
    {"layer_norm_forward", "odd width, far from zero", run_layer_norm, {17, 77, 1000, 10}},
    {"layer_norm_forward", "1000 wide, large eps", run_layer_norm, {5, 1000, 3, 100000}},
    {"layer_norm_forward", "3 wide", run_layer_norm, {70, 3, 0, 10}},
    {"layer_norm_backward", "128 wide", run_layer_norm, {300, 128, 0, 10}},
    {"layer_norm_backward", "odd width", run_layer_norm, {17, 77, 5, 10}},
    {"layer_norm_backward", "1000 wide", run_layer_norm, {5, 1000, 0, 10}},
    {"rms_norm_forward", "576 wide (SmolLM2), weighted", run_rms_norm, {64, 576, 0, 10, 1}},
    {"rms_norm_forward", "odd width, far from zero", run_rms_norm, {17, 77, 1000, 10, 1}},
    {"rms_norm_forward", "1000 wide, large eps, no weight", run_rms_norm, {5, 1000, 0, 100000, 0}},
    {"rms_norm_forward", "3 wide, one row, no weight", run_rms_norm, {1, 3, 0, 10, 0}},
    {"batch_norm_stats", "16 channels of 28x28", run_batch_norm, {9, 16, 784, 0, 10, 1}},
    {"batch_norm_stats", "planes of 7x7, far from zero", run_batch_norm, {33, 5, 49, 1000, 10, 1}},
    {"batch_norm_stats", "(N, C): planes of one value", run_batch_norm, {70, 13, 1, 3, 10, 1}},
    {"batch_norm_stats", "two values a channel, large eps", run_batch_norm, {2, 3, 1, 0, 100000, 1}},
    {"batch_norm_stats", "odd planes of 300", run_batch_norm, {3, 7, 300, -5, 10, 1}},
    {"batch_norm_forward", "16 channels of 28x28", run_batch_norm, {9, 16, 784, 0, 10, 1}},
    {"batch_norm_forward", "(N, C), far from zero", run_batch_norm, {70, 13, 1, 1000, 10, 1}},
    {"batch_norm_backward", "16 channels of 28x28", run_batch_norm, {9, 16, 784, 0, 10, 1}},
    {"batch_norm_backward", "planes of 7x7", run_batch_norm, {33, 5, 49, 2, 10, 1}},
    {"batch_norm_backward", "(N, C)", run_batch_norm, {70, 13, 1, 0, 10, 1}},
    {"batch_norm_backward", "running statistics (evaluation)", run_batch_norm, {6, 4, 300, 0, 10, 0}},
    {"batch_norm_forward", "with the ReLU", run_batch_norm, {9, 16, 784, 0, 10, 1, 1}},
    {"batch_norm_backward", "with the ReLU", run_batch_norm, {9, 16, 784, 0, 10, 1, 1}},
    {"batch_norm_backward", "with the ReLU, planes of 7x7", run_batch_norm, {33, 5, 49, 2, 10, 1, 1}},
    {"batch_norm_backward", "with the ReLU, running statistics", run_batch_norm, {6, 4, 300, 0, 10, 0, 1}},
    /* embedding: {n, dim, vocab, an index out of range} */
    {"embedding_forward", "4096 x 128 of 65", run_embedding, {4096, 128, 65, 0}},
    {"embedding_forward", "odd sizes, indices out of range", run_embedding, {301, 33, 7, 1}},
    {"embedding_forward", "one wide", run_embedding, {100, 1, 256, 0}},
    {"embedding_backward", "4096 x 128 of 65", run_embedding, {4096, 128, 65, 0}},
    {"embedding_backward", "odd sizes, indices out of range", run_embedding, {301, 33, 7, 1}},
    {"embedding_backward", "vocabulary larger than the rows", run_embedding, {50, 70, 300, 0}},
    /* quant_matmul: {type, m, n, k, beta}; one row of x is generation, a few a prompt's tail */
    {"quant_matmul", "Q4_0, one row", run_quant, {EMBER_Q4_0, 1, 37, 96, 0}},
    {"quant_matmul", "Q4_1, one row, onto a bias", run_quant, {EMBER_Q4_1, 1, 37, 576, 1}},
    {"quant_matmul", "Q4_1, 11 rows", run_quant, {EMBER_Q4_1, 11, 29, 160, 0}},
    {"quant_matmul", "Q8_0, 3 rows", run_quant, {EMBER_Q8_0, 3, 41, 96, 1}},
    {"quant_matmul", "Q4_K, 2 rows", run_quant, {EMBER_Q4_K, 2, 19, 512, 0}},
    {"quant_matmul", "Q6_K, 5 rows", run_quant, {EMBER_Q6_K, 5, 23, 256, 0}},
    /* dequantize: {type, rows, of n, k, -, an index out of range}; rows == n: all of them, no index */
    {"dequantize", "Q4_0 rows by index", run_quant, {EMBER_Q4_0, 17, 9, 64, 0, 1}},
    {"dequantize", "Q4_1, every row", run_quant, {EMBER_Q4_1, 13, 13, 96, 0, 0}},
    {"dequantize", "Q8_0 rows by index", run_quant, {EMBER_Q8_0, 70, 31, 64, 0, 1}},
    {"dequantize", "Q4_K rows by index", run_quant, {EMBER_Q4_K, 7, 5, 512, 0, 1}},
    {"dequantize", "Q6_K, every row", run_quant, {EMBER_Q6_K, 4, 4, 256, 0, 0}},
    /* rope: {batch, seq, heads, dim, rot, position, neox, inverse, in place} */
    {"rope", "llama's pairs", run_rope, {2, 7, 3, 64, 64, 0, 0, 0, 0}},
    {"rope", "at position 30, in place", run_rope, {1, 5, 9, 64, 64, 30, 0, 0, 1}},
    {"rope", "neox halves, part of each head", run_rope, {3, 4, 2, 40, 24, 2, 1, 0, 0}},
    {"rope", "backward (inverse)", run_rope, {2, 9, 3, 16, 16, 5, 0, 1, 0}},
};
#undef U

/* --------------------------------------------------------------- perf */

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sync_device(struct harness *h)
{
    if (h->ops->sync)
        h->ops->sync(h->dev);
}

/* Times the primitives a simplecnn step at batch 64 runs (Conv2d(1, 16, 3,
 * padding 1), ReLU, MaxPool2d(2), Linear(3136, 10), cross-entropy, Adam),
 * at its shapes, and a square sgemm for scale. Every buffer is refilled
 * before each row, so no row reads another's leftovers. */
static void perf(struct harness *h, const char *backend, int64_t square_n)
{
    enum { REPS = 20 };
    struct dbuf a = {0}, b = {0}, c = {0}, t = {0};
    size_t big = 64 * 16 * 28 * 28 * 9; /* the largest buffer below: im2col of the batch */
    if ((size_t)(square_n * square_n) > big)
        big = (size_t)(square_n * square_n);
    int32_t target[64];
    for (int i = 0; i < 64; i++)
        target[i] = i % 10;
    if (!dbuf_new(h, big, NULL, &a) || !dbuf_new(h, big, NULL, &b) || !dbuf_new(h, big, NULL, &c) ||
        !dbuf_new(h, 64, target, &t)) {
        printf("%-8s perf: could not allocate buffers\n", backend);
        dbuf_free(h, &a), dbuf_free(h, &b), dbuf_free(h, &c), dbuf_free(h, &t);
        return;
    }
    /* clang-format off */
    struct ember_gemm conv = {.m = 16, .n = 784, .k = 9, .lda = 9, .ldb = 784, .ldc = 784, .batch = 64,
                              .stride_b = 9 * 784, .stride_c = 16 * 784, .alpha = 1, .beta = 1};
    struct ember_gemm conv_dw = {.m = 16, .n = 9, .k = 784, .trans_b = true, .lda = 784, .ldb = 784, .ldc = 9,
                                 .batch = 64, .stride_a = 16 * 784, .stride_b = 9 * 784, .stride_c = 16 * 9,
                                 .alpha = 1};
    struct ember_gemm fc = {.m = 64, .n = 10, .k = 3136, .trans_b = true, .lda = 3136, .ldb = 3136, .ldc = 10,
                            .batch = 1, .alpha = 1, .beta = 1};
    struct ember_gemm fc_dx = {.m = 64, .n = 3136, .k = 10, .lda = 10, .ldb = 3136, .ldc = 3136, .batch = 1,
                               /* clang-format on */
                               .alpha = 1};
    struct ember_gemm fc_dw = {.m = 10,
                               .n = 3136,
                               .k = 64,
                               .trans_a = true,
                               .lda = 10,
                               .ldb = 3136,
                               .ldc = 3136,
                               .batch = 1,
                               .alpha = 1};
    struct ember_gemm square = {.m = square_n,
                                .n = square_n,
                                .k = square_n,
                                .lda = square_n,
                                .ldb = square_n,
                                .ldc = square_n,
                                .batch = 1,
                                .alpha = 1};
    char square_name[64];
    snprintf(square_name, sizeof square_name, "sgemm %lldx%lldx%lld", (long long)square_n,
             (long long)square_n, (long long)square_n);
    struct ember_conv_geom g = {
        .n = 64, .c = 1, .h = 28, .w = 28, .kh = 3, .kw = 3, .stride = 1, .pad = 1, .oh = 28, .ow = 28};
    struct ember_ewise add = {.ndim = 1,
                              .dense = true,
                              .numel = 64 * 16 * 784,
                              .shape = {64 * 16 * 784},
                              .stride_out = {1},
                              .stride_a = {1},
                              .stride_b = {1}};
    /* conv2d's bias: b (16) repeated over y (64, 16, 784) */
    struct ember_ewise bias = {.ndim = 3,
                               .numel = 64 * 16 * 784,
                               .shape = {64, 16, 784},
                               .stride_out = {16 * 784, 784, 1},
                               .stride_a = {0, 1, 0}};
    struct ember_adam_step adam = {.lr = 1e-3f,
                                   .beta1 = 0.9f,
                                   .beta2 = 0.999f,
                                   .eps = 1e-8f,
                                   .bias_correction1 = 0.1f,
                                   .bias_correction2 = 0.001f};
    struct ember_pool_geom pool = {
        .n = 64, .c = 16, .h = 28, .w = 28, .k = 2, .stride = 2, .oh = 14, .ow = 14};
    struct ember_reduce conv_db = {.outer = 64 * 16, .r = 784, .inner = 1, .alpha = 1};
    struct ember_reduce batch_sum = {.outer = 1, .r = 64, .inner = 144, .alpha = 1, .beta = 1};
    ember_ptr argmax = {b.buf, GUARD + big / 2}; /* the second half of b */
    ember_ptr adam_v = {c.buf, GUARD + big / 2}; /* Adam's v apart from its parameters */
    for (int which = 0; which < 20; which++) {
        const char *name = NULL, *unit = "GFLOP/s";
        double work = 0; /* flops, or bytes moved */
        double t0 = 0;
        h->ops->fill(h->dev, at(a), big, 0.5f);
        h->ops->fill(h->dev, at(b), big, 0.25f);
        h->ops->fill(h->dev, at(c), big, 0.0f);
        if (which == 8) /* the backward pass reads the argmax of a forward one, over varied values */
            h->ops->max_pool2d_forward(h->dev, &pool, at(c), at(a), argmax);
        for (int rep = -3; rep < REPS; rep++) { /* three reps to warm up */
            if (rep == 0) {
                sync_device(h);
                t0 = seconds();
            }
            switch (which) {
            /* clang-format off */
            case 0: name = "sgemm conv 64x(16x9 @ 9x784)"; work = 2.0 * 64 * 16 * 784 * 9;
                h->ops->sgemm(h->dev, &conv, at(a), at(b), at(c)); break;
            case 1: name = "sgemm fc 64x3136 @ 3136x10"; work = 2.0 * 64 * 3136 * 10;
                h->ops->sgemm(h->dev, &fc, at(a), at(b), at(c)); break;
            case 2: name = square_name; work = 2.0 * (double)square_n * (double)square_n * (double)square_n;
                h->ops->sgemm(h->dev, &square, at(a), at(b), at(c)); break;
            case 3: name = "im2col 64x1x28x28 3x3"; unit = "GB/s"; work = 4.0 * (64 * 784 + 64 * 9 * 784);
                h->ops->im2col(h->dev, &g, at(a), at(c)); break;
            case 4: name = "add 802816 elements"; unit = "GB/s"; work = 12.0 * 802816;
                h->ops->binary(h->dev, EMBER_ADD, &add, at(c), at(a), at(b), 0.0f); break;
            case 5: name = "adam 1M parameters"; unit = "GB/s"; work = 28.0 * 1000000;
                h->ops->adam_step(h->dev, 1000000, &adam, at(c), at(a), at(b), adam_v); break;
            case 6: name = "relu 802816 elements"; unit = "GB/s"; work = 8.0 * 802816;
                h->ops->unary(h->dev, EMBER_RELU, &add, at(c), at(a), 0.0f); break;
            case 7: name = "max_pool2d 64x16x28x28 2x2"; unit = "GB/s"; work = 4.0 * 802816 * 1.5;
                h->ops->max_pool2d_forward(h->dev, &pool, at(a), at(c), argmax); break;
            case 8: name = "max_pool2d backward 64x16x28x28"; unit = "GB/s"; work = 4.0 * 802816 * 1.5;
                h->ops->max_pool2d_backward(h->dev, &pool, at(b), argmax, at(c)); break;
            /* the rest of a simplecnn step */
            case 9: name = "copy conv bias 16 -> 64x16x784"; unit = "GB/s"; work = 4.0 * 802816;
                h->ops->unary(h->dev, EMBER_COPY, &bias, at(c), at(a), 0.0f); break;
            case 10: name = "relu backward 802816 elements"; unit = "GB/s"; work = 12.0 * 802816;
                h->ops->binary(h->dev, EMBER_RELU_BACKWARD, &add, at(c), at(a), at(b), 0.0f); break;
            case 11: name = "sgemm conv dW 64x(16x784 @ 784x9)"; work = 2.0 * 64 * 16 * 9 * 784;
                h->ops->sgemm(h->dev, &conv_dw, at(a), at(b), at(c)); break;
            case 12: name = "sgemm fc dx 64x10 @ 10x3136"; work = 2.0 * 64 * 3136 * 10;
                h->ops->sgemm(h->dev, &fc_dx, at(a), at(b), at(c)); break;
            case 13: name = "sgemm fc dW 10x64 @ 64x3136"; work = 2.0 * 64 * 3136 * 10;
                h->ops->sgemm(h->dev, &fc_dw, at(a), at(b), at(c)); break;
            case 14: name = "reduce conv db 1024 rows of 784"; unit = "GB/s"; work = 4.0 * 802816;
                h->ops->reduce(h->dev, EMBER_SUM, &conv_db, at(c), at(a)); break;
            case 15: name = "reduce conv dW over 64 x 144"; unit = "GB/s"; work = 4.0 * 64 * 144;
                h->ops->reduce(h->dev, EMBER_SUM, &batch_sum, at(c), at(a)); break;
            case 16: name = "cross-entropy forward 64x10"; unit = "GB/s"; work = 4.0 * (2 * 640 + 128);
                h->ops->cross_entropy_forward(h->dev, 64, 10, at(a), at(t), at(c), at(b)); break;
            case 17: name = "cross-entropy backward 64x10"; unit = "GB/s"; work = 4.0 * (2 * 640 + 64);
                h->ops->cross_entropy_backward(h->dev, 64, 10, at(a), at(t), at(b), 1.0f / 64, at(c)); break;
            case 18: name = "adam 31530 parameters"; unit = "GB/s"; work = 28.0 * 31530;
                h->ops->adam_step(h->dev, 31530, &adam, at(c), at(a), at(b), adam_v); break;
            case 19: name = "fill 31530 elements"; unit = "GB/s"; work = 4.0 * 31530;
                h->ops->fill(h->dev, at(c), 31530, 0.0f); break;
                /* clang-format on */
            }
        }
        sync_device(h);
        double dt = (seconds() - t0) / REPS;
        printf("%-8s %-34s %9.1f us  %8.2f %s\n", backend, name, dt * 1e6, work / dt / 1e9, unit);
    }
    dbuf_free(h, &a), dbuf_free(h, &b), dbuf_free(h, &c), dbuf_free(h, &t);
}

/* --------------------------------------------------------------- main */

/* Every primitive of backends/backend.h's list has a row, and every row names
 * one: a primitive added without a parity row fails here; so does an
 * elementwise op. */
static void check_coverage(void)
{
    for (int p = 0; p < EMBER_PRIMITIVE_COUNT; p++) {
        bool covered = false;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !covered; i++)
            covered = strcmp(rows[i].prim, ember_primitive_names[p]) == 0;
        CHECK(covered, "primitive %s has no parity row", ember_primitive_names[p]);
    }
    /* and every elementwise op: the rows above come from base/elementwise-impl.h's, so this holds
     * unless those lines are edited by hand */
    for (int op = 0; op < EMBER_UNARY_COUNT + EMBER_BINARY_COUNT; op++) {
        bool unary = op < EMBER_UNARY_COUNT, covered = false;
        for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !covered; i++)
            covered = rows[i].run == run_ewise && strcmp(rows[i].prim, unary ? "unary" : "binary") == 0 &&
                      rows[i].d[0] == (unary ? op : op - EMBER_UNARY_COUNT);
        CHECK(covered, "%s has no parity row",
              unary ? ember_unary_labels[op] : ember_binary_labels[op - EMBER_UNARY_COUNT]);
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bool known = false;
        for (int p = 0; p < EMBER_PRIMITIVE_COUNT && !known; p++)
            known = strcmp(rows[i].prim, ember_primitive_names[p]) == 0;
        CHECK(known, "row \"%s %s\" names no primitive", rows[i].prim, rows[i].label);
    }
}

int main(int argc, char **argv)
{
    const char *only_prim = NULL, *only_backend = NULL;
    bool do_perf = false;
    int64_t square_n = 512;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            only_prim = argv[++i];
        else if (strcmp(argv[i], "-b") == 0 && i + 1 < argc)
            only_backend = argv[++i];
        else if (strcmp(argv[i], "--perf") == 0)
            do_perf = true;
        else if (strcmp(argv[i], "--perf-square") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            do_perf = true, square_n = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: test_parity [-o PRIMITIVE] [-b BACKEND] [--perf] [--perf-square N]\n");
            return 2;
        }
    }
    check_coverage();
    /* every backend built (its ember_add_backend put it in the registry), the CPU's first */
    int tested = 0, built = 0;
    while (ember_backend_registry[built])
        built++;
    for (int bi = built - 1; bi >= 0; bi--) {
        const char *backend = ember_backend_registry[bi]->name;
        if (only_backend && strcmp(only_backend, backend) != 0)
            continue;
        ember_ctx *ctx = ember_ctx_new();
        ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
        if (ember_ctx_use_device(ctx, backend) != EMBER_OK) {
            printf("%-8s skipped: %s\n", backend, ember_last_error(ctx));
            ember_ctx_free(ctx);
            continue;
        }
        struct harness h = {.ctx = ctx, .ops = ctx->ops, .dev = ctx->dev, .rng = ember_rng_seed(7)};
        printf("%-8s %s\n", backend, ember_ctx_device_name(ctx));
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
            const struct row *r = &rows[i];
            if (only_prim && strcmp(only_prim, r->prim) != 0)
                continue;
            char what[160];
            snprintf(what, sizeof what, "%s %s: %s", backend, r->prim, r->label);
            h.skipped = false;
            bool ok = r->run(&h, r, what);
            printf("%-8s %-22s %-46s %s\n", backend, r->prim, r->label,
                   h.skipped ? "skipped (unsupported)"
                   : ok      ? "ok"
                             : "FAILED");
            if (!ok && test_failures == 0)
                CHECK(false, "%s failed: %s", what, ember_last_error(ctx));
        }
        if (do_perf)
            perf(&h, backend, square_n);
        tested++;
        ember_ctx_free(ctx);
    }
    if (!tested) {
        printf("test_parity: no backend to test%s%s\n", only_backend ? " named " : "",
               only_backend ? only_backend : "");
        return TEST_SKIP;
    }
    return test_finish("test_parity");
}
