/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-timing.c — how long a launch would take on a real GPU,
 * estimated from what the simulated warps did (ptxsim.h, struct
 * ptxsim_timing): a few terms a GPU architect would write on a board, each
 * from counts the record holds, and a handful of constants, the only ones
 * fitted. It is an estimate: docs/benchmarks.md ("The PTX simulator") sets
 * it beside the kernel times recorded on a real H100
 * (docs/gpu-runs) and states how far off it is.
 *
 *   issue       each multiprocessor's warp schedulers (four; GP100's two)
 *               issue for the warps resident on it, one warp instruction a
 *               cycle each (two on Kepler, Maxwell and GP104, which
 *               dual-issue: ptxsim-gpus.c's issue width), through the
 *               waves of blocks the busiest multiprocessor runs;
 *   latency     but a scheduler with few warps waits on each one's chain:
 *               an instruction that needs the result of the one before
 *               waits DEPENDENT_CYCLES (9 on Kepler, 6 on Maxwell and
 *               Pascal, 4 from Volta on: the microbenchmarks of Jia et
 *               al., "Dissecting the NVIDIA Volta GPU Architecture via
 *               Microbenchmarking", 2018, and "... Turing T4", 2019), and
 *               CHAIN_FRACTION of a warp's instructions do (the rest
 *               overlap); its global loads wait LOAD_NS each, LOADS_IN_FLIGHT
 *               of them at once; a wave lasts the longer of the two;
 *   memory      DRAM traffic: every distinct 32-byte sector at least once;
 *               all of the sectors the warps asked for when the distinct
 *               ones do not fit in L2 (then a sector read twice is likely
 *               gone by the second time), at the card's bandwidth; and
 *               every sector through L2, at L2_TIMES_DRAM times that (an
 *               assumption, about what published microbenchmarks of
 *               Kepler to Hopper find), whichever is longer;
 *   arithmetic  FP32 operations at the peak of the busy multiprocessors;
 *   overhead    a launch's fixed cost as the device's own timer sees it,
 *               LAUNCH_US (the events around a kernel included: an H100's
 *               profile times a trivial binary_dense at 6.4 us).
 *
 * LOAD_NS, LOADS_IN_FLIGHT, LAUNCH_US and CHAIN_FRACTION are fitted
 * (bench/ptxsim_calibrate.py --fit, 2026-11-28) to the 11 kernel times an
 * H100 recorded for SimpleCNN at batch 64 and ResNet-8 at batch 256 with
 * today's kernels (docs/gpu-runs/2026-11-26-h100-conv.md): every one
 * within a factor of 1.55 of its estimate, over and under, after the fit
 * (4.05 before it). Fitted to those, not tested on others: on other
 * kernels and shapes it may be off by more, which docs/benchmarks.md says.
 *
 * total = overhead + the largest of the multiprocessors' time (issue or
 * latency), memory and arithmetic.
 */
#include <string.h>

#include "ptxsim-impl.h"

#define LOAD_NS         200.0
#define L2_TIMES_DRAM   2.0
#define LOADS_IN_FLIGHT 8.0
#define LAUNCH_US       9.0
#define CHAIN_FRACTION  0.375

static double dependent_cycles(int sm) { return sm < 50 ? 9.0 : sm < 70 ? 6.0 : 4.0; }

void ptxsim_estimate(const struct ptxsim_stats *s, const struct ptxsim_gpu *g, int blocks_per_sm,
                     struct ptxsim_timing *t)
{
    memset(t, 0, sizeof *t);
    const struct ptxsim_arch *a = ptxsim_arch_find(g->sm);
    const struct ptxsim_kernel *k = s->kernel;
    uint64_t blocks = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
    uint64_t threads = (uint64_t)s->block[0] * s->block[1] * s->block[2];
    uint64_t sms = (uint64_t)g->multiprocessors, busy = blocks < sms ? blocks : sms;
    uint64_t per_sm = (blocks + sms - 1) / sms; /* on the busiest multiprocessor */
    uint64_t resident = (uint64_t)(blocks_per_sm > 0 ? blocks_per_sm : 1);
    resident = resident < per_sm ? resident : per_sm;
    t->waves = (per_sm + resident - 1) / (resident ? resident : 1);
    double clock = g->clock_mhz * 1e6;
    uint64_t fp = 0, sectors = 0, loads = 0;
    for (int i = 0; i < s->count; i++) {
        fp += (uint64_t)ptx_flops(&k->code[i]) * s->ins[i].threads;
        sectors += s->ins[i].sectors;
        if (k->code[i].klass == PTXSIM_CLASS_LOAD_GLOBAL)
            loads += s->ins[i].issued;
    }
    int schedulers = a ? a->register_partitions : 4, issue_width = a ? a->issue_width : 4;
    double warps = s->warps ? (double)s->warps : 1.0, per_warp = (double)s->warp_instructions / warps;
    double resident_warps = (double)resident * (double)((threads + 31) / 32);
    double per_scheduler = resident_warps / schedulers > 1.0 ? resident_warps / schedulers : 1.0;
    t->issue = (double)t->waves * per_scheduler * per_warp / ((double)issue_width / schedulers) / clock;
    t->latency = (double)t->waves *
                 (per_warp * dependent_cycles(g->sm) * CHAIN_FRACTION +
                  (double)loads / warps * LOAD_NS * 1e-9 * clock / LOADS_IN_FLIGHT) /
                 clock;
    t->dram_bytes =
        s->unique_sectors * 32.0 <= (double)g->l2_bytes ? s->unique_sectors * 32.0 : sectors * 32.0;
    double l2 = sectors * 32.0 / (L2_TIMES_DRAM * g->bandwidth_gbs * 1e9); /* every sector passes L2 */
    t->memory = t->dram_bytes / (g->bandwidth_gbs * 1e9);
    t->memory = l2 > t->memory ? l2 : t->memory;
    t->arithmetic = (double)fp / (2.0 * g->fp32_lanes * (double)busy * clock);
    t->overhead = LAUNCH_US * 1e-6;
    double most = t->issue;
    t->bound = "issue";
    if (t->latency > most)
        most = t->latency, t->bound = "latency";
    if (t->memory > most)
        most = t->memory, t->bound = "memory";
    if (t->arithmetic > most)
        most = t->arithmetic, t->bound = "arithmetic";
    t->total = t->overhead + most;
}
