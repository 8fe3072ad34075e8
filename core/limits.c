/* SPDX-License-Identifier: MIT */
/* core/limits.c — the process's address-space limit (limits-impl.h). */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "limits-impl.h"

/* The address space mapped now: the first field of /proc/self/statm, in pages. */
static uint64_t address_space_in_use(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%llu", &pages) != 1)
        pages = 0;
    if (f)
        fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

bool ember_address_space_fits(uint64_t need, char *why, size_t why_len)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return true;
    uint64_t used = address_space_in_use(), cap = (uint64_t)limit.rlim_cur;
    if (used < cap && cap - used >= need)
        return true;
    snprintf(why, why_len, "the address-space limit (ulimit -v %llu KiB, %llu MiB in use) leaves less than the "
             "%llu MiB it needs", (unsigned long long)(cap >> 10), (unsigned long long)(used >> 20),
             (unsigned long long)(need >> 20));
    return false;
}
