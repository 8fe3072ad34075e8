/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-registers.c — how many registers a kernel needs, counted
 * from its PTX when no ptxas is at hand to say.
 *
 * PTX registers are virtual: a compiler declares a fresh one for every
 * value (sgemm's PTX declares hundreds), and ptxas maps them onto the
 * GPU's real registers, reusing one as soon as its value is dead. So the
 * count that matters is the most values alive at any one instruction: a
 * classic liveness analysis, backwards over the instructions until nothing
 * changes. A value is live from the instruction that writes it to the
 * last that reads it, along every path the branches allow. 64-bit values
 * take two registers, predicates their own (they are not counted), and
 * two kinds of value none as a GPU holds them: a parameter that is only
 * read (the machine code reads it from constant memory as it needs it),
 * and a 64-bit shared-memory address counts one (shared memory is
 * addressed with 32 bits). Against ptxas -v on NVRTC 11.8's and 13's PTX
 * for ember's 31 kernels this lands within 7 registers for most, and 15 to
 * 29 over for sgemm, sgemm_split and cross_entropy_forward, whose
 * unrolled loops ptxas schedules more tightly (docs/how-it-works.md).
 */
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

typedef uint64_t word;
#define WORD_BITS 64

static void set_bit(word *s, int i) { s[i / WORD_BITS] |= (word)1 << (i % WORD_BITS); }
static void clear_bit(word *s, int i) { s[i / WORD_BITS] &= ~((word)1 << (i % WORD_BITS)); }

/* the registers a live set holds: 64-bit slots two, predicates and
 * parameters none, shared addresses one (`kind`: 'p' a parameter, 's' a
 * shared address, 0 anything else) */
static int weight(const struct ptxsim_kernel *k, const word *s, const char *kind)
{
    int n = 0;
    for (int i = 0; i < k->slot_count; i++)
        if (s[i / WORD_BITS] >> (i % WORD_BITS) & 1 && kind[i] != 'p')
            n += k->regs[i].type == T_PRED                                              ? 0
                 : ptx_type_bytes((enum ptx_type)k->regs[i].type) > 4 && kind[i] != 's' ? 2
                                                                                        : 1;
    return n;
}

/* 'p' for a slot only ever loaded from a parameter or a constant, 's' for
 * one a shared access takes its address from, 0 for the rest; malloc'd */
static char *slot_kinds(const struct ptxsim_kernel *k)
{
    char *kind = calloc((size_t)k->slot_count, 1);
    for (int i = 0; kind && i < k->count; i++) {
        const struct ptx_ins *in = &k->code[i];
        bool from_param = in->op == OP_LD && (in->space == SPACE_PARAM || in->space == SPACE_CONST);
        if (from_param)
            kind[in->dst[0]] = kind[in->dst[0]] == 'x' ? 'x' : 'p';
        else
            for (int d = 0; d < 2; d++)
                if (in->dst[d] >= 0)
                    kind[in->dst[d]] = 'x'; /* written otherwise too: a value like any other */
        if ((in->op == OP_LD || in->op == OP_ST) && in->space == SPACE_SHARED && in->base >= 0)
            kind[in->base] = 's';
    }
    for (int i = 0; kind && i < k->slot_count; i++)
        kind[i] = kind[i] == 'x' ? 0 : kind[i];
    return kind;
}

void ptx_count_registers(struct ptxsim_kernel *k)
{
    int words = (k->slot_count + WORD_BITS - 1) / WORD_BITS;
    if (words == 0 || k->count == 0)
        return;
    word *live_in = calloc((size_t)k->count * (size_t)words, sizeof *live_in);
    word *out = calloc((size_t)words, sizeof *out);
    if (!live_in || !out) {
        free(live_in);
        free(out);
        return; /* the declared count stays */
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = k->count - 1; i >= 0; i--) {
            const struct ptx_ins *in = &k->code[i];
            /* live after it: what its successors need */
            memset(out, 0, (size_t)words * sizeof *out);
            bool ends = in->op == OP_RET || in->op == OP_EXIT;
            bool falls = !(ends || in->op == OP_BRA) || in->guard != NO_OPERAND;
            if (falls && i + 1 < k->count)
                for (int w = 0; w < words; w++)
                    out[w] |= live_in[(size_t)(i + 1) * words + w];
            if (in->op == OP_BRA)
                for (int w = 0; w < words; w++)
                    out[w] |= live_in[(size_t)in->target * words + w];
            /* live before it: that, less what it writes (unless a guard may skip it), plus what it reads */
            if (in->guard == NO_OPERAND)
                for (int d = 0; d < 2; d++)
                    if (in->dst[d] >= 0 && in->op != OP_ST)
                        clear_bit(out, in->dst[d]);
            for (int s = 0; s < in->nsrc; s++)
                if (in->src[s] >= 0)
                    set_bit(out, in->src[s]);
            if (in->base >= 0)
                set_bit(out, in->base);
            if (in->guard >= 0)
                set_bit(out, in->guard);
            word *mine = &live_in[(size_t)i * words];
            if (memcmp(mine, out, (size_t)words * sizeof *out) != 0) {
                memcpy(mine, out, (size_t)words * sizeof *out);
                changed = true;
            }
        }
    }
    /* the pressure at an instruction: what is live into it, and what it writes */
    char *kind = slot_kinds(k);
    if (!kind) {
        free(live_in);
        free(out);
        return;
    }
    int most = 0;
    for (int i = 0; i < k->count; i++) {
        memcpy(out, &live_in[(size_t)i * words], (size_t)words * sizeof *out);
        for (int d = 0; d < 2; d++)
            if (k->code[i].dst[d] >= 0 && k->code[i].op != OP_ST)
                set_bit(out, k->code[i].dst[d]);
        int n = weight(k, out, kind);
        most = n > most ? n : most;
    }
    k->registers32 = most;
    free(kind);
    free(live_in);
    free(out);
}
