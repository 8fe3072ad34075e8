/* SPDX-License-Identifier: MIT */
/*
 * io/safetensors-write.c — an atomic writer of safetensors files: the
 * header built and checked, the file written beside its place, flushed and
 * put in place in one step (base/platform.h), or the same bytes in memory.
 */
#define _FILE_OFFSET_BITS 64 /* files over 2 GB on 32-bit hosts too */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json-impl.h"
#include "platform.h"
#include "safetensors-impl.h"
#include "text-impl.h"

#define METADATA_KEY "__metadata__"

/* ------------------------------------------------------------ byte order */

/* The file is little-endian whatever the host. Going through bytes with
 * shifts is right on every host, so the one path every test runs is also
 * the big-endian path. */
static void store_le64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        b[i] = (unsigned char)v;
}

/* n floats whose bytes are little-endian, into host order, in place */
static void f32_to_le(unsigned char *out, const float *values, size_t n)
{
    for (size_t i = 0; i < n; i++, out += 4) {
        uint32_t u;
        memcpy(&u, &values[i], 4);
        out[0] = (unsigned char)u, out[1] = (unsigned char)(u >> 8);
        out[2] = (unsigned char)(u >> 16), out[3] = (unsigned char)(u >> 24);
    }
}

/* ---------------------------------------------------------------- writing */

static int by_tensor_name(const void *a, const void *b)
{
    return strcmp((*(const struct ember_safetensors_tensor *const *)a)->name,
                  (*(const struct ember_safetensors_tensor *const *)b)->name);
}

/* Names unique, UTF-8 and not the metadata key; shapes sane; metadata in
 * pairs of UTF-8 strings with unique keys. Sets *bytes to each tensor's size. */
static ember_status check_tensors(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors, int count,
                                  const char *const *metadata, uint64_t *bytes)
{
    ember_status status = EMBER_OK;
    for (int i = 0; i < count; i++) {
        const struct ember_safetensors_tensor *t = &tensors[i];
        if (!t->name || !ember_utf8_valid(t->name) || strcmp(t->name, METADATA_KEY) == 0)
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor %d's name is %s", i,
                              !t->name                             ? "NULL"
                              : strcmp(t->name, METADATA_KEY) == 0 ? "reserved"
                                                                   : "not UTF-8");
        if (t->ndim < 0 || t->ndim > EMBER_SAFETENSORS_MAX_DIMS || (t->ndim && !t->shape))
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor \"%s\" needs 0 to %d dimensions",
                              t->name, EMBER_SAFETENSORS_MAX_DIMS);
        uint64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] < 0 || (t->shape[d] && numel > UINT64_MAX / 4 / (uint64_t)t->shape[d]))
                return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor \"%s\" has a bad shape", t->name);
            numel *= (uint64_t)t->shape[d];
        }
        if (numel && !t->values)
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: tensor \"%s\" has no values", t->name);
        bytes[i] = numel * 4;
    }
    const struct ember_safetensors_tensor **sorted = ember_host_alloc(ctx, (size_t)count * sizeof *sorted);
    if (!sorted)
        return EMBER_ERR_NOMEM;
    for (int i = 0; i < count; i++)
        sorted[i] = &tensors[i];
    qsort(sorted, (size_t)count, sizeof *sorted, by_tensor_name);
    for (int i = 1; i < count && status == EMBER_OK; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
            status =
                ember_fail(ctx, EMBER_ERR_ARG, "safetensors: two tensors are called \"%s\"", sorted[i]->name);
    free(sorted);
    /* metadata lists are short: a quadratic look for repeats is fine */
    for (int i = 0; metadata && metadata[i] && status == EMBER_OK; i += 2) {
        if (!metadata[i + 1])
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: metadata key \"%s\" has no value",
                              metadata[i]);
        if (!ember_utf8_valid(metadata[i]) || !ember_utf8_valid(metadata[i + 1]))
            return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: metadata \"%s\" is not UTF-8", metadata[i]);
        for (int j = 0; j < i; j += 2)
            if (strcmp(metadata[i], metadata[j]) == 0)
                return ember_fail(ctx, EMBER_ERR_ARG, "safetensors: metadata key \"%s\" is given twice",
                                  metadata[i]);
    }
    return status;
}

/* The JSON header, padded with spaces to a multiple of 8 bytes so that the
 * data section (after the 8-byte length) is 8-byte aligned. */
static ember_status build_header(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors, int count,
                                 const uint64_t *bytes, const char *const *metadata, struct ember_text *t)
{
    bool first = true;
    ember_text_printf(t, "{");
    if (metadata && metadata[0]) {
        ember_text_printf(t, "\"%s\":{", METADATA_KEY);
        for (int i = 0; metadata[i]; i += 2) {
            ember_text_printf(t, "%s", i ? "," : "");
            ember_text_json_string(t, metadata[i]);
            ember_text_printf(t, ":");
            ember_text_json_string(t, metadata[i + 1]);
        }
        ember_text_printf(t, "}");
        first = false;
    }
    uint64_t offset = 0;
    for (int i = 0; i < count; i++, first = false) {
        ember_text_printf(t, "%s", first ? "" : ",");
        ember_text_json_string(t, tensors[i].name);
        ember_text_printf(t, ":{\"dtype\":\"F32\",\"shape\":[");
        for (int d = 0; d < tensors[i].ndim; d++)
            ember_text_printf(t, "%s%llu", d ? "," : "", (unsigned long long)tensors[i].shape[d]);
        ember_text_printf(t, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)offset,
                          (unsigned long long)(offset + bytes[i]));
        offset += bytes[i];
    }
    ember_text_printf(t, "}");
    while (!t->failed && t->len % 8)
        ember_text_printf(t, " ");
    if (t->failed)
        return ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a safetensors header");
    if (t->len > EMBER_SAFETENSORS_MAX_HEADER)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "safetensors: the header would be %zu bytes, over the 100 MB readers accept",
                          t->len);
    return EMBER_OK;
}

/* Length, header and data; false with errno set when a write fails. */
static bool write_contents(FILE *f, const struct ember_text *header,
                           const struct ember_safetensors_tensor *tensors, int count, const uint64_t *bytes)
{
    unsigned char prefix[8], chunk[4096];
    store_le64(prefix, header->len);
    errno = 0;
    if (fwrite(prefix, 1, 8, f) != 8 || fwrite(header->s, 1, header->len, f) != header->len)
        return false;
    for (int i = 0; i < count; i++) {
        for (uint64_t done = 0; done < bytes[i];) {
            size_t n = bytes[i] - done < sizeof chunk ? (size_t)(bytes[i] - done) : sizeof chunk;
            f32_to_le(chunk, tensors[i].values + done / 4, n / 4);
            if (fwrite(chunk, 1, n, f) != n)
                return false;
            done += n;
        }
    }
    return true;
}

/* mkstemp makes the file 0600. A checkpoint is no secret: it keeps the mode
 * of the file it replaces, or gets 0644 (what the usual umask 022 gives; the
 * umask itself cannot be read without changing it, which is unsafe with
 * threads). */
static void set_mode(int fd, const char *path)
{
    struct stat info;
    mode_t mode = stat(path, &info) == 0 && S_ISREG(info.st_mode) ? info.st_mode & 0777 : 0644;
    ember_set_file_mode(fd, (int)mode);
}

/* A save killed before its rename leaves path.tmp.XXXXXX behind. Each save
 * holds its temporary file while it writes (an flock on POSIX; on Windows
 * a file open in a process cannot be removed); the next save to the same
 * path removes every such file no process holds, which is every file
 * whose writer is gone, and never one another process is still writing. */
static void remove_stale_temporaries(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    const char *base = slash ? slash + 1 : path;
    int n =
        slash ? snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path) : snprintf(dir, sizeof dir, ".");
    if (n < 0 || (size_t)n >= sizeof dir)
        return;
    if (!dir[0])
        snprintf(dir, sizeof dir, "/");
    size_t base_len = strlen(base);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        /* exactly base + ".tmp." + the six characters mkstemp chose */
        if (strlen(e->d_name) != base_len + 11 || strncmp(e->d_name, base, base_len) != 0 ||
            strncmp(e->d_name + base_len, ".tmp.", 5) != 0)
            continue;
        ember_remove_if_abandoned(dir, e->d_name);
    }
    if (d)
        closedir(d);
}

ember_status ember_safetensors_save(ember_ctx *ctx, const char *path,
                                    const struct ember_safetensors_tensor *tensors, int count,
                                    const char *const *metadata)
{
    if (!path || count < 0 || (count && !tensors))
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_safetensors_save: %s",
                          !path ? "NULL path" : "no tensors");
    struct ember_text header = {0};
    const char *step = "create a temporary file for";
    char *tmp = NULL;
    FILE *f = NULL;
    int err = 0;
    uint64_t *bytes = ember_host_alloc(ctx, (size_t)count * sizeof *bytes);
    if (!bytes)
        return EMBER_ERR_NOMEM;
    ember_status status = check_tensors(ctx, tensors, count, metadata, bytes);
    if (status == EMBER_OK)
        status = build_header(ctx, tensors, count, bytes, metadata, &header);
    if (status == EMBER_OK && !(tmp = ember_host_alloc(ctx, strlen(path) + sizeof ".tmp.XXXXXX")))
        status = EMBER_ERR_NOMEM;
    if (status != EMBER_OK)
        goto free_memory;

    remove_stale_temporaries(path);
    sprintf(tmp, "%s.tmp.XXXXXX", path);
    /* held until the file is closed: while it is, the file is not stale */
    int fd = ember_make_temporary_file(tmp);
    if (fd < 0) {
        err = errno;
        goto fail; /* nothing was created */
    }
    set_mode(fd, path);
    if (!(f = fdopen(fd, "wb"))) {
        err = errno;
        close(fd);
        goto remove_tmp;
    }
    step = "write";
    bool ok = write_contents(f, &header, tensors, count, bytes) && fflush(f) == 0;
    if (ok) {
        step = "sync";
        ok = ember_flush_to_disk(fileno(f));
    }
    if (!ok) {
        err = errno;
        fclose(f);
        goto remove_tmp;
    }
    step = "close";
    if (fclose(f) != 0) {
        err = errno;
        goto remove_tmp;
    }
    step = "rename the temporary file onto";
    if (!ember_replace_file(tmp, path)) {
        err = errno;
        if (err == EBUSY) { /* the new contents are whole: kept, not lost */
            status =
                ember_fail(ctx, EMBER_ERR_IO,
                           "cannot replace %s: another program has it open, and Windows replaces no file "
                           "that is open; it is unchanged, and what was to be saved is in %s (close the "
                           "other program and rename that file, or save elsewhere)",
                           path, tmp);
            goto free_memory;
        }
        goto remove_tmp;
    }
    ember_flush_folder_of(path);
    goto free_memory;

remove_tmp:
    unlink(tmp);
fail:
    status = ember_fail(ctx, EMBER_ERR_IO, "cannot %s %s: %s", step, path, strerror(err ? err : EIO));
free_memory:
    free(tmp);
    free(header.s);
    free(bytes);
    return status;
}

ember_status ember_safetensors_save_memory(ember_ctx *ctx, const struct ember_safetensors_tensor *tensors,
                                           int count, const char *const *metadata, void **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    if (count < 0 || (count && !tensors))
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_safetensors_save_memory: no tensors");
    struct ember_text header = {0};
    uint64_t *bytes = ember_host_alloc(ctx, (size_t)count * sizeof *bytes + 1);
    if (!bytes)
        return EMBER_ERR_NOMEM;
    ember_status status = check_tensors(ctx, tensors, count, metadata, bytes);
    if (status == EMBER_OK)
        status = build_header(ctx, tensors, count, bytes, metadata, &header);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = status == EMBER_OK ? ember_memory_writer(&buf, &len) : NULL;
    if (status == EMBER_OK && !f)
        status = ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a checkpoint in memory");
    if (f) {
        bool ok = write_contents(f, &header, tensors, count, bytes);
        /* closing publishes buf and len, and fails only for want of memory */
        if (!ember_memory_writer_close(f, &buf, &len) || !ok) {
            free(buf);
            status = ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory for a checkpoint in memory");
        } else {
            *data = buf;
            *size = len;
        }
    }
    free(header.s);
    free(bytes);
    return status;
}
