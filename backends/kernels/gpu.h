/* SPDX-License-Identifier: MIT */
/*
 * backends/kernels/gpu.h — the host side of the shared kernels: how each
 * primitive of backends/backend.h picks its kernel and its launch, written once
 * for every backend that runs the kernels of this folder (OpenCL, CUDA).
 *
 * A GPU backend puts a struct ember_gpu first in its device struct, fills
 * it at device_open (where to report, the tuning its program was compiled
 * with, and a launch function), and points its table's primitive entries
 * straight at the ember_gpu_* functions below:
 *
 *     struct cuda_device { struct ember_gpu gpu; CUcontext ctx; ... };
 *     static ember_status cuda_launch(struct ember_gpu *gpu, enum ember_kernel k,
 *                                     const size_t groups[3], size_t local,
 *                                     const struct ember_gpu_arg *args, int nargs);
 *     const struct ember_backend_ops ember_cuda_backend = {
 *         .name = "cuda", ..., EMBER_GPU_PRIMITIVES,
 *     };
 *
 * So the two GPU backends differ only in how they reach the device (memory,
 * compiling, launching), never in what they launch.
 *
 *   gpu-launch.c        launch helpers, extent checks, launches over planes
 *   gpu-elementwise.c   fill, unary, binary (the ops of base/elementwise-impl.h)
 *   gpu-reduce.c        reduce
 *   gpu-gemm.c          sgemm: tiled, wide, split or direct
 *   gpu-conv.c          im2col, col2im, conv_direct, conv_grouped
 *   gpu-winograd.c      conv_winograd: unsupported (its refusal)
 *   gpu-pool.c          max-pool and average-pool
 *   gpu-loss.c          softmax-cross-entropy
 *   gpu-optim.c         Adam, AdamW, SGD
 *   gpu-dropout.c       dropout's mask
 *   gpu-softmax.c       softmax over rows, with attention's causal mask
 *   gpu-norm.c          layer norm and batch norm
 *   gpu-embedding.c     an embedding's gather and scatter-add
 *   gpu-cache.c         compiled programs kept on disk
 */
#ifndef EMBER_GPU_H
#define EMBER_GPU_H

#include <stdint.h>

#include "backend.h"
#include "kernels.h"

/* Grid-stride launches use at most 65535 groups of at most 256 work-items,
 * fewer than 2^24, so an index below this limit plus the launch's stride
 * still fits in the kernels' int. */
#define EMBER_GPU_INDEX_LIMIT ((int64_t)INT32_MAX - (1 << 24))

/* A kernel argument: a 32-bit int, a float, or a device buffer. */
struct ember_gpu_arg {
    enum { EMBER_GPU_ARG_INT, EMBER_GPU_ARG_FLOAT, EMBER_GPU_ARG_BUFFER } kind;
    union {
        int32_t i;
        float f;
        void *buffer; /* a cl_mem, or a CUdeviceptr held in a pointer */
    } value;
};

#define GPU_INT(x)   ((struct ember_gpu_arg){.kind = EMBER_GPU_ARG_INT, .value.i = (int32_t)(x)})
#define GPU_FLOAT(x) ((struct ember_gpu_arg){.kind = EMBER_GPU_ARG_FLOAT, .value.f = (float)(x)})
/* an ember_ptr is two arguments: the buffer, then the offset in elements */
#define GPU_PTR(p)                                                                                           \
    ((struct ember_gpu_arg){.kind = EMBER_GPU_ARG_BUFFER, .value.buffer = (p).buf}), GPU_INT((p).off)

/* What every GPU device struct starts with. */
struct ember_gpu {
    struct ember_host host;
    char name[32];                     /* "opencl:0", "cuda:1": for messages */
    struct ember_kernel_tuning tuning; /* what the program was compiled with */
    size_t gemm_threads;               /* work-items per sgemm work-group */
    size_t max_groups;                 /* for grid-stride launches */
    /* Runs groups[0] x groups[1] x groups[2] work-groups of `local`
     * work-items (one-dimensional groups) of `kernel` with these arguments. */
    ember_status (*launch)(struct ember_gpu *gpu, enum ember_kernel kernel, const size_t groups[3],
                           size_t local, const struct ember_gpu_arg *args, int nargs);
};

#define GPU_LAUNCH(g, kernel, groups, local, ...)                                                            \
    (g)->launch(g, kernel, groups, local, (const struct ember_gpu_arg[]){__VA_ARGS__},                       \
                (int)(sizeof((const struct ember_gpu_arg[]){__VA_ARGS__}) / sizeof(struct ember_gpu_arg)))
/* a grid-stride launch of work-groups of EMBER_WG_SIZE over `work` items */
#define GPU_LAUNCH_1D(g, kernel, work, ...)                                                                  \
    GPU_LAUNCH(g, kernel, ((const size_t[3]){ember_gpu_groups_for(g, work), 1, 1}),                          \
               (size_t)(g)->tuning.wg_size, __VA_ARGS__)

/* work-groups for a grid-stride launch over `work` items: enough to cover
 * them, at most max_groups */
size_t ember_gpu_groups_for(const struct ember_gpu *g, int64_t work);

/* A launch of one work-group of wg_size per row, for kernels that loop
 * over rows by group (row = GROUP_ID_X; row < rows; row += NUM_GROUPS_X):
 * a group for each row, at most max_groups of them. */
#define GPU_LAUNCH_ROWS(g, kernel, rows, ...)                                                                \
    GPU_LAUNCH(                                                                                              \
        g, kernel,                                                                                           \
        ((const size_t[3]){(rows) < (int64_t)(g)->max_groups ? (size_t)(rows) : (g)->max_groups, 1, 1}),     \
        (size_t)(g)->tuning.wg_size, __VA_ARGS__)

/* A launch of one work-item per element of [0, n), in groups of wg_size,
 * for kernels whose last argument is `int first` (see element_index in
 * common.kh): as many launches of at most max_groups groups as n needs,
 * each told its first element. The macro appends that argument. */
ember_status ember_gpu_launch_each(struct ember_gpu *g, enum ember_kernel kernel, int64_t n,
                                   struct ember_gpu_arg *args, int nargs);
#define GPU_LAUNCH_EACH(g, kernel, n, ...)                                                                   \
    ember_gpu_launch_each(                                                                                   \
        g, kernel, n, (struct ember_gpu_arg[]){__VA_ARGS__, GPU_INT(0)},                                     \
        (int)(sizeof((struct ember_gpu_arg[]){__VA_ARGS__, GPU_INT(0)}) / sizeof(struct ember_gpu_arg)))

/* The most groups a launch may have along y and z (CUDA's limit; OpenCL
 * has none): launches that index rows or planes by group split beyond it. */
#define EMBER_GPU_GRID_YZ 65535

/* The work-group size for a launch whose groups each cover `width`
 * neighbouring elements of a row along x (kernels without local arrays,
 * which take any size): the power of two from 64 (or wg_size, if less) up
 * to wg_size that leaves the fewest work-items idle in ceil(width / size)
 * groups; the largest of those that tie. */
size_t ember_gpu_local_for(const struct ember_gpu *g, int64_t width);

/* EMBER_OK when elements [0, extent) after p's offset are indexable by the
 * kernels; otherwise EMBER_ERR_UNSUPPORTED naming the primitive. */
ember_status ember_gpu_check_extent(struct ember_gpu *g, const char *primitive, ember_ptr p, int64_t extent);
/* the same for `count` pointers with the same extent */
ember_status ember_gpu_check_extents(struct ember_gpu *g, const char *primitive, int64_t extent, int count,
                                     const ember_ptr *p);
/* the same for `count` pointers, p[i] with extent[i] */
ember_status ember_gpu_check_each(struct ember_gpu *g, const char *primitive, int count, const ember_ptr *p,
                                  const int64_t *extent);

/* fast_div's dividends stay below this (2^24, common.kh) */
#define EMBER_GPU_FAST_DIV_LIMIT ((int64_t)1 << 24)

/* One launch of a kernel over planes (conv.kc, pool.kc): planes
 * [plane0, plane0 + planes) along y, rows [row0, row0 + rows) of `width`
 * positions along x, `depth` along z. */
struct ember_gpu_plane_chunk {
    int64_t plane0, planes, row0, rows;
    size_t groups[3], local;
};

/* p moved on by `planes` planes of `size` elements: where a chunk's part
 * of a tensor of planes (x's, y's, an argmax's) starts */
static inline ember_ptr ember_gpu_planes_on(ember_ptr p, int64_t planes, int64_t size)
{
    p.off += (size_t)(planes * size);
    return p;
}

/* Runs `launch` over `planes` planes of `rows` rows of `width` positions,
 * `depth` deep, in launches within the grid's limits and fast_div's
 * (common.kh); EMBER_ERR_UNSUPPORTED when one row is too long for them. */
ember_status ember_gpu_plane_launches(struct ember_gpu *gpu, const char *primitive, int64_t planes,
                                      int64_t rows, int64_t width, size_t depth,
                                      ember_status (*launch)(struct ember_gpu *, const void *,
                                                             const struct ember_gpu_plane_chunk *),
                                      const void *args);

/* --------------------------------------------------------- the primitives
 * With the signatures of backends/backend.h: `dev` is the backend's device
 * struct, which starts with a struct ember_gpu. */

#define EMBER_GPU_PRIMITIVE_DECLARE(name, params, ...) ember_status ember_gpu_##name params;
EMBER_PRIMITIVES(EMBER_GPU_PRIMITIVE_DECLARE)
#undef EMBER_GPU_PRIMITIVE_DECLARE

/* The primitive entries of a GPU backend's table, all of them:
 *     const struct ember_backend_ops ember_cuda_backend = {..., EMBER_GPU_PRIMITIVES};
 */
#define EMBER_GPU_PRIMITIVE_ENTRY(name, ...) .name = ember_gpu_##name,
#define EMBER_GPU_PRIMITIVES                                                                                 \
    EMBER_PRIMITIVES(EMBER_GPU_PRIMITIVE_ENTRY).conv_columns_bytes = EMBER_GPU_CONV_COLUMNS_BYTES,

/* A convolution's im2col columns made at a time on a GPU (see
 * conv_columns_bytes in backends/backend.h): a whole batch of ResNet-8's
 * widest 3x3 layer (16 channels, 28x28) at batch 256 is 110 MiB, and the
 * buffer is the same size every step, so the allocator keeps reusing it.
 * 128 MiB is 6% of a 2 GiB Kepler laptop's memory. */
#define EMBER_GPU_CONV_COLUMNS_BYTES ((size_t)128 << 20)

/* ------------------------------------------------------ the program cache
 *
 * Compiled programs kept on disk, so that a device compiles ember's kernels
 * once rather than at every start: gpu-cache.c. One folder per backend
 * (`kind`: "opencl", "cuda") under $EMBER_CACHE_DIR, else
 * $XDG_CACHE_HOME/ember, else ~/.cache/ember. The key hashes every string
 * the compiled program depends on (device, driver, compiler, source,
 * options); an entry is checked (length, key, checksum) before it is
 * trusted, and written through a temporary file and a rename. */

struct ember_gpu_cache_key {
    uint64_t hash[2];
};

void ember_gpu_cache_key_make(const char *const *parts, int count, struct ember_gpu_cache_key *key);
/* A sound entry's bytes (malloc'd), or NULL: a miss, or an entry that is
 * damaged or foreign, which is logged and left to be overwritten, or one a
 * driver died loading (gpu-cache.c). The caller hands the bytes to the
 * driver and then, whatever the driver said, calls ember_gpu_cache_loaded. */
unsigned char *ember_gpu_cache_load(struct ember_gpu *g, const char *kind,
                                    const struct ember_gpu_cache_key *key, size_t *size);
void ember_gpu_cache_loaded(const char *kind, const struct ember_gpu_cache_key *key);
/* A cache that cannot be written is logged at info level and otherwise ignored. */
void ember_gpu_cache_store(struct ember_gpu *g, const char *kind, const struct ember_gpu_cache_key *key,
                           const unsigned char *bytes, size_t size);
/* The same without a device to log through, for what a backend remembers
 * before it opens one: get gives NULL with the reason in `why`; put gives
 * false with the reason, or true with the entry's path in `why`. */
unsigned char *ember_gpu_cache_get(const char *kind, const struct ember_gpu_cache_key *key, size_t *size,
                                   char *why, size_t why_len);
bool ember_gpu_cache_put(const char *kind, const struct ember_gpu_cache_key *key, const unsigned char *bytes,
                         size_t size, char *why, size_t why_len);

/* Around a compile the user waits for: tells the host "compiling kernels
 * for opencl:0 (<what>) (once; kept in <the cache folder>)" and, through
 * the host, the seconds so far until the end (core/wait.c). `what` names
 * the device and the compiler, as a person would know them; `kept` says
 * where the result is kept when not in ember's cache folder of `kind`: the
 * driver's own cache, which may answer at once, so that such a compile is
 * told of only when it lasts a second. */
void ember_gpu_compile_begin(struct ember_gpu *g, const char *kind, const char *what, const char *kept);
void ember_gpu_compile_end(struct ember_gpu *g);

#endif /* EMBER_GPU_H */
