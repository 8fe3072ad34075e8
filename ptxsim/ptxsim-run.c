/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-run.c — a launch as a GPU runs it: the grid's blocks, each
 * block's warps, each warp's lanes, divergence and barriers.
 *
 * Blocks run one after another (on a GPU they run in any order and
 * concurrently; ember's kernels never let one block depend on another).
 * Within a block, each warp runs until every one of its lanes has ended or
 * waits at a barrier; then the next warp runs. When all the block's warps
 * wait, the barrier is checked (every live thread at the same bar.sync)
 * and they all go on. A seed shuffles the order of the warps at every
 * barrier, for tests that want another legal interleaving.
 *
 * Divergence: each warp keeps a SIMT stack, as NVIDIA's GPUs did in
 * hardware up to Pascal. The top entry's lanes run; at a branch some of
 * them take and others not, the entry becomes the *reconvergence* entry,
 * waiting at the branch's immediate post-dominator (ptxsim-cfg.c: the first
 * instruction every path from the branch must reach), and one entry for
 * each side is pushed above it, the taken side on top. Each side runs until
 * it reaches that point, where it is popped; when both are, the lanes go on
 * together. Lanes that return leave every entry. So the warp is whole again
 * exactly where the paths meet, whatever order the compiler laid the code
 * out in (clang's layout of `reduce` puts a join before one of its paths,
 * where running the lowest instruction first would issue the join twice).
 * Volta and later schedule a diverged warp's threads independently, and
 * may interleave the two sides; they reconverge at the same places for code
 * without warp-synchronous tricks, and a race-free kernel computes the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptxsim-impl.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* -------------------------------------------------------- the SIMT stack */

static bool push(struct run *r, struct warp *w, const struct ptx_ins *in, struct lane_group entry)
{
    if (w->depth == PTXSIM_STACK)
        return ptx_fail(r, PTXSIM_BAD_LAUNCH, w, __builtin_ctz(entry.lanes), in,
                        "divergence nested deeper than the simulator's stack of %d entries", PTXSIM_STACK);
    w->stack[w->depth++] = entry;
    return true;
}

/* Lanes that ended leave every entry; entries left empty, or at their
 * reconvergence point, are popped. */
static void settle(struct warp *w)
{
    for (int i = 0; i < w->depth; i++)
        w->stack[i].lanes &= ~w->exited;
    while (w->depth > 0) {
        const struct lane_group *g = &w->stack[w->depth - 1];
        if (g->lanes && !(g->rpc >= 0 && g->pc == g->rpc))
            break;
        w->depth--; /* its lanes are in the entry below, which waits at g->rpc */
    }
}

/* --------------------------------------------------------------- warps */

static void warp_start(struct run *r, struct warp *w, int index)
{
    const struct ptxsim_kernel *k = r->k;
    const struct ptxsim_launch *l = r->launch;
    w->index = index;
    unsigned first = (unsigned)index * PTXSIM_LANES;
    unsigned count = r->threads - first < PTXSIM_LANES ? r->threads - first : PTXSIM_LANES;
    w->live = count == PTXSIM_LANES ? ~0u : (1u << count) - 1;
    w->exited = 0;
    w->depth = 1;
    w->stack[0] = (struct lane_group){.pc = 0, .rpc = -1, .lanes = w->live};
    memset(w->written, 0, (size_t)k->slot_count * sizeof *w->written);
    /* the special registers this kernel reads, lane by lane */
    for (int s = 0; s < SPECIAL_COUNT; s++) {
        int slot = k->special_slot[s];
        if (slot < 0)
            continue;
        uint64_t *v = w->regs + (size_t)slot * PTXSIM_LANES;
        for (unsigned lane = 0; lane < PTXSIM_LANES; lane++) {
            unsigned t = first + lane;
            switch ((enum ptx_special)s) {
            case SPECIAL_TID_X: v[lane] = t % l->block[0]; break;
            case SPECIAL_TID_Y: v[lane] = t / l->block[0] % l->block[1]; break;
            case SPECIAL_TID_Z: v[lane] = t / (l->block[0] * l->block[1]); break;
            case SPECIAL_NTID_X:
            case SPECIAL_NTID_Y:
            case SPECIAL_NTID_Z: v[lane] = l->block[s - SPECIAL_NTID_X]; break;
            case SPECIAL_CTAID_X:
            case SPECIAL_CTAID_Y:
            case SPECIAL_CTAID_Z: v[lane] = r->block_id[s - SPECIAL_CTAID_X]; break;
            case SPECIAL_NCTAID_X:
            case SPECIAL_NCTAID_Y:
            case SPECIAL_NCTAID_Z: v[lane] = l->grid[s - SPECIAL_NCTAID_X]; break;
            case SPECIAL_LANEID: v[lane] = lane; break;
            case SPECIAL_WARPID: v[lane] = (unsigned)index; break;
            case SPECIAL_COUNT: break;
            }
        }
        w->written[slot] = w->live;
    }
}

/* The lanes of `lanes` whose guard (@%p or @!%p) lets them execute. */
static bool guarded(struct run *r, struct warp *w, const struct ptx_ins *in, uint32_t *lanes)
{
    if (in->guard == NO_OPERAND)
        return true;
    if (!(r->launch->flags & PTXSIM_NO_UNINIT_CHECK) && (*lanes & ~w->written[in->guard])) {
        uint32_t missing = *lanes & ~w->written[in->guard];
        return ptx_fail(r, PTXSIM_UNINITIALISED, w, __builtin_ctz(missing), in,
                        "its guard %s was never written by this thread", r->k->regs[in->guard].name);
    }
    const uint64_t *p = w->regs + (size_t)in->guard * PTXSIM_LANES;
    uint32_t on = 0;
    for (uint32_t rest = *lanes; rest; rest &= rest - 1) {
        int lane = __builtin_ctz(rest);
        if ((p[lane] & 1) != in->guard_negated)
            on |= 1u << lane;
    }
    *lanes = on;
    return true;
}

/* A divergent branch at g->pc: `taken` lanes go to the target, the rest on. */
static bool diverge(struct run *r, struct warp *w, struct lane_group *g, const struct ptx_ins *in,
                    uint32_t taken)
{
    const struct ptxsim_kernel *k = r->k;
    int at = g->pc, join = k->reconverge[at] >= 0 ? k->reconverge[at] : k->count;
    struct lane_group rest = {.pc = at + 1, .rpc = join, .lanes = g->lanes & ~taken};
    /* an entry that would wait where the one below it already waits is not
     * needed: g becomes the fall-through side instead */
    if (g->rpc == join) {
        *g = rest;
    } else {
        g->pc = join; /* the reconvergence entry */
        if (!push(r, w, in, rest))
            return false;
    }
    return push(r, w, in, (struct lane_group){.pc = in->target, .rpc = join, .lanes = taken});
}

/* Runs warp w until each of its lanes has ended or waits at a barrier.
 * False when a check failed. */
static bool warp_run(struct run *r, struct warp *w)
{
    const struct ptxsim_kernel *k = r->k;
    struct ptxsim_stats *stats = r->launch->stats;
    for (settle(w); w->depth > 0 && !w->stack[w->depth - 1].waiting; settle(w)) {
        struct lane_group *g = &w->stack[w->depth - 1];
        if (g->pc >= k->count) { /* past the last instruction: as a return */
            w->exited |= g->lanes;
            continue;
        }
        const struct ptx_ins *in = &k->code[g->pc];
        uint32_t lanes = g->lanes;
        if (!guarded(r, w, in, &lanes))
            return false;
        r->result->warp_instructions++;
        if (stats) {
            struct ptxsim_ins_stats *s = &stats->ins[g->pc];
            s->issued++;
            s->active += (uint64_t)ptx_popcount(g->lanes);
            s->threads += (uint64_t)ptx_popcount(lanes);
        }
        if (++r->issued_since_clock >= (1u << 16)) {
            r->issued_since_clock = 0;
            if (r->launch->watchdog > 0 && now() - r->started > r->launch->watchdog)
                return ptx_fail(r, PTXSIM_TIMEOUT, w, 0, in, "the launch ran over the watchdog's %.3f s",
                                r->launch->watchdog);
        }
        switch ((enum ptx_op)in->op) {
        case OP_BRA:
            if (lanes == g->lanes)
                g->pc = in->target;
            else if (lanes == 0)
                g->pc++;
            else if (!diverge(r, w, g, in, lanes))
                return false;
            break;
        case OP_RET:
        case OP_EXIT:
            w->exited |= lanes;
            g->pc++; /* the lanes whose guard kept them */
            break;
        case OP_BAR:
            if (lanes == g->lanes) {
                g->waiting = true;
            } else if (lanes) { /* a guarded barrier: those lanes wait, the others go past it */
                struct lane_group past = {.pc = g->pc + 1, .rpc = g->rpc, .lanes = g->lanes & ~lanes};
                g->lanes = lanes;
                g->waiting = true;
                if (!push(r, w, in, past))
                    return false;
            } else {
                g->pc++;
            }
            break;
        default:
            if (lanes && !ptx_execute(r, w, in, lanes))
                return false;
            g->pc++;
            break;
        }
    }
    return true;
}

/* -------------------------------------------------------------- blocks */

/* Every warp of the block waits at a barrier or has ended: checks that
 * every live thread waits at the same one and lets them go on. *done when
 * no thread waits. */
static bool barrier_release(struct run *r, bool *done)
{
    if (r->unwritten_read[0]) { /* no write came to make it a race: it read garbage */
        r->result->outcome = PTXSIM_UNINITIALISED;
        memcpy(r->result->message, r->unwritten_read, sizeof r->result->message);
        return false;
    }
    const struct warp *first_waiting = NULL, *first_exited = NULL;
    int barrier_pc = -1, waiting = 0, exited = 0, waiting_lane = 0, exited_lane = 0;
    for (int i = 0; i < r->warp_count; i++) {
        const struct warp *w = &r->warps[i];
        if (w->depth > 0) { /* its top entry waits at a barrier */
            const struct lane_group *lg = &w->stack[w->depth - 1];
            const struct ptx_ins *in = &r->k->code[lg->pc];
            if (barrier_pc >= 0 && lg->pc != barrier_pc)
                return ptx_fail(r, PTXSIM_BARRIER, w, __builtin_ctz(lg->lanes), in,
                                "it waits at this barrier while thread %d waits at the one of PTX line %d: a "
                                "barrier must be reached by every thread of the block, at the same place",
                                first_waiting->index * PTXSIM_LANES + waiting_lane,
                                r->k->code[barrier_pc].line);
            uint32_t elsewhere = w->live & ~w->exited & ~lg->lanes;
            if (elsewhere) { /* lanes of its warp on the other side of a branch */
                /* the nearest entry below holding it: the side of the branch it waits on */
                int lane = __builtin_ctz(elsewhere), below = w->depth - 2;
                while (below > 0 && !(w->stack[below].lanes & (1u << lane)))
                    below--;
                int at = below >= 0 ? w->stack[below].pc : r->k->count;
                return ptx_fail(
                    r, PTXSIM_BARRIER, w, __builtin_ctz(lg->lanes), in,
                    "it waits at this barrier while thread %d of its warp, on another side of a "
                    "branch, has not reached it (it is at PTX line %d): a barrier in divergent code",
                    w->index * PTXSIM_LANES + lane, at < r->k->count ? r->k->code[at].line : -1);
            }
            if (barrier_pc < 0) {
                barrier_pc = lg->pc;
                first_waiting = w;
                waiting_lane = __builtin_ctz(lg->lanes);
            }
            waiting += ptx_popcount(lg->lanes);
        }
        if (w->exited && !first_exited) {
            first_exited = w;
            exited_lane = __builtin_ctz(w->exited);
        }
        exited += ptx_popcount(w->exited);
    }
    *done = waiting == 0;
    if (*done)
        return true;
    if (exited > 0)
        return ptx_fail(
            r, PTXSIM_BARRIER, first_waiting, waiting_lane, &r->k->code[barrier_pc],
            "%d thread%s of the block wait at this barrier, but %d ended without reaching it (thread "
            "%d first): a barrier must be reached by every thread of the block",
            waiting, waiting == 1 ? "" : "s", exited, first_exited->index * PTXSIM_LANES + exited_lane);
    for (int i = 0; i < r->warp_count; i++) {
        struct warp *w = &r->warps[i];
        if (w->depth > 0) {
            w->stack[w->depth - 1].waiting = false;
            w->stack[w->depth - 1].pc = barrier_pc + 1;
        }
    }
    r->epoch++;
    if (r->launch->stats)
        r->launch->stats->barriers++;
    return true;
}

/* a small xorshift for the warp order */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

static bool block_run(struct run *r, int *order)
{
    r->epoch++;
    r->block_epoch = r->epoch; /* shared words written before this are another block's */
    for (int i = 0; i < r->warp_count; i++)
        warp_start(r, &r->warps[i], i);
    if (r->launch->stats)
        r->launch->stats->warps += (uint64_t)r->warp_count;
    for (;;) {
        if (r->launch->seed)
            for (int i = r->warp_count - 1; i > 0; i--) { /* Fisher-Yates */
                int j = (int)(next_random(&r->rng) % (uint64_t)(i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        for (int i = 0; i < r->warp_count; i++)
            if (!warp_run(r, &r->warps[order[i]]))
                return false;
        bool done;
        if (!barrier_release(r, &done))
            return false;
        if (done)
            return true;
    }
}

/* ---------------------------------------------------------------- launch */

static bool launch_fits(const struct ptxsim_launch *l, struct ptxsim_result *res)
{
    res->outcome = PTXSIM_BAD_LAUNCH;
    const struct ptxsim_kernel *k = l->kernel;
    if (!k) {
        snprintf(res->message, sizeof res->message, "a launch without a kernel");
        return false;
    }
    uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
    if (threads == 0 || threads > 1024 || l->grid[0] == 0 || l->grid[1] == 0 || l->grid[2] == 0) {
        snprintf(
            res->message, sizeof res->message,
            "kernel %s: a launch of %ux%ux%u blocks of %ux%ux%u threads (blocks of 1 to 1024 threads, at "
            "least one block)",
            k->name, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2]);
        return false;
    }
    if (k->param_bytes && !l->params) {
        snprintf(res->message, sizeof res->message,
                 "kernel %s takes %zu bytes of parameters, the launch has none", k->name, k->param_bytes);
        return false;
    }
    if (l->stats && l->stats->kernel != k) {
        snprintf(res->message, sizeof res->message, "kernel %s: the launch's record is for kernel %s",
                 k->name, l->stats->kernel->name);
        return false;
    }
    res->outcome = PTXSIM_OK;
    return true;
}

enum ptxsim_outcome ptxsim_run(const struct ptxsim_launch *l, struct ptxsim_result *res)
{
    res->outcome = PTXSIM_OK;
    res->message[0] = '\0';
    res->warp_instructions = 0;
    if (!launch_fits(l, res))
        return res->outcome;
    const struct ptxsim_kernel *k = l->kernel;
    struct run r = {
        .launch = l, .k = k, .result = res, .rng = l->seed * 0x9E3779B97F4A7C15ull + 1, .started = now()};
    r.threads = l->block[0] * l->block[1] * l->block[2];
    r.warp_count = (int)((r.threads + PTXSIM_LANES - 1) / PTXSIM_LANES);
    size_t slots = (size_t)(k->slot_count ? k->slot_count : 1);
    r.warps = calloc((size_t)r.warp_count, sizeof *r.warps);
    uint64_t *regs = malloc((size_t)r.warp_count * slots * PTXSIM_LANES * sizeof *regs);
    uint32_t *written = malloc((size_t)r.warp_count * slots * sizeof *written);
    int *order = malloc((size_t)r.warp_count * sizeof *order);
    /* shared memory is never initialised on a GPU: NaN bytes show what reads it unwritten */
    r.shared = malloc(k->shared_bytes ? k->shared_bytes : 1);
    r.shadow = calloc(k->shared_bytes / 4 + 1, sizeof *r.shadow);
    if (!r.warps || !regs || !written || !order || !r.shared || !r.shadow) {
        res->outcome = PTXSIM_NO_MEMORY;
        snprintf(res->message, sizeof res->message, "kernel %s: out of host memory for a block of %u threads",
                 k->name, r.threads);
        goto done;
    }
    memset(r.shared, 0xff, k->shared_bytes);
    for (int i = 0; i < r.warp_count; i++) {
        r.warps[i].regs = regs + (size_t)i * slots * PTXSIM_LANES;
        r.warps[i].written = written + (size_t)i * slots;
        order[i] = i;
    }
    if (l->stats) {
        memcpy(l->stats->grid, l->grid, sizeof l->grid);
        memcpy(l->stats->block, l->block, sizeof l->block);
    }
    for (unsigned z = 0; z < l->grid[2]; z++)
        for (unsigned y = 0; y < l->grid[1]; y++)
            for (unsigned x = 0; x < l->grid[0]; x++) {
                r.block_id[0] = x, r.block_id[1] = y, r.block_id[2] = z;
                if (!block_run(&r, order))
                    goto done;
            }
done:
    if (l->stats) { /* the totals of every launch recorded so far */
        l->stats->warp_instructions = l->stats->active_instructions = l->stats->thread_instructions = 0;
        for (int i = 0; i < l->stats->count; i++) {
            l->stats->warp_instructions += l->stats->ins[i].issued;
            l->stats->active_instructions += l->stats->ins[i].active;
            l->stats->thread_instructions += l->stats->ins[i].threads;
        }
    }
    free(r.shadow);
    free(r.shared);
    free(order);
    free(written);
    free(regs);
    free(r.warps);
    return res->outcome;
}

/* ------------------------------------------------------------ the record */

struct ptxsim_stats *ptxsim_stats_new(const struct ptxsim_kernel *k)
{
    struct ptxsim_stats *s = calloc(1, sizeof *s);
    if (s && !(s->ins = calloc((size_t)(k->count ? k->count : 1), sizeof *s->ins))) {
        free(s);
        return NULL;
    }
    if (s) {
        s->kernel = k;
        s->count = k->count;
    }
    return s;
}

void ptxsim_stats_free(struct ptxsim_stats *s)
{
    if (s) {
        free(s->ins);
        free(s->sector_set);
    }
    free(s);
}

void ptxsim_stats_clear(struct ptxsim_stats *s)
{
    memset(s->ins, 0, (size_t)(s->count ? s->count : 1) * sizeof *s->ins);
    if (s->sector_set)
        memset(s->sector_set, 0, s->set_capacity * sizeof *s->sector_set);
    s->warps = s->warp_instructions = s->active_instructions = s->thread_instructions = 0;
    s->global_bytes = s->unique_sectors = s->barriers = 0;
}
