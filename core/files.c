/*
 * core/files.c — opening a file ember is asked to read.
 *
 * Every path ember reads comes from a user: a data folder, a checkpoint, an
 * image. open() on a FIFO blocks until someone writes to it, and on some
 * devices it does worse, so a file is opened with O_NONBLOCK (which makes
 * open return at once for any kind of file), checked to be a regular file,
 * and only then switched back to ordinary blocking reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "ctx-impl.h"

static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode) ? "a folder" : S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket"
         : S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "not a regular file";
}

int ember_open_regular(ember_ctx *ctx, const char *path, struct stat *info)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        ember_fail(ctx, EMBER_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    int flags;
    if (fstat(fd, info) != 0) {
        ember_fail(ctx, EMBER_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    } else if (!S_ISREG(info->st_mode)) {
        ember_fail(ctx, EMBER_ERR_IO, "%s is %s, not a regular file: ember reads only files", path,
                   file_kind(info->st_mode));
    } else if ((flags = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == -1) {
        ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    } else {
        return fd;
    }
    close(fd);
    return -1;
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
