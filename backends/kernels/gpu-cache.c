/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu-cache.c — compiled programs kept on disk, so that a
 * device compiles ember's kernels once rather than at every start; for
 * every GPU backend, each in a folder of its own (`kind`).
 *
 * The folder: $EMBER_CACHE_DIR/<kind>, else $XDG_CACHE_HOME/ember/<kind>,
 * else ~/.cache/ember/<kind>. One file per key, <32 hex digits>.bin: a
 * header (magic, format, key, payload size, payload checksum) and then the
 * compiled program. The key hashes everything the program depends on,
 * as the backend lists it: the device, the driver and compiler versions,
 * the whole source and the build options.
 *
 * An entry is never trusted: the file must be exactly as long as its
 * header says, carry this key, and match its checksum before the driver
 * sees it, and a binary the driver then rejects is rebuilt too. Entries
 * are written to a temporary file and renamed into place, so a reader
 * never sees half of one. The hashes are FNV-1a: quick, not cryptographic;
 * they tell entries apart and catch damage, they are no defence against
 * someone who can write to the folder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdbool.h>

#include "files-impl.h" /* ember_cache_folder */
#include "gpu.h"
#include "platform.h"

#define CACHE_MAGIC     "EMBERCL\n"
#define CACHE_FORMAT    1
#define CACHE_MAX_BYTES ((uint64_t)1 << 30) /* no program binary comes near */

struct cache_header {
    char magic[8];
    uint32_t format;
    uint32_t header_bytes;
    uint64_t key[2];
    uint64_t payload_bytes;
    uint64_t payload_hash;
};

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* spreads the bits of an FNV state (splitmix64's finaliser) */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void ember_gpu_cache_key_make(const char *const *parts, int count, struct ember_gpu_cache_key *key)
{
    uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull; /* two FNV streams, two bases */
    a = fnv1a(a, CACHE_MAGIC, sizeof CACHE_MAGIC);
    b = fnv1a(b, CACHE_MAGIC, sizeof CACHE_MAGIC);
    for (int i = 0; i < count; i++) {
        a = fnv1a(a, parts[i], strlen(parts[i]) + 1); /* the NUL keeps "ab","c" apart from "a","bc" */
        b = fnv1a(b, parts[i], strlen(parts[i]) + 1);
    }
    key->hash[0] = mix(a);
    key->hash[1] = mix(b ^ 0x9e3779b97f4a7c15ull);
}

static bool gpu_cache_path(const char *kind, const struct ember_gpu_cache_key *key, char *out, size_t len,
                           char *why, size_t why_len)
{
    char folder[4000];
    if (!ember_cache_folder(kind, folder, sizeof folder, why, why_len))
        return false;
    snprintf(out, len, "%s/%016llx%016llx.bin", folder, (unsigned long long)key->hash[0],
             (unsigned long long)key->hash[1]);
    return true;
}

/* Reads and checks an entry: NULL with the reason, or the payload. */
static unsigned char *gpu_cache_read(FILE *f, const struct ember_gpu_cache_key *key, size_t *size, char *why,
                                     size_t why_len)
{
    struct cache_header h;
    struct stat st;
    if (fread(&h, sizeof h, 1, f) != 1) {
        snprintf(why, why_len, "shorter than its header");
        return NULL;
    }
    if (memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) != 0 || h.format != CACHE_FORMAT ||
        h.header_bytes != sizeof h) {
        snprintf(why, why_len, "not an ember cache entry of format %d", CACHE_FORMAT);
        return NULL;
    }
    if (h.key[0] != key->hash[0] || h.key[1] != key->hash[1]) {
        snprintf(why, why_len, "made for another device, driver or source");
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || h.payload_bytes > CACHE_MAX_BYTES ||
        (uint64_t)st.st_size != sizeof h + h.payload_bytes) {
        snprintf(why, why_len, "%lld bytes long, but its header says %llu", (long long)st.st_size,
                 (unsigned long long)(sizeof h + h.payload_bytes));
        return NULL;
    }
    unsigned char *payload = malloc(h.payload_bytes ? h.payload_bytes : 1);
    if (!payload) {
        snprintf(why, why_len, "no memory to read it");
        return NULL;
    }
    if (fread(payload, 1, h.payload_bytes, f) != h.payload_bytes ||
        fnv1a(0xcbf29ce484222325ull, payload, h.payload_bytes) != h.payload_hash) {
        snprintf(why, why_len, "damaged: its checksum does not match");
        free(payload);
        return NULL;
    }
    *size = (size_t)h.payload_bytes;
    return payload;
}

unsigned char *ember_gpu_cache_get(const char *kind, const struct ember_gpu_cache_key *key, size_t *size,
                                   char *why, size_t why_len)
{
    char path[4096];
    if (!gpu_cache_path(kind, key, path, sizeof path, why, why_len))
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, why_len, "no entry at %.400s: %s", path, strerror(errno));
        return NULL;
    }
    char reason[512];
    unsigned char *payload = gpu_cache_read(f, key, size, reason, sizeof reason);
    fclose(f);
    if (!payload)
        snprintf(why, why_len, "ignoring the entry %.400s: %s", path, reason);
    return payload;
}

/* The marker beside an entry while a driver loads it: <key>.loading. */
static bool gpu_cache_marker(const char *kind, const struct ember_gpu_cache_key *key, char *out, size_t len)
{
    char why[512];
    if (!gpu_cache_path(kind, key, out, len, why, sizeof why))
        return false;
    char *dot = strrchr(out, '.');
    if (!dot || (size_t)(dot - out) + sizeof ".loading" > len)
        return false;
    strcpy(dot, ".loading");
    return true;
}

/* A checksum proves an entry is what ember wrote, not that the driver
 * survives it: a forged entry, or a driver bug, can crash the process
 * inside the driver, where nothing can catch it, and would do so on every
 * later start. So a marker is left beside the entry while the driver loads
 * it and removed once the driver has answered (ember_gpu_cache_loaded); an
 * entry found with its marker still there took a process down with it and
 * is thrown away, so that a bad entry costs at most one crash. (Two runs
 * loading the same entry at the same moment may cost one rebuild.) */
unsigned char *ember_gpu_cache_load(struct ember_gpu *gpu, const char *kind,
                                    const struct ember_gpu_cache_key *key, size_t *size)
{
    char why[1024], marker[4200], entry[4200];
    if (gpu_cache_marker(kind, key, marker, sizeof marker) && access(marker, F_OK) == 0 &&
        gpu_cache_path(kind, key, entry, sizeof entry, why, sizeof why)) {
        unlink(entry);
        unlink(marker);
        gpu->host.log(gpu->host.ctx, EMBER_LOG_WARN,
                      "%s: a run died while the driver loaded the cached kernels "
                      "%s: the entry is discarded and the kernels rebuilt",
                      gpu->name, entry);
        return NULL;
    }
    errno = 0;
    unsigned char *binary = ember_gpu_cache_get(kind, key, size, why, sizeof why);
    if (!binary) {
        gpu->host.log(gpu->host.ctx, errno == ENOENT ? EMBER_LOG_DEBUG : EMBER_LOG_INFO,
                      "%s: cached kernels: %s", gpu->name, why);
        return NULL;
    }
    char path[4096];
    gpu_cache_path(kind, key, path, sizeof path, why, sizeof why);
    gpu->host.log(gpu->host.ctx, EMBER_LOG_INFO, "%s: kernels read from the cache: %s (%zu bytes)", gpu->name,
                  path, *size);
    int fd = ember_open_file(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
    return binary;
}

void ember_gpu_cache_loaded(const char *kind, const struct ember_gpu_cache_key *key)
{
    char marker[4200];
    if (gpu_cache_marker(kind, key, marker, sizeof marker))
        unlink(marker);
}

bool ember_gpu_cache_put(const char *kind, const struct ember_gpu_cache_key *key, const unsigned char *binary,
                         size_t size, char *why, size_t why_len)
{
    char path[4096], tmp[4200];
    if (!gpu_cache_path(kind, key, path, sizeof path, why, why_len))
        return false;
    struct cache_header h = {.format = CACHE_FORMAT,
                             .header_bytes = sizeof h,
                             .key = {key->hash[0], key->hash[1]},
                             .payload_bytes = size,
                             .payload_hash = fnv1a(0xcbf29ce484222325ull, binary, size)};
    memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
    snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
    why[0] = '\0';
    int fd = ember_make_temporary_file(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        snprintf(why, why_len, "cannot create %.400s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
    } else {
        bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(binary, 1, size, f) == size && fflush(f) == 0 &&
                  ember_flush_to_disk(fileno(f));
        int saved = errno;
        if (fclose(f) != 0 && ok) {
            ok = false;
            saved = errno;
        }
        if (!ok)
            snprintf(why, why_len, "writing %.400s failed: %s", tmp, strerror(saved));
        else if (!ember_replace_file(tmp, path))
            snprintf(why, why_len, "renaming to %.400s failed: %s", path, strerror(errno));
    }
    if (why[0]) {
        if (fd >= 0)
            unlink(tmp);
        return false;
    }
    snprintf(why, why_len, "%.1000s", path);
    return true;
}

void ember_gpu_compile_begin(struct ember_gpu *gpu, const char *kind, const char *what, const char *kept)
{
    char folder[3000], why[1024], said[4200];
    if (kept)
        snprintf(said, sizeof said, "compiling kernels for %s (%s) (%s)", gpu->name, what, kept);
    else if (ember_cache_folder(kind, folder, sizeof folder, why, sizeof why))
        snprintf(said, sizeof said, "compiling kernels for %s (%s) (once; kept in %s)", gpu->name, what,
                 folder);
    else
        snprintf(said, sizeof said, "compiling kernels for %s (%s) (not kept: %s)", gpu->name, what, why);
    if (gpu->host.wait_begin) /* a compile the driver's own cache may answer is told of only if it lasts */
        gpu->host.wait_begin(gpu->host.ctx, said, kept != NULL);
    gpu->host.log(gpu->host.ctx, EMBER_LOG_DEBUG, "%s", said);
}

void ember_gpu_compile_end(struct ember_gpu *gpu)
{
    if (gpu->host.wait_end)
        gpu->host.wait_end(gpu->host.ctx);
}

void ember_gpu_cache_store(struct ember_gpu *gpu, const char *kind, const struct ember_gpu_cache_key *key,
                           const unsigned char *binary, size_t size)
{
    char why[1100];
    if (ember_gpu_cache_put(kind, key, binary, size, why, sizeof why))
        gpu->host.log(gpu->host.ctx, EMBER_LOG_INFO, "%s: kernels cached in %s", gpu->name, why);
    else
        gpu->host.log(gpu->host.ctx, EMBER_LOG_INFO, "%s: not caching kernels: %s", gpu->name, why);
}
