/* SPDX-License-Identifier: MIT */
/*
 * base/limits-impl.h — the process's address-space limit, for code that is
 * about to start a library which reserves large regions and does not
 * survive failing to get them.
 *
 * Under `ulimit -v` (RLIMIT_AS), OpenBLAS retries a failed buffer
 * allocation forever and PoCL aborts or crashes while it starts; neither
 * can be made to fail cleanly from outside. So ember asks first: a library
 * whose needs do not fit is not started, and the reason names the limit.
 */
#ifndef EMBER_LIMITS_IMPL_H
#define EMBER_LIMITS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when `need` bytes of address space are left below the limit (or
 * there is none); else false, with "the address-space limit (ulimit -v N
 * KiB, M MiB in use) leaves less than X MiB" in `why`. */
bool ember_address_space_fits(uint64_t need, char *why, size_t why_len);

#endif /* EMBER_LIMITS_IMPL_H */
