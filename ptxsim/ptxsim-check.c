/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-check.c — the checks a launch runs under, as NVIDIA's
 * compute-sanitizer runs them on a GPU (memcheck, racecheck, synccheck),
 * an initcheck of registers and shared memory (compute-sanitizer's is of
 * global memory), and the message each failure leaves.
 *
 *   global memory   every lane's address lies in an allocation the caller
 *                   knows (asked once per allocation and launch), aligned
 *                   to the access's size
 *   shared memory   inside the kernel's shared variables, aligned; and
 *                   for races, each 4-byte word remembers the last thread
 *                   that wrote it and the threads that read it in the
 *                   current barrier interval (an *epoch*): a write after
 *                   another thread's read or write, or a read after another
 *                   thread's write, in one epoch, is a race. A read of a
 *                   word no thread of the block has written is reported at
 *                   the next barrier (or the block's end), unless a write by
 *                   another thread in the same epoch shows it to be a race.
 *   registers       each register keeps the lanes that wrote it; an
 *                   instruction reading it for a lane that never did reads
 *                   garbage
 *
 * Barriers are checked where the block waits (ptxsim-run.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ptxsim-impl.h"

bool ptx_fail(struct run *r, enum ptxsim_outcome outcome, const struct warp *w, int lane,
              const struct ptx_ins *in, const char *fmt, ...)
{
    char what[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const struct ptxsim_kernel *k = r->k;
    int index = in ? (int)(in - k->code) : -1;
    char where[200] = "";
    if (in)
        snprintf(where, sizeof where, ", PTX line %d (%.120s)", in->line, k->text[index]);
    r->result->outcome = outcome;
    snprintf(r->result->message, sizeof r->result->message, "kernel %s, block (%u,%u,%u), thread %d%s: %s",
             k->name, r->block_id[0], r->block_id[1], r->block_id[2], w ? w->index * PTXSIM_LANES + lane : -1,
             where, what);
    return false;
}

/* ------------------------------------------------------------ global */

bool ptx_check_global(struct run *r, const struct warp *w, const struct ptx_ins *in, int lane,
                      uint64_t address, unsigned bytes)
{
    if (address % bytes != 0)
        return ptx_fail(
            r, PTXSIM_BAD_ADDRESS, w, lane, in,
            "a %u-byte access at %#llx, misaligned (global accesses must be aligned to their size)", bytes,
            (unsigned long long)address);
    for (int i = 0; i < r->known_count; i++)
        if (address >= r->known[i].base && address - r->known[i].base + bytes <= r->known[i].bytes)
            return true;
    uint64_t base = 0, size = 0;
    const struct ptxsim_memory *m = &r->launch->memory;
    if (m->find && m->find(m->user, address, &base, &size)) {
        if (address - base + bytes <= size) {
            int slot = r->known_count < 16 ? r->known_count++ : r->known_next++ % 16;
            r->known[slot].base = base;
            r->known[slot].bytes = size;
            return true;
        }
        return ptx_fail(
            r, PTXSIM_BAD_ADDRESS, w, lane, in,
            "a %u-byte access at %#llx runs past the end of an allocation of %llu bytes at %#llx (%llu "
            "bytes in)",
            bytes, (unsigned long long)address, (unsigned long long)size, (unsigned long long)base,
            (unsigned long long)(address - base));
    }
    if (m->find && address > 0 && m->find(m->user, address - 1, &base, &size) && address == base + size)
        return ptx_fail(
            r, PTXSIM_BAD_ADDRESS, w, lane, in,
            "a %u-byte access at %#llx, just past the end of an allocation of %llu bytes at %#llx", bytes,
            (unsigned long long)address, (unsigned long long)size, (unsigned long long)base);
    return ptx_fail(r, PTXSIM_BAD_ADDRESS, w, lane, in, "a %u-byte access at %#llx, outside every allocation",
                    bytes, (unsigned long long)address);
}

/* ------------------------------------------------------------ shared */

/* A race on a shared word: this thread `does` it ("writes", "reads"),
 * which `who` (a thread, or -1: other threads) `did` since the last barrier */
static bool race(struct run *r, const struct warp *w, int lane, const struct ptx_ins *in, uint64_t word,
                 const char *does, int32_t who, const char *did)
{
    char whom[32] = "other threads";
    if (who >= 0)
        snprintf(whom, sizeof whom, "thread %d", (int)who);
    return ptx_fail(r, PTXSIM_RACE, w, lane, in,
                    "a shared-memory race: it %s the word at %llu, which %s %s since the last barrier", does,
                    (unsigned long long)word * 4, whom, did);
}

bool ptx_check_shared(struct run *r, const struct warp *w, const struct ptx_ins *in, int lane,
                      uint64_t address, unsigned bytes, bool store)
{
    size_t size = r->k->shared_bytes;
    if (address >= size || address + bytes > size)
        return ptx_fail(r, PTXSIM_BAD_ADDRESS, w, lane, in,
                        "a %u-byte shared access at %llu, past the block's %zu bytes of shared memory", bytes,
                        (unsigned long long)address, size);
    if (address % bytes != 0)
        return ptx_fail(r, PTXSIM_BAD_ADDRESS, w, lane, in, "a %u-byte shared access at %llu, misaligned",
                        bytes, (unsigned long long)address);
    bool races = !(r->launch->flags & PTXSIM_NO_RACE_CHECK),
         unwritten = !(r->launch->flags & PTXSIM_NO_UNINIT_CHECK);
    if (!races && !unwritten)
        return true;
    int32_t thread = w->index * PTXSIM_LANES + lane;
    for (uint64_t word = address / 4; word <= (address + bytes - 1) / 4; word++) {
        struct shared_shadow *s = &r->shadow[word];
        bool written_now = s->epoch_written == r->epoch;
        bool read_now = s->epoch_read == r->epoch;
        if (store) {
            if (races && written_now && s->writer != thread)
                return race(r, w, lane, in, word, "writes", s->writer, "also wrote");
            if (races && read_now && s->reader != thread)
                return race(r, w, lane, in, word, "writes", s->reader, "read");
            if (races && read_now && s->readers)
                return race(r, w, lane, in, word, "writes", -1, "read");
            s->epoch_written = r->epoch;
            s->writer = thread;
        } else {
            if (races && written_now && s->writer != thread)
                return race(r, w, lane, in, word, "reads", s->writer, "wrote");
            if (unwritten && s->epoch_written < r->block_epoch && !r->unwritten_read[0]) {
                /* reported at the next barrier, unless another thread writes the word before
                 * it: then it is a race (a read before a write), found below */
                ptx_fail(r, PTXSIM_UNINITIALISED, w, lane, in,
                         "it reads the shared word at %llu, which no thread of this block had written",
                         (unsigned long long)word * 4);
                memcpy(r->unwritten_read, r->result->message, sizeof r->unwritten_read);
                r->result->outcome = PTXSIM_OK;
                r->result->message[0] = '\0';
            }
            if (!read_now) {
                s->epoch_read = r->epoch;
                s->reader = thread;
                s->readers = false;
            } else if (s->reader != thread) {
                s->readers = true;
            }
        }
    }
    return true;
}

/* ---------------------------------------------------------- registers */

static bool defined(struct run *r, const struct warp *w, const struct ptx_ins *in, int32_t slot,
                    uint32_t mask)
{
    if (slot < 0)
        return true; /* a constant */
    uint32_t missing = mask & ~w->written[slot];
    if (!missing)
        return true;
    return ptx_fail(r, PTXSIM_UNINITIALISED, w, __builtin_ctz(missing), in,
                    "it reads %s, which this thread has never written", r->k->regs[slot].name);
}

bool ptx_check_defined(struct run *r, const struct warp *w, const struct ptx_ins *in, uint32_t mask)
{
    for (int i = 0; i < in->nsrc; i++)
        if (!defined(r, w, in, in->src[i], mask))
            return false;
    return in->base == NO_OPERAND || defined(r, w, in, in->base, mask);
}
