/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-vec.h — a vector kernel written once for every width.
 *
 * A kernel file (cpu-conv-direct-vec.h, cpu-quant-vec.h) is written on the
 * names below and included once per width, with VEC_LANES set before each:
 *
 *     #define VEC_LANES 8        vec_t is vec8 (cpu-vec8.h: AVX2, NEON)
 *     #include "cpu-quant-vec.h"    and rows_vec8() is defined
 *     #undef VEC_LANES
 *     #define VEC_LANES 16       vec_t is vec16 (cpu-vec16.h: AVX-512)
 *     #include "cpu-quant-vec.h"    and rows_vec16()
 *
 * The names are macros read where the kernel is: vec_load is vec8_load in
 * the first copy and vec16_load in the second, and VEC_NAME(rows) names
 * each copy's function. A kernel's blocks (how many rows or channels it
 * keeps in registers) are set by the includer beside VEC_LANES, since
 * they follow the registers a width has (16 of AVX2, 32 of AVX-512).
 */
#ifndef EMBER_CPU_VEC_H
#define EMBER_CPU_VEC_H

#include "cpu-vec16.h"
#include "cpu-vec8.h"

#define VEC_CAT_(a, b, c) a##b##c
#define VEC_CAT(a, b, c)  VEC_CAT_(a, b, c)
/* vec8_op or vec16_op, by VEC_LANES */
#define VEC_OF(op) VEC_CAT(vec, VEC_LANES, _##op)
/* a function of the kernel, one a width: name_vec8, name_vec16 */
#define VEC_NAME(name) VEC_CAT(name, _vec, VEC_LANES)

#define vec_t           VEC_CAT(vec, VEC_LANES, )
#define VEC_FN          VEC_CAT(VEC, VEC_LANES, _FN)
#define VEC_INLINE      VEC_CAT(VEC, VEC_LANES, _INLINE)
#define vec_zero        VEC_OF(zero)
#define vec_load        VEC_OF(load)
#define vec_splat       VEC_OF(splat)
#define vec_set1        VEC_OF(set1)
#define vec_add         VEC_OF(add)
#define vec_mul         VEC_OF(mul)
#define vec_fma         VEC_OF(fma)
#define vec_sum         VEC_OF(sum)
#define vec_load_first  VEC_OF(load_first)
#define vec_store_first VEC_OF(store_first)
#define vec_from_i8x32  VEC_OF(from_i8x32)
#define vec_from_u4x32  VEC_OF(from_u4x32)

#endif /* EMBER_CPU_VEC_H */
