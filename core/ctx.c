/* SPDX-License-Identifier: MIT */
/* core/ctx.c — contexts: errors, logging, counted host memory, the buffer cache
 * (closing one is ctx-close.c's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autograd-impl.h"
#include "profile-impl.h"
#include "tensor-impl.h"
#include "text-impl.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

const char *ember_version(void)
{
    return STRINGIFY(EMBER_VERSION_MAJOR) "." STRINGIFY(EMBER_VERSION_MINOR) "." STRINGIFY(
        EMBER_VERSION_PATCH);
}

/* ember's own free(), so that memory goes back to the C runtime that gave it
 * (ember.h: on Windows a DLL and its caller may each have their own) */
void ember_free(void *memory) { free(memory); }

const char *ember_status_str(ember_status status)
{
    switch (status) {
    case EMBER_OK: return "ok";
    case EMBER_ERR_ARG: return "invalid argument";
    case EMBER_ERR_NOMEM: return "out of memory";
    case EMBER_ERR_IO: return "input/output error";
    case EMBER_ERR_FORMAT: return "malformed file";
    case EMBER_ERR_DEVICE: return "device error";
    case EMBER_ERR_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

ember_ctx *ember_ctx_new(void)
{
    ember_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    /* no log_fn: silent until the host asks (ember_ctx_set_log) */
    ctx->log_level = EMBER_LOG_WARN;
    ctx->grad_enabled = true;
    snprintf(ctx->device_name, sizeof ctx->device_name, "none");
    const char *exact = getenv("EMBER_EXACT_BUFFERS");
    ctx->exact_buffers = exact && strcmp(exact, "1") == 0;
    return ctx;
}

void ember_ctx_set_log(ember_ctx *ctx, ember_log_fn fn, void *user, ember_log_level max_level)
{
    if (!ctx)
        return;
    ctx->log_fn = fn;
    ctx->log_user = user;
    ctx->log_level = max_level;
}

void ember_ctx_get_log(const ember_ctx *ctx, ember_log_fn *fn, void **user, ember_log_level *max_level)
{
    if (fn)
        *fn = ctx ? ctx->log_fn : NULL;
    if (user)
        *user = ctx ? ctx->log_user : NULL;
    if (max_level)
        *max_level = ctx ? ctx->log_level : EMBER_LOG_ERROR;
}

void ember_ctx_set_progress(ember_ctx *ctx, ember_progress_fn fn, void *user)
{
    if (!ctx)
        return;
    ctx->progress_fn = fn;
    ctx->progress_user = user;
}

void ember_ctx_get_progress(const ember_ctx *ctx, ember_progress_fn *fn, void **user)
{
    if (fn)
        *fn = ctx ? ctx->progress_fn : NULL;
    if (user)
        *user = ctx ? ctx->progress_user : NULL;
}

ember_status ember_ctx_set_matmul_precision(ember_ctx *ctx, ember_matmul_precision precision)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (precision != EMBER_MATMUL_HIGHEST && precision != EMBER_MATMUL_HIGH &&
        precision != EMBER_MATMUL_MEDIUM)
        return ember_set_error(ctx, EMBER_ERR_ARG,
                               "ember_ctx_set_matmul_precision: %d is none of EMBER_MATMUL_HIGHEST, "
                               "EMBER_MATMUL_HIGH and EMBER_MATMUL_MEDIUM",
                               (int)precision);
    ctx->matmul_precision = precision;
    return EMBER_OK;
}

ember_matmul_precision ember_ctx_matmul_precision(const ember_ctx *ctx)
{
    return ctx ? ctx->matmul_precision : EMBER_MATMUL_HIGHEST;
}

bool ember_ctx_matmul_precision_matters(const ember_ctx *ctx, ember_matmul_precision precision)
{
    return ctx && ctx->ops && precision != EMBER_MATMUL_HIGHEST && ctx->ops->matmul_precision_matters &&
           ctx->ops->matmul_precision_matters(ctx->dev, precision);
}

ember_status ember_ctx_set_threads(ember_ctx *ctx, int threads)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    ctx->threads = threads < 0 ? 0 : threads;
    ember_status st = EMBER_OK;
    if (ctx->ops && ctx->ops->set_threads) {
        st = ctx->ops->set_threads(ctx->dev, ctx->threads); /* a failure is recorded, and leaves it working */
        ctx->ops->device_describe(ctx->dev, ctx->device_name, sizeof ctx->device_name);
    }
    return st;
}

const char *ember_ctx_device_name(const ember_ctx *ctx) { return ctx ? ctx->device_name : "none"; }

const char *ember_ctx_device_choice(const ember_ctx *ctx) { return ctx ? ctx->device_choice : ""; }

ember_status ember_last_status(const ember_ctx *ctx) { return ctx ? ctx->status : EMBER_ERR_ARG; }

const char *ember_last_error(const ember_ctx *ctx) { return ctx ? ctx->error : "no context"; }

void ember_clear_error(ember_ctx *ctx)
{
    if (!ctx)
        return;
    ctx->status = EMBER_OK;
    ctx->error[0] = '\0';
}

void ember_ctx_memory_stats(const ember_ctx *ctx, ember_memory_stats *stats)
{
    if (ctx && stats)
        *stats = ctx->stats;
}

void ember_ctx_memory_peak(const ember_ctx *ctx, uint64_t *in_use, uint64_t *held)
{
    if (in_use)
        *in_use = ctx ? ctx->in_use_peak : 0;
    if (held)
        *held = ctx ? ctx->held_peak : 0;
}

ember_status ember_vfail(ember_ctx *ctx, ember_status status, const char *fmt, va_list ap)
{
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    ctx->status = status;
    if (ctx->log_fn && ctx->log_level >= EMBER_LOG_DEBUG)
        ctx->log_fn(ctx->log_user, EMBER_LOG_DEBUG, ctx->error);
    return status;
}

ember_status ember_set_error(ember_ctx *ctx, ember_status status, const char *fmt, ...)
{
    va_list ap;
    if (!ctx)
        return status;
    va_start(ap, fmt);
    ember_vfail(ctx, status, fmt, ap);
    va_end(ap);
    return status;
}

void ember_log(ember_ctx *ctx, ember_log_level level, const char *fmt, ...)
{
    char message[1024];
    if (!ctx || !ctx->log_fn || level > ctx->log_level)
        return;
    EMBER_FORMAT_ARGS(message, fmt);
    ctx->log_fn(ctx->log_user, level, message);
}

void *ember_host_alloc(ember_ctx *ctx, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory (asked for %zu bytes)", bytes);
        return NULL;
    }
    ctx->stats.host_allocs++;
    return p;
}

void *ember_host_calloc(ember_ctx *ctx, size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory (asked for %zu x %zu bytes)", count, size);
        return NULL;
    }
    ctx->stats.host_allocs++;
    return p;
}

char *ember_host_strdup(ember_ctx *ctx, const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = ember_host_alloc(ctx, len);
    if (copy)
        memcpy(copy, s, len);
    return copy;
}

ember_status ember_host_grow(ember_ctx *ctx, void **array, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return EMBER_OK;
    int64_t grown = *cap ? *cap * 2 : 64;
    while (grown < need)
        grown *= 2;
    void *p = realloc(*array, (size_t)grown * elem);
    if (!p)
        return ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory (growing to %lld entries)",
                          (long long)grown);
    ctx->stats.host_allocs++;
    *array = p;
    *cap = grown;
    return EMBER_OK;
}

static double mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* Requests are rounded up so that nearby sizes share cache entries and every
 * buffer is aligned for vector loads: to 256 bytes, and from 64 KiB on to
 * a sixteenth of their power of two (at most 6.25% more). A language
 * model's attention asks for sizes that grow a little with every token
 * generated; rounded so, they reuse the same few buffers instead of each
 * leaving one more in the cache. EMBER_EXACT_BUFFERS=1 leaves them as
 * asked, so that a kernel running one element past a tensor leaves its
 * allocation, where a memory checker sees it: the CUDA test double's
 * simulated GPUs run with it (docs/design.md, "Testing the CUDA backend
 * without a GPU"), as PyTorch's PYTORCH_NO_CUDA_MEMORY_CACHING=1 serves
 * compute-sanitizer. */
static size_t round_request(const ember_ctx *ctx, size_t bytes)
{
    if (ctx->exact_buffers)
        return bytes;
    size_t quantum = 256;
    if (bytes >= ((size_t)64 << 10)) {
        size_t power = (size_t)64 << 10;
        while (power <= bytes / 2)
            power *= 2;
        quantum = power / 16;
    }
    return (bytes + quantum - 1) / quantum * quantum;
}

/* the most bytes in use at once, for the cache's bound (ctx-impl.h) */
static void note_in_use(ember_ctx *ctx)
{
    uint64_t in_use = ctx->stats.device_bytes - ctx->cached_bytes;
    if (in_use > ctx->in_use_peak)
        ctx->in_use_peak = in_use;
}

ember_status ember_buffer_get(ember_ctx *ctx, size_t bytes, void **buf, size_t *rounded)
{
    size_t want = round_request(ctx, bytes ? bytes : 1);
    /* newest first: a buffer just released is likely still in cache */
    for (int i = ctx->cache_len - 1; i >= 0; i--) {
        if (ctx->cache[i].bytes == want) {
            *buf = ctx->cache[i].buf;
            ctx->cache[i] = ctx->cache[--ctx->cache_len];
            ctx->cached_bytes -= want;
            note_in_use(ctx);
            *rounded = want;
            return EMBER_OK;
        }
    }
    ember_status st = ctx->ops->alloc(ctx->dev, want, buf);
    if (st == EMBER_ERR_NOMEM && ctx->cache_len > 0) {
        ember_buffer_cache_release(ctx);
        st = ctx->ops->alloc(ctx->dev, want, buf);
    }
    if (st == EMBER_ERR_NOMEM) {
        size_t free_bytes = 0, total = 0;
        char device[160] = "";
        if (ctx->ops->memory_info && ctx->ops->memory_info(ctx->dev, &free_bytes, &total) == EMBER_OK)
            snprintf(device, sizeof device, "; the device has %.1f MiB free of %.1f MiB", mib(free_bytes),
                     mib(total));
        return ember_fail(ctx, EMBER_ERR_NOMEM, "out of memory on %s: asked for %.1f MiB, holding %.1f MiB%s",
                          ctx->device_name, mib(want), mib(ctx->stats.device_bytes), device);
    }
    if (st != EMBER_OK)
        return st;
    ctx->stats.device_allocs++;
    ctx->stats.device_bytes += want;
    if (ctx->stats.device_bytes > ctx->held_peak)
        ctx->held_peak = ctx->stats.device_bytes;
    note_in_use(ctx);
    *rounded = want;
    return EMBER_OK;
}

/* Gives the oldest cached buffers back until the cache is within its bound
 * (ctx-impl.h). */
static void cache_trim(ember_ctx *ctx)
{
    uint64_t bound = 2 * ctx->in_use_peak + ((uint64_t)16 << 20);
    int gone = 0;
    while (gone < ctx->cache_len && ctx->cached_bytes > bound) {
        ctx->ops->release(ctx->dev, ctx->cache[gone].buf);
        ctx->stats.device_bytes -= ctx->cache[gone].bytes;
        ctx->cached_bytes -= ctx->cache[gone].bytes;
        gone++;
    }
    if (gone) {
        memmove(ctx->cache, ctx->cache + gone, (size_t)(ctx->cache_len - gone) * sizeof *ctx->cache);
        ctx->cache_len -= gone;
    }
}

void ember_buffer_put(ember_ctx *ctx, void *buf, size_t bytes)
{
    if (ctx->cache_len == ctx->cache_cap) {
        int cap = ctx->cache_cap ? ctx->cache_cap * 2 : 64;
        void *p = realloc(ctx->cache, (size_t)cap * sizeof *ctx->cache);
        if (!p) { /* cannot cache it: give it back instead */
            ctx->ops->release(ctx->dev, buf);
            ctx->stats.device_bytes -= bytes;
            return;
        }
        ctx->stats.host_allocs++;
        ctx->cache = p;
        ctx->cache_cap = cap;
    }
    ctx->cache[ctx->cache_len++] = (struct ember_cached_buffer){.buf = buf, .bytes = bytes};
    ctx->cached_bytes += bytes;
    cache_trim(ctx);
}

void ember_buffer_give_back(ember_ctx *ctx, void *buf, size_t bytes)
{
    ctx->ops->release(ctx->dev, buf);
    ctx->stats.device_bytes -= bytes;
}

void ember_buffer_cache_release(ember_ctx *ctx)
{
    for (int i = 0; i < ctx->cache_len; i++) {
        ctx->ops->release(ctx->dev, ctx->cache[i].buf);
        ctx->stats.device_bytes -= ctx->cache[i].bytes;
    }
    ctx->cache_len = 0;
    ctx->cached_bytes = 0;
}

void ember_ctx_release_cached(ember_ctx *ctx)
{
    if (ctx && ctx->ops)
        ember_buffer_cache_release(ctx);
}

bool ember_ctx_ready(ember_ctx *ctx)
{
    if (ctx->ops)
        return true;
    ember_fail(ctx, EMBER_ERR_ARG, "no device is open: call ember_ctx_use_device first");
    return false;
}
