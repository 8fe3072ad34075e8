/* SPDX-License-Identifier: MIT */
/*
 * backends/cpu/cpu-blas.h — OpenBLAS's CBLAS, under the names the CPU
 * backend calls it by.
 *
 * Debian's libopenblas-dev gives cblas_sgemm and openblas_*. The Windows
 * build links PyPI's scipy-openblas32 instead (docs/windows.md), whose
 * every symbol carries the prefix scipy_ so that it cannot clash with
 * another OpenBLAS in the same process; its pkg-config file says so with
 * BLAS_SYMBOL_PREFIX=scipy_, and the names below follow.
 */
#ifndef EMBER_CPU_BLAS_H
#define EMBER_CPU_BLAS_H
#include <cblas.h>

#ifdef EMBER_BLAS_PREFIX_SCIPY
#define cblas_sgemm              scipy_cblas_sgemm
#define openblas_get_config      scipy_openblas_get_config
#define openblas_get_num_threads scipy_openblas_get_num_threads
#define openblas_set_num_threads scipy_openblas_set_num_threads
#endif
#endif /* EMBER_CPU_BLAS_H */
