/*
 * backends/cpu/cpu-impl.h — the CPU backend's insides.
 *
 * Buffers are plain aligned host memory; an ember_ptr is a float pointer
 * plus an offset. Work is spread over a small thread pool of our own
 * (cpu_parallel_for) and OpenBLAS runs single-threaded inside each task, so
 * the two never compete for cores.
 */
#ifndef EMBER_CPU_IMPL_H
#define EMBER_CPU_IMPL_H

#include "../../core/backend.h"

struct cpu_pool;

struct cpu_device {
    struct ember_host host;
    struct cpu_pool *pool;
    int threads;
};

static inline float *cpu_f32(ember_ptr p)
{
    return (float *)p.buf + p.off;
}

static inline int32_t *cpu_i32(ember_ptr p)
{
    return (int32_t *)p.buf + p.off;
}

/* ------------------------------------------------------------ threads */

typedef void (*cpu_task_fn)(void *arg, int64_t begin, int64_t end);

/* A pool of threads - 1 workers; the calling thread is the last worker. */
struct cpu_pool *cpu_pool_new(int threads);
void cpu_pool_free(struct cpu_pool *pool);

/* Runs fn over [0, n) cut into one contiguous chunk per thread and returns
 * when every chunk is done. Chunks are at least `grain` long, so a small
 * job runs on the calling thread alone, with no hand-off cost. */
void cpu_parallel_for(struct cpu_pool *pool, int64_t n, int64_t grain, cpu_task_fn fn, void *arg);

/* --------------------------------------------------------- primitives */

ember_status cpu_fill(void *dev, ember_ptr out, size_t n, float value);
ember_status cpu_unary(void *dev, enum ember_unary_op op, const struct ember_ewise *e, ember_ptr out,
                       ember_ptr a, float alpha);
ember_status cpu_binary(void *dev, enum ember_binary_op op, const struct ember_ewise *e, ember_ptr out,
                        ember_ptr a, ember_ptr b);
ember_status cpu_reduce(void *dev, enum ember_reduce_op op, const struct ember_reduce *r, ember_ptr out,
                        ember_ptr in);
ember_status cpu_sgemm(void *dev, const struct ember_gemm *g, ember_ptr a, ember_ptr b, ember_ptr c);
ember_status cpu_im2col(void *dev, const struct ember_conv_geom *g, ember_ptr x, ember_ptr col);
ember_status cpu_col2im(void *dev, const struct ember_conv_geom *g, ember_ptr col, ember_ptr dx);
ember_status cpu_maxpool_forward(void *dev, const struct ember_pool_geom *g, ember_ptr x, ember_ptr y,
                                 ember_ptr argmax);
ember_status cpu_maxpool_backward(void *dev, const struct ember_pool_geom *g, ember_ptr dy, ember_ptr argmax,
                                  ember_ptr dx);
ember_status cpu_softmax_xent_forward(void *dev, int64_t n, int64_t classes, ember_ptr logits, ember_ptr target,
                                      ember_ptr prob, ember_ptr loss);
ember_status cpu_softmax_xent_backward(void *dev, int64_t n, int64_t classes, ember_ptr prob, ember_ptr target,
                                       ember_ptr dloss, float scale, ember_ptr dlogits);
ember_status cpu_adam_step(void *dev, size_t n, const struct ember_adam_step *s, ember_ptr param, ember_ptr grad,
                           ember_ptr m, ember_ptr v);
ember_status cpu_sgd_step(void *dev, size_t n, const struct ember_sgd_step *s, ember_ptr param, ember_ptr grad,
                          ember_ptr velocity);

/* "OpenBLAS 0.3.21" or "built-in sgemm (no OpenBLAS)" */
const char *cpu_blas_name(void);
/* makes the BLAS single-threaded: our pool does the threading */
void cpu_blas_init(void);

#endif /* EMBER_CPU_IMPL_H */
