/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-gpus.c — the real GPUs the simulator's report speaks for,
 * one of each generation ember's users own: what bounds a kernel's
 * occupancy there (the multiprocessor's registers, shared memory, threads
 * and blocks) and its time (multiprocessors, clock, FP32 lanes, memory
 * bandwidth).
 *
 * The per-multiprocessor limits are NVIDIA's, per compute capability (the
 * CUDA C++ Programming Guide, "Features and Technical Specifications",
 * and the CUDA Occupancy Calculator's allocation units); the cards' counts,
 * clocks and bandwidths are each card's published specification as the
 * TechPowerUp GPU Database lists it (K2100M: 3 SMX, 667 MHz, 128-bit GDDR5
 * at 3 Gb/s, 48.1 GB/s; K40m: NVIDIA's board specification BD-06902, 15
 * SMX, 745 MHz base / 875 MHz boost, 288 GB/s; GTX 1080: NVIDIA's GP104
 * whitepaper, 20 SMs, 1733 MHz boost, 320 GB/s; H100 SXM5: NVIDIA's H100
 * datasheet, 132 SMs, 1980 MHz boost, 3.35 TB/s). Peaks computed from them
 * (2 FLOPs per lane a cycle): K2100M 0.77, K40m 5.0 at boost (4.3 base),
 * GTX 1080 8.9, H100 66.9 TFLOP/s FP32.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "ptxsim.h"

static const struct ptxsim_gpu gpus[] = {
    /* clang-format off */
    {.name = "Quadro K2100M", .key = "k2100m", .sm = 30, .multiprocessors = 3, .clock_mhz = 667,
     .bandwidth_gbs = 48.1, .fp32_lanes = 192, .registers = 65536, .max_registers_per_thread = 63,
     .register_unit = 256, .shared_bytes = 49152, .max_shared_per_block = 49152, .shared_unit = 256,
     .max_threads = 2048, .max_blocks = 16, .memory_mib = 2048,
     .source = "Kepler GK106 laptop GPU (2013); TechPowerUp GPU Database; CUDA Programming Guide, cc 3.0"},
    {.name = "Tesla K40m", .key = "k40m", .sm = 35, .multiprocessors = 15, .clock_mhz = 875,
     .bandwidth_gbs = 288, .fp32_lanes = 192, .registers = 65536, .max_registers_per_thread = 255,
     .register_unit = 256, .shared_bytes = 49152, .max_shared_per_block = 49152, .shared_unit = 256,
     .max_threads = 2048, .max_blocks = 16, .memory_mib = 12288,
     .source = "Kepler GK110B server GPU (2013); NVIDIA board specification BD-06902; CUDA Programming Guide, "
               "cc 3.5"},
    {.name = "GeForce GTX 1080", .key = "gtx1080", .sm = 61, .multiprocessors = 20, .clock_mhz = 1733,
     .bandwidth_gbs = 320, .fp32_lanes = 128, .registers = 65536, .max_registers_per_thread = 255,
     .register_unit = 256, .shared_bytes = 98304, .max_shared_per_block = 49152, .shared_unit = 256,
     .max_threads = 2048, .max_blocks = 32, .memory_mib = 8192,
     /* clang-format on */
     .source = "Pascal GP104 desktop GPU (2016); NVIDIA GeForce GTX 1080 whitepaper; CUDA Programming Guide, "
               "cc 6.1"},
    /* clang-format off */
    {.name = "H100 SXM5", .key = "h100", .sm = 90, .multiprocessors = 132, .clock_mhz = 1980,
     .bandwidth_gbs = 3350, .fp32_lanes = 128, .registers = 65536, .max_registers_per_thread = 255,
     .register_unit = 256, .shared_bytes = 233472, .max_shared_per_block = 49152, .shared_unit = 128,
     .max_threads = 2048, .max_blocks = 32, .memory_mib = 81920,
     /* clang-format on */
     .source = "Hopper GH100 data-centre GPU (2022); NVIDIA H100 datasheet; CUDA Programming Guide, cc 9.0 "
               "(48 KiB a block without opting in)"},
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

/* The CUDA Occupancy Calculator's arithmetic: a block's warps, registers
 * granted a warp at a time in units of register_unit, shared memory in
 * units of shared_unit; the fewest blocks any of the four allows. */
void ptxsim_occupancy(const struct ptxsim_gpu *g, int threads_per_block, int registers_per_thread,
                      size_t shared_per_block, struct ptxsim_occupancy *o)
{
    memset(o, 0, sizeof *o);
    o->threads_per_block = threads_per_block;
    o->registers_per_thread = registers_per_thread;
    o->shared_per_block = shared_per_block;
    o->max_warps = g->max_threads / 32;
    int warps = (threads_per_block + 31) / 32;
    o->blocks_by_threads = warps > 0 ? o->max_warps / warps : 0;
    o->blocks_by_limit = g->max_blocks;
    int per_warp = (registers_per_thread * 32 + g->register_unit - 1) / g->register_unit * g->register_unit;
    /* the calculator grants warps in fours (its warp allocation granularity) */
    int warps_by_registers = per_warp > 0 ? g->registers / per_warp / 4 * 4 : o->max_warps;
    o->blocks_by_registers = registers_per_thread > g->max_registers_per_thread ? 0
                             : warps > 0                                        ? warps_by_registers / warps
                                                                                : 0;
    size_t shared =
        (shared_per_block + (size_t)g->shared_unit - 1) / (size_t)g->shared_unit * (size_t)g->shared_unit;
    o->blocks_by_shared = shared_per_block > (size_t)g->max_shared_per_block ? 0
                          : shared > 0 ? (int)((size_t)g->shared_bytes / shared)
                                       : INT_MAX; /* none used: no bound */
    o->blocks = o->blocks_by_threads;
    o->limited_by = "threads";
    if (o->blocks_by_registers < o->blocks)
        o->blocks = o->blocks_by_registers, o->limited_by = "registers";
    if (o->blocks_by_shared < o->blocks)
        o->blocks = o->blocks_by_shared, o->limited_by = "shared memory";
    if (o->blocks_by_limit < o->blocks)
        o->blocks = o->blocks_by_limit, o->limited_by = "blocks";
    o->warps = o->blocks * warps;
}
