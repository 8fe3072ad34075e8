/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-gpus.c — what the simulator's report knows about NVIDIA's
 * GPUs: each compute capability's multiprocessor from sm_30 to sm_90 (what
 * bounds a kernel's occupancy, how its shared memory and issue work), the
 * six real GPUs the simulated ones stand for, and the occupancy
 * calculator's arithmetic.
 *
 * Where the arch figures come from:
 *   - resident threads, blocks and registers a multiprocessor, registers
 *     and shared memory a block, registers a thread, shared memory a
 *     multiprocessor: the CUDA C++ Programming Guide, "Technical
 *     Specifications per Compute Capability" (the shared memory a
 *     multiprocessor of sm_70 on is the most its carve-out gives, which
 *     the calculator takes when a kernel states no preference);
 *   - the allocation units, the register file's split between warp
 *     schedulers (sub-partitions: 2 on sm_60, else 4), the blocks a
 *     multiprocessor holds (16 on sm_3x, sm_75 and sm_86, 24 on sm_89) and
 *     the 1 KiB the driver reserves of each block's shared memory from
 *     sm_80 on: NVIDIA's cuda_occupancy.h (CUDA 13.0), whose arithmetic
 *     ptxsim_occupancy follows;
 *   - bank width: the Programming Guide's "Shared Memory" section for
 *     compute capability 3.x (banks 64 bits wide; in the default 32-bit
 *     mode successive 32-bit words go to successive banks, and two words
 *     in one 64-bit row of a bank are served together) and 5.x on (32
 *     banks of 32 bits);
 *   - issue width: the whitepapers. Kepler's SMX (GK110) and Maxwell's and
 *     Pascal's GP104 SMs have four warp schedulers with two dispatch units
 *     each, 8 warp instructions a cycle at most (two only from one warp's
 *     independent instructions); GP100's SM two schedulers of two, 4;
 *     Volta's, Turing's, Ampere's, Ada's and Hopper's four schedulers of
 *     one dispatch unit, 4.
 *
 * The cards' counts, clocks, bandwidths and L2 sizes are each card's
 * published specification (K2100M: TechPowerUp GPU Database, 3 SMX,
 * 667 MHz, 128-bit GDDR5 at 3 Gb/s, 48.1 GB/s, 256 KiB L2; K40m: NVIDIA's
 * board specification BD-06902, 15 SMX, 745 MHz base / 875 MHz boost,
 * 288 GB/s, 1.5 MiB L2; GTX 1080: NVIDIA's GP104 whitepaper, 20 SMs,
 * 1733 MHz boost, 320 GB/s, 2 MiB L2; H100 SXM5: NVIDIA's H100 datasheet
 * and Hopper whitepaper, 132 SMs, 1980 MHz boost, 3.35 TB/s, 50 MiB L2;
 * Jetson Nano: NVIDIA's Jetson Nano module datasheet, a GM20B of 128 cores
 * (one SM) at 921.6 MHz, 4 GB of 64-bit LPDDR4 shared with the CPU at
 * 25.6 GB/s, 256 KiB L2; Jetson TX2: NVIDIA's Jetson TX2 module datasheet,
 * a GP10B of 256 cores (two SMs) at 1300 MHz, 8 GB of 128-bit LPDDR4 at
 * 59.7 GB/s, 512 KiB L2).
 * Peaks computed from them (2 FLOPs per lane a cycle): K2100M 0.77, K40m
 * 5.0 at boost (4.3 base), GTX 1080 8.9, H100 66.9, Jetson Nano 0.24,
 * Jetson TX2 0.67 TFLOP/s FP32.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ptxsim.h"

#define KIB 1024

static const struct ptxsim_arch archs[] = {
    /* clang-format off */
    /*  sm  family     threads blocks regs     per block  per thread unit parts shared   per block  unit rsv  bank issue */
    {30, "Kepler",      2048, 16, 65536, 65536,  63, 256, 4,  48 * KIB, 48 * KIB, 256, 0,    8, 8, "cc 3.0"},
    {35, "Kepler",      2048, 16, 65536, 65536, 255, 256, 4,  48 * KIB, 48 * KIB, 256, 0,    8, 8, "cc 3.5"},
    {37, "Kepler",      2048, 16, 131072, 65536, 255, 256, 4, 112 * KIB, 48 * KIB, 256, 0,   8, 8, "cc 3.7 (K80)"},
    {50, "Maxwell",     2048, 32, 65536, 65536, 255, 256, 4,  64 * KIB, 48 * KIB, 256, 0,    4, 8, "cc 5.0"},
    {52, "Maxwell",     2048, 32, 65536, 65536, 255, 256, 4,  96 * KIB, 48 * KIB, 256, 0,    4, 8, "cc 5.2"},
    {53, "Maxwell",     2048, 32, 65536, 32768, 255, 256, 4,  64 * KIB, 48 * KIB, 256, 0,    4, 8, "cc 5.3 (Jetson Nano)"},
    {60, "Pascal",      2048, 32, 65536, 65536, 255, 256, 2,  64 * KIB, 48 * KIB, 256, 0,    4, 4, "cc 6.0 (GP100)"},
    {61, "Pascal",      2048, 32, 65536, 65536, 255, 256, 4,  96 * KIB, 48 * KIB, 256, 0,    4, 8, "cc 6.1"},
    {62, "Pascal",      2048, 32, 65536, 32768, 255, 256, 4,  64 * KIB, 48 * KIB, 256, 0,    4, 8, "cc 6.2 (Jetson TX2)"},
    {70, "Volta",       2048, 32, 65536, 65536, 255, 256, 4,  96 * KIB, 48 * KIB, 256, 0,    4, 4, "cc 7.0"},
    {75, "Turing",      1024, 16, 65536, 65536, 255, 256, 4,  64 * KIB, 48 * KIB, 256, 0,    4, 4, "cc 7.5"},
    {80, "Ampere",      2048, 32, 65536, 65536, 255, 256, 4, 164 * KIB, 48 * KIB, 128, KIB,  4, 4, "cc 8.0"},
    {86, "Ampere",      1536, 16, 65536, 65536, 255, 256, 4, 100 * KIB, 48 * KIB, 128, KIB,  4, 4, "cc 8.6"},
    {89, "Ada",         1536, 24, 65536, 65536, 255, 256, 4, 100 * KIB, 48 * KIB, 128, KIB,  4, 4, "cc 8.9"},
    {90, "Hopper",      2048, 32, 65536, 65536, 255, 256, 4, 228 * KIB, 48 * KIB, 128, KIB,  4, 4, "cc 9.0"},
    /* clang-format on */
};

int ptxsim_arch_count(void) { return (int)(sizeof archs / sizeof archs[0]); }

const struct ptxsim_arch *ptxsim_arch_at(int index)
{
    return index >= 0 && index < ptxsim_arch_count() ? &archs[index] : NULL;
}

const struct ptxsim_arch *ptxsim_arch_find(int sm)
{
    for (int i = 0; i < ptxsim_arch_count(); i++)
        if (archs[i].sm == sm)
            return &archs[i];
    return NULL;
}

static const struct ptxsim_gpu gpus[] = {
    /* clang-format off */
    {.name = "Quadro K2100M", .key = "k2100m", .sm = 30, .multiprocessors = 3, .clock_mhz = 667,
     .bandwidth_gbs = 48.1, .fp32_lanes = 192, .l2_bytes = 256 * KIB, .memory_mib = 2048,
     .source = "Kepler GK106 laptop GPU (2013); TechPowerUp GPU Database; CUDA Programming Guide, cc 3.0"},
    {.name = "Tesla K40m", .key = "k40m", .sm = 35, .multiprocessors = 15, .clock_mhz = 875,
     .bandwidth_gbs = 288, .fp32_lanes = 192, .l2_bytes = 1536 * KIB, .memory_mib = 12288,
     .source = "Kepler GK110B server GPU (2013); NVIDIA board specification BD-06902; CUDA Programming Guide, "
               "cc 3.5"},
    {.name = "GeForce GTX 1080", .key = "gtx1080", .sm = 61, .multiprocessors = 20, .clock_mhz = 1733,
     .bandwidth_gbs = 320, .fp32_lanes = 128, .l2_bytes = 2048 * KIB, .memory_mib = 8192,
     /* clang-format on */
     .source = "Pascal GP104 desktop GPU (2016); NVIDIA GeForce GTX 1080 whitepaper; CUDA Programming Guide, "
               "cc 6.1"},
    /* clang-format off */
    {.name = "H100 SXM5", .key = "h100", .sm = 90, .multiprocessors = 132, .clock_mhz = 1980,
     .bandwidth_gbs = 3350, .fp32_lanes = 128, .l2_bytes = 50 * 1024 * KIB, .memory_mib = 81920,
     /* clang-format on */
     .source = "Hopper GH100 data-centre GPU (2022); NVIDIA H100 datasheet; CUDA Programming Guide, cc 9.0 "
               "(48 KiB a block without opting in, 1 KiB of it the driver's)"},
    /* clang-format off */
    {.name = "Jetson Nano", .key = "nano", .sm = 53, .multiprocessors = 1, .clock_mhz = 921.6,
     .bandwidth_gbs = 25.6, .fp32_lanes = 128, .l2_bytes = 256 * KIB, .memory_mib = 4096,
     .source = "Maxwell GM20B integrated GPU (2019), memory shared with the CPU; NVIDIA Jetson Nano module "
               "datasheet; CUDA Programming Guide, cc 5.3"},
    {.name = "Jetson TX2", .key = "tx2", .sm = 62, .multiprocessors = 2, .clock_mhz = 1300,
     .bandwidth_gbs = 59.7, .fp32_lanes = 128, .l2_bytes = 512 * KIB, .memory_mib = 8192,
     /* clang-format on */
     .source = "Pascal GP10B integrated GPU (2017), memory shared with the CPU; NVIDIA Jetson TX2 module "
               "datasheet; CUDA Programming Guide, cc 6.2"},
};

int ptxsim_gpu_count(void) { return (int)(sizeof gpus / sizeof gpus[0]); }

const struct ptxsim_gpu *ptxsim_gpu_at(int index)
{
    return index >= 0 && index < ptxsim_gpu_count() ? &gpus[index] : NULL;
}

const struct ptxsim_gpu *ptxsim_gpu_find(const char *key_or_arch)
{
    int sm = 0;
    if (!key_or_arch)
        return NULL;
    if (sscanf(key_or_arch, "sm_%d", &sm) != 1)
        sm = 0;
    for (int i = 0; i < ptxsim_gpu_count(); i++)
        if (strcmp(gpus[i].key, key_or_arch) == 0 || gpus[i].sm == sm)
            return &gpus[i];
    return NULL;
}

static int round_up(int x, int unit) { return (x + unit - 1) / unit * unit; }

/* The occupancy calculator's arithmetic (cuda_occupancy.h's
 * cudaOccMaxActiveBlocksPerMultiprocessor), written out for one arch:
 *   threads     the multiprocessor's warp slots over the block's warps;
 *   registers   a warp's registers rounded up to the unit; each scheduler's
 *               share of the register file holds a whole number of warps;
 *               a block fits none when its warps, rounded up to a multiple
 *               of the schedulers, need more than a block may have;
 *   shared      the block's static shared memory plus the driver's reserve,
 *               rounded up to the unit, into the multiprocessor's;
 *   blocks      the multiprocessor's block slots.
 * Its barrier bound (sm_90 on: two barriers a block slot) never binds a
 * kernel that uses one barrier, as ember's all do. */
void ptxsim_occupancy(const struct ptxsim_arch *a, int threads_per_block, int registers_per_thread,
                      size_t shared_per_block, struct ptxsim_occupancy *o)
{
    memset(o, 0, sizeof *o);
    o->threads_per_block = threads_per_block;
    o->registers_per_thread = registers_per_thread;
    o->shared_per_block = shared_per_block;
    o->max_warps = a->max_threads / 32;
    int warps = (threads_per_block + 31) / 32;
    o->blocks_by_threads = warps > 0 && threads_per_block <= 1024 ? o->max_warps / warps : 0;
    o->blocks_by_limit = a->max_blocks;

    int per_warp = round_up(registers_per_thread * 32, a->register_unit);
    /* GP100 (sm_60) splits its register file in two, but a block must also
     * fit as it would on GP10x's four (cuda_occupancy.h checks both) */
    int fit_partitions = a->sm == 60 ? 4 : a->register_partitions;
    if (registers_per_thread > a->max_registers_per_thread) {
        o->blocks_by_registers = 0;
        o->cannot = "more registers a thread than the arch has";
    } else if (per_warp * round_up(warps, fit_partitions) > a->registers_per_block ||
               per_warp * warps > a->registers_per_block) {
        o->blocks_by_registers = 0;
        o->cannot = "more registers a block than the arch allows";
    } else if (per_warp == 0) {
        o->blocks_by_registers = INT_MAX;
    } else {
        int warps_per_partition = a->registers / a->register_partitions / per_warp;
        o->blocks_by_registers = warps > 0 ? warps_per_partition * a->register_partitions / warps : 0;
    }

    size_t used = shared_per_block + (size_t)a->shared_reserved;
    o->shared_allocated = (size_t)round_up((int)used, a->shared_unit);
    if (o->shared_allocated > (size_t)a->shared_per_block + (size_t)a->shared_reserved) {
        o->blocks_by_shared = 0;
        o->cannot = "more shared memory a block than the arch allows without opting in";
    } else {
        o->blocks_by_shared = o->shared_allocated > 0 ? (int)((size_t)a->shared_bytes / o->shared_allocated)
                                                      : INT_MAX; /* none used: no bound */
    }

    const int bound[4] = {o->blocks_by_threads, o->blocks_by_registers, o->blocks_by_shared,
                          o->blocks_by_limit};
    static const char *const names[4] = {"threads", "registers", "shared memory", "blocks"};
    o->blocks = INT_MAX;
    for (int i = 0; i < 4; i++)
        o->blocks = bound[i] < o->blocks ? bound[i] : o->blocks;
    for (int i = 0; i < 4; i++)
        if (bound[i] == o->blocks) {
            size_t len = strlen(o->limited_by);
            snprintf(o->limited_by + len, sizeof o->limited_by - len, "%s%s", len ? " and " : "", names[i]);
        }
    if (o->blocks == 0 && !o->cannot)
        o->cannot = "a block of more threads than the arch allows";
    o->warps = o->blocks * warps;
}
