/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz-util.c — the harnesses' shared context and scratch folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-util.h"

ember_ctx *fuzz_ctx(void)
{
    static ember_ctx *ctx;
    if (!ctx) {
        /* a loader's inflated copies (io/data-cache.c) stay in the scratch
         * folder, one per input file name, not in the user's cache */
        static char cache[320];
        snprintf(cache, sizeof cache, "%s/cache", fuzz_dir());
        setenv("EMBER_CACHE_DIR", cache, 1);
        ctx = ember_ctx_new();
        ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
        ember_ctx_set_threads(ctx, 1);
        if (!ctx || ember_ctx_use_device(ctx, "cpu") != EMBER_OK) {
            fprintf(stderr, "fuzz: cannot open the cpu device\n");
            abort();
        }
    }
    ember_clear_error(ctx);
    return ctx;
}

const char *fuzz_dir(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/ember-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
    }
    return dir;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    /* a new file each time: ext4 flushes a file rewritten by truncation to
     * the disk when it is closed, which took over half of each input's time */
    unlink(path);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    size_t done = size ? fwrite(data, 1, size, f) : 0;
    return fclose(f) == 0 && done == size ? path : NULL;
}
