/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_memory.c — a steady-state training step allocates nothing.
 *
 * Trains each built-in model for a few steps (batch 64, or --batch N) on random data and checks that, after
 * the warm-up steps, the context's counters of device buffers and host
 * allocations stand still: every tensor, record and buffer of a step comes
 * from the pools the earlier steps filled. Also checks that clearing the
 * tape gives every buffer back (bytes in use return to the same level), and
 * that ember_ctx_memory_peak keeps the high-water marks of bytes in use and held, and what selective
 * recomputation keeps and saves, and what it says when its function is misused.
 */
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

static int64_t batch = 64;

/* A GPT as gpt-tiny is, one block of width 32 over windows of 16 bytes:
 * every op of gpt-tiny, small enough for the CUDA test double. */
static const char small_gpt[] = "input 16\n"
                                "wte: embedding 32\n"
                                "wpe: position_embedding\n"
                                "h.0: residual\n    ln_1: layer_norm\n    attn: attention heads=2\nend\n"
                                "h.0: residual\n    ln_2: layer_norm\n    mlp.c_fc: linear 64\n"
                                "    gelu tanh=true\n    mlp.c_proj: linear 32\nend\n"
                                "ln_f: layer_norm\nlm_head: linear classes bias=false\n";

/* trains on random data of `shape`, or on `text` (a file) when not NULL */
static void train_steps(ember_ctx *ctx, const char *model_name, const int64_t *shape, int ndim,
                        const char *text)
{
    ember_data_options data = {
        .kind = text ? "text" : "random", .dir = text, .sample_ndim = ndim, .count = text ? 0 : batch * 8};
    memcpy(data.sample_shape, shape, (size_t)ndim * sizeof *shape);
    ember_dataset *ds = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    ember_model *model = ds ? ember_model_new(ctx, model_name, ds, 1) : NULL;
    ember_optim *opt = model ? ember_adam_new(ember_model_params(model), ember_adam_defaults(1e-3f)) : NULL;
    ember_batcher *batches = opt ? ember_batcher_new(ds, batch, true, 3) : NULL;
    CHECK(batches != NULL, "%s: setting up failed: %s", model_name, ember_last_error(ctx));
    if (!batches)
        goto done;

    ember_memory_stats after_warmup = {0}, now;
    ember_tensor *x, *y;
    for (int step = 0; step < 6 && (ember_batcher_next(batches, &x, &y) == EMBER_OK && x); step++) {
        CHECK_OK(ctx, ember_optim_zero_grad(opt));
        ember_tensor *loss = ember_cross_entropy(ember_model_forward(model, x), y);
        float value;
        CHECK_OK(ctx, ember_backward(loss));
        CHECK_OK(ctx, ember_optim_step(opt));
        CHECK_OK(ctx, ember_tensor_item(loss, &value));
        ember_tape_clear(ctx);
        ember_ctx_memory_stats(ctx, &now);
        if (step == 1)
            after_warmup = now;
        if (step > 1) {
            CHECK(now.device_allocs == after_warmup.device_allocs,
                  "%s: step %d asked the backend for %llu new buffers", model_name, step,
                  (unsigned long long)(now.device_allocs - after_warmup.device_allocs));
            CHECK(now.host_allocs == after_warmup.host_allocs, "%s: step %d made %llu host allocations",
                  model_name, step, (unsigned long long)(now.host_allocs - after_warmup.host_allocs));
            CHECK(now.device_bytes == after_warmup.device_bytes, "%s: device bytes went from %llu to %llu",
                  model_name, (unsigned long long)after_warmup.device_bytes,
                  (unsigned long long)now.device_bytes);
        }
    }
done:
    ember_batcher_free(batches);
    ember_optim_free(opt);
    ember_model_free(model);
    ember_dataset_free(ds);
}

/* ember_ctx_memory_peak: the high-water marks of bytes in use and held, a buffer given back and taken
 * again from the context's cache counted once, and kept after the cache is emptied */
static void check_memory_peak(void)
{
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return;
    uint64_t in_use = 1, held = 1;
    ember_ctx_memory_peak(ctx, &in_use, &held);
    CHECK(in_use == 0 && held == 0, "a new context's peaks are %llu and %llu bytes",
          (unsigned long long)in_use, (unsigned long long)held);
    const int64_t shape[1] = {1 << 20}; /* 4 MiB */
    ember_tensor *a = ember_tensor_new(ctx, EMBER_F32, 1, shape);
    ember_tensor *b = ember_tensor_new(ctx, EMBER_F32, 1, shape);
    CHECK(a && b, "two 4 MiB tensors: %s", ember_last_error(ctx));
    ember_tensor_free(a);
    ember_tensor_free(b);
    a = ember_tensor_new(ctx, EMBER_F32, 1, shape); /* from the cache */
    ember_tensor_free(a);
    ember_ctx_release_cached(ctx);
    ember_ctx_memory_peak(ctx, &in_use, &held);
    CHECK(in_use >= (8u << 20) && in_use < (9u << 20),
          "two 4 MiB tensors at once: a peak in use of %llu bytes", (unsigned long long)in_use);
    CHECK(held == in_use, "held %llu bytes at the most, in use %llu: the third came from the cache",
          (unsigned long long)held, (unsigned long long)in_use);
    ember_ctx_memory_peak(ctx, NULL, NULL);
    ember_ctx_memory_peak(NULL, &in_use, &held);
    CHECK(in_use == 0 && held == 0, "no context: peaks of %llu and %llu", (unsigned long long)in_use,
          (unsigned long long)held);
    ember_ctx_free(ctx);
}

/* Recomputation, three ways, of eight blocks tanh(h) sigmoid(h), h = x w_i^T, of width 64 over 256 rows:
 * ember_recompute multiplies again in the backward pass (16 products forward), ember_recompute_selective
 * takes the products' outputs its first run kept (8), and keeping everything does neither (8); all three give
 * the same gradients bit for bit, and the peaks of memory in use rise from the first to the last (a block's
 * input; its input and product; all four of its tensors). */
enum { BLOCKS = 8, ROWS = 256, WIDTH = 64 };
static ember_tensor *gated_block(void *w, ember_tensor *x)
{
    ember_tensor *h = ember_linear(x, w, NULL);
    return ember_mul(ember_tanh(h), ember_sigmoid(h));
}
/* the gradients of x and of every w, flattened into grads; the products' calls and the peak in use */
static void recompute_step(int how, float *grads, int64_t *products, uint64_t *peak)
{
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return;
    const int64_t xs[2] = {ROWS, WIDTH}, ws[2] = {WIDTH, WIDTH};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 2, xs), *w[BLOCKS];
    float *values = malloc(ROWS * WIDTH * sizeof *values);
    for (int64_t i = 0; values && i < ROWS * WIDTH; i++)
        values[i] = (float)((i * 7919) % 2001 - 1000) / 4000.0f; /* the same, deterministic, every run */
    CHECK(x && values && ember_tensor_write(x, values, ROWS * WIDTH * sizeof *values) == EMBER_OK,
          "recompute: the input: %s", ember_last_error(ctx));
    ember_tensor_set_requires_grad(x, true);
    for (int b = 0; b < BLOCKS; b++) {
        w[b] = ember_tensor_new(ctx, EMBER_F32, 2, ws);
        CHECK(w[b] && ember_tensor_write(w[b], values + b * 1000, WIDTH * WIDTH * sizeof *values) == EMBER_OK,
              "recompute: a weight: %s", ember_last_error(ctx));
        ember_tensor_set_requires_grad(w[b], true);
    }
    ember_profile_start(ctx, false);
    ember_tensor *h = x;
    for (int b = 0; b < BLOCKS; b++)
        h = how == 0   ? ember_recompute(h, gated_block, w[b])
            : how == 1 ? ember_recompute_selective(h, gated_block, w[b])
                       : gated_block(w[b], h);
    ember_tensor *loss = ember_mean(ember_mean(ember_mul(h, h), 1, false), 0, false);
    CHECK(loss && ember_backward(loss) == EMBER_OK, "recompute %d: the step: %s", how, ember_last_error(ctx));
    ember_profile_stop(ctx);
    char *table = ember_profile_table(ctx), *row = table ? strstr(table, "\nlinear forward") : NULL;
    *products = row ? atoll(row + strlen("\nlinear forward")) : -1;
    ember_free(table);
    ember_ctx_memory_peak(ctx, peak, NULL);
    ember_tensor *each[1 + BLOCKS] = {x};
    memcpy(each + 1, w, sizeof w);
    int64_t at = 0;
    for (int k = 0; k < 1 + BLOCKS; k++) {
        ember_tensor *g = ember_tensor_grad(each[k]);
        int64_t n = ember_tensor_numel(each[k]);
        CHECK(g && ember_tensor_read(g, grads + at, (size_t)n * sizeof *grads) == EMBER_OK,
              "recompute %d: gradient %d: %s", how, k, ember_last_error(ctx));
        at += n;
    }
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    for (int b = 0; b < BLOCKS; b++)
        ember_tensor_free(w[b]);
    free(values);
    ember_ctx_free(ctx);
}

static void check_recompute_selective(void)
{
    enum { GRADS = ROWS * WIDTH + BLOCKS * WIDTH * WIDTH };
    static const char *const how[3] = {"ember_recompute", "ember_recompute_selective", "nothing recomputed"};
    static const int64_t expected[3] = {2 * BLOCKS, BLOCKS, BLOCKS};
    float *grads[3];
    int64_t products[3] = {-1, -1, -1};
    uint64_t peak[3] = {0};
    for (int k = 0; k < 3; k++)
        if ((grads[k] = calloc(GRADS, sizeof *grads[k])) != NULL)
            recompute_step(k, grads[k], &products[k], &peak[k]);
    for (int k = 0; k < 3; k++) {
        CHECK(products[k] == expected[k], "%s: %lld products in the forward passes, not %lld", how[k],
              (long long)products[k], (long long)expected[k]);
        CHECK(grads[k] && grads[0] && memcmp(grads[k], grads[0], GRADS * sizeof *grads[k]) == 0,
              "%s: gradients other than ember_recompute's", how[k]);
    }
    CHECK(peak[0] < peak[1] && peak[1] < peak[2], "peaks in use of %llu, %llu and %llu bytes: not rising",
          (unsigned long long)peak[0], (unsigned long long)peak[1], (unsigned long long)peak[2]);
    for (int k = 0; k < 3; k++)
        free(grads[k]);
}

/* A function whose product changes between its two runs, or that recomputes inside itself: the backward pass
 * fails and says why (and, under the sanitizers, leaks nothing) */
static int runs;
static ember_tensor *changing_block(void *w, ember_tensor *x)
{
    ember_tensor **ws = w;
    return ember_tanh(ember_linear(x, ws[runs++ % 2], NULL));
}
static ember_tensor *nesting_block(void *w, ember_tensor *x) { return ember_recompute(x, gated_block, w); }

static void check_recompute_misuse(void)
{
    static const char *const want[2] = {"products changed between its two runs",
                                        "inside a function that ember_recompute_selective runs"};
    for (int k = 0; k < 2; k++) {
        ember_ctx *ctx = test_ctx(NULL);
        if (!ctx)
            return;
        const int64_t xs[2] = {8, WIDTH}, w0s[2] = {WIDTH, WIDTH}, w1s[2] = {WIDTH / 2, WIDTH};
        ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 2, xs);
        ember_tensor *w[2] = {ember_tensor_new(ctx, EMBER_F32, 2, w0s),
                              ember_tensor_new(ctx, EMBER_F32, 2, w1s)};
        static float values[WIDTH * WIDTH];
        for (int i = 0; i < WIDTH * WIDTH; i++)
            values[i] = 0.01f * (float)(i % 7);
        CHECK(x && w[0] && w[1] && ember_tensor_write(x, values, 8 * WIDTH * sizeof *values) == EMBER_OK &&
                  ember_tensor_write(w[0], values, WIDTH * WIDTH * sizeof *values) == EMBER_OK &&
                  ember_tensor_write(w[1], values, WIDTH * WIDTH / 2 * sizeof *values) == EMBER_OK,
              "recompute misuse: the set-up: %s", ember_last_error(ctx));
        ember_tensor_set_requires_grad(x, true);
        runs = 0;
        ember_tensor *h = k == 0 ? ember_recompute_selective(x, changing_block, w)
                                 : ember_recompute_selective(x, nesting_block, w[0]);
        ember_tensor *loss = ember_mean(ember_mean(h, 1, false), 0, false);
        ember_status st = loss ? ember_backward(loss) : EMBER_ERR_ARG;
        CHECK(st != EMBER_OK && strstr(ember_last_error(ctx), want[k]), "recompute misuse %d: %s, %s", k,
              ember_status_str(st), ember_last_error(ctx));
        ember_tape_clear(ctx);
        ember_tensor_free(x);
        ember_tensor_free(w[0]);
        ember_tensor_free(w[1]);
        ember_ctx_free(ctx);
    }
}

int main(int argc, char **argv)
{
    /* --batch N: smaller steps where kernels run slowly (the CUDA test double) */
    if (argc == 3 && strcmp(argv[1], "--batch") == 0)
        batch = atoll(argv[2]);
    if (batch < 1 || (argc != 1 && argc != 3)) {
        fprintf(stderr, "usage: test_memory [--batch N]\n");
        return 2;
    }
    check_memory_peak();
    check_recompute_selective();
    check_recompute_misuse();
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return TEST_SKIP;
    const int64_t image[3] = {1, 28, 28}, features[1] = {100}, window[1] = {16};
    for (const char *const *name = ember_model_names(); *name; name++)
        if (strcmp(*name, "gpt-tiny") != 0) /* a model of text: the small GPT below */
            train_steps(ctx, *name, image, 3,
                        NULL); /* every built-in model, BatchNorm and Dropout included */
    train_steps(ctx, "linear", features, 1, NULL);
    /* text: a small GPT, AdamW, its embedding's scatter-add and attention's scores */
    const char *dir = test_tmpdir();
    size_t len = (size_t)(160 * batch + 16); /* 8 whole batches of windows in its first nine tenths */
    char *text = malloc(len);
    for (size_t i = 0; text && i < len; i++)
        text[i] = "the cat sat on the mat. "[i % 24];
    const char *model =
        dir && text ? test_write_file(dir, "small-gpt.model", small_gpt, strlen(small_gpt)) : NULL;
    const char *corpus = model ? test_write_file(dir, "text.txt", text, len) : NULL;
    if (corpus)
        train_steps(ctx, model, window, 1, corpus);
    free(text);
    test_cleanup_dir(dir);
    ember_ctx_free(ctx);
    return test_finish("test_memory");
}
