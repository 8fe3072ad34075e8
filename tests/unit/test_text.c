/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_text.c — text as data, the optimizer's pieces a GPT trains
 * with, and generation.
 *
 *   - text data: the vocabulary (the file's distinct bytes, in order), the
 *     90/10 split, windows whose targets are the next tokens, the same
 *     random windows for the same seed (and after a seek), the validation
 *     windows side by side; and the mistakes a user makes, each with words
 *   - AdamW decays the weights and embeddings and leaves biases and norms
 *   - clipping by the global norm
 *   - generation: with the key/value cache as without it, token for token
 *
 * The device is cpu, or $EMBER_TEST_DEVICE.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test-util.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *dir;

/* a text of `len` bytes from a few words, and its path */
static const char *write_text(const char *name, size_t len)
{
    static const char *const words[] = {"the ", "cat ", "sat ", "on ", "a ", "mat.\n", "Zebras ", "run! "};
    char *text = malloc(len + 1);
    ember_rng rng = ember_rng_seed(3);
    size_t at = 0;
    while (at < len) {
        const char *w = words[ember_rng_u32(&rng) % COUNT(words)];
        for (size_t k = 0; w[k] && at < len; k++)
            text[at++] = w[k];
    }
    const char *path = test_write_file(dir, name, text, len);
    free(text);
    return path;
}

static void test_text_data(ember_ctx *ctx)
{
    const char *path = write_text("words.txt", 20000);
    ember_data_options o = {.kind = "text", .dir = path, .sample_ndim = 1, .sample_shape = {16}};
    ember_dataset *train = ember_dataset_open(ctx, &o, EMBER_TRAIN),
                  *test = ember_dataset_open(ctx, &o, EMBER_TEST);
    CHECK(train && test, "text: %s", ember_last_error(ctx));
    if (!train || !test)
        return;
    /* the distinct bytes of "the cat sat on a mat.\nZebras run! ", sorted */
    const char *want = "\n !.Zabcehmnorstu";
    uint8_t vocab[256];
    int n = ember_dataset_vocab(train, vocab);
    CHECK(n == (int)strlen(want) && memcmp(vocab, want, (size_t)n) == 0 &&
              ember_dataset_classes(train) == n && ember_dataset_vocab(test, NULL) == n,
          "the vocabulary has %d tokens", n);
    CHECK(ember_dataset_count(train) == (18000 - 1) / 16 && ember_dataset_count(test) == (2000 - 1) / 16 &&
              ember_dataset_sample_ndim(train) == 1 && ember_dataset_sample_shape(train)[0] == 16,
          "windows: %lld train, %lld test", (long long)ember_dataset_count(train),
          (long long)ember_dataset_count(test));
    CHECK(strcmp(ember_dataset_class_name(train, 0), "\\n") == 0 &&
              strcmp(ember_dataset_class_name(train, 1), " ") == 0,
          "class names: \"%s\", \"%s\"", ember_dataset_class_name(train, 0),
          ember_dataset_class_name(train, 1));

    /* the validation windows are the last tenth's bytes, side by side, y one place on */
    ember_batcher *b = ember_batcher_new(test, 4, false, 0);
    ember_tensor *x, *y;
    CHECK(b && (ember_batcher_next(b, &x, &y) == EMBER_OK && x), "a validation batch: %s",
          ember_last_error(ctx));
    int32_t xs[4 * 16], ys[4 * 16];
    FILE *f = fopen(path, "rb");
    char raw[2000 + 1];
    CHECK(f && fseek(f, 18000, SEEK_SET) == 0 && fread(raw, 1, 2000, f) == 2000, "reading %s back", path);
    if (f)
        fclose(f);
    if (b && x && ember_tensor_dtype(x) == EMBER_I32 && ember_tensor_ndim(y) == 2 &&
        ember_tensor_dim(y, 1) == 16) {
        CHECK_OK(ctx, ember_tensor_read(x, xs, sizeof xs));
        CHECK_OK(ctx, ember_tensor_read(y, ys, sizeof ys));
        bool same = true;
        for (int i = 0; i < 4 * 16; i++)
            same = same && vocab[xs[i]] == (uint8_t)raw[i] && vocab[ys[i]] == (uint8_t)raw[i + 1];
        CHECK(same, "the validation windows are not the text's last tenth in order");
    } else {
        CHECK(false, "text batches are x (B, T) I32 and y (B, T) I32");
    }
    ember_batcher_free(b);

    /* random windows: each y is x one place on, the same for a seed, again after a seek */
    int32_t first[3][8 * 16], again[8 * 16];
    b = ember_batcher_new(train, 8, true, 7);
    for (int s = 0; b && s < 3; s++) {
        CHECK((ember_batcher_next(b, &x, &y) == EMBER_OK && x), "a training batch: %s",
              ember_last_error(ctx));
        CHECK_OK(ctx, ember_tensor_read(x, first[s], sizeof first[s]));
        int32_t next[8 * 16];
        CHECK_OK(ctx, ember_tensor_read(y, next, sizeof next));
        for (int r = 0; r < 8; r++)
            for (int t = 0; t + 1 < 16; t++)
                CHECK(next[r * 16 + t] == first[s][r * 16 + t + 1],
                      "y is not x one place on (row %d, place %d)", r, t);
    }
    CHECK(memcmp(first[0], first[1], sizeof first[0]) != 0, "two batches of random windows are the same");
    CHECK(b && ember_batcher_seek(b, 0, 2) == EMBER_OK && (ember_batcher_next(b, &x, &y) == EMBER_OK && x) &&
              ember_tensor_read(x, again, sizeof again) == EMBER_OK &&
              memcmp(again, first[2], sizeof again) == 0,
          "after a seek to step 2 the windows differ");
    ember_batcher_free(b);
    ember_dataset_free(train);
    ember_dataset_free(test);
}

static void test_text_mistakes(ember_ctx *ctx)
{
    struct {
        const char *path;
        int64_t context;
        const char *words;
    } cases[] = {
        {dir, 16, "is a folder"},
        {"/nonexistent/text.txt", 16, "/nonexistent/text.txt"},
        {write_text("short.txt", 100), 16, "validation split"},
        {write_text("ok.txt", 2000), 0, "context"},
    };
    for (int i = 0; i < COUNT(cases); i++) {
        ember_data_options o = {
            .kind = "text", .dir = cases[i].path, .sample_ndim = 1, .sample_shape = {cases[i].context}};
        if (cases[i].context == 0) /* a shape of two dimensions */
            o.sample_ndim = 2, o.sample_shape[0] = 16, o.sample_shape[1] = 16;
        ember_clear_error(ctx);
        ember_dataset *ds = ember_dataset_open(ctx, &o, EMBER_TRAIN);
        CHECK(!ds && strstr(ember_last_error(ctx), cases[i].words), "case %d: \"%s\" wanted in: %s", i,
              cases[i].words, ember_last_error(ctx));
        ember_dataset_free(ds);
    }
    ember_clear_error(ctx);
    ember_data_options o = {.kind = "text"};
    CHECK(!ember_dataset_open(ctx, &o, EMBER_TRAIN) &&
              strstr(ember_last_error(ctx), "name the file with ember_data_options.dir"),
          "text without a file: %s", ember_last_error(ctx));
    ember_clear_error(ctx);
    o = (ember_data_options){.kind = "random"};
    ember_dataset *ds = ember_dataset_open(ctx, &o, EMBER_TRAIN);
    CHECK(ds && ember_dataset_vocab(ds, NULL) == 0, "random data has a vocabulary");
    ember_dataset_free(ds);
}

/* AdamW with zero gradients moves nothing but the decay: weights and
 * embeddings shrink by 1 - lr * decay, biases and norms stay */
static void test_adamw(ember_ctx *ctx)
{
    ember_params *p = ember_params_new(ctx);
    const int64_t w_shape[2] = {3, 5}, b_shape[1] = {3};
    ember_tensor *w = ember_params_add(p, "fc.weight", 2, w_shape),
                 *b = ember_params_add(p, "fc.bias", 1, b_shape);
    ember_tensor *w2 = ember_params_add(p, "fc2.weight", 2, w_shape);
    float ones[15];
    for (int i = 0; i < 15; i++)
        ones[i] = 1.0f;
    CHECK_OK(ctx, ember_tensor_write(w, ones, sizeof ones));
    CHECK_OK(ctx, ember_tensor_write(b, ones, 3 * sizeof(float)));
    CHECK_OK(ctx, ember_tensor_write(w2, ones, sizeof ones));
    ember_adam_options o = ember_adam_defaults(0.1f);
    o.weight_decay = 0.5f;
    ember_optim *opt = ember_adamw_new(p, o);
    ember_optim_zero_grad(opt);
    CHECK_OK(ctx, ember_optim_step(opt));
    float got_w[15], got_b[3], got_w2[15];
    CHECK_OK(ctx, ember_tensor_read(w, got_w, sizeof got_w));
    CHECK_OK(ctx, ember_tensor_read(b, got_b, sizeof got_b));
    CHECK_OK(ctx, ember_tensor_read(w2, got_w2, sizeof got_w2));
    CHECK(fabsf(got_w[0] - 0.95f) < 1e-6f && fabsf(got_w2[14] - 0.95f) < 1e-6f && got_b[0] == 1.0f &&
              got_b[2] == 1.0f,
          "AdamW: weight %g and %g (want 0.95), bias %g (want 1)", got_w[0], got_w2[14], got_b[0]);
    ember_optim_free(opt);
    ember_params_free(p);
}

/* the gradients scaled to the norm asked for, and left alone below it */
static void test_clip(ember_ctx *ctx)
{
    ember_params *p = ember_params_new(ctx);
    const int64_t shape[1] = {2};
    ember_tensor *a = ember_params_add(p, "a", 1, shape), *b = ember_params_add(p, "b", 1, shape);
    float ga[2] = {3.0f, 0.0f}, gb[2] = {0.0f, 4.0f}, got[2], norm = 0.0f; /* |g| = 5 */
    CHECK_OK(ctx, ember_tensor_write(ember_tensor_grad(a), ga, sizeof ga));
    CHECK_OK(ctx, ember_tensor_write(ember_tensor_grad(b), gb, sizeof gb));
    CHECK_OK(ctx, ember_clip_grad_norm(p, 10.0f, &norm));
    CHECK_OK(ctx, ember_tensor_read(ember_tensor_grad(a), got, sizeof got));
    CHECK(fabsf(norm - 5.0f) < 1e-5f && got[0] == 3.0f, "below the bound: norm %g, gradient %g", norm,
          got[0]);
    CHECK_OK(ctx, ember_clip_grad_norm(p, 1.0f, &norm));
    CHECK_OK(ctx, ember_tensor_read(ember_tensor_grad(b), got, sizeof got));
    CHECK(fabsf(norm - 5.0f) < 1e-5f && fabsf(got[1] - 0.8f) < 1e-5f, "clipped to 1: norm %g, gradient %g",
          norm, got[1]);
    CHECK(ember_clip_grad_norm(p, 0.0f, NULL) == EMBER_ERR_ARG, "a bound of 0 is accepted");
    ember_params_free(p);
}

/* gpt-tiny trained a few steps on the words: generation with the key/value
 * cache gives the tokens that running the whole window for each gives,
 * at temperature 0; sampling is seeded; top-k 1 is greedy; past the context
 * the cache starts again and goes on */
static void test_generate(ember_ctx *ctx)
{
    ember_data_options o = {
        .kind = "text", .dir = write_text("story.txt", 20000), .sample_ndim = 1, .sample_shape = {128}};
    ember_dataset *train = ember_dataset_open(ctx, &o, EMBER_TRAIN);
    ember_model *m = train ? ember_model_new(ctx, "gpt-tiny", train, 1) : NULL;
    ember_optim *opt = m ? ember_adamw_new(ember_model_params(m), ember_adam_defaults(3e-3f)) : NULL;
    ember_batcher *b = opt ? ember_batcher_new(train, 8, true, 1) : NULL;
    CHECK(b != NULL, "gpt-tiny on text: %s", ember_last_error(ctx));
    ember_tensor *x, *y;
    for (int s = 0; b && s < 8 && (ember_batcher_next(b, &x, &y) == EMBER_OK && x); s++) {
        ember_optim_zero_grad(opt);
        CHECK_OK(ctx, ember_backward(ember_cross_entropy(ember_model_forward(m, x), y)));
        CHECK_OK(ctx, ember_optim_step(opt));
        ember_tape_clear(ctx);
    }
    int32_t prompt[10], cached[100], whole[100], drawn[2][100], top1[100];
    for (int i = 0; i < 10; i++)
        prompt[i] = i % ember_dataset_classes(train);
    ember_generate_options greedy = {0}, no_cache = {.no_cache = true};
    ember_generate_options hot = {.temperature = 1.0f, .seed = 9},
                           one = {.temperature = 1.0f, .top_k = 1, .seed = 9};
    CHECK_OK(ctx, ember_model_generate(m, &greedy, prompt, 10, 100, cached));
    CHECK_OK(ctx, ember_model_generate(m, &no_cache, prompt, 10, 100, whole));
    int same = 0;
    while (same < 100 && cached[same] == whole[same])
        same++;
    CHECK(same == 100, "with the cache and without, the tokens part at token %d of 100", same);
    CHECK_OK(ctx, ember_model_generate(m, &hot, prompt, 10, 100, drawn[0]));
    CHECK_OK(ctx, ember_model_generate(m, &hot, prompt, 10, 100, drawn[1]));
    CHECK(memcmp(drawn[0], drawn[1], sizeof drawn[0]) == 0, "the same seed drew other tokens");
    CHECK(memcmp(drawn[0], cached, sizeof cached) != 0, "at temperature 1 the draws are the greedy tokens");
    CHECK_OK(ctx, ember_model_generate(m, &one, prompt, 10, 100, top1));
    CHECK(memcmp(top1, cached, sizeof top1) == 0, "top-k 1 is not the greedy choice");
    /* 300 tokens: past the context of 128, the cache starts again from the last 64 */
    int32_t *past = malloc(300 * sizeof *past);
    CHECK_OK(ctx, ember_model_generate(m, &greedy, prompt, 10, 300, past));
    CHECK(memcmp(past, cached, sizeof cached) == 0, "the first 100 of 300 tokens are not the 100's");
    free(past);
    /* the mistakes: a model of images, a token outside the vocabulary, next before feeding */
    ember_clear_error(ctx);
    ember_model *cnn = ember_model_build(ctx, "simplecnn", 0, NULL, 10, 0);
    CHECK(!ember_generator_new(cnn, NULL) && strstr(ember_last_error(ctx), "not a model of text"),
          "generating from simplecnn: %s", ember_last_error(ctx));
    ember_model_free(cnn);
    ember_generator *g = ember_generator_new(m, NULL);
    int32_t bad = 999, token;
    CHECK(g && ember_generator_next(g, &token) == EMBER_ERR_ARG && strstr(ember_last_error(ctx), "feed"),
          "next before feeding: %s", ember_last_error(ctx));
    CHECK(g && ember_generator_feed(g, &bad, 1) == EMBER_ERR_ARG && strstr(ember_last_error(ctx), "999"),
          "token 999: %s", ember_last_error(ctx));
    ember_generator_free(g);
    ember_clear_error(ctx);
    ember_batcher_free(b);
    ember_optim_free(opt);
    ember_model_free(m);
    ember_dataset_free(train);
}

int main(void)
{
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx || !(dir = test_tmpdir()))
        return TEST_SKIP;
    test_text_data(ctx);
    test_text_mistakes(ctx);
    test_adamw(ctx);
    test_clip(ctx);
    test_generate(ctx);
    test_cleanup_dir(dir);
    ember_ctx_free(ctx);
    return test_finish("test_text");
}
