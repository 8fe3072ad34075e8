/* SPDX-License-Identifier: MIT */
/*
 * backends/backend.h — the one contract every backend fills.
 *
 * A backend gives primitives; the core writes every op, forward and
 * backward, once, in terms of them (docs/design.md, "The backend contract"). So a backend
 * that fills this table trains every model, and no two backends can drift.
 *
 * A backend is one `const struct ember_backend_ops`, made with designated
 * initializers in backends/<name>/<name>.c as ember_<name>_backend, and
 * registered by the one ember_add_backend call of backends/<name>/backend.cmake
 * (cmake/backends.cmake), which lists it in ember_backend_registry:
 *
 *     const struct ember_backend_ops ember_cpu_backend = {
 *         .name = "cpu",
 *         .device_count = cpu_device_count,
 *         .alloc = cpu_buffer_alloc,
 *         .sgemm = cpu_sgemm,
 *         ...
 *     };
 *
 * Conventions:
 *   - `dev` is the backend's own device state, made by device_open.
 *   - Memory is addressed as an ember_ptr: a buffer from alloc and an offset
 *     in 4-byte elements (F32 and I32 are both 4 bytes). Offsets, not raw
 *     pointers, because OpenCL's cl_mem cannot be offset by arithmetic.
 *   - Everything is row-major. Inputs of sgemm, im2col, pooling and the
 *     fused kernels are contiguous; elementwise ops take explicit strides.
 *   - Primitives may run asynchronously; `read` waits for them.
 *   - Every function returns EMBER_OK or reports through host->fail, which
 *     records the message on the context and returns the status.
 *   - Entries marked (optional) may be NULL; the core then does without.
 */
#ifndef EMBER_BACKEND_H
#define EMBER_BACKEND_H

#include "elementwise-impl.h"
#include "ember.h"
#include "quant.h"

struct ember_report;

/* A place in device memory. */
typedef struct ember_ptr {
    void *buf;  /* from alloc */
    size_t off; /* in elements */
} ember_ptr;

/* What the core hands a backend when it opens a device: where to report. */
struct ember_host {
    void *ctx;
    ember_status (*fail)(void *ctx, ember_status status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    void (*log)(void *ctx, ember_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
    int threads; /* CPU threads to use; 0: every core */
    /* While the core profiles (set_profiling), a GPU backend reports here
     * each kernel it ran, its launch (`groups` work-groups or blocks of
     * `local` threads) and the device's time for it, from the device's own
     * events (core/profile-impl.h). */
    void (*kernel_timed)(void *ctx, const char *kernel, const size_t groups[3], size_t local, double seconds);
    /* Around work the caller waits for (compiling the kernels): begin says
     * what, with the cache folder it will be kept in; the host is told the
     * time so far each second until end (core/wait.c). `maybe_short`: say
     * nothing unless it lasts a second. */
    void (*wait_begin)(void *ctx, const char *what, bool maybe_short);
    void (*wait_end)(void *ctx);
};

/* ------------------------------------------------------------ elementwise */

/* The unary and binary ops, one row each in base/elementwise-impl.h: out =
 * f(a) or f(a, b), alpha where the op says. The binary ops an activation's
 * backward pass runs (<NAME>_BACKWARD) take a = dy and b = what the row says
 * the forward saw or made (x or y). */
enum ember_unary_op {
    EMBER_UNARY_PRIMITIVES(EMBER_ENUM_UNARY_PRIMITIVE) EMBER_ACTIVATIONS(EMBER_ENUM_ACTIVATION)
        EMBER_UNARY_COUNT
};
enum ember_binary_op {
    EMBER_BINARY_PRIMITIVES(EMBER_ENUM_BINARY_PRIMITIVE) EMBER_ACTIVATIONS(EMBER_ENUM_ACTIVATION_BACKWARD)
        EMBER_BINARY_COUNT
};
#define EMBER_ENUM_ENTRY(NAME, name, math) EMBER_##NAME,

/* whether each op's formula calls a math function (the rows' MATH), in
 * enum order: a GPU runs those in kernels of their own (backend.c) */
extern const bool ember_unary_needs_math[EMBER_UNARY_COUNT];
extern const bool ember_binary_needs_math[EMBER_BINARY_COUNT];

/* The geometry of an elementwise launch: out, a and b are walked over the
 * same shape, each with its own strides in elements. A stride of 0 repeats
 * an operand along that axis: that is how broadcasting works. When `dense`
 * is set every operand is contiguous over `numel` elements and a backend may
 * run one flat loop. Unused operands (b of a unary op) have zero strides. */
struct ember_ewise {
    int ndim;
    bool dense;
    int64_t numel;
    int64_t shape[EMBER_MAX_DIMS];
    int64_t stride_out[EMBER_MAX_DIMS];
    int64_t stride_a[EMBER_MAX_DIMS];
    int64_t stride_b[EMBER_MAX_DIMS];
};

/* ------------------------------------------------------------- reductions */

#define EMBER_REDUCE_OPS(X)                                                                                  \
    X(SUM, sum, "y = sum of x")                                                                              \
    X(MAX, max, "y = max of x")

enum ember_reduce_op { EMBER_REDUCE_OPS(EMBER_ENUM_ENTRY) EMBER_REDUCE_COUNT };

/* A contiguous input viewed as (outer, r, inner), reduced over r:
 *   out[o, i] = alpha * R_r(in[o, r, i]) + beta * out[o, i]
 * out is (outer, inner); beta is 0 or 1 (1 accumulates, for gradients). */
struct ember_reduce {
    int64_t outer, r, inner;
    float alpha, beta;
};

/* ------------------------------------------------------------------ sgemm */

/* C[i] = alpha * op(A[i]) @ op(B[i]) + beta * C[i] for i < batch, row-major:
 * op(A) is (m, k), op(B) is (k, n), C is (m, n); op transposes when asked.
 * lda, ldb, ldc are row strides of A, B and C as stored; stride_a, stride_b,
 * stride_c step between the matrices of a batch (0 reuses one matrix).
 * precision: the context's (ember_ctx_set_matmul_precision), which the core
 * sets on every product; a backend with no faster way ignores it. */
struct ember_gemm {
    bool trans_a, trans_b;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch, stride_a, stride_b, stride_c;
    float alpha, beta;
    ember_matmul_precision precision;
};

/* The common case, whole matrices stored packed (each row right after the
 * one before), so that the row strides follow from the shapes: one product,
 * C = op(A) @ op(B). Set alpha, beta and a batch (ember_gemm_batched) on
 * what it returns where they differ. */
static inline struct ember_gemm ember_gemm_packed(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k)
{
    struct ember_gemm g = {.trans_a = trans_a, .trans_b = trans_b, .m = m, .n = n, .k = k, .batch = 1};
    g.lda = trans_a ? m : k;
    g.ldb = trans_b ? k : n;
    g.ldc = n;
    g.alpha = 1.0f;
    return g;
}

/* g made `batch` products, each matrix of A, B and C `stride_*` elements
 * after the one before (0 reuses one matrix) */
static inline struct ember_gemm ember_gemm_batched(struct ember_gemm g, int64_t batch, int64_t stride_a,
                                                   int64_t stride_b, int64_t stride_c)
{
    g.batch = batch;
    g.stride_a = stride_a;
    g.stride_b = stride_b;
    g.stride_c = stride_c;
    return g;
}

/* ------------------------------------------------ convolution and pooling */

/* x is (n, c, h, w); a kh x kw window slides by `stride` over x padded with
 * `pad` zeros on every side, giving oh x ow positions. im2col writes
 * col (n, c * kh * kw, oh * ow): row (ci, ki, kj) of image b holds
 * x[b, ci, oy * stride - pad + ki, ox * stride - pad + kj] (0 outside x).
 * col2im is its adjoint: dx[b, ci, y, x] = the sum of every col entry that
 * im2col read from there (it overwrites dx). */
struct ember_conv_geom {
    int64_t n, c, h, w;
    int64_t kh, kw, stride, pad;
    int64_t oh, ow;
};

/* A convolution's passes computed by one primitive each, without columns
 * (docs/design.md, "Choosing a convolution's algorithm"):
 *   conv_direct     any geometry: every output summed straight from x and
 *                   w (the GPUs' kernels; on the CPU vector kernels at
 *                   stride 1, plain loops elsewhere)
 *   conv_winograd   Winograd's minimal filtering, 3x3 at stride 1 with
 *                   pad at most 2, in tiles of 2x2 or 4x4 outputs (the CPU)
 * x is (n, c, h, w), w (oc, c, kh, kw), y (n, oc, oh, ow). The pass says
 * which of the three is written:
 *   FORWARD       y = conv2d(x, w) + beta * y
 *   INPUT_GRAD    x = dx, the adjoint of the forward pass applied to y = dy (overwritten)
 *   WEIGHT_GRAD   w = dw = the sum over the batch of dy (*) x + beta * w
 * beta is 0 or 1 (1: y holds the bias already; w holds a gradient to add to).
 * conv_direct's weight gradient may come in slices of the batch (a long sum
 * cut so that a GPU has work-groups enough, and then added up by the core):
 * with slices > 1, w is (slices, oc, c, kh, kw) and slice s the sum over the
 * images [s * per, min(n, (s + 1) * per)), per = ceil(n / slices), with no
 * beta. 0 or 1: one sum, as above. */
enum ember_conv_pass { EMBER_CONV_FORWARD, EMBER_CONV_INPUT_GRAD, EMBER_CONV_WEIGHT_GRAD };

struct ember_conv_job {
    struct ember_conv_geom g;
    int64_t oc;
    enum ember_conv_pass pass;
    float beta;
    int tile;       /* conv_winograd: outputs a tile side, 2 (F(2x2, 3x3)) or 4 (F(4x4, 3x3)); else 0 */
    int64_t slices; /* conv_direct's WEIGHT_GRAD: partial sums over slices of the batch (above) */
    int64_t groups; /* conv_grouped: the channels' groups (below); 0 or 1 elsewhere */
};

/* A grouped convolution (PyTorch's Conv2d with groups): the c input and
 * oc output channels are cut into `groups` equal groups, and output
 * channel o sees only the c / groups input channels of its own group,
 * o / (oc / groups): w is (oc, c / groups, kh, kw). groups = c = oc is the
 * depthwise convolution of every MobileNet. conv_grouped computes its
 * three passes as conv_direct's above, slices of the weight gradient
 * included, each output summed straight from its group's few channels:
 * no columns, and no product of tiny matrices per group. */

/* the profile's rows of conv_winograd and conv_direct, one a pass */
static inline const char *ember_winograd_label(enum ember_conv_pass pass)
{
    return pass == EMBER_CONV_FORWARD      ? "conv_winograd forward"
           : pass == EMBER_CONV_INPUT_GRAD ? "conv_winograd input grad"
                                           : "conv_winograd weight grad";
}
static inline const char *ember_conv_direct_label(enum ember_conv_pass pass)
{
    return pass == EMBER_CONV_FORWARD      ? "conv_direct forward"
           : pass == EMBER_CONV_INPUT_GRAD ? "conv_direct input grad"
                                           : "conv_direct weight grad";
}
static inline const char *ember_conv_grouped_label(enum ember_conv_pass pass)
{
    return pass == EMBER_CONV_FORWARD      ? "conv_grouped forward"
           : pass == EMBER_CONV_INPUT_GRAD ? "conv_grouped input grad"
                                           : "conv_grouped weight grad";
}

/* Max-pool of x (n, c, h, w) with a k x k window and `stride`, no padding,
 * into y (n, c, oh, ow). argmax (I32, like y) holds, for each output, the
 * index y * w + x inside its (h, w) plane of the maximum (the first one on
 * ties; NaN wins, as in PyTorch). Backward: dx[p] = sum of dy[o] over the
 * outputs o whose argmax is p (it overwrites dx). */
struct ember_pool_geom {
    int64_t n, c, h, w;
    int64_t k, stride;
    int64_t oh, ow;
};

/* ------------------------------------------------------ quantised weights */

/* A product with a block-quantised matrix (backends/quant.h has the
 * formats): y (m, n) = x (m, k) @ W^T + beta * y, W (n, k) of `type`,
 * each of its rows k / (the block's weights) blocks; beta is 0 or 1 (1: y
 * holds the bias). For the few rows of x that generation runs (the core
 * dequantises into an sgemm for longer ones, core/ops-gemm.c). */
struct ember_quant_gemm {
    ember_dtype type;
    int64_t m, n, k;
    float beta;
    /* the context's (ember_ctx_set_matmul_precision): at MEDIUM a device
     * may round x to 8 bits a block (the CPU does, for Q4_0, Q4_1, Q8_0) */
    ember_matmul_precision precision;
};

/* --------------------------------------------------------- rotary positions */

/* Rotary position embedding (RoPE) over x (batch, seq, heads, dim): in
 * each head's first `rot` values, pairs turn by an angle that grows with
 * the position, the pair's j-th angle at position p being p * base^(-2j /
 * rot). The pairs are (2j, 2j + 1), as GGUF files keep llama's queries and
 * keys (ggml's "normal" mode), or with `neox` (j, j + rot / 2), as Qwen 2
 * and GPT-NeoX keep theirs. Token t of the sequence is at position
 * `position + t`; table (positions, rot / 2, 2) holds each angle's cosine
 * and sine, computed once on the host (core/ops-rope.c):
 *   y[2j]     = x[2j] cos - x[2j + 1] sin
 *   y[2j + 1] = x[2j] sin + x[2j + 1] cos
 * With `inverse` the turn is backwards (sin negated): the backward pass.
 * Values past rot are copied. x and y may be one buffer. */
struct ember_rope {
    int64_t batch, seq, heads, dim, rot, position;
    bool neox, inverse;
};

/* --------------------------------------------------------------- dropout */

/* The hash a dropout mask keeps element i by: two rounds of MurmurHash3's
 * 32-bit finaliser (public domain), over i mixed with the seed's halves.
 * Written once here for the host; the kernels (dropout.kc) compute the
 * same, and the parity test holds them to it bit for bit. */
static inline uint32_t ember_dropout_mix(uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    return h ^ (h >> 16);
}
static inline uint32_t ember_dropout_hash(uint64_t seed, uint32_t i)
{
    return ember_dropout_mix(ember_dropout_mix(i ^ (uint32_t)(seed >> 32)) + (uint32_t)seed);
}
/* elements kept: hash >= threshold */
static inline uint32_t ember_dropout_threshold(float p)
{
    double t = (double)p * 4294967296.0;
    return t >= 4294967295.0 ? 4294967295u : (uint32_t)t;
}

/* ------------------------------------------------------ fused optimizers */

/* Adam as PyTorch computes it, over n elements:
 *   g = grad + weight_decay * param              (Adam: decay added to the gradient)
 *   param *= 1 - lr * weight_decay; g = grad     (decoupled: AdamW)
 *   m = beta1 * m + (1 - beta1) * g
 *   v = beta2 * v + (1 - beta2) * g * g
 *   param -= lr / bias_correction1 * m / (sqrt(v) / sqrt(bias_correction2) + eps)
 * with bias_correction = 1 - beta^step, computed by the core. */
struct ember_adam_step {
    float lr, beta1, beta2, eps, weight_decay;
    float bias_correction1, bias_correction2;
    bool decoupled; /* AdamW's weight decay, which shrinks the parameter instead */
};

/* SGD with momentum as PyTorch computes it:
 *   g = grad + weight_decay * param
 *   velocity = first ? g : momentum * velocity + (1 - dampening) * g
 *   g = nesterov ? g + momentum * velocity : velocity     (when momentum != 0)
 *   param -= lr * g */
struct ember_sgd_step {
    float lr, momentum, dampening, weight_decay;
    bool nesterov, first;
};

/* Batch normalization's shape and constants. x is (n, c, s): n samples of c
 * channels of s positions (H * W; 1 for (N, C)), and each channel is
 * normalised over its m = n * s values, as PyTorch's BatchNorm1d and
 * BatchNorm2d do (core/ops-norm.c has the whole math).
 *
 * The statistics are split into the n * c planes of s values: a plane's
 * mean and M2 (its sum of squared differences from that mean) first, then
 * each channel's from its n planes by Chan's exact combination,
 *   mean = the mean of the plane means
 *   M2   = the sum of the planes' M2 + s * the sum of (plane mean - mean)^2
 * which takes two passes' accuracy (values far from zero lose nothing) with
 * a plane's worth of parallel work each, and is the same sum on every
 * backend. `work` is the scratch for those partial results, 2 * n * c
 * values, which a backend may use or leave. */
struct ember_batch_norm {
    int64_t n, c, s;
    float eps;      /* invstd = 1 / sqrt(var + eps) */
    float momentum; /* running = (1 - momentum) * running + momentum * the batch's */
    bool training;  /* backward: the statistics were the batch's (else constants) */
    bool relu;      /* y = max(0, y) after, and dy masked where that was 0 before the sums */
};

/* ------------------------------------------------------- the primitives
 *
 * The one list of them:
 *
 *     X(name, (parameters), (arguments after dev), label, flops, bytes)
 *
 * Everything that names a primitive expands from here: the table below,
 * each backend's prototypes and entries (backends/cpu/cpu-impl.h, cpu.c;
 * the shared GPU launch plans, backends/kernels/gpu.h), the test reference
 * (tests/ops/reference.h), the parity harness's check that every one has a
 * row, and the profiler's timing wrappers (core/profile.c), which is what
 * the last three columns are for: `label` names the profile's row for a
 * call (NULL: the primitive's own name; "unary relu" for an op of a
 * family), and `flops` and `bytes` are the call's work, in terms of its
 * parameters, so the profile can print GFLOP/s and GB/s beside the time.
 * Bytes count each operand read once and each result written once
 * (EMBER_BYTES_OF: 4 bytes an element). A new primitive is one entry here plus an
 * implementation per backend and a reference (docs/extending.md).
 *
 * A primitive's family is its file's name in every layer (max_pool2d
 * lives in core/ops-pool.c, backends/cpu/cpu-pool.c, backends/kernels/
 * gpu-pool.c and pool.kc).
 *
 *   fill            out[i] = value, for i < n
 *   unary, binary   elementwise, see struct ember_ewise
 *   reduce          see struct ember_reduce
 *   sgemm           see struct ember_gemm
 *   im2col, col2im  see struct ember_conv_geom
 *   conv_direct, conv_winograd  see struct ember_conv_job (optional in effect: a backend
 *                   without one says EMBER_ERR_UNSUPPORTED, and core/conv-algo.c never picks it there)
 *   conv_grouped    a convolution of `groups` groups of channels (struct ember_conv_job); every
 *                   convolution with groups > 1 runs it
 *   max_pool2d_*    see struct ember_pool_geom
 *   cross_entropy_forward   logits (n, classes), target (n) I32 -> prob (n, classes) = softmax(logits)
 *                   and loss (n) = -log prob[target] (NaN for a target outside [0, classes))
 *   cross_entropy_backward  dlogits = (prob - onehot(target)) * scale * dloss[0]; dloss is one
 *                   element in device memory, so no host round trip is needed
 *   avg_pool2d_*    y = the mean of each window (struct ember_pool_geom); the backward pass
 *                   spreads dy over its window: dx[p] = sum of dy[o] / k^2 over the windows o
 *                   holding p (it overwrites dx)
 *   dropout_mask    mask[i] = keep ? 1 / (1 - p) : 0 for i < n, keep when ember_dropout_hash(seed,
 *                   i) >= p * 2^32: the same mask on every backend for the same seed
 *   adam_step, sgd_step     see struct ember_adam_step, struct ember_sgd_step
 *   softmax_forward y = softmax of each row of x (rows, cols), stable (the row's max first). With
 *                   causal_rows > 0 the rows come in matrices of causal_rows queries over cols keys,
 *                   query q (row % causal_rows) at position q + cols - causal_rows, and the keys after
 *                   it are masked: y = 0 there (attention's causal mask; a row that sees no key is 0).
 *                   x and y may be one buffer: attention runs it in place over its scores
 *   softmax_backward        dx = y * (dy - sum over the row of dy * y); dy and dx may be one buffer
 *   layer_norm_forward      per row of x (rows, cols): xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps)
 *                   (var biased), y = xhat * weight + bias (weight, bias: (cols)); xhat and rstd (rows)
 *                   are kept for the backward pass
 *   layer_norm_backward     dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) per row, g = dy * weight
 *   rms_norm_forward        per row of x (rows, cols): rrms = 1 / sqrt(mean(x^2) + eps) (rows) and
 *                   y = x * rrms * weight (weight: (cols); weighted 0: y = x * rrms, weight unread).
 *                   One launch where the elementwise and reduce primitives took five, a language
 *                   model's token meeting it twice a block (docs/gpu-validation.md, 2026-12-04)
 *   batch_norm_stats        training: each channel's mean and invstd = 1 / sqrt(var + eps) over
 *                   the batch (var biased), and running_mean, running_var blended in place
 *                   with the batch's mean and unbiased var (var * m / (m - 1)); struct
 *                   ember_batch_norm
 *   batch_norm_forward      xhat = (x - mean[c]) * invstd[c], y = xhat * weight[c] + bias[c], and
 *                   with relu y = max(0, y): the ReLU that follows most batch norms, fused
 *   batch_norm_backward     g = dy, or with relu dy where xhat * weight + bias > 0 and 0 elsewhere;
 *                   dbias = sum of g and dweight = sum of g * xhat over each channel,
 *                   dx = weight invstd (g - dbias / m - xhat dweight / m) in training, and
 *                   weight invstd g with the running statistics
 *   embedding_forward       out[i, :] = weight[index[i], :] for i < n, weight (vocab, dim), index I32;
 *                   a row of NaN for an index outside [0, vocab)
 *   embedding_backward      dweight[v, :] += the sum of dy[i, :] over the i with index[i] == v, in
 *                   order of i (no atomics: the same sums on every backend)
 *   quant_matmul    see struct ember_quant_gemm
 *   dequantize      out[i, :] = row index[i] of the quantised matrix w (vocab, cols) of `type`,
 *                   as backends/quant.h's reference computes each weight, for i < rows; a row of
 *                   NaN for an index outside [0, vocab); index.buf NULL: rows = vocab, row i itself
 *   rope            see struct ember_rope
 */

/* bytes in an F32 or I32 element, and in `count` of them, for the cost columns */
#define EMBER_ELEMENT_BYTES   4.0
#define EMBER_BYTES_OF(count) (EMBER_ELEMENT_BYTES * (double)(count))

/* the profile's row names of the elementwise and reduction families,
 * "unary copy", ... in their lists' order (backend.c) */
extern const char *const ember_unary_labels[];
extern const char *const ember_binary_labels[];
extern const char *const ember_reduce_labels[];

/* The costs too long for a column. sgemm: 2mnk per matrix; each matrix
 * read once (a shared one, stride 0, once in all) and C written, and read
 * too when beta is not 0. */
static inline double ember_sgemm_bytes(const struct ember_gemm *g)
{
    double m = (double)g->m, n = (double)g->n, k = (double)g->k, batch = (double)g->batch;
    return EMBER_ELEMENT_BYTES * (m * k * (g->stride_a ? batch : 1.0) + k * n * (g->stride_b ? batch : 1.0) +
                                  m * n * batch * (g->beta != 0.0f ? 2.0 : 1.0));
}
/* a convolution's planes and their columns */
static inline double ember_conv_bytes(const struct ember_conv_geom *g)
{
    return EMBER_ELEMENT_BYTES * (double)(g->n * g->c) *
           (double)(g->h * g->w + g->kh * g->kw * g->oh * g->ow);
}
/* F(2x2, 3x3) multiplies 4x4 transformed tiles, one tile for each 2x2 of
 * the output: the 16 products of (oc x c) by (c x tiles) are its work,
 * 2.25 times fewer multiplications than the direct convolution's; F(4x4,
 * 3x3) 36 products, one tile for each 4x4, 4 times fewer (the transforms
 * are not counted) */
static inline double ember_winograd_flops(const struct ember_conv_job *c)
{
    const struct ember_conv_geom *g = &c->g;
    int64_t t = c->tile > 0 ? c->tile : 2, side = t + 2;
    return 2.0 * (double)(side * side) * (double)(c->oc * g->c) *
           (double)(g->n * ((g->oh + t - 1) / t) * ((g->ow + t - 1) / t));
}
/* the input, the weights and the output, each read or written once */
static inline double ember_conv_job_bytes(const struct ember_conv_job *c)
{
    const struct ember_conv_geom *g = &c->g;
    int64_t weights = c->oc * g->c / (c->groups > 1 ? c->groups : 1) * g->kh * g->kw;
    return EMBER_ELEMENT_BYTES * (double)(g->n * g->c * g->h * g->w + weights + g->n * c->oc * g->oh * g->ow);
}
/* the direct convolution's multiply-adds, each pass the same count (a
 * grouped one's, each output summing its group's channels) */
static inline double ember_conv_direct_flops(const struct ember_conv_job *c)
{
    const struct ember_conv_geom *g = &c->g;
    int64_t per_output = g->c / (c->groups > 1 ? c->groups : 1) * g->kh * g->kw;
    return 2.0 * (double)(g->n * c->oc * g->oh * g->ow) * (double)per_output;
}
/* the bytes of `count` weights of a quantised type */
static inline double ember_quant_bytes(ember_dtype type, int64_t count)
{
    int64_t elements = 1, bytes = 4;
    ember_quant_block(type, &elements, &bytes);
    return (double)count / (double)elements * (double)bytes;
}
/* the weights once, x, and y (read too when beta is 1) */
static inline double ember_quant_gemm_bytes(const struct ember_quant_gemm *q)
{
    return ember_quant_bytes(q->type, q->n * q->k) +
           EMBER_BYTES_OF(q->m * q->k + q->m * q->n * (q->beta != 0.0f ? 2 : 1));
}
/* input and output planes, and the argmax beside the output where there is one */
static inline double ember_pool_bytes(const struct ember_pool_geom *g, int outputs)
{
    return EMBER_ELEMENT_BYTES * (double)(g->n * g->c) * (double)(g->h * g->w + outputs * g->oh * g->ow);
}
/* a comparison or an addition per window element */
static inline double ember_pool_flops(const struct ember_pool_geom *g)
{
    return (double)(g->n * g->c * g->oh * g->ow * g->k * g->k);
}

#define EMBER_PRIMITIVES(X)                                                                                  \
    X(fill, (void *dev, ember_ptr out, size_t n, float value), (out, n, value), NULL, 0.0,                   \
      EMBER_BYTES_OF(n))                                                                                     \
    X(unary,                                                                                                 \
      (void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out, ember_ptr a,           \
       float alpha),                                                                                         \
      (op, e, out, a, alpha), ember_unary_labels[op], (double)e->numel, EMBER_BYTES_OF(2 * e->numel))        \
    X(binary,                                                                                                \
      (void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out, ember_ptr a,          \
       ember_ptr b, float alpha),                                                                            \
      (op, e, out, a, b, alpha), ember_binary_labels[op], (double)e->numel, EMBER_BYTES_OF(3 * e->numel))    \
    X(reduce,                                                                                                \
      (void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out, ember_ptr in),       \
      (op, r, out, in), ember_reduce_labels[op], (double)(r->outer * r->r * r->inner),                       \
      EMBER_BYTES_OF(r->outer * r->r * r->inner + r->outer * r->inner))                                      \
    X(sgemm, (void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c), (g, a, b, c),   \
      NULL, 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch, ember_sgemm_bytes(g))       \
    X(im2col, (void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col), (g, x, col), NULL,   \
      0.0, ember_conv_bytes(g))                                                                              \
    X(col2im, (void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx), (g, col, dx), NULL, \
      (double)(g->n * g->c * g->kh * g->kw * g->oh * g->ow), ember_conv_bytes(g))                            \
    X(conv_winograd, (void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w, ember_ptr y),     \
      (c, x, w, y), ember_winograd_label(c->pass), ember_winograd_flops(c), ember_conv_job_bytes(c))         \
    X(conv_direct, (void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w, ember_ptr y),       \
      (c, x, w, y), ember_conv_direct_label(c->pass), ember_conv_direct_flops(c), ember_conv_job_bytes(c))   \
    X(conv_grouped, (void *dev, const struct ember_conv_job *c, ember_ptr x, ember_ptr w, ember_ptr y),      \
      (c, x, w, y), ember_conv_grouped_label(c->pass), ember_conv_direct_flops(c), ember_conv_job_bytes(c))  \
    X(max_pool2d_forward,                                                                                    \
      (void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y, ember_ptr argmax),              \
      (g, x, y, argmax), NULL, ember_pool_flops(g), ember_pool_bytes(g, 2))                                  \
    X(max_pool2d_backward,                                                                                   \
      (void *dev, const struct ember_pool_geom *g, ember_ptr dy, ember_ptr argmax, ember_ptr dx),            \
      (g, dy, argmax, dx), NULL, 0.0, ember_pool_bytes(g, 2))                                                \
    X(avg_pool2d_forward, (void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y), (g, x, y), \
      NULL, ember_pool_flops(g), ember_pool_bytes(g, 1))                                                     \
    X(avg_pool2d_backward, (void *dev, const struct ember_pool_geom *g, ember_ptr dy, ember_ptr dx),         \
      (g, dy, dx), NULL, ember_pool_flops(g), ember_pool_bytes(g, 1))                                        \
    X(cross_entropy_forward,                                                                                 \
      (void *dev, int64_t n, int64_t classes, ember_ptr logits, ember_ptr target, ember_ptr prob,            \
       ember_ptr loss),                                                                                      \
      (n, classes, logits, target, prob, loss), NULL, 4.0 * (double)(n * classes),                           \
      EMBER_BYTES_OF(2 * n * classes + 2 * n))                                                               \
    X(cross_entropy_backward,                                                                                \
      (void *dev, int64_t n, int64_t classes, ember_ptr prob, ember_ptr target, ember_ptr dloss,             \
       float scale, ember_ptr dlogits),                                                                      \
      (n, classes, prob, target, dloss, scale, dlogits), NULL, 2.0 * (double)(n * classes),                  \
      EMBER_BYTES_OF(2 * n * classes + n))                                                                   \
    X(dropout_mask, (void *dev, ember_ptr mask, size_t n, float p, uint64_t seed), (mask, n, p, seed), NULL, \
      0.0, EMBER_BYTES_OF(n))                                                                                \
    /* Adam reads param, grad, m and v and writes three of them: about a dozen operations an element */      \
    X(adam_step,                                                                                             \
      (void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param, ember_ptr grad, ember_ptr m,   \
       ember_ptr v),                                                                                         \
      (n, s, param, grad, m, v), NULL, 12.0 * (double)n, EMBER_BYTES_OF(7 * n))                              \
    X(sgd_step,                                                                                              \
      (void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param, ember_ptr grad,                 \
       ember_ptr velocity),                                                                                  \
      (n, s, param, grad, velocity), NULL, 5.0 * (double)n, EMBER_BYTES_OF(5 * n))                           \
    /* a max, a subtraction, an exponential, a sum and a division an element */                              \
    X(softmax_forward,                                                                                       \
      (void *dev, int64_t rows, int64_t cols, int64_t causal_rows, ember_ptr x, ember_ptr y),                \
      (rows, cols, causal_rows, x, y), NULL, 5.0 * (double)(rows * cols), EMBER_BYTES_OF(2 * rows * cols))   \
    X(softmax_backward, (void *dev, int64_t rows, int64_t cols, ember_ptr y, ember_ptr dy, ember_ptr dx),    \
      (rows, cols, y, dy, dx), NULL, 4.0 * (double)(rows * cols), EMBER_BYTES_OF(3 * rows * cols))           \
    /* the mean, the variance, then xhat and y: about eight operations an element */                         \
    X(layer_norm_forward,                                                                                    \
      (void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x, ember_ptr weight, ember_ptr bias,      \
       ember_ptr y, ember_ptr xhat, ember_ptr rstd),                                                         \
      (rows, cols, eps, x, weight, bias, y, xhat, rstd), NULL, 8.0 * (double)(rows * cols),                  \
      EMBER_BYTES_OF(3 * rows * cols + 2 * cols + rows))                                                     \
    X(layer_norm_backward,                                                                                   \
      (void *dev, int64_t rows, int64_t cols, ember_ptr dy, ember_ptr xhat, ember_ptr weight,                \
       ember_ptr rstd, ember_ptr dx),                                                                        \
      (rows, cols, dy, xhat, weight, rstd, dx), NULL, 7.0 * (double)(rows * cols),                           \
      EMBER_BYTES_OF(3 * rows * cols + cols + rows))                                                         \
    /* the mean of the squares, then y: about four operations an element */                                  \
    X(rms_norm_forward,                                                                                      \
      (void *dev, int64_t rows, int64_t cols, float eps, ember_ptr x, ember_ptr weight, int weighted,        \
       ember_ptr y, ember_ptr rrms),                                                                         \
      (rows, cols, eps, x, weight, weighted, y, rrms), NULL, 4.0 * (double)(rows * cols),                    \
      EMBER_BYTES_OF(2 * rows * cols + cols + rows))                                                         \
    /* two passes over x for each plane's mean and M2, then a few operations a plane */                      \
    X(batch_norm_stats,                                                                                      \
      (void *dev, const struct ember_batch_norm *b, ember_ptr x, ember_ptr work, ember_ptr mean,             \
       ember_ptr invstd, ember_ptr running_mean, ember_ptr running_var),                                     \
      (b, x, work, mean, invstd, running_mean, running_var), NULL, 3.0 * (double)(b->n * b->c * b->s),       \
      EMBER_BYTES_OF(b->n * b->c * b->s + 6 * b->c))                                                         \
    X(batch_norm_forward,                                                                                    \
      (void *dev, const struct ember_batch_norm *b, ember_ptr x, ember_ptr mean, ember_ptr invstd,           \
       ember_ptr weight, ember_ptr bias, ember_ptr xhat, ember_ptr y),                                       \
      (b, x, mean, invstd, weight, bias, xhat, y), NULL, 4.0 * (double)(b->n * b->c * b->s),                 \
      EMBER_BYTES_OF(3 * b->n * b->c * b->s + 4 * b->c))                                                     \
    /* the sums read dy and xhat, dx reads them again: about seven operations an element */                  \
    X(batch_norm_backward,                                                                                   \
      (void *dev, const struct ember_batch_norm *b, ember_ptr dy, ember_ptr xhat, ember_ptr weight,          \
       ember_ptr bias, ember_ptr invstd, ember_ptr work, ember_ptr dweight, ember_ptr dbias, ember_ptr dx),  \
      (b, dy, xhat, weight, bias, invstd, work, dweight, dbias, dx), NULL,                                   \
      7.0 * (double)(b->n * b->c * b->s), EMBER_BYTES_OF(5 * b->n * b->c * b->s + 4 * b->c))                 \
    X(embedding_forward,                                                                                     \
      (void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index, ember_ptr weight, ember_ptr out),  \
      (n, dim, vocab, index, weight, out), NULL, 0.0, EMBER_BYTES_OF(n + 2 * n * dim))                       \
    /* each index is read once per row of dweight that looks for it */                                       \
    X(embedding_backward,                                                                                    \
      (void *dev, int64_t n, int64_t dim, int64_t vocab, ember_ptr index, ember_ptr dy, ember_ptr dweight),  \
      (n, dim, vocab, index, dy, dweight), NULL, (double)(n * dim),                                          \
      EMBER_BYTES_OF(n + n * dim + 2 * vocab * dim))                                                         \
    /* the weights' blocks read once, x read and y written */                                                \
    X(quant_matmul, (void *dev, const struct ember_quant_gemm *q, ember_ptr x, ember_ptr w, ember_ptr y),    \
      (q, x, w, y), NULL, 2.0 * (double)(q->m * q->n * q->k), ember_quant_gemm_bytes(q))                     \
    X(dequantize,                                                                                            \
      (void *dev, ember_dtype type, int64_t rows, int64_t cols, int64_t vocab, ember_ptr index, ember_ptr w, \
       ember_ptr out),                                                                                       \
      (type, rows, cols, vocab, index, w, out), NULL, 2.0 * (double)(rows * cols),                           \
      ember_quant_bytes(type, rows * cols) + EMBER_BYTES_OF(rows * cols))                                    \
    /* four multiplications and two additions a pair */                                                      \
    X(rope, (void *dev, const struct ember_rope *r, ember_ptr x, ember_ptr table, ember_ptr y),              \
      (r, x, table, y), NULL, 3.0 * (double)(r->batch * r->seq * r->heads * r->rot),                         \
      EMBER_BYTES_OF(2 * r->batch * r->seq * r->heads * r->dim + r->seq * r->rot))

#define EMBER_PRIMITIVE_FIELD(name, params, ...) ember_status(*name) params;

/* the names, "fill", ..., in the list's order (backend.c) */
extern const char *const ember_primitive_names[];
#define EMBER_PRIMITIVE_ENUM(name, ...) EMBER_PRIMITIVE_##name,
enum ember_primitive { EMBER_PRIMITIVES(EMBER_PRIMITIVE_ENUM) EMBER_PRIMITIVE_COUNT };
#undef EMBER_PRIMITIVE_ENUM

/* ------------------------------------------------------------ the table */

struct ember_backend_ops {
    const char *name; /* "cpu", "opencl", "cuda": the --device spelling */

    /* Devices. device_count says how many devices this backend sees and,
     * when none, writes why into `why` (e.g. "libOpenCL.so.1 not found"). */
    int (*device_count)(char *why, size_t why_len);
    /* (optional) false, with the reason in `why`, for a device that `auto`
     * should pass over: an OpenCL device that is a CPU (ember's cpu backend
     * is faster there), a GPU no kernel path reaches. Such a device is
     * still listed and, when named, opens or fails with its reason. NULL:
     * every device is preferred. */
    bool (*device_preferred)(int index, char *why, size_t why_len);
    /* (optional) asked by "auto" before device_count: true, with the
     * reason, when the backend knows without starting its driver that auto
     * would pass over every device it has (an answer remembered from an
     * earlier run), so that a driver auto will not use is never loaded */
    bool (*auto_passes_over)(char *why, size_t why_len);
    ember_status (*device_open)(const struct ember_host *host, int index, void **dev);
    void (*device_close)(void *dev);
    /* one line for people: "cpu (2 threads, OpenBLAS 0.3.21)" */
    void (*device_describe)(void *dev, char *out, size_t len);
    /* (optional) changes the threads an open device uses (0: every core) */
    ember_status (*set_threads)(void *dev, int threads);
    /* (optional) whether `precision` (below EMBER_MATMUL_HIGHEST) makes
     * some of the device's products faster: the CPU's with AMX, and its
     * quantised ones at MEDIUM; NULL: it never does */
    bool (*matmul_precision_matters)(void *dev, ember_matmul_precision precision);
    /* (optional) what a person needs to know about the backend on this
     * machine, for `ember devices`: versions, libraries found, each
     * device's facts, into its section of the report (base/report-impl.h) */
    void (*diagnose)(struct ember_report *section, int threads);

    /* Memory. alloc reports EMBER_ERR_NOMEM without logging it: the core may
     * free its cache and try again. */
    ember_status (*alloc)(void *dev, size_t bytes, void **buf);
    void (*release)(void *dev, void *buf);
    /* (optional) the device's free and total memory, for out-of-memory messages */
    ember_status (*memory_info)(void *dev, size_t *free_bytes, size_t *total_bytes);
    ember_status (*write)(void *dev, ember_ptr dst, const void *src, size_t bytes);
    ember_status (*read)(void *dev, void *dst, ember_ptr src, size_t bytes);
    /* waits for everything launched so far (optional) */
    ember_status (*sync)(void *dev);
    /* (optional) on: time every kernel with the device's events, wait for
     * it, and report it through host->kernel_timed; off: launch as fast as
     * possible again. Backends without kernels of their own (the CPU's)
     * leave it NULL: the core times their primitives itself. */
    ember_status (*set_profiling)(void *dev, bool on);
    /* (optional) the device's peak FP32 GFLOP/s and memory GB/s, 0 where
     * unknown, printed beside what the profile measured */
    void (*peak)(void *dev, double *gflops, double *gbps);
    /* (optional) a simulated GPU's record (backends/cuda/cuda-sim.c): what
     * the first launch of `kernel` did, or with kernel NULL a line for each
     * kernel launched, as text to free(); `registers` a thread (0: counted
     * from the PTX) for the occupancy, said to come from `registers_from`.
     * NULL with the reason in `why`. */
    char *(*kernel_report)(void *dev, const char *kernel, int registers, const char *registers_from,
                           char *why, size_t why_len);
    /* (optional) how many bytes of im2col columns a convolution makes at a
     * time (core/ops-conv.c), 0: about 2 MiB, for a CPU, whose product must
     * read them while they are still in its cache. A GPU has no such cache
     * to fit and pays a launch for every group instead (ResNet-8 at batch
     * 256 launched 400 im2col and sgemm kernels a step on an H200, each
     * about 10 us), so its groups are as large as memory allows. */
    size_t conv_columns_bytes;
    /* (optional) whether conv_direct runs convolution g by its fast code on
     * this device. The CPU's runs vector kernels at stride 1 for 3x3 (with
     * AVX2 or AVX-512) and plain loops otherwise, some ten times slower
     * than im2col: core/conv-algo.c's table gives conv_direct only where
     * this says yes (NULL: everywhere). */
    bool (*conv_direct_fast)(void *dev, const struct ember_conv_geom *g);

    /* the primitives, from the one list above */
    EMBER_PRIMITIVES(EMBER_PRIMITIVE_FIELD)
};

/* The backends built, in the order `auto` tries them, and the simulated
 * GPUs, which open only when named; each list ends with NULL. Generated
 * from the ember_add_backend calls (build/generated/backend-registry.c). */
extern const struct ember_backend_ops *const ember_backend_registry[];
extern const struct ember_backend_ops *const ember_simulated_registry[];

#endif /* EMBER_BACKEND_H */
