/* SPDX-License-Identifier: MIT */
/*
 * tools/cli-files.c — the files the subcommands read and write themselves
 * (metrics, traces, and where checkpoints will go), treated as the library
 * treats its own: an input is opened only when it is a regular file of a
 * bounded size, so a FIFO or /dev/zero cannot hang or fill a reader; an
 * output is checked before the work that would fill it starts, so that a
 * typo in a folder costs a second, not a run.
 */
#define _XOPEN_SOURCE 700 /* mkstemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "platform.h"

static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode)    ? "a folder"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

FILE *cli_open_input(const char *path, int64_t limit, int64_t *size, bool say)
{
    char message[800] = "", shown[512];
    cli_printable(path, shown, sizeof shown);
    /* O_NONBLOCK: opening a FIFO waits for a writer otherwise */
    int fd = ember_open_no_wait(path, O_RDONLY);
    struct stat info;
    FILE *f = NULL;
    if (fd < 0 || fstat(fd, &info) != 0)
        snprintf(message, sizeof message, "cannot read %s: %s", shown, strerror(errno));
    else if (!S_ISREG(info.st_mode))
        snprintf(message, sizeof message, "%s is %s, not a regular file: ember reads only files", shown,
                 kind_of(info.st_mode));
    else if ((int64_t)info.st_size > limit)
        snprintf(message, sizeof message, "%s is %lld bytes, over the %lld this reads", shown,
                 (long long)info.st_size, (long long)limit);
    else if (!ember_wait_on_reads(fd) || !(f = fdopen(fd, "rb")))
        snprintf(message, sizeof message, "cannot read %s: %s", shown, strerror(errno));
    if (f) {
        if (size)
            *size = (int64_t)info.st_size;
        return f;
    }
    if (fd >= 0)
        close(fd);
    if (say)
        cli_error("%s", message);
    return NULL;
}

/* Whether a new file can be made in path's folder: one is made and removed. */
static bool folder_takes_files(const char *path, char *why, size_t len)
{
    char probe[4200];
    const char *slash = strrchr(path, '/');
    if (slash == path)
        snprintf(probe, sizeof probe, "/.ember-probe-XXXXXX");
    else if (slash)
        snprintf(probe, sizeof probe, "%.*s/.ember-probe-XXXXXX", (int)(slash - path), path);
    else
        snprintf(probe, sizeof probe, ".ember-probe-XXXXXX");
    int fd = ember_make_temporary_file(probe);
    if (fd < 0) {
        int err = errno;
        char folder[4200];
        snprintf(folder, sizeof folder, "%s", probe);
        char *cut = strrchr(folder, '/');
        if (cut)
            *cut = '\0';
        else
            snprintf(folder, sizeof folder, ".");
        if (err == ENOENT)
            snprintf(why, len, "the folder %s does not exist", folder);
        else if (err == ENOTDIR)
            snprintf(why, len, "%s is not a folder", folder);
        else
            snprintf(why, len, "no file can be made in %s: %s", folder, strerror(err));
        return false;
    }
    close(fd);
    unlink(probe);
    return true;
}

int cli_check_output(const char *path, const char *option, bool replaced)
{
    char why[4400] = "", shown[512];
    struct stat info;
    if (stat(path, &info) == 0) {
        if (S_ISDIR(info.st_mode) || (replaced && !S_ISREG(info.st_mode))) {
            snprintf(why, sizeof why, "it is %s; ember writes %s as a regular file", kind_of(info.st_mode),
                     replaced ? "a checkpoint" : "it");
        } else if (replaced) { /* written beside it, then renamed over it */
            folder_takes_files(path, why, sizeof why);
        } else { /* appended to or rewritten where it is: a FIFO with no reader fails here, not later */
            int fd = ember_open_no_wait(path, O_WRONLY | O_APPEND);
            if (fd < 0)
                snprintf(why, sizeof why, "%s", strerror(errno));
            else
                close(fd);
        }
    } else if (errno != ENOENT && errno != ENOTDIR) {
        snprintf(why, sizeof why, "%s", strerror(errno));
    } else {
        folder_takes_files(path, why, sizeof why);
    }
    if (!why[0])
        return EXIT_OK;
    cli_error("cannot write %s %s: %s", option, cli_printable(path, shown, sizeof shown), why);
    return EXIT_DATA;
}
