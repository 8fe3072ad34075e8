/* SPDX-License-Identifier: MIT */
/*
 * io/data-cache.c — an inflated, checked copy of a gzipped data file, so
 * that the next start need not inflate it again.
 *
 * Fashion-MNIST's training images are 26 MB of gzip that inflate to 47 MB;
 * inflating takes about 0.1 s, most of the README command's time to its
 * first step. The first load writes the inflated bytes to the cache folder
 * ("datasets", ctx-impl.h); later loads read them back and check them
 * instead (about 0.02 s).
 *
 * One entry per source file, named by a hash of its real path, so a file
 * that changes replaces its entry rather than adding one. An entry is
 * trusted only when everything matches: the magic and format, the source's
 * path, size, modification time, inode and device as they are now, the
 * payload's length (the file's size) and its CRC-32 (zlib's, 7 ms for
 * 47 MB). Anything else is a miss, and the file is inflated (and checked
 * by zlib and the loader) as if there were no cache. Entries are written to
 * a temporary file and renamed into place, so a reader never sees half of
 * one (and one a crash damaged fails its checksum). Small files are not
 * worth an entry.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data-impl.h"
#include "files-impl.h"
#include "platform.h"

#define ENTRY_MAGIC "EMBERDS\n"
/* 2: entries made by a loader that checks the gzip trailer; a format-1
 * entry may hold the inflated bytes of a file cut short, which the loader
 * before it took (io/data-idx.c), so it is inflated again */
#define ENTRY_FORMAT   2
#define ENTRY_SMALLEST ((int64_t)1 << 20) /* below 1 MiB, inflating is quick enough */

struct entry_header {
    char magic[8];
    uint32_t format, header_bytes;
    /* the source as it was when the entry was made */
    int64_t source_size, source_mtime_sec, source_mtime_nsec;
    uint64_t source_ino, source_dev;
    char source_path[PATH_MAX];
    /* the payload: the inflated bytes after the header */
    int64_t payload_bytes;
    uint32_t payload_crc, unused;
};

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* The entry's path, and the header it must have, for `source` as it is now. */
static bool entry_for(const char *source, const struct stat *info, int64_t bytes, char *path, size_t len,
                      struct entry_header *h)
{
    char folder[3800], why[512];
    memset(h, 0, sizeof *h);
    if (!ember_absolute_path(source, h->source_path, sizeof h->source_path) ||
        !ember_cache_folder("datasets", folder, sizeof folder, why, sizeof why))
        return false;
    memcpy(h->magic, ENTRY_MAGIC, sizeof h->magic);
    h->format = ENTRY_FORMAT;
    h->header_bytes = sizeof *h;
    h->source_size = (int64_t)info->st_size;
    int64_t changed = ember_file_changed_ns(info);
    h->source_mtime_sec = changed / 1000000000;
    h->source_mtime_nsec = changed % 1000000000;
    h->source_ino = (uint64_t)info->st_ino;
    h->source_dev = (uint64_t)info->st_dev;
    h->payload_bytes = bytes;
    const char *base = strrchr(h->source_path, '/');
    return (size_t)snprintf(path, len, "%s/%s-%016llx", folder, base ? base + 1 : h->source_path,
                            (unsigned long long)fnv1a(h->source_path)) < len;
}

static uint32_t crc_of(const uint8_t *data, int64_t bytes)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    for (int64_t at = 0; at < bytes;) {
        uInt n = bytes - at < (int64_t)1 << 30 ? (uInt)(bytes - at) : (uInt)1 << 30;
        crc = crc32(crc, data + at, n);
        at += n;
    }
    return (uint32_t)crc;
}

static bool read_all(int fd, void *dst, int64_t bytes)
{
    for (int64_t done = 0; done < bytes;) {
        ssize_t got = read(fd, (char *)dst + done, (size_t)(bytes - done));
        if (got <= 0)
            return false;
        done += got;
    }
    return true;
}

bool ember_data_cache_load(ember_ctx *ctx, const char *source, const struct stat *info, uint8_t *dst,
                           int64_t bytes)
{
    char path[4096];
    struct entry_header want, got;
    if (bytes < ENTRY_SMALLEST || !entry_for(source, info, bytes, path, sizeof path, &want))
        return false;
    int fd = ember_open_no_wait(path, O_RDONLY);
    if (fd < 0)
        return false; /* no entry yet */
    struct stat st;
    const char *wrong = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (int64_t)st.st_size != (int64_t)sizeof want + bytes)
        wrong = "its length";
    else if (!read_all(fd, &got, sizeof got) || memcmp(got.magic, want.magic, sizeof got.magic) != 0 ||
             got.format != want.format || got.header_bytes != want.header_bytes)
        wrong = "its header";
    else if (got.source_size != want.source_size || got.source_mtime_sec != want.source_mtime_sec ||
             got.source_mtime_nsec != want.source_mtime_nsec || got.source_ino != want.source_ino ||
             got.source_dev != want.source_dev || got.payload_bytes != bytes ||
             strncmp(got.source_path, want.source_path, sizeof got.source_path) != 0)
        wrong = "the source file, which changed since";
    else if (!read_all(fd, dst, bytes) || crc_of(dst, bytes) != got.payload_crc)
        wrong = "its checksum";
    close(fd);
    if (wrong)
        ember_log(ctx, EMBER_LOG_DEBUG, "the inflated copy %s does not match %s: inflating %s again", path,
                  wrong, source);
    return wrong == NULL;
}

void ember_data_cache_store(ember_ctx *ctx, const char *source, const struct stat *info, const uint8_t *src,
                            int64_t bytes)
{
    char path[4096], temp[4200];
    struct entry_header h;
    if (bytes < ENTRY_SMALLEST || !entry_for(source, info, bytes, path, sizeof path, &h))
        return;
    h.payload_crc = crc_of(src, bytes);
    snprintf(temp, sizeof temp, "%s.%ld.tmp", path, (long)getpid());
    int fd = ember_open_file(temp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return; /* a read-only cache folder: inflate every time, as before */
    bool ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h;
    for (int64_t done = 0; ok && done < bytes;) {
        ssize_t put = write(fd, src + done, (size_t)(bytes - done));
        ok = put > 0;
        done += ok ? put : 0;
    }
    ok = close(fd) == 0 && ok; /* no fsync: a copy a crash damaged fails its checksum, and is made again */
    if (ok && ember_replace_file(temp, path)) {
        ember_log(ctx, EMBER_LOG_DEBUG, "kept an inflated copy of %s in %s", source, path);
        return;
    }
    ember_log(ctx, EMBER_LOG_DEBUG, "could not keep an inflated copy of %s in %s: %s", source, path,
              strerror(errno));
    unlink(temp);
}
