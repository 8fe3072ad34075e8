/* SPDX-License-Identifier: MIT */
/*
 * io/read-file.c — base/files.c's safe open of a file to read, with its
 * failure recorded in the context as the readers of io/ want it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files-impl.h"
#include "read-file-impl.h"

int ember_open_regular(ember_ctx *ctx, const char *path, struct stat *info)
{
    char why[4096];
    int fd = ember_open_regular_file(path, info, why, sizeof why);
    if (fd < 0)
        ember_fail(ctx, EMBER_ERR_IO, "%s", why);
    return fd;
}

FILE *ember_fopen_regular(ember_ctx *ctx, const char *path, struct stat *info)
{
    int fd = ember_open_regular(ctx, path, info);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        ember_fail(ctx, EMBER_ERR_NOMEM, "cannot read %s: %s", path, strerror(errno));
        close(fd);
    }
    return f;
}
