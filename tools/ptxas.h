/* SPDX-License-Identifier: MIT */
/*
 * tools/ptxas.h — NVIDIA's PTX assembler, found and asked what each kernel
 * uses, for `ember ptx --resources`.
 *
 * `ptxas -v` assembles PTX for one arch and reports, per .entry, the
 * registers, shared and constant memory, stack frame and spills: what
 * decides how many threads a multiprocessor holds. It needs no GPU, only a
 * ptxas that knows the arch; each knows a range (CUDA 13's sm_75 and up,
 * CUDA 11.8's sm_35 to sm_90, CUDA 10.2's sm_30 to sm_75), so several are
 * looked for, and the first that knows the arch and takes the PTX used:
 *
 *   struct ptxas found[PTXAS_MAX];
 *   struct ptxas_usage *rows = NULL;
 *   int n = ptxas_find(found, PTXAS_MAX), count = -1;
 *   for (int i = 0; i < n && count < 0; i++)
 *       if (ptxas_knows(&found[i], 35))
 *           count = ptxas_resources(&found[i], ptx, 35, &rows, found[i].why, sizeof found[i].why);
 *   // rows[0 .. count): sgemm 64 registers, 8192 bytes smem, ...
 *   free(rows);
 */
#ifndef EMBER_PTXAS_H
#define EMBER_PTXAS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

enum { PTXAS_MAX = 16, PTXAS_ARCHS = 64 };

/* One ptxas looked at. */
struct ptxas {
    char path[PATH_MAX];
    const char *source;     /* where it was looked for: "EMBER_PTXAS", "PATH", ... */
    char version[64];       /* "11.8 (V11.8.89)"; empty when it does not run */
    char why[512];          /* why it was not used; empty until then */
    int archs[PTXAS_ARCHS]; /* the sm_NN its -arch takes, ascending; none when --help did not say */
    int arch_count;
};

/* One kernel's resources, as ptxas reported them; -1 where it said nothing
 * (constant memory, for sm_90 and newer). Sizes in bytes. */
struct ptxas_usage {
    char kernel[128];
    long registers, smem, cmem, stack, spill_stores, spill_loads;
};

/* Every ptxas there is, in the order to try them: $EMBER_PTXAS (programs
 * or folders, ':' between; "only:" first to look nowhere else, "none" for
 * none), the first ptxas on PATH, the toolkits' (/usr/local/cuda*, /opt/cuda),
 * then the PyPI wheel nvidia-cuda-nvcc-cu11's: beside each $EMBER_NVRTC
 * entry, in build/cu11 beside this program (scripts/setup.sh --tests), in
 * $VIRTUAL_ENV and in ~/.local. Each is run once for its version and archs.
 * Fills up to `max`, returns how many. */
int ptxas_find(struct ptxas *found, int max);

/* Whether `a` runs and takes -arch=sm_`sm` (or did not say what it takes). */
bool ptxas_knows(const struct ptxas *a, int sm);

/* What `a` takes, in words: "sm_35 to sm_90". */
void ptxas_arch_range(const struct ptxas *a, char *s, size_t len);

/* Assembles `ptx` for sm_`sm` with `ptxas -v`, through temporary files
 * that are removed after. Returns the number of entries
 * with `*usage` an array of them to free(), in the order ptxas gave them;
 * -1 with ptxas's own message in `why`. */
int ptxas_resources(const struct ptxas *a, const char *ptx, int sm, struct ptxas_usage **usage, char *why,
                    size_t why_len);

#endif /* EMBER_PTXAS_H */
