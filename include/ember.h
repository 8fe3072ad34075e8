/* SPDX-License-Identifier: MIT */
/*
 * ember.h — the public C API of ember, a minimal deep-learning runtime.
 *
 * ember trains small networks (convolution, ReLU, max-pool, linear layers,
 * cross-entropy, Adam) on the CPU, on OpenCL devices and on NVIDIA GPUs from
 * Kepler up. This header is the whole interface; everything behind it is
 * private. The loop reads as it does in PyTorch:
 *
 *     ember_ctx *ctx = ember_ctx_new();
 *     if (!ctx || ember_ctx_use_device(ctx, "auto") != EMBER_OK) return 1;
 *     ember_data_options data = {.kind = "fashion-mnist"};
 *     ember_dataset *train = ember_dataset_open(ctx, &data, EMBER_TRAIN);
 *     ember_model *net = ember_model_new(ctx, "simplecnn", train, 0);
 *     ember_optim *opt = ember_adam_new(ember_model_params(net), ember_adam_defaults(0.001f));
 *     ember_batcher *batches = ember_batcher_new(train, 64, true, 0);
 *     ember_tensor *x, *y;                       // x is (64, 1, 28, 28), y is (64)
 *     while (ember_batcher_next(batches, &x, &y) == EMBER_OK && x) { // x NULL: the epoch's end
 *         ember_optim_zero_grad(opt);
 *         ember_tensor *logits = ember_model_forward(net, x);     // (64, 10)
 *         ember_tensor *loss = ember_cross_entropy(logits, y);    // scalar
 *         ember_backward(loss);
 *         ember_optim_step(opt);
 *         ember_tape_clear(ctx);                 // release this step's tensors
 *     }
 *     if (ember_last_status(ctx) != EMBER_OK) fprintf(stderr, "%s\n", ember_last_error(ctx));
 *
 * Conventions, which hold for every function below:
 *
 *   - Functions that make something return it, or NULL on failure; functions
 *     that do something return an ember_status. On failure the context keeps
 *     the status and a message (ember_last_status, ember_last_error) until
 *     ember_clear_error. The library never exits and never aborts.
 *   - Ops (ember_relu, ember_conv2d, ...) given a NULL input return NULL and
 *     leave the recorded error alone, so a whole forward pass can be written
 *     straight through and checked once at the end.
 *   - Ownership: tensors from ember_tensor_new and ember_tensor_copy belong
 *     to the caller (ember_tensor_free). Tensors an op returns belong to the
 *     context's tape and live until ember_tape_clear. Parameters belong to
 *     their ember_params, batches to their ember_batcher. Every _free accepts
 *     NULL. Free what you made (tensors, models, optimizers, batchers, data
 *     sets) before the context they live in.
 *   - What a function hands over is said where it is declared. A `char *` or
 *     an array it returns (a report, a table, a saved buffer) is the
 *     caller's, to release with ember_free: on Windows ember.dll and its
 *     caller may each have a C runtime of their own, and memory goes back
 *     to the one that gave it. A `const char *` belongs to what it describes
 *     and lives as long as it (a context's device name until the context is
 *     freed, a checkpoint's metadata until it is closed), or for the whole
 *     program where nothing owns it (ember_version, ember_status_str).
 *   - The few functions that take no context (ember_ptx and the other
 *     inspection at the end) write the reason for a failure into a buffer
 *     the caller gives (`why`, `why_len`), since there is no context to
 *     keep it.
 *   - Shapes are int64_t, row-major (NCHW for images); a shape comment such
 *     as (N, C, H, W) names the dimensions of a tensor argument.
 */
#ifndef EMBER_H
#define EMBER_H

/* C99 or later (or C++): the header uses bool, int64_t, and the examples
 * designated initializers. An older compiler mode gets this one error and
 * none of the rest, rather than a cascade from the first `bool` below. */
#if !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)
#error "ember.h needs C99 or later (-std=c99, or any newer standard)"
#else

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library exports the functions marked EMBER_API and nothing else: it
 * is built with -fvisibility=hidden (on Windows, ember.dll exports what is
 * marked dllexport), so its own helpers (cpu_sgemm, the backends' tables)
 * cannot clash with a host program's names. A program using ember.dll
 * needs no mark: mingw-w64 and MSVC both call through the import library. */
#if defined(_WIN32) && defined(EMBER_BUILDING_LIBRARY)
#define EMBER_API __declspec(dllexport)
#elif defined(_WIN32)
#define EMBER_API
#elif defined(__GNUC__) || defined(__clang__)
#define EMBER_API __attribute__((visibility("default")))
#else
#define EMBER_API
#endif
/* printf-style arguments checked by GCC and clang (with mingw-w64's own
 * printf on Windows, which knows %zu); other compilers see nothing */
#if defined(__MINGW32__)
#define EMBER_PRINTF_LIKE(fmt, first) __attribute__((format(gnu_printf, fmt, first)))
#elif defined(__GNUC__) || defined(__clang__)
#define EMBER_PRINTF_LIKE(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define EMBER_PRINTF_LIKE(fmt, first)
#endif

/* The version this header belongs to; CMake reads it from here. While the
 * major version is 0, a new minor version may change the ABI, so the
 * shared library's SONAME carries both: libember.so.0.2 (docs/embedding.md,
 * "Versions"). EMBER_VERSION compares as a number: 0.2.0 is 200. */
#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 2
#define EMBER_VERSION_PATCH 0
#define EMBER_VERSION       (EMBER_VERSION_MAJOR * 10000 + EMBER_VERSION_MINOR * 100 + EMBER_VERSION_PATCH)

/* "0.2.0": the library's version, which may be newer than the header's */
EMBER_API const char *ember_version(void);

/* Releases what ember handed over to be freed: the strings, buffers and
 * arrays that the declarations below say are for ember_free. NULL is
 * ignored. (free() works on Linux too, but not across a Windows DLL's
 * boundary; ember_free works everywhere.) */
EMBER_API void ember_free(void *memory);

/* ------------------------------------------------------------------ status */

typedef enum ember_status {
    EMBER_OK = 0,
    EMBER_ERR_ARG,         /* a bad argument: NULL, a wrong shape, out of range */
    EMBER_ERR_NOMEM,       /* out of host or device memory */
    EMBER_ERR_IO,          /* a file could not be opened, read or written */
    EMBER_ERR_FORMAT,      /* a file is malformed or is not what it claims */
    EMBER_ERR_DEVICE,      /* a device or its driver is missing or failed */
    EMBER_ERR_UNSUPPORTED, /* a valid request this build or device cannot do */
} ember_status;

/* A short English name for a status: "out of memory". Never NULL. */
EMBER_API const char *ember_status_str(ember_status status);

/* ----------------------------------------------------------------- context */

/* A context holds one device, its memory pools, the autograd tape and the
 * last error.
 *
 * Threads: a context and everything made in it (tensors, params, models,
 * optimizers, data sets, batchers, checkpoints) belong to one thread at a
 * time; use a context per thread, or a lock around each. Contexts are
 * independent of one another and may be used from different threads at
 * once. Functions that take no context (ember_version, ember_status_str,
 * ember_devices, ember_devices_report, ember_model_names and the other
 * catalogue queries, ember_ptx) are safe from any thread. The CPU
 * backend's worker threads are the context's own: they start at
 * ember_ctx_use_device and are joined by ember_ctx_free. A GPU driver a
 * context loads (libcuda, OpenCL's) stays loaded until the process exits;
 * once "auto" has found that a machine's OpenCL devices are all CPUs, it
 * remembers that and no longer loads OpenCL at all (docs/embedding.md,
 * "Threads, the tape and process-wide state"). */
typedef struct ember_ctx ember_ctx;

typedef enum ember_log_level {
    EMBER_LOG_ERROR,
    EMBER_LOG_WARN,
    EMBER_LOG_INFO,
    EMBER_LOG_DEBUG,
} ember_log_level;

typedef void (*ember_log_fn)(void *user, ember_log_level level, const char *message);

/* A new context with no device yet. NULL only when out of memory. */
EMBER_API ember_ctx *ember_ctx_new(void);
EMBER_API void ember_ctx_free(ember_ctx *ctx);

/* Messages at `max_level` or more severe go to `fn` (NULL: silence). The
 * default is silence: the library prints nothing unless its host asks, and
 * its failures come back as statuses and ember_last_error either way. The
 * messages name the API ("ember_data_options.dir"), never a program's
 * options; the `ember` program words them for its own. */
EMBER_API void ember_ctx_set_log(ember_ctx *ctx, ember_log_fn fn, void *user, ember_log_level max_level);

/* Work the caller waits for that ember cannot avoid, such as compiling a
 * device's kernels the first time it meets that device and driver, is
 * announced to `fn` (NULL, the default: to no one): fn(user, what, 0,
 * false) as it starts, where `what` says what and why ("compiling kernels
 * for opencl:0 (...) (once; kept in /home/me/.cache/ember/opencl)"; a
 * driver's compile that its own cache may answer at once is announced only
 * once it has lasted a second, and not at all when it ends sooner); then,
 * while it lasts more than a second, about once a second with the seconds
 * so far, from a thread of the library's own (the calling thread is
 * waiting inside the driver); and fn(user, what, seconds, true) when it
 * ends. */
typedef void (*ember_progress_fn)(void *user, const char *what, double seconds, bool done);
EMBER_API void ember_ctx_set_progress(ember_ctx *ctx, ember_progress_fn fn, void *user);

/* The callbacks a context was given, to give another context the same. */
EMBER_API void ember_ctx_get_log(const ember_ctx *ctx, ember_log_fn *fn, void **user,
                                 ember_log_level *max_level);
EMBER_API void ember_ctx_get_progress(const ember_ctx *ctx, ember_progress_fn *fn, void **user);

/* Where ember keeps what it can make again: the GPU kernels it compiled
 * for each device (so that a device compiles them once, not at every
 * start), what "auto" found of a machine's OpenCL, and inflated copies of
 * gzipped data files. `dir` is created when first needed. NULL (the
 * default): $EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember, else
 * ~/.cache/ember where the home folder exists (ember never creates a home
 * folder; without one nothing is kept). "": keep nothing on disk, so every
 * start compiles again. Process-wide, since ember_devices, which has no
 * context, uses it too: set it before opening devices. The string is
 * copied; one of 3000 bytes or more is refused (EMBER_ERR_ARG), leaving the
 * folder as it was. */
EMBER_API ember_status ember_set_cache_dir(const char *dir);

/* Threads the CPU backend uses; 0 (the default) means every core. Before
 * ember_ctx_use_device it sets what the device opens with; after, it
 * changes the open CPU device's threads at once (other devices ignore it).
 * OpenBLAS's own thread count, which is process-wide, is set only around
 * ember's own calls into it and is otherwise left as the host program set
 * it. A device that cannot start the threads asked for keeps working with
 * those it has and returns the failure (recorded on the context too).
 * On Linux its workers are named "ember-cpu" (as `top -H` and gdb show
 * them); the progress ticker is "ember-wait", a replica "ember-replica". */
EMBER_API ember_status ember_ctx_set_threads(ember_ctx *ctx, int threads);

/* Opens a device: "cpu", "auto" (the best available), or a backend name with
 * an optional index such as "opencl:1". A device that cannot be used is an
 * error with the reason; there is no silent fallback. A context uses one
 * device for its whole life: call this once. */
EMBER_API ember_status ember_ctx_use_device(ember_ctx *ctx, const char *device);

/* "cpu (2 threads, OpenBLAS 0.3.21)", or "none" before a device is open. */
EMBER_API const char *ember_ctx_device_name(const ember_ctx *ctx);

/* Why "auto" chose the device it did: "auto chose cpu; passed over: cuda
 * (libcuda.so.1 not found: ...), opencl:0 (a CPU device; ...)". Empty when
 * the device was named. */
EMBER_API const char *ember_ctx_device_choice(const ember_ctx *ctx);

/* A device this build can see, or a backend that has none and why. */
typedef struct ember_device_info {
    char name[32];         /* what ember_ctx_use_device takes: "cpu", "opencl:0" */
    char backend[16];      /* "cpu", "opencl", "cuda" */
    char description[256]; /* "cpu (2 threads, OpenBLAS 0.3.21)" */
    bool usable;           /* it opened: ember can train on it */
    bool preferred;        /* "auto" would take it (if usable and nothing before it is) */
    char reason[1024];     /* not usable: why, in plain words, and the fix;
                            * usable but not preferred: why auto passes it over */
} ember_device_info;

/* Fills up to `max` entries in the order "auto" tries them (cuda, opencl,
 * cpu), one per device, or one per backend that has none (usable false,
 * with the reason); returns how many entries there are, which may exceed
 * max. Each device is opened to tell whether it is usable. `threads` is
 * what the cpu entry will use (0: every core). */
EMBER_API int ember_devices(ember_device_info *out, int max, int threads);

/* The whole diagnosis `ember devices` prints: every backend and device, the
 * libraries and versions found (the NVIDIA driver and the PTX it loads,
 * every NVRTC and its archs, each GPU's kernel path and why, OpenCL's
 * platforms), what cannot be used and the fix, and what "auto" would
 * choose. As text for people, or as JSON (fields: docs/devices.md).
 * A string to ember_free(), or NULL when out of memory. */
EMBER_API char *ember_devices_report(bool json, int threads);

/* The status and message of the most recent failure since ember_clear_error
 * (EMBER_OK and "" when there was none). */
EMBER_API ember_status ember_last_status(const ember_ctx *ctx);
EMBER_API const char *ember_last_error(const ember_ctx *ctx);
EMBER_API void ember_clear_error(ember_ctx *ctx);
/* Records a failure as the library does, for code built on ember (a model
 * or layer of your own) to report the same way; returns `status`. */
EMBER_API ember_status ember_set_error(ember_ctx *ctx, ember_status status, const char *fmt, ...)
    EMBER_PRINTF_LIKE(3, 4);
/* Logs a message through the context's callback (ember_ctx_set_log), as
 * the library's own notes and warnings go. */
EMBER_API void ember_log(ember_ctx *ctx, ember_log_level level, const char *fmt, ...) EMBER_PRINTF_LIKE(3, 4);

/* Memory counters, for tests and benchmarks: a steady-state training step
 * leaves every counter unchanged. */
typedef struct ember_memory_stats {
    uint64_t device_allocs; /* buffers ever requested from the backend */
    uint64_t device_bytes;  /* bytes held from the backend now (in use or cached) */
    uint64_t host_allocs;   /* host allocations for tensors, tape and pools */
} ember_memory_stats;
EMBER_API void ember_ctx_memory_stats(const ember_ctx *ctx, ember_memory_stats *stats);
/* Gives the device buffers the context keeps for reuse back to the device
 * (or the host allocator): for a long-lived program between bursts of work.
 * The next step allocates them again. Tensors still alive are untouched.
 * (The context bounds what it keeps by itself too: at most twice the most
 * it has had in use at once, plus 16 MiB.) */
EMBER_API void ember_ctx_release_cached(ember_ctx *ctx);

/* ----------------------------------------------------------------- tensors */

#define EMBER_MAX_DIMS        6

typedef enum ember_dtype {
    EMBER_F32, /* float, for data, parameters and gradients */
    EMBER_I32, /* int32_t, for class-index targets */
    /* Block-quantised weights as GGUF files keep them (ggml's formats;
     * docs/models.md, "Block quantisation"): a matrix (rows, cols) whose
     * rows are cut into blocks of 32 or 256 small integers with a scale
     * or two. ember_linear takes one as its weight and ember_embedding as
     * its table, and no other op; ember_tensor_write and _read move the
     * blocks' bytes as they are stored (ember_tensor_bytes of them). */
    EMBER_Q4_0, /* 32 weights in 18 bytes: d * (q - 8) */
    EMBER_Q4_1, /* 32 in 20: d * q + m */
    EMBER_Q8_0, /* 32 in 34: d * q, q 8-bit */
    EMBER_Q4_K, /* 256 in 144: 4-bit q, a 6-bit scale and min every 32 */
    EMBER_Q6_K, /* 256 in 210: 6-bit q, an 8-bit scale every 16 */
} ember_dtype;

typedef struct ember_tensor ember_tensor;

/* A zero-filled tensor on the context's device, owned by the caller. */
EMBER_API ember_tensor *ember_tensor_new(ember_ctx *ctx, ember_dtype dtype, int ndim, const int64_t *shape);
/* A caller-owned copy, contiguous, detached from the tape. */
EMBER_API ember_tensor *ember_tensor_copy(const ember_tensor *t);
/* dst's values become src's, on the device (same context, shape and
 * dtype; any strides): how a key/value cache, a narrow view of one, is
 * filled. Not recorded on the tape. */
EMBER_API ember_status ember_tensor_copy_from(ember_tensor *dst, const ember_tensor *src);
/* Frees a caller-owned tensor; tensors owned by the tape, a parameter set or
 * a batcher are left to their owner. */
EMBER_API void ember_tensor_free(ember_tensor *t);

EMBER_API ember_ctx *ember_tensor_ctx(const ember_tensor *t);
EMBER_API ember_dtype ember_tensor_dtype(const ember_tensor *t);
EMBER_API int ember_tensor_ndim(const ember_tensor *t);
EMBER_API int64_t ember_tensor_dim(const ember_tensor *t, int axis); /* axis < 0 counts from the end */
EMBER_API int64_t ember_tensor_numel(const ember_tensor *t);
/* The bytes its values take: numel * 4, or a quantised tensor's blocks. */
EMBER_API size_t ember_tensor_bytes(const ember_tensor *t);
/* "F32", "Q4_K", ...: a dtype's name, as GGUF and safetensors spell it. */
EMBER_API const char *ember_dtype_name(ember_dtype dtype);

/* How many times t's storage has been written in place since it was made:
 * by ember_tensor_write, an optimizer's step (parameters) or batch norm in
 * training (its running statistics). A cache of something computed from t
 * (a model's batch norm folded into a convolution) stays good while the
 * count is what it was. */
EMBER_API uint64_t ember_tensor_writes(const ember_tensor *t);
/* Copy between host memory and the tensor, in row-major order whatever the
 * tensor's strides; `bytes` must equal ember_tensor_bytes. */
EMBER_API ember_status ember_tensor_write(ember_tensor *t, const void *src, size_t bytes);
EMBER_API ember_status ember_tensor_read(const ember_tensor *t, void *dst, size_t bytes);
/* The value of a one-element F32 tensor. */
EMBER_API ember_status ember_tensor_item(const ember_tensor *t, float *value);

/* Gradients: a tensor that requires grad gets .grad filled by ember_backward. */
EMBER_API ember_status ember_tensor_set_requires_grad(ember_tensor *t, bool requires_grad);
EMBER_API bool ember_tensor_requires_grad(const ember_tensor *t);
/* The accumulated gradient, same shape as t, or NULL if none was computed.
 * Only a leaf (a tensor the caller made, a parameter) keeps one after
 * ember_backward: an op's output's gradient is given back once the op's own
 * backward pass has used it, as PyTorch keeps none for a non-leaf. */
EMBER_API ember_tensor *ember_tensor_grad(const ember_tensor *t);

/* --------------------------------------------------------------------- ops
 *
 * Each op returns a new tensor owned by the tape. When grad is enabled and
 * an input requires grad, the op is recorded so that ember_backward can
 * differentiate it. Elementwise binary ops broadcast as NumPy does. */

/* y = a + b */
EMBER_API ember_tensor *ember_add(ember_tensor *a, ember_tensor *b);
/* y = a - b */
EMBER_API ember_tensor *ember_sub(ember_tensor *a, ember_tensor *b);
/* y = a * b */
EMBER_API ember_tensor *ember_mul(ember_tensor *a, ember_tensor *b);
/* y = alpha * x */
EMBER_API ember_tensor *ember_scale(ember_tensor *x, float alpha);
/* y = max(x, 0) */
EMBER_API ember_tensor *ember_relu(ember_tensor *x);
/* y = x > 0 ? x : slope * x (PyTorch's LeakyReLU; its default slope is 0.01) */
EMBER_API ember_tensor *ember_leaky_relu(ember_tensor *x, float slope);
/* y = 1 / (1 + e^-x) */
EMBER_API ember_tensor *ember_sigmoid(ember_tensor *x);
/* y = tanh x */
EMBER_API ember_tensor *ember_tanh(ember_tensor *x);
/* y = x * Phi(x), Phi the standard normal distribution function (PyTorch's
 * GELU, exact: not the tanh approximation) */
EMBER_API ember_tensor *ember_gelu(ember_tensor *x);
/* y = x * sigmoid(x): PyTorch's SiLU (also called swish; Llama's MLPs and
 * EfficientNet use it), made of ember_sigmoid and ember_mul, whose
 * gradients the tape records */
EMBER_API ember_tensor *ember_silu(ember_tensor *x);
/* y = ln(1 + e^x), and x itself for x > 20: PyTorch's Softplus (beta 1,
 * threshold 20), a smooth ReLU */
EMBER_API ember_tensor *ember_softplus(ember_tensor *x);
/* y = x * tanh(softplus(x)): PyTorch's Mish */
EMBER_API ember_tensor *ember_mish(ember_tensor *x);
/* y = min(max(x, 0), 6): PyTorch's ReLU6 (MobileNet's) */
EMBER_API ember_tensor *ember_relu6(ember_tensor *x);
/* y = relu6(x + 3) / 6: PyTorch's Hardsigmoid */
EMBER_API ember_tensor *ember_hardsigmoid(ember_tensor *x);
/* y = x * relu6(x + 3) / 6: PyTorch's Hardswish (MobileNetV3's) */
EMBER_API ember_tensor *ember_hardswish(ember_tensor *x);

/* Dropout, as PyTorch's: when `training`, y = x * mask, mask[i] = 1 / (1 - p)
 * with probability 1 - p and 0 otherwise, drawn from `seed` (the same mask
 * on every device; use a new seed each step); otherwise y is x itself.
 * 0 <= p <= 1. */
EMBER_API ember_tensor *ember_dropout(ember_tensor *x, float p, bool training, uint64_t seed);

/* y = sum of x over `axis` (EMBER_ALL_AXES: over everything, giving a
 * scalar); keepdim keeps the summed axis with size 1. */
#define EMBER_ALL_AXES        127
EMBER_API ember_tensor *ember_sum(ember_tensor *x, int axis, bool keepdim);
/* y = sum(x) / count, over the same axes as ember_sum */
EMBER_API ember_tensor *ember_mean(ember_tensor *x, int axis, bool keepdim);

/* y_i = e^(x_i - max x) / sum_j e^(x_j - max x), along `axis` */
EMBER_API ember_tensor *ember_softmax(ember_tensor *x, int axis);
/* y_i = x_i - max x - ln sum_j e^(x_j - max x), along `axis` */
EMBER_API ember_tensor *ember_log_softmax(ember_tensor *x, int axis);

/* loss = mean over n of -log softmax(logits_n)[target_n], as PyTorch's
 * CrossEntropyLoss and Keras's sparse categorical cross-entropy.
 * logits is (N, classes) F32, target is (N) I32 with values in [0, classes);
 * an index outside that range gives a NaN loss. */
EMBER_API ember_tensor *ember_cross_entropy(ember_tensor *logits, ember_tensor *target);
/* A target that takes no part in ember_cross_entropy_ignore's loss:
 * PyTorch's ignore_index default, the label Hugging Face's trainers give
 * the tokens a model is not taught to write (a chat's prompt). */
#define EMBER_IGNORE_INDEX    (-100)
/* ember_cross_entropy over the targets that are not EMBER_IGNORE_INDEX
 * alone: their mean, and no gradient to the other rows, as PyTorch's
 * F.cross_entropy(..., ignore_index=-100). Every target ignored gives a
 * loss of 0 (PyTorch's is NaN) with a gradient of 0. It reads the targets
 * back to the host to weigh the rows. */
EMBER_API ember_tensor *ember_cross_entropy_ignore(ember_tensor *logits, ember_tensor *target);

/* y = fn(user, x), its activations recomputed in the backward pass
 * instead of kept (gradient checkpointing, PyTorch's
 * torch.utils.checkpoint): fn runs with grad off now, and again with grad
 * on when the backward pass reaches y; the gradients of x and of the
 * parameters fn uses come out as without it. The memory of everything fn
 * makes but its output, for one more run of fn. fn must compute the same
 * both times (dropout from a seed it is given), return a tensor an op
 * made, and `user` must outlive the backward pass. */
typedef ember_tensor *(*ember_recompute_fn)(void *user, ember_tensor *x);
EMBER_API ember_tensor *ember_recompute(ember_tensor *x, ember_recompute_fn fn, void *user);

/* y = x @ w^T + b: x is (N, in), w is (out, in), b is (out) or NULL; y is
 * (N, out). x (N, T, in) (or more axes) gives y (N, T, out): every
 * position through the layer, as PyTorch's Linear. w may be quantised
 * (EMBER_Q4_0 ...): its blocks are dequantised as the product reads them,
 * and the gradient reaches x and b only. */
EMBER_API ember_tensor *ember_linear(ember_tensor *x, ember_tensor *w, ember_tensor *b);
/* y = a @ b: a is (M, K), b is (K, N); y is (M, N) */
EMBER_API ember_tensor *ember_matmul(ember_tensor *a, ember_tensor *b);

/* 2-d cross-correlation, as PyTorch's Conv2d: x is (N, C, H, W), w is
 * (OC, C, KH, KW), b is (OC) or NULL; y is (N, OC, OH, OW) with
 * OH = (H + 2 * padding - KH) / stride + 1, likewise OW. */
EMBER_API ember_tensor *ember_conv2d(ember_tensor *x, ember_tensor *w, ember_tensor *b, int stride,
                                     int padding);
/* The same with the channels in `groups` groups (PyTorch's Conv2d(groups=)):
 * w is (OC, C / groups, KH, KW), OC a multiple of groups, and output
 * channel o sees only the input channels of its group o / (OC / groups).
 * groups = C = OC is a depthwise convolution (MobileNet's). */
EMBER_API ember_tensor *ember_conv2d_grouped(ember_tensor *x, ember_tensor *w, ember_tensor *b, int stride,
                                             int padding, int groups);
/* y = max over each kernel x kernel window: x is (N, C, H, W), y is
 * (N, C, (H - kernel) / stride + 1, (W - kernel) / stride + 1). */
EMBER_API ember_tensor *ember_max_pool2d(ember_tensor *x, int kernel, int stride);
/* y = the mean of each kernel x kernel window: x is (N, C, H, W), y is
 * (N, C, (H - kernel) / stride + 1, (W - kernel) / stride + 1). */
EMBER_API ember_tensor *ember_avg_pool2d(ember_tensor *x, int kernel, int stride);
/* The same with `padding` on each side (at most kernel / 2) and, with
 * ceil_mode, a last window for what the others leave over, as PyTorch's
 * MaxPool2d and AvgPool2d: OH = floor or ceil((H + 2 padding - kernel) /
 * stride) + 1, a window starting past the padding dropped. The max never
 * takes the padding; the mean divides by the window's elements inside the
 * padded input (PyTorch's count_include_pad=True), or inside x alone. */
EMBER_API ember_tensor *ember_max_pool2d_padded(ember_tensor *x, int kernel, int stride, int padding,
                                                bool ceil_mode);
EMBER_API ember_tensor *ember_avg_pool2d_padded(ember_tensor *x, int kernel, int stride, int padding,
                                                bool ceil_mode, bool count_include_pad);
/* y (N, C, scale H, scale W): x (N, C, H, W) made larger, as PyTorch's
 * nn.Upsample(scale_factor=scale): each output the nearest input (the one
 * at floor(position / scale)), or with `bilinear` the mix of the two
 * nearest on each axis (align_corners=False: the output's centres mapped
 * onto the input's, clamped at its first position). 1 <= scale <= 64. */
EMBER_API ember_tensor *ember_upsample2d(ember_tensor *x, int scale, bool bilinear);
/* y (N, C) = the mean of each (H, W) plane of x (N, C, H, W): PyTorch's
 * AdaptiveAvgPool2d(1) and a flatten. */
EMBER_API ember_tensor *ember_global_avg_pool2d(ember_tensor *x);

/* Batch normalization, as PyTorch's BatchNorm1d on x (N, C) and
 * BatchNorm2d on x (N, C, H, W): each channel over the batch (and its
 * positions), y = (x - mean) / sqrt(var + eps) * weight + bias, weight and
 * bias (C) or NULL. When `training`, mean and var are the batch's (var
 * biased) and the running statistics (C) move towards them:
 * running = (1 - momentum) running + momentum stat, var unbiased there;
 * otherwise the running statistics are the mean and var, and stay.
 * PyTorch's defaults: momentum 0.1, eps 1e-5. */
EMBER_API ember_tensor *ember_batch_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                         ember_tensor *running_mean, ember_tensor *running_var, bool training,
                                         float momentum, float eps);
/* relu(ember_batch_norm(...)), in the same passes over x and dy: the pair
 * that follows most convolutions, one op instead of two (a model runs a
 * batch_norm layer followed by a relu layer through it). */
EMBER_API ember_tensor *ember_batch_norm_relu(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                              ember_tensor *running_mean, ember_tensor *running_var,
                                              bool training, float momentum, float eps);
/* Batch normalization with running statistics, folded into the layer
 * before it: a convolution (or a linear layer) with weight w (OC, ...) and
 * bias b (OC) or NULL, followed by ember_batch_norm in evaluation, is one
 * convolution with
 *   w' = w * s (each output channel's filter scaled), b' = (b - running_mean) * s + bias,
 *   s = weight / sqrt(running_var + eps)
 * (weight and bias NULL: 1 and 0, as in ember_batch_norm). Sets *folded_w
 * and *folded_b to w' and b', tape tensors, and returns EMBER_OK. The
 * tape records the ops they are made of, so gradients reach w, b, weight
 * and bias; the running statistics are constants, as ember_batch_norm
 * treats them in evaluation. A model that is not training (evaluation,
 * prediction) runs its conv2d + batch_norm2d and linear + batch_norm1d
 * pairs so (docs/design.md): one pass less over every activation. */
EMBER_API ember_status ember_batch_norm_fold(ember_tensor *w, ember_tensor *b, ember_tensor *weight,
                                             ember_tensor *bias, ember_tensor *running_mean,
                                             ember_tensor *running_var, float eps, ember_tensor **folded_w,
                                             ember_tensor **folded_b);

/* Views share storage with x. reshape takes one -1 to infer a dimension and
 * copies first when x's strides do not allow a view. */
EMBER_API ember_tensor *ember_reshape(ember_tensor *x, int ndim, const int64_t *shape);
/* (N, d1, d2, ...) -> (N, d1 * d2 * ...) */
EMBER_API ember_tensor *ember_flatten(ember_tensor *x);
/* swaps two axes: a strided view, no copy */
EMBER_API ember_tensor *ember_transpose(ember_tensor *x, int axis0, int axis1);
/* a contiguous copy of x, or x itself when it already is contiguous */
EMBER_API ember_tensor *ember_contiguous(ember_tensor *x);
/* y = x's positions [start, start + length) along `axis`: a view (PyTorch's narrow) */
EMBER_API ember_tensor *ember_narrow(ember_tensor *x, int axis, int64_t start, int64_t length);
/* y = xs[0], xs[1], ... one after another along `axis` (torch.cat), every
 * other axis the same in all `count` of them: a new tensor, not a view */
EMBER_API ember_tensor *ember_concat(ember_tensor *const *xs, int count, int axis);
/* y = x with before[i] and after[i] positions holding `value` around each
 * axis i (x's ndim of each): PyTorch's F.pad in "constant" mode, ONNX's
 * Pad; -INFINITY before a max-pool pads as its own padding does. */
EMBER_API ember_tensor *ember_pad(ember_tensor *x, const int64_t *before, const int64_t *after, float value);

/* Sequences and attention: the ops of a GPT (docs/how-it-works.md,
 * "Attention"). Loss over every position of a sequence is
 * ember_cross_entropy with logits (N, T, classes) and targets (N, T). */

/* y (..., dim) = the rows of weight (vocab, dim) that index (...) I32
 * names, as PyTorch's Embedding; an index outside [0, vocab) gives a row of
 * NaN. The gradient goes to weight alone; a quantised weight's rows come
 * dequantised, and take no gradient. */
EMBER_API ember_tensor *ember_embedding(ember_tensor *index, ember_tensor *weight);
/* y = (x - mean) / sqrt(var + eps) * weight + bias over x's last axis (C),
 * var biased, as PyTorch's LayerNorm(C) (its eps: 1e-5); weight and bias
 * (C), or NULL for 1 and 0. */
EMBER_API ember_tensor *ember_layer_norm(ember_tensor *x, ember_tensor *weight, ember_tensor *bias,
                                         float eps);
/* y = x / sqrt(mean(x^2) + eps) * weight over x's last axis (C): the RMSNorm
 * of Llama and its kin (PyTorch's nn.RMSNorm(C, eps); Llama 2's eps: 1e-5).
 * weight (C), or NULL for 1. */
EMBER_API ember_tensor *ember_rms_norm(ember_tensor *x, ember_tensor *weight, float eps);
/* y = x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): the tanh form
 * of GELU that GPT-2 uses (PyTorch's GELU(approximate='tanh')) */
EMBER_API ember_tensor *ember_gelu_tanh(ember_tensor *x);
/* y = a @ b for each of B pairs: a (B, M, K), b (B, K, N), y (B, M, N)
 * (torch.bmm). A transposed view of either, ember_transpose(t, 1, 2), is
 * read in place, not copied. */
EMBER_API ember_tensor *ember_bmm(ember_tensor *a, ember_tensor *b);
/* Softmax over the last axis of scores x (..., Tq, Tk) of Tq queries over
 * Tk keys (Tq <= Tk, the queries being the last Tq positions), each query
 * seeing only the keys up to its own position: the others get 0. */
EMBER_API ember_tensor *ember_causal_softmax(ember_tensor *x);
/* Causal multi-head self-attention (a GPT's, before its output
 * projection): x (B, T, 3C) holds each position's query, key and value
 * side by side (C each, split into `heads` heads of C / heads); y (B, T, C)
 * = softmax(q k^T / sqrt(C / heads), causal) v per head, the heads side by
 * side. With `training` and dropout > 0 the attention weights go through
 * dropout (its mask drawn from `seed`, as ember_dropout's). */
EMBER_API ember_tensor *ember_attention(ember_tensor *x, int heads, float dropout, bool training,
                                        uint64_t seed);
/* The same for generation with a key/value cache: x (B, n, 3C) holds n new
 * positions; their keys and values are written into `cache` (2, B, heads,
 * L, C / heads), caller-owned and contiguous, at [position, position + n),
 * and each new query attends over the cache's first position + n places.
 * No gradient; one new token costs one position's work. */
EMBER_API ember_tensor *ember_attention_cached(ember_tensor *x, int heads, ember_tensor *cache,
                                               int64_t position);

/* Rotary position embedding (RoPE), as LLaMA-family models turn their
 * queries and keys: in each head of x (B, T, heads, dim), the pairs of its
 * first 2 * pairs values turn by their position's angles, token t being
 * at position `position + t`:
 *   y[2j] = x[2j] cos a - x[2j+1] sin a,  y[2j+1] = x[2j] sin a + x[2j+1] cos a
 * with a = p * base^(-2j / (2 * pairs)); with `neox` the pairs are
 * (j, j + pairs) instead (Qwen 2, GPT-NeoX). The angles come from a table
 * (positions, pairs, 2) of their cosines and sines that ember_rope_table
 * makes once (caller-owned, F32); `divisors` (pairs values, or NULL)
 * divide each pair's frequency, as Llama 3's scaled RoPE does.
 * Differentiable in x. */
EMBER_API ember_tensor *ember_rope_table(ember_ctx *ctx, int64_t positions, int64_t dims, float base,
                                         const float *divisors);
EMBER_API ember_tensor *ember_rope(ember_tensor *x, ember_tensor *table, int64_t position, bool neox);

/* ---------------------------------------------------------------- autograd */

/* Fills .grad of every tensor that requires grad and that `loss` (a
 * one-element tensor) depends on, adding to what is there. */
EMBER_API ember_status ember_backward(ember_tensor *loss);
/* While set, ember_backward calls `fn` for each leaf that requires grad
 * (each parameter) as soon as its gradient is final, in the order the
 * pass finishes them (the last layer's first): to start sending gradients
 * while the rest of the pass runs (ember_parallel does). NULL: none. */
typedef void (*ember_grad_ready_fn)(void *user, ember_tensor *leaf);
EMBER_API void ember_set_grad_ready(ember_ctx *ctx, ember_grad_ready_fn fn, void *user);
/* Releases every tensor the ops made since the last clear; their memory goes
 * back to the context's pools for the next step. */
EMBER_API void ember_tape_clear(ember_ctx *ctx);
/* A place on the tape, and a release back to it: for running ops with
 * recording off in the middle of other work (a validation pass inside a
 * training step) without clearing the tape the caller still needs.
 * ember_tape_release_since releases every tensor made since `mark` except
 * `keep` (NULL: none), which stays on the tape; it does nothing when nodes
 * were recorded since the mark, since their backward pass needs them
 * (EMBER_OK still). A mark the tape has been cleared past since
 * (ember_tape_clear) is EMBER_ERR_ARG, and nothing is released. */
typedef struct ember_tape_mark {
    int64_t tensors, nodes;
} ember_tape_mark;
EMBER_API ember_tape_mark ember_tape_mark_now(ember_ctx *ctx);
EMBER_API ember_status ember_tape_release_since(ember_ctx *ctx, ember_tape_mark mark, ember_tensor *keep);
/* Turns recording off (for evaluation) or on; returns the previous setting.
 * With recording off the ops save nothing for a backward pass; the tensors
 * they return still belong to the tape until ember_tape_clear.
 * ember_model_forward with recording off keeps only its output on the
 * tape, and ember_model_predict keeps nothing. */
EMBER_API bool ember_set_grad_enabled(ember_ctx *ctx, bool enabled);
/* Whether ops record for a backward pass now (true for a new context). */
EMBER_API bool ember_grad_enabled(const ember_ctx *ctx);

/* -------------------------------------------------------------- parameters */

/* A named set of parameters held in one allocation, with their gradients in
 * a second. Names follow PyTorch's state_dict ("conv1.weight"). */
typedef struct ember_params ember_params;

EMBER_API ember_params *ember_params_new(ember_ctx *ctx);
EMBER_API void ember_params_free(ember_params *params);

/* Adds a zero-filled parameter that requires grad and returns it (owned by
 * the set). Adding moves the set's storage, so add every parameter before
 * training starts. */
EMBER_API ember_tensor *ember_params_add(ember_params *params, const char *name, int ndim,
                                         const int64_t *shape);
/* Adds a zero-filled buffer: state the forward pass keeps and checkpoints
 * hold, which no optimizer touches and no gradient reaches (BatchNorm's
 * "running_mean", "running_var" and, with ndim 0, "num_batches_tracked";
 * PyTorch's register_buffer). */
EMBER_API ember_tensor *ember_params_add_buffer(ember_params *params, const char *name, int ndim,
                                                const int64_t *shape);
/* Parameters and buffers together, in the order added. */
EMBER_API int ember_params_count(const ember_params *params);
EMBER_API ember_tensor *ember_params_at(const ember_params *params, int index);
EMBER_API const char *ember_params_name(const ember_params *params, int index);
EMBER_API bool ember_params_is_buffer(const ember_params *params, int index);
EMBER_API ember_tensor *ember_params_find(const ember_params *params, const char *name);
/* Elements of the parameters, buffers not counted (Keras's and PyTorch's
 * "parameters"). */
EMBER_API int64_t ember_params_numel(const ember_params *params);
/* Sets every gradient to zero (one fill over the gradient allocation): a
 * device's fill can fail, as any launch can. */
EMBER_API ember_status ember_params_zero_grad(ember_params *params);

/* Checkpoints as safetensors: little-endian F32 under the parameters' and
 * buffers' names, readable by Python's safetensors and PyTorch's
 * load_state_dict (which converts num_batches_tracked to int64). Loading
 * also takes what PyTorch saves: F16, BF16, F64, I64 and I32 tensors become
 * float32, each value checked (integers within 2^24, doubles within
 * float32's range, no NaN or infinity); a torch.save pickle is refused with
 * the line of Python that rewrites it as safetensors. Saving
 * writes a temporary file, fsyncs it and renames it into place; loading
 * checks every offset and shape before it reads, and changes nothing unless
 * the whole file matches the set. `metadata` (may be NULL) is stored under
 * "__metadata__" as {"key": "value", ...} pairs, NULL-terminated. */
EMBER_API ember_status ember_params_save(const ember_params *params, const char *path,
                                         const char *const *metadata);
EMBER_API ember_status ember_params_load(ember_params *params, const char *path);
/* The same with the file's bytes in memory: saving returns a buffer to
 * ember_free() in *data, *size bytes long; loading reads `size` bytes at `data`
 * (not kept) and checks them as a file is checked. */
EMBER_API ember_status ember_params_save_memory(const ember_params *params, const char *const *metadata,
                                                void **data, size_t *size);
EMBER_API ember_status ember_params_load_memory(ember_params *params, const void *data, size_t size);

/* Starts a set from another's weights, for fine-tuning (`ember train
 * --init`): every parameter and buffer is read from the checkpoint at
 * `path` (or from `size` bytes at `data` when data is not NULL, `path`
 * then naming it in messages) except those under a name in `skip`
 * (NULL-terminated; "fc" leaves fc.weight and fc.bias as they are, for a
 * new head). The rest must match by name and shape, or nothing changes and
 * the error lists every difference; a name in `skip` that is no layer's is
 * an error too. Dtypes convert as ember_params_load's do. */
EMBER_API ember_status ember_params_init_from(ember_params *params, const char *path, const void *data,
                                              size_t size, const char *const *skip);

/* A checkpoint's metadata, read without loading its tensors. The keys
 * ember writes (docs/models.md, "Checkpoints"): "ember.model",
 * "ember.model_text", "ember.input", "ember.classes", "ember.forwards",
 * "ember.model_seed", and from `ember train` "ember.class_names",
 * "ember.data", "ember.data_dir", "ember.seed", "ember.resize",
 * "ember.normalize", "ember.image_mean" (and the other ember_image_stats
 * fields), "ember.threads", "ember.epoch", "ember.step" and the run's
 * settings. */
typedef struct ember_checkpoint ember_checkpoint;
EMBER_API ember_checkpoint *ember_checkpoint_open(ember_ctx *ctx, const char *path);
EMBER_API void ember_checkpoint_close(ember_checkpoint *checkpoint);
/* The value under `key`, or NULL; valid until the checkpoint is closed. */
EMBER_API const char *ember_checkpoint_meta(const ember_checkpoint *checkpoint, const char *key);
/* Every pair, sorted by key. */
EMBER_API int ember_checkpoint_meta_count(const ember_checkpoint *checkpoint);
EMBER_API const char *ember_checkpoint_meta_at(const ember_checkpoint *checkpoint, int index,
                                               const char **value);
/* The name of class `index` as the checkpoint records it (the
 * "ember.class_names" that ember train writes: "Ankle boot"), or NULL when
 * it records none or the index is out of range; valid until the checkpoint
 * is closed. */
EMBER_API const char *ember_checkpoint_class_name(const ember_checkpoint *checkpoint, int index);
/* The same from a checkpoint in memory (`size` bytes at `data`, copied:
 * the caller's buffer may go once this returns). */
EMBER_API ember_checkpoint *ember_checkpoint_open_memory(ember_ctx *ctx, const void *data, size_t size);
/* Its tensors as the header describes them, read without their values: how
 * many, and the shape of the one named `name` (its dimensions, 0 for a
 * scalar, with the sizes in shape[]), or -1 when there is no tensor of that
 * name or it has more than EMBER_MAX_DIMS dimensions. Every shape has been
 * checked against the bytes the file holds, so a model can be checked
 * against a checkpoint before anything is allocated for it. */
EMBER_API int ember_checkpoint_tensor_count(const ember_checkpoint *checkpoint);
EMBER_API int ember_checkpoint_tensor_shape(const ember_checkpoint *checkpoint, const char *name,
                                            int64_t shape[EMBER_MAX_DIMS]);

/* A seeded random generator, so that runs are reproducible. */
typedef struct ember_rng {
    uint64_t state;
} ember_rng;
EMBER_API ember_rng ember_rng_seed(uint64_t seed);
EMBER_API uint32_t ember_rng_u32(ember_rng *rng);
EMBER_API float ember_rng_uniform(ember_rng *rng, float low, float high);

/* PyTorch's default initialisation for Linear and Conv2d: the weight is
 * kaiming-uniform with a = sqrt(5), that is U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
 * and the bias is uniform with the same bound. fan_in = numel(w) / shape[0]. */
EMBER_API ember_status ember_init_uniform(ember_tensor *t, float low, float high, ember_rng *rng);
EMBER_API ember_status ember_init_default(ember_tensor *weight, ember_tensor *bias, ember_rng *rng);

/* Layers: a layer's parameters added to a set under PyTorch's names
 * (name.weight, name.bias) and initialised as PyTorch does. The forward pass
 * is then the op: ember_conv2d(x, w, b, ...), ember_linear(x, w, b). */
EMBER_API ember_status ember_layer_conv2d(ember_params *params, const char *name, int64_t in_channels,
                                          int64_t out_channels, int64_t kernel, ember_rng *rng,
                                          ember_tensor **weight, ember_tensor **bias);
EMBER_API ember_status ember_layer_linear(ember_params *params, const char *name, int64_t in_features,
                                          int64_t out_features, ember_rng *rng, ember_tensor **weight,
                                          ember_tensor **bias);

/* --------------------------------------------------------------- optimizers */

typedef struct ember_optim ember_optim;

typedef struct ember_adam_options {
    float lr, beta1, beta2, eps, weight_decay;
} ember_adam_options;
/* lr, betas 0.9 and 0.999, eps 1e-8, no weight decay: PyTorch's defaults */
EMBER_API ember_adam_options ember_adam_defaults(float lr);

typedef struct ember_sgd_options {
    float lr, momentum, dampening, weight_decay;
    bool nesterov;
} ember_sgd_options;
/* lr, no momentum, no dampening, no weight decay */
EMBER_API ember_sgd_options ember_sgd_defaults(float lr);

/* The optimizer updates every parameter of the set but the frozen ones; its
 * state (Adam's two moments, SGD's velocity) is one allocation each. A
 * parameter is frozen by turning its requires_grad off
 * (ember_tensor_set_requires_grad(ember_params_at(set, i), false), as
 * PyTorch's p.requires_grad_(False)): no gradient is computed for it, and
 * the step leaves it as it is, weight decay and momentum included; a
 * frozen BatchNorm's running statistics still move in training, as in
 * PyTorch. `ember train --freeze` does this by layer name. */
EMBER_API ember_optim *ember_adam_new(ember_params *params, ember_adam_options options);
EMBER_API ember_optim *ember_sgd_new(ember_params *params, ember_sgd_options options);
/* AdamW (PyTorch's): Adam whose weight decay shrinks the parameters,
 * param *= 1 - lr * weight_decay, instead of adding to the gradient; only
 * parameters of two or more dimensions decay (weights and embeddings, not
 * biases or the norms' weights), as nanoGPT groups them. Its state saves
 * and loads as Adam's does, under the kind "adamw". */
EMBER_API ember_optim *ember_adamw_new(ember_params *params, ember_adam_options options);
EMBER_API void ember_optim_free(ember_optim *opt);
EMBER_API ember_status ember_optim_zero_grad(ember_optim *opt);
EMBER_API ember_status ember_optim_step(ember_optim *opt);
/* Gradient clipping by the global norm (torch.nn.utils.clip_grad_norm_):
 * the norm of all the set's gradients as one vector into *total_norm (may
 * be NULL), and every gradient scaled by max_norm / (norm + 1e-6) when
 * that is below 1. Call it between ember_backward and ember_optim_step. */
EMBER_API ember_status ember_clip_grad_norm(ember_params *params, float max_norm, float *total_norm);
/* Learning rate, for schedules: EMBER_ERR_ARG, the rate unchanged, for one
 * that is negative or not finite (a schedule gone wrong, caught before the
 * step that would spoil every parameter). */
EMBER_API ember_status ember_optim_set_lr(ember_optim *opt, float lr);
/* Steps taken (Adam's bias correction counts them). */
EMBER_API int64_t ember_optim_steps(const ember_optim *opt);
/* The optimizer's state as a safetensors file, so that a run can resume
 * exactly: per parameter as PyTorch names it ("conv1.weight.exp_avg",
 * "...exp_avg_sq" for Adam, "...momentum_buffer" for SGD), the step count
 * in the metadata. Loading checks the kind, names and shapes first and
 * changes nothing unless all match. */
EMBER_API ember_status ember_optim_save(const ember_optim *opt, const char *path,
                                        const char *const *metadata);
EMBER_API ember_status ember_optim_load(ember_optim *opt, const char *path);

/* Learning-rate schedules, as PyTorch's: a rate for each step from the step
 * alone. Warm-up first (linear over warmup_steps, from lr / (warmup + 1)
 * to lr: LinearLR), then constant; STEP multiplies by gamma every
 * step_size steps (StepLR); COSINE falls along half a cosine from lr to
 * min_lr at total_steps (CosineAnnealingLR, stepped each batch). */
typedef enum ember_lr_kind { EMBER_LR_CONSTANT, EMBER_LR_STEP, EMBER_LR_COSINE } ember_lr_kind;
typedef struct ember_lr_schedule {
    ember_lr_kind kind;
    float lr, min_lr, gamma;
    int64_t warmup_steps, step_size, total_steps;
} ember_lr_schedule;
/* Set it before each step: ember_optim_set_lr(opt, ember_lr_at(&s, step)). */
EMBER_API float ember_lr_at(const ember_lr_schedule *schedule, int64_t step);

/* -------------------------------------------------------------------- data */

typedef struct ember_dataset ember_dataset;

typedef enum ember_split { EMBER_TRAIN, EMBER_TEST } ember_split;

/* Tabular data's features and how they were standardised: each column
 * becomes (value - mean) / std, with the mean and the (population) standard
 * deviation of the training split, 1 for a constant column, as
 * scikit-learn's StandardScaler does. A csv data set has one
 * (ember_dataset_scaling), a checkpoint trained on one carries it in its
 * metadata (ember_feature_scaling_meta, ember_checkpoint_scaling), and
 * eval and predict apply the same (docs/interop.md). */
typedef struct ember_feature_scaling {
    int count;         /* features */
    char **names;      /* (count) their columns' names, in the order the model takes them */
    float *mean, *std; /* (count) */
    char *label;       /* the label column's name */
} ember_feature_scaling;
EMBER_API void ember_feature_scaling_free(ember_feature_scaling *scaling);

typedef struct ember_data_options {
    /* "fashion-mnist" (the default), "mnist", "cifar10", "cifar100" (its 100
     * fine classes), "folder", "random", "npy", "csv" (docs/interop.md),
     * "text" (a file's bytes as tokens: see ember_dataset_vocab) */
    const char *kind;
    /* where the files are; NULL: the kind's default (fashion-mnist:
     * /usr/share/datasets/fashion-mnist, from Debian's dataset-fashion-mnist;
     * on Windows the folder fashion-mnist in the current folder).
     * npy: a folder of x_train.npy, y_train.npy, x_test.npy, y_test.npy, or
     * one .npz holding them; csv: a .csv file (each class holds out a tenth
     * of its rows for test, chosen by `seed`) or a folder of train.csv and
     * test.csv */
    const char *dir;
    /* random: the shape of one sample, such as {1, 28, 28} or {100};
     * folder: {channels, height, width} to load at, zeros for the first image's;
     * text: {context}, the tokens of a window (0 dimensions: 128) */
    int sample_ndim;
    int64_t sample_shape[3];
    /* random: samples in the split (0: 4096 train, 1024 test) and classes (0: 10) */
    int64_t count;
    int classes;
    /* folder: resize images of another size (bilinear) instead of rejecting them */
    bool resize;
    /* random data, and the folder's held-out test split */
    uint64_t seed;
    /* csv: the label column's name (NULL: the last column) */
    const char *label;
    /* csv: standardise with these (a checkpoint's, for eval) instead of the
     * training split's; the file's columns are then found by name */
    const ember_feature_scaling *scaling;
    /* csv: the classes' names in index order, `classes` of them (a
     * checkpoint's), instead of the labels the training split has */
    const char *const *class_names;
} ember_data_options;

/* Loads a split into host memory as bytes; every file is checked before
 * anything is allocated for it. */
EMBER_API ember_dataset *ember_dataset_open(ember_ctx *ctx, const ember_data_options *options,
                                            ember_split split);
EMBER_API void ember_dataset_free(ember_dataset *ds);
EMBER_API int64_t ember_dataset_count(const ember_dataset *ds);
EMBER_API int ember_dataset_classes(const ember_dataset *ds);
/* The shape of one sample, without the batch axis: (C, H, W) or (features). */
EMBER_API int ember_dataset_sample_ndim(const ember_dataset *ds);
EMBER_API const int64_t *ember_dataset_sample_shape(const ember_dataset *ds);
/* "fashion-mnist train (60000 x 1x28x28, 10 classes)" */
EMBER_API const char *ember_dataset_describe(const ember_dataset *ds);
/* A class's name: Fashion-MNIST's ("T-shirt/top", ...), CIFAR-10's, a
 * folder's subfolder names; the index ("0", "1", ...) for MNIST and random
 * data. NULL for an index out of range. */
EMBER_API const char *ember_dataset_class_name(const ember_dataset *ds, int index);

/* Text (kind "text", `dir` the file): every byte a token, the vocabulary
 * the file's distinct bytes in order, token k being vocab[k]; the first
 * 90% of the file is the training split, the last 10% the test split. A
 * sample is a window of `context` tokens, x (context) I32, and its target
 * y (context), the tokens one place on; batches are x (B, context) I32 and
 * y (B, context). Shuffled batches take windows at offsets drawn from the
 * seed (an epoch: as many as fit in the split side by side); unshuffled
 * ones the side-by-side windows in order. The classes are the vocabulary's
 * tokens. Fills vocab (256 bytes, or NULL) and returns its size: 0 for
 * data that is not text, and for a tokenizer's tokens
 * (ember_dataset_from_tokens), whose vocabulary is the tokenizer's. */
EMBER_API int ember_dataset_vocab(const ember_dataset *ds, uint8_t *vocab);
/* Whether a sample is a sequence with a target at every position (text,
 * and a tokenizer's tokens): its batches' y is (B, T), not (B). */
EMBER_API bool ember_dataset_is_sequence(const ember_dataset *ds);
/* Whether some of its targets are EMBER_IGNORE_INDEX (a chat's prompts,
 * ember_lm_chat_dataset): its loss is ember_cross_entropy_ignore's, and
 * its accuracy counts the other targets alone. */
EMBER_API bool ember_dataset_ignores(const ember_dataset *ds);
/* How a sample's stored values became the model's inputs: "pixel / 255"
 * (bytes: images, and uint8 arrays), "none" (floats used as they are),
 * "none (token indices into ember.vocab)" (text), or
 * "(value - ember.feature_mean) / ember.feature_std" (a CSV table's
 * standardised features). */
EMBER_API const char *ember_dataset_normalize(const ember_dataset *ds);
/* A csv data set's features and standardisation (NULL for other kinds). */
EMBER_API const ember_feature_scaling *ember_dataset_scaling(const ember_dataset *ds);
/* The checkpoint metadata that carries a scaling: four keys and their
 * values, "ember.features" (a JSON array of the names), "ember.label",
 * "ember.feature_mean" and "ember.feature_std" (JSON arrays of numbers
 * that read back as the same floats), into kv[0..7] with kv[8] NULL; the
 * values (odd indices) are to ember_free(). */
EMBER_API ember_status ember_feature_scaling_meta(ember_ctx *ctx, const ember_feature_scaling *scaling,
                                                  char *kv[9]);
/* A checkpoint's scaling, read back: *scaling NULL when it has none, and
 * EMBER_ERR_FORMAT when its metadata is malformed; the same from metadata
 * pairs (key, value, ..., NULL), as ember_feature_scaling_meta writes them. */
EMBER_API ember_status ember_checkpoint_scaling(ember_ctx *ctx, const ember_checkpoint *ck,
                                                ember_feature_scaling **scaling);
EMBER_API ember_status ember_feature_scaling_from_meta(ember_ctx *ctx, const char *const *kv,
                                                       ember_feature_scaling **scaling);
/* The rows of a CSV table as a model trained on `scaling` takes them:
 * (rows, count) floats standardised, in an array to ember_free(). Columns are
 * found by name; the label column may be there (it is not read); any
 * other column, a missing feature or a cell that is not a number is an
 * error naming the line and the column. */
EMBER_API float *ember_csv_features(ember_ctx *ctx, const char *path, const ember_feature_scaling *scaling,
                                    int64_t *rows);
/* `rows` samples of scaling->count features (a NumPy array of a table's
 * rows), standardised in place as ember_csv_features standardises a
 * table's; a value whose result is past float32's range is
 * EMBER_ERR_FORMAT naming its row and feature (`what` names the data). */
EMBER_API ember_status ember_feature_scaling_apply(ember_ctx *ctx, const ember_feature_scaling *scaling,
                                                   float *values, int64_t rows, const char *what);

/* A data set over arrays the caller owns, for training and evaluating on
 * data ember has no loader for. Nothing is copied: the arrays must stay
 * alive and unchanged while the data set is in use. Give the images as
 * floats (used as they are) or as bytes (scaled to [0, 1] as ember's own
 * data sets are), not both. */
typedef struct ember_array_data {
    int64_t count;   /* samples, at least 1 */
    int sample_ndim; /* 1 (features) or 3 (C, H, W) */
    int64_t sample_shape[3];
    const float *images;            /* (count, sample shape...) floats, or NULL */
    const uint8_t *image_bytes;     /* (count, sample shape...) bytes, or NULL */
    const int32_t *labels;          /* (count) class indices, each in [0, classes) */
    int classes;                    /* at least 2 */
    const char *const *class_names; /* (classes) names, or NULL for "0", "1", ... */
    const char *name;               /* in messages and ember_dataset_describe; NULL: "arrays" */
} ember_array_data;
/* Checks every label and the shape; NULL with the reason on a mistake. */
EMBER_API ember_dataset *ember_dataset_from_arrays(ember_ctx *ctx, const ember_array_data *arrays);

/* A stream of tokens as a data set, as text's (ember_dataset_vocab): the
 * first 90% the training split, the last 10% the validation split
 * (EMBER_TEST), a sample a window of `context` tokens x and y the same
 * window one token on, batches x and y (B, context) I32. The classes are
 * the `vocab` token ids, without names. The split's tokens are copied.
 * ember_lm_dataset makes one from a text file and a model's tokenizer,
 * ember_lm_chat_dataset from conversations, with labels: a token labelled
 * EMBER_IGNORE_INDEX is read but never a target the loss counts (the
 * user's turns), and ember_dataset_ignores says to score with
 * ember_cross_entropy_ignore. */
typedef struct ember_token_data {
    const int32_t *tokens; /* (count), each in [0, vocab) */
    int64_t count;
    int32_t vocab;
    int64_t context;  /* a window's tokens */
    const char *name; /* in messages and ember_dataset_describe; NULL: "tokens" */
    /* (count) or NULL: token i's label when it is a target, tokens[i] or
     * EMBER_IGNORE_INDEX; NULL: every token its own */
    const int32_t *labels;
    /* the validation split's first token (a conversation's start); 0: the
     * last tenth's */
    int64_t validation_start;
} ember_token_data;
/* NULL with the reason: a token out of range, or a split too short to hold
 * a window and the token after it. */
EMBER_API ember_dataset *ember_dataset_from_tokens(ember_ctx *ctx, const ember_token_data *data,
                                                   ember_split split);

/* An image file (PNG, JPEG, BMP) as one sample, as a folder data set
 * would load it: converted to `channels` (1: gray, 3: RGB), planar
 * (channels, height, width) floats in [0, 1] into `out`. An image of
 * another size is resized (bilinear) when `resize`, else refused with both
 * sizes in the message. */
EMBER_API ember_status ember_image_load(ember_ctx *ctx, const char *path, int channels, int height, int width,
                                        bool resize, float *out);

/* The size and channels an image file (PNG, JPEG, BMP) declares, read from
 * its header without decoding it: channels 1 (gray), 2 (gray and alpha), 3
 * (RGB) or 4 (RGBA). ember_image_load then converts to the channels asked
 * for (alpha dropped) and resizes to the size asked for: a program can say
 * what it did. */
EMBER_API ember_status ember_image_file_info(ember_ctx *ctx, const char *path, int *width, int *height,
                                             int *channels);

/* What images look like, in the [0, 1] the batches have them in: the mean
 * pixel, the mean of the pixels on the images' edges (the background: near
 * 0 for Fashion-MNIST's light things on black), and how far the images'
 * own means spread (their standard deviation), so that an image unlike a
 * model's training data can be told apart from one that is merely
 * brighter. */
typedef struct ember_image_stats {
    double mean, mean_spread;     /* over every pixel; the images' own means' standard deviation */
    double border, border_spread; /* the same of the pixels on each image's edge */
} ember_image_stats;
/* Of a data set of images (sample shape (C, H, W)): EMBER_ERR_ARG for
 * other data. Reads every sample once (60,000 28x28 images: a few ms). */
EMBER_API ember_status ember_dataset_image_stats(const ember_dataset *ds, ember_image_stats *stats);
/* Of n images in the caller's buffer, (n, C, H, W) floats. */
EMBER_API void ember_image_stats_of(const float *images, int64_t n, int channels, int height, int width,
                                    ember_image_stats *stats);

/* The images of an IDX file (Fashion-MNIST's and MNIST's format, gzipped or
 * not) as samples: (count, 1, height, width) floats in [0, 1], checked as
 * ember_dataset_open checks them, in an array to ember_free(). */
EMBER_API float *ember_idx_images(ember_ctx *ctx, const char *path, int64_t *count, int *height, int *width);

/* NumPy's .npy files (docs/interop.md). Loading gives the array's values
 * as floats in an array to ember_free(), its shape in ndim and shape
 * [EMBER_MAX_DIMS]; uint8, float16/32/64 and int32/64 (little-endian, C
 * order) are read, and *bytes (may be NULL) says whether it was uint8
 * (images, which ember scales to [0, 1]; the values here are 0 to 255).
 * An integer past 2^24 or a float past float32's range is refused. Saving
 * writes float32 as numpy.load reads it. */
EMBER_API float *ember_npy_load(ember_ctx *ctx, const char *path, int *ndim, int64_t *shape, bool *bytes);
EMBER_API ember_status ember_npy_save(ember_ctx *ctx, const char *path, const float *values, int ndim,
                                      const int64_t *shape);

/* Batches: pixels scaled to [0, 1] as F32 (B, C, H, W), targets as I32 (B).
 * With shuffle, each epoch visits the samples in a fresh order drawn from the
 * seed. The last batch of an epoch may be smaller. */
typedef struct ember_batcher ember_batcher;
EMBER_API ember_batcher *ember_batcher_new(ember_dataset *ds, int64_t batch, bool shuffle, uint64_t seed);
EMBER_API void ember_batcher_free(ember_batcher *b);
EMBER_API int64_t ember_batcher_steps(const ember_batcher *b); /* batches per epoch */
/* Augmentation of training images, as torchvision's RandomCrop(size,
 * padding=crop_padding) and RandomHorizontalFlip(): each sample shifted by
 * up to crop_padding pixels each way (zeros come in at the border) and, when
 * `flip`, mirrored left-right half the time; drawn from `seed`, the epoch
 * and the sample's place in it, so that every device, and a resumed run,
 * sees the same images. NULL (or zeros) turns it off. */
typedef struct ember_augment {
    int crop_padding;
    bool flip;
    uint64_t seed;
} ember_augment;
EMBER_API ember_status ember_batcher_set_augment(ember_batcher *b, const ember_augment *augment);
/* Goes to where a batcher made with the same data, batch, shuffle and seed
 * would be after `epoch` whole epochs and `step` batches of the next: the
 * same order, so a resumed run sees the batches an unbroken one would. It
 * takes the same time for any epoch (no epochs are replayed). */
EMBER_API ember_status ember_batcher_seek(ember_batcher *b, int64_t epoch, int64_t step);
/* Fills *x and *y with the next batch and returns EMBER_OK. At the end of
 * the epoch it returns EMBER_OK with *x and *y NULL, and the next call
 * starts the next epoch; on a failure (a device error) it returns its
 * status, *x and *y NULL. So an epoch is
 *
 *     ember_status st;
 *     while ((st = ember_batcher_next(b, &x, &y)) == EMBER_OK && x) { ... }
 *     if (st != EMBER_OK) ...                  // a failure, not the epoch's end */
EMBER_API ember_status ember_batcher_next(ember_batcher *b, ember_tensor **x, ember_tensor **y);

/* ------------------------------------------------------------------ models
 *
 * A model is a network with its parameters. Networks are data: a model file
 * (docs/models.md) lists the layers, one per line,
 *
 *     conv1: conv2d 16 kernel=3 padding=1
 *     relu
 *     max_pool2d 2
 *     flatten
 *     fc: linear classes
 *
 * and the built-in models ("simplecnn", "resnet8", ...) are such files,
 * embedded. Parameter names follow PyTorch's ("conv1.weight",
 * "layer1.0.bn1.running_mean"), so a checkpoint loads into the same PyTorch
 * module with load_state_dict(strict=True). A network written in C wraps
 * into a model too (ember_model_wrap). */
typedef struct ember_model ember_model;

/* The largest size of a sample's dimension a model is built for: the data
 * sets' limit too. */
#define EMBER_MAX_SAMPLE_SIDE (1 << 20)
/* A sample's shape as model files, checkpoints and `ember --shape` write it:
 * "1x28x28" (C, H, W) or "100" (features), 1 to 3 sizes, each 1 to
 * EMBER_MAX_SAMPLE_SIDE. False for anything else. */
EMBER_API bool ember_parse_shape(const char *text, int *ndim, int64_t shape[3]);

/* Builds `model` for samples of `sample_shape` (C, H, W) or (features) and
 * `classes` outputs, initialised as PyTorch does from `seed`. `model` is a
 * built-in's name or the path of a model file (one that contains "/" or
 * ends in ".model"). sample_ndim 0 takes the shape from the file's `input`
 * line, or 1x28x28 (Fashion-MNIST's) when it has none. A mistake in the
 * file is EMBER_ERR_FORMAT, a layer that does not fit the shapes
 * EMBER_ERR_ARG, each with "file:line:column: ..." in the message. */
EMBER_API ember_model *ember_model_build(ember_ctx *ctx, const char *model, int sample_ndim,
                                         const int64_t *sample_shape, int classes, uint64_t seed);
/* The same from a model file's text; `name` names it in messages. */
EMBER_API ember_model *ember_model_parse(ember_ctx *ctx, const char *name, const char *text, int sample_ndim,
                                         const int64_t *sample_shape, int classes, uint64_t seed);
/* ember_model_build with the data set's sample shape and class count. */
EMBER_API ember_model *ember_model_new(ember_ctx *ctx, const char *model, const ember_dataset *data,
                                       uint64_t seed);

/* A network of your own as a model: `forward` maps x (N, sample shape...)
 * to logits (N, classes) with the public ops and the parameters of
 * `params`, which the model takes over (ember_model_free frees it). The
 * model then evaluates, saves and loads like any other; its training
 * forwards are counted, as a model file's are ("ember.forwards"), and
 * ember_model_load restores the count. */
typedef ember_tensor *(*ember_model_forward_fn)(void *user, ember_params *params, ember_tensor *x,
                                                bool training);
EMBER_API ember_model *ember_model_wrap(ember_ctx *ctx, const char *name, ember_params *params,
                                        int sample_ndim, const int64_t *sample_shape, int classes,
                                        ember_model_forward_fn forward, void *user);

EMBER_API void ember_model_free(ember_model *model);
/* x is (N, sample shape...); returns logits (N, classes) */
EMBER_API ember_tensor *ember_model_forward(ember_model *model, ember_tensor *x);
/* Training mode (the default) uses batch statistics in BatchNorm and
 * updates its running ones, and drops values in Dropout (a fresh mask each
 * forward, drawn from the model's seed); evaluation mode uses the running
 * statistics and keeps every value. ember_model_evaluate switches to
 * evaluation for its pass and back. Switching to evaluation writes the
 * running statistics' counts back to the device: its status (and
 * EMBER_ERR_ARG for a NULL model). */
EMBER_API ember_status ember_model_set_training(ember_model *model, bool training);
EMBER_API bool ember_model_training(const ember_model *model);
EMBER_API ember_params *ember_model_params(ember_model *model);
EMBER_API const char *ember_model_name(const ember_model *model);
/* "simplecnn: Conv2d(1, 16, 3, padding=1) ReLU() MaxPool2d(2) Flatten() Linear(3136, 10); 31530 parameters"
 */
EMBER_API const char *ember_model_describe(const ember_model *model);
/* The sample shape it was built for, into shape[3]; returns its ndim. */
EMBER_API int ember_model_sample_shape(const ember_model *model, int64_t *shape);
EMBER_API int ember_model_classes(const ember_model *model);
/* The model file's text (NULL for a wrapped network): checkpoints keep it. */
EMBER_API const char *ember_model_text(const ember_model *model);
/* The built-in model names, NULL-terminated, and a one-line summary of each. */
EMBER_API const char *const *ember_model_names(void);
EMBER_API const char *ember_model_summary(const char *name);
/* The layer types a model file may use: how many, and each one's name and
 * a one-line description of it and its options. */
EMBER_API int ember_model_layer_type_count(void);
EMBER_API const char *ember_model_layer_type_at(int index, const char **about);

/* Checkpoints of a model: its parameters and buffers (ember_params_save),
 * with BatchNorm's batch counts brought up to date first. The model's name,
 * its file's text, its input shape and class count are added to `metadata`
 * as "ember.model", "ember.model_text", "ember.input" ("1x28x28") and
 * "ember.classes" ("10"), and its seed and count of training passes, which
 * ember_model_load restores so that Dropout's masks go on where they were. */
EMBER_API ember_status ember_model_save(ember_model *model, const char *path, const char *const *metadata);
EMBER_API ember_status ember_model_load(ember_model *model, const char *path);
/* The model a checkpoint written by ember_model_save holds, built from its
 * metadata (the model file's text, or the built-in's name; the input shape
 * and class count) and loaded: no data set, no model name needed. */
EMBER_API ember_model *ember_model_from_checkpoint(ember_ctx *ctx, const char *path);

/* Checkpoints in memory, for a program that keeps its models in its own
 * files, a database or its executable: the same safetensors bytes as the
 * files above. Saving returns a buffer to ember_free() in *data, *size bytes
 * long; loading reads `size` bytes at `data` (not kept) and checks them as
 * a file is checked. */
EMBER_API ember_status ember_model_save_memory(ember_model *model, const char *const *metadata, void **data,
                                               size_t *size);
EMBER_API ember_status ember_model_load_memory(ember_model *model, const void *data, size_t size);
EMBER_API ember_model *ember_model_from_checkpoint_memory(ember_ctx *ctx, const void *data, size_t size);

/* ONNX (docs/interop.md): the model as an ONNX file at opset 13, for ONNX
 * Runtime, OpenCV's DNN module and the like: its layers as the operators
 * PyTorch's exporter writes, the weights under their PyTorch names, input
 * "input" (batch, sample shape...) and output "logits" (batch, classes)
 * with the batch dynamic, and in metadata_props the model's name, file,
 * input shape and class count, then `metadata`'s pairs (NULL-terminated:
 * "ember.class_names", "ember.normalize", ...). A CSV table's
 * standardisation among them (ember_feature_scaling_meta's keys) is
 * written as Sub and Div nodes at the input, so the file takes the table's
 * raw values. Dropout is left out: the file is for inference. A network
 * wrapped from C, or a layer ONNX cannot express here, cannot be exported
 * (EMBER_ERR_UNSUPPORTED). */
EMBER_API ember_status ember_model_export_onnx(ember_model *model, const char *path,
                                               const char *const *metadata);

/* An ONNX model (opset 9 and up, as torch.onnx.export writes it) as an
 * ember checkpoint in memory (a buffer to ember_free()): the graph read back
 * into a model file (its text in "ember.model_text"), its weights under
 * the layers' names, and the file's metadata_props (class names, input
 * scaling) carried over; then ember_model_from_checkpoint_memory,
 * ember_checkpoint_open_memory and the rest take it. The operators and
 * patterns read are those of ember's own layers (docs/interop.md); any
 * other node is EMBER_ERR_UNSUPPORTED naming the node, its operator and
 * what is supported. The file is checked as every loader checks its input
 * (io/onnx-impl.h). ember_model_from_onnx does both steps. */
EMBER_API ember_status ember_onnx_to_checkpoint(ember_ctx *ctx, const char *path, void **data, size_t *size);
EMBER_API ember_status ember_onnx_to_checkpoint_memory(ember_ctx *ctx, const char *name, const void *onnx,
                                                       size_t onnx_size, void **data, size_t *size);
EMBER_API ember_model *ember_model_from_onnx(ember_ctx *ctx, const char *path);

/* Inference from the caller's buffers: `in` holds n samples of the model's
 * sample shape, as floats laid out as a batch tensor would be
 * ((n, C, H, W) for images, scaled as the model was trained: [0, 1] for
 * ember's data sets); `logits_out` receives (n, classes) floats. Runs in
 * evaluation mode with recording off and leaves nothing on the tape; after
 * the first call with the largest n, a call allocates nothing (host or
 * device). n may be any size from 1 up. */
EMBER_API ember_status ember_model_predict(ember_model *model, const float *in, int64_t n, float *logits_out);
/* The same with softmax probabilities (each row sums to 1) in `probs_out`. */
EMBER_API ember_status ember_model_predict_probs(ember_model *model, const float *in, int64_t n,
                                                 float *probs_out);

/* Generation from a model of text (one that takes a sequence of tokens and
 * scores every position, as gpt-tiny does), a token at a time:
 *
 *     ember_generate_options o = {.temperature = 0.8f, .top_k = 40, .seed = 1};
 *     ember_generator *g = ember_generator_new(model, &o);
 *     ember_generator_feed(g, prompt, prompt_len);      // tokens: indices into the vocabulary
 *     for (int i = 0; i < 100; i++)
 *         ember_generator_next(g, &token);              // drawn, then fed back in
 *     ember_generator_free(g);
 *
 * Tokens are the model's classes: for text data, indices into the
 * vocabulary that ember_dataset_vocab gives and `ember train` keeps in the
 * checkpoint as "ember.vocab" (byte k of token k, in hex). Each attention
 * layer keeps its keys and values (a key/value cache), so a new token costs
 * one position's work. The model sees at most its context: when the cache
 * is full it starts again from the last half context (one pass over it);
 * with no_cache, every token runs the last whole context, which gives the
 * same tokens while the text fits in the context (docs/models.md). The
 * model runs in evaluation mode and records nothing. */
typedef struct ember_generate_options {
    float temperature; /* 0: the most likely token every time; 1: the model's own odds */
    int top_k;         /* draw among the k most likely tokens (0: all) */
    uint64_t seed;     /* the draws' generator */
    bool no_cache;     /* run the whole window for every token: slower, for checking */
} ember_generate_options;
typedef struct ember_generator ember_generator;
/* NULL (with the reason) for a model that is not of text */
EMBER_API ember_generator *ember_generator_new(ember_model *model, const ember_generate_options *options);
EMBER_API void ember_generator_free(ember_generator *g);
/* Feeds n >= 1 tokens (a prompt, or tokens chosen elsewhere): the next
 * token is then drawn from what the model says follows them. */
EMBER_API ember_status ember_generator_feed(ember_generator *g, const int32_t *tokens, int64_t n);
/* Draws the next token into *token and feeds it. */
EMBER_API ember_status ember_generator_next(ember_generator *g, int32_t *token);
/* The whole loop: the prompt fed, then `count` tokens into out. */
EMBER_API ember_status ember_model_generate(ember_model *model, const ember_generate_options *options,
                                            const int32_t *prompt, int64_t prompt_len, int64_t count,
                                            int32_t *out);

/* ---------------------------------------------- pretrained language models
 *
 * A language model from a GGUF file, the format llama.cpp and ollama keep
 * them in: LLaMA-family networks (architectures "llama": SmolLM2,
 * TinyLlama, Llama 3.2; and "qwen2"), their weights kept in the file's
 * quantised blocks on the device (docs/models.md, "Pretrained language
 * models"), their own byte-level BPE tokenizer and chat template.
 *
 *     ember_lm *lm = ember_lm_load(ctx, "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
 *     int32_t tokens[256], next;
 *     int64_t n = ember_lm_tokenize(lm, "The capital of France is", 24, false, tokens, 256);
 *     float *logits = malloc(ember_lm_vocab(lm) * sizeof *logits);
 *     ember_sample_options greedy = {0};
 *     ember_rng rng = ember_rng_seed(1);
 *     ember_lm_feed(lm, tokens, n, logits);             // the prompt, at once
 *     for (int i = 0; i < 20; i++) {
 *         next = ember_lm_sample(lm, logits, &greedy, &rng);
 *         if (ember_lm_is_end(lm, next)) break;
 *         char piece[64];
 *         fwrite(piece, 1, ember_lm_token_bytes(lm, next, piece, sizeof piece), stdout);
 *         ember_lm_feed(lm, &next, 1, logits);           // one position's work
 *     }
 *     ember_lm_free(lm);
 *
 * The model keeps the keys and values of every position fed (a key/value
 * cache of `context` positions), so each new token costs one position's
 * work; ember_lm_rewind forgets the positions after a point. Feeding runs
 * with the tape off and releases what it made. */
typedef struct ember_lm ember_lm;
typedef struct ember_lm_options {
    int64_t context; /* positions the cache holds (0: 2048, or the model's own if fewer) */
    /* training (ember_lm_forward with grad on) keeps every block's
     * activations for the backward pass, instead of each block's input
     * alone and the rest recomputed then (ember_recompute): a quarter less
     * compute a step, several times the memory */
    bool keep_activations;
} ember_lm_options;
/* NULL with the reason for a file that is not such a model (the
 * architecture, a tensor or a tokenizer ember does not run, named). */
EMBER_API ember_lm *ember_lm_load(ember_ctx *ctx, const char *path, const ember_lm_options *options);
EMBER_API void ember_lm_free(ember_lm *lm);
/* "SmolLM2 135M (llama): 30 blocks of width 576, ..." with the device
 * memory its weights and cache take */
EMBER_API const char *ember_lm_describe(const ember_lm *lm);
EMBER_API int32_t ember_lm_vocab(const ember_lm *lm);
EMBER_API int64_t ember_lm_context(const ember_lm *lm);
/* Bytes of device memory the weights take, and the cache. */
EMBER_API void ember_lm_memory(const ember_lm *lm, size_t *weights, size_t *cache);
/* Text to token ids, with the model's tokenizer; special tokens
 * (<|im_start|>) are recognised in the text when `specials`. Writes up to
 * cap ids and returns how many the text has (more than cap: call again
 * with room), -1 on failure. */
EMBER_API int64_t ember_lm_tokenize(ember_lm *lm, const char *text, size_t len, bool specials,
                                    int32_t *tokens, int64_t cap);
/* A token's bytes, at most cap of them (a UTF-8 character may span tokens). */
EMBER_API size_t ember_lm_token_bytes(const ember_lm *lm, int32_t token, char *out, size_t cap);
/* Whether a token ends a reply (end of text, end of turn). */
EMBER_API bool ember_lm_is_end(const ember_lm *lm, int32_t token);
/* Positions fed so far. */
EMBER_API int64_t ember_lm_position(const ember_lm *lm);
/* Forgets every position from `position` on (0: start afresh). */
EMBER_API ember_status ember_lm_rewind(ember_lm *lm, int64_t position);
/* Runs n tokens through the model at the next positions (n >= 1, while
 * they fit the context) and writes the scores of the token after the last
 * into logits (vocab floats; NULL: none wanted). */
EMBER_API ember_status ember_lm_feed(ember_lm *lm, const int32_t *tokens, int64_t n, float *logits);
typedef struct ember_sample_options {
    float temperature; /* 0: the most likely token (greedy); 1: the model's own odds */
    int top_k;         /* only the k most likely (0: all) */
    float top_p;       /* only the most likely whose odds add up to p (0 or 1: all) */
} ember_sample_options;
/* The next token drawn from logits (vocab floats) with rng; -1 for a bad argument. */
EMBER_API int32_t ember_lm_sample(const ember_lm *lm, const float *logits,
                                  const ember_sample_options *options, ember_rng *rng);
/* A conversation rendered as the model's chat template would (ChatML, as
 * SmolLM and Qwen use, or Llama 3's), ending with the assistant's turn
 * opened when `reply`: text to tokenize with specials, for ember_free.
 * NULL with the reason for a template ember does not know. */
typedef struct ember_chat_message {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
} ember_chat_message;
EMBER_API char *ember_lm_chat_prompt(ember_lm *lm, const ember_chat_message *messages, int count, bool reply);
/* The scores of every position of tokens (B, T) I32, (B, T, vocab), on
 * the tape (no cache): for training, and for checking against a twin. */
EMBER_API ember_tensor *ember_lm_forward(ember_lm *lm, ember_tensor *tokens);

/* Fine-tuning (docs/models.md, "Fine-tuning a pretrained model"). LoRA
 * adds to projections q, k, v, o (attention) and gate, up, down (the MLP)
 * a learnt low-rank change, y = x W^T + (alpha / rank) dropout(x) A^T B^T,
 * while W stays frozen (and quantised). A (rank, in) starts uniform in
 * +-1/sqrt(in) as PEFT's, B (out, rank) at zero, so the model starts as
 * the pretrained one. The adapters are a parameter set under PEFT's names
 * (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight ...),
 * owned by the model: give it to an optimizer, and save it with
 * ember_params_save and "lora_alpha" in the metadata (ember train
 * --lora does, with PEFT's adapter_config.json beside it). */
typedef struct ember_lora_options {
    int rank;            /* r, 1 to 1024; 0: 8 */
    float alpha;         /* the product is scaled by alpha / rank; 0: 16 */
    float dropout;       /* on each adapter's input while training, in [0, 1) */
    const char *targets; /* "q,k,v,o,gate,up,down" (or PEFT's q_proj ...); NULL or "all": all seven */
    uint64_t seed;       /* A's values, and dropout's masks */
} ember_lora_options;
/* The adapters' set, or NULL with the reason (bad options, adapters there already). */
EMBER_API ember_params *ember_lm_lora(ember_lm *lm, const ember_lora_options *options);
/* Adapters from a file of PEFT's names (ember's, or PEFT's
 * adapter_model.safetensors): the projections and rank from its tensors,
 * alpha from its "lora_alpha" metadata or the adapter_config.json beside
 * it. A file that does not fit the model changes nothing. */
EMBER_API ember_status ember_lm_load_adapter(ember_lm *lm, const char *path);
/* The adapters' set (NULL without), and a line about them. */
EMBER_API ember_params *ember_lm_adapter(ember_lm *lm);
EMBER_API const char *ember_lm_lora_describe(const ember_lm *lm, char *out, size_t len);
/* Full fine-tuning instead: every weight (the embedding, each block's
 * norms, projections and biases, the final norm, an untied output)
 * dequantised to F32 and made a parameter, named as the GGUF file names
 * it (token_embd.weight, blk.N.attn_q.weight ...) in its layout. The set,
 * owned by the model; NULL with the reason (adapters there already, out
 * of memory: the model is then as it was). For small models: the
 * optimizer keeps two moments of every weight. */
EMBER_API ember_params *ember_lm_full(ember_lm *lm);
/* Weights a full fine-tuning saved (ember_params_save of that set), in
 * place of the file's: ember_lm_full, then the file's tensors by name. */
EMBER_API ember_status ember_lm_load_weights(ember_lm *lm, const char *path);
/* The fine-tuned model as a GGUF file llama.cpp and ollama run: the file
 * the model was loaded from with each adapted projection merged, W +
 * (alpha / rank) B A, or after full fine-tuning every weight of two axes
 * its trained value (the norms and biases in F32), in `type` ("F32",
 * "F16", "Q8_0" or "Q4_0", quantised as ggml's reference code does), and
 * everything else (metadata, tokenizer, other tensors) as it was. Written
 * beside `path` and renamed over it: whole or not at all. */
EMBER_API ember_status ember_lm_save_merged(ember_lm *lm, const char *path, const char *type);
/* The model with its adapters (or all its weights, ember_lm_full) as an
 * ember_model, for the loops, evaluation and checkpoints that take one
 * (ember train --init MODEL.gguf uses it): samples are windows of
 * `context` tokens (up to the positions the model keeps), its output
 * every position's scores (N, context, vocab), its parameters the
 * adapters or the weights. It belongs to the language model: ember_lm_free
 * frees it. */
EMBER_API ember_model *ember_lm_model(ember_lm *lm, int64_t context);
/* Training mode: LoRA's dropout drops (a fresh mask each ember_lm_forward).
 * Off for a new model. */
EMBER_API ember_status ember_lm_set_training(ember_lm *lm, bool training);
/* A text file as the model's tokens, a data set as ember_dataset_from_tokens
 * makes (the first 90% for training, the last 10% for validation, windows
 * of `context` tokens), tokenised as ember_lm_tokenize does without
 * special tokens (text that spells "<|im_end|>" is those characters). */
EMBER_API ember_dataset *ember_lm_dataset(ember_lm *lm, const char *path, int64_t context, ember_split split);
/* Conversations as the model's tokens: a JSON Lines file, one a line,
 * {"messages": [{"role": "user", "content": ...}, {"role": "assistant",
 * "content": ...}, ...]}, each rendered with the model's chat template as
 * ember_lm_chat_prompt renders it, one after another in a stream cut into
 * windows of `context` tokens. Only the assistant's replies (and the
 * marker that ends each) are targets the loss counts, the rest labelled
 * EMBER_IGNORE_INDEX (ember_dataset_ignores): TRL's assistant-only loss.
 * The last tenth of the conversations (one at least) is the validation
 * split. A line that is not such a conversation is EMBER_ERR_FORMAT
 * naming the line and the byte. */
EMBER_API ember_dataset *ember_lm_chat_dataset(ember_lm *lm, const char *path, int64_t context,
                                               ember_split split);

/* One row of a Keras-style summary. Layers are numbered depth-first, a
 * block (residual, concat, gate) before its layers; `depth` is how deep
 * in blocks. */
typedef struct ember_layer_info {
    const char *name;  /* the parameters' prefix: "layer1.0.conv1"; "" for a bare layer */
    const char *type;  /* "conv2d", "residual", "concat", ... as in the file */
    char describe[96]; /* PyTorch's repr: "Conv2d(1, 16, 3, padding=1)" */
    int depth, line;
    int out_ndim;
    int64_t out_shape[3]; /* one sample's output */
    int64_t params;       /* its parameters' elements (for a block, its layers') */
    double forward_flops; /* per sample; a block's own: its join (the addition, ...) */
    double backward_flops;
} ember_layer_info;
EMBER_API int ember_model_layer_count(const ember_model *model);
EMBER_API ember_status ember_model_layer_info(const ember_model *model, int index, ember_layer_info *info);

/* Test accuracy (fraction correct) and mean cross-entropy over a data set,
 * in evaluation mode with grad off; either output may be NULL. On text,
 * every position of every window counts: the accuracy is the next token's,
 * and the loss, in nats per token, is the mean over all the positions
 * (divided by ln 2: bits per byte). */
EMBER_API ember_status ember_model_evaluate(ember_model *model, ember_dataset *data, int64_t batch,
                                            double *accuracy, double *loss);
/* The same, and the confusion matrix: confusion[true * classes + predicted]
 * counts the samples of each class by the class predicted (classes x
 * classes, filled). */
EMBER_API ember_status ember_model_evaluate_confusion(ember_model *model, ember_dataset *data, int64_t batch,
                                                      double *accuracy, double *loss, int64_t *confusion);

/* ----------------------------------------------------------- data parallel
 *
 * One model trained on several devices at once, and across processes
 * (docs/parallel.md). The model and its optimizer stay where they are: the
 * model's own context is the first device and holds the master copy. Every
 * other device gets a replica, in a context and a thread of its own. A
 * step splits the batch between the devices in proportion to their
 * measured speed, runs each share's forward and backward at the same time,
 * sums the gradients on the host in a fixed order (weighted by each share's
 * rows, so the sum is the whole batch's mean gradient), takes one
 * optimizer step on the master copy and writes its parameters back to
 * every replica: the replicas stay identical bit for bit, whatever mix of
 * devices they run on.
 *
 *     const char *others[] = {"opencl:0"};
 *     ember_parallel_options po = {.devices = others, .device_count = 1};
 *     ember_parallel *par = ember_parallel_new(net, opt, &po);
 *     while (ember_batcher_next(batches, &x, &y) == EMBER_OK && x)
 *         if (ember_parallel_step(par, x, y, &loss, &correct) != EMBER_OK) break;
 *
 * Across processes, `collective` sums the gradients over every process
 * after each one's own devices have: each process trains its part of every
 * batch (rank r of N the rows [B - (N-r)B/N, B - (N-r-1)B/N) of a batch of
 * B, rounding down: as even as B divides, rank 0 never without a row; all
 * draw the same batches), and each takes the same optimizer step. The sums go
 * in buckets of whole parameters, the last layer's first; on a process
 * with one device training, each bucket starts during the backward pass,
 * as soon as its gradients are final.
 * include/ember-mpi.h makes an ember_collective of an MPI communicator. */
typedef struct ember_parallel ember_parallel;

/* Sums across processes, implemented by the caller over its transport
 * (ember-mpi.h: MPI). Every function returns EMBER_OK, or a failure whose
 * reason `error` then gives ("no answer from the other ranks for 60 s"). */
typedef struct ember_collective {
    int rank, size; /* this process's place, and how many take part */
    void *user;     /* handed back to every call */
    /* Starts summing `count` floats over every process, in place; after
     * sum_wait of the same `bucket` (0 up to 63, one step's sums in
     * flight at once) every process holds the same sums. */
    ember_status (*sum_start)(void *user, int bucket, float *data, size_t count);
    ember_status (*sum_wait)(void *user, int bucket);
    /* Copies `count` floats from rank 0 to every other rank, in place. */
    ember_status (*broadcast)(void *user, float *data, size_t count);
    /* Lets the sums in flight move (MPI progresses while it is called);
     * called between parameters during the backward pass. May be NULL. */
    ember_status (*poll)(void *user);
    const char *(*error)(void *user);
} ember_collective;

typedef struct ember_parallel_options {
    const char *const *devices; /* the other devices: "cuda:1", "cpu", "opencl:0" */
    int device_count;
    int threads;                        /* CPU threads of each cpu device, the model's own included
                                         * (0: the cores shared between them) */
    bool keep_all;                      /* never leave a slow device out (see below) */
    bool fixed_shares;                  /* equal shares, never rebalanced: the same split every run */
    const ember_collective *collective; /* NULL: this process alone */
    int64_t bucket_floats;              /* the least floats in one sum across processes (0: 65536) */
} ember_parallel_options;

/* Sets up replicas of `model` (built from a model file or a built-in: a
 * wrapped C network cannot be copied to another device) on the other
 * devices; with a collective, every process starts from rank 0's
 * parameters. `opt` must be the model's optimizer. Neither is taken over:
 * free the parallel trainer before them. Unless keep_all, the trainer
 * times its first steps with every device and then without each of the
 * others, and leaves out a device the step is faster without (a note
 * through the log says so); the model's own device always trains. */
EMBER_API ember_parallel *ember_parallel_new(ember_model *model, ember_optim *opt,
                                             const ember_parallel_options *options);
EMBER_API void ember_parallel_free(ember_parallel *par);
/* One training step over the batch x (B, sample shape...) and y (B), on
 * the model's context: zero_grad, forward, cross-entropy, backward and the
 * optimizer's step on every device. `loss` (the mean) and `correct` (right
 * predictions) are the whole batch's, over every process; either may be
 * NULL. A device that fails stops the step with its name and reason; the
 * master copy is then as it was before the step. */
EMBER_API ember_status ember_parallel_step(ember_parallel *par, ember_tensor *x, ember_tensor *y, float *loss,
                                           int64_t *correct);
/* Checks that every process holds the same parameters (rank 0's hash of
 * them, compared on each); if not, rank 0's go to all and *drifted says so. */
EMBER_API ember_status ember_parallel_check(ember_parallel *par, bool *drifted);
/* A coordinated stop (Ctrl-C on one machine of many): the request goes
 * with the next step's sums, so after that step ember_parallel_stopping is
 * true on every process at once, and all can save and end together. */
EMBER_API void ember_parallel_request_stop(ember_parallel *par);
EMBER_API bool ember_parallel_stopping(const ember_parallel *par);
/* "cpu 41% + opencl:0 59%": the devices and this step's shares */
EMBER_API const char *ember_parallel_describe(ember_parallel *par);

/* -------------------------------------------------------------- inspection
 *
 * Seeing what ember does rather than doing it, last because a training
 * program needs none of it: where a context's time goes (the profile), and
 * the GPU kernels every GPU backend runs, written once (backends/kernels),
 * for teaching and for checking what a device gets (their PTX, and what a
 * simulated GPU saw of them). */

/* Profiling: where a context's time goes (docs/how-it-works.md).
 *
 *     ember_profile_start(ctx, false);
 *     ... train or evaluate ...
 *     ember_profile_stop(ctx);
 *     char *table = ember_profile_table(ctx);
 *     fputs(table, stdout);
 *     ember_free(table);
 *
 * While it runs, every primitive the context's ops call is timed until the
 * device has finished it, under the op that called it ("conv2d forward",
 * "conv2d backward", "adam step"), with its FLOPs and bytes; on GPUs each
 * kernel is also timed by the device's own events. It waits for the device
 * after every primitive, so a profiled run is slower on a GPU; a context
 * that is not profiling pays nothing. Start and stop may be repeated: the
 * rows add up until ember_profile_clear. With `trace`, every call is also
 * kept (up to a million) for ember_profile_write_trace. Needs an open
 * device. Profiling is per context, from the thread that uses it. */
EMBER_API ember_status ember_profile_start(ember_ctx *ctx, bool trace);
/* ember_profile_stop waits for the device to finish what was timed: its
 * status is that wait's (a kernel that failed meanwhile), EMBER_OK when
 * profiling was not on. */
EMBER_API ember_status ember_profile_stop(ember_ctx *ctx);
/* The table: one row per op, slowest first, and under it each primitive
 * (and kernel) with calls, total and mean time, share of the profiled
 * time, GFLOP/s and GB/s. A string to ember_free(); NULL when nothing was
 * profiled or out of memory. */
EMBER_API char *ember_profile_table(const ember_ctx *ctx);
/* The profiled seconds (between starts and stops) and the sum of the rows. */
EMBER_API void ember_profile_totals(const ember_ctx *ctx, double *wall_seconds, double *row_seconds);
/* Writes the trace as JSON in the Trace Event Format, which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open: process 1 is the host (op
 * spans with the calls they made inside them), process 2 the device (the
 * kernels it ran; on the CPU, the primitives). Times in microseconds. */
EMBER_API ember_status ember_profile_write_trace(ember_ctx *ctx, const char *path);
/* Stops profiling and forgets the rows and the trace. */
EMBER_API void ember_profile_clear(ember_ctx *ctx);

/* How many kernels there are; the name and a one-line summary of each
 * (NULL for an index out of range). The list is in every build, one
 * without GPU backends included: it names the kernels ember has, whether
 * or not this build can run them. */
EMBER_API int ember_kernel_count(void);
EMBER_API const char *ember_kernel_name_at(int index, const char **summary);

/* The PTX ember loads for `kernel` (NULL: every kernel), as the CUDA
 * backend would compile it for `arch` ("sm_86"; NULL: the first GPU
 * present): through the newest NVRTC that targets that arch or one below
 * it, or, with `baseline` set or no such NVRTC, the built-in sm_30 PTX.
 * `how` (may be NULL) receives which it was. Works without a GPU given an
 * arch. Returns a string to ember_free(), or NULL with the reason in `why`: in
 * a build without the CUDA backend (-DEMBER_CUDA=OFF), always NULL, with
 * "this build has no CUDA backend" in `why`. */
EMBER_API char *ember_ptx(const char *kernel, const char *arch, bool baseline, char *how, size_t how_len,
                          char *why, size_t why_len);

/* What a simulated GPU saw. A context on "ptxsim:N" runs the kernels the
 * CUDA backend would give one of four real GPUs (0 a Quadro K2100M, 1 a
 * Tesla K40m, 2 a GeForce GTX 1080, 3 an H100) in ember's PTX simulator,
 * checking every launch (docs/how-it-works.md). This reports the first
 * launch of `kernel` there: instructions per thread by class, warp
 * execution efficiency, each global access's coalescing, shared-memory bank
 * conflicts, occupancy on that GPU with `registers` a thread (0: counted
 * from the PTX; `registers_from` says where a given count came from) and a
 * roofline estimate of its time; with `kernel` NULL, a line per kernel
 * launched. Text to ember_free(), or NULL with the reason in `why` (a device that
 * is not simulated, a kernel it never launched). */
EMBER_API char *ember_kernel_report(ember_ctx *ctx, const char *kernel, int registers,
                                    const char *registers_from, char *why, size_t why_len);

#ifdef __cplusplus
}
#endif

#endif /* C99 or later */
#endif /* EMBER_H */
