/* SPDX-License-Identifier: MIT */
/*
 * backends/backend.c — the names of the contract's primitives and ops, made
 * from its lists (backend.h), for the profile's rows and the devices report.
 */
#include "backend.h"

#define PRIMITIVE_NAME(name, ...) #name,
const char *const ember_primitive_names[] = {EMBER_PRIMITIVES(PRIMITIVE_NAME)};
#undef PRIMITIVE_NAME
#define UNARY_LABEL(NAME, name, math)  "unary " #name,
#define BINARY_LABEL(NAME, name, math) "binary " #name,
#define REDUCE_LABEL(NAME, name, math) "reduce " #name,
const char *const ember_unary_labels[] = {EMBER_UNARY_OPS(UNARY_LABEL)};
const char *const ember_binary_labels[] = {EMBER_BINARY_OPS(BINARY_LABEL)};
const char *const ember_reduce_labels[] = {EMBER_REDUCE_OPS(REDUCE_LABEL)};
#undef UNARY_LABEL
#undef BINARY_LABEL
#undef REDUCE_LABEL
