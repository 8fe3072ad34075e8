/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-gemm-plain.c — sgemm as a plain loop, for a build
 * without OpenBLAS, a machine whose address-space limit leaves no room for
 * OpenBLAS's buffers, and the last columns the skinny kernels leave
 * (cpu-gemm-skinny.c). On its own, so that the two products that fall back
 * to it (cpu-gemm.c and cpu-gemm-skinny.c) depend on it and not on each
 * other.
 */
#include "cpu-impl.h"
#include <string.h>

/* C = alpha * op(A) op(B) + beta * C, one row of C at a time, with the k loop
 * outside the j loop so the inner loop runs along contiguous rows. */
void cpu_gemm_plain(const struct ember_gemm *g, int64_t m, int64_t n, const float *a, const float *b,
                    float *c)
{
    float row[512];
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * g->ldc;
        for (int64_t j0 = 0; j0 < n; j0 += 512) {
            int64_t nj = n - j0 < 512 ? n - j0 : 512;
            memset(row, 0, (size_t)nj * sizeof *row);
            for (int64_t p = 0; p < g->k; p++) {
                float aip = g->trans_a ? a[p * g->lda + i] : a[i * g->lda + p];
                if (g->trans_b)
                    for (int64_t j = 0; j < nj; j++)
                        row[j] += aip * b[(j0 + j) * g->ldb + p];
                else
                    for (int64_t j = 0; j < nj; j++)
                        row[j] += aip * b[p * g->ldb + j0 + j];
            }
            for (int64_t j = 0; j < nj; j++)
                ci[j0 + j] = g->alpha * row[j] + (g->beta != 0.0f ? g->beta * ci[j0 + j] : 0.0f);
        }
    }
}
