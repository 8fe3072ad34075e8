/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_cuda_exec.c — the CUDA test double's "GPU" (see
 * fake_cuda.h): launches checked as a driver checks them, queued per
 * context, and run in order on the context's worker thread by ember's
 * kernels compiled for the host.
 *
 * A block's work-items run as fibers on the worker thread: each runs until
 * it reaches a barrier (ember_host_barrier) or its end, then the next one
 * does; once every work-item of the block waits at the barrier they all go
 * on. So barriers and shared memory (the kernels' LOCAL arrays, statics of
 * the worker thread) behave as on a GPU, and work-items that leave a
 * barrier unmatched (some finished, others waiting) are an error, where a
 * GPU would hang or compute garbage. A fiber is started once with
 * makecontext, and from then on switched with the compiler's
 * __builtin_setjmp/__builtin_longjmp (a few registers and a jump, on any
 * stack: some 4 ns, where swapcontext makes a system call and glibc's
 * longjmp unwinds). A work-item at a barrier hands over straight to the
 * next one. When block 0 of a launch reaches no barrier, the other blocks
 * run their work-items as plain calls, one after another.
 *
 * A kernel that touches memory outside every allocation (the pages around
 * each allocation cannot be touched; fake_cuda_driver.c) raises SIGSEGV on
 * the worker; the handler jumps out of the kernel and the context takes
 * the sticky CUDA_ERROR_ILLEGAL_ADDRESS, reported by the next call, as a
 * GPU's fault is.
 *
 * Built for Windows (a DLL ember loads in nvcuda.dll's place, for the
 * Windows build's tests under Wine) the same happens with Windows' means: there is no makecontext, so a
 * fiber's first run is a call with the stack pointer moved to its stack
 * (x86-64 only, as the Windows build is), and the fault is an access
 * violation seen by a vectored exception handler, which resumes the worker
 * in a function that jumps out of the kernel, on a stack of its own. The
 * jumps are __builtin_longjmp's there too: Windows' longjmp unwinds the
 * stack frame by frame, and a fiber's stack is not one Windows knows.
 *
 * In PTX mode a launch is the PTX simulator's instead (ptxsim_run): its
 * checks stop a kernel that leaves memory (CUDA_ERROR_ILLEGAL_ADDRESS, as
 * above) and one that races, misses a barrier or reads a register it never
 * wrote (CUDA_ERROR_LAUNCH_FAILED, with the simulator's message on stderr:
 * a GPU would compute garbage or hang there).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <ucontext.h>
#endif

#include "../../../ptxsim/ptxsim.h"
#include "fake_cuda.h"

int ember_host_local_id, ember_host_local_size;
int ember_host_group_id[3], ember_host_num_groups[3];

/* --------------------------------------------------------------- fibers */

#define FIBER_STACK  (64 * 1024)
#define SIGNAL_STACK (64 * 1024)

/* Where a fiber, or the scheduler, goes on: __builtin_setjmp's five words. */
typedef void *resume_point[5];

/* Goes on at `to`. A function of its own: GCC wants __builtin_longjmp
 * apart from the __builtin_setjmp that saved the point. */
__attribute__((noinline)) static void go(resume_point to) { __builtin_longjmp(to, 1); }

/* On a function that saves a resume point: its callers must not keep
 * values in registers it leaves alone on its own path (GCC's
 * interprocedural register allocation would), since it may return through
 * another fiber's jump, with every register changed. */
#if defined(__clang__)
#define RESUMABLE __attribute__((noinline))
#else
#define RESUMABLE __attribute__((noipa))
#endif

struct fiber {
    char *region; /* a page nothing may touch, then the stack */
#ifndef _WIN32
    ucontext_t start;
#endif
    resume_point resume;
    bool started, finished, waiting;
    int id;
};

enum { RUN_OK, RUN_FAULT, RUN_FAILED, RUN_TIMEOUT };

/* What runs kernels: one launch at a time in the process, by whichever
 * worker thread holds `engine`. */
static pthread_mutex_t engine = PTHREAD_MUTEX_INITIALIZER;
struct runner {
    pthread_t thread;      /* the worker running a launch, while executing */
    struct fiber **fibers; /* each one where it stays: a fiber knows its own address */
    unsigned fiber_count;
    struct fiber *current, *starting, *next;
    resume_point scheduler;
#ifdef _WIN32
    resume_point start_return;
    resume_point fault; /* out of the kernel, from on_exception's escape */
#else
    ucontext_t start_return;
    sigjmp_buf fault;
#endif
    int jumped; /* why the jump to `fault`: RUN_FAULT or RUN_FAILED */
    void *fault_address;
    int fault_signal;
    const struct fake_kernel *kernel;
    void *const *args;
    unsigned items;    /* work-items in the block */
    unsigned barriers; /* reached in this block */
    char failure[512];
};
static struct runner runner;

/* Where a launch goes on when a kernel faults or fails: saved before the
 * grid runs (KERNEL_EXIT_POINT is true then), jumped to by KERNEL_EXIT. */
#ifdef _WIN32
#define KERNEL_EXIT_POINT() (__builtin_setjmp(runner.fault) == 0)
#define KERNEL_EXIT()       go(runner.fault)
#else
#define KERNEL_EXIT_POINT() (sigsetjmp(runner.fault, 1) == 0)
#define KERNEL_EXIT()       siglongjmp(runner.fault, 1)
#endif

/* A fiber at a barrier or at its end hands over to the next work-item of
 * the round, or, after the last one, back to the scheduler: one switch per
 * work-item and round. */
RESUMABLE static void fiber_yield(struct fiber *self)
{
    runner.next = NULL;
    for (unsigned i = (unsigned)self->id + 1; i < runner.items && !runner.next; i++)
        if (!runner.fibers[i]->finished)
            runner.next = runner.fibers[i];
    if (__builtin_setjmp(self->resume) != 0)
        return; /* resumed */
    if (!runner.next)
        go(runner.scheduler);
    runner.current = runner.next;
    ember_host_local_id = runner.next->id;
    runner.next->waiting = false;
    go(runner.next->resume);
}

RESUMABLE static void fiber_main(void)
{
    struct fiber *self = runner.starting;
    if (__builtin_setjmp(self->resume) == 0) { /* started: back to fiber_start */
#ifdef _WIN32
        go(runner.start_return);
#else
        setcontext(&runner.start_return);
#endif
    }
    for (;;) {
        runner.kernel->launch(runner.args);
        self->finished = true;
        fiber_yield(self);
    }
}

#ifdef _WIN32
/* Calls fn with the stack pointer at top (16-byte aligned, with room above
 * for the 32 bytes Windows' calling convention lets a callee use there);
 * fn never returns. */
__attribute__((noinline, noreturn)) static void call_on_stack(char *top, void (*fn)(void))
{
    __asm__ volatile("mov %0, %%rsp\n\tcall *%1\n\tud2" : : "r"(top - 64), "r"(fn) : "memory");
    __builtin_unreachable();
}
#endif

RESUMABLE static bool fiber_start(struct fiber *f)
{
    size_t page = fake_page_size();
    if (!f->region) {
        f->region = fake_pages_map(FIBER_STACK + page);
        if (!f->region)
            return false;
        fake_pages_forbid(f->region, page); /* an overflow faults rather than corrupts */
    }
#ifdef _WIN32
    runner.starting = f;
    if (__builtin_setjmp(runner.start_return) == 0)
        call_on_stack(f->region + page + FIBER_STACK, fiber_main);
    f->started = true;
    return true;
#else
    getcontext(&f->start);
    f->start.uc_stack.ss_sp = f->region + page;
    f->start.uc_stack.ss_size = FIBER_STACK;
    f->start.uc_link = NULL;
    makecontext(&f->start, fiber_main, 0);
    runner.starting = f;
    swapcontext(&runner.start_return, &f->start);
    f->started = true;
    return true;
#endif
}

RESUMABLE static void fiber_resume(struct fiber *f)
{
    runner.current = f;
    ember_host_local_id = f->id;
    if (__builtin_setjmp(runner.scheduler) == 0)
        go(f->resume);
    runner.current = NULL;
}

void ember_host_barrier(void)
{
    struct fiber *self = runner.current;
    if (!self) {
        snprintf(
            runner.failure, sizeof runner.failure,
            "work-item %d reached a barrier, but block 0 of this launch reached none (the double then runs "
            "the other blocks straight through): a barrier that only some blocks reach",
            ember_host_local_id);
        runner.jumped = RUN_FAILED;
        KERNEL_EXIT();
    }
    runner.barriers++;
    self->waiting = true;
    fiber_yield(self);
}

/* fibers left inside a kernel (a fault, an unmatched barrier) start afresh next time */
static void fibers_reset(void)
{
    for (unsigned i = 0; i < runner.fiber_count; i++)
        runner.fibers[i]->started = false;
    runner.current = NULL;
}

static bool fibers_ready(unsigned count)
{
    if (count > runner.fiber_count) {
        struct fiber **more = realloc(runner.fibers, count * sizeof *more);
        if (!more)
            return false;
        runner.fibers = more;
        for (; runner.fiber_count < count; runner.fiber_count++)
            if (!(more[runner.fiber_count] = calloc(1, sizeof **more)))
                return false;
    }
    for (unsigned i = 0; i < count; i++)
        if (!runner.fibers[i]->started && !fiber_start(runner.fibers[i]))
            return false;
    return true;
}

/* One block, its work-items as fibers, barrier round by barrier round. */
static int run_block_fibers(unsigned items)
{
    if (!fibers_ready(items)) {
        snprintf(runner.failure, sizeof runner.failure, "out of host memory for %u work-items' stacks",
                 items);
        return RUN_FAILED;
    }
    runner.items = items;
    for (unsigned i = 0; i < items; i++) {
        runner.fibers[i]->id = (int)i;
        runner.fibers[i]->finished = false;
    }
    for (;;) {
        /* a round: from the first work-item still going, each hands over to the next */
        unsigned first = 0;
        while (first < items && runner.fibers[first]->finished)
            first++;
        if (first < items) {
            runner.fibers[first]->waiting = false;
            fiber_resume(runner.fibers[first]);
        }
        unsigned finished = 0, waiting = 0;
        for (unsigned i = 0; i < items; i++) {
            if (runner.fibers[i]->finished)
                finished++;
            else
                waiting++;
        }
        if (waiting == 0)
            return RUN_OK;
        if (finished > 0) {
            snprintf(
                runner.failure, sizeof runner.failure,
                "%u work-items ended while %u others wait at a barrier: a barrier not every work-item of "
                "the block reaches",
                finished, waiting);
            fibers_reset();
            return RUN_FAILED;
        }
    }
}

/* -------------------------------------------------------------- faults */

static atomic_bool executing; /* a kernel is running: a fault may be its */
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

#ifdef _WIN32
/* A stack for the jump out of a faulting kernel: the fault may have been
 * the fiber's own stack running out. */
static _Alignas(16) char escape_stack[16384];

__attribute__((noreturn)) static void fault_escape(void)
{
    KERNEL_EXIT();
    __builtin_unreachable();
}

static LONG WINAPI on_exception(EXCEPTION_POINTERS *e)
{
    DWORD code = e->ExceptionRecord->ExceptionCode;
    bool memory = code == EXCEPTION_ACCESS_VIOLATION || code == EXCEPTION_IN_PAGE_ERROR,
         arithmetic = code == EXCEPTION_INT_DIVIDE_BY_ZERO || code == EXCEPTION_INT_OVERFLOW;
    if (!(memory || arithmetic) || !atomic_load(&executing) || !pthread_equal(pthread_self(), runner.thread))
        return EXCEPTION_CONTINUE_SEARCH; /* not a kernel's */
    runner.fault_address = memory ? (void *)e->ExceptionRecord->ExceptionInformation[1] : NULL;
    runner.fault_signal = memory ? SIGSEGV : SIGFPE;
    runner.jumped = RUN_FAULT;
    /* go on in fault_escape, as if just called there (the stack pointer 8
     * below a 16-byte boundary) */
    e->ContextRecord->Rsp = (DWORD64)(escape_stack + sizeof escape_stack - 64 - 8);
    e->ContextRecord->Rip = (DWORD64)fault_escape;
    return EXCEPTION_CONTINUE_EXECUTION;
}

static void handlers_install(void) { AddVectoredExceptionHandler(1, on_exception); }
#else
static struct sigaction previous[3];
static const int fault_signals[3] = {SIGSEGV, SIGBUS, SIGFPE};

static void on_fault(int sig, siginfo_t *info, void *context)
{
    (void)context;
    if (atomic_load(&executing) && pthread_equal(pthread_self(), runner.thread)) {
        runner.fault_address = info->si_addr;
        runner.fault_signal = sig;
        runner.jumped = RUN_FAULT;
        KERNEL_EXIT();
    }
    /* not a kernel's: the handler before ours takes it when the access faults again */
    for (int i = 0; i < 3; i++)
        if (fault_signals[i] == sig)
            sigaction(sig, &previous[i], NULL);
}

static void handlers_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(fault_signals[i], &sa, &previous[i]);
}
#endif

/* EMBER_FAKE_CUDA_FAULT="kernel:n:code": the code the n-th launch of kernel fails with, or 0 */
static CUresult injected_fault(const struct fake_function *f, const char *spec)
{
    size_t len = strlen(f->kernel->name);
    unsigned long long n = 0;
    int code = 0;
    if (strncmp(spec, f->kernel->name, len) != 0 || spec[len] != ':' ||
        sscanf(spec + len + 1, "%llu:%d", &n, &code) != 2)
        return FAKE_SUCCESS;
    return f->executions == n ? code : FAKE_SUCCESS;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* --------------------------------------------------------------- a launch */

/* Every block of a launch in order; RUN_OK, RUN_FAILED (with
 * runner.failure) or RUN_TIMEOUT. Block 0 runs as fibers; when it reaches
 * no barrier, the rest run their work-items straight through. */
static int run_grid(const struct fake_launch *l, const struct fake_kernel *k, double watchdog)
{
    double start = seconds();
    bool straight = false;
    for (unsigned z = 0; z < l->grid[2]; z++)
        for (unsigned y = 0; y < l->grid[1]; y++)
            for (unsigned x = 0; x < l->grid[0]; x++) {
                ember_host_group_id[0] = (int)x, ember_host_group_id[1] = (int)y,
                ember_host_group_id[2] = (int)z;
                if (straight) {
                    for (unsigned i = 0; i < l->block; i++) {
                        ember_host_local_id = (int)i;
                        k->launch(l->argv);
                    }
                } else {
                    bool first = x == 0 && y == 0 && z == 0;
                    runner.barriers = 0;
                    int outcome = run_block_fibers(l->block);
                    if (outcome != RUN_OK)
                        return outcome;
                    straight = first && runner.barriers == 0;
                }
                if (watchdog > 0 && seconds() - start > watchdog)
                    return RUN_TIMEOUT;
            }
    return RUN_OK;
}

/* A launch in PTX mode: the arguments laid out as the kernel's .param
 * declares them, run by the simulator with `flags` (fake_cuda.h). */
CUresult fake_exec_in_simulator(const struct fake_launch *l, unsigned flags)
{
    const struct ptxsim_kernel *k = l->function->ptx;
    unsigned char params[FAKE_MAX_ARGS * 8];
    for (int i = 0; i < l->nargs; i++) {
        size_t at, size;
        if (!ptxsim_kernel_param(k, i, &at, &size) || at + size > sizeof params)
            return FAKE_INVALID_VALUE;
        memcpy(params + at, l->argv[i], size);
    }
    struct ptxsim_launch run = {
        .kernel = k,
        .grid = {l->grid[0], l->grid[1], l->grid[2]},
        .block = {l->block, 1, 1},
        .params = params,
        .memory = {.find = fake_memory_find},
        .flags = flags,
        .seed = (uint64_t)l->seed,
        .watchdog = l->watchdog_ms * 1e-3,
    };
    struct ptxsim_result result;
    switch (ptxsim_run(&run, &result)) {
    case PTXSIM_OK: return FAKE_SUCCESS;
    case PTXSIM_BAD_ADDRESS: fake_say("%s: an illegal address", result.message); return FAKE_ILLEGAL_ADDRESS;
    case PTXSIM_TIMEOUT:
        fake_say("%s (EMBER_FAKE_CUDA_WATCHDOG_MS, as a display GPU's watchdog allows)", result.message);
        return FAKE_LAUNCH_TIMEOUT;
    case PTXSIM_NO_MEMORY: fake_say("%s", result.message); return FAKE_LAUNCH_OUT_OF_RESOURCES;
    default: fake_say("%s", result.message); return FAKE_LAUNCH_FAILED;
    }
}

/* The launch run by `k`, a kernel compiled for the host, as fibers (fake_cuda.h). */
RESUMABLE CUresult fake_exec_on_host(const struct fake_launch *l, const struct fake_kernel *k)
{
    pthread_once(&handlers_once, handlers_install);
    double watchdog = l->watchdog_ms * 1e-3;
    runner.kernel = k;
    runner.args = l->argv;
    ember_host_local_size = (int)l->block;
    for (int d = 0; d < 3; d++)
        ember_host_num_groups[d] = (int)l->grid[d];

    runner.thread = pthread_self();
    atomic_store(&executing, true);
    volatile int outcome = RUN_OK;
    if (KERNEL_EXIT_POINT())
        outcome = run_grid(l, k, watchdog);
    else
        outcome = runner.jumped;
    atomic_store(&executing, false);
    if (outcome == RUN_OK)
        return FAKE_SUCCESS;
    if (outcome == RUN_TIMEOUT) {
        fake_say("kernel %s ran over the %.0f ms of EMBER_FAKE_CUDA_WATCHDOG_MS, as a display GPU's watchdog "
                 "allows",
                 k->name, watchdog * 1e3);
        return FAKE_LAUNCH_TIMEOUT;
    }

    fibers_reset();
    char where[160];
    snprintf(where, sizeof where, "kernel %s, block (%d,%d,%d) of (%u,%u,%u), work-item %d of %u", k->name,
             ember_host_group_id[0], ember_host_group_id[1], ember_host_group_id[2], l->grid[0], l->grid[1],
             l->grid[2], ember_host_local_id, l->block);
    if (outcome == RUN_FAULT && runner.fault_signal != SIGFPE) {
        char what[256];
        fake_memory_describe((uintptr_t)runner.fault_address, what, sizeof what);
        fake_say("%s: an illegal address, %p: %s", where, runner.fault_address, what);
        return FAKE_ILLEGAL_ADDRESS;
    }
    fake_say("%s: %s", where,
             outcome == RUN_FAULT ? "an arithmetic fault (an integer division by zero?)" : runner.failure);
    return FAKE_LAUNCH_FAILED;
}

RESUMABLE static CUresult launch_on_engine(const struct fake_launch *l)
{
    struct fake_function *f = l->function;
    const struct fake_kernel *k = f->kernel;
    f->executions++;
    CUresult injected = injected_fault(f, l->fault);
    if (injected) {
        fake_say("kernel %s: launch %llu fails with %d, as EMBER_FAKE_CUDA_FAULT asks", k->name,
                 f->executions, injected);
        return injected;
    }
    /* a pointer that is not device memory faults at its first use on a GPU */
    for (int i = 0; k->kinds[i]; i++) {
        char what[512];
        CUdeviceptr ptr;
        memcpy(&ptr, l->argv[i], sizeof ptr);
        if (k->kinds[i] == 'p' && !fake_memory_check(ptr, 0, what, sizeof what)) {
            fake_say("kernel %s, argument %d: an illegal address: %s", k->name, i, what);
            return FAKE_ILLEGAL_ADDRESS;
        }
    }
    if (f->ptx && l->numerics && f->host)
        return fake_numerics_launch(l);
    if (f->ptx)
        return fake_exec_in_simulator(l, 0);
    return fake_exec_on_host(l, k);
}

CUresult fake_exec_launch(const struct fake_launch *l)
{
    pthread_mutex_lock(&engine);
    CUresult r = launch_on_engine(l);
    pthread_mutex_unlock(&engine);
    return r;
}

/* ---------------------------------------------------------------- queue */

static void *worker_main(void *arg)
{
    struct fake_ctx *c = arg;
#ifndef _WIN32
    stack_t alt = {.ss_sp = malloc(SIGNAL_STACK), .ss_size = SIGNAL_STACK};
    if (alt.ss_sp)
        sigaltstack(&alt, NULL);
#endif
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->head && !c->stopping)
            pthread_cond_wait(&c->changed, &c->lock);
        struct fake_command *cmd = c->head;
        if (!cmd)
            break;
        c->head = cmd->next;
        if (!c->head)
            c->tail = NULL;
        if (cmd->event) {
            fake_event_reached(cmd->event);
        } else if (c->sticky == FAKE_SUCCESS) { /* after a fault the rest is dropped */
            c->running = true;
            pthread_mutex_unlock(&c->lock);
            CUresult r = fake_exec_launch(&cmd->launch);
            /* EMBER_FAKE_CUDA_KERNEL_MS: the kernel is not done until then, as a slow GPU's */
            int hold = cmd->launch.kernel_ms;
            if (hold > 0)
                nanosleep(&(struct timespec){.tv_sec = hold / 1000, .tv_nsec = hold % 1000 * 1000000L}, NULL);
            pthread_mutex_lock(&c->lock);
            c->running = false;
            if (r != FAKE_SUCCESS && c->sticky == FAKE_SUCCESS)
                c->sticky = r;
        }
        free(cmd);
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
#ifndef _WIN32
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    free(alt.ss_sp);
#endif
    return NULL;
}

void fake_ctx_queue(struct fake_ctx *c, struct fake_command *cmd)
{
    pthread_mutex_lock(&c->lock);
    if (!c->worker_started)
        c->worker_started = pthread_create(&c->worker, NULL, worker_main, c) == 0;
    if (c->tail)
        c->tail->next = cmd;
    else
        c->head = cmd;
    c->tail = cmd;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
}

CUresult fake_ctx_drain(struct fake_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->head || c->running)
        pthread_cond_wait(&c->changed, &c->lock);
    CUresult r = c->sticky;
    pthread_mutex_unlock(&c->lock);
    return r;
}

void fake_ctx_stop(struct fake_ctx *c)
{
    pthread_mutex_lock(&c->lock);
    bool started = c->worker_started;
    c->stopping = true;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    if (started)
        pthread_join(c->worker, NULL);
    while (c->head) { /* never run: the worker never started */
        struct fake_command *next = c->head->next;
        free(c->head);
        c->head = next;
    }
    c->worker_started = false;
}

/* ------------------------------------------------------ the driver API */

typedef struct fake_function *CUfunction;

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    struct fake_ctx *c = fake_current();
    if (!c)
        return FAKE_INVALID_CONTEXT;
    pthread_mutex_lock(&c->lock);
    CUresult sticky = c->sticky;
    pthread_mutex_unlock(&c->lock);
    if (sticky)
        return sticky;
    if (!f || f->module->unloaded || f->module->ctx != c)
        return FAKE_INVALID_HANDLE;
    const struct fake_kernel *k = f->kernel;
    if (gx == 0 || gy == 0 || gz == 0 || gx > fake_max_grid_x() || gy > FAKE_MAX_GRID_YZ ||
        gz > FAKE_MAX_GRID_YZ) {
        fake_say("cuLaunchKernel(%s): a grid of %ux%ux%u blocks: the limits are %u x %u x %u", k->name, gx,
                 gy, gz, fake_max_grid_x(), FAKE_MAX_GRID_YZ, FAKE_MAX_GRID_YZ);
        return FAKE_INVALID_VALUE;
    }
    if (bx == 0 || by == 0 || bz == 0 || (unsigned long long)bx * by * bz > FAKE_MAX_THREADS_PER_BLOCK ||
        bz > 64) {
        fake_say("cuLaunchKernel(%s): blocks of %ux%ux%u threads: at most %d in all", k->name, bx, by, bz,
                 FAKE_MAX_THREADS_PER_BLOCK);
        return FAKE_INVALID_VALUE;
    }
    if ((int)(bx * by * bz) > f->max_threads) {
        fake_say("cuLaunchKernel(%s): blocks of %u threads, but this kernel's registers allow %d "
                 "(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
                 k->name, bx * by * bz, f->max_threads);
        return FAKE_LAUNCH_OUT_OF_RESOURCES;
    }
    if (shared > FAKE_SHARED_PER_BLOCK) {
        fake_say("cuLaunchKernel(%s): %u bytes of dynamic shared memory, over %d", k->name, shared,
                 FAKE_SHARED_PER_BLOCK);
        return FAKE_INVALID_VALUE;
    }
    if (by != 1 || bz != 1 || shared || extra) {
        fake_say(
            "cuLaunchKernel(%s): the double runs one-dimensional blocks with arguments in kernelParams and "
            "no dynamic shared memory, as ember launches",
            k->name);
        return FAKE_NOT_SUPPORTED;
    }
    (void)stream; /* every stream of the context is its one queue */
    int nargs = (int)strlen(k->kinds);
    for (int i = 0; i < nargs; i++)
        if (!params || !params[i]) {
            fake_say("cuLaunchKernel(%s): the kernel takes %d arguments, the launch passed %d", k->name,
                     nargs, i);
            return FAKE_INVALID_VALUE;
        }
    if (params && params[nargs]) {
        fake_say(
            "cuLaunchKernel(%s): the kernel takes %d arguments, the launch passed more (kernelParams[%d] is "
            "not the NULL ember ends its list with)",
            k->name, nargs, nargs);
        return FAKE_INVALID_VALUE;
    }
    fake_grid_note(k, gx);
    struct fake_command *cmd = calloc(1, sizeof *cmd);
    if (!cmd)
        return FAKE_OUT_OF_MEMORY;
    struct fake_launch *l = &cmd->launch;
    *l = (struct fake_launch){.function = f, .grid = {gx, gy, gz}, .block = bx, .nargs = nargs};
    for (int i = 0; i < nargs; i++) {
        memcpy(l->values[i], params[i], k->kinds[i] == 'p' ? 8 : 4);
        l->argv[i] = l->values[i];
    }
    const char *fault = getenv("EMBER_FAKE_CUDA_FAULT");
    snprintf(l->fault, sizeof l->fault, "%s", fault ? fault : "");
    l->seed = fake_env_int("EMBER_FAKE_CUDA_SEED", 0);
    l->watchdog_ms = fake_env_int("EMBER_FAKE_CUDA_WATCHDOG_MS", 0);
    l->kernel_ms = fake_env_int("EMBER_FAKE_CUDA_KERNEL_MS", 0);
    l->numerics = fake_env_int("EMBER_FAKE_CUDA_NUMERICS", 0) == 1;
    fake_ctx_queue(c, cmd);
    return FAKE_SUCCESS;
}
