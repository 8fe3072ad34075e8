/* SPDX-License-Identifier: MIT */
/*
 * core/profile.c — where a context's time goes: a backend table that times
 * the real one (core/profile-impl.h), the rows it adds up, the table people
 * read and the Chrome trace Perfetto opens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile-impl.h"
#include "tensor-impl.h"
#include "text-impl.h"

/* One row of the profile: what one op spent in one primitive, in one
 * kernel a primitive launched (on GPUs), or in a stretch of host work.
 * `name` says which: "sgemm", "unary copy" (a primitive's row is named with
 * what it computed, where it computes several things), a kernel's name,
 * "fill batch (host)", "write". */
struct profile_row {
    const char *op, *phase;
    const char *name;
    bool kernel;
    const char *primitive; /* a kernel's row: the primitive that launched it */
    int64_t calls;
    double seconds, flops, bytes;
};

/* One event of the trace: X events of the Trace Event Format. */
enum trace_track { TRACK_HOST = 1, TRACK_DEVICE = 2 };
struct trace_event {
    const char *name, *op, *phase, *category;
    double start, seconds; /* since the profile started */
    double flops, bytes;
    enum trace_track track;
    const char *inputs; /* the op's inputs' shapes, as JSON ("[[64, 1, 28, 28], [8, 1, 3, 3]]"), or NULL */
    /* a kernel's: its launch, and the primitive that launched it with that call's work */
    size_t groups[3], local;
    const char *primitive;
    double primitive_flops, primitive_bytes;
};

/* at most this many trace events are kept (about 64 MB): a trace of a
 * whole long run is more than Perfetto opens anyway */
#define TRACE_EVENT_LIMIT 1000000

struct ember_profiler {
    struct ember_backend_ops table; /* what ctx->ops points at while profiling */
    const struct ember_backend_ops *inner;
    void *inner_dev;
    ember_ctx *ctx;
    bool running, tracing;
    bool kernels_timed; /* the backend reports its kernels (GPUs) */

    const char *op, *phase; /* the label now */
    double label_since;     /* when it was set, for the trace's op spans */
    const char *inputs;     /* the shapes of the op's inputs (tracing), one of `shapes` */
    /* every distinct text of shapes the trace has used, each kept once (a
     * training run repeats a few dozen; a language model's attention grows
     * by a position a token): a hash table, open addressing, a power of two */
    char **shapes;
    int64_t shapes_len, shapes_cap;
    /* the primitive running now (NULL between them), its op, and the work its geometry says */
    const char *primitive;
    const char *op_of_primitive, *phase_of_primitive;
    double primitive_flops, primitive_bytes;

    double origin; /* the clock at the first start */
    double wall;   /* seconds spent running, over every start and stop */
    double running_since;

    struct profile_row *rows;
    int64_t row_len, row_cap;
    int64_t last_row;

    struct trace_event *events;
    int64_t event_len, event_cap;
    bool events_dropped;
};

static double clock_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static struct profile_row *row_find(struct ember_profiler *p, const char *op, const char *phase,
                                    const char *name, bool kernel, const char *primitive)
{
    /* labels and names are static strings, so pointers compare; the last
     * row matches often (a primitive's kernels, one after another) */
    for (int64_t probe = 0; probe <= p->row_len; probe++) {
        int64_t i = probe == 0 ? p->last_row : probe - 1;
        if (i < 0 || i >= p->row_len)
            continue;
        struct profile_row *r = &p->rows[i];
        if (r->op == op && r->phase == phase && r->name == name && r->kernel == kernel &&
            r->primitive == primitive) {
            p->last_row = i;
            return r;
        }
    }
    if (ember_host_grow(p->ctx, (void **)&p->rows, &p->row_cap, p->row_len + 1, sizeof *p->rows) != EMBER_OK)
        return NULL;
    struct profile_row *r = &p->rows[p->row_len];
    *r = (struct profile_row){
        .op = op, .phase = phase, .name = name, .kernel = kernel, .primitive = primitive};
    p->last_row = p->row_len++;
    return r;
}

static void trace_add(struct ember_profiler *p, const struct trace_event *e)
{
    if (!p->tracing)
        return;
    if (p->event_len >= TRACE_EVENT_LIMIT) {
        p->events_dropped = true;
        return;
    }
    if (ember_host_grow(p->ctx, (void **)&p->events, &p->event_cap, p->event_len + 1, sizeof *p->events) !=
        EMBER_OK) {
        ember_clear_error(p->ctx); /* a trace cut short is no reason to fail the step */
        p->events_dropped = true;
        return;
    }
    p->events[p->event_len++] = *e;
}

/* One call of a primitive (category "primitive"), a kernel ("kernel") or
 * host work ("host"), added to its row and to the trace (a kernel's
 * launch with it, else NULL). */
static void record(struct ember_profiler *p, const char *op, const char *phase, const char *name,
                   const char *category, double start, double seconds, double flops, double bytes,
                   const struct trace_event *launch)
{
    bool kernel = strcmp(category, "kernel") == 0;
    struct profile_row *r = row_find(p, op, phase, name, kernel, kernel ? p->primitive : NULL);
    if (r) {
        r->calls++;
        r->seconds += seconds;
        r->flops += flops;
        r->bytes += bytes;
    } else {
        ember_clear_error(p->ctx); /* out of memory for a row: the profile is short of it */
    }
    /* the device's track holds what the device ran: kernels, and on the
     * CPU, whose primitives are its kernels and which does the host's work
     * too, everything but the op spans (the host's track, ops alone, then
     * has no row of a few slivers) */
    bool on_device = kernel || !p->kernels_timed;
    struct trace_event e = launch ? *launch : (struct trace_event){0};
    e.name = name;
    e.op = op;
    e.phase = phase;
    e.category = category;
    e.start = start - p->origin;
    e.seconds = seconds;
    e.flops = flops;
    e.bytes = bytes;
    e.track = on_device ? TRACK_DEVICE : TRACK_HOST;
    e.inputs = p->inputs;
    trace_add(p, &e);
}

/* ----------------------------------------------------------------- labels */

static void close_label_span(struct ember_profiler *p, double now)
{
    if (p->op && p->tracing)
        trace_add(p, &(struct trace_event){.name = p->op,
                                           .phase = p->phase,
                                           .category = "op",
                                           .start = p->label_since - p->origin,
                                           .seconds = now - p->label_since,
                                           .track = TRACK_HOST,
                                           .inputs = p->inputs});
}

/* the same label on other shapes: the span so far ends, another begins */
static void span_anew(struct ember_profiler *p)
{
    double now = clock_seconds();
    close_label_span(p, now);
    p->label_since = now;
}

void ember_profile_set_label(struct ember_profiler *p, const char *op, const char *phase)
{
    if (!p->running || (p->op == op && p->phase == phase))
        return;
    double now = clock_seconds();
    close_label_span(p, now);
    if (!p->op || !op || strcmp(p->op, op) != 0)
        p->inputs = NULL; /* another op: no shapes until it says (ember_profile_set_inputs) */
    p->op = op;
    p->phase = phase;
    p->label_since = now;
}

struct ember_profile_mark ember_profile_get_mark(const struct ember_profiler *p)
{
    return (struct ember_profile_mark){.op = p->op, .phase = p->phase, .inputs = p->inputs};
}

void ember_profile_put_mark(struct ember_profiler *p, struct ember_profile_mark mark)
{
    if (!p->running)
        return;
    if (p->op != mark.op || p->phase != mark.phase) {
        ember_profile_set_label(p, mark.op, mark.phase);
    } else if (p->inputs != mark.inputs) {
        span_anew(p);
    }
    p->inputs = mark.inputs;
}

static uint64_t text_hash(const char *text) { return ember_hash_bytes(text, strlen(text)); }

/* The kept copy of `text`, made the first time it is seen; NULL when out of memory. */
static const char *shapes_intern(struct ember_profiler *p, const char *text)
{
    if (2 * (p->shapes_len + 1) > p->shapes_cap) { /* at most half full: rehash into twice the room */
        int64_t cap = p->shapes_cap ? 2 * p->shapes_cap : 64;
        char **grown = calloc((size_t)cap, sizeof *grown);
        if (!grown)
            return NULL;
        for (int64_t i = 0; i < p->shapes_cap; i++)
            if (p->shapes[i]) {
                int64_t j = (int64_t)(text_hash(p->shapes[i]) & (uint64_t)(cap - 1));
                while (grown[j])
                    j = (j + 1) & (cap - 1);
                grown[j] = p->shapes[i];
            }
        free(p->shapes);
        p->shapes = grown;
        p->shapes_cap = cap;
    }
    int64_t j = (int64_t)(text_hash(text) & (uint64_t)(p->shapes_cap - 1));
    for (; p->shapes[j]; j = (j + 1) & (p->shapes_cap - 1))
        if (strcmp(p->shapes[j], text) == 0)
            return p->shapes[j];
    size_t len = strlen(text) + 1;
    if (!(p->shapes[j] = malloc(len)))
        return NULL;
    memcpy(p->shapes[j], text, len);
    p->shapes_len++;
    return p->shapes[j];
}

void ember_profile_set_inputs(struct ember_profiler *p, const struct ember_tensor *const in[3])
{
    if (!p->running || !p->tracing)
        return;
    /* [[64, 1, 28, 28], [8, 1, 3, 3]]: at most 3 inputs of EMBER_MAX_DIMS sizes of 20 digits */
    char text[3 * EMBER_MAX_DIMS * 24 + 16];
    size_t len = 0;
    text[len++] = '[';
    for (int i = 0; i < 3; i++) {
        if (!in[i])
            continue;
        if (len > 1)
            len += (size_t)snprintf(text + len, sizeof text - len, ", ");
        text[len++] = '[';
        for (int d = 0; d < in[i]->ndim; d++)
            len += (size_t)snprintf(text + len, sizeof text - len, d ? ", %lld" : "%lld",
                                    (long long)in[i]->shape[d]);
        text[len++] = ']';
    }
    text[len++] = ']';
    text[len] = '\0';
    const char *inputs = shapes_intern(p, text);
    if (inputs == p->inputs)
        return;
    if (p->inputs) /* the same op on other shapes */
        span_anew(p);
    p->inputs = inputs; /* NULL when out of memory: this op's events say no shapes */
}

void ember_profile_op(ember_ctx *ctx, const char *op, const char *phase)
{
    ember_profile_label(ctx, op, phase);
}

double ember_profile_host_begin(ember_ctx *ctx)
{
    return ctx->profiler && ctx->profiler->running ? clock_seconds() : 0.0;
}

void ember_profile_host_end(ember_ctx *ctx, const char *what, double start)
{
    struct ember_profiler *p = ctx->profiler;
    if (p && p->running && start > 0.0)
        record(p, p->op, p->phase, what, "host", start, clock_seconds() - start, 0.0, 0.0, NULL);
}

void ember_profile_kernel_timed(void *host_ctx, const char *kernel, const size_t groups[3], size_t local,
                                double seconds)
{
    ember_ctx *ctx = host_ctx;
    struct ember_profiler *p = ctx->profiler;
    if (!p || !p->running || !p->primitive)
        return;
    struct trace_event launch = {.groups = {groups[0], groups[1], groups[2]},
                                 .local = local,
                                 .primitive = p->primitive,
                                 .primitive_flops = p->primitive_flops,
                                 .primitive_bytes = p->primitive_bytes};
    /* placed to end when the host saw it end: the device's clock is not the host's */
    record(p, p->op_of_primitive, p->phase_of_primitive, kernel, "kernel", clock_seconds() - seconds, seconds,
           0.0, 0.0, &launch);
}

/* ------------------------------------------------------- the timed table
 *
 * Every entry calls the real backend's. A primitive is timed from its call
 * until the device has finished it (sync), with the work its geometry
 * says, so that GFLOP/s and GB/s can be printed beside the time. */

static double primitive_begin(struct ember_profiler *p, const char *name, double flops, double bytes)
{
    p->primitive = name;
    p->op_of_primitive = p->op;
    p->phase_of_primitive = p->phase;
    p->primitive_flops = flops;
    p->primitive_bytes = bytes;
    return clock_seconds();
}

static ember_status primitive_end(struct ember_profiler *p, double start, ember_status st)
{
    if (st == EMBER_OK && p->inner->sync)
        st = p->inner->sync(p->inner_dev);
    double end = clock_seconds();
    record(p, p->op_of_primitive, p->phase_of_primitive, p->primitive, "primitive", start, end - start,
           p->primitive_flops, p->primitive_bytes, NULL);
    p->primitive = NULL;
    return st;
}

/* timed_fill, timed_unary, ...: one wrapper per primitive, made from its
 * entry in backends/backend.h's list, where its row's label and its cost are */
#define UNWRAP(...) __VA_ARGS__
#define TIMED_PRIMITIVE(name, params, args, label, flops, bytes)                                             \
    static ember_status timed_##name params                                                                  \
    {                                                                                                        \
        struct ember_profiler *profiler = dev;                                                               \
        const char *row_label = label;                                                                       \
        double started = primitive_begin(                                                                    \
            profiler, row_label ? row_label : ember_primitive_names[EMBER_PRIMITIVE_##name], flops, bytes);  \
        ember_status status = profiler->inner->name(profiler->inner_dev, UNWRAP args);                       \
        return primitive_end(profiler, started, status);                                                     \
    }
EMBER_PRIMITIVES(TIMED_PRIMITIVE)
#undef TIMED_PRIMITIVE
#undef UNWRAP

/* Transfers are host rows of the op that asked ("write", "read"), timed
 * like primitives: a read is where a GPU's queue drains. */
static ember_status timed_write(void *dev, ember_ptr dst, const void *src, size_t bytes)
{
    struct ember_profiler *p = dev;
    double start = clock_seconds();
    ember_status st = p->inner->write(p->inner_dev, dst, src, bytes);
    if (st == EMBER_OK && p->inner->sync)
        st = p->inner->sync(p->inner_dev);
    record(p, p->op, p->phase, "write", "host", start, clock_seconds() - start, 0.0, (double)bytes, NULL);
    return st;
}

static ember_status timed_read(void *dev, void *dst, ember_ptr src, size_t bytes)
{
    struct ember_profiler *p = dev;
    double start = clock_seconds();
    ember_status st = p->inner->read(p->inner_dev, dst, src, bytes);
    record(p, p->op, p->phase, "read", "host", start, clock_seconds() - start, 0.0, (double)bytes, NULL);
    return st;
}

/* The rest only passes through. */
static void pass_describe(void *dev, char *out, size_t len)
{
    struct ember_profiler *p = dev;
    p->inner->device_describe(p->inner_dev, out, len);
}
static ember_status pass_set_threads(void *dev, int threads)
{
    struct ember_profiler *p = dev;
    return p->inner->set_threads(p->inner_dev, threads);
}
static bool pass_matmul_precision_matters(void *dev, ember_matmul_precision precision)
{
    struct ember_profiler *p = dev;
    return p->inner->matmul_precision_matters(p->inner_dev, precision);
}
static ember_status pass_alloc(void *dev, size_t bytes, void **buf)
{
    struct ember_profiler *p = dev;
    return p->inner->alloc(p->inner_dev, bytes, buf);
}
static void pass_release(void *dev, void *buf)
{
    struct ember_profiler *p = dev;
    p->inner->release(p->inner_dev, buf);
}
static ember_status pass_memory_info(void *dev, size_t *free_bytes, size_t *total_bytes)
{
    struct ember_profiler *p = dev;
    return p->inner->memory_info(p->inner_dev, free_bytes, total_bytes);
}
static ember_status pass_sync(void *dev)
{
    struct ember_profiler *p = dev;
    return p->inner->sync(p->inner_dev);
}

static bool pass_conv_direct_fast(void *dev, const struct ember_conv_geom *g)
{
    struct ember_profiler *p = dev;
    return p->inner->conv_direct_fast(p->inner_dev, g);
}

/* The timed table over `inner`: every entry the core calls through
 * ctx->ops, optional ones only where the inner backend has them. */
static struct ember_backend_ops timed_table(const struct ember_backend_ops *inner)
{
    struct ember_backend_ops t = {
        .name = inner->name,
        .device_describe = pass_describe,
        .set_threads = inner->set_threads ? pass_set_threads : NULL,
        .matmul_precision_matters = inner->matmul_precision_matters ? pass_matmul_precision_matters : NULL,
        .alloc = pass_alloc,
        .release = pass_release,
        .memory_info = inner->memory_info ? pass_memory_info : NULL,
        .write = timed_write,
        .read = timed_read,
        .sync = inner->sync ? pass_sync : NULL,
        /* a profiled run's convolutions group their images as an unprofiled one's */
        .conv_columns_bytes = inner->conv_columns_bytes,
        /* and choose their algorithms as it does */
        .conv_direct_fast = inner->conv_direct_fast ? pass_conv_direct_fast : NULL,
#define TIMED_ENTRY(name, ...) .name = timed_##name,
        EMBER_PRIMITIVES(TIMED_ENTRY)
#undef TIMED_ENTRY
    };
    return t;
}

/* ------------------------------------------------------- start and stop */

ember_status ember_profile_start(ember_ctx *ctx, bool trace)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!ember_ctx_ready(ctx))
        return ctx->status;
    struct ember_profiler *p = ctx->profiler;
    if (p && p->running) {
        p->tracing = p->tracing || trace;
        return EMBER_OK;
    }
    if (ctx->ops->set_profiling) {
        ember_status st = ctx->ops->set_profiling(ctx->dev, true);
        if (st != EMBER_OK)
            return st;
    }
    if (!p) {
        p = ember_host_calloc(ctx, 1, sizeof *p);
        if (!p) {
            if (ctx->ops->set_profiling)
                ctx->ops->set_profiling(ctx->dev, false);
            return ctx->status;
        }
        p->ctx = ctx;
        p->origin = clock_seconds();
        p->last_row = -1;
        ctx->profiler = p;
    }
    p->inner = ctx->ops;
    p->inner_dev = ctx->dev;
    p->table = timed_table(ctx->ops);
    p->tracing = p->tracing || trace;
    p->kernels_timed = ctx->ops->set_profiling != NULL;
    ctx->ops = &p->table;
    ctx->dev = p;
    p->running = true;
    p->running_since = clock_seconds();
    p->label_since = p->running_since;
    return EMBER_OK;
}

ember_status ember_profile_stop(ember_ctx *ctx)
{
    struct ember_profiler *p = ctx ? ctx->profiler : NULL;
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!p || !p->running)
        return EMBER_OK;
    /* the wait's failure is reported, and profiling stops all the same */
    ember_status st = p->inner->sync ? p->inner->sync(p->inner_dev) : EMBER_OK;
    double now = clock_seconds();
    close_label_span(p, now);
    p->op = p->phase = NULL;
    p->inputs = NULL;
    p->wall += now - p->running_since;
    p->running = false;
    ctx->ops = p->inner;
    ctx->dev = p->inner_dev;
    if (ctx->ops->set_profiling) {
        ember_status off = ctx->ops->set_profiling(ctx->dev, false);
        st = st != EMBER_OK ? st : off;
    }
    return st;
}

void ember_profile_free(ember_ctx *ctx)
{
    if (!ctx || !ctx->profiler)
        return;
    ember_profile_stop(ctx);
    free(ctx->profiler->rows);
    free(ctx->profiler->events);
    for (int64_t i = 0; i < ctx->profiler->shapes_cap; i++)
        free(ctx->profiler->shapes[i]);
    free(ctx->profiler->shapes);
    free(ctx->profiler);
    ctx->profiler = NULL;
}

void ember_profile_clear(ember_ctx *ctx) { ember_profile_free(ctx); }

static double profiled_seconds(const struct ember_profiler *p)
{
    return p->wall + (p->running ? clock_seconds() - p->running_since : 0.0);
}

void ember_profile_totals(const ember_ctx *ctx, double *wall_seconds, double *row_seconds)
{
    const struct ember_profiler *p = ctx ? ctx->profiler : NULL;
    double rows = 0.0;
    for (int64_t i = 0; p && i < p->row_len; i++)
        if (!p->rows[i].kernel) /* a kernel's time is inside its primitive's */
            rows += p->rows[i].seconds;
    if (wall_seconds)
        *wall_seconds = p ? profiled_seconds(p) : 0.0;
    if (row_seconds)
        *row_seconds = rows;
}

/* ------------------------------------------------------------ the table */

struct op_total {
    const char *op, *phase;
    int64_t calls;
    double seconds, flops, bytes;
};

static int slowest_first(const void *a, const void *b)
{
    double x = ((const struct op_total *)a)->seconds, y = ((const struct op_total *)b)->seconds;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void row_line(struct ember_text *out, int indent, const char *name, int64_t calls, double seconds,
                     double wall, double flops, double bytes)
{
    char label[64], gflops[16] = "", gbps[16] = "";
    snprintf(label, sizeof label, "%*s%s", indent, "", name);
    if (flops > 0.0 && seconds > 0.0)
        snprintf(gflops, sizeof gflops, "%.1f", flops / seconds * 1e-9);
    if (bytes > 0.0 && seconds > 0.0)
        snprintf(gbps, sizeof gbps, "%.1f", bytes / seconds * 1e-9);
    ember_text_printf(out, "%-34s %8lld %10.2f %10.1f %6.1f%% %8s %8s\n", label, (long long)calls,
                      seconds * 1e3, calls ? seconds / (double)calls * 1e6 : 0.0,
                      wall > 0.0 ? 100.0 * seconds / wall : 0.0, gflops, gbps);
}

/* The rows of one op's primitives (kernel false) or of the kernels one
 * primitive launched, slowest first; on GPUs each primitive's row is
 * followed by its kernels'. */
static void op_lines(const struct ember_profiler *p, struct ember_text *out, const struct op_total *op,
                     bool kernels, const char *primitive, bool *done, double wall)
{
    for (;;) {
        int64_t next = -1;
        for (int64_t i = 0; i < p->row_len; i++) {
            const struct profile_row *r = &p->rows[i];
            if (!done[i] && r->op == op->op && r->phase == op->phase && r->kernel == kernels &&
                r->primitive == primitive && (next < 0 || r->seconds > p->rows[next].seconds))
                next = i;
        }
        if (next < 0)
            return;
        done[next] = true;
        const struct profile_row *r = &p->rows[next];
        row_line(out, kernels ? 4 : 2, r->name, r->calls, r->seconds, wall, r->flops, r->bytes);
        if (!kernels)
            op_lines(p, out, op, true, r->name, done, wall);
    }
}

char *ember_profile_table(const ember_ctx *ctx)
{
    const struct ember_profiler *p = ctx ? ctx->profiler : NULL;
    if (!p)
        return NULL;
    double wall = profiled_seconds(p), covered = 0.0;
    struct op_total *ops = calloc((size_t)p->row_len + 1, sizeof *ops);
    bool *done = calloc((size_t)p->row_len + 1, sizeof *done);
    if (!ops || !done) {
        free(ops);
        free(done);
        return NULL;
    }
    int nops = 0;
    for (int64_t i = 0; i < p->row_len; i++) {
        const struct profile_row *r = &p->rows[i];
        if (r->kernel)
            continue; /* inside its primitive's time */
        int k = 0;
        while (k < nops && !(ops[k].op == r->op && ops[k].phase == r->phase))
            k++;
        if (k == nops)
            ops[nops++] = (struct op_total){.op = r->op, .phase = r->phase};
        ops[k].calls += r->calls;
        ops[k].seconds += r->seconds;
        ops[k].flops += r->flops;
        ops[k].bytes += r->bytes;
        covered += r->seconds;
    }
    qsort(ops, (size_t)nops, sizeof *ops, slowest_first);

    struct ember_text out = {0};
    ember_text_printf(
        &out, "%.3f s on %s; the rows add up to %.3f s (%.1f%%), the rest is host work between them\n", wall,
        ctx->device_name, covered, wall > 0.0 ? 100.0 * covered / wall : 0.0);
    if (p->kernels_timed && p->inner && strcmp(p->inner->name, "ptxsim") == 0)
        ember_text_printf(&out,
                          "primitives are timed on the host, as the simulator ran them; kernels (indented "
                          "under them) by the estimate of their time on the real GPU (docs/benchmarks.md, "
                          "\"The PTX simulator\", says how far off it was)\n");
    else if (p->kernels_timed)
        ember_text_printf(&out,
                          "primitives are timed on the host until the device is done; kernels (indented "
                          "under them) by the device's events\n");
    double peak_gflops = 0.0, peak_gbps = 0.0;
    if (p->inner && p->inner->peak)
        p->inner->peak(p->inner_dev, &peak_gflops, &peak_gbps);
    if (peak_gflops > 0.0 || peak_gbps > 0.0) {
        ember_text_printf(&out, "the device's peak, from its clocks and units:");
        if (peak_gflops > 0.0)
            ember_text_printf(&out, " %.0f GFLOP/s (FP32)", peak_gflops);
        if (peak_gbps > 0.0)
            ember_text_printf(&out, "%s %.0f GB/s", peak_gflops > 0.0 ? "," : "", peak_gbps);
        ember_text_printf(&out, "\n");
    }
    ember_text_printf(&out, "%-34s %8s %10s %10s %7s %8s %8s\n", "op / primitive / kernel", "calls",
                      "total ms", "mean us", "share", "GFLOP/s", "GB/s");
    for (int k = 0; k < nops; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s%s", ops[k].op ? ops[k].op : "(outside any op)",
                 ops[k].phase ? " " : "", ops[k].phase ? ops[k].phase : "");
        row_line(&out, 0, name, ops[k].calls, ops[k].seconds, wall, ops[k].flops, ops[k].bytes);
        op_lines(p, &out, &ops[k], false, NULL, done, wall);
    }
    free(ops);
    free(done);
    return ember_text_take(&out);
}

/* ------------------------------------------------------------ the trace */

/* per track, by start, and an enclosing event before what it encloses:
 * the order the format's viewers nest by */
static int trace_order(const void *a, const void *b)
{
    const struct trace_event *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->seconds > y->seconds ? -1 : x->seconds < y->seconds ? 1 : 0;
}

/* One event as a line of the trace, appended to `line`. */
static void write_event(struct ember_text *line, const struct trace_event *e)
{
    bool op = strcmp(e->category, "op") == 0;
    char label[64]; /* an op span's name, or the op a call belongs to: "conv2d forward" */
    const char *op_name = op ? e->name : e->op;
    snprintf(label, sizeof label, "%s%s%s", op_name ? op_name : "", op_name && e->phase ? " " : "",
             op_name && e->phase ? e->phase : "");
    ember_text_printf(line, ",\n{\"name\": ");
    ember_text_json_string(line, op ? label : e->name);
    ember_text_printf(
        line, ", \"cat\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, \"tid\": 1",
        e->category, e->start * 1e6, e->seconds * 1e6, (int)e->track);
    if (op && e->inputs)
        ember_text_printf(line, ", \"args\": {\"inputs\": %s}", e->inputs);
    if (!op) {
        ember_text_printf(line, ", \"args\": {\"op\": ");
        ember_text_json_string(line, label);
        if (e->inputs)
            ember_text_printf(line, ", \"inputs\": %s", e->inputs);
        if (e->flops > 0.0)
            ember_text_printf(line, ", \"flops\": %.0f", e->flops);
        if (e->bytes > 0.0)
            ember_text_printf(line, ", \"bytes\": %.0f", e->bytes);
        if (e->local) { /* a kernel: its launch, and the call of the primitive it is part of */
            ember_text_printf(line, ", \"grid\": [%zu, %zu, %zu], \"block\": %zu, \"threads\": %zu",
                              e->groups[0], e->groups[1], e->groups[2], e->local,
                              e->groups[0] * e->groups[1] * e->groups[2] * e->local);
            ember_text_printf(line, ", \"primitive\": ");
            ember_text_json_string(line, e->primitive);
            ember_text_printf(line, ", \"primitive_flops\": %.0f, \"primitive_bytes\": %.0f",
                              e->primitive_flops, e->primitive_bytes);
        }
        ember_text_printf(line, "}");
    }
    ember_text_printf(line, "}");
}

/* Writes what `line` holds and empties it, keeping its buffer for the next. */
static void line_write(struct ember_text *line, FILE *f)
{
    if (line->len)
        fwrite(line->s, 1, line->len, f);
    line->len = 0;
}

ember_status ember_profile_write_trace(ember_ctx *ctx, const char *path)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    struct ember_profiler *p = ctx->profiler;
    if (!path)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_profile_write_trace: the path is NULL");
    if (!p || !p->tracing)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "ember_profile_write_trace: nothing was traced (start with "
                          "ember_profile_start(ctx, true))");
    FILE *f = fopen(path, "w");
    if (!f)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot write the trace %s: %s", path, strerror(errno));
    qsort(p->events, (size_t)p->event_len, sizeof *p->events, trace_order);
    /* process 1 is the host (op spans with the calls made inside them),
     * process 2 the device (what it ran), each one track */
    struct ember_text line = {0};
    ember_text_printf(&line, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"device\": ");
    ember_text_json_string(&line, ctx->device_name);
    ember_text_printf(&line, ", \"events_dropped\": %s},\n\"traceEvents\": [\n",
                      p->events_dropped ? "true" : "false");
    ember_text_printf(
        &line,
        "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": {\"name\": "
        "\"host\"}},\n",
        TRACK_HOST);
    ember_text_printf(
        &line, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": {\"name\": ",
        TRACK_DEVICE);
    ember_text_json_string(&line, ctx->device_name);
    ember_text_printf(&line,
                      "}},\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": "
                      "{\"name\": \"ops and calls\"}},\n",
                      TRACK_HOST);
    ember_text_printf(
        &line,
        "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": 1, \"args\": {\"name\": "
        "\"%s\"}}",
        TRACK_DEVICE, p->kernels_timed ? "kernels" : "primitives and the host's work");
    line_write(&line, f);
    for (int64_t i = 0; i < p->event_len && !line.failed; i++) {
        write_event(&line, &p->events[i]);
        line_write(&line, f);
    }
    fputs("\n]}\n", f);
    bool out_of_memory = line.failed;
    free(ember_text_take(&line));
    if (out_of_memory) {
        fclose(f);
        return ember_fail(ctx, EMBER_ERR_NOMEM, "out of host memory writing the trace %s", path);
    }
    if (ferror(f) | (fclose(f) != 0))
        return ember_fail(ctx, EMBER_ERR_IO, "cannot write the trace %s: %s", path, strerror(errno));
    return EMBER_OK;
}
