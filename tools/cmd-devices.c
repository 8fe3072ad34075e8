/* SPDX-License-Identifier: MIT */
/* tools/cmd-devices.c — `ember devices`: what this machine offers ember, and why not more. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] = "usage: ember devices [--json] [--threads N]\n"
                            "\n"
                            "Lists every backend and device, in the order --device auto tries them, with\n"
                            "what ember found: the NVIDIA driver and the PTX it loads, every NVRTC and the\n"
                            "GPUs it targets, the way each GPU gets its kernels and why, OpenCL's platforms\n"
                            "and devices, the CPU's cores and BLAS. For whatever cannot be used: why, and\n"
                            "what to install or set. Exits 0 whenever it could look.\n"
                            "\n"
                            "  --json        the same as JSON (fields: docs/devices.md)\n"
                            "  --threads N   cpu threads to report (default: every core)\n"
                            "  -h, --help    this text\n";

int cmd_devices(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"threads", required_argument, NULL, 't'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int64_t threads = 0;
    bool json = false;
    int c;
    optind = 1;
    while ((c = cli_getopt(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 't':
            if (!cli_parse_int("threads", optarg, 0, 4096, &threads))
                return EXIT_USAGE;
            break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: fputs("try: ember devices --help\n", stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        cli_error("unexpected argument \"%s\"", argv[optind]);
        return EXIT_USAGE;
    }
    char *report = ember_devices_report(json, (int)threads);
    if (!report) {
        cli_error("out of memory");
        return EXIT_FAILURE_OTHER;
    }
    /* the text is for people, in this program's words; JSON stays as the library wrote it */
    size_t room = 2 * strlen(report) + 64;
    char *said = json ? NULL : malloc(room);
    fputs(said ? cli_words(report, said, room) : report, stdout);
    free(said);
    free(report);
    return EXIT_OK;
}
