/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim.h — ember's PTX simulator: the GPU code ember ships,
 * executed on the CPU the way an NVIDIA GPU executes it.
 *
 * What a GPU does with a kernel, in the words this library uses:
 *
 *   - A launch is a *grid* of *blocks* (CUDA's CTAs, OpenCL's work-groups),
 *     each of up to 1024 *threads*. Every thread runs the same kernel; the
 *     special registers %ctaid (its block) and %tid (its place in the
 *     block) are all that tell them apart.
 *   - A block's threads go in *warps* of 32. A warp issues one instruction
 *     at a time for all its threads (its *lanes*) together. When a branch
 *     sends some lanes one way and some the other, the warp *diverges*: it
 *     runs one side with the other lanes idle, then the other side, and the
 *     lanes *reconverge* where the paths meet. Idle lanes are wasted issue
 *     slots: the report calls the share of busy ones warp execution
 *     efficiency.
 *   - A block's threads share fast on-chip *shared memory* (OpenCL's local
 *     memory) and wait for each other at `bar.sync`. Between two barriers
 *     the order of threads is unknown, so two threads touching one shared
 *     word, one of them writing, is a race.
 *   - *Global memory* (the GPU's DRAM) is read and written in 32-byte
 *     *sectors* of 128-byte *lines*: a warp whose 32 lanes read 32
 *     neighbouring floats touches 4 sectors of one line (coalesced); 32
 *     floats 4 KiB apart touch 32 sectors of 32 lines.
 *   - Shared memory has 32 *banks* of 4-byte words; lanes of one access
 *     that hit different words of one bank are served one after another
 *     (a bank conflict).
 *
 * The simulator parses a PTX module once into decoded instructions
 * (ptxsim_module_parse: registers resolved to slots, immediates to
 * constants, branch targets to indices, each kernel's .param layout), then
 * runs launches on it (ptxsim_run): the grid's blocks one after another,
 * each block's warps between barriers in an order a seed may shuffle, each
 * instruction over the active lanes of its warp. While it runs it checks
 * what compute-sanitizer's memcheck, racecheck and synccheck check on
 * hardware, and registers and shared memory read before written (which its
 * initcheck, about global memory, does not), and stops at the first
 * problem with a message naming the kernel, block, thread, PTX line and
 * address:
 *
 *   - a global access outside every allocation, or misaligned; a shared
 *     access past the block's shared memory;
 *   - a shared-memory race: two threads, one writing, one word, no barrier
 *     between them;
 *   - a barrier some thread of the block does not reach (it exited, or
 *     waits at another barrier, or is on the other side of a branch);
 *   - a register read on a path where it was never written, a shared word
 *     read that no thread of the block wrote.
 *
 * An instruction, modifier or directive it does not know is refused when
 * the module is parsed, naming it, its kernel and its line: never a silent
 * wrong answer. Where the PTX ISA leaves a result to the machine (an
 * integer division by zero) it gives what NVIDIA GPUs give, and says so in
 * ptxsim-exec.c.
 *
 *     char why[1024];
 *     struct ptxsim_module *m = ptxsim_module_parse(ptx_text, why, sizeof why);
 *     const struct ptxsim_kernel *k = m ? ptxsim_module_kernel(m, "fill") : NULL;
 *     unsigned char params[64];          // laid out by ptxsim_kernel_param
 *     size_t at, size;
 *     ptxsim_kernel_param(k, 0, &at, &size);
 *     memcpy(params + at, &out_address, size);   // ... each parameter
 *     struct ptxsim_launch l = {.kernel = k, .grid = {16, 1, 1}, .block = {64, 1, 1},
 *                               .params = params, .memory = {find_allocation, my_state}};
 *     struct ptxsim_result r;
 *     if (ptxsim_run(&l, &r) != PTXSIM_OK)
 *         fprintf(stderr, "%s\n", r.message);
 *     ptxsim_module_free(m);
 *
 * Global memory is the host's: a device address is a host address, which
 * the caller's `find` says belongs to an allocation (the CUDA test double
 * and ember's simulated GPU both allocate device memory on the host).
 *
 * The library stands alone (libc and libm): ember links it into its
 * simulated GPU (backends/cuda/cuda-sim.c, `ember ptx --simulate`) and
 * the CUDA test double links it into its libcuda (tests/gpu/fakes).
 *
 *   ptxsim-parse.c    the text: statements, directives, declarations
 *   ptxsim-decode.c   one instruction's opcode, modifiers and operands
 *   ptxsim-build.c    the kernel being built: type names, registers, constants, labels
 *   ptxsim-exec.c     what each instruction does to its active lanes
 *   ptxsim-run.c      a launch: blocks, warps, divergence, barriers
 *   ptxsim-check.c    the checkers' records and their messages
 *   ptxsim-cfg.c      where a diverged warp reconverges: each branch's
 *                     immediate post-dominator
 *   ptxsim-registers.c  registers a thread, counted from the PTX's liveness
 *   ptxsim-report.c   what a launch did, for people: classes, efficiency,
 *                     coalescing, bank conflicts, occupancy, a roofline
 *   ptxsim-timing.c   an estimate of a launch's time on a real GPU
 *   ptxsim-gpus.c     each compute capability's facts, the real GPUs the
 *                     report can speak for, and the occupancy arithmetic
 */
#ifndef EMBER_PTXSIM_H
#define EMBER_PTXSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ptxsim_module;
struct ptxsim_kernel;

/* ------------------------------------------------------------- modules */

/* Parses and decodes a whole PTX module (NUL-terminated text). NULL with
 * the reason in `why` (the line, the kernel, the instruction) when the
 * text is not PTX this simulator runs. */
struct ptxsim_module *ptxsim_module_parse(const char *ptx, char *why, size_t why_len);
void ptxsim_module_free(struct ptxsim_module *m);

/* The module's `.version` (times ten: 32 for 3.2) and `.target` (30 for sm_30). */
int ptxsim_module_version(const struct ptxsim_module *m);
int ptxsim_module_target(const struct ptxsim_module *m);

/* Its kernels (.entry), by index or name; NULL when there is none. */
int ptxsim_module_kernel_count(const struct ptxsim_module *m);
const struct ptxsim_kernel *ptxsim_module_kernel_at(const struct ptxsim_module *m, int index);
const struct ptxsim_kernel *ptxsim_module_kernel(const struct ptxsim_module *m, const char *name);

/* The bytes of a module-scope variable (.const or .global) as its
 * initialiser leaves them (zeros where it has none); false when there is
 * no such variable. */
bool ptxsim_module_variable(const struct ptxsim_module *m, const char *name, const unsigned char **bytes,
                            size_t *size);

/* ------------------------------------------------------------- kernels */

const char *ptxsim_kernel_name(const struct ptxsim_kernel *k);
/* Its parameters: how many, and where each lies in the argument buffer
 * (offset and size in bytes, each aligned to its size as the CUDA ABI
 * lays them out). False for an index out of range. */
int ptxsim_kernel_param_count(const struct ptxsim_kernel *k);
bool ptxsim_kernel_param(const struct ptxsim_kernel *k, int index, size_t *offset, size_t *size);
size_t ptxsim_kernel_param_bytes(const struct ptxsim_kernel *k);
/* Static shared memory per block, in bytes. */
size_t ptxsim_kernel_shared_bytes(const struct ptxsim_kernel *k);
/* 32-bit registers per thread, counted: the most values the PTX keeps
 * live at once (a 64-bit one counts two, predicates none), which is what
 * ptxas must at least allocate; it adds a few of its own. The report
 * prefers ptxas's figure (`ptxas -v`) when there is one. */
int ptxsim_kernel_registers(const struct ptxsim_kernel *k);
/* Where ptxas's count was seen to lie against it, for ember's kernels on
 * NVRTC 11.8's and 13's PTX (docs/design.md, "The PTX simulator"): up to
 * this many below (unrolled loops ptxas schedules more tightly) and above
 * (registers of its own). The report gives an estimate as that range. */
#define PTXSIM_REGISTERS_BELOW 30
#define PTXSIM_REGISTERS_ABOVE 8
/* Its instructions: how many, and each one's PTX line and text (as written). */
int ptxsim_kernel_instruction_count(const struct ptxsim_kernel *k);
int ptxsim_kernel_instruction_line(const struct ptxsim_kernel *k, int index);
const char *ptxsim_kernel_instruction_text(const struct ptxsim_kernel *k, int index);

/* ---------------------------------------------------------- statistics */

/* The kinds of instruction the report counts. */
#define PTXSIM_CLASSES(X)                                                                                    \
    X(INT, "integer arithmetic and logic")                                                                   \
    X(FLOAT, "floating-point arithmetic")                                                                    \
    X(SPECIAL, "special functions (ex2, rcp, sqrt, division)")                                               \
    X(COMPARE, "compares and selects")                                                                       \
    X(MOVE, "moves and conversions")                                                                         \
    X(LOAD_GLOBAL, "loads from global memory")                                                               \
    X(STORE_GLOBAL, "stores to global memory")                                                               \
    X(SHARED, "shared-memory loads and stores")                                                              \
    X(PARAM, "parameter and constant loads")                                                                 \
    X(BRANCH, "branches and returns")                                                                        \
    X(BARRIER, "barriers")

#define PTXSIM_CLASS_ENUM(name, what) PTXSIM_CLASS_##name,
enum ptxsim_class { PTXSIM_CLASSES(PTXSIM_CLASS_ENUM) PTXSIM_CLASS_COUNT };
#undef PTXSIM_CLASS_ENUM

const char *ptxsim_class_name(enum ptxsim_class c);
enum ptxsim_class ptxsim_kernel_instruction_class(const struct ptxsim_kernel *k, int index);

/* What one instruction did over a launch. */
struct ptxsim_ins_stats {
    uint64_t issued; /* times a warp issued it */
    /* the lanes active in the warp at each issue, summed: those on the
     * path it is on, whatever the instruction's guard says (what NVIDIA's
     * profilers count for warp execution efficiency) */
    uint64_t active;
    /* threads that executed it: the active lanes whose guard let them,
     * summed (the profilers' non-predicated figure: threads with work) */
    uint64_t threads;
    /* global loads and stores: 32-byte sectors and 128-byte lines the
     * issues touched, summed (a coalesced 4-byte access of 32 lanes: 4 and 1) */
    uint64_t sectors, lines;
    /* shared loads and stores: the passes the 32 banks needed, summed (1
     * per issue without a conflict; lanes reading one word share a pass),
     * with banks 4 bytes wide (Maxwell on), 8 (Kepler's, in its default
     * 32-bit mode) and Kepler's in its 64-bit mode (8-byte words to
     * successive banks) */
    uint64_t wavefronts, wavefronts_kepler, wavefronts_kepler64;
};

/* A launch's record: filled by ptxsim_run when a launch has one. */
struct ptxsim_stats {
    const struct ptxsim_kernel *kernel;
    int count;                    /* instructions: ptxsim_kernel_instruction_count */
    struct ptxsim_ins_stats *ins; /* one per instruction */
    unsigned grid[3], block[3];
    uint64_t warps;               /* warps run, partial ones included */
    uint64_t warp_instructions;   /* issues, summed */
    uint64_t active_instructions; /* active lanes, summed */
    uint64_t thread_instructions; /* lanes that executed, summed */
    uint64_t global_bytes;        /* bytes the threads loaded and stored in global memory */
    /* distinct 32-byte sectors the launch touched: what reaches DRAM at
     * least once (the timing estimate's cache model) */
    uint64_t unique_sectors;
    uint64_t *sector_set; /* the sectors seen, a hash set: ptxsim's own */
    size_t set_capacity;
    uint64_t barriers; /* barriers the blocks passed, summed */
};

/* A record for launches of `k`, zeroed; NULL when out of memory. */
struct ptxsim_stats *ptxsim_stats_new(const struct ptxsim_kernel *k);
void ptxsim_stats_free(struct ptxsim_stats *s);
/* Zeroes the record, for the next launch alone. */
void ptxsim_stats_clear(struct ptxsim_stats *s);

/* -------------------------------------------------------------- launches */

/* Device memory, as the caller keeps it. `find` says whether `address`
 * lies in an allocation, and which ([*base, *base + *bytes)); the
 * simulator asks once per allocation and launch, so it may be slow. */
struct ptxsim_memory {
    bool (*find)(void *user, uint64_t address, uint64_t *base, uint64_t *bytes);
    void *user;
};

/* Checks a launch may leave out (ember's tests keep them all), and how it computes. */
enum {
    PTXSIM_NO_RACE_CHECK = 1,   /* shared-memory races */
    PTXSIM_NO_UNINIT_CHECK = 2, /* registers read before written */
    /* Not a check: f32 fma and mad (round-to-nearest or not) executed as a
     * multiply and an add, each rounded as the instruction says. The CUDA
     * test double's numerics check compares a launch so executed with the
     * same kernel compiled for the host (ember's kernel C, where nothing is
     * fused): every multiply-add the compiler fused then agrees bit for bit,
     * and a changed rounding or constant does not. */
    PTXSIM_UNFUSED = 4,
};

struct ptxsim_launch {
    const struct ptxsim_kernel *kernel;
    unsigned grid[3];   /* blocks along x, y, z */
    unsigned block[3];  /* threads along x, y, z */
    const void *params; /* the argument buffer, laid out by ptxsim_kernel_param */
    struct ptxsim_memory memory;
    unsigned flags;
    /* 0: each block's warps run in order between barriers; otherwise the
     * order is shuffled from this seed, block by block, which changes what
     * a race computes (the race checker finds a race in any order) */
    uint64_t seed;
    /* >0: stop a launch that runs longer (seconds), as a display's watchdog would */
    double watchdog;
    struct ptxsim_stats *stats; /* NULL: no record */
};

enum ptxsim_outcome {
    PTXSIM_OK,
    PTXSIM_BAD_ADDRESS,   /* outside memory, or misaligned: a GPU's illegal address */
    PTXSIM_RACE,          /* a shared-memory race */
    PTXSIM_BARRIER,       /* a barrier not every thread of the block reaches */
    PTXSIM_UNINITIALISED, /* a register read that no write reached */
    PTXSIM_BAD_LAUNCH,    /* parameters or sizes the kernel cannot run with */
    PTXSIM_TIMEOUT,       /* past the watchdog */
    PTXSIM_NO_MEMORY,     /* of the host */
};

struct ptxsim_result {
    enum ptxsim_outcome outcome;
    /* what went wrong: kernel, block, thread, line, instruction, address */
    char message[1024];
    uint64_t warp_instructions; /* issued, whatever the outcome: the simulator's work */
};

/* Runs the launch to its end, or to the first problem the checks find. */
enum ptxsim_outcome ptxsim_run(const struct ptxsim_launch *l, struct ptxsim_result *r);

/* ------------------------------------------------------------------ GPUs */

/* A compute capability's multiprocessor: what bounds how many warps of a
 * kernel it holds (the occupancy) and how its shared memory and issue work
 * (ptxsim-gpus.c, with where each figure comes from). */
struct ptxsim_arch {
    int sm;             /* compute capability times ten: 30 */
    const char *family; /* "Kepler" */
    int max_threads;    /* resident threads a multiprocessor */
    int max_blocks;     /* resident blocks a multiprocessor */
    int registers;      /* 32-bit registers a multiprocessor */
    int registers_per_block;
    int max_registers_per_thread;
    int register_unit;       /* granted a warp at a time, in units of this many a warp */
    int register_partitions; /* the register file is split between this many schedulers */
    int shared_bytes;        /* shared memory a multiprocessor, in the default configuration */
    int shared_per_block;    /* the most a block may have without opting in */
    int shared_unit;         /* granted a block at a time, in units of this many bytes */
    int shared_reserved;     /* bytes the driver keeps of every block's share (sm_80 on: 1 KiB) */
    /* bytes a bank serves in one pass: 4, and 8 for Kepler, whose banks are
     * 64 bits wide (in its default 32-bit mode, two words of one 64-bit
     * row of a bank are served together) */
    int bank_bytes;
    int issue_width; /* warp instructions a multiprocessor issues a cycle, at most */
    const char *source;
};

int ptxsim_arch_count(void);
const struct ptxsim_arch *ptxsim_arch_at(int index);
/* By compute capability (35 for sm_35); NULL for one not in the table. */
const struct ptxsim_arch *ptxsim_arch_find(int sm);

/* A real GPU the report speaks for: a card of one arch, what bounds a
 * kernel's time on it (ptxsim-gpus.c, with where each figure comes from). */
struct ptxsim_gpu {
    const char *name; /* "Quadro K2100M" */
    const char *key;  /* "k2100m": what --gpu takes */
    int sm;           /* its arch: ptxsim_arch_find(sm) */
    int multiprocessors;
    double clock_mhz; /* boost clock where the card has one */
    double bandwidth_gbs;
    int fp32_lanes;     /* FP32 lanes a multiprocessor: 2 FLOPs each a cycle */
    int l2_bytes;       /* its L2 cache, for the timing estimate's cache model */
    int memory_mib;     /* device memory */
    const char *source; /* where the figures come from */
};

int ptxsim_gpu_count(void);
const struct ptxsim_gpu *ptxsim_gpu_at(int index);
/* By key ("k40m") or arch ("sm_35", the first GPU of it); NULL for none. */
const struct ptxsim_gpu *ptxsim_gpu_find(const char *key_or_arch);

/* ---------------------------------------------------------------- reports */

/* What decides how many warps of a kernel a multiprocessor holds: the
 * CUDA occupancy calculator's arithmetic (NVIDIA's cuda_occupancy.h,
 * cudaOccMaxActiveBlocksPerMultiprocessor, with the default cache and
 * shared-memory configuration and no dynamic shared memory), which
 * tests/gpu/test_occupancy.c holds it to. */
struct ptxsim_occupancy {
    int threads_per_block, registers_per_thread;
    size_t shared_per_block; /* the kernel's */
    size_t shared_allocated; /* with the driver's reserve, rounded up to its unit */
    int blocks_by_threads, blocks_by_registers, blocks_by_shared, blocks_by_limit; /* INT_MAX: no bound */
    int blocks;                                                                    /* the least of the four */
    int warps, max_warps;
    /* the bounds that give `blocks`, "threads", "registers", "shared memory",
     * "blocks", joined by "and" where several do */
    char limited_by[64];
    const char *cannot; /* when blocks is 0: why no block fits; else NULL */
};

void ptxsim_occupancy(const struct ptxsim_arch *a, int threads_per_block, int registers_per_thread,
                      size_t shared_per_block, struct ptxsim_occupancy *o);

/* A launch's time on a GPU, estimated from its record (ptxsim-timing.c):
 * an estimate, not a measurement, whose error against the kernel times of
 * a real H100 run docs/benchmarks.md states. Each term in seconds:
 *   issue        the busiest multiprocessor's schedulers issuing its warps'
 *                instructions, wave after wave;
 *   latency      one warp's chain of dependent instructions and loads,
 *                which few warps on a scheduler cannot hide, a wave each;
 *   memory       the DRAM traffic a cache leaves, at the card's bandwidth:
 *                each distinct sector once while they fit in L2, every
 *                sector when they do not;
 *   arithmetic   its FP32 operations at the peak of the multiprocessors
 *                it occupies;
 *   overhead     a launch's own, a constant.
 * total = overhead + the largest of the other four. */
struct ptxsim_timing {
    double issue, memory, arithmetic, latency, overhead, total;
    double dram_bytes;
    uint64_t waves;
    const char *bound; /* "issue", "memory", "arithmetic", "latency" */
};

/* `blocks_per_sm`: the occupancy's (at least 1). */
void ptxsim_estimate(const struct ptxsim_stats *s, const struct ptxsim_gpu *g, int blocks_per_sm,
                     struct ptxsim_timing *t);

/* The launch's record as text for people: instructions per thread by class,
 * warp execution efficiency, each global access's sectors and lines per
 * request, shared-memory bank conflicts, occupancy on `gpu` with
 * `registers` per thread (ptxas's count; 0: ptxsim_kernel_registers', said
 * to be an estimate, with its range), a roofline, and the launch's
 * estimated time there (ptxsim_estimate). malloc'd; NULL when out of
 * memory. `registers_from` says where the count came from. */
char *ptxsim_report(const struct ptxsim_stats *s, const struct ptxsim_gpu *gpu, int registers,
                    const char *registers_from);

#endif /* EMBER_PTXSIM_H */
