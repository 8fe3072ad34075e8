/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_kernel_list.c — the kernels section of the API in every build:
 * the list of kernels is there whichever backends were built, and ember_ptx
 * gives PTX with the CUDA backend and, without it, NULL and the reason.
 *
 * EMBER_TEST_WITH_CUDA (1 or 0) comes from tests/CMakeLists.txt.
 */
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

int main(void)
{
    int count = ember_kernel_count();
    CHECK(count > 20, "ember_kernel_count() is %d", count);
    bool has_fill = false, has_sgemm = false;
    for (int k = 0; k < count; k++) {
        const char *summary = NULL;
        const char *name = ember_kernel_name_at(k, &summary);
        CHECK(name && *name && summary && *summary, "kernel %d has no name or summary", k);
        has_fill = has_fill || (name && strcmp(name, "fill") == 0);
        has_sgemm = has_sgemm || (name && strcmp(name, "sgemm") == 0);
    }
    CHECK(has_fill && has_sgemm, "the list lacks fill or sgemm");
    CHECK(ember_kernel_name_at(count, NULL) == NULL, "an index past the end has a name");
    CHECK(ember_kernel_name_at(-1, NULL) == NULL, "index -1 has a name");

    char how[256] = "unset", why[512] = "";
    char *ptx = ember_ptx("fill", NULL, true, how, sizeof how, why, sizeof why);
#if EMBER_TEST_WITH_CUDA
    CHECK(ptx && strstr(ptx, ".entry fill("), "the built-in PTX of fill: %s", ptx ? "no .entry fill(" : why);
    CHECK(strstr(how, "built-in sm_30 PTX") != NULL, "how: %s", how);
#else
    CHECK(ptx == NULL, "PTX from a build without the CUDA backend");
    CHECK(strstr(why, "this build has no CUDA backend (built with -DEMBER_CUDA=OFF)") != NULL, "why: %s",
          why);
    CHECK(how[0] == '\0', "how: %s", how);
#endif
    free(ptx);
    return test_finish("test_kernel_list");
}
