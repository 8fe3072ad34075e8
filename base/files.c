/* SPDX-License-Identifier: MIT */
/*
 * base/files.c — opening a file ember is asked to read.
 *
 * Every path ember reads comes from a user: a data folder, a checkpoint, an
 * image. open() on a FIFO blocks until someone writes to it, and on some
 * devices it does worse, so a file is opened with O_NONBLOCK (which makes
 * open return at once for any kind of file), checked to be a regular file,
 * and only then switched back to ordinary blocking reads.
 *
 * And the folder ember keeps what it can make again in: compiled GPU
 * programs, inflated data files.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember.h" /* ember_set_cache_dir */
#include "files-impl.h"
#include "platform.h"

static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)                    ? "a folder"
           : S_ISFIFO(mode)                 ? "a FIFO"
           : S_ISSOCK(mode)                 ? "a socket"
           : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
                                            : "not a regular file";
}

int ember_open_regular_file(const char *path, struct stat *info, char *why, size_t why_len)
{
    int fd = ember_open_no_wait(path, O_RDONLY);
    if (fd < 0) {
        int saved = errno;
        /* Windows opens no folder as a file: say what it is, as POSIX's fstat below does */
        if (ember_stat(path, info) == 0 && !S_ISREG(info->st_mode))
            snprintf(why, why_len, "%s is %s, not a regular file: ember reads only files", path,
                     file_kind(info->st_mode));
        else
            snprintf(why, why_len, "cannot open %s: %s", path, strerror(saved));
        return -1;
    }
    if (fstat(fd, info) != 0) {
        snprintf(why, why_len, "cannot stat %s: %s", path, strerror(errno));
    } else if (!S_ISREG(info->st_mode)) {
        snprintf(why, why_len, "%s is %s, not a regular file: ember reads only files", path,
                 file_kind(info->st_mode));
    } else if (!ember_wait_on_reads(fd)) {
        snprintf(why, why_len, "cannot read %s: %s", path, strerror(errno));
    } else {
        return fd;
    }
    close(fd);
    return -1;
}

/* ember_set_cache_dir's folder: NULL for the default, "" for none */
static struct {
    pthread_mutex_t lock;
    bool set;
    char dir[3000];
} cache_choice = {.lock = PTHREAD_MUTEX_INITIALIZER};

ember_status ember_set_cache_dir(const char *dir)
{
    if (dir && strlen(dir) >= sizeof cache_choice.dir)
        return EMBER_ERR_ARG; /* cut short, it would name another folder */
    pthread_mutex_lock(&cache_choice.lock);
    cache_choice.set = dir != NULL;
    snprintf(cache_choice.dir, sizeof cache_choice.dir, "%s", dir ? dir : "");
    pthread_mutex_unlock(&cache_choice.lock);
    return EMBER_OK;
}

/* mkdir -p of out, from the character at `from` on: the folders before it
 * must exist already */
static bool make_folders(char *out, size_t from, char *why, size_t why_len)
{
    for (char *p = out + (from ? from : 1);; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char keep = *p;
        *p = '\0';
        bool made = ember_make_folder(out);
        int saved = errno;
        *p = keep;
        if (!made && keep == '\0') {
            snprintf(why, why_len, "cannot create the cache folder %s: %s", out, strerror(saved));
            return false;
        }
        if (keep == '\0')
            return true;
    }
}

/* The cache folder's `kind` (see files-impl.h), created if need be. */
bool ember_cache_folder(const char *kind, char *out, size_t len, char *why, size_t why_len)
{
    char chosen[sizeof cache_choice.dir];
    pthread_mutex_lock(&cache_choice.lock);
    bool set = cache_choice.set;
    memcpy(chosen, cache_choice.dir, sizeof chosen);
    pthread_mutex_unlock(&cache_choice.lock);
    const char *ember = getenv("EMBER_CACHE_DIR");
    int n;
    size_t made_from = 0; /* where mkdir starts: under a home folder, never the home folder itself */
    char root[sizeof cache_choice.dir];
    if (set && !chosen[0]) {
        snprintf(why, why_len, "no cache folder: the program asked for none (ember_set_cache_dir)");
        return false;
    } else if (set) {
        n = snprintf(out, len, "%s/%s", chosen, kind);
    } else if (ember && *ember) {
        n = snprintf(out, len, "%s/%s", ember, kind);
    } else if (ember_default_cache_folder(root, sizeof root, &made_from, why, why_len)) {
        n = snprintf(out, len, "%s/%s", root, kind);
    } else {
        return false;
    }
    if (n < 0 || (size_t)n >= len) {
        snprintf(why, why_len, "the cache folder's path is too long");
        return false;
    }
    if (!make_folders(out, made_from, why, why_len))
        return false;
    struct stat st;
    if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, why_len, "the cache folder %s is not a folder", out);
        return false;
    }
    return true;
}

int ember_write_file_whole(const char *path, const void *data, size_t size, char *kept, size_t len)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= sizeof tmp)
        return ENAMETOOLONG;
    int fd = ember_make_temporary_file(tmp);
    if (fd < 0)
        return errno;
    struct stat info; /* the mode of the file it replaces, else rw-r--r-- */
    ember_set_file_mode(fd, ember_stat(path, &info) == 0 && S_ISREG(info.st_mode) ? (int)(info.st_mode & 0777)
                                                                                  : 0644);
    const char *at = data;
    int err = 0;
    for (size_t done = 0; done < size && !err;) {
        ssize_t put = write(fd, at + done, size - done > (1u << 30) ? (1u << 30) : size - done);
        if (put <= 0)
            err = put < 0 ? errno : EIO;
        else
            done += (size_t)put;
    }
    if (!err && !ember_flush_to_disk(fd))
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && ember_replace_file(tmp, path)) {
        ember_flush_folder_of(path);
        return 0;
    }
    err = err ? err : errno;
    if (err == EBUSY) { /* the new contents are whole: kept, not lost */
        snprintf(kept, len, "%s", tmp);
        return err;
    }
    unlink(tmp);
    return err ? err : EIO;
}
