/* tools/cmd-devices.c — `ember devices`: what this machine offers ember. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

#define MAX_DEVICES 64

int cmd_devices(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"threads", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int64_t threads = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs("usage: ember devices [--threads N]\n\nLists every backend's devices, in the order "
                  "--device auto prefers them,\nand for each one that cannot be used, why.\n",
                  stdout);
            return EXIT_OK;
        }
        if (c != 't' || !cli_parse_int("threads", optarg, 0, 4096, &threads)) {
            fputs("try: ember devices --help\n", stderr);
            return EXIT_USAGE;
        }
    }
    ember_device_info info[MAX_DEVICES];
    int n = ember_devices(info, MAX_DEVICES, (int)threads);
    for (int i = 0; i < n && i < MAX_DEVICES; i++) {
        if (info[i].usable)
            printf("%-10s %s\n", info[i].name, info[i].description);
        else
            printf("%-10s unavailable: %s\n", info[i].name, info[i].reason);
    }
    return EXIT_OK;
}
