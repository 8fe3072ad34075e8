/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/kernel-source.c — prints the kernels' program in a dialect, for the
 * tests that compile it with a toolchain of their own (test_kernels_clang.sh).
 *
 *   kernel-source opencl|cuda|nvptx [FAMILY]   the whole program (backends/kernels/kernels.h),
 *                                     or one family's kernels alone ("elementwise")
 *   kernel-source --families          the families, one per line
 *   kernel-source --defines           the default tuning as -D options, on one line
 *   kernel-source --list              the entry points, one per line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../backends/kernels/kernels.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--defines") == 0) {
        char defines[512];
        struct ember_kernel_tuning t = ember_kernel_tuning_default();
        if (!ember_kernel_defines(&t, defines, sizeof defines))
            return 1;
        puts(defines);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--families") == 0) {
        for (int f = 0; f < EMBER_FAMILY_COUNT; f++)
            puts(ember_kernel_family_name(f));
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (int k = 0; k < EMBER_KERNEL_COUNT; k++)
            puts(ember_kernel_name(k));
        return 0;
    }
    unsigned families = EMBER_KERNEL_ALL_FAMILIES;
    if (argc == 3) {
        families = 0;
        for (int f = 0; f < EMBER_FAMILY_COUNT; f++)
            if (strcmp(argv[2], ember_kernel_family_name(f)) == 0)
                families = 1u << f;
    }
    for (int d = 0; (argc == 2 || (argc == 3 && families)) && d < EMBER_DIALECT_COUNT; d++) {
        if (strcmp(argv[1], ember_kernel_dialect_name(d)) != 0)
            continue;
        char why[512];
        char *program = ember_kernel_program(d, families, why, sizeof why);
        if (!program) {
            fprintf(stderr, "kernel-source: %s\n", why);
            return 1;
        }
        fputs(program, stdout);
        free(program);
        return 0;
    }
    fprintf(stderr, "usage: kernel-source opencl|cuda|nvptx [FAMILY] | --families | --defines | --list\n");
    return 2;
}
