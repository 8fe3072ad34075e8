/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-decode.c — one PTX instruction from text to a decoded
 * struct ptx_ins: the opcode's mnemonic and modifiers ("setp.lt.s32" is
 * setp, compare less-than, of signed 32-bit values), and each operand as a
 * slot, a constant or a memory reference.
 *
 * Every modifier is read, and one this file does not know, or one that
 * means nothing on that instruction, refuses the instruction: the
 * simulator never guesses at semantics it was not written for. The
 * instructions it knows are those NVRTC (11.8 to 13) and clang (14) emit
 * for ember's kernels, and their near relatives.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

/* ------------------------------------------------------------- opcodes */

/* What an instruction's operands are: destinations, then sources. */
enum shape {
    SHAPE_D_A,       /* d, a */
    SHAPE_D_A_B,     /* d, a, b */
    SHAPE_D_A_B_C,   /* d, a, b, c */
    SHAPE_D_A_B_C_D, /* d, a, b, c, d2 (bfi) */
    SHAPE_SETP,      /* p[|q], a, b */
    SHAPE_LD,        /* d, [address] */
    SHAPE_ST,        /* [address], a */
    SHAPE_BRA,       /* label */
    SHAPE_BAR,       /* barrier number */
    SHAPE_NONE,
};

/* the modifiers an instruction may carry, beyond its types */
enum {
    /* clang-format off */
    ALLOW_ROUND = 1, ALLOW_FTZ = 2, ALLOW_SAT = 4, ALLOW_APPROX = 8, ALLOW_WIDTH = 16, ALLOW_CMP = 32,
    ALLOW_SPACE = 64, ALLOW_UNI = 128, ALLOW_SYNC = 256, ALLOW_TO = 512, ALLOW_CACHE = 1024,
    /* clang-format on */
};

static const struct mnemonic {
    const char *name;
    enum ptx_op op;
    enum shape shape;
    int types; /* how many type modifiers: 0, 1 or 2 (cvt) */
    unsigned allow;
} mnemonics[] = {
    {"mov", OP_MOV, SHAPE_D_A, 1, 0},
    {"add", OP_ADD, SHAPE_D_A_B, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_SAT},
    {"sub", OP_SUB, SHAPE_D_A_B, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_SAT},
    {"mul", OP_MUL, SHAPE_D_A_B, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_SAT | ALLOW_WIDTH},
    {"mad", OP_MAD, SHAPE_D_A_B_C, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_SAT | ALLOW_WIDTH},
    {"fma", OP_FMA, SHAPE_D_A_B_C, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_SAT},
    {"div", OP_DIV, SHAPE_D_A_B, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_APPROX},
    {"rem", OP_REM, SHAPE_D_A_B, 1, 0},
    {"min", OP_MIN, SHAPE_D_A_B, 1, ALLOW_FTZ},
    {"max", OP_MAX, SHAPE_D_A_B, 1, ALLOW_FTZ},
    {"neg", OP_NEG, SHAPE_D_A, 1, ALLOW_FTZ},
    {"abs", OP_ABS, SHAPE_D_A, 1, ALLOW_FTZ},
    {"and", OP_AND, SHAPE_D_A_B, 1, 0},
    {"or", OP_OR, SHAPE_D_A_B, 1, 0},
    {"xor", OP_XOR, SHAPE_D_A_B, 1, 0},
    {"not", OP_NOT, SHAPE_D_A, 1, 0},
    {"shl", OP_SHL, SHAPE_D_A_B, 1, 0},
    {"shr", OP_SHR, SHAPE_D_A_B, 1, 0},
    {"bfe", OP_BFE, SHAPE_D_A_B_C, 1, 0},
    {"bfi", OP_BFI, SHAPE_D_A_B_C_D, 1, 0},
    {"setp", OP_SETP, SHAPE_SETP, 1, ALLOW_CMP | ALLOW_FTZ},
    {"selp", OP_SELP, SHAPE_D_A_B_C, 1, 0},
    {"cvt", OP_CVT, SHAPE_D_A, 2, ALLOW_ROUND | ALLOW_FTZ | ALLOW_SAT},
    {"cvta", OP_CVTA, SHAPE_D_A, 1, ALLOW_SPACE | ALLOW_TO},
    {"rcp", OP_RCP, SHAPE_D_A, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_APPROX},
    {"sqrt", OP_SQRT, SHAPE_D_A, 1, ALLOW_ROUND | ALLOW_FTZ | ALLOW_APPROX},
    {"rsqrt", OP_RSQRT, SHAPE_D_A, 1, ALLOW_FTZ | ALLOW_APPROX},
    {"ex2", OP_EX2, SHAPE_D_A, 1, ALLOW_FTZ | ALLOW_APPROX},
    {"lg2", OP_LG2, SHAPE_D_A, 1, ALLOW_FTZ | ALLOW_APPROX},
    {"ld", OP_LD, SHAPE_LD, 1, ALLOW_SPACE | ALLOW_CACHE},
    {"st", OP_ST, SHAPE_ST, 1, ALLOW_SPACE | ALLOW_CACHE},
    {"bra", OP_BRA, SHAPE_BRA, 0, ALLOW_UNI},
    {"bar", OP_BAR, SHAPE_BAR, 0, ALLOW_SYNC},
    {"barrier", OP_BAR, SHAPE_BAR, 0, ALLOW_SYNC},
    {"ret", OP_RET, SHAPE_NONE, 0, 0},
    {"exit", OP_EXIT, SHAPE_NONE, 0, 0},
};

static const char *const compare_names[] = {
    "eq", "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls",  "hi",
    "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan",
};

static const struct {
    const char *name;
    enum ptx_round rnd;
} roundings[] = {{"rn", RND_RN},   {"rz", RND_RZ},   {"rm", RND_RM},   {"rp", RND_RP},
                 {"rni", RND_RNI}, {"rzi", RND_RZI}, {"rmi", RND_RMI}, {"rpi", RND_RPI}};

static const struct {
    const char *name;
    enum ptx_space space;
} spaces[] = {{"global", SPACE_GLOBAL}, {"shared", SPACE_SHARED}, {"shared::cta", SPACE_SHARED},
              {"param", SPACE_PARAM},   {"const", SPACE_CONST},   {"local", SPACE_LOCAL}};

/* cache hints and orderings that change nothing a single launch can see */
static const char *const harmless[] = {"ca", "cg", "cs",       "lu",      "cv",   "wb",
                                       "wt", "nc", "volatile", "relaxed", "weak", "cta"};

static bool in_list(const char *word, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(word, list[i]) == 0)
            return true;
    return false;
}

/* Reads "setp.lt.s32" into the instruction's op, types and modifiers. */
static const struct mnemonic *decode_opcode(const char *opcode, struct ptx_ins *in, char *why, size_t why_len)
{
    char text[64];
    snprintf(text, sizeof text, "%s", opcode);
    char *save = NULL, *word = strtok_r(text, ".", &save);
    const struct mnemonic *mn = NULL;
    for (size_t i = 0; word && i < sizeof mnemonics / sizeof mnemonics[0]; i++)
        if (strcmp(mnemonics[i].name, word) == 0)
            mn = &mnemonics[i];
    if (!mn) {
        snprintf(why, why_len, "the instruction %s is not one this simulator knows", word ? word : opcode);
        return NULL;
    }
    in->op = (uint8_t)mn->op;
    int types = 0;
    bool has_cmp = false;
    while ((word = strtok_r(NULL, ".", &save))) {
        enum ptx_type t = ptx_type_from_name(word);
        unsigned needed = 0;
        if (t != T_NONE) {
            if (types == 0)
                in->type = (uint8_t)t;
            else
                in->type2 = (uint8_t)t;
            if (++types > mn->types)
                break;
            continue;
        }
        bool known = true;
        size_t i;
        for (i = 0; i < sizeof compare_names / sizeof compare_names[0] && strcmp(compare_names[i], word); i++)
            ;
        if (i < sizeof compare_names / sizeof compare_names[0] && mn->op == OP_SETP) {
            in->cmp = (uint8_t)i;
            has_cmp = true;
            needed = ALLOW_CMP;
        } else if (strcmp(word, "ftz") == 0) {
            in->mods |= MOD_FTZ, needed = ALLOW_FTZ;
        } else if (strcmp(word, "sat") == 0) {
            in->mods |= MOD_SAT, needed = ALLOW_SAT;
        } else if (strcmp(word, "approx") == 0 || strcmp(word, "full") == 0) {
            in->mods |= MOD_APPROX, needed = ALLOW_APPROX;
        } else if (strcmp(word, "wide") == 0 || strcmp(word, "lo") == 0 || strcmp(word, "hi") == 0) {
            in->mods |= word[0] == 'w' ? MOD_WIDE : word[0] == 'h' ? MOD_HI : 0;
            needed = ALLOW_WIDTH;
        } else if (strcmp(word, "uni") == 0) {
            in->mods |= MOD_UNI, needed = ALLOW_UNI;
        } else if (strcmp(word, "to") == 0) {
            in->mods |= MOD_TO, needed = ALLOW_TO;
        } else if (strcmp(word, "sync") == 0 || strcmp(word, "aligned") == 0) {
            needed = ALLOW_SYNC;
        } else if (in_list(word, harmless, sizeof harmless / sizeof harmless[0])) {
            needed = ALLOW_CACHE;
        } else {
            known = false;
            for (i = 0; i < sizeof roundings / sizeof roundings[0]; i++)
                if (strcmp(roundings[i].name, word) == 0)
                    in->rnd = (uint8_t)roundings[i].rnd, needed = ALLOW_ROUND, known = true;
            for (i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
                if (strcmp(spaces[i].name, word) == 0)
                    in->space = (uint8_t)spaces[i].space, needed = ALLOW_SPACE, known = true;
        }
        if (!known) {
            snprintf(why, why_len, "the modifier .%s is not one this simulator knows", word);
            return NULL;
        }
        if (!(mn->allow & needed)) {
            snprintf(why, why_len, "the modifier .%s on %s is not one this simulator runs", word, mn->name);
            return NULL;
        }
    }
    if (types != mn->types) {
        snprintf(why, why_len, "%s takes %d type%s here, not %d", mn->name, mn->types,
                 mn->types == 1 ? "" : "s", types);
        return NULL;
    }
    if (mn->op == OP_SETP && !has_cmp) {
        snprintf(why, why_len, "setp without a comparison");
        return NULL;
    }
    if ((mn->op == OP_LD || mn->op == OP_ST) && in->space == SPACE_NONE)
        in->space = SPACE_GENERIC;
    return mn;
}

/* ------------------------------------------------------------ operands */

static const struct {
    const char *name;
    enum ptx_special which;
} specials[] = {
    {"%tid.x", SPECIAL_TID_X},       {"%tid.y", SPECIAL_TID_Y},       {"%tid.z", SPECIAL_TID_Z},
    {"%ntid.x", SPECIAL_NTID_X},     {"%ntid.y", SPECIAL_NTID_Y},     {"%ntid.z", SPECIAL_NTID_Z},
    {"%ctaid.x", SPECIAL_CTAID_X},   {"%ctaid.y", SPECIAL_CTAID_Y},   {"%ctaid.z", SPECIAL_CTAID_Z},
    {"%nctaid.x", SPECIAL_NCTAID_X}, {"%nctaid.y", SPECIAL_NCTAID_Y}, {"%nctaid.z", SPECIAL_NCTAID_Z},
    {"%laneid", SPECIAL_LANEID},     {"%warpid", SPECIAL_WARPID},
};

/* A register or special register; -1 (with why) for anything else. */
static int register_operand(struct ptx_builder *b, const char *text, char *why, size_t why_len)
{
    if (text[0] != '%') {
        snprintf(why, why_len, "\"%s\" is not a register", text);
        return -1;
    }
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        if (strcmp(specials[i].name, text) == 0)
            return ptx_builder_special(b, specials[i].which);
    int slot = ptx_builder_register(b, text);
    if (slot < 0)
        snprintf(why, why_len,
                 "the register %s is not declared (or is a special register this simulator does "
                 "not know)",
                 text);
    return slot;
}

/* A literal as `type` reads it: 0f3F800000 (a float's bits), 0d... (a
 * double's), a decimal or hexadecimal integer, a decimal with a point. */
static bool literal(const char *text, enum ptx_type type, uint64_t *value)
{
    char *end;
    errno = 0;
    if ((text[0] == '0' && (text[1] == 'f' || text[1] == 'F')) ||
        (text[0] == '0' && (text[1] == 'd' || text[1] == 'D'))) {
        uint64_t bits = strtoull(text + 2, &end, 16);
        if (*end || end == text + 2)
            return false;
        bool single = text[1] == 'f' || text[1] == 'F';
        /* a float literal where a double is wanted, or the reverse, converts */
        if (type == T_F64 && single)
            bits = ptx_bits64(ptx_f32(bits));
        else if (type == T_F32 && !single)
            bits = ptx_bits32((float)ptx_f64(bits));
        *value = bits;
        return true;
    }
    bool point = strchr(text, '.') || ((strchr(text, 'e') || strchr(text, 'E')) && !strstr(text, "0x"));
    if (ptx_type_float((enum ptx_type)type) || point) {
        double d = strtod(text, &end);
        if (*end || end == text)
            return false;
        *value = type == T_F64 ? ptx_bits64(d) : ptx_bits32((float)d);
        return true;
    }
    bool negative = text[0] == '-';
    uint64_t magnitude = strtoull(text + negative, &end, 0);
    if (*end || end == text + negative || errno)
        return false;
    *value = negative ? (uint64_t)0 - magnitude : magnitude;
    return true;
}

/* A source operand: a register, a literal, or the address of a shared
 * variable (`mov.u64 %rd1, part`). */
static int32_t source(struct ptx_builder *b, const char *text, enum ptx_type type, char *why, size_t why_len)
{
    if (text[0] == '%') {
        int slot = register_operand(b, text, why, why_len);
        return slot >= 0 ? slot : NO_OPERAND;
    }
    uint64_t value;
    if (literal(text, type, &value))
        return ptx_builder_constant(b, value);
    uint8_t space;
    int64_t address;
    if (ptx_builder_symbol(b, text, &space, &address) && space == SPACE_SHARED)
        return ptx_builder_constant(b, (uint64_t)address);
    snprintf(why, why_len, "\"%s\" is neither a register, a literal nor a shared variable's address", text);
    return NO_OPERAND;
}

/* `[%rd1]`, `[%rd1+4]`, `[%rd1+-4]`, `[name]`, `[name+8]` */
static bool memory_operand(struct ptx_builder *b, const char *text, struct ptx_ins *in, char *why,
                           size_t why_len)
{
    size_t n = strlen(text);
    if (n < 3 || text[0] != '[' || text[n - 1] != ']') {
        snprintf(why, why_len, "\"%s\" is not an address in brackets", text);
        return false;
    }
    char inner[PTXSIM_NAME * 2];
    snprintf(inner, sizeof inner, "%.*s", (int)(n - 2), text + 1);
    int64_t offset = 0;
    char *plus = strpbrk(inner + 1, "+-");
    if (plus) {
        char sign = *plus;
        *plus = '\0';
        char *end;
        const char *digits = plus + 1;
        while (*digits == ' ')
            digits++;
        long long v = strtoll(digits, &end, 0);
        while (*end == ' ')
            end++;
        if (*end) {
            snprintf(why, why_len, "\"%s\": an offset this simulator does not read", text);
            return false;
        }
        offset = sign == '-' ? -v : v;
    }
    for (char *e = inner + strlen(inner); e > inner && e[-1] == ' ';)
        *--e = '\0';
    in->base = NO_OPERAND;
    if (inner[0] == '%') {
        in->base = register_operand(b, inner, why, why_len);
        in->offset = offset;
        return in->base >= 0;
    }
    uint8_t space;
    int64_t address;
    if (ptx_builder_symbol(b, inner, &space, &address)) {
        if (in->space == SPACE_GENERIC || space != in->space) {
            snprintf(why, why_len, "%s is a %s variable, but the access is not to that space", inner,
                     space == SPACE_PARAM    ? "parameter"
                     : space == SPACE_SHARED ? "shared"
                                             : "module");
            return false;
        }
        if (space == SPACE_CONST || space == SPACE_GLOBAL) {
            in->target = (int)address; /* the variable's index; its bytes are read at run time */
            in->offset = offset;
        } else {
            in->offset = address + offset;
        }
        return true;
    }
    snprintf(why, why_len, "\"%s\": no register, parameter or variable of that name", inner);
    return false;
}

/* ------------------------------------------------------------- classes */

static enum ptxsim_class class_of(const struct ptx_ins *in)
{
    bool fp = ptx_type_float((enum ptx_type)in->type);
    switch ((enum ptx_op)in->op) {
    case OP_MOV:
    case OP_CVT:
    case OP_CVTA: return PTXSIM_CLASS_MOVE;
    case OP_SETP:
    case OP_SELP: return PTXSIM_CLASS_COMPARE;
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_NOT: return in->type == T_PRED ? PTXSIM_CLASS_COMPARE : PTXSIM_CLASS_INT;
    case OP_DIV: return fp ? PTXSIM_CLASS_SPECIAL : PTXSIM_CLASS_INT;
    case OP_RCP:
    case OP_SQRT:
    case OP_RSQRT:
    case OP_EX2:
    case OP_LG2: return PTXSIM_CLASS_SPECIAL;
    case OP_LD:
    case OP_ST:
        if (in->space == SPACE_SHARED)
            return PTXSIM_CLASS_SHARED;
        if (in->space == SPACE_PARAM || in->space == SPACE_CONST)
            return PTXSIM_CLASS_PARAM;
        return in->op == OP_LD ? PTXSIM_CLASS_LOAD_GLOBAL : PTXSIM_CLASS_STORE_GLOBAL;
    case OP_BRA:
    case OP_RET:
    case OP_EXIT: return PTXSIM_CLASS_BRANCH;
    case OP_BAR: return PTXSIM_CLASS_BARRIER;
    default: return fp ? PTXSIM_CLASS_FLOAT : PTXSIM_CLASS_INT;
    }
}

/* What each op may compute on: its types, checked once here so that the
 * executor can trust them. */
static bool types_fit(const struct ptx_ins *in, char *why, size_t why_len)
{
    enum ptx_type t = (enum ptx_type)in->type;
    unsigned bytes = ptx_type_bytes(t);
    bool fp = ptx_type_float(t), ok = true;
    switch ((enum ptx_op)in->op) {
    /* floating point is .f32 alone: ember's kernels use no doubles (backends/kernels/README.md) */
    /* clang-format off */
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_MAD: case OP_MIN: case OP_MAX: case OP_NEG: case OP_ABS:
        /* clang-format on */
        ok = t != T_PRED && t != T_F16 && t != T_F64 && !(t >= T_B8 && t <= T_B64) && bytes >= 2;
        break;
    /* clang-format off */
    case OP_FMA: case OP_RCP: case OP_SQRT: case OP_RSQRT: case OP_EX2: case OP_LG2: ok = t == T_F32; break;
    case OP_DIV: case OP_REM:
        /* clang-format on */
        ok = (in->op == OP_DIV && t == T_F32) ||
             (!fp && t != T_PRED && bytes >= 2 && !(t >= T_B8 && t <= T_B64));
        break;
    case OP_AND:
    case OP_OR:
    case OP_XOR:
    case OP_NOT: ok = t == T_PRED || (t >= T_B16 && t <= T_B64); break;
    case OP_SHL: ok = t >= T_B16 && t <= T_B64; break;
    case OP_SHR: ok = !fp && t != T_PRED && bytes >= 2; break;
    case OP_BFE: ok = t == T_U32 || t == T_S32 || t == T_U64 || t == T_S64; break;
    case OP_BFI: ok = t == T_B32 || t == T_B64; break;
    case OP_SETP: ok = t != T_PRED && t != T_F16 && t != T_F64 && bytes >= 2; break;
    case OP_SELP: ok = t != T_PRED && t != T_F16 && bytes >= 2; break;
    case OP_CVT:
        ok = t != T_PRED && in->type2 != T_PRED && t != T_F16 && in->type2 != T_F16 && t != T_F64 &&
             in->type2 != T_F64;
        break;
    case OP_CVTA: ok = t == T_U64 || t == T_U32; break;
    case OP_MOV: ok = t != T_F16; break;
    case OP_LD:
    case OP_ST: ok = t != T_PRED && t != T_F16; break;
    default: break;
    }
    /* floating-point modifiers on integers, and the reverse */
    if (ok && !fp && in->op != OP_CVT && in->op != OP_SETP &&
        (in->rnd || (in->mods & (MOD_FTZ | MOD_APPROX))))
        ok = false;
    if (ok && fp && (in->mods & (MOD_WIDE | MOD_HI)))
        ok = false;
    if (!ok)
        snprintf(why, why_len, "this simulator does not run it with these types and modifiers%s",
                 t == T_F64 || in->type2 == T_F64 ? " (doubles: ember's kernels use none)" : "");
    return ok;
}

/* --------------------------------------------------------------- decode */

bool ptx_decode(struct ptx_builder *b, const struct ptx_statement *s, struct ptx_ins *in, char *why,
                size_t why_len)
{
    memset(in, 0, sizeof *in);
    in->guard = in->base = NO_OPERAND;
    in->dst[0] = in->dst[1] = NO_OPERAND;
    in->src[0] = in->src[1] = in->src[2] = in->src[3] = NO_OPERAND;
    const struct mnemonic *mn = decode_opcode(s->opcode, in, why, why_len);
    if (!mn)
        return false;
    if (s->guard) {
        in->guard = register_operand(b, s->guard, why, why_len);
        in->guard_negated = s->guard_negated;
        if (in->guard < 0)
            return false;
    }
    if (!types_fit(in, why, why_len))
        return false;
    static const int counts[] = {
        [SHAPE_D_A] = 2, [SHAPE_D_A_B] = 3, [SHAPE_D_A_B_C] = 4, [SHAPE_D_A_B_C_D] = 5, [SHAPE_SETP] = 3,
        [SHAPE_LD] = 2,  [SHAPE_ST] = 2,    [SHAPE_BRA] = 1,     [SHAPE_BAR] = -1,      [SHAPE_NONE] = 0};
    int want = counts[mn->shape];
    if (want >= 0 && s->operand_count != want) {
        snprintf(why, why_len, "%s takes %d operand%s, not %d", mn->name, want, want == 1 ? "" : "s",
                 s->operand_count);
        return false;
    }
    enum ptx_type t = (enum ptx_type)in->type;
    /* the type each source is read as */
    enum ptx_type src_type = in->op == OP_CVT ? (enum ptx_type)in->type2 : t;
    switch (mn->shape) {
    case SHAPE_D_A:
    case SHAPE_D_A_B:
    case SHAPE_D_A_B_C:
    case SHAPE_D_A_B_C_D:
        if ((in->dst[0] = register_operand(b, s->operands[0], why, why_len)) < 0)
            return false;
        in->nsrc = s->operand_count - 1;
        for (int i = 0; i < in->nsrc; i++) {
            enum ptx_type st = src_type;
            if (((in->op == OP_SHL || in->op == OP_SHR) && i == 1) || (in->op == OP_BFE && i >= 1) ||
                (in->op == OP_BFI && i >= 2))
                st = T_U32;
            if (in->op == OP_SELP && i == 2)
                st = T_PRED;
            if ((in->op == OP_MAD) && i == 2 && (in->mods & MOD_WIDE))
                st = ptx_type_signed(t) ? T_S64 : T_U64;
            if ((in->src[i] = source(b, s->operands[i + 1], st, why, why_len)) == NO_OPERAND)
                return false;
        }
        break;
    case SHAPE_SETP: {
        char dest[64];
        snprintf(dest, sizeof dest, "%s", s->operands[0]);
        char *bar = strchr(dest, '|');
        if (bar) {
            *bar = '\0';
            in->mods |= MOD_PAIR;
            if ((in->dst[1] = register_operand(b, bar + 1, why, why_len)) < 0)
                return false;
        }
        if ((in->dst[0] = register_operand(b, dest, why, why_len)) < 0)
            return false;
        in->nsrc = 2;
        for (int i = 0; i < 2; i++)
            if ((in->src[i] = source(b, s->operands[i + 1], t, why, why_len)) == NO_OPERAND)
                return false;
        break;
    }
    case SHAPE_LD:
        if ((in->dst[0] = register_operand(b, s->operands[0], why, why_len)) < 0 ||
            !memory_operand(b, s->operands[1], in, why, why_len))
            return false;
        break;
    case SHAPE_ST:
        in->nsrc = 1;
        if (!memory_operand(b, s->operands[0], in, why, why_len) ||
            (in->src[0] = source(b, s->operands[1], t, why, why_len)) == NO_OPERAND)
            return false;
        break;
    case SHAPE_BRA:
        in->target = ptx_builder_label(b, s->operands[0]);
        if (in->target < 0)
            return false;
        break;
    case SHAPE_BAR: {
        uint64_t id = 1;
        if (s->operand_count != 1 || !literal(s->operands[0], T_U32, &id) || id != 0) {
            snprintf(why, why_len,
                     "this simulator runs bar.sync 0 (every thread of the block), not named or "
                     "counted barriers");
            return false;
        }
        break;
    }
    case SHAPE_NONE: break;
    }
    if (in->op == OP_LD || in->op == OP_ST) {
        if (in->space == SPACE_LOCAL || in->space == SPACE_GENERIC) {
            snprintf(why, why_len, "%s memory: this simulator runs global, shared, param and const accesses",
                     in->space == SPACE_LOCAL ? "local" : "generic");
            return false;
        }
        if (in->op == OP_ST && (in->space == SPACE_PARAM || in->space == SPACE_CONST)) {
            snprintf(why, why_len, "a store to read-only memory");
            return false;
        }
        if (in->space == SPACE_PARAM &&
            (in->offset < 0 || (size_t)in->offset + ptx_type_bytes(t) > ptx_builder_kernel(b)->param_bytes)) {
            snprintf(why, why_len, "it reads past the kernel's parameters");
            return false;
        }
        if ((in->space == SPACE_PARAM || in->space == SPACE_CONST) && in->base != NO_OPERAND) {
            snprintf(why, why_len, "a computed address into %s memory",
                     in->space == SPACE_PARAM ? "parameter" : "constant");
            return false;
        }
        if ((in->space == SPACE_GLOBAL) && in->base == NO_OPERAND) {
            snprintf(why, why_len,
                     "a global access by a variable's name (the kernels take their memory as "
                     "parameters)");
            return false;
        }
    }
    if (in->op == OP_CVTA && (in->space != SPACE_GLOBAL)) {
        snprintf(why, why_len,
                 "cvta of %s addresses: this simulator runs global ones (generic addresses of "
                 "shared memory are not simulated)",
                 in->space == SPACE_SHARED ? "shared" : "other");
        return false;
    }
    if (in->op == OP_CVT && in->type == in->type2 && !ptx_type_float(t) && in->rnd) {
        snprintf(why, why_len, "an integer rounding on an integer conversion");
        return false;
    }
    in->klass = (uint8_t)class_of(in);
    return true;
}
