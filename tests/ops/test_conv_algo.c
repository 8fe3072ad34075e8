/* SPDX-License-Identifier: MIT */
/*
 * tests/ops/test_conv_algo.c — the choice of a convolution's algorithm
 * (core/conv-algo.c): the same answer for the same shape and device,
 * EMBER_CONV_ALGO forcing one and refusing a misspelling, the profile
 * naming the algorithm that ran, and every algorithm giving im2col's
 * convolution and gradients through ember_conv2d (im2col's images apart and
 * side by side, in one group and in several): the Winograds on the CPU,
 * conv_direct on the CPU (the same bits on 1 and 4 threads) and on a GPU
 * backend (PoCL here).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv-algo-impl.h"
#include "test-util.h"

struct shape_case {
    const char *what;
    int64_t c, oc, h, w, k, stride, pad;
    enum ember_conv_algo on_cpu; /* what auto picks on the CPU where its vector kernels run */
};

static const struct shape_case shapes[] = {
    {"ResNet-8's 3x3 at 28x28, 16 channels", 16, 16, 28, 28, 3, 1, 1, EMBER_CONV_DIRECT},
    {"CIFAR's 32x32, 64 channels", 64, 64, 32, 32, 3, 1, 1, EMBER_CONV_DIRECT},
    {"128 channels at 16x16", 128, 128, 16, 16, 3, 1, 1, EMBER_CONV_WINOGRAD},
    {"128 channels at 8x8, the table's edge", 128, 256, 10, 10, 3, 1, 0, EMBER_CONV_WINOGRAD},
    {"128 channels at 7x7, below it", 128, 128, 9, 9, 3, 1, 0, EMBER_CONV_DIRECT},
    {"127 channels in", 127, 128, 16, 16, 3, 1, 1, EMBER_CONV_DIRECT},
    {"VGG's 3x3 at 14x14, 64 to 128 channels", 64, 128, 14, 14, 3, 1, 1, EMBER_CONV_DIRECT},
    {"3x3 padding 2, 12x11", 16, 32, 10, 9, 3, 1, 2, EMBER_CONV_DIRECT},
    {"7x7 output", 64, 64, 7, 7, 3, 1, 1, EMBER_CONV_DIRECT},
    {"a first layer's 1 channel", 1, 16, 28, 28, 3, 1, 1, EMBER_CONV_DIRECT},
    {"kerascnn's first layer, no padding", 1, 32, 28, 28, 3, 1, 0, EMBER_CONV_DIRECT},
    {"1 channel, 5x5", 1, 6, 28, 28, 5, 1, 2, EMBER_CONV_DIRECT},
    {"1 channel, stride 2", 1, 16, 28, 28, 3, 2, 1, EMBER_CONV_DIRECT},
    {"7 output channels", 16, 7, 28, 28, 3, 1, 1, EMBER_CONV_DIRECT},
    {"stride 2", 16, 32, 28, 28, 3, 2, 1, EMBER_CONV_DIRECT},
    {"1x1 at stride 2", 16, 32, 28, 28, 1, 2, 0, EMBER_CONV_IM2COL},
    {"1x1 projection, the columns the input", 16, 32, 28, 28, 1, 1, 0, EMBER_CONV_IM2COL},
    {"1x1 with padding", 16, 32, 28, 28, 1, 1, 1, EMBER_CONV_IM2COL},
    {"5x5", 16, 16, 28, 28, 5, 1, 2, EMBER_CONV_DIRECT},
    {"3x3 padding 3", 16, 16, 28, 28, 3, 1, 3, EMBER_CONV_DIRECT},
};

static struct ember_conv_geom geom_of(const struct shape_case *s)
{
    struct ember_conv_geom g = {
        .n = 4, .c = s->c, .h = s->h, .w = s->w, .kh = s->k, .kw = s->k, .stride = s->stride, .pad = s->pad};
    g.oh = (g.h + 2 * g.pad - g.kh) / g.stride + 1;
    g.ow = (g.w + 2 * g.pad - g.kw) / g.stride + 1;
    return g;
}

static enum ember_conv_algo choose(ember_ctx *ctx, const struct shape_case *s)
{
    struct ember_conv_geom g = geom_of(s);
    enum ember_conv_algo algo = (enum ember_conv_algo) - 1;
    CHECK(ember_conv_algo_choose(ctx, &g, s->oc, &algo), "%s: no choice: %s", s->what, ember_last_error(ctx));
    return algo;
}

/* auto's table on this device, asked twice; the default when
 * EMBER_CONV_ALGO is unset (core/conv-algo.c says why): conv_direct where
 * the backend's kernels are fast, else im2col. On the CPU that is every
 * layer but a 1x1 one (its columns the input, or a quarter of it), where
 * the vector kernels run (not under EMBER_CPU_SIMD=none, nor on a CPU without
 * AVX2); on a GPU every layer (CUDA always; OpenCL on a GPU device, not on
 * PoCL, a CPU device: the choice there is checked on a lent GPU,
 * docs/gpu-validation.md). Auto on the CPU adds Winograd's 2x2 tiles for
 * 128 channels and more. And EMBER_CONV_ALGO forcing each. */
static void check_choices(ember_ctx *ctx, bool cpu)
{
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const struct shape_case *s = &shapes[i];
        struct ember_conv_geom g = geom_of(s);
        bool kernels = !ctx->ops->conv_direct_fast || ctx->ops->conv_direct_fast(ctx->dev, &g);
        enum ember_conv_algo exact = kernels ? EMBER_CONV_DIRECT : EMBER_CONV_IM2COL;
        CHECK(!cpu || !kernels || exact == s->on_cpu || s->on_cpu == EMBER_CONV_WINOGRAD,
              "%s: the CPU's conv_direct_fast says %s", s->what, kernels ? "yes" : "no");
        enum ember_conv_algo want = cpu && s->on_cpu == EMBER_CONV_WINOGRAD ? EMBER_CONV_WINOGRAD : exact;
        bool applies = s->k == 3 && s->stride == 1 && s->pad <= 2;
        unsetenv("EMBER_CONV_ALGO");
        CHECK(choose(ctx, s) == exact, "%s on %s: unset, EMBER_CONV_ALGO chose %s, not %s", s->what,
              ember_ctx_device_name(ctx), ember_conv_algo_name(choose(ctx, s)), ember_conv_algo_name(exact));
        setenv("EMBER_CONV_ALGO", "auto", 1);
        enum ember_conv_algo first = choose(ctx, s), second = choose(ctx, s);
        CHECK(first == want && second == first, "%s on %s: auto chose %s then %s, not %s", s->what,
              ember_ctx_device_name(ctx), ember_conv_algo_name(first), ember_conv_algo_name(second),
              ember_conv_algo_name(want));
        setenv("EMBER_CONV_ALGO", "im2col", 1);
        CHECK(choose(ctx, s) == EMBER_CONV_IM2COL, "%s: EMBER_CONV_ALGO=im2col did not force im2col",
              s->what);
        setenv("EMBER_CONV_ALGO", "winograd", 1);
        enum ember_conv_algo forced = choose(ctx, s);
        CHECK(forced == (applies ? EMBER_CONV_WINOGRAD : EMBER_CONV_IM2COL),
              "%s: EMBER_CONV_ALGO=winograd chose %s (Winograd %s this shape)", s->what,
              ember_conv_algo_name(forced), applies ? "takes" : "does not take");
        setenv("EMBER_CONV_ALGO", "winograd4", 1);
        forced = choose(ctx, s);
        CHECK(forced == (applies ? EMBER_CONV_WINOGRAD4 : EMBER_CONV_IM2COL),
              "%s: EMBER_CONV_ALGO=winograd4 chose %s (Winograd %s this shape)", s->what,
              ember_conv_algo_name(forced), applies ? "takes" : "does not take");
        setenv("EMBER_CONV_ALGO", "direct", 1);
        CHECK(choose(ctx, s) == EMBER_CONV_DIRECT, "%s: EMBER_CONV_ALGO=direct did not force direct",
              s->what);
    }
    setenv("EMBER_CONV_ALGO", "wingorad", 1);
    struct ember_conv_geom g = geom_of(&shapes[0]);
    enum ember_conv_algo algo;
    CHECK(!ember_conv_algo_choose(ctx, &g, 16, &algo) && ember_last_status(ctx) == EMBER_ERR_ARG &&
              strstr(ember_last_error(ctx), "EMBER_CONV_ALGO=wingorad") &&
              strstr(ember_last_error(ctx), "im2col, winograd, winograd4, direct or auto"),
          "a misspelt EMBER_CONV_ALGO was not refused by name: %s", ember_last_error(ctx));
    unsetenv("EMBER_CONV_ALGO");
}

static ember_tensor *tensor_of(ember_ctx *ctx, int ndim, const int64_t *shape, ember_rng *rng)
{
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, ndim, shape);
    int64_t n = t ? ember_tensor_numel(t) : 0;
    float *v = malloc((size_t)(n + 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = ember_rng_uniform(rng, -1.0f, 1.0f);
    if (t)
        ember_tensor_write(t, v, (size_t)n * sizeof *v);
    ember_tensor_set_requires_grad(t, true);
    free(v);
    return t;
}

struct conv_run {
    float *y, *dx, *dw, *db;
    bool profile_named; /* the profile's rows named the algorithm, forward and backward */
};

/* x (n, c, h, w) and a 3x3 convolution of it to oc channels */
struct conv_size {
    int64_t n, c, h, w, oc;
};
/* a small batch whose planes are 35, 63 and 99 positions at padding 0, 1
 * and 2, above SIDE_BY_SIDE_POSITIONS (core/ops-conv.c): im2col's images
 * apart */
static const struct conv_size small = {3, 12, 9, 7, 10};
/* planes of 12 positions at padding 0, below it: side by side */
static const struct conv_size few_positions = {3, 12, 5, 6, 10};

static size_t numel_x(const struct conv_size *z) { return (size_t)(z->n * z->c * z->h * z->w); }
static size_t numel_w(const struct conv_size *z) { return (size_t)(z->oc * z->c * 9); }
static size_t numel_y(const struct conv_size *z, int pad)
{
    return (size_t)(z->n * z->oc * (z->h + 2 * pad - 2) * (z->w + 2 * pad - 2));
}

/* y = conv2d(x, w, b) and the gradients of sum(y * y), under EMBER_CONV_ALGO=algo */
static bool run_conv(ember_ctx *ctx, const struct conv_size *z, const char *algo, int pad,
                     struct conv_run *out)
{
    int64_t xs[4] = {z->n, z->c, z->h, z->w}, ws[4] = {z->oc, z->c, 3, 3}, bs[1] = {z->oc};
    ember_rng rng = ember_rng_seed(5);
    ember_tensor *x = tensor_of(ctx, 4, xs, &rng), *w = tensor_of(ctx, 4, ws, &rng),
                 *b = tensor_of(ctx, 1, bs, &rng);
    setenv("EMBER_CONV_ALGO", algo, 1);
    ember_profile_start(ctx, false);
    ember_tensor *y = ember_conv2d(x, w, b, 1, pad);
    ember_tensor *loss = y ? ember_sum(ember_mul(y, y), EMBER_ALL_AXES, false) : NULL;
    bool ok = loss && ember_backward(loss) == EMBER_OK;
    CHECK(ok, "conv2d under EMBER_CONV_ALGO=%s: %s", algo, ember_last_error(ctx));
    char *table = ember_profile_table(ctx);
    char forward[64], backward[64];
    snprintf(forward, sizeof forward, "conv2d forward [%s]", algo);
    snprintf(backward, sizeof backward, "conv2d backward [%s]", algo);
    out->profile_named = table && strstr(table, forward) && strstr(table, backward);
    CHECK(out->profile_named, "the profile under EMBER_CONV_ALGO=%s has no rows \"%s\" and \"%s\":\n%s", algo,
          forward, backward, table ? table : "(none)");
    free(table);
    ember_profile_clear(ctx);
    unsetenv("EMBER_CONV_ALGO");
    if (ok) {
        out->y = malloc(numel_y(z, pad) * 4), out->dx = malloc(numel_x(z) * 4),
        out->dw = malloc(numel_w(z) * 4);
        out->db = malloc((size_t)z->oc * 4);
        ok = ember_tensor_read(y, out->y, numel_y(z, pad) * 4) == EMBER_OK &&
             ember_tensor_read(ember_tensor_grad(x), out->dx, numel_x(z) * 4) == EMBER_OK &&
             ember_tensor_read(ember_tensor_grad(w), out->dw, numel_w(z) * 4) == EMBER_OK &&
             ember_tensor_read(ember_tensor_grad(b), out->db, (size_t)z->oc * 4) == EMBER_OK;
    }
    ember_tape_clear(ctx);
    ember_tensor_free(x), ember_tensor_free(w), ember_tensor_free(b);
    return ok;
}

/* the relative L2 distance of two results */
static double distance(const float *a, const float *b, size_t n)
{
    double d = 0.0, norm = 0.0;
    for (size_t i = 0; i < n; i++) {
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        norm += (double)b[i] * b[i];
    }
    return sqrt(d / (norm > 0.0 ? norm : 1.0));
}

/* the same convolution through im2col and another algorithm: the same
 * numbers within float rounding (a wrong transform or index would be order 1
 * apart) */
static void check_agreement(ember_ctx *ctx, const struct conv_size *z, const char *algo, int pad)
{
    struct conv_run a = {0}, b = {0};
    if (run_conv(ctx, z, "im2col", pad, &a) && run_conv(ctx, z, algo, pad, &b)) {
        double dy = distance(b.y, a.y, numel_y(z, pad)), dx = distance(b.dx, a.dx, numel_x(z)),
               dw = distance(b.dw, a.dw, numel_w(z)), db = distance(b.db, a.db, (size_t)z->oc);
        CHECK(dy < 1e-5 && dx < 1e-5 && dw < 1e-5 && db < 1e-5,
              "%lldx%lldx%lldx%lld, padding %d: %s against im2col: y %.2e, dx %.2e, dw %.2e, db %.2e apart",
              (long long)z->n, (long long)z->c, (long long)z->h, (long long)z->w, pad, algo, dy, dx, dw, db);
    }
    free(a.y), free(a.dx), free(a.dw), free(a.db), free(b.y), free(b.dx), free(b.dw), free(b.db);
}

/* conv_direct on the CPU gives the same bits on any number of threads:
 * one thread, and four, which cut this batch of 3 by channels as well as
 * by images (cpu-conv-direct.c), so that `--threads` never changes a run */
static void check_threads_agree(ember_ctx *ctx)
{
    struct conv_run one = {0}, four = {0};
    ember_ctx_set_threads(ctx, 1);
    bool ran = run_conv(ctx, &small, "direct", 1, &one);
    ember_ctx_set_threads(ctx, 4);
    ran = ran && run_conv(ctx, &small, "direct", 1, &four);
    ember_ctx_set_threads(ctx, 0);
    if (ran) {
        bool same = memcmp(one.y, four.y, numel_y(&small, 1) * 4) == 0 &&
                    memcmp(one.dx, four.dx, numel_x(&small) * 4) == 0 &&
                    memcmp(one.dw, four.dw, numel_w(&small) * 4) == 0 && memcmp(one.db, four.db, 10 * 4) == 0;
        CHECK(same, "conv_direct on 1 and 4 threads: not the same bits");
    }
    free(one.y), free(one.dx), free(one.dw), free(one.db), free(four.y), free(four.dx), free(four.dw),
        free(four.db);
}

int main(void)
{
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "cpu"));
    check_choices(ctx, true);
    /* a profiled run chooses as an unprofiled one: the profiler's table
     * passes the backend's conv_direct_fast on (core/profile.c) */
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        unsetenv("EMBER_CONV_ALGO");
        enum ember_conv_algo plain = choose(ctx, &shapes[i]);
        CHECK_OK(ctx, ember_profile_start(ctx, false));
        enum ember_conv_algo profiled = choose(ctx, &shapes[i]);
        CHECK_OK(ctx, ember_profile_stop(ctx));
        ember_profile_clear(ctx);
        CHECK(profiled == plain, "%s: profiled, the default chose %s, unprofiled %s", shapes[i].what,
              ember_conv_algo_name(profiled), ember_conv_algo_name(plain));
    }
    check_threads_agree(ctx);
    for (int pad = 0; pad <= 2; pad++) {
        check_agreement(ctx, &small, "winograd", pad);
        check_agreement(ctx, &small, "winograd4", pad);
        check_agreement(ctx, &small, "direct", pad);
    }
    check_agreement(ctx, &few_positions, "direct", 0);
    /* images side by side in more than one group: 1,216 channels make each
     * image's columns 0.7 MB (10,944 rows of 16 positions), so the CPU's
     * groups of 2 MiB hold two of the three images */
    const struct conv_size deep = {3, 1216, 6, 6, 8};
    check_agreement(ctx, &deep, "direct", 0);

    /* an ember_conv2d under a misspelt EMBER_CONV_ALGO fails, saying why */
    int64_t xs[4] = {1, 8, 5, 5}, ws[4] = {8, 8, 3, 3};
    ember_rng rng = ember_rng_seed(3);
    ember_tensor *x = tensor_of(ctx, 4, xs, &rng), *w = tensor_of(ctx, 4, ws, &rng);
    setenv("EMBER_CONV_ALGO", "fast", 1);
    ember_tensor *y = ember_conv2d(x, w, NULL, 1, 1);
    CHECK(!y && strstr(ember_last_error(ctx), "EMBER_CONV_ALGO=fast"),
          "conv2d ran under EMBER_CONV_ALGO=fast: %s", ember_last_error(ctx));
    unsetenv("EMBER_CONV_ALGO");
    ember_tape_clear(ctx);
    ember_tensor_free(x), ember_tensor_free(w);
    ember_ctx_free(ctx);

    /* each GPU backend there is (PoCL; CUDA's test double where the
     * environment names it): its table, and conv_direct against im2col */
    const char *gpus[] = {"opencl", "cuda"};
    for (int i = 0; i < 2; i++) {
        ember_ctx *gpu = ember_ctx_new();
        ember_ctx_set_log(gpu, NULL, NULL, EMBER_LOG_ERROR);
        if (ember_ctx_use_device(gpu, gpus[i]) == EMBER_OK) {
            check_choices(gpu, false);
            for (int pad = 0; pad <= 2; pad++)
                check_agreement(gpu, &small, "direct", pad);
            check_agreement(gpu, &few_positions, "direct", 0);
        }
        ember_ctx_free(gpu);
    }
    return test_finish("test_conv_algo");
}
