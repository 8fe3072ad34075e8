/* SPDX-License-Identifier: MIT */
/*
 * parallel/parallel.c — one model on several devices and processes at once:
 * the replicas, their threads, and the step (parallel-impl.h has the
 * picture; docs/parallel.md the why).
 *
 * Why the master copy and not every replica stepping for itself (as
 * PyTorch's DistributedDataParallel does): two devices asked for the same
 * update can round differently (an FMA here, another order of a sum
 * there), and replicas that drift apart train different models. Summing on
 * the host in a fixed order and copying one step's result everywhere costs
 * a read and a write of the parameters a step, and nothing can drift.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "parallel-impl.h"
#include "platform.h"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------- across processes */

static ember_status collective_failed(struct ember_parallel *par, const char *doing)
{
    const char *why = par->collective.error ? par->collective.error(par->collective.user) : "";
    return ember_set_error(par->ctx, EMBER_ERR_DEVICE, "%s across %d processes (this is rank %d) failed: %s",
                           doing, par->collective.size, par->collective.rank,
                           why && why[0] ? why : "no reason given");
}

/* Starts the buckets whose gradients are all in the sum, in order: every
 * rank starts the same buckets in the same order, as collectives must. */
static ember_status start_ready(struct ember_parallel *par)
{
    while (par->next_bucket < par->buckets && par->bucket[par->next_bucket].pending == 0) {
        const struct bucket *b = &par->bucket[par->next_bucket];
        int64_t lo = par->offset[b->first], hi = par->offset[b->last] + par->numel[b->last];
        if (par->collective.sum_start(par->collective.user, par->next_bucket, par->sum + lo,
                                      (size_t)(hi - lo)) != EMBER_OK)
            return collective_failed(par, "summing the gradients");
        par->next_bucket++;
    }
    return EMBER_OK;
}

/* The rest of the step's sums: the buckets not started yet, the loss's,
 * then every wait. */
static ember_status finish_sums(struct ember_parallel *par)
{
    if (par->collective.size < 2)
        return EMBER_OK;
    for (int b = 0; b < par->buckets; b++)
        par->bucket[b].pending = 0;
    ember_status st = start_ready(par);
    if (st == EMBER_OK && par->collective.sum_start(par->collective.user, par->buckets, par->sum + par->total,
                                                    TRAILER) != EMBER_OK)
        st = collective_failed(par, "summing the loss");
    for (int b = 0; b <= par->buckets && st == EMBER_OK; b++)
        if (par->collective.sum_wait(par->collective.user, b) != EMBER_OK)
            st = collective_failed(par, "summing the gradients");
    return st;
}

/* The buckets: whole tensors from the last to the first, each of at least
 * `least` floats but the one closed by the first tensor: at most
 * PARALLEL_BUCKETS - 1, the loss's being the last. */
static void plan_buckets(struct ember_parallel *par, int64_t least)
{
    int64_t most = PARALLEL_BUCKETS - 2; /* buckets of `least` or more, and one of less */
    if (least < (par->total + most - 1) / most)
        least = (par->total + most - 1) / most;
    par->buckets = 0;
    int64_t held = 0;
    for (int i = par->tensors - 1; i >= 0; i--) {
        if (held == 0)
            par->bucket[par->buckets].last = i;
        par->bucket_of[i] = par->buckets;
        held += par->numel[i];
        if (held >= least || i == 0) {
            par->bucket[par->buckets++].first = i;
            held = 0;
        }
    }
}

/* What tensor i of replica r adds to the step, into out: rows x its
 * gradient (a parameter; zeros when the forward did not use it) or rows x
 * its value (a buffer: BatchNorm's running statistics, which the step
 * averages). */
static bool read_scaled(const struct ember_parallel *par, const struct replica *r, int i, float *out)
{
    ember_tensor *t = ember_params_at(ember_model_params(r->model), i);
    ember_tensor *from = par->is_buffer[i] ? t : ember_tensor_grad(t);
    if (!from) {
        memset(out, 0, (size_t)par->numel[i] * sizeof(float));
        return true;
    }
    if (ember_tensor_read(from, out, (size_t)par->numel[i] * sizeof(float)) != EMBER_OK)
        return false;
    for (int64_t k = 0; k < par->numel[i]; k++)
        out[k] *= (float)r->rows;
    return true;
}

/* Tensor i of replica r into the sum, and the buckets it completes
 * started. Replica 0 alone trains this step (par->overlap), so the sum is
 * its contribution. */
static ember_status deliver(struct ember_parallel *par, struct replica *r, int i)
{
    if (par->delivered[i])
        return EMBER_OK;
    par->delivered[i] = true;
    if (!read_scaled(par, r, i, par->sum + par->offset[i]))
        return ember_last_status(r->ctx);
    if (!par->is_buffer[i])
        par->bucket[par->bucket_of[i]].pending--;
    ember_status st = start_ready(par);
    if (st == EMBER_OK && par->collective.poll && par->collective.poll(par->collective.user) != EMBER_OK)
        st = collective_failed(par, "summing the gradients");
    return st;
}

/* ember_backward's word that a parameter's gradient is final */
static void on_grad_ready(void *user, ember_tensor *leaf)
{
    struct ember_parallel *par = user;
    ember_params *params = ember_model_params(par->model);
    for (int i = 0; i < par->tensors && par->overlap_status == EMBER_OK; i++)
        if (ember_params_at(params, i) == leaf) {
            par->overlap_status = deliver(par, &par->replicas[0], i);
            break;
        }
}

/* ------------------------------------------------------------ one share */

/* Keeps a replica's failure, with its context's message, for the step. */
static void replica_failed(struct replica *r, const char *doing)
{
    ember_status st = ember_last_status(r->ctx);
    r->status = st != EMBER_OK ? st : EMBER_ERR_DEVICE;
    snprintf(r->error, sizeof r->error, "%s: %s", doing,
             ember_last_error(r->ctx)[0] ? ember_last_error(r->ctx) : ember_status_str(r->status));
    ember_clear_error(r->ctx);
}

/* par->values (the master's parameters and buffers after a step) into
 * `model`'s tensors, or back out of them (into_model false). */
static ember_status copy_values(struct ember_parallel *par, ember_model *model, bool into_model)
{
    ember_params *params = ember_model_params(model);
    for (int i = 0; i < par->tensors; i++) {
        ember_tensor *t = ember_params_at(params, i);
        float *v = par->values + par->offset[i];
        size_t bytes = (size_t)par->numel[i] * sizeof(float);
        ember_status st = into_model ? ember_tensor_write(t, v, bytes) : ember_tensor_read(t, v, bytes);
        if (st != EMBER_OK)
            return st;
    }
    return EMBER_OK;
}

/* What a replica adds to the step, every tensor (read_scaled). */
static bool read_contribution(const struct ember_parallel *par, struct replica *r)
{
    for (int i = 0; i < par->tensors; i++)
        if (!read_scaled(par, r, i, r->contribution + par->offset[i]))
            return false;
    return true;
}

/* A device's share: rows [lo, lo + rows) of the process's part of the
 * batch, forward, loss, backward, and what it adds to the sum. */
static void replica_share(struct ember_parallel *par, struct replica *r)
{
    double start = now_seconds();
    r->status = EMBER_OK;
    r->error[0] = '\0';
    r->loss_sum = 0.0;
    r->correct = 0;
    if (r->load_params) { /* the master's parameters, so every replica starts from the same bits */
        if (copy_values(par, r->model, true) != EMBER_OK) {
            replica_failed(r, "copying the parameters to it");
            return;
        }
        r->load_params = false;
    }
    if (r->rows == 0) {
        r->seconds = 0.0;
        return;
    }
    int64_t shape[EMBER_MAX_DIMS] = {r->rows};
    for (int i = 0; i < par->sample_ndim; i++)
        shape[1 + i] = par->sample_shape[i];
    int64_t first = par->process_lo + r->lo;
    ember_tensor *x = ember_tensor_new(r->ctx, EMBER_F32, 1 + par->sample_ndim, shape);
    ember_tensor *y = ember_tensor_new(r->ctx, EMBER_I32, 1, shape);
    if (!x || !y ||
        ember_tensor_write(x, par->x_host + first * par->sample_numel,
                           (size_t)(r->rows * par->sample_numel) * sizeof(float)) != EMBER_OK ||
        ember_tensor_write(y, par->y_host + first, (size_t)r->rows * sizeof(int32_t)) != EMBER_OK) {
        replica_failed(r, "writing its share of the batch");
        goto done;
    }
    if (ember_params_zero_grad(ember_model_params(r->model)) != EMBER_OK) {
        replica_failed(r, "zeroing its gradients");
        goto done;
    }
    ember_tensor *logits = ember_model_forward(r->model, x);
    ember_tensor *loss = ember_cross_entropy(logits, y);
    float value = NAN;
    /* the only device training here: its buffers are final after the
     * forward pass, each parameter's gradient as the backward pass ends with
     * it, and each goes into the sum (and across processes) at once */
    bool overlap = par->overlap && r == &par->replicas[0];
    for (int i = 0; overlap && i < par->tensors && par->overlap_status == EMBER_OK; i++)
        if (par->is_buffer[i] && logits)
            par->overlap_status = deliver(par, r, i);
    if (overlap)
        ember_set_grad_ready(r->ctx, on_grad_ready, par);
    ember_status st = ember_backward(loss);
    if (overlap)
        ember_set_grad_ready(r->ctx, NULL, NULL);
    if (st != EMBER_OK || ember_tensor_item(loss, &value) != EMBER_OK) {
        replica_failed(r, "its forward and backward pass");
        goto done;
    }
    r->loss_sum = (double)value * (double)r->rows;
    if (r->rows * par->classes > r->logits_cap) {
        float *grown = realloc(r->logits, (size_t)(r->rows * par->classes) * sizeof *grown);
        if (!grown) {
            r->status = EMBER_ERR_NOMEM;
            snprintf(r->error, sizeof r->error, "out of host memory for its logits");
            goto done;
        }
        r->logits = grown;
        r->logits_cap = r->rows * par->classes;
    }
    if (ember_tensor_read(logits, r->logits, (size_t)(r->rows * par->classes) * sizeof(float)) != EMBER_OK) {
        replica_failed(r, "reading its logits");
        goto done;
    }
    for (int64_t i = 0; i < r->rows; i++) {
        const float *row = r->logits + i * par->classes;
        int best = 0;
        for (int k = 1; k < par->classes; k++)
            if (row[k] > row[best])
                best = k;
        r->correct += best == par->y_host[first + i];
    }
    if (overlap) { /* parameters the backward pass did not reach */
        for (int i = 0; i < par->tensors && par->overlap_status == EMBER_OK; i++)
            par->overlap_status = deliver(par, r, i);
        if (par->overlap_status != EMBER_OK)
            replica_failed(r, "summing its gradients");
    } else if (!read_contribution(par, r)) {
        replica_failed(r, "reading its gradients");
    }
done:
    ember_tape_clear(r->ctx);
    ember_tensor_free(x);
    ember_tensor_free(y);
    r->seconds = now_seconds() - start;
}

/* A replica's thread: waits for a step (a new generation), runs its share,
 * says it is done. */
static void *replica_thread(void *arg)
{
    struct replica *r = arg;
    struct ember_parallel *par = r->par;
    ember_name_this_thread("ember-replica");
    uint64_t seen = 0;
    pthread_mutex_lock(&par->lock);
    for (;;) {
        while (!par->quit && par->generation == seen)
            pthread_cond_wait(&par->go, &par->lock);
        if (par->quit)
            break;
        seen = par->generation;
        pthread_mutex_unlock(&par->lock);
        replica_share(par, r);
        pthread_mutex_lock(&par->lock);
        if (--par->busy == 0)
            pthread_cond_signal(&par->done);
    }
    pthread_mutex_unlock(&par->lock);
    return NULL;
}

/* Every share of the step at once: the others on their threads, replica 0
 * on the caller's. */
static void run_shares(struct ember_parallel *par)
{
    pthread_mutex_lock(&par->lock);
    par->busy = par->count - 1;
    par->generation++;
    pthread_cond_broadcast(&par->go);
    pthread_mutex_unlock(&par->lock);
    replica_share(par, &par->replicas[0]);
    pthread_mutex_lock(&par->lock);
    while (par->busy > 0)
        pthread_cond_wait(&par->done, &par->lock);
    pthread_mutex_unlock(&par->lock);
}

/* ------------------------------------------------------------ the master */

/* The master copy's parameters and buffers into par->values. */
static ember_status read_master(struct ember_parallel *par) { return copy_values(par, par->model, false); }

/* par->values for every replica, before its next share */
static void replicas_reload(struct ember_parallel *par)
{
    for (int k = 1; k < par->count; k++)
        par->replicas[k].load_params = true;
}

/* par->values into the master copy, and the replicas before their next share */
static ember_status write_master(struct ember_parallel *par)
{
    ember_status st = copy_values(par, par->model, true);
    if (st == EMBER_OK)
        replicas_reload(par);
    return st;
}

/* The step's sum becomes the master's gradients and BatchNorm statistics;
 * then the optimizer steps and its result goes to every replica. */
static ember_status step_master(struct ember_parallel *par, double rows)
{
    ember_params *params = ember_model_params(par->model);
    float inverse = (float)(1.0 / rows);
    for (int64_t k = 0; k < par->total; k++)
        par->sum[k] *= inverse;
    for (int i = 0; i < par->tensors; i++) {
        ember_tensor *t = ember_params_at(params, i);
        /* num_batches_tracked is the master's own count, kept on the host */
        if (par->is_count[i])
            continue;
        ember_tensor *into = par->is_buffer[i] ? t : ember_tensor_grad(t);
        if (!into)
            continue;
        ember_status st =
            ember_tensor_write(into, par->sum + par->offset[i], (size_t)par->numel[i] * sizeof(float));
        if (st != EMBER_OK)
            return st;
    }
    ember_status st = ember_optim_step(par->opt);
    if (st == EMBER_OK && (st = read_master(par)) == EMBER_OK)
        replicas_reload(par);
    return st;
}

/* ------------------------------------------------------------------ the step */

static ember_status take_batch(struct ember_parallel *par, ember_tensor *x, ember_tensor *y, int64_t *batch)
{
    ember_ctx *ctx = par->ctx;
    if (!x || !y)
        return ember_set_error(ctx, EMBER_ERR_ARG, "ember_parallel_step: x and y must not be NULL");
    if (ember_tensor_ctx(x) != ctx || ember_tensor_ctx(y) != ctx)
        return ember_set_error(ctx, EMBER_ERR_ARG,
                               "ember_parallel_step: the batch must be on the model's context");
    int64_t b = ember_tensor_dim(x, 0);
    int64_t sample = b ? ember_tensor_numel(x) / b : 0;
    if (b < 1 || ember_tensor_ndim(y) != 1 || ember_tensor_dim(y, 0) != b ||
        ember_tensor_dtype(y) != EMBER_I32 || ember_tensor_ndim(x) != 1 + par->sample_ndim ||
        sample != par->sample_numel)
        return ember_set_error(ctx, EMBER_ERR_ARG,
                               "ember_parallel_step: x must be (B, the model's sample shape) "
                               "and y (B) class indices, B at least 1");
    if (b * sample > par->x_cap) {
        float *grown = realloc(par->x_host, (size_t)(b * sample) * sizeof *grown);
        if (!grown)
            return ember_set_error(ctx, EMBER_ERR_NOMEM,
                                   "ember_parallel_step: out of host memory for the batch");
        par->x_host = grown;
        par->x_cap = b * sample;
    }
    if (b > par->y_cap) {
        int32_t *grown = realloc(par->y_host, (size_t)b * sizeof *grown);
        if (!grown)
            return ember_set_error(ctx, EMBER_ERR_NOMEM,
                                   "ember_parallel_step: out of host memory for the batch");
        par->y_host = grown;
        par->y_cap = b;
    }
    ember_status st = ember_tensor_read(x, par->x_host, (size_t)(b * sample) * sizeof(float));
    if (st == EMBER_OK)
        st = ember_tensor_read(y, par->y_host, (size_t)b * sizeof(int32_t));
    *batch = b;
    return st;
}

ember_status ember_parallel_step(ember_parallel *par, ember_tensor *x, ember_tensor *y, float *loss,
                                 int64_t *correct)
{
    if (!par)
        return EMBER_ERR_ARG;
    int64_t batch = 0;
    ember_status st = take_batch(par, x, y, &batch);
    if (st != EMBER_OK)
        return st;
    double start = now_seconds();
    /* this process's rows of the batch, then each device's of those */
    int rank = par->collective.rank, size = par->collective.size;
    /* as even as B divides, the first ranks taking the extra rows: rank 0,
     * which saves the model (and its BatchNorm count), trains in every step */
    par->process_lo = batch - batch * (size - rank) / size;
    int64_t rows = batch - batch * (size - rank - 1) / size - par->process_lo;
    parallel_split(par, rows);
    /* the buckets anew; they start during the backward pass when one device trains here */
    par->next_bucket = 0;
    par->overlap_status = EMBER_OK;
    par->overlap = size > 1 && rows > 0 && par->replicas[0].rows == rows;
    for (int b = 0; b < par->buckets; b++)
        par->bucket[b].pending = 0;
    for (int i = 0; i < par->tensors; i++) {
        par->delivered[i] = false;
        par->bucket[par->bucket_of[i]].pending += !par->is_buffer[i];
    }
    if (par->overlap)
        memset(par->sum, 0, (size_t)par->total * sizeof *par->sum);
    run_shares(par);
    for (int k = 0; k < par->count; k++) { /* the first failure, in the devices' order */
        struct replica *r = &par->replicas[k];
        if (r->status != EMBER_OK)
            return ember_set_error(par->ctx, r->status, "%s failed during its share of the step, %s",
                                   r->device, r->error);
    }

    /* the sum, device 0 first: the same order, the same float sums, every
     * run (already made during the backward pass when one device trained) */
    if (!par->overlap)
        memset(par->sum, 0, (size_t)par->total * sizeof *par->sum);
    double loss_sum = 0.0;
    int64_t right = 0;
    for (int k = 0; k < par->count; k++) {
        const struct replica *r = &par->replicas[k];
        if (r->rows == 0)
            continue;
        for (int64_t i = 0; i < par->total && !par->overlap; i++)
            par->sum[i] += r->contribution[i];
        loss_sum += r->loss_sum;
        right += r->correct;
    }
    par->sum[par->total + TRAILER_LOSS] = (float)loss_sum;
    par->sum[par->total + TRAILER_CORRECT] = (float)right;
    par->sum[par->total + TRAILER_ROWS] = (float)rows;
    par->sum[par->total + TRAILER_STOPS] = par->stop_asked;
    double seconds = now_seconds() - start;
    if ((st = finish_sums(par)) != EMBER_OK)
        return st;
    par->sum_seconds += now_seconds() - start - seconds;
    double all_rows = par->sum[par->total + TRAILER_ROWS];
    par->stopping = par->sum[par->total + TRAILER_STOPS] > 0.0f; /* the same answer on every process */
    if (all_rows < 1.0)
        return ember_set_error(par->ctx, EMBER_ERR_ARG, "ember_parallel_step: no rows to train on");
    if ((st = step_master(par, all_rows)) != EMBER_OK)
        return st;
    if (loss)
        *loss = (float)(par->sum[par->total + TRAILER_LOSS] / all_rows);
    if (correct)
        *correct = (int64_t)par->sum[par->total + TRAILER_CORRECT];
    par->steps++;
    parallel_learn(par, rows, seconds);
    return EMBER_OK;
}

/* ------------------------------------------------------- setting up, ending */

/* "cpu" of "cpu (2 threads, OpenBLAS 0.3.21)": the device's short name */
static void short_name(char *out, size_t len, const char *name)
{
    size_t n = strcspn(name, " (");
    if (n >= len)
        n = len - 1;
    memcpy(out, name, n);
    out[n] = '\0';
}

static bool is_cpu(const char *device)
{
    return strncmp(device, "cpu", 3) == 0 && (device[3] == '\0' || device[3] == ':' || device[3] == ' ');
}

/* The parameter set laid end to end: where each tensor's floats go. */
static bool lay_out(struct ember_parallel *par)
{
    ember_params *params = ember_model_params(par->model);
    int n = par->tensors = ember_params_count(params);
    par->offset = calloc((size_t)n + 1, sizeof *par->offset);
    par->numel = calloc((size_t)n + 1, sizeof *par->numel);
    par->is_buffer = calloc((size_t)n + 1, sizeof *par->is_buffer);
    par->is_count = calloc((size_t)n + 1, sizeof *par->is_count);
    par->bucket_of = calloc((size_t)n + 1, sizeof *par->bucket_of);
    par->delivered = calloc((size_t)n + 1, sizeof *par->delivered);
    if (!par->offset || !par->numel || !par->is_buffer || !par->is_count || !par->bucket_of ||
        !par->delivered)
        return false;
    for (int i = 0; i < n; i++) {
        ember_tensor *t = ember_params_at(params, i);
        par->offset[i] = par->total;
        par->numel[i] = ember_tensor_numel(t);
        par->is_buffer[i] = ember_params_is_buffer(params, i);
        par->is_count[i] = par->is_buffer[i] && ember_tensor_ndim(t) == 0;
        par->total += par->numel[i];
    }
    return (par->sum = calloc((size_t)(par->total + TRAILER), sizeof *par->sum)) &&
           (par->values = calloc((size_t)par->total + 1, sizeof *par->values));
}

/* A replica of the master on `device`, in a context of its own. */
static ember_status open_replica(struct ember_parallel *par, struct replica *r, const char *device,
                                 int threads, const void *checkpoint, size_t checkpoint_size)
{
    snprintf(r->device, sizeof r->device, "%s", device);
    if (!(r->ctx = ember_ctx_new()))
        return ember_set_error(par->ctx, EMBER_ERR_NOMEM, "ember_parallel_new: out of memory");
    /* the replica speaks, and announces its waits, to whoever the master's context does */
    ember_log_fn log_fn;
    void *log_user, *progress_user;
    ember_log_level level;
    ember_progress_fn progress_fn;
    ember_ctx_get_log(par->ctx, &log_fn, &log_user, &level);
    ember_ctx_set_log(r->ctx, log_fn, log_user, level);
    ember_ctx_get_progress(par->ctx, &progress_fn, &progress_user);
    ember_ctx_set_progress(r->ctx, progress_fn, progress_user);
    ember_ctx_set_matmul_precision(r->ctx, ember_ctx_matmul_precision(par->ctx)); /* the same products */
    if (is_cpu(device))
        ember_ctx_set_threads(r->ctx, threads);
    if (ember_ctx_use_device(r->ctx, device) != EMBER_OK ||
        !(r->model = ember_model_from_checkpoint_memory(r->ctx, checkpoint, checkpoint_size)))
        return ember_set_error(par->ctx, ember_last_status(r->ctx),
                               "ember_parallel_new: cannot train on %s: %s", device,
                               ember_last_error(r->ctx));
    return EMBER_OK;
}

static bool valid_collective(const ember_collective *c)
{
    return c->size >= 1 && c->rank >= 0 && c->rank < c->size && c->sum_start && c->sum_wait && c->broadcast;
}

ember_parallel *ember_parallel_new(ember_model *model, ember_optim *opt,
                                   const ember_parallel_options *options)
{
    ember_parallel_options none = {0};
    const ember_parallel_options *o = options ? options : &none;
    ember_params *params = model ? ember_model_params(model) : NULL;
    if (!params || !opt || ember_params_count(params) == 0)
        return NULL; /* no context to say why: nothing to train */
    ember_ctx *ctx = ember_tensor_ctx(ember_params_at(params, 0));
    if (o->device_count < 0 || o->device_count >= PARALLEL_MAX_DEVICES || (o->device_count && !o->devices) ||
        o->threads < 0) {
        ember_set_error(ctx, EMBER_ERR_ARG,
                        "ember_parallel_new: from 0 to %d other devices, and threads 0 or more",
                        PARALLEL_MAX_DEVICES - 1);
        return NULL;
    }
    if (o->collective && !valid_collective(o->collective)) {
        ember_set_error(ctx, EMBER_ERR_ARG,
                        "ember_parallel_new: the collective needs a size of 1 or more, a rank "
                        "below it, and sum_start, sum_wait and broadcast");
        return NULL;
    }
    if (o->device_count && !ember_model_text(model)) {
        ember_set_error(ctx, EMBER_ERR_UNSUPPORTED,
                        "ember_parallel_new: %s is a C network (ember_model_wrap), "
                        "which cannot be copied to other devices; write it as a model file (docs/models.md)",
                        ember_model_name(model));
        return NULL;
    }
    ember_parallel *par = calloc(1, sizeof *par);
    if (!par) {
        ember_set_error(ctx, EMBER_ERR_NOMEM, "ember_parallel_new: out of memory");
        return NULL;
    }
    par->model = model;
    par->opt = opt;
    par->ctx = ctx;
    par->fixed_shares = o->fixed_shares;
    par->keep_all = o->keep_all;
    par->collective = o->collective ? *o->collective : (ember_collective){.rank = 0, .size = 1};
    par->has_collective = o->collective != NULL;
    pthread_mutex_init(&par->lock, NULL);
    pthread_cond_init(&par->go, NULL);
    pthread_cond_init(&par->done, NULL);
    int64_t shape[3];
    par->sample_ndim = ember_model_sample_shape(model, shape);
    par->sample_numel = 1;
    for (int i = 0; i < par->sample_ndim; i++)
        par->sample_numel *= par->sample_shape[i] = shape[i];
    par->classes = ember_model_classes(model);

    /* the cores shared between the cpu devices, unless told */
    int cpus = is_cpu(ember_ctx_device_name(ctx));
    for (int k = 0; k < o->device_count; k++)
        cpus += o->devices[k] && is_cpu(o->devices[k]);
    int cores = ember_cpu_count();
    int threads = o->threads ? o->threads : cpus > 1 ? (int)(cores > cpus ? cores / cpus : 1) : 0;
    if (threads && is_cpu(ember_ctx_device_name(ctx)))
        ember_ctx_set_threads(ctx, threads);

    struct replica *master = &par->replicas[0];
    master->par = par;
    master->ctx = ctx;
    master->model = model;
    short_name(master->device, sizeof master->device, ember_ctx_device_name(ctx));
    par->count = 1;
    ember_status st = lay_out(par) && (master->contribution = calloc((size_t)par->total + 1, sizeof(float)))
                          ? EMBER_OK
                          : ember_set_error(ctx, EMBER_ERR_NOMEM, "ember_parallel_new: out of memory");
    if (st == EMBER_OK)
        plan_buckets(par, o->bucket_floats > 0 ? o->bucket_floats : 65536);
    void *checkpoint = NULL;
    size_t checkpoint_size = 0;
    if (st == EMBER_OK && o->device_count)
        st = ember_model_save_memory(model, NULL, &checkpoint, &checkpoint_size);
    for (int k = 0; k < o->device_count && st == EMBER_OK; k++) {
        struct replica *r = &par->replicas[par->count++];
        r->par = par;
        if (!o->devices[k])
            st = ember_set_error(ctx, EMBER_ERR_ARG, "ember_parallel_new: device %d is NULL", k + 1);
        else if (!(r->contribution = calloc((size_t)par->total + 1, sizeof(float))))
            st = ember_set_error(ctx, EMBER_ERR_NOMEM, "ember_parallel_new: out of memory");
        else
            st = open_replica(par, r, o->devices[k], threads, checkpoint, checkpoint_size);
    }
    free(checkpoint);
    /* every process starts from rank 0's parameters */
    if (st == EMBER_OK && (st = read_master(par)) == EMBER_OK && par->collective.size > 1) {
        if (par->collective.broadcast(par->collective.user, par->values, (size_t)par->total) != EMBER_OK)
            st = collective_failed(par, "sending rank 0's parameters");
        else
            st = write_master(par);
    }
    for (int k = 1; k < par->count && st == EMBER_OK; k++) {
        if (pthread_create(&par->replicas[k].thread, NULL, replica_thread, &par->replicas[k]) != 0)
            st = ember_set_error(ctx, EMBER_ERR_NOMEM, "ember_parallel_new: cannot start a thread for %s",
                                 par->replicas[k].device);
        par->replicas[k].started = st == EMBER_OK;
    }
    if (st != EMBER_OK) {
        ember_parallel_free(par);
        return NULL;
    }
    par->trial.phase = par->keep_all || par->count < 2 ? -1 : 0;
    return par;
}

void ember_parallel_free(ember_parallel *par)
{
    if (!par)
        return;
    pthread_mutex_lock(&par->lock);
    par->quit = true;
    pthread_cond_broadcast(&par->go);
    pthread_mutex_unlock(&par->lock);
    for (int k = 0; k < par->count; k++) {
        struct replica *r = &par->replicas[k];
        if (r->started)
            pthread_join(r->thread, NULL);
        if (k > 0) {
            ember_model_free(r->model);
            ember_ctx_free(r->ctx);
        }
        free(r->contribution);
        free(r->logits);
    }
    pthread_mutex_destroy(&par->lock);
    pthread_cond_destroy(&par->go);
    pthread_cond_destroy(&par->done);
    free(par->offset);
    free(par->numel);
    free(par->is_buffer);
    free(par->is_count);
    free(par->bucket_of);
    free(par->delivered);
    free(par->sum);
    free(par->values);
    free(par->x_host);
    free(par->y_host);
    free(par);
}

/* ------------------------------------------------------ checks and words */

/* FNV-1a over the parameters' bytes */
static uint64_t hash_values(const struct ember_parallel *par)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *p = (const unsigned char *)par->values;
    for (size_t i = 0; i < (size_t)par->total * sizeof(float); i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

ember_status ember_parallel_check(ember_parallel *par, bool *drifted)
{
    if (drifted)
        *drifted = false;
    if (!par)
        return EMBER_ERR_ARG;
    if (par->collective.size < 2)
        return EMBER_OK;
    ember_status st = read_master(par);
    if (st != EMBER_OK)
        return st;
    /* rank 0's hash in four 16-bit pieces (floats hold them exactly) */
    uint64_t mine = hash_values(par);
    float theirs[4], differs[1];
    for (int i = 0; i < 4; i++)
        theirs[i] = (float)((mine >> (16 * i)) & 0xffff);
    if (par->collective.broadcast(par->collective.user, theirs, 4) != EMBER_OK)
        return collective_failed(par, "comparing the parameters");
    uint64_t rank0 = 0;
    for (int i = 0; i < 4; i++)
        rank0 |= (uint64_t)theirs[i] << (16 * i);
    differs[0] = rank0 != mine;
    if (par->collective.sum_start(par->collective.user, 0, differs, 1) != EMBER_OK ||
        par->collective.sum_wait(par->collective.user, 0) != EMBER_OK)
        return collective_failed(par, "comparing the parameters");
    if (differs[0] == 0.0f)
        return EMBER_OK;
    if (drifted)
        *drifted = true;
    if (par->collective.broadcast(par->collective.user, par->values, (size_t)par->total) != EMBER_OK)
        return collective_failed(par, "sending rank 0's parameters");
    return write_master(par);
}

void ember_parallel_request_stop(ember_parallel *par)
{
    if (par)
        par->stop_asked = true;
}

bool ember_parallel_stopping(const ember_parallel *par) { return par && par->stopping; }

const char *ember_parallel_describe(ember_parallel *par)
{
    if (!par)
        return "";
    size_t at = 0;
    int64_t rows = 0;
    for (int k = 0; k < par->count; k++)
        rows += par->replicas[k].rows;
    if (par->collective.size > 1)
        at += (size_t)snprintf(par->describe, sizeof par->describe, "rank %d of %d: ", par->collective.rank,
                               par->collective.size);
    for (int k = 0; k < par->count && at < sizeof par->describe; k++) {
        const struct replica *r = &par->replicas[k];
        const char *plus = k ? " + " : "";
        if (r->left_out)
            at += (size_t)snprintf(par->describe + at, sizeof par->describe - at, "%s%s (left out)", plus,
                                   r->device);
        else if (rows)
            at += (size_t)snprintf(par->describe + at, sizeof par->describe - at, "%s%s %.0f%%", plus,
                                   r->device, 100.0 * (double)r->rows / (double)rows);
        else
            at += (size_t)snprintf(par->describe + at, sizeof par->describe - at, "%s%s", plus, r->device);
    }
    if (par->collective.size > 1 && par->steps && at < sizeof par->describe)
        snprintf(par->describe + at, sizeof par->describe - at,
                 "; the sum of %.0f KiB across the ranks took %.2f ms "
                 "a step",
                 (double)(par->total + TRAILER) * 4.0 / 1024.0, 1e3 * par->sum_seconds / (double)par->steps);
    return par->describe;
}
