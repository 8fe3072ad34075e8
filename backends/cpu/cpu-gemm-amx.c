/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-gemm-amx.c — float32 products on the AMX tile unit of
 * Intel's Xeons since Sapphire Rapids, where the context allows it
 * (EMBER_MATMUL_HIGH or MEDIUM, ember_ctx_set_matmul_precision;
 * docs/design.md, "Matrix products below float32").
 *
 * The tile unit multiplies bfloat16 (float32's sign, exponent and top 8
 * significant bits) and adds in float32, sixteen times as many
 * multiply-adds a cycle as AVX-512 does in float32 (3.1 TFLOP/s measured
 * on one core of the development VM). Each float x is split
 * into two bfloat16, hi = bf16(x) and lo = bf16(x - hi), which together
 * hold 16 of its 24 significant bits, and a product is taken as three:
 *
 *     A B  ~  A_hi B_hi + A_hi B_lo + A_lo B_hi
 *
 * (A_lo B_lo, about 2^-16 of the whole, left out; a part of a product
 * whose operands hold Inf or NaN takes A_hi B_hi alone, so that they land
 * where float32's would, but for the tile unit's flushing subnormal inputs
 * to zero, which can make Inf times a subnormal NaN): PyTorch's "high"
 * float32 matmul precision, a relative error near 1e-5 where float32's
 * own is near 1e-7. Three passes still leave the tile unit about twice as
 * fast as OpenBLAS on one core (docs/benchmarks.md, "Products on the AMX
 * tile unit"). EMBER_MATMUL_MEDIUM, PyTorch's "medium", takes A_hi B_hi
 * alone.
 *
 * What the tiles want (Intel's SDM, "Intel AMX"): a tile of A is 16 rows
 * of 32 bf16 along k; a tile of B is 16 rows, row p holding, for each of
 * 16 columns j, the pair B(2p, j), B(2p + 1, j); a tile of C is 16 x 16
 * floats. So A and B are first copied into those layouts ("packed"), hi
 * and lo apart, zero-padded to blocks of 32 rows, 32 columns and 32 of k.
 * The smaller operand is packed whole and the larger one a panel at a
 * time, each part once (k is cut into spans only when even the smaller
 * would pass PACKED_BUDGET). The kernel keeps a 32 x 32 block of C in four
 * tiles over a chunk of up to CHUNK of k, C gathering the chunks' sums.
 *
 * Linux only: a process asks the kernel for the tile state before it may
 * touch it (arch_prctl ARCH_REQ_XCOMP_PERM), and Windows' way is not
 * built here.
 */
#if defined(__linux__)
#define _GNU_SOURCE /* syscall */
#endif
#include "cpu-impl.h"

#if defined(__linux__) && defined(__x86_64__) && defined(__GNUC__)
#define CPU_AMX 1
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define CPU_AMX 0
#endif

#if CPU_AMX

#define AMX_FN     __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512bf16")))
#define AMX_INLINE static inline __attribute__((always_inline)) AMX_FN

/* arch_prctl's request and the tile data's state component, as Linux's
 * own headers and Intel's SDM number them (older C libraries do not
 * define them) */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA  18

/* a packed tile: 16 rows of 64 bytes */
#define TILE_ELEMENTS 512
/* the panel of the larger operand packed at a time: 64 rows or columns */
#define PANEL 64
/* the most of k a block's tiles gather before C takes their sums: C's
 * panel stays in L2 between chunks (fewer chunks measured faster on a
 * Sapphire Rapids core: the tiles' loads and stores of C cost more than
 * reading A and B from L2) */
#define CHUNK 2048
/* the most the whole operand, hi and lo, may take packed (so that it stays
 * in L2); beyond it k is cut into spans, each packed in turn */
#define PACKED_BUDGET ((int64_t)3 << 19)

static bool amx_ready;

/* The CPU has AMX-TILE, AMX-BF16 and AVX512-BF16 (for the splitting),
 * EMBER_CPU_SIMD leaves AVX-512 and AMX in, and Linux let this process
 * have the tile state. Asked once, as cpu_simd() reads EMBER_CPU_SIMD once. */
static void amx_ask(void)
{
    const char *cap = getenv("EMBER_CPU_SIMD");
    if (cpu_simd() != CPU_SIMD_AVX512 || (cap && strcmp(cap, "avx512") == 0))
        return; /* no AVX-512, or EMBER_CPU_SIMD=avx512, avx2 or none */
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d >> 24 & 1) || !(d >> 22 & 1))
        return; /* AMX-TILE, AMX-BF16: CPUID.(7,0):EDX[24], [22] */
    if (!__get_cpuid_count(7, 1, &a, &b, &c, &d) || !(a >> 5 & 1))
        return; /* AVX512-BF16: CPUID.(7,1):EAX[5] */
    amx_ready = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

bool cpu_amx(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, amx_ask);
    return amx_ready;
}

/* ------------------------------------------------------------- packing */

/* x - hi where hi is finite, else 0: an infinite or NaN x is all hi (x -
 * hi would be NaN); *finite loses the lanes where it is not */
AMX_INLINE __m512 remainder_of(__m512 x, __m512 hi, __mmask16 *finite)
{
    __mmask16 lanes = _mm512_cmp_ps_mask(_mm512_sub_ps(hi, hi), _mm512_setzero_ps(), _CMP_EQ_OQ);
    *finite &= lanes;
    return _mm512_maskz_sub_ps(lanes, x, hi);
}

/* 32 floats as 32 bf16 hi and 32 bf16 lo; *finite as remainder_of */
AMX_INLINE void split32(__m512 x0, __m512 x1, __m512i *hi, __m512i *lo, __mmask16 *finite)
{
    __m512i h = (__m512i)_mm512_cvtne2ps_pbh(x1, x0);
    __m512 h0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(h)), 16));
    __m512 h1 =
        _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(h, 1)), 16));
    *hi = h;
    *lo = (__m512i)_mm512_cvtne2ps_pbh(remainder_of(x1, h1, finite), remainder_of(x0, h0, finite));
}

/* the first `left` of 16 floats at p (zeros after; the rest not read) */
AMX_INLINE __m512 load16(const float *p, int64_t left)
{
    return left >= 16 ? _mm512_loadu_ps(p)
                      : _mm512_maskz_loadu_ps(left > 0 ? (__mmask16)((1u << left) - 1) : 0, p);
}

/* a 16 x 16 matrix of 32-bit elements transposed in registers */
AMX_INLINE void transpose16(__m512i r[16])
{
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int h = 0; h < 16; h += 8)
        for (int i = 0; i < 4; i++) {
            t[h + i] = _mm512_shuffle_i32x4(r[h + i], r[h + i + 4], 0x88);
            t[h + i + 4] = _mm512_shuffle_i32x4(r[h + i], r[h + i + 4], 0xdd);
        }
    for (int i = 0; i < 8; i++) {
        r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
        r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xdd);
    }
}

/* An operand as stored: its `count` lines (rows of A or columns of B),
 * each element (line, p) for p along k at
 * src[line * ld + p] when k runs along the storage's rows (A as stored, B
 * transposed) or at src[p * ld + line] when it runs down its columns (A
 * transposed, B as stored). src starts at the span's first k. */
struct operand {
    const float *src;
    int64_t ld, count;
    bool k_along_rows;
};

/* 16 lines from `line` over k [32 s, 32 s + 32) of kc: either 16 vectors
 * of one line's 32 along k (along_k) or 16 of the pairs (2p, 2p + 1) of
 * the 16 lines, p = 0..15, as 32-bit elements; hi and lo apart, zeros past
 * the operand's lines and kc; *finite loses a lane for each Inf or NaN */
AMX_INLINE void read_lines(const struct operand *o, int64_t line, int64_t s, int64_t kc, __m512i h[16],
                           __m512i l[16], bool *along_k, __mmask16 *finite)
{
    int64_t left = kc - s * 32;
    *along_k = o->k_along_rows;
    if (o->k_along_rows) {
        for (int r = 0; r < 16; r++) {
            const float *p = o->src + (line + r) * o->ld + s * 32;
            bool in = line + r < o->count;
            split32(in ? load16(p, left) : _mm512_setzero_ps(),
                    in ? load16(p + 16, left - 16) : _mm512_setzero_ps(), &h[r], &l[r], finite);
        }
        return;
    }
    /* (line 0..15 of k = 2p, of k = 2p + 1) -> pairs: element 2j from j, 2j + 1 from 16 + j */
    const __m512i pairs = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23,
                                           7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    int64_t lines = o->count - line;
    for (int p = 0; p < 16; p++) {
        int64_t k = s * 32 + 2 * p;
        __m512 even = k < kc ? load16(o->src + k * o->ld + line, lines) : _mm512_setzero_ps();
        __m512 odd = k + 1 < kc ? load16(o->src + (k + 1) * o->ld + line, lines) : _mm512_setzero_ps();
        split32(even, odd, &h[p], &l[p], finite);
        h[p] = _mm512_permutexvar_epi16(pairs, h[p]);
        l[p] = _mm512_permutexvar_epi16(pairs, l[p]);
    }
}

/* `blocks` blocks of 16 lines from `first` over kc of k, into tiles of
 * A (each row a line's 32 along k) or of B (each row the pairs of 16
 * lines): [block][k-step][16 rows of 64 bytes], hi and lo apart. The two
 * ways of reading and the two of writing meet in a transpose where they
 * differ. False when the part holds an Inf or NaN. */
static AMX_FN bool pack(const struct operand *o, bool for_b, int64_t first, int64_t blocks, int64_t kc,
                        uint16_t *hi, uint16_t *lo)
{
    int64_t steps = (kc + 31) / 32;
    __mmask16 finite = 0xffff;
    for (int64_t blk = 0; blk < blocks; blk++)
        for (int64_t s = 0; s < steps; s++) {
            __m512i h[16], l[16];
            bool along_k;
            read_lines(o, first + blk * 16, s, kc, h, l, &along_k, &finite);
            if (along_k == for_b) {
                transpose16(h);
                transpose16(l);
            }
            size_t at = (size_t)(blk * steps + s) * TILE_ELEMENTS;
            for (int r = 0; r < 16; r++) {
                _mm512_store_si512(hi + at + 32 * r, h[r]);
                _mm512_store_si512(lo + at + 32 * r, l[r]);
            }
        }
    return finite == 0xffff;
}

/* ------------------------------------------------------------- the kernel */

struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
};

/* tiles 0-3: C's 32 x 32 block; 4, 5: two of A; 6, 7: two of B */
static AMX_FN void tiles_configure(void)
{
    struct tile_config cfg = {.palette = 1};
    for (int t = 0; t < 8; t++) {
        cfg.bytes_per_row[t] = 64;
        cfg.rows[t] = 16;
    }
    _tile_loadconfig(&cfg);
}

/* How a block's sums land in C: the first chunk of k writes alpha sums +
 * beta C (beta 0: C not read), the later ones add alpha sums. */
struct landing {
    float *c;
    int64_t ldc, rows, cols; /* of the block, inside C */
    float alpha, beta;
    bool first;
};

AMX_INLINE void land(const struct landing *to, float sums[4][256])
{
    for (int r = 0; r < to->rows; r++)
        for (int half = 0; half < 2; half++) {
            int64_t left = to->cols - half * 16;
            if (left <= 0)
                break;
            __mmask16 mask = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
            float *c = to->c + r * to->ldc + half * 16;
            __m512 v = _mm512_mul_ps(_mm512_set1_ps(to->alpha),
                                     _mm512_loadu_ps(sums[(r / 16) * 2 + half] + (r % 16) * 16));
            if (!to->first || to->beta != 0.0f) {
                __m512 old = _mm512_maskz_loadu_ps(mask, c);
                v = _mm512_fmadd_ps(_mm512_set1_ps(to->first ? to->beta : 1.0f), old, v);
            }
            _mm512_mask_storeu_ps(c, mask, v);
        }
}

/* Where a block's tiles are: the first of A's two row tiles and of B's two
 * column tiles, hi and lo, for the first k-step, the second of each `next`
 * elements on, `steps` k-steps of 512 elements each. */
struct tiles {
    const uint16_t *a_hi, *a_lo, *b_hi, *b_lo;
    size_t next;
    int64_t steps;
    bool lo; /* hi lo and lo hi too (EMBER_MATMUL_HIGH) */
};

/* C's 32 x 32 block from A's two row tiles and B's two column tiles over
 * `steps` k-steps: hi hi, hi lo and lo hi each k-step (or hi hi alone,
 * EMBER_MATMUL_MEDIUM). A whole block with
 * alpha 1 and beta 0 or 1 (or a later chunk of k) goes between C and the
 * tiles directly; any other through land(). */
static AMX_FN void block_multiply(const struct tiles *t, const struct landing *to)
{
    const uint16_t *a_hi = t->a_hi, *a_lo = t->a_lo, *b_hi = t->b_hi, *b_lo = t->b_lo;
    size_t next = t->next;
    bool direct = to->rows == 32 && to->cols == 32 && to->alpha == 1.0f &&
                  (!to->first || to->beta == 0.0f || to->beta == 1.0f);
    bool adds = direct && (!to->first || to->beta == 1.0f); /* the sums start from C */
    size_t ld = (size_t)to->ldc * sizeof(float), half = 16 * (size_t)to->ldc;
    if (adds) {
        _tile_loadd(0, to->c, ld);
        _tile_loadd(1, to->c + 16, ld);
        _tile_loadd(2, to->c + half, ld);
        _tile_loadd(3, to->c + half + 16, ld);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
/* A's two row tiles into tiles 4 and 5, B's two column tiles into 6 and 7,
 * and the four products into C's tiles 0-3 */
#define LOAD_A(p)                                                                                            \
    do {                                                                                                     \
        _tile_loadd(4, (p) + at, 64);                                                                        \
        _tile_loadd(5, (p) + next + at, 64);                                                                 \
    } while (0)
#define LOAD_B(p)                                                                                            \
    do {                                                                                                     \
        _tile_loadd(6, (p) + at, 64);                                                                        \
        _tile_loadd(7, (p) + next + at, 64);                                                                 \
    } while (0)
#define PRODUCTS()                                                                                           \
    do {                                                                                                     \
        _tile_dpbf16ps(0, 4, 6);                                                                             \
        _tile_dpbf16ps(1, 4, 7);                                                                             \
        _tile_dpbf16ps(2, 5, 6);                                                                             \
        _tile_dpbf16ps(3, 5, 7);                                                                             \
    } while (0)
    for (int64_t s = 0; s < t->steps; s++) {
        size_t at = (size_t)s * TILE_ELEMENTS;
        LOAD_A(a_hi); /* hi hi */
        LOAD_B(b_hi);
        PRODUCTS();
        if (t->lo) {
            LOAD_B(b_lo); /* hi lo */
            PRODUCTS();
            LOAD_A(a_lo); /* lo hi */
            LOAD_B(b_hi);
            PRODUCTS();
        }
    }
#undef LOAD_A
#undef LOAD_B
#undef PRODUCTS
    if (direct) {
        _tile_stored(0, to->c, ld);
        _tile_stored(1, to->c + 16, ld);
        _tile_stored(2, to->c + half, ld);
        _tile_stored(3, to->c + half + 16, ld);
        return;
    }
    float sums[4][256] __attribute__((aligned(64)));
    _tile_stored(0, sums[0], 64);
    _tile_stored(1, sums[1], 64);
    _tile_stored(2, sums[2], 64);
    _tile_stored(3, sums[3], 64);
    land(to, sums);
}

/* ------------------------------------------------------------- the driver */

/* each thread's packing buffers, kept between products (freed when the
 * thread ends) */
struct packs {
    uint16_t *mem;
    size_t elements;
};
static pthread_key_t packs_key;
static pthread_once_t packs_once = PTHREAD_ONCE_INIT;

static void packs_free(void *p)
{
    struct packs *k = p;
    free(k->mem);
    free(k);
}

static void packs_key_make(void) { (void)pthread_key_create(&packs_key, packs_free); }

/* `elements` bf16 of this thread's, 64-byte aligned, or NULL */
static uint16_t *packs_get(size_t elements)
{
    pthread_once(&packs_once, packs_key_make);
    struct packs *k = pthread_getspecific(packs_key);
    if (!k) {
        if (!(k = calloc(1, sizeof *k)))
            return NULL;
        if (pthread_setspecific(packs_key, k) != 0) {
            free(k);
            return NULL;
        }
    }
    if (k->elements < elements) {
        free(k->mem);
        k->elements = 0;
        if (!(k->mem = aligned_alloc(64, (elements * sizeof *k->mem + 63) / 64 * 64)))
            return NULL;
        k->elements = elements;
    }
    return k->mem;
}

static int64_t round32(int64_t v) { return (v + 31) / 32 * 32; }

AMX_FN bool cpu_gemm_amx(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                         float *c)
{
    /* small products are OpenBLAS's: the packing would be most of the work */
    if ((g->precision != EMBER_MATMUL_HIGH && g->precision != EMBER_MATMUL_MEDIUM) || m < 32 || n < 32 ||
        g->k < 32 || m * n * g->k < ((int64_t)1 << 20) || !cpu_amx())
        return false;
    /* the smaller side is packed whole (over a span of k that fits the
     * budget), the larger a panel at a time */
    bool a_whole = m <= n;
    int64_t whole = round32(a_whole ? m : n), span = round32(g->k);
    int64_t spans = (whole * span * 4 + PACKED_BUDGET - 1) / PACKED_BUDGET;
    span = round32((g->k + spans - 1) / spans);
    size_t whole_size = (size_t)(whole * span), panel_size = (size_t)(PANEL * span);
    uint16_t *mem = packs_get(2 * whole_size + 2 * panel_size);
    if (!mem)
        return false;
    uint16_t *w_hi = mem, *w_lo = mem + whole_size, *p_hi = w_lo + whole_size, *p_lo = p_hi + panel_size;
    int64_t long_side = a_whole ? n : m;
    tiles_configure();
    for (int64_t k0 = 0; k0 < g->k; k0 += span) {
        int64_t kn = g->k - k0 < span ? g->k - k0 : span, steps = (kn + 31) / 32;
        struct operand oa = {.src = g->trans_a ? a + k0 * g->lda : a + k0,
                             .ld = g->lda,
                             .count = m,
                             .k_along_rows = !g->trans_a};
        struct operand ob = {.src = g->trans_b ? b + k0 : b + k0 * g->ldb,
                             .ld = g->ldb,
                             .count = n,
                             .k_along_rows = g->trans_b};
        bool whole_finite = pack(a_whole ? &oa : &ob, !a_whole, 0, whole / 16, kn, w_hi, w_lo);
        for (int64_t p0 = 0; p0 < long_side; p0 += PANEL) {
            int64_t blocks = (long_side - p0 < PANEL ? round32(long_side - p0) : PANEL) / 16;
            /* Inf or NaN in either: hi hi alone, where Inf times a finite
             * hi stays +-Inf as float32's would (Inf times a lo, which may
             * be 0 or of the other sign, would make NaN) */
            bool finite = pack(a_whole ? &ob : &oa, a_whole, p0, blocks, kn, p_hi, p_lo) && whole_finite;
            const uint16_t *a_hi = a_whole ? w_hi : p_hi, *a_lo = a_whole ? w_lo : p_lo;
            const uint16_t *b_hi = a_whole ? p_hi : w_hi, *b_lo = a_whole ? p_lo : w_lo;
            /* a chunk of k at a time, the panel's 32 in L1 while the whole
             * operand's (in L2) pass by; C's panel stays in L2 between chunks */
            for (int64_t s0 = 0; s0 < steps; s0 += CHUNK / 32) {
                int64_t count = steps - s0 < CHUNK / 32 ? steps - s0 : CHUNK / 32;
                for (int64_t pb = 0; pb < blocks; pb += 2)
                    for (int64_t wb = 0; wb < whole / 16; wb += 2) {
                        int64_t i = a_whole ? wb * 16 : p0 + pb * 16, j = a_whole ? p0 + pb * 16 : wb * 16;
                        if (i >= m || j >= n)
                            continue;
                        size_t at_w = (size_t)(wb * steps + s0) * TILE_ELEMENTS;
                        size_t at_p = (size_t)(pb * steps + s0) * TILE_ELEMENTS;
                        size_t at_a = a_whole ? at_w : at_p, at_b = a_whole ? at_p : at_w;
                        struct tiles t = {.a_hi = a_hi + at_a,
                                          .a_lo = a_lo + at_a,
                                          .b_hi = b_hi + at_b,
                                          .b_lo = b_lo + at_b,
                                          .next = (size_t)steps * TILE_ELEMENTS,
                                          .steps = count,
                                          .lo = g->precision == EMBER_MATMUL_HIGH && finite};
                        struct landing to = {.c = c + i * g->ldc + j,
                                             .ldc = g->ldc,
                                             .rows = m - i < 32 ? m - i : 32,
                                             .cols = n - j < 32 ? n - j : 32,
                                             .alpha = g->alpha,
                                             .beta = g->beta,
                                             .first = k0 == 0 && s0 == 0};
                        block_multiply(&t, &to);
                    }
            }
        }
    }
    _tile_release();
    return true;
}

#else

bool cpu_amx(void) { return false; }

bool cpu_gemm_amx(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b, float *c)
{
    (void)g, (void)m, (void)n, (void)a, (void)b, (void)c;
    return false;
}

#endif
