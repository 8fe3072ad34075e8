/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-report.c — what one launch did, for a person learning how
 * a GPU spends its time (`ember ptx KERNEL --simulate`):
 *
 *   instructions per thread, by class       what the work is made of
 *   warp execution efficiency               lanes active per instruction issued (NVIDIA's
 *                                           definition): what divergence and partly empty
 *                                           warps cost; and threads with work, those past
 *                                           the instruction's guard too
 *   global loads and stores                 per instruction, the 32-byte sectors and 128-byte
 *                                           lines one warp's request touches: coalescing
 *   shared loads and stores                 per instruction, the passes the 32 banks need:
 *                                           bank conflicts
 *   occupancy on a real GPU                 how many warps a multiprocessor holds at once, and
 *                                           what limits it (ptxsim-gpus.c)
 *   a roofline                              the launch's time on that GPU if only arithmetic,
 *                                           or only DRAM traffic, or only instruction issue
 *                                           bounded it
 *
 *   an estimated time                       the roofline's terms with the busy multiprocessors,
 *                                           a cache and latency (ptxsim-timing.c)
 *
 * Everything but the last three is counted, not estimated: it is what the
 * simulated warps did. The roofline is each resource alone at its peak; the
 * estimate adds what it leaves out, and says it is one.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

static const char *const class_names[PTXSIM_CLASS_COUNT] = {
#define CLASS_NAME(name, what) what,
    PTXSIM_CLASSES(CLASS_NAME)
#undef CLASS_NAME
};

const char *ptxsim_class_name(enum ptxsim_class c)
{
    return (unsigned)c < PTXSIM_CLASS_COUNT ? class_names[c] : "?";
}

/* a growing string */
struct text {
    char *s;
    size_t len, cap;
    bool failed;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    for (int attempt = 0; attempt < 2 && !t->failed; attempt++) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
        } else if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        } else {
            size_t cap = (t->cap + (size_t)n + 1) * 2;
            char *grown = realloc(t->s, cap);
            if (!grown)
                t->failed = true;
            else
                t->s = grown, t->cap = cap;
        }
    }
}

static double per(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void report_classes(struct text *t, const struct ptxsim_stats *s, uint64_t threads)
{
    uint64_t by_class[PTXSIM_CLASS_COUNT] = {0};
    for (int i = 0; i < s->count; i++)
        by_class[s->kernel->code[i].klass] += s->ins[i].threads;
    add(t, "\ninstructions per thread, by class\n");
    for (int c = 0; c < PTXSIM_CLASS_COUNT; c++)
        if (by_class[c])
            add(t, "  %-44s %9.1f  %5.1f%%\n", class_names[c], per(by_class[c], threads),
                100.0 * per(by_class[c], s->thread_instructions));
    add(t, "  %-44s %9.1f\n", "all", per(s->thread_instructions, threads));
    add(t,
        "\nwarp execution efficiency: %.1f%% (on average %.1f of a warp's 32 lanes active in each "
        "instruction it "
        "issued; the others left out by a branch, ended, or past the block's last thread: NVIDIA's "
        "warp_execution_efficiency)\n",
        100.0 * per(s->active_instructions, s->warp_instructions * PTXSIM_LANES),
        per(s->active_instructions, s->warp_instructions));
    add(t,
        "threads with work: %.1f%% (on average %.1f lanes an issue also past the instruction's guard: "
        "warp_nonpred_execution_efficiency)\n",
        100.0 * per(s->thread_instructions, s->warp_instructions * PTXSIM_LANES),
        per(s->thread_instructions, s->warp_instructions));
}

static void report_global(struct text *t, const struct ptxsim_stats *s)
{
    const struct ptxsim_kernel *k = s->kernel;
    uint64_t requests = 0, sectors = 0, lines = 0;
    for (int i = 0; i < s->count; i++)
        if (k->code[i].klass == PTXSIM_CLASS_LOAD_GLOBAL || k->code[i].klass == PTXSIM_CLASS_STORE_GLOBAL) {
            requests += s->ins[i].issued;
            sectors += s->ins[i].sectors;
            lines += s->ins[i].lines;
        }
    add(t,
        "\nglobal memory: %llu requests (a warp's load or store), %llu sectors of 32 bytes, %llu lines of "
        "128\n",
        (unsigned long long)requests, (unsigned long long)sectors, (unsigned long long)lines);
    if (!requests)
        return;
    add(t, "  a whole warp reading 32 neighbouring floats touches 4 sectors of 1 line (coalesced); 32 floats "
           "far "
           "apart, 32 of 32\n");
    add(t, "  %6s %9s %12s %10s  %-12s %s\n", "line", "requests", "sectors/req", "lines/req", "",
        "instruction");
    for (int i = 0; i < s->count; i++) {
        const struct ptxsim_ins_stats *is = &s->ins[i];
        if ((k->code[i].klass != PTXSIM_CLASS_LOAD_GLOBAL && k->code[i].klass != PTXSIM_CLASS_STORE_GLOBAL) ||
            !is->issued)
            continue;
        double lanes = per(is->threads, is->issued), spr = per(is->sectors, is->issued);
        /* the fewest sectors the lanes' bytes could fill */
        double ideal = lanes * ptx_type_bytes((enum ptx_type)k->code[i].type) / 32.0;
        add(t, "  %6d %9llu %12.1f %10.1f  %-12s %.60s\n", k->code[i].line, (unsigned long long)is->issued,
            spr, per(is->lines, is->issued), spr > 2.0 * (ideal < 1 ? 1 : ideal) + 0.5 ? "uncoalesced" : "",
            k->text[i]);
    }
    if (s->global_bytes <= sectors * 32)
        add(t,
            "  the sectors move %llu bytes for the %llu the threads asked for: %.0f%% of what moves is "
            "used\n",
            (unsigned long long)sectors * 32, (unsigned long long)s->global_bytes,
            100.0 * per(s->global_bytes, sectors * 32));
    else
        add(t,
            "  the sectors move %llu bytes for the %llu the threads asked for: lanes reading one address "
            "share "
            "its sector\n",
            (unsigned long long)sectors * 32, (unsigned long long)s->global_bytes);
}

/* an instruction's bank passes on the arch: 8-byte-wide banks on Kepler */
static uint64_t passes_on(const struct ptxsim_ins_stats *is, const struct ptxsim_arch *a)
{
    return a->bank_bytes == 8 ? is->wavefronts_kepler : is->wavefronts;
}

static void report_shared(struct text *t, const struct ptxsim_stats *s, const struct ptxsim_arch *a)
{
    const struct ptxsim_kernel *k = s->kernel;
    uint64_t requests = 0, passes = 0;
    for (int i = 0; i < s->count; i++)
        if (k->code[i].klass == PTXSIM_CLASS_SHARED) {
            requests += s->ins[i].issued;
            passes += passes_on(&s->ins[i], a);
        }
    if (!requests) {
        add(t, "\nshared memory: none used\n");
        return;
    }
    add(t,
        "\nshared memory: %llu requests, %llu passes of the 32 banks: bank conflicts cost %llu extra passes "
        "(%.1f%%)\n",
        (unsigned long long)requests, (unsigned long long)passes, (unsigned long long)(passes - requests),
        100.0 * per(passes - requests, requests));
    if (a->bank_bytes == 8) {
        uint64_t wide = 0;
        for (int i = 0; i < s->count; i++)
            wide += k->code[i].klass == PTXSIM_CLASS_SHARED ? s->ins[i].wavefronts_kepler64 : 0;
        add(t,
            "  %s banks are 64 bits wide: words w and w + 32 share a row of one bank and a pass (in its "
            "64-bit mode, which ember does not set, 8-byte words go to successive banks: %llu passes)\n",
            a->family, (unsigned long long)wide);
    }
    add(t, "  %6s %9s %11s  %s\n", "line", "requests", "passes/req", "instruction");
    for (int i = 0; i < s->count; i++)
        if (k->code[i].klass == PTXSIM_CLASS_SHARED && s->ins[i].issued)
            add(t, "  %6d %9llu %11.2f  %.60s\n", k->code[i].line, (unsigned long long)s->ins[i].issued,
                per(passes_on(&s->ins[i], a), s->ins[i].issued), k->text[i]);
}

/* The occupancy on the GPU's arch, with `registers` a thread (ptxas's, or
 * the PTX's count, which is labelled an estimate with its range). */
static void report_occupancy(struct text *t, const struct ptxsim_stats *s, const struct ptxsim_gpu *g,
                             const struct ptxsim_arch *a, int registers, const char *registers_from,
                             struct ptxsim_occupancy *o)
{
    const struct ptxsim_kernel *k = s->kernel;
    unsigned block = s->block[0] * s->block[1] * s->block[2];
    bool estimated = registers <= 0;
    if (estimated)
        registers = k->registers32;
    ptxsim_occupancy(a, (int)block, registers, k->shared_bytes, o);
    add(t, "\noccupancy on the %s (sm_%d, %s): blocks of %u threads, %zu bytes of shared memory a block",
        g->name, g->sm, a->family, block, k->shared_bytes);
    if (a->shared_reserved)
        add(t, " (%zu with the driver's %d)", k->shared_bytes + (size_t)a->shared_reserved,
            a->shared_reserved);
    if (!estimated) {
        add(t, ", %d registers a thread (%s)\n", registers, registers_from);
    } else {
        /* the range ptxas was seen to land in against the count (ptxsim.h), within the arch's
         * limit, past which ptxas spills to local memory rather than allocate more */
        int most = a->max_registers_per_thread, counted = registers;
        int low = counted - PTXSIM_REGISTERS_BELOW, high = counted + PTXSIM_REGISTERS_ABOVE;
        low = low < 1 ? 1 : low > most ? most : low;
        high = high > most ? most : high;
        registers = counted > most ? most : counted;
        struct ptxsim_occupancy fewest, widest;
        ptxsim_occupancy(a, (int)block, high, k->shared_bytes, &fewest);
        ptxsim_occupancy(a, (int)block, low, k->shared_bytes, &widest);
        ptxsim_occupancy(a, (int)block, registers, k->shared_bytes, o);
        add(t,
            ", registers estimated (no ptxas here knows sm_%d): %d a thread counted from the PTX, the most "
            "values "
            "live at once",
            g->sm, counted);
        if (counted > most)
            add(t, ", over the %d the arch allows (ptxas would spill the rest to local memory)", most);
        if (low == high)
            add(t, "; ptxas's likely %d give %d block%s\n", high, o->blocks, o->blocks == 1 ? "" : "s");
        else if (fewest.blocks == widest.blocks)
            add(t, "; ptxas's likely %d to %d give %d block%s either way\n", low, high, o->blocks,
                o->blocks == 1 ? "" : "s");
        else
            add(t, "; ptxas's likely %d to %d give %d to %d blocks, %d taken below\n", low, high,
                fewest.blocks, widest.blocks, registers);
    }
    char by_shared[96] = "any number by shared memory (none used)";
    if (o->shared_allocated)
        snprintf(by_shared, sizeof by_shared, "%d by its %d bytes of shared memory (%zu a block)",
                 o->blocks_by_shared, a->shared_bytes, o->shared_allocated);
    char by_registers[96];
    if (o->blocks_by_registers == INT_MAX)
        snprintf(by_registers, sizeof by_registers, "any number by its registers");
    else
        snprintf(by_registers, sizeof by_registers, "%d by its %d registers", o->blocks_by_registers,
                 a->registers);
    add(t, "  a multiprocessor holds %d blocks by its threads, %s, %s, %d by its block limit\n",
        o->blocks_by_threads, by_registers, by_shared, o->blocks_by_limit);
    if (o->blocks == 0)
        add(t, "  so no block fits: %s (a real launch would fail)\n", o->cannot);
    else
        add(t, "  so %d block%s: %d of %d warps (%.0f%%), limited by %s\n", o->blocks,
            o->blocks == 1 ? "" : "s", o->warps, o->max_warps,
            100.0 * per((uint64_t)o->warps, (uint64_t)o->max_warps), o->limited_by);
}

/* The roofline: each resource alone, at its peak. */
static void report_roofline(struct text *t, const struct ptxsim_stats *s, const struct ptxsim_gpu *g,
                            const struct ptxsim_arch *a, const struct ptxsim_occupancy *o)
{
    const struct ptxsim_kernel *k = s->kernel;
    uint64_t blocks = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
    uint64_t fp = 0, sectors = 0;
    for (int i = 0; i < s->count; i++) {
        fp += (uint64_t)ptx_flops(&k->code[i]) * s->ins[i].threads;
        sectors += s->ins[i].sectors;
    }
    double clock = g->clock_mhz * 1e6;
    double peak = 2.0 * g->multiprocessors * g->fp32_lanes * clock;
    double compute = fp / peak, memory = sectors * 32.0 / (g->bandwidth_gbs * 1e9);
    double issue = s->warp_instructions / ((double)a->issue_width * g->multiprocessors * clock);
    add(t, "\nroofline on the %s: %d multiprocessors at %.0f MHz, %.0f GFLOP/s FP32, %.0f GB/s\n", g->name,
        g->multiprocessors, g->clock_mhz, peak * 1e-9, g->bandwidth_gbs);
    add(t, "  arithmetic  %12llu FP32 operations at the peak            %10.2f us\n", (unsigned long long)fp,
        compute * 1e6);
    add(t, "  memory      %12llu bytes in sectors, as if none were cached %8.2f us\n",
        (unsigned long long)sectors * 32, memory * 1e6);
    add(t, "  issue       %12llu warp instructions, %d a cycle an SM     %10.2f us\n",
        (unsigned long long)s->warp_instructions, a->issue_width, issue * 1e6);
    double bound = compute > memory ? compute : memory;
    bound = issue > bound ? issue : bound;
    add(t, "  the largest, %.2f us, bound by %s", bound * 1e6,
        bound == issue    ? "instruction issue"
        : bound == memory ? "memory"
                          : "arithmetic");
    if (o->blocks > 0) {
        uint64_t resident = (uint64_t)g->multiprocessors * (uint64_t)o->blocks;
        add(t, "; the %llu blocks run in %llu wave%s of %llu\n", (unsigned long long)blocks,
            (unsigned long long)((blocks + resident - 1) / resident),
            (blocks + resident - 1) / resident == 1 ? "" : "s", (unsigned long long)resident);
    } else {
        add(t, "; no block fits a multiprocessor, so there are no waves\n");
    }
    add(t, "  (not a bound on the time: it leaves out latency, launch overhead and the tail of the last "
           "wave, and counts every sector as DRAM traffic, which a cache would cut)\n");

    struct ptxsim_timing e;
    ptxsim_estimate(s, g, o->blocks, &e);
    add(t,
        "\nestimated time on the %s: %.2f us, bound by %s (an estimate, not a measurement: within the "
        "factor docs/benchmarks.md states of real H100 kernel times)\n",
        g->name, e.total * 1e6, e.bound);
    add(t, "  issue       %llu wave%s of %.0f instructions a warp, its schedulers' share  %10.2f us\n",
        (unsigned long long)e.waves, e.waves == 1 ? "" : "s",
        s->warps ? (double)s->warp_instructions / (double)s->warps : 0.0, e.issue * 1e6);
    add(t, "  latency     one warp's chain of dependent instructions and loads          %10.2f us\n",
        e.latency * 1e6);
    add(t,
        "  memory      %.0f bytes from DRAM (%llu distinct sectors, %s L2), all sectors through L2  %8.2f "
        "us\n",
        e.dram_bytes, (unsigned long long)s->unique_sectors,
        s->unique_sectors * 32.0 <= (double)g->l2_bytes ? "within" : "beyond", e.memory * 1e6);
    add(t, "  arithmetic  at the busy multiprocessors' peak                       %10.2f us\n",
        e.arithmetic * 1e6);
    add(t, "  launch      a constant                                          %10.2f us\n", e.overhead * 1e6);
}

char *ptxsim_report(const struct ptxsim_stats *s, const struct ptxsim_gpu *g, int registers,
                    const char *registers_from)
{
    struct text t = {0};
    unsigned block = s->block[0] * s->block[1] * s->block[2];
    uint64_t blocks = (uint64_t)s->grid[0] * s->grid[1] * s->grid[2];
    uint64_t threads = blocks * block;
    add(&t, "launch: %ux%ux%u blocks of %u threads (%u warps each): %llu blocks, %llu warps, %llu threads\n",
        s->grid[0], s->grid[1], s->grid[2], block, (block + 31) / 32, (unsigned long long)blocks,
        (unsigned long long)s->warps, (unsigned long long)threads);
    add(&t, "executed: %llu warp instructions, %llu thread instructions, %llu barriers passed\n",
        (unsigned long long)s->warp_instructions, (unsigned long long)s->thread_instructions,
        (unsigned long long)s->barriers);
    report_classes(&t, s, threads);
    report_global(&t, s);

    const struct ptxsim_arch *a = ptxsim_arch_find(g->sm);
    if (!a) {
        add(&t, "\n(no figures for sm_%d: no occupancy or roofline)\n", g->sm);
    } else {
        report_shared(&t, s, a);
        struct ptxsim_occupancy o;
        report_occupancy(&t, s, g, a, registers, registers_from, &o);
        report_roofline(&t, s, g, a, &o);
    }
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}
