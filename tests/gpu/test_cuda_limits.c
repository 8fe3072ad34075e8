/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_cuda_limits.c — the CUDA backend refuses, itself, a launch a
 * GPU would refuse, naming the kernel and the limit, before the driver
 * answers with a bare CUDA_ERROR_INVALID_VALUE: a grid past 65535 blocks
 * along y or along z. The launch plans never make one (test_gpu_plans
 * holds them to that), so the launches here are made directly through the
 * device's launch function, as a plan with a mistake would make them, on
 * the CUDA test double (EMBER_TEST_DEVICE, set by tests/CMakeLists.txt).
 * The double refuses such a grid too, but with the driver's code: ember's
 * own refusal is EMBER_ERR_UNSUPPORTED, the double's would be
 * EMBER_ERR_DEVICE, so the test fails if ember's check is gone.
 */
#include <string.h>

#include "../../backends/kernels/gpu.h"
#include "ctx-impl.h"
#include "test-util.h"

/* fill(out, out_off, n, value, first) over `groups`, blocks of 64 */
static ember_status launch_fill(ember_ctx *ctx, void *buffer, size_t x, size_t y, size_t z)
{
    struct ember_gpu *gpu = ctx->dev; /* a GPU backend's device starts with its struct ember_gpu */
    ember_ptr out = {.buf = buffer, .off = 0};
    return GPU_LAUNCH(gpu, EMBER_KERNEL_fill, ((const size_t[3]){x, y, z}), 64, GPU_PTR(out), GPU_INT(64),
                      GPU_FLOAT(1.5f), GPU_INT(0));
}

int main(void)
{
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    if (strcmp(ctx->ops->name, "cuda") != 0) {
        ember_ctx_free(ctx);
        printf("test_cuda_limits: the device is not a CUDA GPU\n");
        return TEST_SKIP;
    }
    void *buffer = NULL;
    CHECK_OK(ctx, ctx->ops->alloc(ctx->dev, 64 * sizeof(float), &buffer));

    /* within the limits: it runs */
    CHECK_OK(ctx, launch_fill(ctx, buffer, 1, 2, 2));
    float values[64] = {0};
    CHECK_OK(ctx, ctx->ops->read(ctx->dev, values, (ember_ptr){.buf = buffer}, sizeof values));
    CHECK(values[0] == 1.5f && values[63] == 1.5f, "fill wrote %g and %g, not 1.5", values[0], values[63]);

    /* one block past the limit along y, then along z */
    static const size_t past[2][3] = {{1, 65536, 1}, {1, 1, 65536}};
    for (int i = 0; i < 2; i++) {
        ember_clear_error(ctx);
        ember_status st = launch_fill(ctx, buffer, past[i][0], past[i][1], past[i][2]);
        CHECK(st == EMBER_ERR_UNSUPPORTED, "a grid of %zux%zux%zu: status %d (%s), not ember's own refusal",
              past[i][0], past[i][1], past[i][2], (int)st, ember_last_error(ctx));
        CHECK(strstr(ember_last_error(ctx), "kernel fill over 1x") &&
                  strstr(ember_last_error(ctx), "passes this GPU's grid (2147483647 x 65535 x 65535)"),
              "the refusal does not name the kernel and the grid: %s", ember_last_error(ctx));
        printf("refused: %s\n", ember_last_error(ctx));
    }

    /* and the device is still usable: a refusal is not a fault */
    ember_clear_error(ctx);
    CHECK_OK(ctx, launch_fill(ctx, buffer, 1, 1, 1));
    CHECK_OK(ctx, ctx->ops->sync(ctx->dev));
    ctx->ops->release(ctx->dev, buffer);
    ember_ctx_free(ctx);
    return test_finish("test_cuda_limits");
}
