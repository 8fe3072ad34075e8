/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/test_occupancy.c — ptxsim's occupancy (ptxsim-gpus.c) against
 * NVIDIA's own: cudaOccMaxActiveBlocksPerMultiprocessor of the CUDA
 * toolkit's cuda_occupancy.h (a header of static functions, C as well as
 * C++), built only where a toolkit is installed. For every arch of ptxsim's
 * table, every block size ember's kernels use and more, registers from 0 to
 * 255 and static shared memory from none to 48 KiB: the same blocks a
 * multiprocessor, and the same limiting resources. (The header gives every
 * compute capability 3.x 255 registers a thread; sm_30 has 63, so sm_30 is
 * compared up to 63.) Where no toolkit is, tests/gpu/test_ptxsim.c holds the
 * arithmetic to a table of cases worked out with this header.
 */
#include <cuda_occupancy.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../../ptxsim/ptxsim.h"

static int failures, cases;

/* What cudaGetDeviceProperties reports on a GPU of each arch, stated here
 * apart from ptxsim's table so that a wrong figure there shows (the CUDA C++
 * Programming Guide's "Technical Specifications per Compute Capability";
 * reservedSharedMemPerBlock, 1 KiB from sm_80 on, its "Shared Memory"
 * sections for 8.x and 9.0). The allocation units, block slots and
 * register partitions are the header's own. */
static const struct device {
    int sm, threads, registers, registers_per_block, shared, reserved;
} devices[] = {
    {30, 2048, 65536, 65536, 49152, 0},     {35, 2048, 65536, 65536, 49152, 0},
    {37, 2048, 131072, 65536, 114688, 0},   {50, 2048, 65536, 65536, 65536, 0},
    {52, 2048, 65536, 65536, 98304, 0},     {53, 2048, 65536, 32768, 65536, 0},
    {60, 2048, 65536, 65536, 65536, 0},     {61, 2048, 65536, 65536, 98304, 0},
    {70, 2048, 65536, 65536, 98304, 0},     {75, 1024, 65536, 65536, 65536, 0},
    {80, 2048, 65536, 65536, 167936, 1024}, {86, 1536, 65536, 65536, 102400, 1024},
    {89, 1536, 65536, 65536, 102400, 1024}, {90, 2048, 65536, 65536, 233472, 1024},
};

/* the header's limiting factors as ptxsim names them */
static void nvidia_names(unsigned mask, char *out, size_t len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{OCC_LIMIT_WARPS, "threads"},
                 {OCC_LIMIT_REGISTERS, "registers"},
                 {OCC_LIMIT_SHARED_MEMORY, "shared memory"},
                 {OCC_LIMIT_BLOCKS, "blocks"}};
    out[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (mask & names[i].bit) {
            size_t at = strlen(out);
            snprintf(out + at, len - at, "%s%s", at ? " and " : "", names[i].name);
        }
}

static void check(const struct ptxsim_arch *a, const struct device *d, int threads, int registers, int shared)
{
    cudaOccDeviceProp p;
    memset(&p, 0, sizeof p);
    p.computeMajor = d->sm / 10;
    p.computeMinor = d->sm % 10;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = d->threads;
    p.regsPerBlock = d->registers_per_block;
    p.regsPerMultiprocessor = d->registers;
    p.warpSize = 32;
    p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerMultiprocessor = (size_t)d->shared;
    p.numSms = 1;
    p.sharedMemPerBlockOptin = (size_t)d->shared - (size_t)d->reserved;
    p.reservedSharedMemPerBlock = (size_t)d->reserved;
    cudaOccFuncAttributes f;
    memset(&f, 0, sizeof f);
    f.maxThreadsPerBlock = 1024;
    f.numRegs = registers;
    f.sharedSizeBytes = (size_t)shared;
    f.partitionedGCConfig = PARTITIONED_GC_OFF;
    f.shmemLimitConfig = FUNC_SHMEM_LIMIT_DEFAULT;
    f.numBlockBarriers = 1; /* bar.sync 0, ember's one barrier */
    cudaOccDeviceState s;
    memset(&s, 0, sizeof s);
    s.cacheConfig = CACHE_PREFER_NONE;
    s.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    cudaOccResult r;
    memset(&r, 0, sizeof r);
    cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &f, &s, threads, 0);
    struct ptxsim_occupancy o;
    ptxsim_occupancy(a, threads, registers, (size_t)shared, &o);
    cases++;
    char theirs[64];
    nvidia_names(r.limitingFactors, theirs, sizeof theirs);
    bool same = e == CUDA_OCC_SUCCESS && r.activeBlocksPerMultiprocessor == o.blocks &&
                (o.blocks == 0 || strcmp(theirs, o.limited_by) == 0);
    if (!same && failures++ < 20)
        printf("FAILED: sm_%d, %d threads, %d registers, %d bytes shared: NVIDIA's %d blocks (%s, error %d), "
               "ptxsim's %d (%s)\n",
               a->sm, threads, registers, shared, r.activeBlocksPerMultiprocessor, theirs, (int)e, o.blocks,
               o.limited_by);
}

int main(void)
{
    static const int block_sizes[] = {32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024};
    int archs = 0;
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        const struct ptxsim_arch *a = ptxsim_arch_find(devices[i].sm);
        if (!a) {
            printf("FAILED: sm_%d is not in ptxsim's table\n", devices[i].sm);
            failures++;
            continue;
        }
        archs++;
        for (size_t b = 0; b < sizeof block_sizes / sizeof block_sizes[0]; b++)
            for (int regs = 0; regs <= a->max_registers_per_thread; regs += regs < 64 ? 1 : 7)
                for (int shared = 0; shared <= 48 * 1024; shared += shared < 4096 ? 100 : 1531)
                    check(a, &devices[i], block_sizes[b], regs, shared);
    }
    printf("%d cases on %d archs (sm_30 to sm_90): %d differ from NVIDIA's cuda_occupancy.h\n", cases, archs,
           failures);
    if (failures)
        return 1;
    printf("test_occupancy: ok\n");
    return 0;
}
