/* SPDX-License-Identifier: MIT */
/*
 * io/convert-impl.h — numbers as other programs store them, into the
 * float32 that ember computes with.
 *
 * PyTorch saves a state_dict with BatchNorm's num_batches_tracked as int64,
 * and models in half precision (float16, bfloat16) or double; ONNX files hold
 * the same kinds. Every loader that meets them converts through here, so
 * each conversion and its checks are written once:
 *
 *     float out[n];
 *     size_t bad;
 *     if (!ember_convert_to_f32(EMBER_NUM_I64, bytes, n, out, &bad))
 *         ... element `bad` cannot be a float32: refuse the file, naming it
 *
 * Sources are little-endian bytes (what safetensors and ONNX's raw_data
 * hold), read byte by byte so that the host's own order never matters.
 * A value that float32 cannot hold exactly enough is refused, not rounded
 * into something else: an integer beyond 2^24 (float32 has 24 bits of
 * mantissa: 16777217 would load as 16777216), a double beyond float32's
 * range (it would become an infinity), and any NaN or infinity (a model
 * that holds one gives only wrong answers).
 */
#ifndef EMBER_CONVERT_IMPL_H
#define EMBER_CONVERT_IMPL_H

#include <stdbool.h>
#include <stddef.h>

enum ember_num_kind {
    EMBER_NUM_F32,  /* IEEE binary32 */
    EMBER_NUM_F16,  /* IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits */
    EMBER_NUM_BF16, /* bfloat16: float32's top 16 bits */
    EMBER_NUM_F64,  /* IEEE binary64 */
    EMBER_NUM_I64,  /* two's complement, 8 bytes */
    EMBER_NUM_I32,  /* two's complement, 4 bytes */
};

/* Bytes per element of a kind. */
size_t ember_convert_width(enum ember_num_kind kind);

/* The kind a safetensors dtype names ("F16"), or -1 for one ember does not
 * convert (U8, BOOL, F8_E4M3, ...). */
int ember_convert_kind_of_safetensors(const char *dtype);

/* n elements of `kind` at `src` (n * width bytes, little-endian) into n
 * floats at `out`. Returns false at the first element that cannot be a
 * float32 (see above), with its index in *bad; `out` is then partly
 * written. */
bool ember_convert_to_f32(enum ember_num_kind kind, const unsigned char *src, size_t n, float *out,
                          size_t *bad);

#endif /* EMBER_CONVERT_IMPL_H */
