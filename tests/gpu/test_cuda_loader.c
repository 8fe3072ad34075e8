/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_cuda_loader.c — the CUDA backend on machines without a
 * working GPU, through the same code a real machine runs: zero usable cuda
 * devices, the reason in plain words, no crash, and a forced cuda device
 * that fails with that reason (never a quiet run elsewhere).
 *
 *   test_cuda_loader missing       EMBER_CUDA_LIBRARY names no file
 *   test_cuda_loader no-driver     the default libcuda.so.1, on a machine without a driver
 *   test_cuda_loader stub          the toolkit's stub libcuda (cuInit returns 34)
 *   test_cuda_loader fake-stub     the test double answering cuInit with 34
 *   test_cuda_loader no-nvrtc      a driver (the test double) and no NVRTC at all
 *
 * CTest sets the environment of each case (tests/CMakeLists.txt); a case
 * whose library is not on this machine reports skipped (77).
 */
#include <stdlib.h>
#include <string.h>

#include "../../backends/cuda/cuda-impl.h"
#include "test-util.h"

/* The cuda entry of ember_devices must be unusable with `reason` in its text,
 * and a forced cuda:0 must fail with EMBER_ERR_DEVICE and the same words. */
static void expect_unusable(const char *reason)
{
    ember_device_info info[16];
    int n = ember_devices(info, 16, 1);
    bool seen = false;
    for (int i = 0; i < n && i < 16; i++) {
        if (strncmp(info[i].name, "cuda", 4) != 0)
            continue;
        seen = true;
        CHECK(!info[i].usable, "%s is listed as usable", info[i].name);
        CHECK(strstr(info[i].reason, reason), "%s: the reason \"%s\" lacks \"%s\"", info[i].name,
              info[i].reason, reason);
    }
    CHECK(seen, "ember_devices lists no cuda entry");

    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    ember_status st = ember_ctx_use_device(ctx, "cuda:0");
    CHECK(st == EMBER_ERR_DEVICE, "--device cuda:0 gave %s, not a device error", ember_status_str(st));
    CHECK(strstr(ember_last_error(ctx), reason), "--device cuda:0 says \"%s\", lacking \"%s\"",
          ember_last_error(ctx), reason);
    /* and auto goes on to a device that works, saying nothing wrong */
    ember_ctx_free(ctx);
    ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    CHECK(ember_ctx_use_device(ctx, "auto") == EMBER_OK, "auto failed: %s", ember_last_error(ctx));
    CHECK(strncmp(ember_ctx_device_name(ctx), "cuda", 4) != 0, "auto chose %s", ember_ctx_device_name(ctx));
    ember_ctx_free(ctx);
}

int main(int argc, char **argv)
{
    const char *which = argc == 2 ? argv[1] : "";
    const struct cuda_probe *p = cuda_probe();
    if (strcmp(which, "missing") == 0) {
        CHECK(!p->driver_ok, "a driver was found at %s", p->driver_path);
        expect_unusable("cannot open /nonexistent/libcuda.so.1");
    } else if (strcmp(which, "no-driver") == 0) {
        if (p->driver_ok) {
            printf("skipped: this machine has an NVIDIA driver (%s)\n", p->driver_path);
            return TEST_SKIP;
        }
        expect_unusable("libcuda.so.1 not found: no NVIDIA driver is installed");
    } else if (strcmp(which, "stub") == 0 || strcmp(which, "fake-stub") == 0) {
        const char *lib = getenv("EMBER_CUDA_LIBRARY");
        if (!p->driver_path[0] && strstr(p->why, "cannot open")) {
            printf("skipped: no stub library at %s\n", lib ? lib : "(unset)");
            return TEST_SKIP;
        }
        expect_unusable("cuInit returned 34 (CUDA_ERROR_STUB_LIBRARY)");
        CHECK(strstr(p->why, "install the NVIDIA driver"), "no fix in \"%s\"", p->why);
    } else if (strcmp(which, "no-nvrtc") == 0) {
        CHECK(p->driver_ok && p->gpu_count == 1, "the test double's GPU is not there: %s", p->why);
        CHECK(p->nvrtc_count == 0, "EMBER_NVRTC=none, yet %d NVRTCs were found", p->nvrtc_count);
        if (p->driver_ok && p->gpu_count == 1) {
            const struct cuda_choice *c = &p->gpus[0].choice;
            CHECK(cuda_choice_path(c) == CUDA_PATH_BASELINE_PTX, "path %s: %s",
                  cuda_path_name(cuda_choice_path(c)), c->reason);
            CHECK(strstr(c->rejected, "no NVRTC library found"), "rejected: \"%s\"", c->rejected);
        }
    } else {
        fprintf(stderr, "usage: test_cuda_loader missing|no-driver|stub|fake-stub|no-nvrtc\n");
        return 2;
    }
    return test_finish("test_cuda_loader");
}
