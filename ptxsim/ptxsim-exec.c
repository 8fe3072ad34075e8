/* SPDX-License-Identifier: MIT */
/*
 * ptxsim/ptxsim-exec.c — what each instruction does to the lanes of a warp
 * that execute it. One warp instruction is one loop over those lanes; each
 * lane reads its sources from the warp's register file (or the kernel's
 * constants) and writes its destination there.
 *
 * Registers hold 64 bits a lane. A 32-bit value sits in the low half with
 * the high half zero, a float as its bits, a predicate as 0 or 1, so every
 * instruction reads exactly the bits its type names.
 *
 * Arithmetic is IEEE, as PTX's is: `add.f32` rounds to nearest even,
 * subnormals are kept unless the instruction says `.ftz`, and `.rz`, `.rm`
 * and `.rp` round as they say (the host's rounding mode is switched around
 * the loop). Where PTX lets a result be "approximate" (ex2.approx,
 * rcp.approx) the host's correctly rounded function stands in: within the
 * GPU's documented error, not bit for bit. `mul.f32` and `add.f32` without
 * `.rn` may be fused into an fma by ptxas on a GPU; here they round
 * separately, which the parity tests' bounds allow.
 *
 * Where PTX leaves the result to the machine, the simulator gives what
 * NVIDIA's GPUs compute: an integer division by zero gives all ones for the
 * quotient (ptxas's division routine ends there) and the dividend for the
 * remainder; INT_MIN / -1 gives INT_MIN.
 */
#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ptxsim-impl.h"

/* for every lane l of `mask`, lowest first */
#define FOR_LANES(l, mask)                                                                                   \
    for (uint32_t rest_ = (mask), l = 0; rest_ && ((l = (uint32_t)__builtin_ctz(rest_)), 1);                 \
         rest_ &= rest_ - 1)
/* d[l] = expr for every lane of mask; a whole warp as a plain loop, which
 * the compiler vectorises */
#define LANEWISE(expr)                                                                                       \
    do {                                                                                                     \
        if (mask == ~0u) {                                                                                   \
            for (uint32_t l = 0; l < PTXSIM_LANES; l++)                                                      \
                d[l] = (expr);                                                                               \
        } else {                                                                                             \
            FOR_LANES(l, mask) d[l] = (expr);                                                                \
        }                                                                                                    \
    } while (0)

static const uint64_t *operand(const struct run *r, const struct warp *w, int32_t o)
{
    return o >= 0 ? w->regs + (size_t)o * PTXSIM_LANES : r->k->constants + (size_t)~o * PTXSIM_LANES;
}

/* the bits of an integer type of `bytes`, and the value sign-extended from them */
static inline uint64_t keep_bits(unsigned bytes)
{
    return bytes >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (bytes * 8)) - 1;
}

static inline int64_t sext(uint64_t v, unsigned bytes)
{
    unsigned shift = 64 - bytes * 8;
    return (int64_t)(v << shift) >> shift;
}

/* subnormals to a zero of the same sign, for .ftz */
static inline float ftz32(float x) { return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x; }

/* Rounding for one instruction: the host's mode, switched when the
 * instruction asks for other than to-nearest. */
static int round_begin(enum ptx_round rnd)
{
    int mode = rnd == RND_RZ ? FE_TOWARDZERO : rnd == RND_RM ? FE_DOWNWARD : rnd == RND_RP ? FE_UPWARD : -1;
    if (mode >= 0)
        fesetround(mode);
    return mode;
}

static void round_end(int mode)
{
    if (mode >= 0)
        fesetround(FE_TONEAREST);
}

/* ---------------------------------------------------------- integers */

/* The integer ops on `bytes`-wide values: results truncated to the width. */
static void integer_op(const struct ptx_ins *in, uint64_t *d, const uint64_t *a, const uint64_t *b,
                       const uint64_t *c, uint32_t mask)
{
    enum ptx_type t = (enum ptx_type)in->type;
    unsigned bytes = ptx_type_bytes(t), bits = bytes * 8;
    uint64_t keep = keep_bits(bytes);
    bool sign = ptx_type_signed(t);
    switch ((enum ptx_op)in->op) {
    case OP_MOV: LANEWISE(a[l] & keep); break;
    case OP_ADD:
        if ((in->mods & MOD_SAT) && t == T_S32) { /* add.sat.s32: clamped to the int range */
            FOR_LANES(l, mask)
            {
                int64_t v = (int64_t)(int32_t)a[l] + (int32_t)b[l];
                d[l] = (uint32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
            }
        } else {
            LANEWISE((a[l] + b[l]) & keep);
        }
        break;
    case OP_SUB: LANEWISE((a[l] - b[l]) & keep); break;
    case OP_AND: LANEWISE(a[l] & b[l] & keep); break;
    case OP_OR: LANEWISE((a[l] | b[l]) & keep); break;
    case OP_XOR: LANEWISE((a[l] ^ b[l]) & keep); break;
    case OP_NOT: LANEWISE(~a[l] & keep); break;
    case OP_NEG: LANEWISE((0 - a[l]) & keep); break;
    case OP_ABS: LANEWISE((sext(a[l], bytes) < 0 ? 0 - a[l] : a[l]) & keep); break;
    case OP_SHL: LANEWISE((b[l] & 0xffffffffu) >= bits ? 0 : (a[l] << (b[l] & 0xffffffffu)) & keep); break;
    case OP_SHR:
        /* a shift of the width or more clamps to the width: zeros, or the sign */
        if (sign)
            LANEWISE((uint64_t)(sext(a[l], bytes) >>
                                ((b[l] & 0xffffffffu) >= bits ? bits - 1 : (b[l] & 0xffffffffu))) &
                     keep);
        else
            LANEWISE((b[l] & 0xffffffffu) >= bits ? 0 : ((a[l] & keep) >> (b[l] & 0xffffffffu)));
        break;
    case OP_BFE: /* `len` bits from bit `pos` of a (each below 256), the rest filled with the sign
                  * of the field (.s) or zeros (.u); bits past the width read as the last one */
        FOR_LANES(l, mask)
        {
            unsigned pos = (unsigned)(b[l] & 0xff), len = (unsigned)(c[l] & 0xff);
            uint64_t v = a[l] & keep, field = 0;
            unsigned top = pos + len - 1 < bits - 1 ? pos + len - 1 : bits - 1;
            uint64_t fill = sign && len > 0 ? (v >> top) & 1 : 0;
            for (unsigned i = 0; i < bits; i++) {
                uint64_t bit = i < len && pos + i < bits ? (v >> (pos + i)) & 1 : fill;
                field |= bit << i;
            }
            d[l] = field & keep;
        }
        break;
    case OP_MIN:
        if (sign)
            LANEWISE(sext(a[l], bytes) < sext(b[l], bytes) ? a[l] & keep : b[l] & keep);
        else
            LANEWISE((a[l] & keep) < (b[l] & keep) ? a[l] & keep : b[l] & keep);
        break;
    case OP_MAX:
        if (sign)
            LANEWISE(sext(a[l], bytes) > sext(b[l], bytes) ? a[l] & keep : b[l] & keep);
        else
            LANEWISE((a[l] & keep) > (b[l] & keep) ? a[l] & keep : b[l] & keep);
        break;
    case OP_MUL:
    case OP_MAD: {
        bool mad = in->op == OP_MAD;
        FOR_LANES(l, mask)
        {
            uint64_t product;
            if (in->mods & MOD_WIDE) { /* the whole product, twice as wide as the sources */
                product =
                    sign ? (uint64_t)(sext(a[l], bytes) * sext(b[l], bytes)) : (a[l] & keep) * (b[l] & keep);
                d[l] = (product + (mad ? c[l] : 0)) & keep_bits(bytes * 2);
                continue;
            }
            if (in->mods & MOD_HI) { /* its upper half */
                if (bytes == 8) {
                    __int128 p = sign ? (__int128)(int64_t)a[l] * (int64_t)b[l]
                                      : (__int128)((unsigned __int128)a[l] * b[l]);
                    product = (uint64_t)((unsigned __int128)p >> 64);
                } else {
                    product = sign ? (uint64_t)(sext(a[l], bytes) * sext(b[l], bytes)) >> bits
                                   : ((a[l] & keep) * (b[l] & keep)) >> bits;
                }
            } else {
                product = a[l] * b[l];
            }
            d[l] = (product + (mad ? c[l] : 0)) & keep;
        }
        break;
    }
    case OP_DIV:
    case OP_REM: {
        bool div = in->op == OP_DIV;
        FOR_LANES(l, mask)
        {
            uint64_t x = a[l] & keep, y = b[l] & keep;
            if (y == 0) { /* unspecified by PTX: what NVIDIA GPUs give */
                d[l] = div ? keep : x;
            } else if (sign) {
                int64_t sx = sext(x, bytes), sy = sext(y, bytes);
                if (sy == -1) /* INT_MIN / -1 wraps, as the hardware's does */
                    d[l] = div ? (uint64_t)(0 - (uint64_t)sx) & keep : 0;
                else
                    d[l] = (uint64_t)(div ? sx / sy : sx % sy) & keep;
            } else {
                d[l] = div ? x / y : x % y;
            }
        }
        break;
    }
    default: break;
    }
}

/* ------------------------------------------------------------- floats */

/* unfused: fma and mad as a multiply and an add, each rounded (PTXSIM_UNFUSED;
 * ptxsim.cmake builds this file with -ffp-contract=off, so that C's a * b + c
 * here stays two roundings) */
static void float32_op(const struct ptx_ins *in, uint64_t *d, const uint64_t *a, const uint64_t *b,
                       const uint64_t *c, uint32_t mask, bool unfused)
{
    bool ftz = in->mods & MOD_FTZ;
    if (!ftz && !(in->mods & MOD_SAT) && in->rnd <= RND_RN) { /* the common cases, one loop each */
        switch ((enum ptx_op)in->op) {
        case OP_ADD: LANEWISE(ptx_bits32(ptx_f32(a[l]) + ptx_f32(b[l]))); return;
        case OP_SUB: LANEWISE(ptx_bits32(ptx_f32(a[l]) - ptx_f32(b[l]))); return;
        case OP_MUL: LANEWISE(ptx_bits32(ptx_f32(a[l]) * ptx_f32(b[l]))); return;
        case OP_MAD:
        case OP_FMA:
            if (unfused)
                LANEWISE(ptx_bits32(ptx_f32(a[l]) * ptx_f32(b[l]) + ptx_f32(c[l])));
            else
                LANEWISE(ptx_bits32(fmaf(ptx_f32(a[l]), ptx_f32(b[l]), ptx_f32(c[l]))));
            return;
        default: break;
        }
    }
    int mode = round_begin((enum ptx_round)in->rnd);
    FOR_LANES(l, mask)
    {
        float x = ptx_f32(a[l]), y = b ? ptx_f32(b[l]) : 0.0f, z = c ? ptx_f32(c[l]) : 0.0f, v = 0.0f;
        if (ftz) {
            x = ftz32(x);
            y = ftz32(y);
            z = ftz32(z);
        }
        switch ((enum ptx_op)in->op) {
        case OP_MOV: v = x; break;
        case OP_ADD: v = x + y; break;
        case OP_SUB: v = x - y; break;
        case OP_MUL: v = x * y; break;
        case OP_MAD: /* mad.rn.f32 is fma.rn.f32 from sm_20 on */
        case OP_FMA: v = unfused ? x * y + z : fmaf(x, y, z); break;
        case OP_DIV: v = x / y; break;
        case OP_MIN: v = fminf(x, y); break;
        case OP_MAX: v = fmaxf(x, y); break;
        case OP_NEG: v = -x; break;
        case OP_ABS: v = fabsf(x); break;
        case OP_RCP: v = 1.0f / x; break;
        case OP_SQRT: v = sqrtf(x); break;
        case OP_RSQRT: v = 1.0f / sqrtf(x); break;
        case OP_EX2: v = exp2f(x); break;
        case OP_LG2: v = log2f(x); break;
        default: break;
        }
        if (in->mods & MOD_SAT) /* clamped to [0, 1], NaN to 0 */
            v = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
        if (ftz)
            v = ftz32(v);
        d[l] = ptx_bits32(v);
    }
    round_end(mode);
}

/* -------------------------------------------------------- comparisons */

static bool compare(enum ptx_cmp cmp, double x, double y)
{
    bool unordered = isnan(x) || isnan(y);
    switch (cmp) {
    case CMP_EQ: return !unordered && x == y;
    case CMP_NE: return !unordered && x != y;
    case CMP_LT:
    case CMP_LO: return !unordered && x < y;
    case CMP_LE:
    case CMP_LS: return !unordered && x <= y;
    case CMP_GT:
    case CMP_HI: return !unordered && x > y;
    case CMP_GE:
    case CMP_HS: return !unordered && x >= y;
    case CMP_EQU: return unordered || x == y;
    case CMP_NEU: return unordered || x != y;
    case CMP_LTU: return unordered || x < y;
    case CMP_LEU: return unordered || x <= y;
    case CMP_GTU: return unordered || x > y;
    case CMP_GEU: return unordered || x >= y;
    case CMP_NUM: return !unordered;
    case CMP_NAN: return unordered;
    }
    return false;
}

/* integers compare exactly: as 64-bit values, signed or not */
static bool compare_int(enum ptx_cmp cmp, uint64_t x, uint64_t y, bool sign)
{
    int order = sign ? ((int64_t)x > (int64_t)y) - ((int64_t)x < (int64_t)y) : (x > y) - (x < y);
    switch (cmp) {
    case CMP_EQ: return order == 0;
    case CMP_NE: return order != 0;
    case CMP_LT:
    case CMP_LO: return order < 0;
    case CMP_LE:
    case CMP_LS: return order <= 0;
    case CMP_GT:
    case CMP_HI: return order > 0;
    case CMP_GE:
    case CMP_HS: return order >= 0;
    default: return false; /* the unordered comparisons are for floats (the decoder lets no other through) */
    }
}

static void setp(const struct run *r, struct warp *w, const struct ptx_ins *in, uint32_t mask)
{
    enum ptx_type t = (enum ptx_type)in->type;
    const uint64_t *a = operand(r, w, in->src[0]), *b = operand(r, w, in->src[1]);
    uint64_t *p = w->regs + (size_t)in->dst[0] * PTXSIM_LANES;
    uint64_t *q = in->mods & MOD_PAIR ? w->regs + (size_t)in->dst[1] * PTXSIM_LANES : NULL;
    unsigned bytes = ptx_type_bytes(t);
    bool ftz = in->mods & MOD_FTZ;
    FOR_LANES(l, mask)
    {
        bool v;
        if (t == T_F32)
            v = compare((enum ptx_cmp)in->cmp, ftz ? ftz32(ptx_f32(a[l])) : ptx_f32(a[l]),
                        ftz ? ftz32(ptx_f32(b[l])) : ptx_f32(b[l]));
        else if (ptx_type_signed(t))
            v = compare_int((enum ptx_cmp)in->cmp, (uint64_t)sext(a[l], bytes), (uint64_t)sext(b[l], bytes),
                            true);
        else
            v = compare_int((enum ptx_cmp)in->cmp, a[l] & keep_bits(bytes), b[l] & keep_bits(bytes), false);
        p[l] = v;
        if (q)
            q[l] = !v;
    }
    w->written[in->dst[0]] |= mask;
    if (q)
        w->written[in->dst[1]] |= mask;
}

/* -------------------------------------------------------- conversions */

/* a float to an integer: rounded as `rnd` says, clamped to the type's range, NaN to 0 */
static uint64_t float_to_int(double x, enum ptx_round rnd, enum ptx_type to)
{
    unsigned bytes = ptx_type_bytes(to);
    if (isnan(x))
        return 0;
    x = rnd == RND_RNI ? nearbyint(x) : rnd == RND_RMI ? floor(x) : rnd == RND_RPI ? ceil(x) : trunc(x);
    if (ptx_type_signed(to)) {
        double lo = -ldexp(1.0, (int)bytes * 8 - 1), hi = ldexp(1.0, (int)bytes * 8 - 1) - 1;
        int64_t v = x <= lo ? (int64_t)lo : x >= hi ? (int64_t)hi : (int64_t)x;
        return (uint64_t)v & keep_bits(bytes);
    }
    double hi = ldexp(1.0, (int)bytes * 8) - 1;
    return x <= 0 ? 0 : x >= hi ? keep_bits(bytes) : (uint64_t)x;
}

static void convert(const struct run *r, struct warp *w, const struct ptx_ins *in, uint32_t mask)
{
    enum ptx_type to = (enum ptx_type)in->type, from = (enum ptx_type)in->type2;
    const uint64_t *a = operand(r, w, in->src[0]);
    uint64_t *d = w->regs + (size_t)in->dst[0] * PTXSIM_LANES;
    unsigned from_bytes = ptx_type_bytes(from), to_bytes = ptx_type_bytes(to);
    bool ftz = in->mods & MOD_FTZ, sat = in->mods & MOD_SAT;
    enum ptx_round rnd = (enum ptx_round)in->rnd;
    int mode = round_begin(rnd);
    FOR_LANES(l, mask)
    {
        if (!ptx_type_float(from) && !ptx_type_float(to)) { /* widen by the source's sign, then truncate */
            int64_t v =
                ptx_type_signed(from) ? sext(a[l], from_bytes) : (int64_t)(a[l] & keep_bits(from_bytes));
            if (sat && to_bytes < 8) {
                int64_t lo = ptx_type_signed(to) ? -((int64_t)1 << (to_bytes * 8 - 1)) : 0;
                int64_t hi = ptx_type_signed(to) ? ((int64_t)1 << (to_bytes * 8 - 1)) - 1
                                                 : (int64_t)keep_bits(to_bytes);
                v = v < lo ? lo : v > hi ? hi : v;
            }
            d[l] = (uint64_t)v & keep_bits(to_bytes);
            continue;
        }
        if (!ptx_type_float(from)) { /* an integer to a float: the host's conversion rounds by its mode */
            float f =
                ptx_type_signed(from) ? (float)sext(a[l], from_bytes) : (float)(a[l] & keep_bits(from_bytes));
            d[l] = ptx_bits32(sat ? (f > 0.0f ? (f < 1.0f ? f : 1.0f) : 0.0f) : f);
            continue;
        }
        double x = ftz ? ftz32(ptx_f32(a[l])) : ptx_f32(a[l]); /* exact: a float is a double */
        if (!ptx_type_float(to)) {
            d[l] = float_to_int(x, rnd, to);
            continue;
        }
        /* a float to a float: to an integral value (.rni ...), a width, and .sat */
        if (rnd == RND_RNI)
            x = nearbyint(x);
        else if (rnd == RND_RZI)
            x = trunc(x);
        else if (rnd == RND_RMI)
            x = floor(x);
        else if (rnd == RND_RPI)
            x = ceil(x);
        if (sat)
            x = x > 0.0 ? (x < 1.0 ? x : 1.0) : 0.0;
        float f = (float)x; /* exact: it was a float, and an integral value of one is one */
        d[l] = ptx_bits32(ftz ? ftz32(f) : f);
    }
    round_end(mode);
}

/* -------------------------------------------------------------- memory */

/* the value of `bytes` loaded into a register: extended by the type's sign
 * to at least 32 bits */
static inline uint64_t loaded(const unsigned char *p, enum ptx_type t, unsigned bytes)
{
    if (bytes == 4) { /* nearly every load ember's kernels make */
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint64_t v = 0;
    memcpy(&v, p, bytes);
    if (bytes < 4 && ptx_type_signed(t))
        v = (uint64_t)sext(v, bytes) & 0xffffffffu;
    return v;
}

/* a register's low `bytes` into memory */
static inline void stored(unsigned char *p, uint64_t v, unsigned bytes)
{
    if (bytes == 4) {
        uint32_t low = (uint32_t)v;
        memcpy(p, &low, 4);
    } else {
        memcpy(p, &v, bytes);
    }
}

/* Adds a sector to the launch's set of distinct ones (open addressing,
 * grown at half full); false when out of memory, which only loses the
 * count. */
static void sector_seen(struct ptxsim_stats *s, uint64_t sector)
{
    if (2 * (s->unique_sectors + 1) > s->set_capacity) {
        size_t capacity = s->set_capacity ? 2 * s->set_capacity : 4096;
        uint64_t *grown = calloc(capacity, sizeof *grown);
        if (!grown)
            return;
        for (size_t i = 0; i < s->set_capacity; i++)
            if (s->sector_set[i]) {
                size_t at = (size_t)(s->sector_set[i] * 0x9E3779B97F4A7C15ull >> 20) & (capacity - 1);
                while (grown[at])
                    at = (at + 1) & (capacity - 1);
                grown[at] = s->sector_set[i];
            }
        free(s->sector_set);
        s->sector_set = grown;
        s->set_capacity = capacity;
    }
    uint64_t key = sector + 1; /* 0 marks an empty slot */
    size_t at = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (s->set_capacity - 1);
    while (s->sector_set[at] && s->sector_set[at] != key)
        at = (at + 1) & (s->set_capacity - 1);
    if (!s->sector_set[at]) {
        s->sector_set[at] = key;
        s->unique_sectors++;
    }
}

/* sectors and lines a global access of the active lanes touches, for the report */
static void record_global(struct run *r, const struct ptx_ins *in, const uint64_t *addresses, uint32_t mask,
                          unsigned bytes)
{
    struct ptxsim_stats *s = r->launch->stats;
    uint64_t sectors[2 * PTXSIM_LANES], lines[2 * PTXSIM_LANES];
    int ns = 0, nl = 0;
    FOR_LANES(l, mask)
    {
        /* an access may straddle two sectors when misaligned; the checker stops those first */
        for (uint64_t at = addresses[l] >> 5; at <= (addresses[l] + bytes - 1) >> 5; at++) {
            int i = 0;
            while (i < ns && sectors[i] != at)
                i++;
            if (i == ns)
                sectors[ns++] = at;
        }
        uint64_t line = addresses[l] >> 7;
        int i = 0;
        while (i < nl && lines[i] != line)
            i++;
        if (i == nl)
            lines[nl++] = line;
    }
    for (int i = 0; i < ns; i++)
        sector_seen(s, sectors[i]);
    struct ptxsim_ins_stats *is = &s->ins[in - r->k->code];
    is->sectors += (uint64_t)ns;
    is->lines += (uint64_t)nl;
    s->global_bytes += (uint64_t)ptx_popcount(mask) * bytes;
}

/* The passes the 32 banks need for one shared access: the most distinct
 * cells any one bank serves (lanes reading one cell share its pass). A cell
 * is a bank's width: 4 bytes from Maxwell on, so word w is in bank w % 32;
 * 8 bytes on Kepler (its default 32-bit mode: word w still in bank w % 32,
 * but words w and w + 32 share the bank's 64-bit row and are served in one
 * pass). In Kepler's 64-bit mode (cudaDeviceSetSharedMemConfig's eight-byte
 * banks, which ember does not ask for) successive 8-byte words go to
 * successive banks. All three are counted; the report takes its GPU's. */
static int bank_passes(const uint64_t *addresses, uint32_t mask, unsigned row_shift, unsigned bank_shift)
{
    uint64_t cells[PTXSIM_LANES];
    int count = 0, worst = 0;
    FOR_LANES(l, mask)
    {
        uint64_t cell = (addresses[l] >> row_shift) << 5 | ((addresses[l] >> bank_shift) & 31);
        int i = 0;
        while (i < count && cells[i] != cell)
            i++;
        if (i == count)
            cells[count++] = cell;
    }
    for (int i = 0; i < count; i++) {
        int same_bank = 0;
        for (int j = 0; j < count; j++)
            same_bank += (cells[j] & 31) == (cells[i] & 31);
        if (same_bank > worst)
            worst = same_bank;
    }
    return worst;
}

static void record_shared(struct run *r, const struct ptx_ins *in, const uint64_t *addresses, uint32_t mask)
{
    struct ptxsim_ins_stats *is = &r->launch->stats->ins[in - r->k->code];
    is->wavefronts += (uint64_t)bank_passes(addresses, mask, 2 + 5, 2);          /* rows of 32 4-byte words */
    is->wavefronts_kepler += (uint64_t)bank_passes(addresses, mask, 3 + 5, 2);   /* rows of 32 8-byte cells */
    is->wavefronts_kepler64 += (uint64_t)bank_passes(addresses, mask, 3 + 5, 3); /* 8-byte words a bank */
}

static bool memory(struct run *r, struct warp *w, const struct ptx_ins *in, uint32_t mask)
{
    enum ptx_type t = (enum ptx_type)in->type;
    unsigned bytes = ptx_type_bytes(t);
    bool store = in->op == OP_ST;
    uint64_t *d = store ? NULL : w->regs + (size_t)in->dst[0] * PTXSIM_LANES;
    const uint64_t *v = store ? operand(r, w, in->src[0]) : NULL;
    if (in->space == SPACE_PARAM || in->space == SPACE_CONST) { /* the same bytes for every lane */
        const unsigned char *base =
            in->space == SPACE_PARAM ? r->launch->params : r->k->module->variables[in->target].bytes;
        if (in->space == SPACE_CONST &&
            (in->offset < 0 || (size_t)in->offset + bytes > r->k->module->variables[in->target].size))
            return ptx_fail(r, PTXSIM_BAD_ADDRESS, w, __builtin_ctz(mask), in, "a read past the constant %s",
                            r->k->module->variables[in->target].name);
        uint64_t value = loaded(base + in->offset, t, bytes);
        LANEWISE(value);
        w->written[in->dst[0]] |= mask;
        return true;
    }
    const uint64_t *base = in->base != NO_OPERAND ? operand(r, w, in->base) : NULL;
    uint64_t addresses[PTXSIM_LANES];
    FOR_LANES(l, mask) addresses[l] = (base ? base[l] : 0) + (uint64_t)in->offset;
    if (in->space == SPACE_GLOBAL) {
        FOR_LANES(l, mask)
        {
            if (!ptx_check_global(r, w, in, (int)l, addresses[l], bytes))
                return false;
            unsigned char *p = (unsigned char *)(uintptr_t)addresses[l];
            if (store)
                stored(p, v[l], bytes);
            else
                d[l] = loaded(p, t, bytes);
        }
        if (r->launch->stats)
            record_global(r, in, addresses, mask, bytes);
    } else { /* shared */
        FOR_LANES(l, mask)
        {
            if (!ptx_check_shared(r, w, in, (int)l, addresses[l], bytes, store))
                return false;
            unsigned char *p = r->shared + addresses[l];
            if (store)
                stored(p, v[l], bytes);
            else
                d[l] = loaded(p, t, bytes);
        }
        if (r->launch->stats)
            record_shared(r, in, addresses, mask);
    }
    if (!store)
        w->written[in->dst[0]] |= mask;
    return true;
}

/* ------------------------------------------------------------ dispatch */

bool ptx_execute(struct run *r, struct warp *w, const struct ptx_ins *in, uint32_t mask)
{
    if (!(r->launch->flags & PTXSIM_NO_UNINIT_CHECK) && !ptx_check_defined(r, w, in, mask))
        return false;
    enum ptx_op op = (enum ptx_op)in->op;
    enum ptx_type t = (enum ptx_type)in->type;
    if (op == OP_LD || op == OP_ST)
        return memory(r, w, in, mask);
    if (op == OP_SETP) {
        setp(r, w, in, mask);
        return true;
    }
    if (op == OP_CVT)
        convert(r, w, in, mask);
    uint64_t *d = w->regs + (size_t)in->dst[0] * PTXSIM_LANES;
    const uint64_t *a = in->nsrc > 0 ? operand(r, w, in->src[0]) : NULL;
    const uint64_t *b = in->nsrc > 1 ? operand(r, w, in->src[1]) : NULL;
    const uint64_t *c = in->nsrc > 2 ? operand(r, w, in->src[2]) : NULL;
    if (op == OP_CVT) {
        /* done above */
    } else if (op == OP_SELP) { /* d = c ? a : b */
        uint64_t keep = keep_bits(ptx_type_bytes(t));
        LANEWISE((c[l] & 1 ? a[l] : b[l]) & keep);
    } else if (op == OP_BFI) { /* b with bits [pos, pos + len) taken from a's lowest, pos and len below 256 */
        const uint64_t *e = operand(r, w, in->src[3]);
        unsigned bits = ptx_type_bytes(t) * 8;
        FOR_LANES(l, mask)
        {
            unsigned pos = (unsigned)(c[l] & 0xff), len = (unsigned)(e[l] & 0xff);
            uint64_t v = b[l] & keep_bits(bits / 8);
            for (unsigned i = 0; i < len && pos + i < bits; i++)
                v = (v & ~((uint64_t)1 << (pos + i))) | (((a[l] >> i) & 1) << (pos + i));
            d[l] = v;
        }
    } else if (op == OP_CVTA) { /* global addresses are generic ones here: the same number */
        LANEWISE(a[l]);
    } else if (t == T_PRED) { /* predicate logic */
        switch (op) {
        case OP_MOV: LANEWISE(a[l] & 1); break;
        case OP_AND: LANEWISE(a[l] & b[l] & 1); break;
        case OP_OR: LANEWISE((a[l] | b[l]) & 1); break;
        case OP_XOR: LANEWISE((a[l] ^ b[l]) & 1); break;
        case OP_NOT: LANEWISE(!(a[l] & 1)); break;
        default: break;
        }
    } else if (t == T_F32 && op != OP_MOV) {
        float32_op(in, d, a, b, c, mask, r->launch->flags & PTXSIM_UNFUSED);
    } else {
        integer_op(in, d, a, b, c, mask);
    }
    w->written[in->dst[0]] |= mask;
    return true;
}
