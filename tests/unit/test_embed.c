/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_embed.c — the library as a host program meets it: inference
 * from its own buffers, checkpoints in memory, data sets over its own
 * arrays, and no surprises (the tape, threads, OpenBLAS's setting, memory
 * handed back).
 *
 * "Allocates nothing" is checked two ways: the context's own counters, and
 * (outside the sanitizers, which own malloc) every malloc, calloc and
 * realloc in the process, counted by wrappers defined here.
 */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-util.h"

/* ------------------------------------------------------- counting malloc */

#if defined(__SANITIZE_ADDRESS__)
#define COUNT_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_MALLOC 0
#endif
#endif
#ifndef COUNT_MALLOC
#define COUNT_MALLOC 1
#endif

static long mallocs, blas_mallocs;

#if COUNT_MALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

/* OpenBLAS's own: its small-matrix sgemm kernels for AVX-512 take a
 * scratch buffer from malloc on every call. That is OpenBLAS's business
 * and is counted apart; everything else, ember's and the C library's on
 * ember's behalf, is counted as ember's. */
static void count(void *caller)
{
    static _Thread_local bool inside;
    Dl_info info;
    bool blas = false;
    if (!inside) {
        inside = true;
        blas = dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "openblas");
        inside = false;
    }
    __atomic_add_fetch(blas ? &blas_mallocs : &mallocs, 1, __ATOMIC_RELAXED);
}
void *malloc(size_t n)
{
    count(__builtin_return_address(0));
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    count(__builtin_return_address(0));
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    count(__builtin_return_address(0));
    return __libc_realloc(p, n);
}
#endif

static long malloc_count(void) { return __atomic_load_n(&mallocs, __ATOMIC_RELAXED); }

/* ---------------------------------------------------------------- helpers */

static void fill_input(float *x, int64_t n, uint64_t seed)
{
    ember_rng rng = ember_rng_seed(seed);
    for (int64_t i = 0; i < n; i++)
        x[i] = ember_rng_uniform(&rng, 0.0f, 1.0f);
}

static float max_diff(const float *a, const float *b, int64_t n)
{
    float worst = 0.0f;
    for (int64_t i = 0; i < n; i++)
        worst = fmaxf(worst, fabsf(a[i] - b[i]));
    return worst;
}

/* The threads ember started in this process: the ones it named "ember-"
 * (ember_name_this_thread). Counting every thread would count the host's
 * too, and under qemu-user (scripts/arm-test.sh) the emulator's own, which
 * come and go as they please. */
static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            n += fgets(name, sizeof name, f) && strncmp(name, "ember-", 6) == 0;
            fclose(f);
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* count_threads once it is `want`, or after two seconds: a thread joined
 * leaves /proc a moment later under qemu-user, whose host thread outlives
 * the guest's join */
static int threads_settled(int want)
{
    int n = count_threads();
    for (int tries = 0; n != want && tries < 40; tries++) {
        usleep(50 * 1000);
        n = count_threads();
    }
    return n;
}

/* ------------------------------------------------------------- inference */

/* ResNet-8 (BatchNorm and residual blocks) on 3x8x8 samples: predict
 * gives the logits the forward pass gives in evaluation mode, at any n, and
 * leaves nothing behind. */
static void test_predict(void)
{
    long counted = malloc_count();
    ember_ctx *ctx = test_ctx("cpu");
    if (!ctx)
        return;
    /* the counter counts: opening a context allocates */
    CHECK(!COUNT_MALLOC || malloc_count() > counted, "the malloc counter saw nothing of ember_ctx_new");
    const int64_t shape[3] = {3, 8, 8};
    ember_model *m = ember_model_build(ctx, "resnet8", 3, shape, 10, 7);
    CHECK(m, "%s", ember_last_error(ctx));
    if (!m) {
        ember_ctx_free(ctx);
        return;
    }
    enum { N = 6, SAMPLE = 3 * 8 * 8 };
    float *in = malloc(N * SAMPLE * sizeof *in), logits[N * 10], reference[N * 10], probs[N * 10];
    fill_input(in, N * SAMPLE, 1);

    /* the reference: the forward pass, evaluation mode, recording off */
    ember_model_set_training(m, false);
    bool was = ember_set_grad_enabled(ctx, false);
    const int64_t xshape[4] = {N, 3, 8, 8};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 4, xshape);
    CHECK_OK(ctx, ember_tensor_write(x, in, sizeof(float) * N * SAMPLE));
    ember_tape_mark before = ember_tape_mark_now(ctx);
    ember_tensor *y = ember_model_forward(m, x);
    ember_tape_mark after = ember_tape_mark_now(ctx);
    /* recording off: the logits alone stay on the tape */
    CHECK(after.tensors - before.tensors == 1, "a forward with recording off left %lld tensors on the tape",
          (long long)(after.tensors - before.tensors));
    CHECK_OK(ctx, ember_tensor_read(y, reference, sizeof reference));
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    ember_set_grad_enabled(ctx, was);
    ember_model_set_training(m, true);

    CHECK_OK(ctx, ember_model_predict(m, in, N, logits));
    CHECK(max_diff(logits, reference, N * 10) == 0.0f, "predict differs from the forward pass by %g",
          (double)max_diff(logits, reference, N * 10));
    CHECK(ember_model_training(m), "predict left the model in evaluation mode");
    CHECK(ember_grad_enabled(ctx), "predict left recording off");
    /* fewer samples: the same rows */
    float few[3 * 10];
    CHECK_OK(ctx, ember_model_predict(m, in + SAMPLE, 3, few));
    CHECK(max_diff(few, reference + 10, 30) < 1e-5f, "3 samples differ from the same rows of 6 by %g",
          (double)max_diff(few, reference + 10, 30));
    /* probabilities: each row sums to 1 and ranks as the logits do */
    CHECK_OK(ctx, ember_model_predict_probs(m, in, N, probs));
    for (int r = 0; r < N; r++) {
        double sum = 0.0;
        int best_p = 0, best_l = 0;
        for (int k = 0; k < 10; k++) {
            sum += probs[r * 10 + k];
            best_p = probs[r * 10 + k] > probs[r * 10 + best_p] ? k : best_p;
            best_l = logits[r * 10 + k] > logits[r * 10 + best_l] ? k : best_l;
        }
        CHECK(fabs(sum - 1.0) < 1e-5, "row %d of the probabilities sums to %g", r, sum);
        CHECK(best_p == best_l, "row %d: probabilities pick %d, logits %d", r, best_p, best_l);
    }

    /* steady state: no allocation of any kind, nothing on the tape */
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ctx, ember_model_predict(m, in, N, logits));
        CHECK_OK(ctx, ember_model_predict(m, in, 1, logits));
    }
    ember_memory_stats s0, s1;
    ember_ctx_memory_stats(ctx, &s0);
    ember_tape_mark t0 = ember_tape_mark_now(ctx);
    long m0 = malloc_count(), b0 = __atomic_load_n(&blas_mallocs, __ATOMIC_RELAXED);
    for (int i = 0; i < 200; i++) {
        ember_model_predict(m, in, N, logits);
        ember_model_predict(m, in, 1, logits);
    }
    long m1 = malloc_count();
    ember_tape_mark t1 = ember_tape_mark_now(ctx);
    ember_ctx_memory_stats(ctx, &s1);
    CHECK(s1.device_allocs == s0.device_allocs && s1.host_allocs == s0.host_allocs &&
              s1.device_bytes == s0.device_bytes,
          "400 predictions allocated: device %llu -> %llu, host %llu -> %llu",
          (unsigned long long)s0.device_allocs, (unsigned long long)s1.device_allocs,
          (unsigned long long)s0.host_allocs, (unsigned long long)s1.host_allocs);
    CHECK(m1 == m0, "400 predictions called malloc %ld times", m1 - m0);
    CHECK(t1.tensors == t0.tensors && t1.nodes == t0.nodes, "predictions left %lld tensors on the tape",
          (long long)(t1.tensors - t0.tensors));
    if (COUNT_MALLOC)
        printf(
            "predict: 400 calls, %ld mallocs (and %ld in OpenBLAS's small-matrix kernels), %llu new device "
            "buffers\n",
            m1 - m0, __atomic_load_n(&blas_mallocs, __ATOMIC_RELAXED) - b0,
            (unsigned long long)(s1.device_allocs - s0.device_allocs));

    /* mistakes are statuses with a message */
    CHECK(ember_model_predict(m, NULL, 1, logits) == EMBER_ERR_ARG, "NULL input accepted");
    CHECK(strstr(ember_last_error(ctx), "NULL input"), "message: %s", ember_last_error(ctx));
    CHECK(ember_model_predict(m, in, 0, logits) == EMBER_ERR_ARG, "n = 0 accepted");
    CHECK(ember_model_predict(NULL, in, 1, logits) == EMBER_ERR_ARG, "NULL model accepted");
    ember_clear_error(ctx);

    /* handing the cache back leaves only what is alive */
    ember_ctx_memory_stats(ctx, &s0);
    ember_ctx_release_cached(ctx);
    ember_ctx_memory_stats(ctx, &s1);
    CHECK(s1.device_bytes < s0.device_bytes, "release_cached kept %llu of %llu bytes",
          (unsigned long long)s1.device_bytes, (unsigned long long)s0.device_bytes);
    CHECK_OK(ctx, ember_model_predict(m, in, N, logits));
    CHECK(max_diff(logits, reference, N * 10) == 0.0f, "predict after release_cached differs");

    free(in);
    ember_model_free(m);
    ember_ctx_free(ctx);
}

/* ----------------------------------------------------------- many models */

/* A long-lived program that builds networks of many sizes in one context:
 * the device buffers the context holds (in use and cached for reuse) stay
 * within a bound of the largest network, instead of keeping a buffer of
 * every size ever used (the model-file fuzzer passed 2.5 GB that way). */
static void test_many_models(void)
{
    ember_ctx *ctx = ember_ctx_new();
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "cpu"));
    const int64_t shape[1] = {256};
    uint64_t most = 0;
    char text[128];
    for (int width = 64; width <= 1024; width += 8) { /* 121 networks, none the same size */
        snprintf(text, sizeof text, "fc: linear %d\nout: linear classes\n", width);
        ember_model *m = ember_model_parse(ctx, "many", text, 1, shape, 10, 0);
        CHECK(m, "%s", ember_last_error(ctx));
        ember_memory_stats s;
        ember_ctx_memory_stats(ctx, &s);
        if (s.device_bytes > most)
            most = s.device_bytes;
        ember_model_free(m);
    }
    /* the largest: (256 + 1) * 1024 + (1024 + 1) * 10 floats, with its gradients */
    uint64_t largest = 2 * 4 * ((256 + 1) * 1024 + (1024 + 1) * 10);
    CHECK(most < 4 * largest + ((uint64_t)20 << 20),
          "building 121 networks held up to %.1f MiB of buffers; the largest needs %.1f MiB",
          (double)most / 1048576.0, (double)largest / 1048576.0);
    printf("many models: at most %.1f MiB held while building 121 networks (the largest: %.1f MiB)\n",
           (double)most / 1048576.0, (double)largest / 1048576.0);

    /* and one network asked about batches of every size from 1 to 256:
     * every size's activations are cached for reuse, up to the bound */
    snprintf(text, sizeof text, "fc: linear 1024\nout: linear classes\n");
    ember_model *m = ember_model_parse(ctx, "many", text, 1, shape, 10, 0);
    float *in = calloc(256 * 256, sizeof *in), *logits = malloc(256 * 10 * sizeof *logits);
    CHECK(m && in && logits, "%s", ember_last_error(ctx));
    most = 0;
    for (int n = 1; m && in && logits && n <= 256; n++) {
        CHECK_OK(ctx, ember_model_predict(m, in, n, logits));
        ember_memory_stats s;
        ember_ctx_memory_stats(ctx, &s);
        if (s.device_bytes > most)
            most = s.device_bytes;
    }
    /* the network and its gradients, and one pass of 256: input, hidden, logits */
    uint64_t need = 2 * 4 * ((256 + 1) * 1024 + (1024 + 1) * 10) + 4 * 256 * (256 + 1024 + 10);
    /* what is in use, plus a cache of at most twice the peak in use and
     * 16 MiB (core/ctx-impl.h); each buffer rounded up by at most a
     * sixteenth, the small ones (under 64 KiB) by under 256 bytes each */
    uint64_t bound = 3 * (need + need / 16 + ((uint64_t)1 << 20)) + ((uint64_t)16 << 20);
    CHECK(most < bound, "batches of 256 sizes held up to %.1f MiB; the largest needs %.1f",
          (double)most / 1048576.0, (double)need / 1048576.0);
    printf("many batch sizes: at most %.1f MiB held (the network and its largest pass: %.1f MiB)\n",
           (double)most / 1048576.0, (double)need / 1048576.0);
    free(in);
    free(logits);
    ember_model_free(m);
    ember_ctx_free(ctx);
}

/* ------------------------------------------------------------ checkpoints */

static void test_checkpoints_in_memory(void)
{
    ember_ctx *ctx = test_ctx("cpu");
    if (!ctx)
        return;
    const char *dir = test_tmpdir();
    const int64_t shape[3] = {1, 28, 28};
    ember_model *a = ember_model_build(ctx, "lenet5", 3, shape, 10, 1);
    ember_model *b = ember_model_build(ctx, "lenet5", 3, shape, 10, 2);
    CHECK(a && b, "%s", ember_last_error(ctx));
    if (!a || !b)
        goto done;
    const char *meta[] = {"ember.class_names",
                          "[\"zero\", \"one\", \"t\\u00e9\", \"3\", \"4\", \"5\", \"6\", "
                          "\"7\", \"8\", \"nine\"]",
                          "mine", "kept", NULL};
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(ctx, ember_model_save_memory(a, meta, &bytes, &size));
    /* the same bytes as the file */
    char path[512];
    snprintf(path, sizeof path, "%s/a.safetensors", dir);
    CHECK_OK(ctx, ember_model_save(a, path, meta));
    FILE *f = fopen(path, "rb");
    char *file = malloc(size + 1);
    size_t got = f ? fread(file, 1, size + 1, f) : 0;
    if (f)
        fclose(f);
    CHECK(got == size && bytes && memcmp(file, bytes, size) == 0, "memory (%zu bytes) and file (%zu) differ",
          size, got);
    free(file);

    /* metadata from memory */
    ember_checkpoint *ck = ember_checkpoint_open_memory(ctx, bytes, size);
    CHECK(ck && ember_checkpoint_meta(ck, "mine") && strcmp(ember_checkpoint_meta(ck, "mine"), "kept") == 0,
          "metadata: %s", ck ? "no \"mine\"" : ember_last_error(ctx));
    CHECK(ck && ember_checkpoint_meta(ck, "ember.model") &&
              strcmp(ember_checkpoint_meta(ck, "ember.model"), "lenet5") == 0,
          "ember.model is missing");
    /* the class names ember train records, read for the caller */
    CHECK(ck && ember_checkpoint_class_name(ck, 1) &&
              strcmp(ember_checkpoint_class_name(ck, 1), "one") == 0 &&
              strcmp(ember_checkpoint_class_name(ck, 2), "t\xc3\xa9") == 0 &&
              strcmp(ember_checkpoint_class_name(ck, 9), "nine") == 0,
          "class names from the checkpoint");
    CHECK(!ember_checkpoint_class_name(ck, 10) && !ember_checkpoint_class_name(ck, -1),
          "a class out of range");
    ember_checkpoint_close(ck);
    /* names that are not a JSON array of strings are none, and no error */
    const char *bad_meta[] = {"ember.class_names", "[\"a\", 2]", NULL};
    void *bad = NULL;
    size_t bad_size = 0;
    ember_clear_error(ctx);
    CHECK_OK(ctx, ember_model_save_memory(a, bad_meta, &bad, &bad_size));
    ck = ember_checkpoint_open_memory(ctx, bad, bad_size);
    CHECK(ck && !ember_checkpoint_class_name(ck, 0) && ember_last_status(ctx) == EMBER_OK,
          "malformed class names: %s", ember_last_error(ctx));
    ember_checkpoint_close(ck);
    ember_free(bad);

    /* loading into another model, and building one from the bytes */
    enum { SAMPLE = 28 * 28 };
    float in[2 * SAMPLE], la[20], lb[20], lc[20];
    fill_input(in, 2 * SAMPLE, 3);
    CHECK_OK(ctx, ember_model_predict(a, in, 2, la));
    CHECK_OK(ctx, ember_model_predict(b, in, 2, lb));
    CHECK(max_diff(la, lb, 20) > 0.0f, "two seeds gave the same model");
    CHECK_OK(ctx, ember_model_load_memory(b, bytes, size));
    CHECK_OK(ctx, ember_model_predict(b, in, 2, lb));
    CHECK(max_diff(la, lb, 20) == 0.0f, "loaded from memory, the model differs by %g",
          (double)max_diff(la, lb, 20));
    ember_model *c = ember_model_from_checkpoint_memory(ctx, bytes, size);
    CHECK(c, "from memory: %s", ember_last_error(ctx));
    if (c) {
        CHECK_OK(ctx, ember_model_predict(c, in, 2, lc));
        CHECK(max_diff(la, lc, 20) == 0.0f, "built from memory, the model differs");
        ember_model_free(c);
    }

    /* a damaged buffer is a format error and changes nothing */
    ember_model *d = ember_model_build(ctx, "lenet5", 3, shape, 10, 2);
    float ld[20], ld2[20];
    CHECK_OK(ctx, ember_model_predict(d, in, 2, ld));
    for (size_t cut = 0; cut < size; cut += size / 7 + 1) {
        ember_status st = ember_model_load_memory(d, bytes, cut);
        CHECK(st == EMBER_ERR_FORMAT, "%zu of %zu bytes: %s", cut, size, ember_status_str(st));
        CHECK(strstr(ember_last_error(ctx), "in memory"), "the message says where: %s",
              ember_last_error(ctx));
        CHECK(!ember_model_from_checkpoint_memory(ctx, bytes, cut), "built a model from %zu bytes", cut);
    }
    CHECK(ember_model_load_memory(d, NULL, 100) == EMBER_ERR_ARG, "NULL data accepted");
    CHECK_OK(ctx, ember_model_predict(d, in, 2, ld2));
    CHECK(max_diff(ld, ld2, 20) == 0.0f, "a failed load changed the model");
    ember_clear_error(ctx);
    ember_model_free(d);
    ember_free(bytes);
done:
    ember_model_free(a);
    ember_model_free(b);
    ember_ctx_free(ctx);
    test_cleanup_dir(dir);
}

/* ------------------------------------------------------------ array data */

static void test_arrays(void)
{
    ember_ctx *ctx = test_ctx("cpu");
    if (!ctx)
        return;
    enum { COUNT = 10, FEATURES = 4 };
    float images[COUNT * FEATURES];
    uint8_t bytes[COUNT * FEATURES];
    int32_t labels[COUNT];
    for (int i = 0; i < COUNT; i++) {
        labels[i] = i % 3;
        for (int k = 0; k < FEATURES; k++) {
            images[i * FEATURES + k] =
                (float)(i * FEATURES + k) * 0.25f - 3.0f; /* negative too: used as they are */
            bytes[i * FEATURES + k] = (uint8_t)(i * 25 + k);
        }
    }
    const char *names[] = {"red", "green", "blue"};
    /* clang-format off */
    ember_array_data arrays = {.count = COUNT, .sample_ndim = 1, .sample_shape = {FEATURES}, .images = images,
                               .labels = labels, .classes = 3, .class_names = names, .name = "colours"};
    /* clang-format on */
    ember_dataset *ds = ember_dataset_from_arrays(ctx, &arrays);
    CHECK(ds, "%s", ember_last_error(ctx));
    if (ds) {
        CHECK(ember_dataset_count(ds) == COUNT && ember_dataset_classes(ds) == 3, "count or classes");
        CHECK(strcmp(ember_dataset_class_name(ds, 2), "blue") == 0, "class names");
        CHECK(strstr(ember_dataset_describe(ds), "colours (10 x 4, 3 classes"), "describe: %s",
              ember_dataset_describe(ds));
        /* in order, the batches are the arrays, floats untouched */
        ember_batcher *b = ember_batcher_new(ds, 4, false, 0);
        ember_tensor *x, *y;
        float xs[4 * FEATURES];
        int32_t ys[4];
        int64_t seen = 0;
        while (b && (ember_batcher_next(b, &x, &y) == EMBER_OK && x)) {
            int64_t rows = ember_tensor_dim(x, 0);
            CHECK_OK(ctx, ember_tensor_read(x, xs, (size_t)(rows * FEATURES) * sizeof *xs));
            CHECK_OK(ctx, ember_tensor_read(y, ys, (size_t)rows * sizeof *ys));
            CHECK(memcmp(xs, images + seen * FEATURES, (size_t)(rows * FEATURES) * sizeof *xs) == 0,
                  "batch at %lld differs from the caller's floats", (long long)seen);
            CHECK(memcmp(ys, labels + seen, (size_t)rows * sizeof *ys) == 0, "labels at %lld",
                  (long long)seen);
            seen += rows;
        }
        CHECK(seen == COUNT, "the batcher gave %lld samples", (long long)seen);
        ember_batcher_free(b);

        /* evaluation: a model of the right shape runs over it */
        const int64_t shape[1] = {FEATURES};
        ember_model *m = ember_model_build(ctx, "linear", 1, shape, 3, 0);
        double accuracy = -1.0, loss = -1.0;
        CHECK(m, "%s", ember_last_error(ctx));
        CHECK_OK(ctx, ember_model_evaluate(m, ds, 4, &accuracy, &loss));
        CHECK(accuracy >= 0.0 && accuracy <= 1.0 && loss > 0.0, "accuracy %g, loss %g", accuracy, loss);
        ember_model_free(m);
        ember_dataset_free(ds);
    }

    /* bytes are scaled as ember's own data sets are */
    arrays.images = NULL;
    arrays.image_bytes = bytes;
    ds = ember_dataset_from_arrays(ctx, &arrays);
    ember_batcher *b = ember_batcher_new(ds, COUNT, false, 0);
    ember_tensor *x, *y;
    float xs[COUNT * FEATURES];
    if (b && (ember_batcher_next(b, &x, &y) == EMBER_OK && x)) {
        CHECK_OK(ctx, ember_tensor_read(x, xs, sizeof xs));
        CHECK(xs[5] == (float)bytes[5] / 255.0f, "byte %d became %g", bytes[5], (double)xs[5]);
    } else {
        CHECK(false, "no batch from bytes: %s", ember_last_error(ctx));
    }
    ember_batcher_free(b);
    ember_dataset_free(ds);

    /* mistakes, each named */
    labels[7] = 3;
    CHECK(!ember_dataset_from_arrays(ctx, &arrays), "label 3 of 3 classes accepted");
    CHECK(strstr(ember_last_error(ctx), "label 7 is 3"), "message: %s", ember_last_error(ctx));
    labels[7] = 1;
    arrays.images = images;
    CHECK(!ember_dataset_from_arrays(ctx, &arrays), "floats and bytes both accepted");
    arrays.images = NULL;
    arrays.image_bytes = NULL;
    CHECK(!ember_dataset_from_arrays(ctx, &arrays), "no images accepted");
    CHECK(!ember_dataset_from_arrays(ctx, NULL), "NULL accepted");
    CHECK(strstr(ember_last_error(ctx), "NULL"), "message: %s", ember_last_error(ctx));
    ember_clear_error(ctx);
    ember_ctx_free(ctx);
}

/* ------------------------------------------------------- no surprises */

typedef int (*blas_get_fn)(void);
typedef void (*blas_set_fn)(int);

static void test_process_state(void)
{
    int threads_before = threads_settled(0); /* ember threads of earlier checks, if any still run */
    /* OpenBLAS's thread count is the host program's to set: ember's calls
     * leave it as they found it */
    blas_get_fn blas_get = (blas_get_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    blas_set_fn blas_set = (blas_set_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (blas_set)
        blas_set(2);
    int blas_before = blas_get ? blas_get() : 0;

    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    CHECK(ember_ctx_set_threads(NULL, 3) == EMBER_ERR_ARG, "threads set on no context");
    CHECK_OK(ctx, ember_ctx_set_threads(ctx, 3));
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "cpu"));
    CHECK(strstr(ember_ctx_device_name(ctx), "3 threads"), "device: %s", ember_ctx_device_name(ctx));
    CHECK(threads_settled(threads_before + 2) == threads_before + 2, "3 threads: %d threads, %d before",
          count_threads(), threads_before);
    /* threads change on the open device */
    CHECK_OK(ctx, ember_ctx_set_threads(ctx, 1));
    CHECK(strstr(ember_ctx_device_name(ctx), "1 thread"), "device: %s", ember_ctx_device_name(ctx));
    CHECK(threads_settled(threads_before) == threads_before, "1 thread: %d threads, %d before",
          count_threads(), threads_before);
    CHECK_OK(ctx, ember_ctx_set_threads(ctx, 2));
    const int64_t shape[3] = {1, 28, 28};
    ember_model *m = ember_model_build(ctx, "simplecnn", 3, shape, 10, 0);
    float in[4 * 28 * 28], out[40];
    fill_input(in, 4 * 28 * 28, 9);
    CHECK_OK(ctx, ember_model_predict(m, in, 4, out));
    if (blas_get)
        CHECK(blas_get() == blas_before, "OpenBLAS threads: %d after ember's work, %d before", blas_get(),
              blas_before);
    ember_model_free(m);

    /* the caller's tape survives an evaluation */
    ember_data_options random = {
        .kind = "random", .sample_ndim = 3, .sample_shape = {1, 28, 28}, .count = 40};
    ember_dataset *ds = ember_dataset_open(ctx, &random, EMBER_TEST);
    m = ember_model_build(ctx, "simplecnn", 3, shape, 10, 0);
    const int64_t one[1] = {3};
    ember_tensor *a = ember_tensor_new(ctx, EMBER_F32, 1, one);
    ember_tensor *doubled = ember_scale(a, 2.0f); /* on the caller's tape */
    CHECK_OK(ctx, ember_model_evaluate(m, ds, 16, NULL, NULL));
    float v[3] = {1, 1, 1};
    CHECK(doubled && ember_tensor_read(doubled, v, sizeof v) == EMBER_OK && v[0] == 0.0f,
          "the caller's tape tensor did not survive evaluation");
    ember_tape_clear(ctx);
    ember_tensor_free(a);
    ember_model_free(m);
    ember_dataset_free(ds);
    ember_ctx_free(ctx);
    CHECK(threads_settled(threads_before) == threads_before, "after ember_ctx_free: %d threads, %d before",
          count_threads(), threads_before);
    if (blas_get)
        CHECK(blas_get() == blas_before, "OpenBLAS threads after ember_ctx_free: %d, %d before", blas_get(),
              blas_before);

    /* NULL everywhere: statuses, never a crash or "(null)" in a message */
    ctx = test_ctx("cpu");
    CHECK(ember_model_from_checkpoint(ctx, NULL) == NULL, "NULL path");
    CHECK(!strstr(ember_last_error(ctx), "(null)"), "message: %s", ember_last_error(ctx));
    CHECK(ember_model_build(ctx, NULL, 3, shape, 10, 0) == NULL, "NULL model name");
    CHECK(!strstr(ember_last_error(ctx), "(null)") && ember_last_error(ctx)[0], "message: %s",
          ember_last_error(ctx));
    CHECK(ember_checkpoint_open(ctx, NULL) == NULL, "NULL checkpoint path");
    CHECK(ember_checkpoint_open_memory(ctx, NULL, 0) == NULL, "empty checkpoint");
    ember_params *p = ember_params_new(ctx);
    CHECK(ember_params_add(p, NULL, 1, one) == NULL, "a parameter with a NULL name");
    CHECK(!strstr(ember_last_error(ctx), "(null)") && ember_last_error(ctx)[0], "message: %s",
          ember_last_error(ctx));
    CHECK(ember_layer_linear(p, NULL, 2, 2, NULL, NULL, NULL) == EMBER_ERR_ARG, "a layer with a NULL name");
    CHECK(strstr(ember_last_error(ctx), "name is NULL"), "message: %s", ember_last_error(ctx));
    ember_params_free(p);
    ember_ctx_release_cached(NULL);
    ember_ctx_free(ctx);
}

/* ------------------------------------------------- quiet, and its cache */

/* What a piece of work writes to stderr (fd 2), captured in a file. */
static int stderr_begin(FILE **file)
{
    fflush(stderr);
    *file = tmpfile();
    int saved = dup(STDERR_FILENO);
    if (*file)
        dup2(fileno(*file), STDERR_FILENO);
    return saved;
}

static long stderr_end(FILE *file, int saved, char *text, size_t len)
{
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    long n = file ? ftell(file) : -1;
    text[0] = '\0';
    if (file) {
        rewind(file);
        size_t got = fread(text, 1, len - 1, file);
        text[got] = '\0';
        fclose(file);
    }
    return n;
}

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return d ? n : -1;
}

/* A host program that asks for nothing hears nothing: a new context logs
 * nowhere (failures come back as statuses and messages), and the files
 * ember keeps go where the program says (ember_set_cache_dir), never into
 * a home folder it has to create. */
static void test_quiet_and_cache(void)
{
    FILE *file;
    char text[2048];
    int saved = stderr_begin(&file);
    ember_ctx *ctx = ember_ctx_new();
    ember_log(ctx, EMBER_LOG_ERROR, "a message no one asked to see");
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "cpu"));
    const int64_t one[1] = {4};
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, 1, one);
    ember_tensor_free(ember_relu(t)); /* a tape tensor: the library warns, to no one */
    ember_data_options none = {.kind = "mnist"};
    CHECK(!ember_dataset_open(ctx, &none, EMBER_TRAIN), "mnist opened without a folder");
    ember_tensor_free(t);
    ember_tape_clear(ctx);
    long printed = stderr_end(file, saved, text, sizeof text);
    CHECK(printed == 0, "a context nobody gave a log callback printed %ld bytes: %s", printed, text);
    /* the failure is still there for the host to read, in the API's words */
    CHECK(strstr(ember_last_error(ctx), "ember_data_options.dir") && !strstr(ember_last_error(ctx), "--"),
          "the message names no API field, or names a command-line option: %s", ember_last_error(ctx));

    /* the cache: Fashion-MNIST's gzipped files are worth an inflated copy */
    ember_data_options fashion = {.kind = "fashion-mnist"};
    struct stat info;
    if (stat("/usr/share/datasets/fashion-mnist", &info) != 0) {
        printf("quiet: checked; the cache folder not checked: no Fashion-MNIST (dataset-fashion-mnist)\n");
        ember_ctx_free(ctx);
        return;
    }
    char root[] = "/tmp/ember-test-cache-XXXXXX", home[256], chosen[512], copies[512];
    CHECK(mkdtemp(root), "mkdtemp");
    snprintf(home, sizeof home, "%s/no-such-home", root);
    snprintf(chosen, sizeof chosen, "%s/chosen", root);
    snprintf(copies, sizeof copies, "%.400s/datasets", chosen);
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char *old_cache = getenv("EMBER_CACHE_DIR") ? strdup(getenv("EMBER_CACHE_DIR")) : NULL;
    char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    unsetenv("EMBER_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", home, 1);
    ember_dataset *ds = ember_dataset_open(ctx, &fashion, EMBER_TEST);
    CHECK(ds, "%s", ember_last_error(ctx));
    ember_dataset_free(ds);
    CHECK(stat(home, &info) != 0, "ember created the missing home folder %s", home);
    CHECK(ember_set_cache_dir(chosen) == EMBER_OK, "ember_set_cache_dir(%s) was refused", chosen);
    /* a folder name too long to keep whole is refused, and the choice stays (the copy lands in `chosen`) */
    char too_long[3001];
    memset(too_long, 'a', sizeof too_long - 1);
    too_long[sizeof too_long - 1] = '\0';
    CHECK(ember_set_cache_dir(too_long) == EMBER_ERR_ARG, "a cache folder of 3000 bytes was taken");
    ds = ember_dataset_open(ctx, &fashion, EMBER_TEST);
    CHECK(ds, "%s", ember_last_error(ctx));
    ember_dataset_free(ds);
    CHECK(entries(copies) == 1, "ember_set_cache_dir(%s): %d entries in %s, not one (the test images')",
          chosen, entries(copies), copies);
    ember_set_cache_dir(""); /* none: a second folder stays empty */
    snprintf(copies, sizeof copies, "%s/unused", root);
    setenv("EMBER_CACHE_DIR", copies, 1);
    ds = ember_dataset_open(ctx, &fashion, EMBER_TEST);
    CHECK(ds && entries(copies) == -1, "ember_set_cache_dir(\"\") still kept copies in %s", copies);
    ember_dataset_free(ds);
    ember_set_cache_dir(NULL); /* the default again: EMBER_CACHE_DIR */
    ds = ember_dataset_open(ctx, &fashion, EMBER_TEST);
    snprintf(chosen, sizeof chosen, "%.400s/datasets", copies);
    CHECK(ds && entries(chosen) == 1, "ember_set_cache_dir(NULL) did not go back to EMBER_CACHE_DIR (%s)",
          copies);
    ember_dataset_free(ds);
    ember_ctx_free(ctx);
    if (old_home)
        setenv("HOME", old_home, 1);
    if (old_cache)
        setenv("EMBER_CACHE_DIR", old_cache, 1);
    else
        unsetenv("EMBER_CACHE_DIR");
    if (old_xdg)
        setenv("XDG_CACHE_HOME", old_xdg, 1);
    free(old_home);
    free(old_cache);
    free(old_xdg);
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0, "%s", cmd);
    printf("quiet: nothing printed unasked; the cache where ember_set_cache_dir says, no home folder made\n");
}

/* ------------------------------------------------ misuse, reported */

/* calls that once returned nothing say when they were misused, and change nothing */
static void test_misuse_reported(void)
{
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    CHECK_OK(ctx, ember_ctx_use_device(ctx, "cpu"));
    ember_params *params = ember_params_new(ctx);
    int64_t shape[1] = {4};
    ember_tensor *w = ember_params_add(params, "w", 1, shape);
    ember_optim *opt = ember_adam_new(params, ember_adam_defaults(0.1f));

    /* a schedule's NaN or negative rate is refused, and the step runs at the old one */
    CHECK(ember_optim_set_lr(opt, NAN) == EMBER_ERR_ARG && strstr(ember_last_error(ctx), "learning rate"),
          "a NaN learning rate: %s", ember_last_error(ctx));
    CHECK(ember_optim_set_lr(opt, -0.5f) == EMBER_ERR_ARG, "a negative learning rate was taken");
    CHECK(ember_optim_set_lr(NULL, 0.1f) == EMBER_ERR_ARG, "a learning rate set on no optimizer");
    ember_tensor *loss = ember_sum(w, EMBER_ALL_AXES, false);
    CHECK_OK(ctx, ember_backward(loss));
    CHECK_OK(ctx, ember_optim_step(opt));
    float after[4] = {0};
    CHECK_OK(ctx, ember_tensor_read(w, after, sizeof after));
    CHECK(fabsf(after[0] + 0.1f) < 1e-3f, "Adam's first step at lr 0.1 moved w to %g, not -0.1", after[0]);
    CHECK_OK(ctx, ember_optim_set_lr(opt, 0.0f));

    /* a mark the tape was cleared past */
    ember_tensor *sq = ember_mul(w, w);
    ember_tape_mark mark = ember_tape_mark_now(ctx);
    CHECK(sq && mark.tensors > 0, "no tensor on the tape before the mark");
    ember_tape_clear(ctx);
    CHECK(ember_tape_release_since(ctx, mark, NULL) == EMBER_ERR_ARG &&
              strstr(ember_last_error(ctx), "cleared past the mark"),
          "a mark from before ember_tape_clear: %s", ember_last_error(ctx));
    CHECK_OK(ctx, ember_tape_release_since(ctx, ember_tape_mark_now(ctx), NULL));

    /* stopping a profile that never started */
    CHECK_OK(ctx, ember_profile_stop(ctx));
    CHECK(ember_profile_stop(NULL) == EMBER_ERR_ARG, "a profile stopped on no context");

    ember_optim_free(opt);
    ember_params_free(params);
    ember_ctx_free(ctx);
}

int main(void)
{
    test_quiet_and_cache();
    test_predict();
    test_checkpoints_in_memory();
    test_arrays();
    test_process_state();
    test_many_models();
    test_misuse_reported();
    return test_finish("test_embed");
}
