/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_cuda.h — the insides of the CUDA test double, a
 * libcuda.so.1 that runs ember's kernels on the CPU, so that CI drives the
 * CUDA backend end to end without a GPU (and, built for Windows, a DLL
 * ember loads in nvcuda.dll's place: tests/windows/tests.cmake).
 *
 *   fake_cuda_driver.c   the driver API: devices, primary contexts, memory
 *                        (each allocation fenced by guard pages), copies,
 *                        streams, events
 *   fake_cuda_module.c   loading a module: the PTX or cubin ember hands the
 *                        driver is checked as a driver would (the PTX ISA
 *                        and target, the cubin's arch and toolkit), its
 *                        kernels found by name, its tuning read from it
 *   fake_cuda_exec.c     the "GPU": one worker thread per context runs the
 *                        queued launches in order, one kernel at a time in
 *                        the process; work-items of a block are fibers, so
 *                        barriers and shared memory really work; a bad
 *                        memory access becomes the sticky
 *                        CUDA_ERROR_ILLEGAL_ADDRESS a GPU reports
 *   fake_cuda_checks.c   what it holds kernels to beyond a GPU: which ran in
 *                        chunks under a lowered grid limit, and in PTX mode
 *                        the numerics check against the host's kernels
 *   host-kernels-*.c     ember's kernels compiled for the host, one file per
 *                        tuning the CUDA backend uses, generated at build
 *                        time by gen-host-kernels.c
 *   fake_nvrtc_keep.c    an NVRTC that forwards to a real one and keeps,
 *                        for each cubin it hands out, the PTX ptxas made it
 *                        from, so that the PTX mode below runs it
 *
 * Two ways to run a kernel (EMBER_FAKE_CUDA_EXEC):
 *   host (default)  the kernel sources compiled for the host, as above:
 *                   fast, and what most CUDA tests use
 *   ptx             the module's own PTX, executed instruction by
 *                   instruction by ember's PTX simulator (ptxsim/), warps
 *                   of 32 lanes, divergence, barriers, with its checks
 *                   (bounds, alignment, shared-memory races, barriers,
 *                   registers read unwritten) failing the launch. For a
 *                   cubin it runs the PTX the cubin was assembled from,
 *                   which fake_nvrtc_keep.c kept.
 *
 * What the double cannot know from the driver API alone it asks of ember:
 * kernelParams must end with a NULL after the last argument (ember's launch
 * puts one there; a real driver ignores it), so that a launch passing too
 * few or too many arguments is caught.
 *
 * Every refusal is also written to stderr as "fake libcuda: ...", with what
 * a real driver's error would not say (which argument, which allocation).
 */
#ifndef EMBER_FAKE_CUDA_H
#define EMBER_FAKE_CUDA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../../backends/kernels/kernels.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

/* the driver API's codes the double answers with */
enum {
    FAKE_SUCCESS = 0,
    FAKE_INVALID_VALUE = 1,
    FAKE_OUT_OF_MEMORY = 2,
    FAKE_NOT_INITIALIZED = 3,
    FAKE_INVALID_DEVICE = 101,
    FAKE_INVALID_IMAGE = 200,
    FAKE_INVALID_CONTEXT = 201,
    FAKE_NO_BINARY_FOR_GPU = 209,
    FAKE_INVALID_PTX = 218,
    FAKE_UNSUPPORTED_PTX_VERSION = 222,
    FAKE_INVALID_HANDLE = 400,
    FAKE_NOT_FOUND = 500,
    FAKE_NOT_READY = 600,
    FAKE_ILLEGAL_ADDRESS = 700,
    FAKE_LAUNCH_OUT_OF_RESOURCES = 701,
    FAKE_LAUNCH_TIMEOUT = 702,
    FAKE_LAUNCH_FAILED = 719,
    FAKE_NOT_SUPPORTED = 801,
};

#define FAKE_MAX_GPUS 8
#define FAKE_MAX_KERNELS                                                                                     \
    160 /* a cubin names ptxas's helper functions beside its kernels: 64 ran out when the GPT kernels came   \
         */
#define FAKE_MAX_ARGS 48
/* what every GPU from sm_30 up allows */
#define FAKE_MAX_THREADS_PER_BLOCK 1024
#define FAKE_MAX_GRID_X            2147483647u
#define FAKE_MAX_GRID_YZ           65535u
#define FAKE_SHARED_PER_BLOCK      (48 * 1024)
/* The grid's x limit the double reports and enforces: FAKE_MAX_GRID_X, or
 * EMBER_FAKE_CUDA_GRID_X, lowered so that ember splits its launches into
 * chunks (ember_gpu_launch_each's `first`, the row loops and the plane
 * launches past their first chunk), which no test size reaches otherwise. */
unsigned fake_max_grid_x(void);
/* With it lowered: notes a launch's grid, and says on stderr which kernels
 * were never launched at the limit (so never in chunks of that kind), at a
 * primary context's last release (fake_cuda_checks.c). */
struct fake_kernel;
void fake_grid_note(const struct fake_kernel *k, unsigned gx);
void fake_grid_report(void);

/* ---------------------------------------------------- the host builds */

/* One of ember's kernels compiled for the host, and how to call it:
 * `kinds` has a letter per parameter (p a device pointer, i an int, f a
 * float); `launch` takes cuLaunchKernel's array of pointers to values. */
struct fake_kernel {
    const char *name;
    const char *kinds;
    void (*launch)(void *const *args);
};

/* Every kernel compiled with one tuning (generated: host-kernels-*.c). */
struct fake_kernel_build {
    const char *name;
    int tuning[EMBER_KERNEL_TUNING_COUNT];
    const int *tuning_in_program; /* the program's own constant: it must agree */
    int count;
    struct fake_kernel kernels[FAKE_MAX_KERNELS];
};

extern const struct fake_kernel_build fake_kernels_default, fake_kernels_cuda_nvrtc;

/* ------------------------------------------------------------ contexts */

struct fake_module;
struct fake_command;

/* A device's primary context: its memory, its modules, its queue of work
 * and the worker thread that runs it. */
struct fake_ctx {
    int device;
    int refs; /* cuDevicePrimaryCtxRetain minus Release */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    struct fake_command *head, *tail; /* queued, in order */
    bool running;                     /* the worker holds a command */
    bool worker_started, stopping;
    pthread_t worker;
    CUresult sticky;             /* after a fault every call answers this */
    struct fake_module *modules; /* loaded, unloaded too: freed with the context */
};

struct ptxsim_module;
struct ptxsim_kernel;

/* One loaded kernel. */
struct fake_function {
    struct fake_module *module;
    const struct fake_kernel *kernel;
    const struct ptxsim_kernel *ptx; /* in PTX mode: what runs (kernel then has no launcher) */
    struct fake_kernel own;          /* in PTX mode: its name and parameters, read from the PTX */
    /* in PTX mode: the same kernel compiled for the host, for the numerics
     * check (EMBER_FAKE_CUDA_NUMERICS); NULL where no host build has the
     * module's tuning */
    const struct fake_kernel *host;
    char kinds[FAKE_MAX_ARGS + 1];
    int max_threads; /* per block: what registers would allow */
    unsigned long long executions;
};

struct fake_module {
    struct fake_ctx *ctx;
    const struct fake_kernel_build *build;
    struct ptxsim_module *ptx; /* in PTX mode: the module, parsed */
    int count;
    struct fake_function functions[FAKE_MAX_KERNELS];
    CUdeviceptr tuning_global; /* the program's tuning constant, in device memory */
    bool unloaded;
    struct fake_module *next;
};

/* EMBER_FAKE_CUDA_EXEC=ptx: kernels run as PTX in the simulator */
bool fake_exec_ptx(void);

/* A launch as queued: the argument values are copied at launch time, as a
 * driver does, so that the caller may reuse its variables. */
struct fake_launch {
    struct fake_function *function;
    unsigned grid[3], block;
    unsigned char values[FAKE_MAX_ARGS][8];
    void *argv[FAKE_MAX_ARGS];
    int nargs;
    /* the environment's settings for it, read when it is queued, on the
     * caller's thread: the worker reading them while a test's setenv
     * changes the environment would race (and crash on Windows, whose
     * putenv frees the table getenv walks) */
    char fault[128]; /* EMBER_FAKE_CUDA_FAULT */
    int seed, watchdog_ms, kernel_ms;
    bool numerics; /* EMBER_FAKE_CUDA_NUMERICS=1 */
};

struct fake_event {
    struct fake_ctx *ctx;
    bool recorded, done;
    double seconds; /* the host clock when the queue reached it */
};

struct fake_command {
    struct fake_command *next;
    struct fake_launch launch; /* when event is NULL */
    struct fake_event *event;  /* a marker: record the time */
};

/* the calling thread's current context, or NULL */
struct fake_ctx *fake_current(void);
/* the device's GPU: its compute capability (times ten) and name */
bool fake_gpu(int device, int *cc, char *name, int len);
/* the driver's CUDA version, 12020 for 12.2, and the PTX ISA (times ten) it loads */
int fake_driver_version(void);
int fake_driver_ptx_isa(void);
int fake_env_int(const char *name, int fallback);
/* "fake libcuda: ..." on stderr */
void fake_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs the queue until it is empty; returns the context's sticky error
 * (or FAKE_SUCCESS). */
CUresult fake_ctx_drain(struct fake_ctx *c);
/* Queues a command and wakes the worker (starting it the first time). */
void fake_ctx_queue(struct fake_ctx *c, struct fake_command *cmd);
/* Stops the worker after the queue is done (the last release). */
void fake_ctx_stop(struct fake_ctx *c);

/* --------------------------------------------------------------- memory */

/* Device memory: an allocation of the double, or none. `what` says why not:
 * freed, outside every allocation, past its end. */
bool fake_memory_check(CUdeviceptr ptr, size_t bytes, char *what, size_t len);
/* The live allocation holding `address`: its start and size (the PTX
 * simulator's view of device memory). */
bool fake_memory_find(void *unused, uint64_t address, uint64_t *base, uint64_t *bytes);
CUresult fake_memory_alloc(struct fake_ctx *c, size_t bytes, CUdeviceptr *ptr);
CUresult fake_memory_free(struct fake_ctx *c, CUdeviceptr ptr);
/* frees what the context still holds; returns how many there were */
int fake_memory_release_all(struct fake_ctx *c, size_t *bytes);
/* describes an address for a fault message: which allocation it is near */
void fake_memory_describe(uintptr_t addr, char *out, size_t len);

/* Pages from the system, the double's one difference between POSIX (mmap)
 * and Windows (VirtualAlloc, when it is built as nvcuda.dll): readable and
 * writable pages (NULL when there are none), a span made untouchable (a
 * touch faults: the guard pages around each allocation and each fiber's
 * stack), and the pages given back. fake_cuda_driver.c. */
size_t fake_page_size(void);
char *fake_pages_map(size_t bytes);
void fake_pages_forbid(void *at, size_t bytes);
void fake_pages_unmap(void *at, size_t bytes);

/* --------------------------------------------------------------- modules */

CUresult fake_module_load(struct fake_ctx *c, const void *image, char *log, size_t log_len,
                          struct fake_module **out);
void fake_module_unload(struct fake_module *m);
/* frees every module record of a context that is going */
void fake_module_free_all(struct fake_ctx *c);

/* ------------------------------------------------------------- execution */

/* What the host dialect's kernels read and call (backends/kernels/prelude-host.kh). */
extern int ember_host_local_id, ember_host_local_size;
extern int ember_host_group_id[3], ember_host_num_groups[3];
void ember_host_barrier(void);

/* A launch run by `k`, a kernel compiled for the host, as fibers; and in
 * PTX mode by the simulator with ptxsim's `flags` (fake_cuda_exec.c). */
CUresult fake_exec_on_host(const struct fake_launch *l, const struct fake_kernel *k);
CUresult fake_exec_in_simulator(const struct fake_launch *l, unsigned flags);
/* EMBER_FAKE_CUDA_NUMERICS=1: the launch as the host's kernel on copies of
 * its memory, then as its PTX, unfused, and the bits compared
 * (fake_cuda_checks.c) */
CUresult fake_numerics_launch(const struct fake_launch *l);

/* the worker reached an event in the queue: now is its time */
void fake_event_reached(struct fake_event *e);

/* Runs one launch on the calling (worker) thread, once no other thread
 * runs one (the kernels' shared memory and ids are process-wide); returns FAKE_SUCCESS or
 * the error the GPU would report (illegal address, launch failure,
 * timeout), having said why on stderr. */
CUresult fake_exec_launch(const struct fake_launch *l);

#endif /* EMBER_FAKE_CUDA_H */
