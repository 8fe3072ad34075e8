/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_output.c — the output helper every file the ember
 * program makes goes through (tools/cli-files.c: cli_output_check, _open,
 * _close). The input sets up a scratch folder and asks for a file there:
 * its first byte says what is in the way (nothing, a regular file, a
 * folder, a FIFO, a symbolic link to a file or to nothing, the command's
 * input itself or a hard link to it, a missing folder, a file where the
 * folder should be), its second how the bytes are written (through the
 * helper's stream, or by name into its temporary file as a library call
 * does) and whether the work fails, the next ones the file's name, the
 * rest its bytes. Only nothing or a regular file may be written; what is
 * refused is left as it was; what is written is exactly the bytes, or
 * when the work failed the old file is untouched; no temporary file is
 * ever left beside it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "fuzz-util.h"

enum { NOTHING, REGULAR, FOLDER, FIFO, LINK, DANGLING, INPUT, HARD_LINK, NO_FOLDER, FILE_AS_FOLDER, KINDS };

static const char old_bytes[] = "the old file";

/* removes everything in dir (one level of folders) */
static void empty(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat info;
        if (lstat(path, &info) == 0 && S_ISDIR(info.st_mode))
            rmdir(path);
        else
            unlink(path);
    }
    if (d)
        closedir(d);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0)
        abort();
}

/* whether path is a regular file holding exactly data */
static bool holds(const char *path, const void *data, size_t n)
{
    struct stat info;
    if (lstat(path, &info) != 0 || !S_ISREG(info.st_mode) || (size_t)info.st_size != n)
        return false;
    FILE *f = fopen(path, "rb");
    char *got = malloc(n + 1);
    bool same = f && got && fread(got, 1, n, f) == n && memcmp(got, data, n) == 0;
    free(got);
    if (f)
        fclose(f);
    return same;
}

/* a temporary file or probe beside the file asked for (whose own name may look like one) */
static bool temporaries_left(const char *dir, const char *path)
{
    const char *own = strrchr(path, '/') + 1;
    DIR *d = opendir(dir);
    bool left = false;
    for (struct dirent *e; d && (e = readdir(d));)
        left |= strcmp(e->d_name, own) != 0 &&
                (strstr(e->d_name, ".tmp.") != NULL || strstr(e->d_name, "ember-probe") != NULL);
    if (d)
        closedir(d);
    return left;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    int kind = data[0] % KINDS;
    bool by_name = data[1] & 1, work_fails = data[1] & 2;
    /* the name: up to 32 bytes, no '/', no NUL, not "." or ".." */
    char name[40];
    size_t at = 2, len = 0;
    for (; at < size && len < 32 && data[at] != 0xff; at++)
        if (data[at] && data[at] != '/')
            name[len++] = (char)data[at];
    name[len] = '\0';
    at += at < size; /* the 0xff that ends the name */
    if (!len || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        snprintf(name, sizeof name, "out");
    const uint8_t *bytes = data + at;
    size_t n = size - at;

    char dir[600], input[700], path[800], target[700];
    snprintf(dir, sizeof dir, "%s/output", fuzz_dir());
    mkdir(dir, 0755);
    empty(dir);
    snprintf(input, sizeof input, "%s/input.bin", dir);
    write_file(input, "the input", 9);
    snprintf(target, sizeof target, "%s/target.bin", dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (strcmp(name, "input.bin") == 0 || strcmp(name, "target.bin") == 0)
        snprintf(path, sizeof path, "%s/%s.out", dir, name);
    switch (kind) {
    case REGULAR: write_file(path, old_bytes, sizeof old_bytes); break;
    case FOLDER: mkdir(path, 0755); break;
    case FIFO: mkfifo(path, 0644); break;
    case LINK:
        write_file(target, old_bytes, sizeof old_bytes);
        if (symlink(target, path) != 0)
            abort();
        break;
    case DANGLING:
        if (symlink(target, path) != 0)
            abort();
        break;
    case INPUT: snprintf(path, sizeof path, "%s", input); break;
    case HARD_LINK:
        if (link(input, path) != 0)
            abort();
        break;
    case NO_FOLDER: snprintf(path, sizeof path, "%s/missing/%s", dir, name); break;
    case FILE_AS_FOLDER: snprintf(path, sizeof path, "%s/input.bin/%s", dir, name); break;
    }
    struct stat before;
    bool existed = lstat(path, &before) == 0;

    const char *inputs[] = {input, NULL};
    int rc = cli_output_check(path, "-o", inputs);
    if ((rc == EXIT_OK) != (kind == NOTHING || kind == REGULAR))
        abort(); /* refused what may be written, or let through what may not */
    if (rc == EXIT_OK) {
        struct cli_output o;
        if (cli_output_open(&o, path, "-o") != EXIT_OK)
            abort();
        bool ok;
        if (by_name) { /* as a library call given o.tmp writes it: anew, by its name */
            FILE *f = fopen(o.tmp, "wb");
            ok = f && fwrite(bytes, 1, n, f) == n;
            ok = f && fclose(f) == 0 && ok;
        } else {
            ok = fwrite(bytes, 1, n, o.f) == n;
        }
        rc = cli_output_close(&o, ok && !work_fails);
        if ((rc == EXIT_OK) != !work_fails)
            abort();
        if (!work_fails && !holds(path, bytes, n))
            abort(); /* not exactly the bytes written */
        if (work_fails &&
            (kind == REGULAR ? !holds(path, old_bytes, sizeof old_bytes) : access(path, F_OK) == 0))
            abort(); /* a failed write touched the old file, or left a new one */
    } else {
        struct stat after;
        bool exists = lstat(path, &after) == 0;
        if (exists != existed ||
            (existed && (after.st_mode != before.st_mode || after.st_ino != before.st_ino)))
            abort(); /* a refused path changed */
        if (!holds(input, "the input", 9) || (kind == LINK && !holds(target, old_bytes, sizeof old_bytes)))
            abort();
    }
    if (temporaries_left(dir, path))
        abort();
    return 0;
}
