/* SPDX-License-Identifier: MIT */
/*
 * io/npz.c — an entry of a NumPy .npz archive as a stream (npy-impl.h).
 *
 * numpy.savez writes a zip archive of .npy files, stored;
 * numpy.savez_compressed the same deflated. The archive's central
 * directory, at its end, is the index: each entry's name, method, CRC-32,
 * sizes and where its local header lies. NumPy writes every entry with
 * force_zip64, so sizes and offsets may stand in a zip64 extra field (the
 * directory's own fields then hold 0xffffffff), and an archive of more than
 * 65,535 entries or 4 GiB has a zip64 end record too; both are read.
 *
 * The archive is untrusted: the directory must lie inside the file and hold
 * at most NPZ_MAX_ENTRIES entries, each entry's data must lie inside the
 * file before the directory, its local header must name it too, and only
 * the methods NumPy writes (0, stored; 8, deflated) are read, unencrypted,
 * and a deflated entry may not declare more than deflate's densest packing
 * (1032 to 1) could hold, so that a small file never asks for a large
 * allocation.
 * What the entry holds is then checked as a .npy file (npy.c), and its
 * CRC-32 at the end (npy_stream_end).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy-impl.h"

#define NPZ_MAX_ENTRIES 4096
#define NPZ_MAX_NAME    255
#define NPZ_EOCD_SIZE   22
#define NPZ_MAX_COMMENT 65535

static uint32_t le16(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const unsigned char *p) { return le16(p) | le16(p + 2) << 16; }
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

static ember_status read_at(struct npy_stream *s, uint64_t offset, void *dst, size_t n)
{
    if (fseeko(s->f, (off_t)offset, SEEK_SET) != 0 || fread(dst, 1, n, s->f) != n)
        return ember_fail(s->ctx, EMBER_ERR_IO, "cannot read %s: %s", s->name,
                          ferror(s->f) ? strerror(errno) : "it ended early");
    return EMBER_OK;
}

static ember_status damaged(struct npy_stream *s, const char *what)
{
    return ember_fail(s->ctx, EMBER_ERR_FORMAT, "%s is not a .npz archive numpy.savez wrote: %s", s->name,
                      what);
}

/* Where the central directory lies and how many entries it holds. */
static ember_status find_directory(struct npy_stream *s, uint64_t size, uint64_t *dir_at, uint64_t *dir_size,
                                   uint64_t *entries)
{
    /* the end record is the last 22 bytes, before a comment of up to 64 KiB */
    uint64_t span = size < NPZ_EOCD_SIZE + NPZ_MAX_COMMENT ? size : NPZ_EOCD_SIZE + NPZ_MAX_COMMENT;
    if (size < NPZ_EOCD_SIZE)
        return damaged(s, "it is too short to be a zip archive");
    unsigned char *tail = ember_host_alloc(s->ctx, (size_t)span);
    if (!tail)
        return EMBER_ERR_NOMEM;
    ember_status st = read_at(s, size - span, tail, (size_t)span);
    int64_t at = -1;
    for (int64_t i = (int64_t)span - NPZ_EOCD_SIZE; st == EMBER_OK && i >= 0 && at < 0; i--)
        if (memcmp(tail + i, "PK\5\6", 4) == 0 && (uint64_t)i + NPZ_EOCD_SIZE + le16(tail + i + 20) == span)
            at = i;
    unsigned char end[NPZ_EOCD_SIZE];
    if (st == EMBER_OK && at < 0)
        st = damaged(s, "it has no zip end record");
    if (st == EMBER_OK)
        memcpy(end, tail + at, sizeof end);
    free(tail);
    if (st != EMBER_OK)
        return st;
    *entries = le16(end + 10);
    *dir_size = le32(end + 12);
    *dir_at = le32(end + 16);
    uint64_t end_at = size - span + (uint64_t)at;
    if (*entries == 0xffff || *dir_size == 0xffffffff || *dir_at == 0xffffffff) {
        /* zip64: a locator just before the end record points at the zip64 end record */
        unsigned char locator[20], end64[56];
        if (end_at < sizeof locator ||
            (st = read_at(s, end_at - sizeof locator, locator, sizeof locator)) != EMBER_OK)
            return st == EMBER_OK ? damaged(s, "its zip64 end record is missing") : st;
        uint64_t end64_at = le64(locator + 8);
        if (memcmp(locator, "PK\6\7", 4) != 0 || end64_at > end_at - sizeof locator - sizeof end64 ||
            (st = read_at(s, end64_at, end64, sizeof end64)) != EMBER_OK || memcmp(end64, "PK\6\6", 4) != 0)
            return st == EMBER_OK ? damaged(s, "its zip64 end record is missing or damaged") : st;
        *entries = le64(end64 + 32);
        *dir_size = le64(end64 + 40);
        *dir_at = le64(end64 + 48);
        end_at = end64_at;
    }
    if (*entries > NPZ_MAX_ENTRIES)
        return ember_fail(s->ctx, EMBER_ERR_FORMAT, "%s holds %llu entries; ember reads archives of up to %d",
                          s->name, (unsigned long long)*entries, NPZ_MAX_ENTRIES);
    if (*dir_at > end_at || *dir_size > end_at - *dir_at)
        return damaged(s, "its central directory lies outside the file");
    return EMBER_OK;
}

/* A directory entry's zip64 extra field: the sizes and offset that its
 * own fields mark 0xffffffff, in that order. */
static bool read_zip64_extra(const unsigned char *extra, size_t len, uint64_t *size, uint64_t *packed,
                             uint64_t *offset)
{
    for (size_t at = 0; at + 4 <= len;) {
        uint32_t id = le16(extra + at), n = le16(extra + at + 2);
        if (at + 4 + n > len)
            return false;
        if (id == 1) {
            const unsigned char *p = extra + at + 4, *end = p + n;
            uint64_t *fields[] = {size, packed, offset};
            for (int i = 0; i < 3; i++)
                if (*fields[i] == 0xffffffff) {
                    if (p + 8 > end)
                        return false;
                    *fields[i] = le64(p);
                    p += 8;
                }
            return true;
        }
        at += 4 + n;
    }
    return *size != 0xffffffff && *packed != 0xffffffff && *offset != 0xffffffff;
}

ember_status npz_open_entry(ember_ctx *ctx, const char *path, const char *entry, struct npy_stream *s,
                            bool *found)
{
    if (found)
        *found = false;
    ember_status st = npy_open_file(ctx, path, s);
    if (st != EMBER_OK)
        return st;
    uint64_t size = s->left, dir_at = 0, dir_size = 0, entries = 0;
    unsigned char *dir = NULL;
    if ((st = find_directory(s, size, &dir_at, &dir_size, &entries)) != EMBER_OK)
        return st;
    if (!(dir = ember_host_alloc(ctx, (size_t)dir_size + 1)) ||
        (st = read_at(s, dir_at, dir, (size_t)dir_size)) != EMBER_OK) {
        free(dir);
        return dir ? st : EMBER_ERR_NOMEM;
    }
    char names[512] = "";
    uint64_t at = 0;
    for (uint64_t i = 0; i < entries && st == EMBER_OK; i++) {
        const unsigned char *e = dir + at;
        if (at + 46 > dir_size || memcmp(e, "PK\1\2", 4) != 0) {
            st = damaged(s, "its central directory is damaged");
            break;
        }
        uint32_t flags = le16(e + 8), method = le16(e + 10), name_len = le16(e + 28),
                 extra_len = le16(e + 30);
        uint64_t packed = le32(e + 20), unpacked = le32(e + 24), local = le32(e + 42);
        if (at + 46 + name_len + extra_len + le16(e + 32) > dir_size) {
            st = damaged(s, "its central directory is damaged");
            break;
        }
        const char *name = (const char *)e + 46;
        size_t listed = strlen(names);
        if (listed + name_len + 3 < sizeof names)
            snprintf(names + listed, sizeof names - listed, "%s%.*s", listed ? ", " : "", (int)name_len,
                     name);
        at += 46 + name_len + extra_len + le16(e + 32);
        if (name_len != strlen(entry) || memcmp(name, entry, name_len) != 0)
            continue;
        /* the entry asked for */
        if (found)
            *found = true;
        snprintf(s->name, sizeof s->name, "%s: %s", path, entry);
        if (!read_zip64_extra(e + 46 + name_len, extra_len, &unpacked, &packed, &local))
            st = damaged(s, "an entry's zip64 sizes are missing");
        else if (flags & 1)
            st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s is encrypted; ember reads archives numpy.savez writes",
                            s->name);
        else if (method != 0 && method != 8)
            st = ember_fail(ctx, EMBER_ERR_FORMAT,
                            "%s is compressed with zip method %u; ember reads stored (numpy.savez) "
                            "and deflated (numpy.savez_compressed) entries",
                            s->name, (unsigned)method);
        else if ((method == 0 && packed != unpacked) || (method == 8 && unpacked / 1032 > packed + 1))
            /* deflate packs at most 1032 bytes into one: a larger size declared
             * would only make room for data that cannot be there */
            st = damaged(s, "an entry's sizes do not agree");
        if (st != EMBER_OK)
            break;
        unsigned char head[30];
        if (local > dir_at || dir_at - local < sizeof head ||
            (st = read_at(s, local, head, sizeof head)) != EMBER_OK) {
            st = st == EMBER_OK ? damaged(s, "an entry's local header lies outside the file") : st;
            break;
        }
        uint64_t data_at = local + 30 + le16(head + 26) + le16(head + 28);
        if (memcmp(head, "PK\3\4", 4) != 0 || le16(head + 26) != name_len || data_at > dir_at ||
            packed > dir_at - data_at) {
            st = damaged(s, "an entry's data lies outside the file or its local header does not match");
            break;
        }
        if (fseeko(s->f, (off_t)data_at, SEEK_SET) != 0) {
            st = ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", s->name, strerror(errno));
            break;
        }
        s->zip = true;
        s->want_crc = le32(e + 16);
        s->crc = (uint32_t)crc32(0, NULL, 0);
        s->left = unpacked;
        if (method == 8) {
            s->deflated = true;
            s->packed_left = packed;
            if (!(s->in = ember_host_alloc(ctx, NPY_STREAM_CHUNK))) {
                st = EMBER_ERR_NOMEM;
                break;
            }
            if (inflateInit2(&s->z, -MAX_WBITS) != Z_OK) { /* raw deflate: zip has no zlib wrapper */
                st = ember_fail(ctx, EMBER_ERR_NOMEM, "%s: zlib cannot start", s->name);
                break;
            }
            s->z_open = true;
        }
        free(dir);
        return EMBER_OK;
    }
    free(dir);
    if (st == EMBER_OK)
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s has no %s (it holds %s)", path, entry,
                        names[0] ? names : "nothing");
    return st;
}
