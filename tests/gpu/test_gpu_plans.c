/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_gpu_plans.c — the GPU launch plans (backends/kernels/gpu-*.c)
 * stay inside the grid a CUDA GPU allows, whatever the shape: at most
 * 65535 groups along y and z, and along x at most the device's max_groups.
 * Nothing runs: the launches are recorded by a launch function of the
 * test's own, on shapes far too large to allocate, and checked.
 *
 * For the tiled sgemm, which splits a product into several launches past
 * the limits, the launches must also cover C exactly once: their tiles of
 * C add up to the whole, each starting at a distinct place.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/kernels/gpu.h"
#include "test-util.h"

#define MAX_LAUNCHES 4096

struct launch {
    enum ember_kernel kernel;
    size_t groups[3], local;
    struct ember_gpu_arg args[48];
    int nargs;
};

static struct launch launches[MAX_LAUNCHES];
static int launch_count;

static ember_status record(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                           size_t local, const struct ember_gpu_arg *args, int nargs)
{
    (void)gpu;
    if (launch_count == MAX_LAUNCHES || nargs > 48)
        return EMBER_ERR_UNSUPPORTED;
    struct launch *l = &launches[launch_count++];
    l->kernel = kernel;
    memcpy(l->groups, groups, sizeof l->groups);
    l->local = local;
    memcpy(l->args, args, (size_t)nargs * sizeof *args);
    l->nargs = nargs;
    return EMBER_OK;
}

static ember_status host_fail(void *ctx, ember_status status, const char *fmt, ...)
{
    (void)ctx;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return status;
}

static void host_log(void *ctx, ember_log_level level, const char *fmt, ...)
{
    (void)ctx, (void)level, (void)fmt;
}

/* A GPU as the CUDA backend sets one up, with the tuning of the built-in
 * PTX or of NVRTC's kernels. */
static struct ember_gpu gpu_with(int wg_size, int tile)
{
    struct ember_gpu g = {
        .host = {.fail = host_fail, .log = host_log}, .launch = record, .max_groups = 65535};
    snprintf(g.name, sizeof g.name, "test");
    g.tuning = ember_kernel_tuning_default();
    g.tuning.wg_size = wg_size;
    g.tuning.tile_m = g.tuning.tile_n = tile;
    g.gemm_threads = (size_t)ember_kernel_gemm_threads(&g.tuning);
    return g;
}

/* Every launch recorded since `from` is inside the grid. */
static void check_grid(const struct ember_gpu *g, const char *what, int from)
{
    CHECK(launch_count > from, "%s: no launch", what);
    for (int i = from; i < launch_count; i++) {
        const struct launch *l = &launches[i];
        CHECK(l->groups[0] >= 1 && l->groups[0] <= g->max_groups && l->groups[1] >= 1 &&
                  l->groups[1] <= EMBER_GPU_GRID_YZ && l->groups[2] >= 1 && l->groups[2] <= EMBER_GPU_GRID_YZ,
              "%s: %s over %zux%zux%zu groups", what, ember_kernel_name(l->kernel), l->groups[0],
              l->groups[1], l->groups[2]);
    }
}

static const ember_ptr A = {(void *)0x1000, 0}, B = {(void *)0x2000, 0}, C = {(void *)0x3000, 0};

/* The tiled sgemm's launches cover C once: the sum of m * n * batch over
 * them is the whole, and no two start at the same place. Arguments: a, a
 * offset, b, b offset, c, c offset, m, n, k, ... (gemm.kc). */
static void check_tiled_cover(const struct ember_gemm *gm, const char *what, int from)
{
    int64_t covered = 0;
    for (int i = from; i < launch_count; i++) {
        const struct launch *l = &launches[i];
        CHECK(l->kernel == EMBER_KERNEL_sgemm, "%s: launched %s, not the tiled sgemm", what,
              ember_kernel_name(l->kernel));
        covered += (int64_t)l->args[6].value.i * l->args[7].value.i * (int64_t)l->groups[2];
        for (int j = from; j < i; j++)
            CHECK(launches[j].args[5].value.i != l->args[5].value.i,
                  "%s: launches %d and %d start at the same C", what, j, i);
    }
    CHECK(covered == gm->m * gm->n * gm->batch, "%s: the launches cover %lld elements of C, not %lld", what,
          (long long)covered, (long long)(gm->m * gm->n * gm->batch));
}

static void sgemm_case(struct ember_gpu *g, const char *what, struct ember_gemm gm, bool tiled)
{
    int from = launch_count;
    ember_status st = ember_gpu_sgemm(g, &gm, A, B, C);
    CHECK(st == EMBER_OK, "%s: %s", what, ember_status_str(st));
    check_grid(g, what, from);
    if (tiled)
        check_tiled_cover(&gm, what, from);
}

int main(void)
{
    struct ember_gpu tunings[2] = {gpu_with(64, 32), gpu_with(256, 64)};
    for (int t = 0; t < 2; t++) {
        struct ember_gpu *g = &tunings[t];
        launch_count = 0;
        /* more rows of C than 65535 tiles: a linear layer over 4.2M samples */
        sgemm_case(g, "tiled, rows past the grid",
                   /* clang-format off */
                   (struct ember_gemm){.m = 65536LL * 64 + 7, .n = 64, .k = 16, .lda = 16, .ldb = 64, .ldc = 64,
                                       .batch = 1, .alpha = 1},
                   /* clang-format on */
                   true);
        sgemm_case(g, "tiled, rows past the grid, A transposed",
                   /* clang-format off */
                   (struct ember_gemm){.trans_a = true, .m = 65536LL * 64 + 7, .n = 64, .k = 16,
                                       .lda = 65536LL * 64 + 7, .ldb = 64, .ldc = 64, .batch = 1, .alpha = 1},
                   /* clang-format on */
                   true);
        /* more matrices than 65535: a batch of 70000 small products, A shared */
        sgemm_case(g, "tiled, batch past the grid",
                   /* clang-format off */
                   (struct ember_gemm){.m = 64, .n = 64, .k = 16, .lda = 16, .ldb = 64, .ldc = 64, .batch = 70000,
                                       .stride_b = 64 * 16, .stride_c = 64 * 64, .alpha = 1},
                   /* clang-format on */
                   true);
        /* the other kernels, on shapes past the grid */
        sgemm_case(g, "wide, batch past the grid",
                   /* clang-format off */
                   (struct ember_gemm){.m = 16, .n = 784, .k = 9, .lda = 9, .ldb = 784, .ldc = 784, .batch = 70000,
                                       .stride_b = 9 * 784, .stride_c = 16 * 784, .alpha = 1},
                   /* clang-format on */
                   false);
        sgemm_case(g, "split, rows past the grid",
                   /* clang-format off */
                   (struct ember_gemm){.trans_b = true, .m = 65536LL * 4 + 1, .n = 10, .k = 3136, .lda = 3136,
                                       .ldb = 3136, .ldc = 10, .batch = 1, .alpha = 1},
                   /* clang-format on */
                   false);

        int from = launch_count;
        CHECK(ember_gpu_fill(g, C, (size_t)1 << 30, 1.0f) == EMBER_OK, "fill");
        check_grid(g, "fill of 2^30", from);

        from = launch_count;
        struct ember_reduce r = {.outer = (int64_t)1 << 24, .r = 3, .inner = 1, .alpha = 1};
        CHECK(ember_gpu_reduce(g, EMBER_SUM, &r, C, A) == EMBER_OK, "reduce rows");
        check_grid(g, "reduce of 2^24 rows", from);
        from = launch_count;
        r = (struct ember_reduce){.outer = (int64_t)1 << 20, .r = 3, .inner = 7, .alpha = 1};
        CHECK(ember_gpu_reduce(g, EMBER_SUM, &r, C, A) == EMBER_OK, "reduce");
        check_grid(g, "reduce of 2^20 x 7", from);

        from = launch_count;
        /* clang-format off */
        struct ember_conv_geom cg = {.n = 100000, .c = 1, .h = 28, .w = 28, .kh = 3, .kw = 3, .stride = 1, .pad = 1,
                                     .oh = 28, .ow = 28};
        /* clang-format on */
        CHECK(ember_gpu_im2col(g, &cg, A, C) == EMBER_OK, "im2col");
        CHECK(ember_gpu_col2im(g, &cg, C, A) == EMBER_OK, "col2im");
        check_grid(g, "im2col and col2im of 100000 images", from);

        from = launch_count;
        struct ember_pool_geom pg = {
            .n = 10000, .c = 32, .h = 28, .w = 28, .k = 2, .stride = 2, .oh = 14, .ow = 14};
        CHECK(ember_gpu_max_pool2d_forward(g, &pg, A, C, B) == EMBER_OK, "max_pool2d forward");
        CHECK(ember_gpu_max_pool2d_backward(g, &pg, C, B, A) == EMBER_OK, "max_pool2d backward");
        check_grid(g, "max-pool of 10000 x 32 planes", from);

        from = launch_count;
        CHECK(ember_gpu_cross_entropy_forward(g, 10000000, 10, A, B, C, C) == EMBER_OK, "softmax forward");
        CHECK(ember_gpu_cross_entropy_backward(g, 10000000, 10, A, B, C, 1.0f, C) == EMBER_OK,
              "softmax backward");
        check_grid(g, "softmax-cross-entropy of 10^7 rows", from);

        from = launch_count;
        struct ember_adam_step as = {.lr = 1e-3f,
                                     .beta1 = 0.9f,
                                     .beta2 = 0.999f,
                                     .eps = 1e-8f,
                                     .bias_correction1 = 0.1f,
                                     .bias_correction2 = 0.001f};
        CHECK(ember_gpu_adam_step(g, (size_t)1 << 30, &as, A, B, C, C) == EMBER_OK, "adam");
        check_grid(g, "adam over 2^30", from);
        printf("tuning %d work-items, %dx%d tiles: %d launches, all inside the grid\n", g->tuning.wg_size,
               g->tuning.tile_m, g->tuning.tile_n, launch_count);
    }
    return test_finish("test_gpu_plans");
}
