/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_opencl_cache.c — the OpenCL backend's on-disk cache of
 * compiled kernels (backends/opencl/opencl-program.c), in a fresh folder
 * (EMBER_CACHE_DIR):
 *
 *   1. a first context builds the kernels and writes one entry;
 *   2. a second loads them from it;
 *   3. an entry damaged in the middle, cut short, carrying another key, or
 *      whose payload the driver rejects is ignored and rebuilt, and the
 *      rebuilt entry is sound again;
 *      An entry whose loading marker is left over (a run died inside the
 *      driver loading it) is thrown away and rebuilt;
 *   4. a cache folder that cannot be made costs nothing but a log line.
 * Each context then computes a small function through the public API and
 * must get the right numbers. What happened is read from the log, at info
 * level. Skipped (77) without an OpenCL device.
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-util.h"

struct log_capture {
    char text[16384];
};

static void capture(void *user, ember_log_level level, const char *message)
{
    struct log_capture *log = user;
    size_t used = strlen(log->text);
    (void)level;
    snprintf(log->text + used, sizeof log->text - used, "%s\n", message);
}

/* y = relu(x * 2 - 3) on opencl:0, checked on the host */
static void compute(ember_ctx *ctx, const char *what)
{
    enum { N = 1000 };
    float x[N], y[N];
    for (int i = 0; i < N; i++)
        x[i] = (float)i / 100.0f;
    int64_t shape[1] = {N};
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, 1, shape);
    CHECK_OK(ctx, ember_tensor_write(t, x, sizeof x));
    ember_tensor *three = ember_tensor_new(ctx, EMBER_F32, 1, (int64_t[]){1});
    CHECK_OK(ctx, ember_tensor_write(three, &(float){3.0f}, sizeof(float)));
    ember_tensor *out = ember_relu(ember_sub(ember_scale(t, 2.0f), three));
    CHECK(out != NULL, "%s: the ops failed: %s", what, ember_last_error(ctx));
    if (out && ember_tensor_read(out, y, sizeof y) == EMBER_OK)
        for (int i = 0; i < N; i++)
            if (y[i] != fmaxf(x[i] * 2.0f - 3.0f, 0.0f)) {
                CHECK(false, "%s: y[%d] is %g, not %g", what, i, y[i], fmaxf(x[i] * 2.0f - 3.0f, 0.0f));
                break;
            }
    ember_tape_clear(ctx);
    ember_tensor_free(t);
    ember_tensor_free(three);
}

/* Opens opencl:0 with the log captured, computes, and returns whether the
 * log has `expect` (and `also`, when given). */
static bool open_and_compute(const char *what, const char *expect, const char *also, struct log_capture *log)
{
    memset(log, 0, sizeof *log);
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, capture, log, EMBER_LOG_INFO);
    ember_status st = ember_ctx_use_device(ctx, "opencl:0");
    CHECK(st == EMBER_OK, "%s: opencl:0 did not open: %s", what, ember_last_error(ctx));
    if (st == EMBER_OK)
        compute(ctx, what);
    ember_ctx_free(ctx);
    bool ok = strstr(log->text, expect) && (!also || strstr(log->text, also));
    CHECK(ok, "%s: the log lacks \"%s\"%s%s:\n%s", what, expect, also ? " or " : "", also ? also : "",
          log->text);
    return ok;
}

/* the one entry in dir (its path), or "" */
static void find_entry(const char *dir, char *path, size_t len)
{
    path[0] = '\0';
    DIR *d = opendir(dir);
    struct dirent *e;
    int entries = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".bin")) {
            snprintf(path, len, "%s/%s", dir, e->d_name);
            entries++;
        }
    if (d)
        closedir(d);
    CHECK(entries == 1, "%d cache entries in %s, not 1", entries, dir);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* rewrites `len` bytes at `at` (from the end when negative) */
static void patch(const char *path, long at, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "r+b");
    if (!f || fseek(f, at, at < 0 ? SEEK_END : SEEK_SET) != 0 || fwrite(bytes, 1, len, f) != len)
        CHECK(false, "cannot patch %s", path);
    if (f)
        fclose(f);
}

/* FNV-1a, as the cache's checksum */
static uint64_t fnv1a(const unsigned char *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int main(void)
{
    ember_ctx *probe = test_ctx("opencl:0");
    if (!probe)
        return TEST_SKIP;
    ember_ctx_free(probe);
    const char *root = test_tmpdir();
    if (!root)
        return 1;
    char root_copy[4096], folder[4200], entry[4400], again[4400];
    snprintf(root_copy, sizeof root_copy, "%s", root);
    snprintf(folder, sizeof folder, "%s/opencl", root_copy);
    setenv("EMBER_CACHE_DIR", root_copy, 1);
    struct log_capture *log = calloc(1, sizeof *log);

    /* 1, 2: build and store, then load */
    open_and_compute("first context", "kernels built from source", "kernels cached in", log);
    find_entry(folder, entry, sizeof entry);
    long size = file_size(entry);
    CHECK(size > 64, "the entry %s has %ld bytes", entry, size);
    open_and_compute("second context", "the driver took the cached kernels", NULL, log);
    CHECK(!strstr(log->text, "built from source"), "the second context built the kernels again");

    /* 3: damaged in the middle: 16 bytes flipped */
    unsigned char junk[16];
    memset(junk, 0x5a, sizeof junk);
    patch(entry, size / 2, junk, sizeof junk);
    open_and_compute("damaged entry", "checksum does not match", "kernels built from source", log);
    open_and_compute("after the damage", "the driver took the cached kernels", NULL, log);

    /* cut short */
    CHECK(truncate(entry, size / 3) == 0, "cannot truncate %s", entry);
    open_and_compute("truncated entry", "but its header says", "kernels built from source", log);
    find_entry(folder, again, sizeof again);
    CHECK(strcmp(entry, again) == 0 && file_size(entry) == size, "the rebuilt entry is %ld bytes, not %ld",
          file_size(again), size);

    /* another key in the header (bytes 16 to 31), as a file copied from elsewhere */
    patch(entry, 16, junk, sizeof junk);
    open_and_compute("foreign entry", "made for another device", "kernels built from source", log);

    /* a sound header over a payload the driver cannot use: the header's
     * payload checksum (the last 8 of its 48 bytes) is made to match */
    FILE *f = fopen(entry, "r+b");
    unsigned char *payload = malloc((size_t)size);
    if (f && payload && fseek(f, 48, SEEK_SET) == 0 &&
        fread(payload, 1, (size_t)size - 48, f) == (size_t)size - 48) {
        for (long i = 0; i < size - 48; i++)
            payload[i] = (unsigned char)(i * 7 + 1);
        uint64_t hash = fnv1a(payload, (size_t)size - 48);
        fseek(f, 40, SEEK_SET);
        fwrite(&hash, sizeof hash, 1, f);
        fwrite(payload, 1, (size_t)size - 48, f);
    } else {
        CHECK(false, "cannot rewrite %s", entry);
    }
    if (f)
        fclose(f);
    free(payload);
    open_and_compute("rejected binary", "ignoring the cached kernels", "kernels built from source", log);
    open_and_compute("after the rejection", "the driver took the cached kernels", NULL, log);

    /* a run that died inside the driver while it loaded the entry (its
     * marker is still there): the entry goes, the kernels are rebuilt */
    char marker[4400];
    snprintf(marker, sizeof marker, "%.*s.loading", (int)(strlen(entry) - 4), entry);
    test_write_file(folder, strrchr(marker, '/') + 1, "", 0);
    open_and_compute("a run died loading the entry", "a run died while the driver loaded",
                     "kernels built from source", log);
    CHECK(access(marker, F_OK) != 0, "the marker %s is still there", marker);
    open_and_compute("after the death", "the driver took the cached kernels", NULL, log);
    CHECK(access(marker, F_OK) != 0, "a load that went well left its marker %s", marker);

    /* 4: a cache folder that cannot be made (a file stands in its way) */
    char blocked[4300];
    snprintf(blocked, sizeof blocked, "%s/not-a-folder", root_copy);
    test_write_file(root_copy, "not-a-folder", "x", 1);
    setenv("EMBER_CACHE_DIR", blocked, 1);
    open_and_compute("unwritable cache", "not caching kernels", "kernels built from source", log);

    free(log);
    test_cleanup_dir(root_copy);
    return test_finish("test_opencl_cache");
}
