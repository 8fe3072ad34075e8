/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-build.c — the kernel being built, shared by the parser
 * (ptxsim-parse.c, which declares what the PTX declares) and the decoder
 * (ptxsim-decode.c, which looks names up as it reads operands): PTX's
 * type names, and struct ptx_builder's registers, special registers,
 * constants, symbols and labels. Neither file calls back into the other
 * through here: the parser hands the decoder each instruction, and both
 * ask this file.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

/* ------------------------------------------------------------ the types */

static const struct {
    const char *name;
    enum ptx_type type;
    unsigned bytes;
} types[] = {
    {"pred", T_PRED, 1}, {"b8", T_B8, 1},   {"b16", T_B16, 2}, {"b32", T_B32, 4},
    {"b64", T_B64, 8},   {"u8", T_U8, 1},   {"u16", T_U16, 2}, {"u32", T_U32, 4},
    {"u64", T_U64, 8},   {"s8", T_S8, 1},   {"s16", T_S16, 2}, {"s32", T_S32, 4},
    {"s64", T_S64, 8},   {"f16", T_F16, 2}, {"f32", T_F32, 4}, {"f64", T_F64, 8},
};

enum ptx_type ptx_type_from_name(const char *name)
{
    if (*name == '.')
        name++;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, name) == 0)
            return types[i].type;
    return T_NONE;
}

const char *ptx_type_name(enum ptx_type t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].type == t)
            return types[i].name;
    return "?";
}

bool ptx_type_float(enum ptx_type t) { return t == T_F16 || t == T_F32 || t == T_F64; }

bool ptx_type_signed(enum ptx_type t) { return t == T_S8 || t == T_S16 || t == T_S32 || t == T_S64; }

/* ---------------------------------------------------------- the builder */

bool ptx_grow(void *array, int count, int *cap, size_t size)
{
    if (count < *cap)
        return true;
    int bigger = *cap ? *cap * 2 : 16;
    void *p = realloc(*(void **)array, (size_t)bigger * size);
    if (!p)
        return false;
    *(void **)array = p;
    *cap = bigger;
    return true;
}

int ptx_builder_add_slot(struct ptx_builder *b, const char *name, enum ptx_type type)
{
    struct ptxsim_kernel *k = b->k;
    if (!ptx_grow(&k->regs, k->slot_count, &b->reg_cap, sizeof *k->regs)) {
        b->out_of_memory = true;
        return -1;
    }
    struct ptx_reg *r = &k->regs[k->slot_count];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->type = (uint8_t)type;
    return k->slot_count++;
}

int ptx_builder_register(struct ptx_builder *b, const char *name)
{
    for (int i = 0; i < b->range_count; i++) {
        const struct reg_range *r = &b->ranges[i];
        size_t n = strlen(r->prefix);
        if (r->count < 0) {
            if (strcmp(name, r->prefix) == 0)
                return r->first_slot;
        } else if (strncmp(name, r->prefix, n) == 0 && isdigit((unsigned char)name[n])) {
            char *end;
            long index = strtol(name + n, &end, 10);
            if (!*end && index < r->count)
                return r->first_slot + (int)index;
        }
    }
    return -1;
}

static const char *const special_names[SPECIAL_COUNT] = {
    "%tid.x",   "%tid.y",   "%tid.z",    "%ntid.x",   "%ntid.y",   "%ntid.z", "%ctaid.x",
    "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid",
};

int ptx_builder_special(struct ptx_builder *b, enum ptx_special which)
{
    if (b->k->special_slot[which] < 0)
        b->k->special_slot[which] = ptx_builder_add_slot(b, special_names[which], T_U32);
    return b->k->special_slot[which];
}

int32_t ptx_builder_constant(struct ptx_builder *b, uint64_t value)
{
    struct ptxsim_kernel *k = b->k;
    for (int i = 0; i < k->constant_count; i++)
        if (k->constants[(size_t)i * PTXSIM_LANES] == value)
            return ~i;
    if (k->constant_count == b->constant_cap) {
        int bigger = b->constant_cap ? b->constant_cap * 2 : 32;
        uint64_t *p = realloc(k->constants, (size_t)bigger * PTXSIM_LANES * sizeof *p);
        if (!p) {
            b->out_of_memory = true;
            return NO_OPERAND;
        }
        k->constants = p;
        b->constant_cap = bigger;
    }
    for (int l = 0; l < PTXSIM_LANES; l++)
        k->constants[(size_t)k->constant_count * PTXSIM_LANES + l] = value;
    return ~k->constant_count++;
}

bool ptx_builder_symbol(struct ptx_builder *b, const char *name, uint8_t *space, int64_t *address)
{
    const struct ptxsim_kernel *k = b->k;
    for (int i = 0; i < k->param_count; i++)
        if (strcmp(k->params[i].name, name) == 0) {
            *space = SPACE_PARAM;
            *address = (int64_t)k->params[i].offset;
            return true;
        }
    for (int i = 0; i < k->shared_count; i++)
        if (strcmp(k->shared[i].name, name) == 0) {
            *space = SPACE_SHARED;
            *address = (int64_t)k->shared[i].offset;
            return true;
        }
    for (int i = 0; i < b->m->variable_count; i++)
        if (strcmp(b->m->variables[i].name, name) == 0) {
            *space = b->m->variables[i].space;
            *address = i; /* const and global variables: by index, offset added by the access */
            return true;
        }
    return false;
}

const struct ptxsim_kernel *ptx_builder_kernel(const struct ptx_builder *b) { return b->k; }

int ptx_builder_label(struct ptx_builder *b, const char *name)
{
    for (int i = 0; i < b->label_count; i++)
        if (strcmp(b->labels[i].name, name) == 0)
            return i;
    if (!ptx_grow(&b->labels, b->label_count, &b->label_cap, sizeof *b->labels)) {
        b->out_of_memory = true;
        return -1;
    }
    struct label *l = &b->labels[b->label_count];
    snprintf(l->name, sizeof l->name, "%s", name);
    l->at = -1;
    return b->label_count++;
}
