/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_parallel.c — data-parallel training through the C API
 * (parallel/, docs/parallel.md), as an embedding program would use it:
 *
 *   - equivalence: two and three cpu replicas, and PoCL's opencl:0 beside
 *     the CPU when there is one, train to the parameters one device reaches
 *     with the same batches (float tolerance), step after step;
 *   - the replicas hold the master's parameters bit for bit;
 *   - uneven shares: a batch of 7 over 3 devices, an epoch whose last batch
 *     (one row) is smaller than the device count;
 *   - two processes, stood in for by two threads with a collective over
 *     shared memory: each trains its rows, both reach one device's result,
 *     with one bucket and many (rank 0's started during its backward
 *     pass), and a stop one asks for reaches both after the same step;
 *   - ember_set_grad_ready: each parameter once, last layer first, final;
 *   - mistakes: a device that does not exist, a C network, a batch from
 *     another context: a status and a message naming them.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../parallel/parallel-impl.h"
#include "test-util.h"

/* conv, pool, linear: no BatchNorm, whose batch statistics are each
 * share's own and so differ from one device's (docs/parallel.md) */
static const char net_text[] = "conv1: conv2d 4 kernel=3 padding=1\n"
                               "relu\n"
                               "max_pool2d 2\n"
                               "flatten\n"
                               "fc: linear classes\n";
static const char bn_text[] = "conv1: conv2d 4 kernel=3 padding=1 bias=false\n"
                              "bn1: batch_norm2d\n"
                              "relu\n"
                              "flatten\n"
                              "fc: linear classes\n";

enum { SAMPLES = 96, CLASSES = 3, SIDE = 8 };
static int64_t bucket_floats;      /* the sums' buckets: 0, the default (one bucket here), or small: many */
static int stop_request_step = -1; /* rank 1 asks every rank to stop before this step */
static float images[SAMPLES * SIDE * SIDE];
static int32_t labels[SAMPLES];

/* a learnable task: the class is which third of the image is brightest */
static void make_data(void)
{
    ember_rng rng = ember_rng_seed(42);
    for (int i = 0; i < SAMPLES; i++) {
        labels[i] = (int32_t)(ember_rng_u32(&rng) % CLASSES);
        for (int p = 0; p < SIDE * SIDE; p++) {
            int third = (p % SIDE) * CLASSES / SIDE;
            images[i * SIDE * SIDE + p] =
                ember_rng_uniform(&rng, 0.0f, 0.5f) + (third == labels[i] ? 0.5f : 0.0f);
        }
    }
}

static ember_dataset *dataset(ember_ctx *ctx, int64_t count)
{
    ember_array_data a = {.count = count,
                          .sample_ndim = 3,
                          .sample_shape = {1, SIDE, SIDE},
                          .images = images,
                          .labels = labels,
                          .classes = CLASSES,
                          .name = "thirds"};
    return ember_dataset_from_arrays(ctx, &a);
}

static ember_model *model(ember_ctx *ctx, const char *text)
{
    int64_t shape[3] = {1, SIDE, SIDE};
    return ember_model_parse(ctx, "test", text, 3, shape, CLASSES, 7);
}

/* every parameter (and buffer, when asked), end to end */
static int64_t read_values(ember_model *m, float *out, bool buffers)
{
    ember_params *p = ember_model_params(m);
    int64_t at = 0;
    for (int i = 0; i < ember_params_count(p); i++) {
        ember_tensor *t = ember_params_at(p, i);
        if (!buffers && ember_params_is_buffer(p, i))
            continue;
        ember_tensor_read(t, out + at, (size_t)ember_tensor_numel(t) * sizeof(float));
        at += ember_tensor_numel(t);
    }
    return at;
}

static int64_t read_params(ember_model *m, float *out) { return read_values(m, out, true); }

static double max_diff(const float *a, const float *b, int64_t n)
{
    double worst = 0.0;
    /* (not fmax: GCC 12 for aarch64 fails vectorising that reduction) */
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* `steps` steps of batch `batch` (0: a whole epoch) on one device; the
 * parameters in `out`, the losses in `losses` */
static int64_t train_single(const char *text, int64_t count, int64_t batch, int steps, float *out,
                            float *losses)
{
    ember_ctx *ctx = test_ctx("cpu");
    ember_dataset *ds = dataset(ctx, count);
    ember_model *m = model(ctx, text);
    ember_optim *opt = ember_adam_new(ember_model_params(m), ember_adam_defaults(0.01f));
    ember_batcher *b = ember_batcher_new(ds, batch, true, 3);
    ember_tensor *x, *y;
    int n = 0;
    while (steps == 0 || n < steps) {
        if (ember_batcher_next(b, &x, &y) != EMBER_OK ||
            !x) { /* an epoch's end: the next call starts another */
            if (steps == 0 || ember_last_status(ctx) != EMBER_OK)
                break;
            continue;
        }
        ember_optim_zero_grad(opt);
        ember_tensor *loss = ember_cross_entropy(ember_model_forward(m, x), y);
        CHECK_OK(ctx, ember_backward(loss));
        CHECK_OK(ctx, ember_optim_step(opt));
        ember_tensor_item(loss, &losses[n++]);
        ember_tape_clear(ctx);
    }
    int64_t total = read_params(m, out);
    ember_batcher_free(b);
    ember_optim_free(opt);
    ember_model_free(m);
    ember_dataset_free(ds);
    ember_ctx_free(ctx);
    return total;
}

/* the same through ember_parallel over `others` beside the model's cpu */
static void train_parallel(const char *text, int64_t count, int64_t batch, int steps,
                           const char *const *others, int n_others, bool fixed,
                           const ember_collective *collective, float *out, float *losses, int *ran,
                           int *stopped_at)
{
    ember_ctx *ctx = test_ctx("cpu");
    ember_ctx_set_threads(ctx, 1);
    ember_dataset *ds = dataset(ctx, count);
    ember_model *m = model(ctx, text);
    ember_optim *opt = ember_adam_new(ember_model_params(m), ember_adam_defaults(0.01f));
    ember_batcher *b = ember_batcher_new(ds, batch, true, 3);
    ember_parallel_options po = {.devices = others,
                                 .device_count = n_others,
                                 .threads = 1,
                                 .keep_all = true,
                                 .fixed_shares = fixed,
                                 .collective = collective,
                                 .bucket_floats = bucket_floats};
    ember_parallel *par = ember_parallel_new(m, opt, &po);
    CHECK(par != NULL, "ember_parallel_new: %s", ember_last_error(ctx));
    ember_tensor *x, *y;
    int n = 0;
    float *before = malloc(4096 * sizeof *before), *replica = malloc(4096 * sizeof *replica);
    int *stopped = stopped_at ? stopped_at : &(int){0};
    *stopped = -1;
    while (par && (steps == 0 || n < steps)) {
        if (ember_batcher_next(b, &x, &y) != EMBER_OK || !x) {
            if (steps == 0 || ember_last_status(ctx) != EMBER_OK)
                break;
            continue;
        }
        read_values(m, before, false);
        int64_t right = -1;
        if (collective && collective->rank == 1 && n == stop_request_step)
            ember_parallel_request_stop(par);
        CHECK_OK(ctx, ember_parallel_step(par, x, y, &losses[n], &right));
        if (*stopped < 0 && ember_parallel_stopping(par))
            *stopped = n;
        CHECK(right >= 0 && right <= ember_tensor_dim(x, 0), "correct %lld of %lld", (long long)right,
              (long long)ember_tensor_dim(x, 0));
        /* each replica that trained this step started from the master's
         * parameters, bit for bit (its BatchNorm statistics then moved with its share) */
        for (int k = 1; k < par->count; k++) {
            if (par->replicas[k].rows == 0)
                continue;
            int64_t len = read_values(par->replicas[k].model, replica, false);
            CHECK(memcmp(replica, before, (size_t)len * sizeof *before) == 0,
                  "step %d: %s's parameters differ "
                  "from the master's by %g",
                  n, par->replicas[k].device, max_diff(replica, before, len));
        }
        n++;
    }
    *ran = n;
    read_params(m, out);
    free(before);
    free(replica);
    ember_parallel_free(par);
    ember_batcher_free(b);
    ember_optim_free(opt);
    ember_model_free(m);
    ember_dataset_free(ds);
    ember_ctx_free(ctx);
}

/* parameters within float tolerance of one device's, and every step's loss */
static void check_same(const char *what, const float *one, const float *many, int64_t n,
                       const float *loss_one, const float *loss_many, int steps)
{
    double d = max_diff(one, many, n);
    CHECK(d < 2e-4, "%s: the parameters differ from one device's by %g", what, d);
    for (int i = 0; i < steps; i++)
        CHECK(fabsf(loss_one[i] - loss_many[i]) < 1e-4f, "%s: step %d's loss is %g, one device's %g", what, i,
              loss_many[i], loss_one[i]);
}

static void test_equivalence(bool with_opencl)
{
    float one[4096], many[4096], loss_one[64], loss_many[64];
    int ran = 0;
    int64_t n = train_single(net_text, SAMPLES, 16, 30, one, loss_one);
    const char *cpu2[] = {"cpu"}, *cpu3[] = {"cpu", "cpu"}, *ocl[] = {"opencl:0"};
    train_parallel(net_text, SAMPLES, 16, 30, cpu2, 1, false, NULL, many, loss_many, &ran, NULL);
    CHECK(ran == 30, "ran %d steps", ran);
    check_same("cpu + cpu", one, many, n, loss_one, loss_many, 30);
    train_parallel(net_text, SAMPLES, 16, 30, cpu3, 2, true, NULL, many, loss_many, &ran, NULL);
    check_same("cpu + cpu + cpu, fixed shares", one, many, n, loss_one, loss_many, 30);
    if (with_opencl) {
        train_parallel(net_text, SAMPLES, 16, 30, ocl, 1, false, NULL, many, loss_many, &ran, NULL);
        check_same("cpu + opencl:0", one, many, n, loss_one, loss_many, 30);
    } else {
        printf("note: no OpenCL device: cpu + opencl:0 not run\n");
    }
}

/* a batch of 7 over three devices (3, 2, 2 rows); 17 samples in batches of
 * 8, whose last batch of one row is smaller than the device count */
static void test_uneven(void)
{
    float one[4096], many[4096], loss_one[64], loss_many[64];
    int ran = 0;
    const char *cpu3[] = {"cpu", "cpu"};
    int64_t n = train_single(net_text, 70, 7, 10, one, loss_one);
    train_parallel(net_text, 70, 7, 10, cpu3, 2, true, NULL, many, loss_many, &ran, NULL);
    check_same("batch 7 on three devices", one, many, n, loss_one, loss_many, 10);
    n = train_single(net_text, 17, 8, 0, one, loss_one);
    train_parallel(net_text, 17, 8, 0, cpu3, 2, true, NULL, many, loss_many, &ran, NULL);
    CHECK(ran == 3, "an epoch of 17 in batches of 8 is 3 steps, ran %d", ran);
    check_same("a last batch of one row on three devices", one, many, n, loss_one, loss_many, 3);
}

/* BatchNorm: the shares' statistics differ from the whole batch's, so no
 * equivalence; the replicas still match the master, and the running mean
 * moves */
static void test_batch_norm(void)
{
    float many[4096], loss_many[64];
    int ran = 0;
    const char *cpu2[] = {"cpu"};
    train_parallel(bn_text, SAMPLES, 16, 12, cpu2, 1, false, NULL, many, loss_many, &ran, NULL);
    CHECK(ran == 12 && loss_many[11] < loss_many[0], "BatchNorm on two devices: loss %g then %g",
          loss_many[0], loss_many[11]);
}

/* ------------------------------------------- two processes, as two threads */

/* A collective over shared memory: each rank posts its buffer, the last to
 * arrive sums them in rank order, everyone copies the sum out. */
static struct {
    pthread_barrier_t barrier;
    float *posted[2];
    size_t count;
} shared;

static ember_status shm_sum_start(void *user, int bucket, float *data, size_t count)
{
    int rank = *(int *)user;
    (void)bucket;
    shared.posted[rank] = data;
    shared.count = count;
    pthread_barrier_wait(&shared.barrier);
    if (rank == 0)
        for (size_t i = 0; i < count; i++) {
            float sum = shared.posted[0][i] + shared.posted[1][i];
            shared.posted[0][i] = shared.posted[1][i] = sum;
        }
    pthread_barrier_wait(&shared.barrier);
    return EMBER_OK;
}

static ember_status shm_sum_wait(void *user, int bucket)
{
    (void)user;
    (void)bucket;
    return EMBER_OK;
}

static ember_status shm_broadcast(void *user, float *data, size_t count)
{
    int rank = *(int *)user;
    shared.posted[rank] = data;
    pthread_barrier_wait(&shared.barrier);
    if (rank == 1)
        memcpy(data, shared.posted[0], count * sizeof *data);
    pthread_barrier_wait(&shared.barrier);
    return EMBER_OK;
}

struct rank_run {
    int rank;
    float params[4096], losses[64];
    int ran, stopped_at;
};

static void *rank_thread(void *arg)
{
    struct rank_run *run = arg;
    ember_collective c = {.rank = run->rank,
                          .size = 2,
                          .user = &run->rank,
                          .sum_start = shm_sum_start,
                          .sum_wait = shm_sum_wait,
                          .broadcast = shm_broadcast};
    /* rank 1 beside a second cpu device: ranks may use several */
    const char *cpu2[] = {"cpu"};
    train_parallel(net_text, SAMPLES, 16, 20, cpu2, run->rank, false, &c, run->params, run->losses, &run->ran,
                   &run->stopped_at);
    return NULL;
}

/* Rank 0 trains alone on its device, so its buckets start during the
 * backward pass; rank 1 has two devices and starts them after: with one
 * bucket, and with buckets of 8 floats (the first ones the fc layer's) */
static void test_two_ranks(void)
{
    float one[4096], loss_one[64];
    int64_t n = train_single(net_text, SAMPLES, 16, 20, one, loss_one);
    static struct rank_run runs[2] = {{.rank = 0}, {.rank = 1}};
    for (int many = 0; many < 2; many++) {
        bucket_floats = many ? 8 : 0;
        stop_request_step = many ? 7 : -1; /* and rank 1 asks to stop at step 7 */
        pthread_barrier_init(&shared.barrier, NULL, 2);
        pthread_t threads[2];
        for (int r = 0; r < 2; r++)
            pthread_create(&threads[r], NULL, rank_thread, &runs[r]);
        for (int r = 0; r < 2; r++)
            pthread_join(threads[r], NULL);
        pthread_barrier_destroy(&shared.barrier);
        check_same(many ? "two ranks, many buckets" : "two ranks", one, runs[0].params, n, loss_one,
                   runs[0].losses, 20);
        CHECK(memcmp(runs[0].params, runs[1].params, (size_t)n * sizeof(float)) == 0,
              "the two ranks' parameters differ by %g", max_diff(runs[0].params, runs[1].params, n));
        /* a stop asked by one rank is known to both after the same step */
        CHECK(runs[0].stopped_at == (many ? 7 : -1) && runs[1].stopped_at == runs[0].stopped_at,
              "stopping after step %d on rank 0 and %d on rank 1", runs[0].stopped_at, runs[1].stopped_at);
    }
    bucket_floats = 0;
    stop_request_step = -1;
}

/* ------------------------------------------------- gradients as they are final */

struct ready_log {
    ember_tensor *leaf[16];
    float grad[16][256];
    int count;
};

static void on_ready(void *user, ember_tensor *leaf)
{
    struct ready_log *log = user;
    if (log->count < 16 && ember_tensor_numel(leaf) <= 256) {
        log->leaf[log->count] = leaf;
        ember_tensor_read(ember_tensor_grad(leaf), log->grad[log->count],
                          (size_t)ember_tensor_numel(leaf) * sizeof(float));
    }
    log->count++;
}

/* ember_set_grad_ready: each parameter once, the last layer's first, with
 * the gradient it ends the pass with */
static void test_grad_ready(void)
{
    ember_ctx *ctx = test_ctx("cpu");
    ember_dataset *ds = dataset(ctx, 16);
    ember_model *m = model(ctx, net_text);
    ember_batcher *b = ember_batcher_new(ds, 16, false, 0);
    ember_tensor *x, *y;
    ember_batcher_next(b, &x, &y);
    static struct ready_log log;
    ember_set_grad_ready(ctx, on_ready, &log);
    CHECK_OK(ctx, ember_backward(ember_cross_entropy(ember_model_forward(m, x), y)));
    ember_set_grad_ready(ctx, NULL, NULL);
    ember_params *p = ember_model_params(m);
    CHECK(log.count == ember_params_count(p), "%d calls for %d parameters", log.count, ember_params_count(p));
    CHECK(log.count > 0 && (log.leaf[0] == ember_params_find(p, "fc.weight") ||
                            log.leaf[0] == ember_params_find(p, "fc.bias")),
          "the first parameter final is not the last layer's");
    for (int i = 0; i < log.count && i < 16; i++) {
        float now[256];
        int64_t numel = ember_tensor_numel(log.leaf[i]);
        if (numel > 256)
            continue; /* too large to keep here: conv1 and fc are small enough */
        ember_tensor_read(ember_tensor_grad(log.leaf[i]), now, (size_t)numel * sizeof(float));
        CHECK(memcmp(now, log.grad[i], (size_t)numel * sizeof(float)) == 0,
              "call %d: the gradient changed after it was said to be final", i);
        for (int j = 0; j < i; j++)
            CHECK(log.leaf[j] != log.leaf[i], "a parameter was said final twice");
    }
    ember_tape_clear(ctx);
    ember_batcher_free(b);
    ember_model_free(m);
    ember_dataset_free(ds);
    ember_ctx_free(ctx);
}

/* ---------------------------------------------------------------- mistakes */

static ember_tensor *my_forward(void *user, ember_params *params, ember_tensor *x, bool training)
{
    (void)user;
    (void)training;
    return ember_linear(ember_flatten(x), ember_params_find(params, "w"), ember_params_find(params, "b"));
}

static void test_mistakes(void)
{
    ember_ctx *ctx = test_ctx("cpu");
    ember_model *m = model(ctx, net_text);
    ember_optim *opt = ember_adam_new(ember_model_params(m), ember_adam_defaults(0.01f));
    const char *bad[] = {"nonsense:3"};
    ember_parallel_options po = {.devices = bad, .device_count = 1};
    CHECK(ember_parallel_new(m, opt, &po) == NULL, "a device that does not exist was taken");
    CHECK(strstr(ember_last_error(ctx), "nonsense:3") != NULL, "the message names the device: %s",
          ember_last_error(ctx));
    ember_clear_error(ctx);

    /* a C network cannot be copied to another device */
    ember_params *p = ember_params_new(ctx);
    int64_t w_shape[2] = {CLASSES, SIDE * SIDE}, b_shape[1] = {CLASSES}, shape[3] = {1, SIDE, SIDE};
    ember_params_add(p, "w", 2, w_shape);
    ember_params_add(p, "b", 1, b_shape);
    ember_model *wrapped = ember_model_wrap(ctx, "mine", p, 3, shape, CLASSES, my_forward, NULL);
    ember_optim *wrapped_opt = ember_adam_new(ember_model_params(wrapped), ember_adam_defaults(0.01f));
    const char *cpu[] = {"cpu"};
    po = (ember_parallel_options){.devices = cpu, .device_count = 1};
    CHECK(ember_parallel_new(wrapped, wrapped_opt, &po) == NULL, "a C network was copied");
    CHECK(ember_last_status(ctx) == EMBER_ERR_UNSUPPORTED && strstr(ember_last_error(ctx), "model file"),
          "the message says what to do: %s", ember_last_error(ctx));
    ember_clear_error(ctx);

    /* a batch from another context */
    ember_parallel *par = ember_parallel_new(m, opt, &po);
    CHECK(par != NULL, "two cpu devices: %s", ember_last_error(ctx));
    ember_ctx *other = test_ctx("cpu");
    int64_t xs[4] = {2, 1, SIDE, SIDE}, ys[1] = {2};
    ember_tensor *x = ember_tensor_new(other, EMBER_F32, 4, xs),
                 *y = ember_tensor_new(other, EMBER_I32, 1, ys);
    CHECK(ember_parallel_step(par, x, y, NULL, NULL) == EMBER_ERR_ARG,
          "a batch from another context was taken");
    ember_tensor_free(x);
    ember_tensor_free(y);
    ember_ctx_free(other);
    ember_parallel_free(par);
    ember_optim_free(wrapped_opt);
    ember_model_free(wrapped);
    ember_optim_free(opt);
    ember_model_free(m);
    ember_ctx_free(ctx);
}

int main(int argc, char **argv)
{
    bool with_opencl = argc > 1 && strcmp(argv[1], "--opencl") == 0;
    make_data();
    test_equivalence(with_opencl);
    test_uneven();
    test_batch_norm();
    test_two_ranks();
    test_grad_ready();
    test_mistakes();
    return test_finish("test_parallel");
}
