/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_opencl_loader.c — a machine without a usable OpenCL has zero
 * opencl devices and says why; nothing crashes, and `auto` goes on to the cpu.
 *
 *   test_opencl_loader missing        EMBER_OPENCL_LIBRARY names no file
 *   test_opencl_loader not-opencl     ... names a library that is not OpenCL (zlib)
 *   test_opencl_loader no-platforms   the real ICD loader with an empty vendor
 *                                     folder (OCL_ICD_VENDORS): skipped (77)
 *                                     where libOpenCL.so.1 is not installed
 *
 * One scenario per process: the backend looks for OpenCL once per process.
 * In each: `ember_devices` lists opencl as unusable with a reason that names
 * the problem, opening "opencl:0" (and "opencl") fails with EMBER_ERR_DEVICE
 * and that reason, and "auto" opens the cpu.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

static void check_no_opencl(const char *expect)
{
    ember_device_info info[16];
    int n = ember_devices(info, 16, 1);
    bool listed = false;
    for (int i = 0; i < n && i < 16; i++) {
        if (strncmp(info[i].name, "opencl", 6) != 0)
            continue;
        listed = true;
        CHECK(strcmp(info[i].name, "opencl") == 0 && !info[i].usable, "opencl is listed as %s, %s",
              info[i].name, info[i].usable ? "usable" : "unusable");
        CHECK(strstr(info[i].reason, expect) != NULL, "the reason \"%s\" does not mention \"%s\"",
              info[i].reason, expect);
        printf("ember devices: %s: %s\n", info[i].name, info[i].reason);
    }
    CHECK(listed, "ember_devices does not list opencl");

    static const char *const specs[] = {"opencl:0", "opencl"};
    for (int i = 0; i < 2; i++) {
        ember_ctx *ctx = ember_ctx_new();
        ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
        ember_status st = ember_ctx_use_device(ctx, specs[i]);
        CHECK(st == EMBER_ERR_DEVICE, "--device %s gave %s, not a device error", specs[i],
              ember_status_str(st));
        CHECK(strstr(ember_last_error(ctx), expect) != NULL, "--device %s: \"%s\" does not mention \"%s\"",
              specs[i], ember_last_error(ctx), expect);
        if (i == 0)
            printf("--device opencl:0: %s\n", ember_last_error(ctx));
        ember_ctx_free(ctx);
    }

    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "auto"));
    CHECK(strncmp(ember_ctx_device_name(ctx), "cpu", 3) == 0, "auto chose %s", ember_ctx_device_name(ctx));
    ember_ctx_free(ctx);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "missing";
    if (strcmp(mode, "missing") == 0) {
        setenv("EMBER_OPENCL_LIBRARY", "/nonexistent/libOpenCL-missing.so.1", 1);
        check_no_opencl("libOpenCL-missing.so.1");
    } else if (strcmp(mode, "not-opencl") == 0) {
        setenv("EMBER_OPENCL_LIBRARY", "libz.so.1", 1); /* ember links zlib: it is there */
        check_no_opencl("libz.so.1 is not an OpenCL 1.2 library: it lacks clGetPlatformIDs");
    } else if (strcmp(mode, "no-platforms") == 0) {
        void *icd = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!icd) {
            printf("skipped: libOpenCL.so.1 is not installed (ocl-icd-libopencl1)\n");
            return TEST_SKIP;
        }
        dlclose(icd);
        const char *empty = test_tmpdir();
        if (!empty)
            return 1;
        setenv("OCL_ICD_VENDORS", empty, 1); /* ocl-icd reads its drivers from there */
        unsetenv("EMBER_OPENCL_LIBRARY");
        check_no_opencl("found no OpenCL platform");
        test_cleanup_dir(empty);
    } else {
        fprintf(stderr, "usage: test_opencl_loader missing|not-opencl|no-platforms\n");
        return 2;
    }
    return test_finish("test_opencl_loader");
}
