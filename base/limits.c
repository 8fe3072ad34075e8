/* SPDX-License-Identifier: MIT */
/* base/limits.c — the process's address-space limit (limits-impl.h). */
#include <stdio.h>

#include "limits-impl.h"
#include "platform.h"

bool ember_address_space_fits(uint64_t need, char *why, size_t why_len)
{
    uint64_t cap = ember_address_space_limit();
    if (cap == UINT64_MAX)
        return true;
    uint64_t used = ember_address_space_used();
    if (used < cap && cap - used >= need)
        return true;
    snprintf(why, why_len,
             "the address-space limit (ulimit -v %llu KiB, %llu MiB in use) leaves less than the "
             "%llu MiB it needs",
             (unsigned long long)(cap >> 10), (unsigned long long)(used >> 20),
             (unsigned long long)(need >> 20));
    return false;
}
