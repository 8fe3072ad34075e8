/* SPDX-License-Identifier: MIT */
/*
 * tests/gpu/fakes/fake_cuda_checks.c — two things the CUDA test double
 * holds ember's kernels to beyond what a GPU checks (fake_cuda.h):
 *
 *   launches at a lowered grid limit (EMBER_FAKE_CUDA_GRID_X): which
 *       kernels filled it, so ran their work in chunks;
 *   the numerics check (EMBER_FAKE_CUDA_NUMERICS=1, PTX mode): each launch
 *       run as the same kernel compiled for the host too, on copies of its
 *       memory, and the bits compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../ptxsim/ptxsim.h"
#include "fake_cuda.h"

/* ------------------------------------------------ launches at the limit */

/* With the grid's x limit lowered (EMBER_FAKE_CUDA_GRID_X), each kernel
 * launched, and whether some launch of it filled the limit: then ember
 * split its work there (ember_gpu_launch_each's next chunk runs with
 * `first` past 0; a kernel that loops over rows by group runs the loop
 * more than once). A plane launch's chunks (ember_gpu_plane_launches) may
 * stop short of the limit and are not told apart. fake_grid_report says
 * which kernels never filled it. */
static struct {
    pthread_mutex_t lock;
    const char *names[FAKE_MAX_KERNELS];
    bool split[FAKE_MAX_KERNELS];
    int count;
} limited = {.lock = PTHREAD_MUTEX_INITIALIZER};

void fake_grid_note(const struct fake_kernel *k, unsigned gx)
{
    if (!getenv("EMBER_FAKE_CUDA_GRID_X"))
        return;
    pthread_mutex_lock(&limited.lock);
    int i = 0;
    while (i < limited.count && strcmp(limited.names[i], k->name) != 0)
        i++;
    if (i == limited.count && limited.count < FAKE_MAX_KERNELS)
        limited.names[limited.count++] = k->name; /* the module's names: kept until the context goes */
    if (i < limited.count && gx == fake_max_grid_x())
        limited.split[i] = true;
    pthread_mutex_unlock(&limited.lock);
}

void fake_grid_report(void)
{
    if (!getenv("EMBER_FAKE_CUDA_GRID_X"))
        return;
    char split[4096] = "", whole[4096] = "";
    int n_split = 0;
    pthread_mutex_lock(&limited.lock);
    for (int i = 0; i < limited.count; i++) {
        char *to = limited.split[i] ? split : whole;
        size_t len = strlen(to);
        snprintf(to + len, sizeof split - len, " %s", limited.names[i]);
        n_split += limited.split[i];
    }
    fake_say("the grid's x limit, lowered to %u blocks, was filled by launches of %d of the %d kernels "
             "launched;%s%s",
             fake_max_grid_x(), n_split, limited.count, whole[0] ? " never:" : " every one", whole);
    limited.count = 0;
    memset(limited.split, 0, sizeof limited.split);
    pthread_mutex_unlock(&limited.lock);
}

/* ---------------------------------------------------- the numerics check */

/* EMBER_FAKE_CUDA_NUMERICS=1, in PTX mode: the launch runs twice, first as
 * the same kernel compiled for the host (prelude-host.kh: ember's kernel C,
 * IEEE round-to-nearest, nothing fused, the same order of operations) on a
 * copy of every allocation an argument points into, then as its PTX in the
 * simulator on the allocations themselves, each fused multiply-add
 * executed unfused (PTXSIM_UNFUSED). Each allocation must then hold the
 * same bits as its copy (NaN against any NaN): a rounding the kernel's C
 * does not ask for (an .rz), a changed constant or a changed operand shows
 * as a differing word, where comparing with a reference at a tolerance lets
 * it through. It holds where the PTX computes what its C does: the built-in
 * PTX (clang, whose softmath.kh is the host's too); an NVRTC's PTX calls
 * libdevice's expf and logf, which the host's are not. The copies end
 * against a page nothing may touch, as device memory does. */
struct shadow {
    uint64_t base, bytes;
    int argument;
    char *region; /* the copy's pages, the last one untouchable */
    size_t region_bytes;
    unsigned char *copy;
};

static bool same_word(const unsigned char *a, const unsigned char *b, size_t bytes)
{
    uint32_t x = 0, y = 0;
    memcpy(&x, a, bytes);
    memcpy(&y, b, bytes);
    bool nan_x = (x & 0x7f800000u) == 0x7f800000u && (x & 0x7fffffu),
         nan_y = (y & 0x7f800000u) == 0x7f800000u && (y & 0x7fffffu);
    return x == y || (bytes == 4 && nan_x && nan_y);
}

static float as_float(const unsigned char *p)
{
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* whether the allocation differs from the host's copy, said on stderr */
static bool differs(const struct shadow *s, const char *kernel)
{
    const unsigned char *now = (const unsigned char *)(uintptr_t)s->base;
    if (memcmp(now, s->copy, s->bytes) == 0)
        return false;
    size_t words = 0, first = 0;
    for (size_t at = 0; at < s->bytes; at += 4) {
        size_t n = s->bytes - at < 4 ? s->bytes - at : 4;
        if (!same_word(now + at, s->copy + at, n) && words++ == 0)
            first = at;
    }
    if (!words)
        return false;
    uint32_t ptx = 0, host = 0;
    memcpy(&ptx, now + first, s->bytes - first < 4 ? s->bytes - first : 4);
    memcpy(&host, s->copy + first, s->bytes - first < 4 ? s->bytes - first : 4);
    fake_say(
        "kernel %s: the numerics check: word %zu of the allocation of %llu bytes at %#llx (argument %d) is "
        "%.9g (%#010x) after the PTX, %.9g (%#010x) after the same kernel compiled for the host, at "
        "round-to-nearest with nothing fused; %zu word%s of it differ%s",
        kernel, first / 4, (unsigned long long)s->bytes, (unsigned long long)s->base, s->argument,
        as_float((const unsigned char *)&ptx), ptx, as_float((const unsigned char *)&host), host, words,
        words == 1 ? "" : "s", words == 1 ? "s" : "");
    return true;
}

/* Pages for copies, kept from launch to launch (the chunks of one primitive
 * copy the same allocations): mapping fresh ones each time cost more than
 * the check. Only the engine's holder uses them. */
static struct {
    char *region;
    size_t bytes;
} spare[8];

static char *pages_take(size_t bytes)
{
    for (size_t i = 0; i < sizeof spare / sizeof spare[0]; i++)
        if (spare[i].region && spare[i].bytes == bytes) {
            char *region = spare[i].region;
            spare[i].region = NULL;
            return region;
        }
    return fake_pages_map(bytes);
}

static void pages_give(char *region, size_t bytes)
{
    static size_t next;
    size_t i = next++ % (sizeof spare / sizeof spare[0]);
    if (spare[i].region)
        fake_pages_unmap(spare[i].region, spare[i].bytes);
    spare[i].region = region;
    spare[i].bytes = bytes;
}

CUresult fake_numerics_launch(const struct fake_launch *l)
{
    const struct fake_function *f = l->function;
    struct shadow shadows[FAKE_MAX_ARGS];
    struct fake_launch on_copies = *l; /* its pointers moved onto the copies */
    int count = 0;
    CUresult r = FAKE_SUCCESS;
    size_t page = fake_page_size();
    for (int i = 0; i < l->nargs && r == FAKE_SUCCESS; i++) {
        uint64_t ptr = 0, base, bytes;
        memcpy(&ptr, l->argv[i], sizeof ptr);
        if (f->kinds[i] != 'p' || !fake_memory_find(NULL, ptr, &base, &bytes))
            continue;
        int s = 0;
        while (s < count && shadows[s].base != base)
            s++;
        if (s == count) {
            struct shadow *n = &shadows[count++];
            size_t span = (bytes + page - 1) / page * page;
            *n = (struct shadow){.base = base, .bytes = bytes, .argument = i, .region_bytes = span + page};
            if (!(n->region = pages_take(n->region_bytes))) {
                count--;
                r = FAKE_OUT_OF_MEMORY;
                break;
            }
            fake_pages_forbid(n->region + span, page); /* again: a spare's last page already is */
            n->copy = (unsigned char *)n->region + span - bytes;
            memcpy(n->copy, (void *)(uintptr_t)base, bytes);
        }
        uint64_t moved = (uint64_t)(uintptr_t)shadows[s].copy + (ptr - base);
        memcpy(on_copies.values[i], &moved, sizeof moved);
        on_copies.argv[i] = on_copies.values[i];
    }
    for (int i = 0; i < l->nargs; i++) /* argv points into the launch's own values */
        if (on_copies.argv[i] == l->values[i])
            on_copies.argv[i] = on_copies.values[i];
    if (r == FAKE_SUCCESS && (r = fake_exec_on_host(&on_copies, f->host)) != FAKE_SUCCESS)
        fake_say("kernel %s: the numerics check: its host build failed as above", f->kernel->name);
    if (r == FAKE_SUCCESS && (r = fake_exec_in_simulator(l, PTXSIM_UNFUSED)) == FAKE_SUCCESS)
        for (int s = 0; s < count && r == FAKE_SUCCESS; s++)
            if (differs(&shadows[s], f->kernel->name))
                r = FAKE_LAUNCH_FAILED;
    for (int s = 0; s < count; s++)
        pages_give(shadows[s].region, shadows[s].region_bytes);
    return r;
}
