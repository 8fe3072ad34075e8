/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_cuda_driver.c — the CUDA test double's driver API:
 * devices, primary contexts, memory, copies, streams and events (see
 * fake_cuda.h for the whole double). Loaded through EMBER_CUDA_LIBRARY.
 *
 * It answers from the environment:
 *   EMBER_FAKE_CUDA_INIT         what cuInit returns (default 0; 34 is the stub's answer)
 *   EMBER_FAKE_CUDA_DRIVER       cuDriverGetVersion (default 12020, CUDA 12.2)
 *   EMBER_FAKE_CUDA_GPUS         "cc:name,cc:name" (default "35:Fake Tesla K40m")
 *   EMBER_FAKE_CUDA_MEMORY       MiB of device memory per GPU (default 4096)
 *   EMBER_FAKE_CUDA_SMS          multiprocessors per GPU (default 15)
 *   EMBER_FAKE_CUDA_INTEGRATED   1: an integrated GPU (a Jetson's), whose memory is the
 *                                host's: CU_DEVICE_ATTRIBUTE_INTEGRATED says so, and
 *                                memory must come from cuMemAllocManaged, which the
 *                                CPU reads and writes where it lies: cuMemAlloc, and
 *                                copies to or from unified memory, are refused
 *                                (CUDA_ERROR_NOT_SUPPORTED), the double's check that
 *                                ember maps rather than copies
 *   EMBER_FAKE_CUDA_REFUSE       refuse every module that is a "cubin", "ptx", or "all"
 *                                (CUDA_ERROR_INVALID_IMAGE / _INVALID_PTX), as a driver
 *                                with a reason of its own would
 *   EMBER_FAKE_CUDA_MAX_THREADS  "kernel=N,...": the most threads a block of that
 *                                kernel may have, as its registers would allow
 *   EMBER_FAKE_CUDA_FAULT        "kernel:n:code": the n-th launch of kernel fails with
 *                                code (700 an illegal address, 702 the display
 *                                watchdog), as a faulty kernel or a GPU would
 *   EMBER_FAKE_CUDA_WATCHDOG_MS  a display GPU's watchdog: a launch running longer
 *                                fails with CUDA_ERROR_LAUNCH_TIMEOUT (702)
 *   EMBER_FAKE_CUDA_KERNEL_MS    every kernel holds its completion back this long (the
 *                                worker sleeps before the next command), as a slow GPU would
 *   EMBER_FAKE_CUDA_EVENTS       "fail": cuEventRecord fails (CUDA_ERROR_NOT_SUPPORTED), so
 *                                the backend cannot time kernels with events
 *   EMBER_FAKE_CUDA_EXEC         "host" (default) or "ptx": how kernels run (fake_cuda.h)
 *   EMBER_FAKE_CUDA_GRID_X       the most blocks a grid may have along x (default
 *                                2^31 - 1): a lowered limit makes ember launch in chunks
 *   EMBER_FAKE_CUDA_SEED         in PTX mode, a seed that shuffles the order of each
 *                                block's warps between barriers (0, the default: in order)
 *   EMBER_FAKE_NVRTC_PTX_DIR     in PTX mode, where fake_nvrtc_keep.c kept the PTX of
 *                                each cubin it made
 *
 * Device memory is host memory from mmap (VirtualAlloc on Windows), each
 * allocation ending against a page that cannot be touched, so a kernel
 * that runs past the end of a buffer faults, as on a GPU. New memory is
 * filled with 0xff bytes (NaN as a float), so reading memory nothing wrote
 * shows. Freed memory stays untouchable for a while (a quarantine), so a
 * use after free faults too. Copies are checked against the allocations
 * (CUDA_ERROR_INVALID_VALUE).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "fake_cuda.h"

typedef void *CUstream;
typedef struct fake_event *CUevent;

/* ---------------------------------------------------------------- helpers */

int fake_env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

unsigned fake_max_grid_x(void)
{
    int lowered = fake_env_int("EMBER_FAKE_CUDA_GRID_X", 0);
    return lowered > 0 ? (unsigned)lowered : FAKE_MAX_GRID_X;
}

void fake_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "fake libcuda: %s\n", line);
}

int fake_driver_version(void) { return fake_env_int("EMBER_FAKE_CUDA_DRIVER", 12020); }

/* the PTX ISA a driver of this CUDA version loads, times ten (the table of
 * backends/cuda/cuda-path.c, which ember tests; here as a driver knows it) */
int fake_driver_ptx_isa(void)
{
    int v = fake_driver_version(), major = v / 1000, minor = v % 1000 / 10;
    if (major >= 13)
        return 90 + (major - 13) * 10 + minor;
    if (major == 12)
        return minor <= 5 ? 80 + minor : minor == 6 ? 85 : 79 + minor;
    if (major == 11)
        return 70 + minor;
    if (major == 10)
        return 63 + minor;
    return major == 9 ? 60 + minor : 50;
}

bool fake_gpu(int device, int *cc, char *name, int len)
{
    const char *spec = getenv("EMBER_FAKE_CUDA_GPUS");
    if (!spec)
        spec = "35:Fake Tesla K40m";
    for (int i = 0; *spec; i++) {
        const char *end = strchr(spec, ',');
        size_t n = end ? (size_t)(end - spec) : strlen(spec);
        if (i == device) {
            *cc = atoi(spec);
            const char *colon = memchr(spec, ':', n);
            size_t name_len = colon ? n - (size_t)(colon + 1 - spec) : 0;
            if (name_len >= (size_t)len)
                name_len = (size_t)len - 1;
            memcpy(name, colon ? colon + 1 : "", name_len);
            name[name_len] = '\0';
            return true;
        }
        if (!end)
            break;
        spec = end + 1;
    }
    return false;
}

static int gpu_count(void)
{
    char name[256];
    int cc, n = 0;
    while (n < FAKE_MAX_GPUS && fake_gpu(n, &cc, name, sizeof name))
        n++;
    return n;
}

static size_t memory_limit(void) { return (size_t)fake_env_int("EMBER_FAKE_CUDA_MEMORY", 4096) << 20; }
static int integrated(void) { return fake_env_int("EMBER_FAKE_CUDA_INTEGRATED", 0) == 1; }

static bool initialised;

/* ------------------------------------------------------------ the driver */

CUresult cuInit(unsigned int flags)
{
    if (flags)
        return FAKE_INVALID_VALUE;
    CUresult r = fake_env_int("EMBER_FAKE_CUDA_INIT", 0);
    initialised = r == FAKE_SUCCESS;
    return r;
}

CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return FAKE_INVALID_VALUE;
    *v = fake_driver_version();
    return FAKE_SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
    if (!initialised)
        return FAKE_NOT_INITIALIZED;
    *count = gpu_count();
    return FAKE_SUCCESS;
}

CUresult cuDeviceGet(int *device, int ordinal)
{
    if (!initialised)
        return FAKE_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= gpu_count())
        return FAKE_INVALID_DEVICE;
    *device = ordinal;
    return FAKE_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, int device)
{
    int cc;
    return fake_gpu(device, &cc, name, len) ? FAKE_SUCCESS : FAKE_INVALID_DEVICE;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device)
{
    char name[256];
    int cc = 0;
    if (!fake_gpu(device, &cc, name, sizeof name))
        return FAKE_INVALID_DEVICE;
    switch (attribute) {
    case 1: *value = FAKE_MAX_THREADS_PER_BLOCK; break; /* threads per block */
    case 2:
    case 3: *value = 1024; break;                   /* block x, y */
    case 4: *value = 64; break;                     /* block z */
    case 5: *value = (int)fake_max_grid_x(); break; /* grid x */
    case 6:
    case 7: *value = (int)FAKE_MAX_GRID_YZ; break;
    case 8: *value = FAKE_SHARED_PER_BLOCK; break;                    /* shared memory per block */
    case 13: *value = 745000; break;                                  /* clock, kHz */
    case 16: *value = fake_env_int("EMBER_FAKE_CUDA_SMS", 15); break; /* multiprocessors */
    case 18: *value = integrated(); break;                            /* integrated */
    case 75: *value = cc / 10; break;                                 /* compute capability */
    case 76: *value = cc % 10; break;
    default: return FAKE_INVALID_VALUE;
    }
    return FAKE_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, int device)
{
    if (device < 0 || device >= gpu_count())
        return FAKE_INVALID_DEVICE;
    *bytes = memory_limit();
    return FAKE_SUCCESS;
}

/* ------------------------------------------------------------- contexts */

static struct fake_ctx primary[FAKE_MAX_GPUS];
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local struct fake_ctx *current;

struct fake_ctx *fake_current(void) { return current && current->refs > 0 ? current : NULL; }

CUresult cuDevicePrimaryCtxRetain(struct fake_ctx **ctx, int device)
{
    if (!initialised)
        return FAKE_NOT_INITIALIZED;
    if (device < 0 || device >= gpu_count())
        return FAKE_INVALID_DEVICE;
    pthread_mutex_lock(&contexts_lock);
    struct fake_ctx *c = &primary[device];
    if (c->refs++ == 0) {
        pthread_mutex_init(&c->lock, NULL);
        pthread_cond_init(&c->changed, NULL);
        c->device = device;
        c->sticky = FAKE_SUCCESS;
    }
    pthread_mutex_unlock(&contexts_lock);
    *ctx = c;
    return FAKE_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(int device)
{
    if (device < 0 || device >= gpu_count())
        return FAKE_INVALID_DEVICE;
    pthread_mutex_lock(&contexts_lock);
    struct fake_ctx *c = &primary[device];
    if (c->refs == 0) {
        pthread_mutex_unlock(&contexts_lock);
        return FAKE_INVALID_CONTEXT;
    }
    if (--c->refs == 0) {
        fake_ctx_stop(c);
        fake_grid_report();
        for (struct fake_module *m = c->modules; m; m = m->next)
            if (!m->unloaded)
                fake_module_unload(m);
        fake_module_free_all(c);
        size_t bytes = 0;
        int left = fake_memory_release_all(c, &bytes);
        if (left)
            fake_say("the context of GPU %d was released with %d allocation%s (%zu bytes) never freed",
                     device, left, left == 1 ? "" : "s", bytes);
        pthread_cond_destroy(&c->changed);
        pthread_mutex_destroy(&c->lock);
        memset(c, 0, sizeof *c);
    }
    pthread_mutex_unlock(&contexts_lock);
    return FAKE_SUCCESS;
}

CUresult cuCtxSetCurrent(struct fake_ctx *ctx)
{
    if (ctx && ctx->refs == 0)
        return FAKE_INVALID_CONTEXT;
    current = ctx;
    return FAKE_SUCCESS;
}

CUresult cuCtxGetCurrent(struct fake_ctx **ctx)
{
    *ctx = fake_current();
    return FAKE_SUCCESS;
}

/* the current context, fit for work: NULL with *r the reason otherwise */
static struct fake_ctx *working_ctx(CUresult *r)
{
    struct fake_ctx *c = fake_current();
    if (!c) {
        *r = FAKE_INVALID_CONTEXT;
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    *r = c->sticky;
    pthread_mutex_unlock(&c->lock);
    return *r == FAKE_SUCCESS ? c : NULL;
}

/* the same, once everything queued in it has run: what a call on the default stream waits for */
static struct fake_ctx *drained_ctx(CUresult *r)
{
    struct fake_ctx *c = working_ctx(r);
    if (c && (*r = fake_ctx_drain(c)) != FAKE_SUCCESS)
        return NULL;
    return c;
}

CUresult cuCtxSynchronize(void)
{
    struct fake_ctx *c = fake_current();
    return c ? fake_ctx_drain(c) : FAKE_INVALID_CONTEXT;
}

/* --------------------------------------------------------------- memory */

struct allocation {
    uintptr_t base;
    size_t bytes;
    char *region;
    size_t region_bytes;
    struct fake_ctx *ctx;
    bool managed; /* from cuMemAllocManaged */
};

#define QUARANTINE 256

static struct {
    pthread_mutex_t lock;
    struct allocation *live;
    size_t count, capacity;
    size_t used; /* bytes asked for, against the device's memory */
    struct allocation freed[QUARANTINE];
    size_t next_freed;
} memory = {.lock = PTHREAD_MUTEX_INITIALIZER};

#ifdef _WIN32
size_t fake_page_size(void)
{
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return info.dwPageSize;
}

char *fake_pages_map(size_t bytes)
{
    return VirtualAlloc(NULL, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void fake_pages_forbid(void *at, size_t bytes)
{
    DWORD was;
    VirtualProtect(at, bytes, PAGE_NOACCESS, &was);
}

void fake_pages_unmap(void *at, size_t bytes)
{
    (void)bytes;
    VirtualFree(at, 0, MEM_RELEASE);
}
#else
size_t fake_page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

char *fake_pages_map(size_t bytes)
{
    void *at = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return at == MAP_FAILED ? NULL : at;
}

void fake_pages_forbid(void *at, size_t bytes) { mprotect(at, bytes, PROT_NONE); }

void fake_pages_unmap(void *at, size_t bytes) { munmap(at, bytes); }
#endif

CUresult fake_memory_alloc(struct fake_ctx *c, size_t bytes, CUdeviceptr *ptr)
{
    if (bytes == 0)
        return FAKE_INVALID_VALUE;
    size_t page = fake_page_size(), data = (bytes + 3) & ~(size_t)3, span = (data + page - 1) / page * page;
    pthread_mutex_lock(&memory.lock);
    CUresult r = FAKE_SUCCESS;
    if (memory.used + data > memory_limit()) {
        r = FAKE_OUT_OF_MEMORY;
    } else if (memory.count == memory.capacity) {
        size_t capacity = memory.capacity ? memory.capacity * 2 : 64;
        struct allocation *grown = realloc(memory.live, capacity * sizeof *grown);
        if (grown) {
            memory.live = grown;
            memory.capacity = capacity;
        } else {
            r = FAKE_OUT_OF_MEMORY;
        }
    }
    char *region = NULL;
    if (r == FAKE_SUCCESS) {
        /* a page nothing may touch on either side; the data ends against the second */
        region = fake_pages_map(span + 2 * page);
        if (!region)
            r = FAKE_OUT_OF_MEMORY;
    }
    if (r == FAKE_SUCCESS) {
        fake_pages_forbid(region, page);
        fake_pages_forbid(region + page + span, page);
        struct allocation *a = &memory.live[memory.count++];
        *a = (struct allocation){.base = (uintptr_t)(region + page + span - data),
                                 .bytes = data,
                                 .region = region,
                                 .region_bytes = span + 2 * page,
                                 .ctx = c};
        memset((void *)a->base, 0xff, data); /* what was never written reads as NaN */
        memory.used += data;
        *ptr = a->base;
    }
    pthread_mutex_unlock(&memory.lock);
    return r;
}

/* the live allocation holding [ptr, ptr + bytes), or NULL; with the lock held */
static struct allocation *find_live(uintptr_t ptr, size_t bytes)
{
    for (size_t i = 0; i < memory.count; i++) {
        struct allocation *a = &memory.live[i];
        if (ptr >= a->base && ptr - a->base <= a->bytes && bytes <= a->bytes - (ptr - a->base))
            return a;
    }
    return NULL;
}

static void describe_locked(uintptr_t ptr, char *out, size_t len)
{
    for (size_t i = 0; i < memory.count; i++) {
        const struct allocation *a = &memory.live[i];
        if (ptr >= a->base && ptr < a->base + a->bytes) {
            snprintf(out, len, "%zu bytes into an allocation of %zu at %#lx", (size_t)(ptr - a->base),
                     a->bytes, (unsigned long)a->base);
            return;
        }
        if (ptr >= a->base + a->bytes && ptr < a->base + a->bytes + fake_page_size()) {
            snprintf(out, len, "%zu bytes past the end of an allocation of %zu at %#lx",
                     (size_t)(ptr - a->base - a->bytes), a->bytes, (unsigned long)a->base);
            return;
        }
        if (ptr < a->base && ptr >= (uintptr_t)a->region) {
            snprintf(out, len, "%zu bytes before an allocation of %zu at %#lx", (size_t)(a->base - ptr),
                     a->bytes, (unsigned long)a->base);
            return;
        }
    }
    for (size_t i = 0; i < QUARANTINE; i++) {
        const struct allocation *a = &memory.freed[i];
        if (a->region && ptr >= (uintptr_t)a->region && ptr < (uintptr_t)a->region + a->region_bytes) {
            snprintf(out, len, "in an allocation of %zu at %#lx that was freed", a->bytes,
                     (unsigned long)a->base);
            return;
        }
    }
    snprintf(out, len, "outside every allocation");
}

void fake_memory_describe(uintptr_t addr, char *out, size_t len)
{
    pthread_mutex_lock(&memory.lock);
    describe_locked(addr, out, len);
    pthread_mutex_unlock(&memory.lock);
}

bool fake_memory_find(void *unused, uint64_t address, uint64_t *base, uint64_t *bytes)
{
    (void)unused;
    pthread_mutex_lock(&memory.lock);
    bool found = false;
    for (size_t i = 0; i < memory.count && !found; i++) {
        const struct allocation *a = &memory.live[i];
        if (address >= a->base && address < a->base + a->bytes) {
            *base = a->base;
            *bytes = a->bytes;
            found = true;
        }
    }
    pthread_mutex_unlock(&memory.lock);
    return found;
}

bool fake_memory_check(CUdeviceptr ptr, size_t bytes, char *what, size_t len)
{
    pthread_mutex_lock(&memory.lock);
    bool ok = find_live((uintptr_t)ptr, bytes) != NULL;
    const struct allocation *start = ok ? NULL : find_live((uintptr_t)ptr, 0);
    if (start) {
        snprintf(what, len, "%zu bytes at %#llx run %zu bytes past the end of an allocation of %zu at %#lx",
                 bytes, ptr, (size_t)((uintptr_t)ptr + bytes - start->base - start->bytes), start->bytes,
                 (unsigned long)start->base);
    } else if (!ok) {
        char where[256];
        describe_locked((uintptr_t)ptr, where, sizeof where);
        snprintf(what, len, "%zu bytes at %#llx are not device memory: the address is %s", bytes, ptr, where);
    }
    pthread_mutex_unlock(&memory.lock);
    return ok;
}

/* Takes the allocation out of the live list into the quarantine; with the lock held. */
static void retire_locked(size_t index)
{
    struct allocation a = memory.live[index];
    memory.live[index] = memory.live[--memory.count];
    memory.used -= a.bytes;
    fake_pages_forbid(a.region, a.region_bytes);
    struct allocation *slot = &memory.freed[memory.next_freed++ % QUARANTINE];
    if (slot->region)
        fake_pages_unmap(slot->region, slot->region_bytes);
    *slot = a;
}

CUresult fake_memory_free(struct fake_ctx *c, CUdeviceptr ptr)
{
    pthread_mutex_lock(&memory.lock);
    CUresult r = FAKE_INVALID_VALUE;
    for (size_t i = 0; i < memory.count; i++)
        if (memory.live[i].base == (uintptr_t)ptr && memory.live[i].ctx == c) {
            retire_locked(i);
            r = FAKE_SUCCESS;
            break;
        }
    if (r != FAKE_SUCCESS) {
        char where[256];
        describe_locked((uintptr_t)ptr, where, sizeof where);
        fake_say("cuMemFree(%#llx): not the start of a live allocation of this context: the address is %s",
                 ptr, where);
    }
    pthread_mutex_unlock(&memory.lock);
    return r;
}

int fake_memory_release_all(struct fake_ctx *c, size_t *bytes)
{
    int n = 0;
    pthread_mutex_lock(&memory.lock);
    for (size_t i = memory.count; i-- > 0;)
        if (memory.live[i].ctx == c) {
            *bytes += memory.live[i].bytes;
            retire_locked(i);
            n++;
        }
    pthread_mutex_unlock(&memory.lock);
    return n;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    if (!fake_current())
        return FAKE_INVALID_CONTEXT;
    pthread_mutex_lock(&memory.lock);
    *total = memory_limit();
    *free_bytes = *total - memory.used;
    pthread_mutex_unlock(&memory.lock);
    return FAKE_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes)
{
    if (integrated()) {
        fake_say("cuMemAlloc of %zu bytes on an integrated GPU: its memory is the host's, map it "
                 "(cuMemAllocManaged) rather than copy (EMBER_FAKE_CUDA_INTEGRATED)",
                 bytes);
        return FAKE_NOT_SUPPORTED;
    }
    CUresult r;
    struct fake_ctx *c = working_ctx(&r);
    return c ? fake_memory_alloc(c, bytes, ptr) : r;
}

/* Unified memory: the double's device memory is host memory already, so
 * it is an allocation as any other, which the CPU may touch, marked. */
CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned int flags)
{
    if (flags != 1 && flags != 2) /* CU_MEM_ATTACH_GLOBAL, _HOST */
        return FAKE_INVALID_VALUE;
    CUresult r;
    struct fake_ctx *c = working_ctx(&r);
    if (!c || (r = fake_memory_alloc(c, bytes, ptr)) != FAKE_SUCCESS)
        return r;
    pthread_mutex_lock(&memory.lock);
    memory.live[memory.count - 1].managed = true; /* the newest: fake_memory_alloc appends */
    pthread_mutex_unlock(&memory.lock);
    return FAKE_SUCCESS;
}

/* whether [ptr, ptr + n) lies in unified memory */
static bool managed_range(CUdeviceptr ptr, size_t n)
{
    bool found = false;
    pthread_mutex_lock(&memory.lock);
    for (size_t i = 0; i < memory.count && !found; i++)
        found = memory.live[i].managed && ptr >= memory.live[i].base &&
                ptr + n <= memory.live[i].base + memory.live[i].bytes;
    pthread_mutex_unlock(&memory.lock);
    return found;
}

CUresult cuMemFree_v2(CUdeviceptr ptr)
{
    CUresult r;
    struct fake_ctx *c = drained_ctx(&r); /* as cudaFree: work queued before may still use it */
    return c ? fake_memory_free(c, ptr) : r;
}

/* A copy on the default stream: after everything queued before it. */
static CUresult copy(void *dst, const void *src, CUdeviceptr device, size_t n, const char *call)
{
    if (integrated() && managed_range(device, n)) {
        fake_say("%s of %zu bytes of unified memory on an integrated GPU: the CPU reads and writes it where "
                 "it lies (EMBER_FAKE_CUDA_INTEGRATED)",
                 call, n);
        return FAKE_NOT_SUPPORTED;
    }
    CUresult r;
    struct fake_ctx *c = drained_ctx(&r);
    if (!c || n == 0)
        return c ? FAKE_SUCCESS : r;
    char what[512];
    if (!fake_memory_check(device, n, what, sizeof what)) {
        fake_say("%s: %s", call, what);
        return FAKE_INVALID_VALUE;
    }
    memcpy(dst, src, n);
    return FAKE_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy((void *)(uintptr_t)dst, src, dst, n, "cuMemcpyHtoD");
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy(dst, (const void *)(uintptr_t)src, src, n, "cuMemcpyDtoH");
}

/* ------------------------------------------------------ streams, events */

/* Every stream of a context runs in its one queue, in order: streams may
 * run concurrently, never must. */
struct fake_stream {
    struct fake_ctx *ctx;
};

CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    CUresult r;
    struct fake_ctx *c = working_ctx(&r);
    if (!c)
        return r;
    struct fake_stream *s = malloc(sizeof *s);
    if (!s)
        return FAKE_OUT_OF_MEMORY;
    s->ctx = c;
    *stream = s;
    return FAKE_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream)
{
    struct fake_ctx *c = stream ? ((struct fake_stream *)stream)->ctx : fake_current();
    return c ? fake_ctx_drain(c) : FAKE_INVALID_CONTEXT;
}

CUresult cuStreamDestroy_v2(CUstream stream)
{
    free(stream);
    return FAKE_SUCCESS;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

CUresult cuEventCreate(CUevent *event, unsigned int flags)
{
    CUresult r;
    struct fake_ctx *c = working_ctx(&r);
    if (!c)
        return r;
    struct fake_event *e = calloc(1, sizeof *e);
    if (!e)
        return FAKE_OUT_OF_MEMORY;
    e->ctx = c;
    *event = e;
    return FAKE_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream stream)
{
    CUresult r;
    struct fake_ctx *c = working_ctx(&r);
    if (!c)
        return r;
    const char *events = getenv("EMBER_FAKE_CUDA_EVENTS");
    if (events && strcmp(events, "fail") == 0)
        return FAKE_NOT_SUPPORTED;
    if (!e || e->ctx != c)
        return FAKE_INVALID_HANDLE;
    struct fake_command *cmd = calloc(1, sizeof *cmd);
    if (!cmd)
        return FAKE_OUT_OF_MEMORY;
    pthread_mutex_lock(&c->lock);
    e->recorded = true;
    e->done = false;
    pthread_mutex_unlock(&c->lock);
    cmd->event = e;
    fake_ctx_queue(c, cmd);
    return FAKE_SUCCESS;
}

/* what the worker does when the queue reaches an event */
void fake_event_reached(struct fake_event *e)
{
    e->seconds = now();
    e->done = true;
}

CUresult cuEventQuery(CUevent e)
{
    if (!e)
        return FAKE_INVALID_HANDLE;
    pthread_mutex_lock(&e->ctx->lock);
    CUresult r = e->ctx->sticky ? e->ctx->sticky : e->done || !e->recorded ? FAKE_SUCCESS : FAKE_NOT_READY;
    pthread_mutex_unlock(&e->ctx->lock);
    return r;
}

CUresult cuEventSynchronize(CUevent e)
{
    if (!e)
        return FAKE_INVALID_HANDLE;
    return fake_ctx_drain(e->ctx);
}

CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
    if (!start || !end || !ms)
        return FAKE_INVALID_HANDLE;
    pthread_mutex_lock(&start->ctx->lock);
    bool ready = start->done && end->done;
    bool recorded = start->recorded && end->recorded;
    pthread_mutex_unlock(&start->ctx->lock);
    if (!recorded)
        return FAKE_INVALID_HANDLE;
    if (!ready)
        return FAKE_NOT_READY;
    *ms = (float)((end->seconds - start->seconds) * 1e3);
    return FAKE_SUCCESS;
}

CUresult cuEventDestroy_v2(CUevent e)
{
    if (e)
        fake_ctx_drain(e->ctx); /* a queued record may still point at it */
    free(e);
    return FAKE_SUCCESS;
}
