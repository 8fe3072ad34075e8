/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-impl.h — the simulator's insides: a module as decoded
 * instructions, and what a launch keeps while it runs.
 *
 * Every operand becomes an index. A register of the kernel is a *slot*:
 * 32 values of 64 bits, one per lane, in the warp's register file; a
 * special register (%tid.x, %ctaid.y, ...) is a slot too, filled when the
 * warp starts. An immediate, or the address of a shared variable, is a
 * *constant*: the same 32 values, made once when the module is decoded, and
 * addressed as a negative index (~i). So every instruction reads its
 * sources the same way, whatever they are, and its loop over the lanes is
 * one line of C.
 */
#ifndef EMBER_PTXSIM_IMPL_H
#define EMBER_PTXSIM_IMPL_H

#include "ptxsim.h"

#define PTXSIM_LANES 32
#define PTXSIM_NAME  96

/* The types an instruction names. */
enum ptx_type {
    T_NONE,
    T_PRED,
    /* clang-format off */
    T_B8, T_B16, T_B32, T_B64,
    T_U8, T_U16, T_U32, T_U64,
    T_S8, T_S16, T_S32, T_S64,
    T_F16, T_F32, T_F64,
    /* clang-format on */
};

/* The instructions it knows. */
enum ptx_op {
    /* clang-format off */
    OP_MOV, OP_ADD, OP_SUB, OP_MUL, OP_MAD, OP_FMA, OP_DIV, OP_REM, OP_MIN, OP_MAX, OP_NEG, OP_ABS,
    OP_AND, OP_OR, OP_XOR, OP_NOT, OP_SHL, OP_SHR, OP_BFE, OP_BFI,
    OP_SETP, OP_SELP, OP_CVT, OP_CVTA,
    OP_RCP, OP_SQRT, OP_RSQRT, OP_EX2, OP_LG2,
    OP_LD, OP_ST,
    OP_BRA, OP_BAR, OP_RET, OP_EXIT,
    /* clang-format on */
};

/* setp's comparisons: ordered, then unordered (true when either is NaN). */
enum ptx_cmp {
    /* clang-format off */
    CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE,
    CMP_LO, CMP_LS, CMP_HI, CMP_HS, /* unsigned */
    CMP_EQU, CMP_NEU, CMP_LTU, CMP_LEU, CMP_GTU, CMP_GEU,
    CMP_NUM, CMP_NAN,
    /* clang-format on */
};

/* rounding: to nearest even, toward zero, down, up; to an integer (cvt's .rni ...) */
enum ptx_round { RND_NONE, RND_RN, RND_RZ, RND_RM, RND_RP, RND_RNI, RND_RZI, RND_RMI, RND_RPI };

/* clang-format off */
enum ptx_space { SPACE_NONE, SPACE_GLOBAL, SPACE_SHARED, SPACE_PARAM, SPACE_CONST, SPACE_LOCAL, SPACE_GENERIC };
/* clang-format on */

/* modifiers that change what an instruction computes */
enum {
    MOD_FTZ = 1,    /* subnormal inputs and results flushed to zero */
    MOD_SAT = 2,    /* results clamped to [0, 1] (floats) */
    MOD_APPROX = 4, /* approximate (ex2, rcp, sqrt, div) */
    MOD_WIDE = 8,   /* mul/mad: the whole product, twice as wide */
    MOD_HI = 16,    /* mul/mad: the product's upper half */
    MOD_UNI = 32,   /* bra.uni: the compiler promises no divergence */
    MOD_TO = 64,    /* cvta.to: generic to the space */
    MOD_PAIR = 128, /* setp: a second destination, the negation (p|q) */
};

/* operands: a slot (>= 0), a constant (~index), or none */
#define NO_OPERAND INT32_MIN

struct ptx_ins {
    uint8_t op, type, type2; /* type2: cvt's source type, setp's operands' */
    uint8_t cmp, rnd, space;
    uint8_t klass; /* enum ptxsim_class */
    uint16_t mods;
    bool guard_negated;
    int32_t guard; /* the predicate slot of @%p, or NO_OPERAND */
    int32_t dst[2];
    int32_t src[4]; /* bfi alone takes four */
    int nsrc;
    /* a memory operand [base + offset]: base a slot or NO_OPERAND, offset
     * in bytes (for param, const and shared variables, their address) */
    int32_t base;
    int64_t offset;
    int target; /* bra: the instruction it goes to */
    int line;   /* in the PTX text */
};

/* A kernel's register, for messages. */
struct ptx_reg {
    char name[32]; /* "%rd12" */
    uint8_t type;
};

struct ptx_param {
    char name[PTXSIM_NAME];
    size_t offset, size;
};

struct ptx_shared {
    char name[PTXSIM_NAME];
    size_t offset, size;
};

/* the special registers a warp fills in */
enum ptx_special {
    /* clang-format off */
    SPECIAL_TID_X, SPECIAL_TID_Y, SPECIAL_TID_Z,
    SPECIAL_NTID_X, SPECIAL_NTID_Y, SPECIAL_NTID_Z,
    SPECIAL_CTAID_X, SPECIAL_CTAID_Y, SPECIAL_CTAID_Z,
    SPECIAL_NCTAID_X, SPECIAL_NCTAID_Y, SPECIAL_NCTAID_Z,
    SPECIAL_LANEID, SPECIAL_WARPID,
    /* clang-format on */
    SPECIAL_COUNT,
};

struct ptxsim_kernel {
    char name[PTXSIM_NAME];
    const struct ptxsim_module *module;
    struct ptx_param *params;
    int param_count;
    size_t param_bytes;
    struct ptx_shared *shared;
    int shared_count;
    size_t shared_bytes;
    /* slots: the declared registers, then the special registers used */
    struct ptx_reg *regs;
    int slot_count;
    int special_slot[SPECIAL_COUNT]; /* -1: not used */
    int registers32;                 /* ptxsim_kernel_registers */
    /* for each conditional branch, the instruction where its warp
     * reconverges (its immediate post-dominator; count: the end); -1 for
     * every other instruction (ptxsim-cfg.c) */
    int *reconverge;
    /* constants: 32 copies of each value */
    uint64_t *constants;
    int constant_count;
    struct ptx_ins *code;
    int count;
    char **text; /* each instruction as written */
};

struct ptx_variable {
    char name[PTXSIM_NAME];
    uint8_t space;
    unsigned char *bytes;
    size_t size;
};

struct ptxsim_module {
    int version, target;
    struct ptx_variable *variables;
    int variable_count;
    struct ptxsim_kernel *kernels;
    int kernel_count;
};

/* --------------------------------------------------------- the decoder */

/* What the parser hands the decoder for one instruction: the opcode with
 * its modifiers, the guard, the operands as text. */
#define PTX_MAX_OPERANDS 6
struct ptx_statement {
    const char *opcode;
    const char *guard; /* "%p1", or NULL */
    bool guard_negated;
    const char *operands[PTX_MAX_OPERANDS];
    int operand_count;
    int line;
};

/* The kernel being built (ptxsim-build.c): names to slots, constants,
 * labels. The parser fills it as it reads declarations; the decoder looks
 * names up in it. */
/* A `.reg` declaration: `%r<52>` declares %r0 to %r51, `%x` one register. */
struct reg_range {
    char prefix[24];
    int count; /* -1: the one register named `prefix` */
    int first_slot;
};

struct label {
    char name[PTXSIM_NAME];
    int at; /* instruction index; -1 until the label is seen */
};

struct ptx_builder {
    struct ptxsim_module *m;
    struct ptxsim_kernel *k;
    struct reg_range *ranges;
    int range_count, range_cap;
    int reg_cap, code_cap, constant_cap, param_cap, shared_cap;
    struct label *labels;
    int label_count, label_cap;
    bool out_of_memory;
};

/* Decodes one statement into `out`; false with the reason in `why`. */
bool ptx_decode(struct ptx_builder *b, const struct ptx_statement *s, struct ptx_ins *out, char *why,
                size_t why_len);

/* grows *array (of `size`-byte items, *cap of them) to hold one more than `count` */
bool ptx_grow(void *array, int count, int *cap, size_t size);
/* a new register slot named `name`; -1 (and out_of_memory) when memory runs out */
int ptx_builder_add_slot(struct ptx_builder *b, const char *name, enum ptx_type type);
/* Lookups the decoder makes as it reads operands (ptxsim-build.c). */
int ptx_builder_register(struct ptx_builder *b, const char *name);      /* slot, or -1 */
int ptx_builder_special(struct ptx_builder *b, enum ptx_special which); /* slot */
int32_t ptx_builder_constant(struct ptx_builder *b, uint64_t value);    /* ~index; NO_OPERAND: no memory */
const struct ptxsim_kernel *ptx_builder_kernel(const struct ptx_builder *b);
bool ptx_builder_symbol(struct ptx_builder *b, const char *name, uint8_t *space, int64_t *address);
int ptx_builder_label(struct ptx_builder *b, const char *name); /* a label's number */

/* Sets k->registers32 from the kernel's liveness (ptxsim-registers.c). */
void ptx_count_registers(struct ptxsim_kernel *k);
/* Sets k->reconverge from the kernel's control flow (ptxsim-cfg.c); false
 * when out of memory. */
bool ptx_find_reconvergence(struct ptxsim_kernel *k);

/* ------------------------------------------------------------- the run */

/* One entry of a warp's SIMT stack: lanes at one instruction, and where
 * they rejoin the lanes of the entry below (ptxsim-run.c). */
struct lane_group {
    int pc;
    int rpc; /* the reconvergence point: the entry is popped there; -1 for the bottom one */
    uint32_t lanes;
    bool waiting; /* at a barrier */
};

/* the deepest a warp's stack may grow: one entry a level of nested
 * divergence and one more (ember's kernels need a handful) */
#define PTXSIM_STACK 64

struct warp {
    int index;     /* in its block */
    uint32_t live; /* lanes that are threads of the block */
    uint32_t exited;
    struct lane_group stack[PTXSIM_STACK];
    int depth;
    uint64_t *regs;    /* slot_count x 32 */
    uint32_t *written; /* per slot, the lanes that wrote it */
};

/* A shared word's history since the last barrier, for the race checker. */
struct shared_shadow {
    uint32_t epoch_written, epoch_read; /* barrier intervals, counted from 1 */
    int32_t writer, reader;             /* thread ids */
    bool readers;                       /* more than one thread read it */
};

/* What a launch keeps while it runs. */
struct run {
    const struct ptxsim_launch *launch;
    const struct ptxsim_kernel *k;
    struct ptxsim_result *result;
    unsigned block_id[3];
    unsigned threads; /* per block */
    int warp_count;
    struct warp *warps;
    unsigned char *shared;
    struct shared_shadow *shadow; /* one per 4-byte word of shared memory */
    uint32_t epoch;               /* the barrier interval: every block start and barrier makes a new one */
    uint32_t block_epoch;         /* the block's first */
    char unwritten_read[1024];    /* a shared read of a word never written, reported at the next barrier */
    uint64_t rng;
    /* allocations found, for the memory checks */
    struct {
        uint64_t base, bytes;
    } known[16];
    int known_count, known_next;
    double started;
    uint64_t issued_since_clock;
};

/* Runs one instruction for the lanes `mask` of warp `w` (ptxsim-exec.c);
 * false when a check failed, with r->result filled. Branches, barriers and
 * returns are the scheduler's (ptxsim-run.c). */
bool ptx_execute(struct run *r, struct warp *w, const struct ptx_ins *in, uint32_t mask);

/* The checks (ptxsim-check.c); each returns false after filling r->result. */
bool ptx_check_global(struct run *r, const struct warp *w, const struct ptx_ins *in, int lane,
                      uint64_t address, unsigned bytes);
bool ptx_check_shared(struct run *r, const struct warp *w, const struct ptx_ins *in, int lane,
                      uint64_t address, unsigned bytes, bool store);
bool ptx_check_defined(struct run *r, const struct warp *w, const struct ptx_ins *in, uint32_t mask);
/* Fills r->result: "kernel K, block (x,y,z), thread t, line L (`text`): what". */
bool ptx_fail(struct run *r, enum ptxsim_outcome outcome, const struct warp *w, int lane,
              const struct ptx_ins *in, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* The bits of a float or a double and back: a union, as C lets a value be
 * read as another type of the same size. */
union ptx_word32 {
    uint32_t u;
    float f;
};
union ptx_word64 {
    uint64_t u;
    double d;
};
static inline float ptx_f32(uint64_t bits) { return (union ptx_word32){.u = (uint32_t)bits}.f; }
static inline uint64_t ptx_bits32(float f) { return (union ptx_word32){.f = f}.u; }
static inline double ptx_f64(uint64_t bits) { return (union ptx_word64){.u = bits}.d; }
static inline uint64_t ptx_bits64(double d) { return (union ptx_word64){.d = d}.u; }

/* ".u32" or "u32" to its type; T_NONE for anything else */
enum ptx_type ptx_type_from_name(const char *name);
/* bytes of a type (a predicate: 1) */
static inline unsigned ptx_type_bytes(enum ptx_type t)
{
    static const unsigned char bytes[] = {
        [T_PRED] = 1, [T_B8] = 1,  [T_B16] = 2, [T_B32] = 4, [T_B64] = 8, [T_U8] = 1,
        [T_U16] = 2,  [T_U32] = 4, [T_U64] = 8, [T_S8] = 1,  [T_S16] = 2, [T_S32] = 4,
        [T_S64] = 8,  [T_F16] = 2, [T_F32] = 4, [T_F64] = 8};
    return (unsigned)t < sizeof bytes ? bytes[t] : 0;
}

/* set bits: the host may lack a popcount instruction, and this is on the hot path */
static inline int ptx_popcount(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    return (int)((((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}
/* floating-point operations an instruction does a thread: an fma two */
static inline int ptx_flops(const struct ptx_ins *in)
{
    if (in->klass != PTXSIM_CLASS_FLOAT)
        return 0;
    return in->op == OP_FMA || in->op == OP_MAD ? 2 : 1;
}
bool ptx_type_float(enum ptx_type t);
bool ptx_type_signed(enum ptx_type t);
const char *ptx_type_name(enum ptx_type t);

#endif /* EMBER_PTXSIM_IMPL_H */
