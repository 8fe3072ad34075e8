/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_plot.c — `ember plot` on a file, as the command runs it
 * (tools/cmd-plot.c): the metrics reader (tools/metrics-file.c) or, for a
 * file that looks like one, the trace reader, then the picture drawn to an
 * SVG file. A metrics file from someone else's run is as untrusted as any
 * other: no crash, no hang, no undefined behaviour (UBSan), whatever its
 * numbers.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[512], out[512], width[] = "--width", w[] = "300", height[] = "--height", h[] = "200", o[] = "-o",
                            plot[] = "plot";
    const char *path = fuzz_write("metrics.jsonl", data, size);
    if (!path)
        return 0;
    snprintf(in, sizeof in, "%s", path);
    snprintf(out, sizeof out, "%s/plot.svg", fuzz_dir());
    unlink(out); /* written anew, not truncated: see fuzz_write */
    char *argv[] = {plot, in, o, out, width, w, height, h, NULL};
    cmd_plot(8, argv);
    return 0;
}
