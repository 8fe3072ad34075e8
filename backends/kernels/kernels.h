/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/kernels.h — the device kernels' sources, one text for
 * every GPU backend (docs/design.md, "The GPU kernels and the OpenCL backend").
 *
 * Each primitive of backends/backend.h is written once, in the C subset that
 * README.md beside this file describes, in one file per op family
 * (elementwise.kc, gemm.kc, ...). A short prelude per dialect maps the
 * subset's few macros (KERNEL, GLOBAL, LOCAL, BARRIER, the thread and group
 * ids, the math functions) onto OpenCL C 1.2, CUDA C for NVRTC, clang's
 * CUDA dialect for NVPTX without CUDA headers, or plain C for the host (the
 * CUDA test double runs that one). A backend asks for a whole program and
 * compiles it with its own compiler:
 *
 *     char why[256], defines[256];
 *     char *src = ember_kernel_program(EMBER_DIALECT_OPENCL, EMBER_KERNEL_ALL_FAMILIES,
 *                                      why, sizeof why);
 *     if (!src) return fail("%s", why);
 *     struct ember_kernel_tuning t = ember_kernel_tuning_default();
 *     ember_kernel_defines(&t, defines, sizeof defines);  // "-DEMBER_WG_SIZE=64 ..."
 *     build(src, defines);                                  // clBuildProgram, nvrtcCompileProgram
 *     for (int k = 0; k < EMBER_KERNEL_COUNT; k++)
 *         lookup(ember_kernel_name(k));                     // clCreateKernel, cuModuleGetFunction
 *     free(src);
 *
 * The sources are embedded in the library at build time (kernels.cmake);
 * with EMBER_KERNEL_DIR set, they are read from that folder instead, so a
 * kernel can be edited and rerun without rebuilding ember.
 */
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H

#include <stdbool.h>
#include <stddef.h>

/* The dialects a program can be rendered in. */
#define EMBER_KERNEL_DIALECTS(X)                                                                             \
    X(OPENCL, opencl, "OpenCL C 1.2")                                                                        \
    X(CUDA, cuda, "CUDA C for NVRTC")                                                                        \
    X(NVPTX, nvptx, "clang's CUDA dialect without CUDA headers, for the baseline PTX")                       \
    X(HOST, host, "plain C11, run on the CPU by the CUDA test double")

/* The op families, one source file each (<name>.kc). */
#define EMBER_KERNEL_FAMILIES(X)                                                                             \
    X(ELEMENTWISE, elementwise, "fill, copy, unary and binary ops, dense and strided")                       \
    X(REDUCE, reduce, "sum and max over the middle axis of (outer, r, inner)")                               \
    X(GEMM, gemm, "tiled, batched sgemm with transposes")                                                    \
    X(CONV, conv, "im2col, col2im, conv_direct and conv_grouped")                                            \
    X(POOL, pool, "max-pool and average-pool, forward and backward")                                         \
    X(LOSS, loss, "fused softmax-cross-entropy forward and backward")                                        \
    X(OPTIM, optim, "fused Adam and SGD steps")                                                              \
    X(DROPOUT, dropout, "dropout's mask, the same for a seed on every backend")                              \
    X(SOFTMAX, softmax, "softmax over each row, with attention's causal mask, forward and backward")         \
    X(NORM, norm, "layer normalization over rows, batch normalization over channels")                        \
    X(EMBEDDING, embedding, "an embedding's gather and scatter-add")                                         \
    X(QUANT, quant, "products with block-quantised weights, and their rows dequantised")                     \
    X(ROPE, rope, "rotary position embedding, forward and backward")

/* Every kernel: its family, its entry-point name (the same in every
 * dialect) and what it computes. The order is the enum's. */
#define EMBER_KERNEL_LIST(X)                                                                                 \
    X(ELEMENTWISE, fill, "out[i] = value")                                                                   \
    X(ELEMENTWISE, copy_dense, "out[i] = a[i], bits (F32 or I32)")                                           \
    X(ELEMENTWISE, copy_strided, "out[at(i)] = a[at(i)], bits, up to 4 axes")                                \
    X(ELEMENTWISE, copy_rows, "the same, by rows of a long last axis, no division per element")              \
    X(ELEMENTWISE, unary_dense, "out[i] = f(a[i]), f calling no math function")                              \
    X(ELEMENTWISE, unary_dense_math, "out[i] = f(a[i]), f calling a math function (exp, tanh, ...)")         \
    X(ELEMENTWISE, unary_strided, "out[at(i)] = f(a[at(i)]), up to 4 axes")                                  \
    X(ELEMENTWISE, binary_dense, "out[i] = f(a[i], b[i]), f calling no math function")                       \
    X(ELEMENTWISE, binary_dense_math, "out[i] = f(a[i], b[i]), f calling a math function")                   \
    X(ELEMENTWISE, binary_strided, "out[at(i)] = f(a[at(i)], b[at(i)]), up to 4 axes")                       \
    X(REDUCE, reduce, "out[o, i] = alpha * R_k in[o, k, i] + beta * out[o, i]")                              \
    X(REDUCE, reduce_rows, "the same for inner == 1: rows of neighbouring values")                           \
    X(GEMM, sgemm, "C = alpha * op(A) @ op(B) + beta * C, batched")                                          \
    X(GEMM, sgemm_direct, "the same, one work-item per element of C, for small products")                    \
    X(GEMM, sgemm_wide, "the same, B not transposed, a block of few rows and many columns per work-item")    \
    X(GEMM, sgemm_split, "the same, a small C over a long k, each group splitting k for one block of C")     \
    X(CONV, im2col, "col[b, (c, ki, kj), (oy, ox)] = x[b, c, oy*s - p + ki, ox*s - p + kj]")                 \
    X(CONV, col2im, "dx = the adjoint of im2col, gathered")                                                  \
    X(CONV, conv_direct_forward, "y = conv2d(x, w) + beta * y, no columns")                                  \
    X(CONV, conv_direct_input_grad, "dx = the adjoint of conv2d applied to dy, no columns")                  \
    X(CONV, conv_direct_weight_grad, "dw = the sum over the batch of dy (*) x + beta * dw")                  \
    X(CONV, conv_grouped_forward, "y = conv2d(x, w, groups) + beta * y, each output from its group")         \
    X(CONV, conv_grouped_input_grad, "dx = the adjoint of the grouped conv2d applied to dy")                 \
    X(CONV, conv_grouped_weight_grad, "dw = the sum over a slice of the batch of dy (*) x + beta * dw")      \
    X(POOL, max_pool2d_forward, "y, argmax = max over each window")                                          \
    X(POOL, max_pool2d_2x2_forward, "the same for 2x2 windows at stride 2, by output rows (CPU devices)")    \
    X(POOL, max_pool2d_2x2_backward, "dx = dy at each 2x2 window's argmax, 0 elsewhere, windows tiling dx")  \
    X(POOL, max_pool2d_backward, "dx[p] = sum of dy[o] whose argmax is p, gathered")                         \
    X(POOL, max_pool2d_backward_scatter, "dx[argmax[o]] = dy[o], for windows that do not overlap")           \
    X(POOL, avg_pool2d_forward, "y = the mean of each window")                                               \
    X(POOL, avg_pool2d_backward, "dx = sum of dy / k^2 over the windows holding each position, gathered")    \
    X(LOSS, cross_entropy_forward, "prob = softmax(logits), loss = -log prob[target]")                       \
    X(LOSS, cross_entropy_forward_rows, "the same, one work-item per row, for few classes")                  \
    X(LOSS, cross_entropy_backward, "dlogits = (prob - onehot(target)) * scale * dloss")                     \
    X(OPTIM, adam_step, "param -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)")                               \
    X(OPTIM, sgd_step, "param -= lr * (momentum, nesterov) g")                                               \
    X(DROPOUT, dropout_mask, "mask[i] = hash(seed, i) >= p * 2^32 ? 1 / (1 - p) : 0")                        \
    X(SOFTMAX, softmax_forward, "y = softmax of each row, the keys after a query masked when causal")        \
    X(SOFTMAX, softmax_backward, "dx = y * (dy - sum(dy * y)) over each row")                                \
    X(SOFTMAX, softmax_forward_rows, "softmax_forward, one work-item per row (CPU devices, short rows)")     \
    X(SOFTMAX, softmax_backward_rows, "softmax_backward, one work-item per row")                             \
    X(NORM, layer_norm_forward, "y = (x - mean) * rstd * weight + bias over each row; xhat, rstd kept")      \
    X(NORM, layer_norm_backward, "dx = rstd * (g - mean g - xhat * mean(g xhat)), g = dy * weight")          \
    X(NORM, layer_norm_forward_rows, "layer_norm_forward, one work-item per row (CPU devices, short rows)")  \
    X(NORM, layer_norm_backward_rows, "layer_norm_backward, one work-item per row")                          \
    X(NORM, rms_norm_forward, "y = x * rrms * weight, rrms = 1 / sqrt(mean(x^2) + eps) over each row")       \
    X(NORM, rms_norm_forward_rows, "rms_norm_forward, one work-item per row")                                \
    X(NORM, batch_norm_planes, "each plane's mean and M2 (sum of squared differences from it) into work")    \
    X(NORM, batch_norm_planes_rows,                                                                          \
      "batch_norm_planes, one work-item per plane (CPU devices, short planes)")                              \
    X(NORM, batch_norm_channels, "each channel's mean, invstd from its planes; running statistics blended")  \
    X(NORM, batch_norm_apply, "xhat = (x - mean) * invstd, y = xhat * weight + bias, per channel")           \
    X(NORM, batch_norm_grad_planes, "each plane's sum of dy and of dy * xhat into work")                     \
    X(NORM, batch_norm_grad_planes_rows, "batch_norm_grad_planes, one work-item per plane")                  \
    X(NORM, batch_norm_grad_channels, "dbias = sum dy, dweight = sum dy * xhat over each channel's planes")  \
    X(NORM, batch_norm_dx, "dx = weight invstd (dy - dbias / m - xhat dweight / m)")                         \
    X(EMBEDDING, embedding_forward, "out[i, :] = weight[index[i], :]")                                       \
    X(EMBEDDING, embedding_backward, "dweight[v, :] += sum of dy[i, :] over index[i] == v, in order")        \
    X(QUANT, quant_matmul, "y = x @ dequantised(W)^T + beta * y, a group per row of W")                      \
    X(QUANT, quant_matmul_rows, "the same, a work-item per row of W (CPU devices)")                          \
    X(QUANT, dequantize, "out[i, :] = dequantised row index[i] of W")                                        \
    X(ROPE, rope, "each head's pairs turned by their position's angles (or back)")

/* The values a program is compiled with, as -D<NAME>=<value>: each kernel
 * reads them as constants (local array sizes, tile shapes). Defaults suit
 * small old GPUs: 64 work-items and 4 KiB of local memory per group.
 * wide_cols and run are 1 on GPUs, where neighbouring work-items must
 * touch neighbouring addresses. A CPU device (PoCL) runs a group's
 * work-items one after another and wants the opposite, runs of neighbouring
 * elements inside each work-item, which its compiler turns into vector
 * loads: backends/opencl/opencl.c picks 8 for it. The launch plans in
 * gpu-*.c read run > 1 as such a device (one work-item per row of a
 * reduction, the direct sgemm for a small C over a long k, 2x2 pooling by
 * rows). */
#define EMBER_KERNEL_TUNING(X)                                                                               \
    X(EMBER_WG_SIZE, wg_size, 64, "work-items per group of the 1-d kernels; a power of two")                 \
    X(EMBER_TILE_M, tile_m, 32, "sgemm: rows of C per work-group")                                           \
    X(EMBER_TILE_N, tile_n, 32, "sgemm: columns of C per work-group")                                        \
    X(EMBER_TILE_K, tile_k, 16, "sgemm: depth of the A and B tiles held in local memory")                    \
    X(EMBER_REG_M, reg_m, 4, "sgemm: rows of C per work-item")                                               \
    X(EMBER_REG_N, reg_n, 4, "sgemm: columns of C per work-item")                                            \
    X(EMBER_WIDE_ROWS, wide_rows, 8, "sgemm_wide: rows of C per work-item")                                  \
    X(EMBER_WIDE_COLS, wide_cols, 1, "sgemm_wide: neighbouring columns of C per work-item (1: coalesced)")   \
    X(EMBER_RUN, run, 1, "neighbouring values a work-item adds as one run (sgemm_direct, reduce_rows)")

#define EMBER_KERNEL_ENUM2(NAME, name, what) EMBER_DIALECT_##NAME,
enum ember_kernel_dialect { EMBER_KERNEL_DIALECTS(EMBER_KERNEL_ENUM2) EMBER_DIALECT_COUNT };
#undef EMBER_KERNEL_ENUM2
#define EMBER_KERNEL_ENUM2(NAME, name, what) EMBER_FAMILY_##NAME,
enum ember_kernel_family { EMBER_KERNEL_FAMILIES(EMBER_KERNEL_ENUM2) EMBER_FAMILY_COUNT };
#undef EMBER_KERNEL_ENUM2
#define EMBER_KERNEL_ENUM3(FAMILY, name, what) EMBER_KERNEL_##name,
enum ember_kernel { EMBER_KERNEL_LIST(EMBER_KERNEL_ENUM3) EMBER_KERNEL_COUNT };
#undef EMBER_KERNEL_ENUM3

/* a mask of families: 1u << EMBER_FAMILY_GEMM, or all of them */
#define EMBER_KERNEL_ALL_FAMILIES ((1u << EMBER_FAMILY_COUNT) - 1u)

#define EMBER_KERNEL_FIELD(NAME, name, value, what) int name;
struct ember_kernel_tuning {
    EMBER_KERNEL_TUNING(EMBER_KERNEL_FIELD)
};
#undef EMBER_KERNEL_FIELD

/* "opencl", "cuda", "nvptx" */
const char *ember_kernel_dialect_name(enum ember_kernel_dialect dialect);
/* "elementwise", ... */
const char *ember_kernel_family_name(enum ember_kernel_family family);
/* the entry point, "sgemm"; its family; one line on what it computes
 * (catalogue.c: in every build, GPU backends or not) */
const char *ember_kernel_name(enum ember_kernel kernel);
enum ember_kernel_family ember_kernel_family(enum ember_kernel kernel);
const char *ember_kernel_summary(enum ember_kernel kernel);

/* The source of a whole program in `dialect`: the dialect's prelude, the op
 * codes of backends/backend.h as #defines, the shared helpers (common.kh), then
 * each family in the mask, every file after a #line naming it so that
 * compiler messages point at the right file and line. The caller frees it.
 * NULL on failure, with the reason in `why` (an unreadable file under
 * EMBER_KERNEL_DIR, or out of memory). */
char *ember_kernel_program(enum ember_kernel_dialect dialect, unsigned families, char *why, size_t why_len);

/* The embedded text of one source file ("gemm.kc", "prelude-cuda.kh"), or
 * NULL for a name that is not one; ignores EMBER_KERNEL_DIR. For tests. */
const char *ember_kernel_embedded_file(const char *name);

/* The defaults of EMBER_KERNEL_TUNING. */
struct ember_kernel_tuning ember_kernel_tuning_default(void);
/* Work-items per sgemm work-group: (tile_m / reg_m) * (tile_n / reg_n). */
int ember_kernel_gemm_threads(const struct ember_kernel_tuning *t);
/* Bytes of local memory the sgemm kernel holds: its A and B tiles. */
size_t ember_kernel_gemm_local_bytes(const struct ember_kernel_tuning *t);
/* false, with the reason, for values the kernels cannot take (a work-group
 * size that is not a power of two, a tile that its block does not divide) */
bool ember_kernel_tuning_check(const struct ember_kernel_tuning *t, char *why, size_t why_len);
/* Overrides fields of *t from text such as "wg_size=64,tile_m=32" (the
 * field names of EMBER_KERNEL_TUNING; commas or spaces between): how a
 * backend's tuning variable (EMBER_OPENCL_TUNING) is read. False, with the
 * reason, for an unknown name or a value that is not a number; *t may then
 * be partly changed. */
bool ember_kernel_tuning_parse(const char *text, struct ember_kernel_tuning *t, char *why, size_t why_len);
/* Every program carries the tuning it was compiled with, in the order of
 * EMBER_KERNEL_TUNING, as a constant array named EMBER_KERNEL_TUNING_SYMBOL
 * (int[EMBER_KERNEL_TUNING_COUNT]): a compiled module can be asked what it
 * was built with (cuModuleGetGlobal), and the CUDA backend checks that it
 * is what the launch plans will assume. */
#define EMBER_KERNEL_TUNING_SYMBOL                        "ember_tuning"
#define EMBER_KERNEL_COUNT_ENTRY(NAME, name, value, what) +1
enum { EMBER_KERNEL_TUNING_COUNT = 0 EMBER_KERNEL_TUNING(EMBER_KERNEL_COUNT_ENTRY) };
#undef EMBER_KERNEL_COUNT_ENTRY
/* the values of *t in that order */
void ember_kernel_tuning_values(const struct ember_kernel_tuning *t, int values[EMBER_KERNEL_TUNING_COUNT]);

/* "-DEMBER_WG_SIZE=64 -DEMBER_TILE_M=32 ...", space-separated, for
 * clBuildProgram; NVRTC and clang take the same words one per option.
 * Returns false when `len` is too short. */
bool ember_kernel_defines(const struct ember_kernel_tuning *t, char *out, size_t len);

#endif /* EMBER_KERNELS_H */
