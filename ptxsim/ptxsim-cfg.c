/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-cfg.c — where a diverged warp reconverges: at the branch's
 * immediate post-dominator, the first instruction every path from the
 * branch to the kernel's end must pass (a SIMT stack's reconvergence point,
 * as NVIDIA's GPUs before Volta compute it and as Volta and later keep
 * doing for code without warp-synchronous tricks).
 *
 * The kernel's instructions are cut into basic blocks (a block starts at
 * the first instruction, at a branch target and after a branch or return),
 * each block's successors read off its last instruction (a guarded branch
 * or return: two, its target or the end, and the next block), and the
 * post-dominator sets computed by the classic iteration backwards over a
 * virtual end node until nothing changes: pdom(end) = {end}, pdom(b) = {b}
 * plus the intersection of its successors' sets. A block's immediate
 * post-dominator is the strict post-dominator whose own set is the block's
 * without the block. Each conditional branch then records the first
 * instruction of its block's immediate post-dominator, or k->count for the
 * end of the kernel.
 */
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

typedef uint64_t word;
#define WORD_BITS 64

static bool has(const word *s, int i) { return s[i / WORD_BITS] >> (i % WORD_BITS) & 1; }

/* the instruction may end a block and go somewhere other than the next one */
static bool transfers(const struct ptx_ins *in)
{
    return in->op == OP_BRA || in->op == OP_RET || in->op == OP_EXIT;
}

bool ptx_find_reconvergence(struct ptxsim_kernel *k)
{
    int n = k->count;
    k->reconverge = malloc((size_t)(n ? n : 1) * sizeof *k->reconverge);
    int *block_of = malloc((size_t)(n ? n : 1) * sizeof *block_of);
    bool *leader = calloc((size_t)n + 1, sizeof *leader);
    if (!k->reconverge || !block_of || !leader) {
        free(block_of);
        free(leader);
        return false;
    }
    for (int i = 0; i < n; i++) {
        k->reconverge[i] = -1;
        if (k->code[i].op == OP_BRA && k->code[i].target >= 0 && k->code[i].target < n)
            leader[k->code[i].target] = true;
        if (transfers(&k->code[i]))
            leader[i + 1] = true;
    }
    leader[0] = true;
    int blocks = 0;
    for (int i = 0; i < n; i++) {
        if (leader[i] && i > 0)
            blocks++;
        block_of[i] = blocks;
    }
    blocks = n ? blocks + 1 : 0;
    int end = blocks; /* the virtual end node */
    int nodes = blocks + 1, words = (nodes + WORD_BITS - 1) / WORD_BITS;
    int *first = malloc((size_t)nodes * sizeof *first), *last = malloc((size_t)nodes * sizeof *last);
    word *pdom = malloc((size_t)nodes * (size_t)words * sizeof *pdom);
    word *meet = malloc((size_t)words * sizeof *meet);
    bool ok = first && last && pdom && meet;
    if (ok) {
        for (int i = n - 1; i >= 0; i--)
            first[block_of[i]] = i;
        for (int i = 0; i < n; i++)
            last[block_of[i]] = i;
        /* pdom(end) = {end}; every other set starts full */
        for (int b = 0; b < nodes; b++)
            memset(pdom + (size_t)b * words, b == end ? 0 : 0xff, (size_t)words * sizeof *pdom);
        pdom[(size_t)end * words + end / WORD_BITS] |= (word)1 << (end % WORD_BITS);
        for (bool changed = true; changed;) {
            changed = false;
            for (int b = blocks - 1; b >= 0; b--) {
                const struct ptx_ins *in = &k->code[last[b]];
                int succ[2], count = 0;
                bool guarded = in->guard != NO_OPERAND;
                if (in->op == OP_BRA) {
                    succ[count++] = in->target >= 0 && in->target < n ? block_of[in->target] : end;
                    if (guarded)
                        succ[count++] = last[b] + 1 < n ? block_of[last[b] + 1] : end;
                } else if (in->op == OP_RET || in->op == OP_EXIT) {
                    succ[count++] = end;
                    if (guarded)
                        succ[count++] = last[b] + 1 < n ? block_of[last[b] + 1] : end;
                } else {
                    succ[count++] = last[b] + 1 < n ? block_of[last[b] + 1] : end;
                }
                memcpy(meet, pdom + (size_t)succ[0] * words, (size_t)words * sizeof *meet);
                for (int s = 1; s < count; s++)
                    for (int w = 0; w < words; w++)
                        meet[w] &= pdom[(size_t)succ[s] * words + w];
                meet[b / WORD_BITS] |= (word)1 << (b % WORD_BITS);
                if (memcmp(meet, pdom + (size_t)b * words, (size_t)words * sizeof *meet) != 0) {
                    memcpy(pdom + (size_t)b * words, meet, (size_t)words * sizeof *meet);
                    changed = true;
                }
            }
        }
        /* each conditional branch: its block's immediate post-dominator */
        for (int b = 0; b < blocks; b++) {
            const struct ptx_ins *in = &k->code[last[b]];
            if (in->op != OP_BRA || in->guard == NO_OPERAND)
                continue;
            const word *mine = pdom + (size_t)b * words;
            /* the strict post-dominators lie on one chain to the end; the nearest has the most of its own */
            int ipdom = end, most = -1;
            for (int d = 0; d < nodes; d++) {
                if (d == b || !has(mine, d))
                    continue;
                int size = 0;
                for (int w = 0; w < words; w++)
                    size += __builtin_popcountll(pdom[(size_t)d * words + w]);
                if (size > most) {
                    most = size;
                    ipdom = d;
                }
            }
            k->reconverge[last[b]] = ipdom == end ? n : first[ipdom];
        }
    }
    free(meet);
    free(pdom);
    free(last);
    free(first);
    free(leader);
    free(block_of);
    return ok;
}
