/* SPDX-License-Identifier: MIT */
/*
 * backends/quant.h — block-quantised weights: the formats GGUF files store
 * (ggml's), what a block holds, and how it turns back into floats.
 *
 * A quantised matrix (rows, cols) is stored row by row, each row cut into
 * blocks of `elements` consecutive weights, each block `bytes` long. A
 * block holds small integers q and one or two scales, all little-endian,
 * and weight i of a block is
 *
 *   Q4_0  (32 in 18 bytes)   d * (q - 8)               d f16, then 16 bytes of 4-bit q
 *   Q4_1  (32 in 20 bytes)   d * q + m                 d f16, m f16, 16 bytes of 4-bit q
 *   Q8_0  (32 in 34 bytes)   d * q                     d f16, then 32 int8 q
 *   Q4_K  (256 in 144 bytes) d*sc[j] * q - dmin*mn[j]  d f16, dmin f16, 12 bytes of eight
 *                                                      6-bit (sc, mn), 128 bytes of 4-bit q;
 *                                                      j = i / 32
 *   Q6_K  (256 in 210 bytes) d*sc[j] * (q - 32)        128 bytes of q's low 4 bits, 64 of its
 *                                                      high 2, 16 int8 sc, d f16 (last);
 *                                                      j = i / 16
 *
 * The 4-bit formats of 32 keep weight i (< 16) in the low half of byte i
 * and weight i + 16 in its high half. Q4_K's 256 are four runs of 64: run
 * r's 32 bytes hold weights 64r + i (low halves) and 64r + 32 + i (high).
 * Q6_K's are two halves of 128; in half h, weight l has its low 4 bits in
 * byte 64h + l % 64 (the high half of the byte from l = 64 on) and its
 * high 2 bits in byte 32h + l % 32 of the second array, at bit 2 (l / 32).
 *
 * ember_dequantize below is the reference: each weight is computed with
 * the same float operations, in the same order, as the `gguf` Python
 * package's NumPy code (tests/interop/test_gguf_vs_python.py holds them
 * to it bit for bit), so that a product that dequantises on the fly can be
 * compared with dequantise-then-sgemm. It is host C, for the loaders, the
 * CPU backend and the tests; the GPU kernels read the same layouts
 * (backends/kernels/quant.kc).
 */
#ifndef EMBER_QUANT_H
#define EMBER_QUANT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ember.h"

/* The quantised dtypes: name, weights in a block, its bytes. The kernels
 * get them as #defines too (backends/kernels/kernels.c). */
#define EMBER_QUANT_TYPES(X)                                                                                 \
    X(Q4_0, 32, 18)                                                                                          \
    X(Q4_1, 32, 20)                                                                                          \
    X(Q8_0, 32, 34)                                                                                          \
    X(Q4_K, 256, 144)                                                                                        \
    X(Q6_K, 256, 210)

/* a quantised dtype's block: weights in it and its bytes; false for F32 and I32 */
static inline bool ember_quant_block(ember_dtype dtype, int64_t *elements, int64_t *bytes)
{
    switch (dtype) {
#define EMBER_QUANT_CASE(NAME, e, b)                                                                         \
    case EMBER_##NAME: *elements = e, *bytes = b; return true;
        EMBER_QUANT_TYPES(EMBER_QUANT_CASE)
#undef EMBER_QUANT_CASE
    default: return false;
    }
}

/* "F32", "Q4_K", ...: a dtype's name as GGUF and safetensors spell it
 * (ember_dtype_name in the public API) */
static inline const char *ember_dtype_label(ember_dtype dtype)
{
    switch (dtype) {
    case EMBER_F32: return "F32";
    case EMBER_I32: return "I32";
#define EMBER_QUANT_NAME(NAME, e, b)                                                                         \
    case EMBER_##NAME: return #NAME;
        EMBER_QUANT_TYPES(EMBER_QUANT_NAME)
#undef EMBER_QUANT_NAME
    }
    return "an unknown dtype";
}

static inline bool ember_dtype_quantised(ember_dtype dtype)
{
    int64_t e, b;
    return ember_quant_block(dtype, &e, &b);
}

/* IEEE half and bfloat16 to float, exactly (subnormals, infinities and
 * NaN payloads kept, as NumPy's astype(np.float32) does) */
static inline float ember_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0x1f) /* infinity or NaN */
        bits = sign | 0x7f800000u | (mant << 13);
    else if (exp != 0) /* normal */
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    else if (mant == 0) /* zero */
        bits = sign;
    else { /* subnormal: mant * 2^-24, normalised */
        int shift = 0;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            shift++;
        }
        bits = sign | ((uint32_t)(113 - shift) << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float ember_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t ember_quant_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Q4_K's scale and min of sub-block j (< 8) from its 12 packed bytes:
 * j < 4 in the low 6 bits of bytes j and 4 + j; j >= 4 in the halves of
 * byte 8 + (j - 4), topped by the 2 high bits of bytes j - 4 and j */
static inline void ember_q4k_scale_min(const uint8_t *s, int j, int *scale, int *min)
{
    if (j < 4) {
        *scale = s[j] & 63;
        *min = s[4 + j] & 63;
    } else {
        *scale = (s[4 + j] & 0x0f) | ((s[j - 4] >> 2) & 0x30);
        *min = (s[4 + j] >> 4) | ((s[j] >> 2) & 0x30);
    }
}

/* weight i of one block (i < its elements), as the reference computes it */
static inline float ember_quant_weight(ember_dtype dtype, const uint8_t *block, int i)
{
    switch (dtype) {
    case EMBER_Q4_0: {
        float d = ember_half_to_float(ember_quant_u16(block));
        int q = i < 16 ? block[2 + i] & 0x0f : block[2 + i - 16] >> 4;
        return d * (float)(q - 8);
    }
    case EMBER_Q4_1: {
        float d = ember_half_to_float(ember_quant_u16(block)),
              m = ember_half_to_float(ember_quant_u16(block + 2));
        int q = i < 16 ? block[4 + i] & 0x0f : block[4 + i - 16] >> 4;
        float dq = d * (float)q;
        return dq + m;
    }
    case EMBER_Q8_0: return (float)(int8_t)block[2 + i] * ember_half_to_float(ember_quant_u16(block));
    case EMBER_Q4_K: {
        float d = ember_half_to_float(ember_quant_u16(block)),
              dmin = ember_half_to_float(ember_quant_u16(block + 2));
        int j = i / 32, scale, min;
        ember_q4k_scale_min(block + 4, j, &scale, &min);
        const uint8_t *q = block + 16 + 32 * (j / 2);
        int v = j % 2 ? q[i % 32] >> 4 : q[i % 32] & 0x0f;
        float dl = d * (float)scale, ml = dmin * (float)min, dq = dl * (float)v;
        return dq - ml;
    }
    case EMBER_Q6_K: {
        const uint8_t *ql = block, *qh = block + 128;
        const int8_t *sc = (const int8_t *)(block + 192);
        float d = ember_half_to_float(ember_quant_u16(block + 208));
        int h = i / 128, l = i % 128;
        int lo = (ql[64 * h + l % 64] >> (4 * (l / 64))) & 0x0f,
            hi = (qh[32 * h + l % 32] >> (2 * (l / 32))) & 3;
        float dl = d * (float)sc[i / 16];
        return dl * (float)((lo | hi << 4) - 32);
    }
    default: return 0.0f;
    }
}

/* A whole block's weights into out: the same values as ember_quant_weight
 * gives one at a time, by loops a compiler can vectorise (the CPU's
 * products and the loaders run this one). */
static inline void ember_dequantize_block(ember_dtype dtype, const uint8_t *block, float *out)
{
    switch (dtype) {
    case EMBER_Q4_0:
    case EMBER_Q4_1: {
        bool q41 = dtype == EMBER_Q4_1;
        float d = ember_half_to_float(ember_quant_u16(block)),
              m = q41 ? ember_half_to_float(ember_quant_u16(block + 2)) : 0.0f;
        const uint8_t *q = block + (q41 ? 4 : 2);
        for (int i = 0; i < 16; i++) {
            int lo = q[i] & 0x0f, hi = q[i] >> 4;
            if (q41) {
                float a = d * (float)lo, b = d * (float)hi;
                out[i] = a + m;
                out[i + 16] = b + m;
            } else {
                out[i] = d * (float)(lo - 8);
                out[i + 16] = d * (float)(hi - 8);
            }
        }
        return;
    }
    case EMBER_Q8_0: {
        float d = ember_half_to_float(ember_quant_u16(block));
        for (int i = 0; i < 32; i++)
            out[i] = (float)(int8_t)block[2 + i] * d;
        return;
    }
    case EMBER_Q4_K: {
        float d = ember_half_to_float(ember_quant_u16(block)),
              dmin = ember_half_to_float(ember_quant_u16(block + 2));
        for (int j = 0; j < 8; j++) {
            int scale, min;
            ember_q4k_scale_min(block + 4, j, &scale, &min);
            float dl = d * (float)scale, ml = dmin * (float)min;
            const uint8_t *q = block + 16 + 32 * (j / 2);
            for (int i = 0; i < 32; i++) {
                float dq = dl * (float)(j % 2 ? q[i] >> 4 : q[i] & 0x0f);
                out[32 * j + i] = dq - ml;
            }
        }
        return;
    }
    case EMBER_Q6_K:
        for (int i = 0; i < 256; i++)
            out[i] = ember_quant_weight(dtype, block, i);
        return;
    default: return;
    }
}

/* out[0 .. n) = the first n weights of the blocks at src (n a multiple of
 * the block's elements) */
static inline void ember_dequantize(ember_dtype dtype, const uint8_t *src, int64_t n, float *out)
{
    int64_t elements, bytes;
    if (!ember_quant_block(dtype, &elements, &bytes))
        return;
    for (int64_t b = 0; b < n / elements; b++)
        ember_dequantize_block(dtype, src + b * bytes, out + b * elements);
}

#endif /* EMBER_QUANT_H */
