/* SPDX-License-Identifier: MIT */
/*
 * tools/cli-files.c — the files the subcommands read and write themselves
 * (metrics, traces, and where checkpoints will go), treated as the library
 * treats its own: an input is opened only when it is a regular file of a
 * bounded size, so a FIFO or /dev/zero cannot hang or fill a reader; an
 * output is checked before the work that would fill it starts, so that a
 * typo in a folder costs a second, not a run.
 *
 * Every file a command makes goes through one helper (struct cli_output):
 * cli_output_check before the work (a regular file or none, never a
 * folder, FIFO, device, socket or symbolic link, never one of the
 * command's own inputs, in a folder that takes new files), then
 * cli_output_open and cli_output_close after it: the bytes go to a
 * temporary file beside the target, which is flushed to disk and renamed
 * over it, as checkpoints are (io/safetensors-write.c). A full disk or a
 * kill leaves the old file whole.
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

/* the longest path an output may have: its temporary file adds ".tmp.XXXXXX" */
#define OUTPUT_PATH_MAX 4096

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
        struct stat info;
        if (err == ENOENT && ember_stat(folder, &info) == 0 && S_ISDIR(info.st_mode))
            snprintf(why, len, "no file can be made in %s", folder); /* /proc says so */
        else if (err == ENOENT)
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

#ifdef _WIN32 /* its stat has no links to tell apart, and no inode numbers: files compare by path */
#define lstat(path, info) ember_stat(path, info)
#define S_ISLNK(mode)     0
#endif

/* Whether the output at path (info) is the file an input names, links
 * followed: the same device and inode, or where the system gives no inode
 * numbers, the same absolute path. */
static bool same_file(const char *path, const struct stat *out, const char *input)
{
    struct stat in;
    if (!input || ember_stat(input, &in) != 0)
        return false;
    if (in.st_ino || out->st_ino)
        return in.st_dev == out->st_dev && in.st_ino == out->st_ino;
    char a[OUTPUT_PATH_MAX + 1], b[OUTPUT_PATH_MAX + 1];
    return ember_absolute_path(path, a, sizeof a) && ember_absolute_path(input, b, sizeof b) &&
           strcmp(a, b) == 0;
}

/* Why a path that stat could not find cannot be written: an error other
 * than its absence, or a folder that takes no new file. */
static void why_not_made(const char *path, char *why, size_t len)
{
    if (errno != ENOENT && errno != ENOTDIR)
        snprintf(why, len, "%s", strerror(errno));
    else
        folder_takes_files(path, why, len);
}

/* EXIT_OK where nothing stands in the way (why is empty), else the CLI's
 * message saying what does and the data status */
static int output_verdict(const char *path, const char *option, const char *why)
{
    char shown[512];
    if (!why[0])
        return EXIT_OK;
    cli_error("cannot write %s %s: %s", option, cli_printable(path, shown, sizeof shown), why);
    return EXIT_DATA;
}

int cli_output_check(const char *path, const char *option, const char *const *inputs)
{
    char why[4400] = "", shown[512];
    struct stat info;
    if (!path[0] || strlen(path) > OUTPUT_PATH_MAX) {
        snprintf(why, sizeof why, "%s", path[0] ? "the path is too long" : "the path is empty");
    } else if (lstat(path, &info) == 0) {
        if (S_ISLNK(info.st_mode))
            snprintf(why, sizeof why,
                     "it is a symbolic link; ember replaces only regular files (give the file it points to)");
        else if (!S_ISREG(info.st_mode))
            snprintf(why, sizeof why, "it is %s; ember writes only regular files", kind_of(info.st_mode));
        for (int i = 0; !why[0] && inputs && inputs[i]; i++)
            if (same_file(path, &info, inputs[i]))
                snprintf(why, sizeof why,
                         "it is also an input (%s): written, it would replace what it is read from",
                         cli_printable(inputs[i], shown, sizeof shown));
        if (!why[0]) /* written beside it, then renamed over it */
            folder_takes_files(path, why, sizeof why);
    } else {
        why_not_made(path, why, sizeof why);
    }
    return output_verdict(path, option, why);
}

int cli_output_open(struct cli_output *o, const char *path, const char *option)
{
    char shown[512];
    *o = (struct cli_output){.path = path, .option = option};
    /* checked again: the work took a while, and the folder may have changed */
    int rc = cli_output_check(path, option, NULL);
    if (rc != EXIT_OK)
        return rc;
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = ember_make_temporary_file(o->tmp);
    if (fd >= 0) {
        struct stat info; /* a new file gets what the usual umask gives; a replaced one keeps its mode */
        ember_set_file_mode(fd, stat(path, &info) == 0 ? (int)(info.st_mode & 0777) : 0644);
    }
    if (fd < 0 || !(o->f = fdopen(fd, "wb"))) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        cli_error("cannot write %s %s: %s", option, cli_printable(path, shown, sizeof shown), strerror(err));
        return EXIT_DATA;
    }
    return EXIT_OK;
}

int cli_output_close(struct cli_output *o, bool ok)
{
    char shown[512];
    if (!o->f)
        return EXIT_DATA;
    if (!ok) { /* the caller's work failed, and it said why: the target stays as it was */
        fclose(o->f);
        o->f = NULL;
        unlink(o->tmp);
        return EXIT_DATA;
    }
    errno = 0;
    ok = fflush(o->f) == 0 && !ferror(o->f) && ok;
    int err = ok ? 0 : errno;
    /* flushed to disk by name: a library call given o->tmp may have written it anew (opened to
     * write, not truncated: Windows flushes no file opened only to read) */
    int fd = ok ? ember_open_file(o->tmp, O_WRONLY, 0) : -1;
    if (ok && (fd < 0 || !ember_flush_to_disk(fd)))
        ok = false, err = errno;
    if (fd >= 0)
        close(fd);
    if (fclose(o->f) != 0 && ok)
        ok = false, err = errno;
    o->f = NULL;
    if (ok && !ember_replace_file(o->tmp, o->path)) {
        err = errno;
        if (err == EBUSY) { /* Windows: the target is open elsewhere; the new file is whole, kept */
            cli_error(
                "cannot replace %s %s: another program has it open; it is unchanged, and what was to be "
                "written is in %s",
                o->option, cli_printable(o->path, shown, sizeof shown), o->tmp);
            return EXIT_DATA;
        }
        ok = false;
    }
    if (ok) {
        ember_flush_folder_of(o->path);
        return EXIT_OK;
    }
    unlink(o->tmp);
    cli_error("cannot write %s %s: %s; it is unchanged", o->option,
              cli_printable(o->path, shown, sizeof shown), strerror(err ? err : EIO));
    return EXIT_DATA;
}

int cli_output_write(const char *path, const char *option, const void *data, size_t size)
{
    struct cli_output o;
    int rc = cli_output_open(&o, path, option);
    if (rc != EXIT_OK)
        return rc;
    if (fwrite(data, 1, size, o.f) == size)
        return cli_output_close(&o, true);
    char shown[512];
    cli_error("cannot write %s %s: %s; it is unchanged", option, cli_printable(path, shown, sizeof shown),
              strerror(errno ? errno : EIO));
    cli_output_close(&o, false);
    return EXIT_DATA;
}

int cli_check_output(const char *path, const char *option, bool replaced)
{
    char why[4400] = "";
    struct stat info;
    if (replaced)
        return cli_output_check(path, option, NULL);
    if (stat(path, &info) == 0) {
        if (S_ISDIR(info.st_mode)) {
            snprintf(why, sizeof why, "it is %s; ember writes it as a regular file", kind_of(info.st_mode));
        } else { /* appended to or rewritten where it is: a FIFO with no reader fails here, not later */
            int fd = ember_open_no_wait(path, O_WRONLY | O_APPEND);
            if (fd < 0)
                snprintf(why, sizeof why, "%s", strerror(errno));
            else
                close(fd);
        }
    } else {
        why_not_made(path, why, sizeof why);
    }
    return output_verdict(path, option, why);
}

/* The profile's table, and its trace written as every output is. */
int cli_profile_report(ember_ctx *ctx, FILE *table, const char *trace, const char *what)
{
    if (table) {
        char *text = ember_profile_table(ctx);
        if (!text)
            return cli_fail(ctx, "cannot make the profile");
        fprintf(table, "profile of the %s\n%s", what, text);
        free(text);
    }
    if (trace) { /* through the output helper: beside the file, then renamed over it */
        struct cli_output o;
        int rc = cli_output_open(&o, trace, "--trace");
        if (rc != EXIT_OK)
            return rc;
        bool ok = ember_profile_write_trace(ctx, o.tmp) == EMBER_OK;
        int failed = ok ? EXIT_OK : cli_fail(ctx, "cannot write the trace");
        if ((rc = cli_output_close(&o, ok)) != EXIT_OK)
            return ok ? rc : failed;
        fprintf(stderr, "ember: trace of the %s in %s (open it in ui.perfetto.dev or chrome://tracing)\n",
                what, trace);
    }
    return EXIT_OK;
}
