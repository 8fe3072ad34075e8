/*
 * backends/opencl/opencl-impl.h — the OpenCL backend's insides.
 *
 * Two kinds of state:
 *   - the runtime (opencl-runtime.c): the OpenCL library, opened with
 *     dlopen, and the platforms and devices it reports. Found once per
 *     process, the first time any device is counted, and read-only after;
 *     it is the backend's only process-wide state.
 *   - a device (struct opencl_device), one per context that opens it: an
 *     OpenCL context, an in-order queue, the program built for the device
 *     and a cl_kernel for each entry of EMBER_KERNEL_LIST.
 *
 * Memory: a buffer from alloc is a cl_mem; an ember_ptr's offset is passed
 * to each kernel as an int beside the buffer (OPENCL_PTR). Kernels index with
 * 32-bit ints, so every primitive first checks that the elements it
 * touches lie below OPENCL_INDEX_LIMIT (opencl_check_extent).
 */
#ifndef EMBER_OPENCL_IMPL_H
#define EMBER_OPENCL_IMPL_H

#include "../../core/backend.h"
#include "../kernels/kernels.h"
#include "opencl-api.h"

#define OPENCL_MAX_DEVICES 64

/* Grid-stride launches use at most 65535 groups of at most 256 work-items,
 * fewer than 2^24, so an index below this limit plus the launch's stride
 * still fits in an int. */
#define OPENCL_INDEX_LIMIT ((int64_t)INT32_MAX - (1 << 24))

/* What enumeration found about one device. */
struct opencl_device_info {
    cl_platform_id platform;
    cl_device_id id;
    char name[128], vendor[128], driver_version[64], version[128];
    char platform_name[128], platform_version[128];
    cl_device_type type;
    cl_uint compute_units;
    cl_ulong global_mem, max_alloc, local_mem;
    size_t max_work_group, max_item_size[3];
    cl_bool available, compiler_available;
};

struct opencl_runtime {
    struct opencl_api cl;
    const char *library; /* the name it was opened by */
    int count;           /* devices, over all platforms */
    struct opencl_device_info devices[OPENCL_MAX_DEVICES];
    char why[512];   /* when count is 0: why, and the fix */
    char notes[512]; /* platforms without devices, and devices past the limit */
};

/* The runtime, found on the first call; NULL when there is no usable
 * OpenCL library (runtime_why says why). Never NULL once count > 0. */
const struct opencl_runtime *opencl_runtime_get(void);
const char *opencl_runtime_why(void);
/* "CL_OUT_OF_RESOURCES", or "unknown OpenCL error -1234" (in a static buffer) */
const char *opencl_error_name(cl_int err);

struct opencl_device {
    struct ember_host host;
    int index; /* in opencl:N */
    const struct opencl_device_info *info;
    const struct opencl_api *cl;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernels[EMBER_KERNEL_COUNT];
    struct ember_kernel_tuning tuning;
    size_t gemm_threads; /* work-items per sgemm work-group */
    size_t max_groups;   /* for grid-stride launches */
};

/* Builds (or loads from the cache) the program and makes its kernels:
 * opencl-program.c. */
ember_status opencl_program_open(struct opencl_device *d);
void opencl_program_close(struct opencl_device *d);

/* The on-disk cache of program binaries: opencl-cache.c. The key covers
 * the device, its driver, the source and the build options. */
struct opencl_cache_key {
    uint64_t hash[2];
};
void opencl_cache_key_make(const struct opencl_device_info *info, const char *source, const char *options,
                           struct opencl_cache_key *key);
/* A sound entry's binary (malloc'd), or NULL: a miss, or an entry that is
 * damaged or foreign, which is logged and left to be overwritten. */
unsigned char *opencl_cache_load(struct opencl_device *d, const struct opencl_cache_key *key, size_t *size);
/* Writes the entry through a temporary file and a rename; a cache that
 * cannot be written is logged at info level and otherwise ignored. */
void opencl_cache_store(struct opencl_device *d, const struct opencl_cache_key *key,
                        const unsigned char *binary, size_t size);

/* --------------------------------------------------------------- launches */

/* A kernel argument: an int, a float or a buffer. */
struct opencl_arg {
    size_t size;
    union {
        cl_int i;
        cl_float f;
        cl_mem mem;
    } value;
};

#define OPENCL_INT(x)   ((struct opencl_arg){.size = sizeof(cl_int), .value.i = (cl_int)(x)})
#define OPENCL_FLOAT(x) ((struct opencl_arg){.size = sizeof(cl_float), .value.f = (cl_float)(x)})
/* an ember_ptr is two arguments: the buffer, then the offset in elements */
#define OPENCL_PTR(p)                                                                                        \
    ((struct opencl_arg){.size = sizeof(cl_mem), .value.mem = (cl_mem)(p).buf}), OPENCL_INT((p).off)

/* Sets the arguments and enqueues groups[0] x groups[1] x groups[2]
 * work-groups of `local` work-items (one-dimensional groups). */
ember_status opencl_launch(struct opencl_device *d, enum ember_kernel kernel, const size_t groups[3],
                           size_t local, const struct opencl_arg *args, int nargs);
#define OPENCL_LAUNCH(d, kernel, groups, local, ...)                                                         \
    opencl_launch(d, kernel, groups, local, (const struct opencl_arg[]){__VA_ARGS__},                        \
                  (int)(sizeof((const struct opencl_arg[]){__VA_ARGS__}) / sizeof(struct opencl_arg)))
/* A grid-stride launch of work-groups of EMBER_WG_SIZE over `work` items. */
#define OPENCL_LAUNCH_1D(d, kernel, work, ...)                                                               \
    OPENCL_LAUNCH(d, kernel, ((const size_t[3]){opencl_groups_for(d, work), 1, 1}),                          \
                  (size_t)(d)->tuning.wg_size, __VA_ARGS__)

/* work-groups for a grid-stride launch over `work` items: enough to cover
 * them, at most max_groups */
size_t opencl_groups_for(const struct opencl_device *d, int64_t work);

/* EMBER_OK when elements [0, extent) after p's offset are indexable by the
 * kernels; otherwise EMBER_ERR_UNSUPPORTED naming the primitive. */
ember_status opencl_check_extent(struct opencl_device *d, const char *primitive, ember_ptr p, int64_t extent);
/* the same for `count` pointers with the same extent */
ember_status opencl_check_extents(struct opencl_device *d, const char *primitive, int64_t extent, int count,
                                  const ember_ptr *p);

/* Reports a failed OpenCL call: "opencl:0: <what> failed: CL_...". */
ember_status opencl_fail(struct opencl_device *d, cl_int err, const char *what, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------- primitives */

ember_status opencl_fill(void *dev, ember_ptr out, size_t n, float value);
ember_status opencl_unary(void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out,
                          ember_ptr a, float alpha);
ember_status opencl_binary(void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out,
                           ember_ptr a, ember_ptr b);
ember_status opencl_reduce(void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out,
                           ember_ptr in);
ember_status opencl_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c);
ember_status opencl_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col);
ember_status opencl_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx);
ember_status opencl_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                    ember_ptr argmax);
ember_status opencl_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy,
                                     ember_ptr argmax, ember_ptr dx);
ember_status opencl_softmax_xent_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits,
                                         ember_ptr target, ember_ptr prob, ember_ptr loss);
ember_status opencl_softmax_xent_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob,
                                          ember_ptr target, ember_ptr dloss, float scale, ember_ptr dlogits);
ember_status opencl_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param,
                              ember_ptr grad, ember_ptr m, ember_ptr v);
ember_status opencl_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param,
                             ember_ptr grad, ember_ptr velocity);

#endif /* EMBER_OPENCL_IMPL_H */
