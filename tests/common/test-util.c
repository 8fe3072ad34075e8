/* SPDX-License-Identifier: MIT */
/* tests/common/test-util.c — see test-util.h. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "test-util.h"

int test_failures;

int test_finish(const char *name)
{
    if (test_failures) {
        fprintf(stderr, "%s: %d check%s failed\n", name, test_failures, test_failures == 1 ? "" : "s");
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

ember_ctx *test_ctx(const char *device)
{
    if (!device)
        device = getenv("EMBER_TEST_DEVICE") ? getenv("EMBER_TEST_DEVICE") : "cpu";
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx)
        return NULL;
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    if (ember_ctx_use_device(ctx, device) != EMBER_OK) {
        fprintf(stderr, "cannot open %s: %s\n", device, ember_last_error(ctx));
        ember_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

const char *test_tmpdir(void)
{
    static char path[4096];
    char base[4000];
    ember_temporary_folder(base, sizeof base);
    snprintf(path, sizeof path, "%s/ember-test-XXXXXX", base);
    if (!ember_make_temporary_folder(path)) {
        perror("a temporary folder");
        return NULL;
    }
    return path;
}

/* path and everything under it; links are removed, never followed */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        remove(path);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        struct stat st;
#ifdef _WIN32
        bool folder = stat(child, &st) == 0 && S_ISDIR(st.st_mode);
#else
        bool folder = lstat(child, &st) == 0 && S_ISDIR(st.st_mode);
#endif
        if (folder)
            remove_tree(child);
        else
            remove(child);
    }
    closedir(d);
    rmdir(path);
}

void test_cleanup_dir(const char *dir)
{
    if (dir)
        remove_tree(dir);
}

const char *test_write_file(const char *dir, const char *name, const void *data, size_t len)
{
    static char paths[4][4096];
    static int next;
    char *path = paths[next++ % 4];
    snprintf(path, sizeof paths[0], "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len)) {
        perror(path);
        if (f)
            fclose(f);
        return path;
    }
    fclose(f);
    return path;
}
