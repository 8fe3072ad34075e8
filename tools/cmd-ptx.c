/* tools/cmd-ptx.c — `ember ptx`: the PTX a GPU gets for one kernel. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: ember ptx KERNEL [--arch sm_XX] [--baseline]\n"
    "       ember ptx --list\n"
    "\n"
    "Prints the PTX ember loads for KERNEL: as the CUDA backend compiles it with\n"
    "NVRTC for the arch (default: the first GPU's), or the built-in sm_30 PTX that\n"
    "every driver since 2013 JITs. Which one it is goes to stderr.\n"
    "\n"
    "  --arch sm_XX    the GPU to compile for (sm_30 Kepler ... sm_90 Hopper); needs no GPU\n"
    "  --baseline      the built-in sm_30 PTX\n"
    "  --list          the kernels, with what each computes\n"
    "  -h, --help      this text\n";


/* sm_NN or compute_NN (two or three digits, nothing after): the forms
 * NVRTC takes, checked here so that a typo is a usage error */
static bool arch_well_formed(const char *arch)
{
    const char *d = strncmp(arch, "sm_", 3) == 0 ? arch + 3 : strncmp(arch, "compute_", 8) == 0 ? arch + 8 : NULL;
    size_t n = d ? strspn(d, "0123456789") : 0;
    return d && (n == 2 || n == 3) && d[n] == '\0';
}

int cmd_ptx(int argc, char **argv)
{
    static const struct option longopts[] = {{"arch", required_argument, NULL, 'a'},
                                             {"baseline", no_argument, NULL, 'b'},
                                             {"list", no_argument, NULL, 'l'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *arch = NULL;
    bool baseline = false, list = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': arch = optarg; break;
        case 'b': baseline = true; break;
        case 'l': list = true; break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: fputs("try: ember ptx --help\n", stderr); return EXIT_USAGE;
        }
    }
    if (list) {
        for (int k = 0; k < ember_kernel_count(); k++) {
            const char *summary;
            const char *name = ember_kernel_name_at(k, &summary);
            printf("%-24s %s\n", name, summary);
        }
        return EXIT_OK;
    }
    if (optind != argc - 1) {
        cli_error(optind >= argc ? "ember ptx needs a kernel name (ember ptx --list lists them)"
                                 : "ember ptx takes one kernel name");
        return EXIT_USAGE;
    }
    /* what the command line got wrong is a usage error; the rest is the device's */
    bool known = false;
    for (int k = 0; k < ember_kernel_count() && !known; k++)
        known = strcmp(ember_kernel_name_at(k, NULL), argv[optind]) == 0;
    if (!known) {
        cli_error("there is no kernel \"%s\" (ember ptx --list lists them)", argv[optind]);
        return EXIT_USAGE;
    }
    if (arch && !arch_well_formed(arch)) {
        cli_error("--arch wants an arch such as sm_35 or sm_86, not \"%s\"", arch);
        return EXIT_USAGE;
    }
    char how[512], why[2048];
    char *ptx = ember_ptx(argv[optind], arch, baseline, how, sizeof how, why, sizeof why);
    if (!ptx) {
        cli_error("%s", why);
        return EXIT_DEVICE;
    }
    fprintf(stderr, "ember: %s: %s\n", argv[optind], how);
    fputs(ptx, stdout);
    free(ptx);
    return EXIT_OK;
}
