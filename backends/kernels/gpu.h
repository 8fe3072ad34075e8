/*
 * backends/kernels/gpu.h — the host side of the shared kernels: how each
 * primitive of core/backend.h picks its kernel and its launch, written once
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
 *   gpu-launch.c        launch helpers, extent checks
 *   gpu-elementwise.c   fill, unary, binary, reduce
 *   gpu-gemm.c          sgemm: tiled or direct
 *   gpu-conv.c          im2col, col2im, max-pool
 *   gpu-fused.c         softmax-cross-entropy, Adam, SGD
 *   gpu-cache.c         compiled programs kept on disk
 */
#ifndef EMBER_GPU_H
#define EMBER_GPU_H

#include <stdint.h>

#include "../../core/backend.h"
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

/* --------------------------------------------------------- the primitives
 * With the signatures of core/backend.h: `dev` is the backend's device
 * struct, which starts with a struct ember_gpu. */

ember_status ember_gpu_fill(void *dev, ember_ptr out, size_t n, float value);
ember_status ember_gpu_unary(void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out,
                             ember_ptr a, float alpha);
ember_status ember_gpu_binary(void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out,
                              ember_ptr a, ember_ptr b);
ember_status ember_gpu_reduce(void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out,
                              ember_ptr in);
ember_status ember_gpu_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c);
ember_status ember_gpu_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col);
ember_status ember_gpu_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx);
ember_status ember_gpu_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                       ember_ptr argmax);
ember_status ember_gpu_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                        ember_ptr argmax, ember_ptr dx);
ember_status ember_gpu_softmax_xent_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits,
                                            ember_ptr target, ember_ptr prob, ember_ptr loss);
ember_status ember_gpu_softmax_xent_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob,
                                             ember_ptr target, ember_ptr dloss, float scale,
                                             ember_ptr dlogits);
ember_status ember_gpu_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param,
                                 ember_ptr grad, ember_ptr m, ember_ptr v);
ember_status ember_gpu_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param,
                                ember_ptr grad, ember_ptr velocity);

/* The primitive entries of a GPU backend's table, all of them:
 *     const struct ember_backend_ops ember_cuda_backend = {..., EMBER_GPU_PRIMITIVES};
 */
#define EMBER_GPU_PRIMITIVES                                                                                  \
    .fill = ember_gpu_fill, .unary = ember_gpu_unary, .binary = ember_gpu_binary, .reduce = ember_gpu_reduce, \
    .sgemm = ember_gpu_sgemm, .im2col = ember_gpu_im2col, .col2im = ember_gpu_col2im,                         \
    .maxpool_forward = ember_gpu_maxpool_forward, .maxpool_backward = ember_gpu_maxpool_backward,             \
    .softmax_xent_forward = ember_gpu_softmax_xent_forward,                                                   \
    .softmax_xent_backward = ember_gpu_softmax_xent_backward, .adam_step = ember_gpu_adam_step,               \
    .sgd_step = ember_gpu_sgd_step

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
 * damaged or foreign, which is logged and left to be overwritten. */
unsigned char *ember_gpu_cache_load(struct ember_gpu *g, const char *kind,
                                    const struct ember_gpu_cache_key *key, size_t *size);
/* A cache that cannot be written is logged at info level and otherwise ignored. */
void ember_gpu_cache_store(struct ember_gpu *g, const char *kind, const struct ember_gpu_cache_key *key,
                           const unsigned char *bytes, size_t size);

#endif /* EMBER_GPU_H */
