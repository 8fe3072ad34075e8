/* SPDX-License-Identifier: MIT */
/*
 * io/convert.c — other programs' numbers into float32 (convert-impl.h
 * says which, and what is refused).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "convert-impl.h"

size_t ember_convert_width(enum ember_num_kind kind)
{
    switch (kind) {
    case EMBER_NUM_F16:
    case EMBER_NUM_BF16: return 2;
    case EMBER_NUM_F32:
    case EMBER_NUM_I32: return 4;
    case EMBER_NUM_F64:
    case EMBER_NUM_I64: return 8;
    }
    return 0;
}

int ember_convert_kind_of_safetensors(const char *dtype)
{
    static const struct {
        const char *name;
        enum ember_num_kind kind;
    } names[] = {{"F32", EMBER_NUM_F32}, {"F16", EMBER_NUM_F16}, {"BF16", EMBER_NUM_BF16},
                 {"F64", EMBER_NUM_F64}, {"I64", EMBER_NUM_I64}, {"I32", EMBER_NUM_I32}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].name, dtype) == 0)
            return (int)names[i].kind;
    return -1;
}

/* the `width` bytes at p, little-endian */
static uint64_t load_le(const unsigned char *p, size_t width)
{
    uint64_t v = 0;
    for (size_t i = width; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* binary16 to binary32 is exact: every half is a float */
static float half_to_float(uint32_t h, bool *finite)
{
    uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    float sign = (h & 0x8000) ? -1.0f : 1.0f;
    *finite = exponent != 0x1f;
    if (exponent == 0) /* zero or subnormal: mantissa * 2^-24 */
        return sign * ldexpf((float)mantissa, -24);
    return sign * ldexpf((float)(mantissa | 0x400), (int)exponent - 25);
}

/* integers that float32 holds exactly: |v| <= 2^24 */
#define EXACT_INTEGER (1 << 24)

bool ember_convert_to_f32(enum ember_num_kind kind, const unsigned char *src, size_t n, float *out,
                          size_t *bad)
{
    size_t width = ember_convert_width(kind);
    for (size_t i = 0; i < n; i++, src += width) {
        uint64_t raw = load_le(src, width);
        bool ok = true;
        float value = 0.0f;
        switch (kind) {
        case EMBER_NUM_F32: {
            uint32_t u = (uint32_t)raw;
            memcpy(&value, &u, 4);
            ok = isfinite(value);
            break;
        }
        case EMBER_NUM_F16: value = half_to_float((uint32_t)raw, &ok); break;
        case EMBER_NUM_BF16: {
            uint32_t u = (uint32_t)raw << 16;
            memcpy(&value, &u, 4);
            ok = isfinite(value);
            break;
        }
        case EMBER_NUM_F64: {
            double d;
            memcpy(&d, &raw, 8);
            ok = isfinite(d) && fabs(d) <= FLT_MAX;
            value = ok ? (float)d : 0.0f;
            break;
        }
        case EMBER_NUM_I64:
        case EMBER_NUM_I32: {
            int64_t v = kind == EMBER_NUM_I64 ? (int64_t)raw : (int64_t)(int32_t)(uint32_t)raw;
            ok = v >= -EXACT_INTEGER && v <= EXACT_INTEGER;
            value = (float)v;
            break;
        }
        }
        if (!ok) {
            *bad = i;
            return false;
        }
        out[i] = value;
    }
    return true;
}
