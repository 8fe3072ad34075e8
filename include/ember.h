/* SPDX-License-Identifier: MIT */
/*
 * ember.h — the public C API of ember, a minimal deep-learning runtime.
 *
 * ember trains small networks (convolution, ReLU, max-pool, linear layers,
 * cross-entropy, Adam) on the CPU, on OpenCL devices and on NVIDIA GPUs from
 * Kepler up. This header is the whole interface, with the parts it
 * includes from include/ember/ (tensors, training, data, models, language
 * models, parallel, inspection: "the parts" below); everything behind it is
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
 *   - The few functions that take no context (ember_ptx in
 *     ember/inspect.h, for one) write the reason for a failure into a buffer
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

/* How a context's float32 matrix products may be computed, as PyTorch's
 * torch.set_float32_matmul_precision. EMBER_MATMUL_HIGHEST (the default):
 * in float32 throughout. Below it a device may take a faster way that
 * keeps fewer significant bits of each operand and sums in float32:
 * EMBER_MATMUL_HIGH about 16 (a product's relative error near 1e-5 rather
 * than float32's 1e-7), EMBER_MATMUL_MEDIUM 8, bfloat16's own (near 3e-3).
 * Today that is the CPU on processors with AMX (Intel Xeons since Sapphire
 * Rapids), which takes each large product as three bfloat16 products on
 * its tile unit at HIGH and as one at MEDIUM (docs/design.md, "Matrix
 * products below float32"); and at MEDIUM, on any CPU with AVX2 or NEON,
 * the products of a few rows with Q4_0, Q4_1 or Q8_0 weights (a language
 * model generating), which round the activations to 8-bit integers a
 * block of 32 and multiply integers, as llama.cpp does. Elsewhere, and on
 * GPUs, it changes nothing. Any time, for the products after it; a value
 * outside the enum is refused (EMBER_ERR_ARG). */
typedef enum ember_matmul_precision {
    EMBER_MATMUL_HIGHEST,
    EMBER_MATMUL_HIGH,
    EMBER_MATMUL_MEDIUM,
} ember_matmul_precision;
EMBER_API ember_status ember_ctx_set_matmul_precision(ember_ctx *ctx, ember_matmul_precision precision);
EMBER_API ember_matmul_precision ember_ctx_matmul_precision(const ember_ctx *ctx);
/* Whether `precision` changes some of the context's device's products
 * (HIGH: the CPU with AMX; MEDIUM: that, or the CPU's quantised products);
 * false for HIGHEST, before a device is open, and on a GPU. */
EMBER_API bool ember_ctx_matmul_precision_matters(const ember_ctx *ctx, ember_matmul_precision precision);

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
/* The most device memory the context has had at once since it was made:
 * `in_use` in tensors, the tape and the ops' scratch, what the work needs
 * (short of memory, the context gives back the buffers it keeps for reuse
 * and asks again), and `held`, that with the kept buffers, what it took
 * from the device. Either pointer may be NULL. The device's driver takes
 * memory of its own beside this (a CUDA context's kernels and stacks: a
 * few hundred MiB on a new GPU, less on an old one). */
EMBER_API void ember_ctx_memory_peak(const ember_ctx *ctx, uint64_t *in_use, uint64_t *held);
/* Gives the device buffers the context keeps for reuse back to the device
 * (or the host allocator): for a long-lived program between bursts of work.
 * The next step allocates them again. Tensors still alive are untouched.
 * (The context bounds what it keeps by itself too: at most twice the most
 * it has had in use at once, plus 16 MiB.) */
EMBER_API void ember_ctx_release_cached(ember_ctx *ctx);

/* ------------------------------------------------------------------ the parts
 *
 * The rest of the interface, a header per layer, in the order a program
 * meets them; each uses the types of those before it, so they come in
 * this order (clang-format's sorting kept off) and only through this file. */
/* clang-format off */
#include "ember/tensor.h"   /* tensors, ops and autograd */
#include "ember/train.h"    /* parameters, checkpoints, initialisation, optimizers */
#include "ember/data.h"     /* data sets and batches */
#include "ember/model.h"    /* models: networks as data, ONNX, predictions, evaluation */
#include "ember/lm.h"       /* pretrained language models (GGUF), LoRA and fine-tuning */
#include "ember/parallel.h" /* one model on several devices and processes */
#include "ember/inspect.h"  /* the profile, the kernels, their PTX and the simulator */
/* clang-format on */

#ifdef __cplusplus
}
#endif

#endif /* C99 or later */
#endif /* EMBER_H */
