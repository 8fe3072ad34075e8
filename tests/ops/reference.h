/* SPDX-License-Identifier: MIT */
/*
 * tests/ops/reference.h — the readable reference of every backend primitive.
 *
 * Plain loops straight from the definitions in backends/backend.h, summing in
 * double, with no threads and no tricks: the truth that every backend is
 * held to by tests/ops/test_parity.c. The signatures are the primitives' own,
 * from the one list, on host memory.
 */
#ifndef EMBER_REFERENCE_H
#define EMBER_REFERENCE_H

#include "backend.h"

/* ref_fill, ref_unary, ...: every primitive of backends/backend.h's list, with
 * its signature; `dev` is unused and may be NULL, and an ember_ptr's buf is
 * a host pointer, to float or int32_t elements (REF_PTR makes one). */
#define REF_PRIMITIVE_DECLARE(name, params, ...) ember_status ref_##name params;
EMBER_PRIMITIVES(REF_PRIMITIVE_DECLARE)
#undef REF_PRIMITIVE_DECLARE

/* an ember_ptr of the reference: host memory */
#define REF_PTR(p) ((ember_ptr){.buf = (void *)(p), .off = 0})
#define REF_F32(p) ((float *)(p).buf + (p).off)
#define REF_I32(p) ((int32_t *)(p).buf + (p).off)

#endif /* EMBER_REFERENCE_H */
