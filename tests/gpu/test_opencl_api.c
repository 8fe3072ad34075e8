/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_opencl_api.c — backends/opencl/opencl-api.h, ember's own
 * declarations of the OpenCL API, against Khronos's CL/cl.h: every type is
 * declared again (C11 allows that only for the same type), every constant
 * and function type is a static assertion (OPENCL_API_CHECK). So this test
 * is done when it compiles; running it only says so.
 */
#define CL_TARGET_OPENCL_VERSION          300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue, which 1.2 devices need */
#include <CL/cl.h>
#include <CL/cl_ext.h>

#define OPENCL_API_CHECK
#include "../../backends/opencl/opencl-api.h"

#include <stdio.h>

int main(void)
{
    puts("test_opencl_api: ok (the declarations match CL/cl.h)");
    return 0;
}
