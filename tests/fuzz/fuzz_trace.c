/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_trace.c — `ember plot`'s reader of the Chrome traces that
 * --trace writes (tools/trace-file.c): the input is the trace file. A file
 * from someone else's run is as untrusted as any other.
 */
#include "fuzz-util.h"
#include "trace-file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("trace.json", data, size);
    if (!path)
        return 0;
    struct trace t;
    trace_read(path, &t);
    trace_free(&t);
    return 0;
}
