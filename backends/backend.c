/* SPDX-License-Identifier: MIT */
/*
 * backends/backend.c — the names of the contract's primitives and ops, made
 * from its lists (backend.h, base/elementwise-impl.h), for the profile's
 * rows and the devices report, and which elementwise ops call a math
 * function, for the GPUs' choice of kernel.
 */
#include "backend.h"

#define PRIMITIVE_NAME(name, ...) #name,
const char *const ember_primitive_names[] = {EMBER_PRIMITIVES(PRIMITIVE_NAME)};
#undef PRIMITIVE_NAME

#define UNARY_LABEL(NAME, name, ...)    "unary " #name,
#define BINARY_LABEL(NAME, name, ...)   "binary " #name,
#define BACKWARD_LABEL(NAME, name, ...) "binary " #name "_backward",
#define REDUCE_LABEL(NAME, name, math)  "reduce " #name,
const char *const ember_unary_labels[] = {EMBER_UNARY_PRIMITIVES(UNARY_LABEL) EMBER_ACTIVATIONS(UNARY_LABEL)};
const char *const ember_binary_labels[] = {EMBER_BINARY_PRIMITIVES(BINARY_LABEL)
                                               EMBER_ACTIVATIONS(BACKWARD_LABEL)};
const char *const ember_reduce_labels[] = {EMBER_REDUCE_OPS(REDUCE_LABEL)};
#undef UNARY_LABEL
#undef BINARY_LABEL
#undef BACKWARD_LABEL
#undef REDUCE_LABEL

#define UNARY_MATH(NAME, name, f, math, ...)                             EMBER_ELEMENTWISE_##math,
#define BINARY_MATH(NAME, name, f, math)                                 EMBER_ELEMENTWISE_##math,
#define FORWARD_MATH(NAME, name, param, f, fmath, ...)                   EMBER_ELEMENTWISE_##fmath,
#define BACKWARD_MATH(NAME, name, param, f, fmath, saves, g, gmath, ...) EMBER_ELEMENTWISE_##gmath,
const bool ember_unary_needs_math[EMBER_UNARY_COUNT] = {EMBER_UNARY_PRIMITIVES(UNARY_MATH)
                                                            EMBER_ACTIVATIONS(FORWARD_MATH)};
const bool ember_binary_needs_math[EMBER_BINARY_COUNT] = {EMBER_BINARY_PRIMITIVES(BINARY_MATH)
                                                              EMBER_ACTIVATIONS(BACKWARD_MATH)};
#undef UNARY_MATH
#undef BINARY_MATH
#undef FORWARD_MATH
#undef BACKWARD_MATH
