/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_onnx_import.c — hostile ONNX graphs written here, byte
 * by byte, that an import must refuse or take without hanging, without
 * work that grows faster than the graph, and without memory that grows
 * faster than the file (docs/reliability.md): a value that is its own
 * Identity, long chains of residual blocks and of Relus, branches that
 * cross, a shape folded from a tower of Concats, packed numbers far past
 * their limits.
 *
 * What ran forever or for minutes before shows here as the test's own
 * time limit (CTest's TIMEOUT), never as a timed assertion; memory is the
 * process's peak, measured in a child of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx-impl.h"
#include "test-util.h"

/* ----------------------------------------------------- writing graphs */

static void node(struct pb_writer *graph, const char *op, const char *in0, const char *in1, const char *out)
{
    struct pb_writer n = {0};
    pb_write_string(&n, 1, in0);
    if (in1)
        pb_write_string(&n, 1, in1);
    pb_write_string(&n, 2, out);
    pb_write_string(&n, 4, op);
    pb_write_message(graph, 1, &n);
    free(n.data);
}

/* a float initializer of dims (rows, cols), every value `v` */
static void initializer(struct pb_writer *graph, const char *name, int64_t rows, int64_t cols, float v)
{
    struct pb_writer t = {0};
    pb_write_varint(&t, 1, (uint64_t)rows);
    if (cols)
        pb_write_varint(&t, 1, (uint64_t)cols);
    pb_write_varint(&t, 2, ONNX_FLOAT);
    pb_write_string(&t, 8, name);
    size_t n = (size_t)(rows * (cols ? cols : 1));
    float *values = malloc(n * sizeof *values);
    for (size_t i = 0; i < n; i++)
        values[i] = v;
    pb_write_bytes(&t, 9, values, n * sizeof *values);
    free(values);
    pb_write_message(graph, 5, &t);
    free(t.data);
}

/* a graph input or output, float (1, features) or with no shape */
static void value(struct pb_writer *graph, int field, const char *name, int64_t features)
{
    struct pb_writer v = {0}, type = {0}, tensor = {0}, shape = {0}, dim = {0};
    pb_write_string(&v, 1, name);
    pb_write_varint(&tensor, 1, ONNX_FLOAT);
    if (features) {
        pb_write_varint(&dim, 1, 1);
        pb_write_message(&shape, 1, &dim);
        pb_write_varint(&dim, 1, (uint64_t)features);
        pb_write_message(&shape, 1, &dim);
        pb_write_message(&tensor, 2, &shape);
    }
    pb_write_message(&type, 1, &tensor);
    pb_write_message(&v, 2, &type);
    pb_write_message(graph, field, &v);
    free(v.data), free(type.data), free(tensor.data), free(shape.data), free(dim.data);
}

/* The ModelProto around a graph (its bytes), which x (1, 4) feeds and
 * whose output is "logits": the graph's nodes end at `last`, and a Gemm of
 * 4 to 2 is added after it. */
static struct pb_writer model(struct pb_writer *graph, const char *last)
{
    struct pb_writer m = {0}, opset = {0};
    node(graph, "Gemm", last, "fc.weight", "logits");
    /* Gemm's B is (K, N) = (4, 2): ember transposes it */
    initializer(graph, "fc.weight", 4, 2, 0.25f);
    value(graph, 11, "x", 4);
    value(graph, 12, "logits", 0);
    pb_write_varint(&m, 1, 8);
    pb_write_string(&opset, 1, "");
    pb_write_varint(&opset, 2, 13);
    pb_write_message(&m, 8, &opset);
    pb_write_message(&m, 7, graph);
    free(opset.data);
    free(graph->data);
    return m;
}

static ember_status import(ember_ctx *ctx, const struct pb_writer *m)
{
    void *ck = NULL;
    size_t size = 0;
    ember_status st = ember_onnx_to_checkpoint_memory(ctx, "hostile.onnx", m->data, m->len, &ck, &size);
    free(ck);
    return st;
}

/* ------------------------------------------------------------ the cases */

/* a = Identity(a), added to the input: is it a constant? Asking followed
 * the Identity forever (the 287-byte file of issue 43 hung every command
 * that read it). */
static void identity_cycle(ember_ctx *ctx)
{
    struct pb_writer g = {0};
    node(&g, "Identity", "a", NULL, "a");
    node(&g, "Add", "a", "x", "y");
    struct pb_writer m = model(&g, "y");
    ember_status st = import(ctx, &m);
    CHECK(st == EMBER_ERR_UNSUPPORTED || st == EMBER_ERR_FORMAT, "a = Identity(a) gave %s",
          ember_status_str(st));
    free(m.data);
    /* the same cycle where a Reshape's shape is folded */
    g = (struct pb_writer){0};
    node(&g, "Identity", "s", NULL, "s");
    node(&g, "Reshape", "x", "s", "y");
    m = model(&g, "y");
    st = import(ctx, &m);
    CHECK(st != EMBER_OK, "a Reshape to s = Identity(s) was taken");
    free(m.data);
}

/* x -> (Relu, Add x) n times: n residual blocks in a row, each found by
 * the steps of its own two branches. Searching each Add's branches back to
 * the input took 21 s for 1,000 blocks and over 60 for 2,000 (n^3). */
static void residual_chain(ember_ctx *ctx, int n)
{
    struct pb_writer g = {0};
    char prev[32] = "x", relu[32], sum[32];
    for (int k = 0; k < n; k++) {
        snprintf(relu, sizeof relu, "r%d", k);
        snprintf(sum, sizeof sum, "h%d", k);
        node(&g, "Relu", prev, NULL, relu);
        node(&g, "Add", relu, prev, sum);
        snprintf(prev, sizeof prev, "%s", sum);
    }
    struct pb_writer m = model(&g, prev);
    void *ck = NULL;
    size_t size = 0;
    CHECK_OK(ctx, ember_onnx_to_checkpoint_memory(ctx, "chain.onnx", m.data, m.len, &ck, &size));
    ember_model *net = ck ? ember_model_from_checkpoint_memory(ctx, ck, size) : NULL;
    const char *text = net ? ember_model_text(net) : "";
    int blocks = 0;
    for (const char *at = text; (at = strstr(at, "residual")); at++)
        blocks++;
    CHECK(blocks == n, "%d residual blocks imported of %d", blocks, n);
    ember_model_free(net);
    free(ck);
    free(m.data);
}

/* x -> Relu n times: every layer unnamed, so each was checked against every
 * name so far (over 20 s for 100,000 before the file was refused). */
static void relu_chain(ember_ctx *ctx, int n)
{
    struct pb_writer g = {0};
    char prev[32] = "x", out[32];
    for (int k = 0; k < n; k++) {
        snprintf(out, sizeof out, "r%d", k);
        node(&g, "Relu", prev, NULL, out);
        snprintf(prev, sizeof prev, "%s", out);
    }
    struct pb_writer m = model(&g, prev);
    ember_status st = import(ctx, &m);
    /* taken, or refused as a model file over its limit: either, at once */
    CHECK(st == EMBER_OK || st == EMBER_ERR_NOMEM || st == EMBER_ERR_FORMAT, "%d Relus: %s", n,
          ember_last_error(ctx));
    free(m.data);
}

/* A chain of n Relus and n Adds of its two ends: each Add's branches
 * split at the chain's start, n steps up, so finding every split is n^2
 * steps; such crossing is no chain of blocks, and is refused within a
 * budget of steps linear in the graph. */
static void crossing_branches(ember_ctx *ctx, int n)
{
    struct pb_writer g = {0};
    char prev[32] = "x", out[32];
    for (int k = 0; k < n; k++) {
        snprintf(out, sizeof out, "r%d", k);
        node(&g, "Relu", prev, NULL, out);
        snprintf(prev, sizeof prev, "%s", out);
    }
    for (int k = 0; k < n; k++) {
        snprintf(out, sizeof out, "a%d", k);
        node(&g, "Add", prev, "r0", out);
    }
    struct pb_writer m = model(&g, "a0");
    ember_status st = import(ctx, &m);
    CHECK(st == EMBER_ERR_UNSUPPORTED, "crossing branches gave %s: %s", ember_status_str(st),
          ember_last_error(ctx));
    free(m.data);
}

/* A Reshape's shape folded from Concats of Concats, each of 16 copies of
 * the one below, down to an empty constant: every fold succeeds with no
 * elements, so folding each input of each Concat again was 16^12 calls. */
static void concat_tower(ember_ctx *ctx)
{
    struct pb_writer g = {0}, t = {0};
    pb_write_varint(&t, 1, 0); /* dims (0): no elements */
    pb_write_varint(&t, 2, ONNX_INT64);
    pb_write_string(&t, 8, "c0");
    pb_write_bytes(&t, 9, "", 0);
    pb_write_message(&g, 5, &t);
    free(t.data);
    for (int level = 1; level <= 12; level++) {
        struct pb_writer n = {0};
        char below[16], out[16];
        snprintf(below, sizeof below, "c%d", level - 1);
        snprintf(out, sizeof out, "c%d", level);
        for (int i = 0; i < 16; i++)
            pb_write_string(&n, 1, below);
        pb_write_string(&n, 2, out);
        pb_write_string(&n, 4, "Concat");
        pb_write_message(&g, 1, &n);
        free(n.data);
    }
    node(&g, "Reshape", "x", "c12", "y");
    struct pb_writer m = model(&g, "y");
    ember_status st = import(ctx, &m);
    CHECK(st == EMBER_ERR_UNSUPPORTED, "a tower of Concats gave %s: %s", ember_status_str(st),
          ember_last_error(ctx));
    free(m.data);
}

static long peak_rss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* A 64 MB file of packed one-byte varints: as a tensor's dims (at most 8),
 * a tensor's int64_data for dims of one element, an attribute's ints (at
 * most 4096). Each is refused by its count before it is decoded: decoding
 * first took 8 bytes of memory for every byte of the file (16 while the
 * array doubled). Measured in a child, whose peak is its own. */
static void packed_numbers(void)
{
    const size_t bytes = 64u << 20;
    for (int where = 0; where < 3; where++) {
        fflush(stderr);
        pid_t child = fork();
        if (child == 0) {
            ember_ctx *ctx = test_ctx("cpu");
            uint8_t *run = malloc(bytes);
            memset(run, 1, bytes);
            struct pb_writer g = {0}, t = {0}, a = {0}, n = {0};
            if (where < 2) {
                if (where == 1)
                    pb_write_varint(&t, 1, 1);
                pb_write_varint(&t, 2, ONNX_INT64);
                pb_write_string(&t, 8, "big");
                pb_write_bytes(&t, where == 0 ? 1 : 7, run, bytes);
                pb_write_message(&g, 5, &t);
            } else {
                pb_write_string(&a, 1, "kernel_shape");
                pb_write_bytes(&a, 8, run, bytes);
                pb_write_string(&n, 1, "x");
                pb_write_string(&n, 2, "y");
                pb_write_string(&n, 4, "MaxPool");
                pb_write_message(&n, 5, &a);
                pb_write_message(&g, 1, &n);
            }
            free(run);
            free(t.data), free(a.data), free(n.data);
            struct pb_writer m = model(&g, where < 2 ? "x" : "y");
            long before = peak_rss_kib();
            ember_status st = import(ctx, &m);
            long grew = peak_rss_kib() - before;
            free(m.data);
            int ok = st == EMBER_ERR_FORMAT && grew < (long)(bytes / 1024 / 4);
            if (!ok)
                fprintf(stderr,
                        "packed numbers (case %d): %s, and the peak grew by %ld KiB reading a %zu KiB file\n",
                        where, ember_last_error(ctx), grew, bytes / 1024);
            ember_ctx_free(ctx);
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        waitpid(child, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "packed numbers, case %d", where);
    }
}

int main(void)
{
    packed_numbers();
    ember_ctx *ctx = test_ctx("cpu");
    if (!ctx)
        return TEST_SKIP;
    identity_cycle(ctx);
    residual_chain(ctx, 2000);
    relu_chain(ctx, ONNX_MAX_NODES - 8);
    crossing_branches(ctx, 20000);
    concat_tower(ctx);
    ember_ctx_free(ctx);
    return test_finish("test_onnx_import");
}
