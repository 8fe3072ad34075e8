/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/catalogue.c — the list of kernels, in every build.
 *
 * The names and summaries of EMBER_KERNEL_LIST (kernels.h) are part of the
 * public API (ember_kernel_count, ember_kernel_name_at), so this file is
 * compiled whichever backends are: a build without GPU backends lists the
 * kernels it would run, and says no when asked for their PTX. The sources
 * themselves (kernels.c, the embedded .kc files) come only with a GPU
 * backend.
 */
#include <stdio.h>

#include "ember.h"
#include "kernels.h"

static const struct {
    const char *name;
    enum ember_kernel_family family;
    const char *summary;
} kernels[] = {
#define KERNEL_ENTRY(FAMILY, name, what) {#name, EMBER_FAMILY_##FAMILY, what},
    EMBER_KERNEL_LIST(KERNEL_ENTRY)
#undef KERNEL_ENTRY
};

const char *ember_kernel_name(enum ember_kernel kernel)
{
    return kernel < EMBER_KERNEL_COUNT ? kernels[kernel].name : "unknown";
}

enum ember_kernel_family ember_kernel_family(enum ember_kernel kernel)
{
    return kernel < EMBER_KERNEL_COUNT ? kernels[kernel].family : EMBER_FAMILY_COUNT;
}

const char *ember_kernel_summary(enum ember_kernel kernel)
{
    return kernel < EMBER_KERNEL_COUNT ? kernels[kernel].summary : "";
}

int ember_kernel_count(void) { return EMBER_KERNEL_COUNT; }

const char *ember_kernel_name_at(int index, const char **summary)
{
    if (index < 0 || index >= EMBER_KERNEL_COUNT)
        return NULL;
    if (summary)
        *summary = kernels[index].summary;
    return kernels[index].name;
}

#ifndef EMBER_WITH_CUDA
/* The CUDA backend (backends/cuda/cuda-ptx.c) compiles the PTX; without it
 * there is none to show. */
char *ember_ptx(const char *kernel, const char *arch, bool baseline, char *how, size_t how_len, char *why,
                size_t why_len)
{
    if (how && how_len)
        how[0] = '\0';
    if (why && why_len)
        snprintf(why, why_len,
                 "this build has no CUDA backend (built with -DEMBER_CUDA=OFF): no PTX to show");
    return NULL;
}
#endif
