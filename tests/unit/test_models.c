/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_models.c — model files and models: every mistake in a file
 * reported at its line and column, the built-in zoo building for 28x28 and
 * 32x32 images with PyTorch's names and parameter counts, training and
 * evaluation modes, BatchNorm's batch count through a checkpoint, a
 * network written in C wrapped as a model, and the summary's rows.
 *
 * Runs on the CPU, or $EMBER_TEST_DEVICE.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "test-util.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const int64_t mnist[3] = {1, 28, 28}, cifar[3] = {3, 32, 32};

/* ------------------------------------------------------------- mistakes */

/* Each file is wrong in one place: the message starts "bad:LINE:COLUMN:"
 * and says what is wrong in words a user can act on. */
static const struct bad_model {
    const char *text;
    int line, column;
    const char *says;
    ember_status status;
} bad_models[] = {
    {"conv1: conv2d 16 kernel=3\nrelu\nconv3d 8 kernel=3\n", 3, 1,
     "unknown layer \"conv3d\" (did you mean \"conv2d\"?)", EMBER_ERR_FORMAT},
    {"\n\nconv2d 16\n", 3, 1, "conv2d needs kernel=", EMBER_ERR_FORMAT},
    {"linear\n", 1, 1, "linear needs out", EMBER_ERR_FORMAT},
    {"conv2d 16 kernel=3 strde=2\n", 1, 20, "no option \"strde\" (did you mean \"stride\"?)",
     EMBER_ERR_FORMAT},
    {"conv2d 16 kernel=0\n", 1, 11, "kernel (the square kernel's size) is an integer from 1 to 1024",
     EMBER_ERR_FORMAT},
    {"conv2d 16 kernel=3 kernel=5\n", 1, 20, "kernel is given twice (first at column 11)", EMBER_ERR_FORMAT},
    {"conv2d 16 kernel=2.5\n", 1, 11, "is an integer", EMBER_ERR_FORMAT},
    {"flatten\nlinear classes bias=maybe\n", 2, 16, "true or false", EMBER_ERR_FORMAT},
    {"flatten\ndropout p=1.5\n", 2, 9, "from 0 to 1", EMBER_ERR_FORMAT},
    {"relu 3\n", 1, 6, "relu takes no value", EMBER_ERR_FORMAT},
    {"  conv1:conv2d 8 kernel=3\n", 1, 3, "write a name, a colon and a space", EMBER_ERR_FORMAT},
    {"a..b: relu\n", 1, 1, "\"a..b\" is not a layer name", EMBER_ERR_FORMAT},
    {"relu\ninput 1x28x28\n", 2, 1, "input comes before the first layer", EMBER_ERR_FORMAT},
    {"input 1x28\nflatten\nlinear classes\n", 1, 7,
     "this model is for input 1x28, but the samples are 1x28x28", EMBER_ERR_ARG},
    {"input 0x28x28\n", 1, 7, "input takes one shape", EMBER_ERR_FORMAT},
    {"residual\n  conv2d 1 kernel=3 padding=1\n", 1, 1, "this residual block has no \"end\"",
     EMBER_ERR_FORMAT},
    {"relu\nend\n", 2, 1, "end outside a block", EMBER_ERR_FORMAT},
    {"shortcut\n", 1, 1, "shortcut outside a block", EMBER_ERR_FORMAT},
    {"residual\nend\n", 2, 1, "has no layers", EMBER_ERR_FORMAT},
    {"residual\n relu\nshortcut\nend\n", 4, 1, "the shortcut of line 3 has no layers", EMBER_ERR_FORMAT},
    {"# only a comment\n\n", 1, 1, "no layers", EMBER_ERR_FORMAT},
    /* concat and gate blocks: their words, their branches' shapes */
    {"concat\n relu\nend\n", 3, 1, "the concat block of line 1 has one branch", EMBER_ERR_FORMAT},
    {"gate\n relu\nbranch\n", 3, 1, "branch in a gate block (line 1), which has one list", EMBER_ERR_FORMAT},
    {"residual\n relu\nbranch\n", 3, 1, "whose second list opens with \"shortcut\"", EMBER_ERR_FORMAT},
    {"concat\n relu\nbranch\nbranch\n", 4, 1, "already has its branch (line 3)", EMBER_ERR_FORMAT},
    {"concat\n conv2d 4 kernel=3\nbranch\nend\nflatten\nlinear classes\n", 1, 1,
     "the concat block's branches give 4x26x26 and 1x28x28 (line 3)", EMBER_ERR_ARG},
    {"gate\n conv2d 4 kernel=1\nend\nflatten\nlinear classes\n", 1, 1,
     "the gate block's body gives 4x28x28 for its input 1x28x28", EMBER_ERR_ARG},
    {"conv2d 6 kernel=1\nchunk 4\nflatten\nlinear classes\n", 2, 1,
     "6 channels do not split into 4 equal chunks", EMBER_ERR_ARG},
    {"conv2d 6 kernel=1\nchunk 2 index=2\nflatten\nlinear classes\n", 2, 1, "the chunks are numbered 0 to 1",
     EMBER_ERR_ARG},
    {"conv2d 6 kernel=1\nchannel_shuffle 4\nflatten\nlinear classes\n", 2, 1,
     "6 channels do not split into 4 groups", EMBER_ERR_ARG},
    {"x: relu\nx: flatten\nlinear classes\n", 2, 4, "the name \"x\" is taken by the relu at line 1",
     EMBER_ERR_FORMAT},
    /* names no PyTorch module could hold: a parameter's name taken by a module, or twice */
    {"flatten\nfc: linear 10\nfc.weight: linear classes\n", 3, 12,
     "\"fc.weight\" is both a layer and the weight of the linear at line 2", EMBER_ERR_FORMAT},
    {"flatten\nweight: linear 10\nself: linear classes\n", 2, 9,
     "\"weight\" is both a layer and the weight of the linear at line 3", EMBER_ERR_FORMAT},
    {"flatten\nself: linear 10\nself: linear classes\n", 3, 7,
     "the parameter \"weight\" of the linear at line 2", EMBER_ERR_FORMAT},
    /* a byte a checkpoint could not store as it is, comments included */
    {"flatten\nlinear classes # caf\xe9\n", 2, 21, "unexpected byte 0xe9", EMBER_ERR_FORMAT},
    {"flatten # \x1b[2J\nlinear classes\n", 1, 11, "unexpected byte 0x1b", EMBER_ERR_FORMAT},
    /* the same sizes as --shape takes */
    {"input 1x100000x100000000\nflatten\nlinear classes\n", 1, 7, "input takes one shape", EMBER_ERR_FORMAT},
    {"self: relu\nresidual\n self: relu\nend\n", 3, 2, "\"self\" names a layer of the model itself",
     EMBER_ERR_FORMAT},
    /* shapes that do not fit, with the shape on the other side named */
    {"linear classes\n", 1, 1,
     "linear does not fit the 1x28x28 it gets from the input: linear takes features", EMBER_ERR_ARG},
    {"conv2d 16 kernel=3\nmax_pool2d 64\nflatten\nlinear classes\n", 2, 1,
     "max_pool2d does not fit the 16x26x26 it gets from conv2d at line 1: the 64x64 window is larger than "
     "the "
     "26x26 image",
     EMBER_ERR_ARG},
    {"flatten\nbatch_norm2d\nlinear classes\n", 2, 1, "on features use batch_norm1d", EMBER_ERR_ARG},
    {"conv2d 4 kernel=4 padding=same\nflatten\nlinear classes\n", 1, 1,
     "padding=same needs stride 1 and an odd", EMBER_ERR_ARG},
    {"residual\n conv2d 8 kernel=3 stride=2 padding=1\nend\nflatten\nlinear classes\n", 1, 1,
     "the residual block's body gives 8x14x14 but its input is 1x28x28", EMBER_ERR_ARG},
    {"residual\n conv2d 8 kernel=3 stride=2 padding=1\nshortcut\n conv2d 8 kernel=1\nend\nflatten\nlinear "
     "classes\n",
     1, 1, "its shortcut (line 3) gives 8x28x28", EMBER_ERR_ARG},
    {"flatten\nlinear 20\n", 2, 1, "ends with 20 features, but the data has 10 classes", EMBER_ERR_ARG},
    {"conv2d 4 kernel=3\n", 1, 1, "the model ends with 4x26x26", EMBER_ERR_ARG},
    {"flatten\nlinear classes\n\x01\n", 3, 1, "unexpected byte 0x01", EMBER_ERR_FORMAT},
};

static void test_mistakes(ember_ctx *ctx)
{
    for (int i = 0; i < COUNT(bad_models); i++) {
        const struct bad_model *b = &bad_models[i];
        ember_model *m = ember_model_parse(ctx, "bad", b->text, 3, mnist, 10, 0);
        char where[32];
        snprintf(where, sizeof where, "bad:%d:%d: ", b->line, b->column);
        const char *msg = ember_last_error(ctx);
        CHECK(!m && ember_last_status(ctx) == b->status && strncmp(msg, where, strlen(where)) == 0 &&
                  strstr(msg, b->says),
              "case %d: wanted %s%s (%s), got %s: %s", i, where, b->says, ember_status_str(b->status),
              ember_status_str(ember_last_status(ctx)), msg);
        CHECK(!strstr(msg, "ember_"), "case %d names a function of ember's: %s", i, msg);
        ember_model_free(m);
    }
    /* a file that is not there, and a built-in that is not either */
    CHECK(!ember_model_build(ctx, "/nonexistent/net.model", 3, mnist, 10, 0) &&
              ember_last_status(ctx) == EMBER_ERR_IO &&
              strstr(ember_last_error(ctx), "/nonexistent/net.model"),
          "a missing file: %s", ember_last_error(ctx));
    CHECK(!ember_model_build(ctx, "resnet9", 3, mnist, 10, 0) && strstr(ember_last_error(ctx), "resnet8") &&
              strstr(ember_last_error(ctx), ".model"),
          "an unknown built-in: %s", ember_last_error(ctx));
}

/* ------------------------------------------------------------- the zoo */

/* PyTorch's parameter counts for the same modules (sum of p.numel() for p
 * in model.parameters()) on 1x28x28 input and 10 classes. */
static const struct zoo_count {
    const char *name;
    int64_t params, tensors; /* tensors: len(state_dict()) */
} zoo_counts[] = {
    {"simplecnn", 31530, 4}, {"kerascnn", 216650, 4}, {"linear", 7850, 2},    {"mlp", 235146, 6},
    {"lenet5", 61706, 10},   {"vgg8", 222298, 40},    {"resnet8", 77754, 56}, {"tabular", 55050, 6},
};

static void test_zoo(ember_ctx *ctx)
{
    int n = 0;
    for (const char *const *name = ember_model_names(); *name; name++, n++) {
        CHECK(ember_model_summary(*name) && *ember_model_summary(*name), "%s has no summary line", *name);
        if (strcmp(*name, "gpt-tiny") == 0)
            continue; /* a model of text: test_gpt_tiny */
        for (int shape = 0; shape < 2; shape++) {
            ember_model *m = ember_model_build(ctx, *name, 3, shape ? cifar : mnist, 10, 0);
            CHECK(m != NULL, "%s on %s: %s", *name, shape ? "3x32x32" : "1x28x28", ember_last_error(ctx));
            for (int i = 0; m && shape == 0 && i < COUNT(zoo_counts); i++)
                if (strcmp(zoo_counts[i].name, *name) == 0)
                    CHECK(ember_params_numel(ember_model_params(m)) == zoo_counts[i].params &&
                              ember_params_count(ember_model_params(m)) == zoo_counts[i].tensors,
                          "%s: %lld parameters in %d tensors, PyTorch's module has %lld in %lld", *name,
                          (long long)ember_params_numel(ember_model_params(m)),
                          ember_params_count(ember_model_params(m)), (long long)zoo_counts[i].params,
                          (long long)zoo_counts[i].tensors);
            ember_model_free(m);
        }
    }
    CHECK(n >= COUNT(zoo_counts), "%d built-in models", n);

    /* torchvision's names, buffers included */
    ember_model *m = ember_model_build(ctx, "resnet8", 3, mnist, 10, 0);
    ember_params *p = ember_model_params(m);
    const char *names[] = {"conv1.weight",
                           "bn1.running_mean",
                           "layer1.0.conv2.weight",
                           "layer2.0.bn1.num_batches_tracked",
                           "layer3.0.downsample.0.weight",
                           "layer3.0.downsample.1.running_var",
                           "fc.bias"};
    for (int i = 0; m && i < COUNT(names); i++)
        CHECK(ember_params_find(p, names[i]), "resnet8 has no %s", names[i]);
    CHECK(m && !ember_params_find(p, "conv1.bias"), "resnet8's convolutions have no bias");
    ember_model_free(m);
    m = ember_model_build(ctx, "linear", 1, (const int64_t[]){100}, 10, 0);
    CHECK(m && ember_params_find(ember_model_params(m), "weight") &&
              ember_params_find(ember_model_params(m), "bias"),
          "linear's parameters are a bare nn.Linear's: weight, bias");
    ember_model_free(m);
}

/* gpt-tiny has nanoGPT's names and parameter count (n_layer 4, n_head 4,
 * n_embd 128, block_size 128, bias, lm_head untied: 809,728 + 256 per
 * token of the vocabulary, in 53 tensors), and takes a sequence's tokens
 * to scores at every position; it refuses images. */
static void test_gpt_tiny(ember_ctx *ctx)
{
    const int64_t context[1] = {128};
    ember_model *m = ember_model_build(ctx, "gpt-tiny", 1, context, 65, 0);
    CHECK(m != NULL, "gpt-tiny: %s", ember_last_error(ctx));
    if (!m)
        return;
    ember_params *p = ember_model_params(m);
    CHECK(ember_params_numel(p) == 809728 + 256 * 65 && ember_params_count(p) == 53,
          "gpt-tiny: %lld parameters in %d tensors; nanoGPT's has %d in 53", (long long)ember_params_numel(p),
          ember_params_count(p), 809728 + 256 * 65);
    const char *names[] = {"transformer.wte.weight",           "transformer.wpe.weight",
                           "transformer.h.0.ln_1.weight",      "transformer.h.0.attn.c_attn.weight",
                           "transformer.h.1.attn.c_proj.bias", "transformer.h.2.ln_2.bias",
                           "transformer.h.3.mlp.c_fc.weight",  "transformer.h.3.mlp.c_proj.bias",
                           "transformer.ln_f.weight",          "lm_head.weight"};
    for (int i = 0; i < COUNT(names); i++)
        CHECK(ember_params_find(p, names[i]), "gpt-tiny has no %s", names[i]);
    CHECK(!ember_params_find(p, "lm_head.bias"), "gpt-tiny's lm_head has no bias");
    /* tokens (2, 128) -> scores (2, 128, 65) */
    const int64_t shape[2] = {2, 128};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_I32, 2, shape);
    ember_tensor *y = ember_model_forward(m, x);
    CHECK(y && ember_tensor_ndim(y) == 3 && ember_tensor_dim(y, 1) == 128 && ember_tensor_dim(y, 2) == 65,
          "gpt-tiny's output: %s", ember_last_error(ctx));
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    ember_model_free(m);
    ember_clear_error(ctx);
    CHECK(!ember_model_build(ctx, "gpt-tiny", 3, mnist, 10, 0) && strstr(ember_last_error(ctx), "input 128"),
          "gpt-tiny on images: %s", ember_last_error(ctx));
    ember_clear_error(ctx);
}

/* ------------------------------------------------------ training and eval */

static ember_tensor *random_batch(ember_ctx *ctx, int64_t n, const int64_t *shape, uint64_t seed)
{
    int64_t full[4] = {n, shape[0], shape[1], shape[2]};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 4, full);
    int64_t count = ember_tensor_numel(x);
    float *host = malloc((size_t)count * sizeof *host);
    ember_rng rng = ember_rng_seed(seed);
    for (int64_t i = 0; host && i < count; i++)
        host[i] = ember_rng_uniform(&rng, 0.0f, 1.0f);
    if (host)
        ember_tensor_write(x, host, (size_t)count * sizeof *host);
    free(host);
    return x;
}

static float *logits_of(ember_model *m, ember_tensor *x)
{
    ember_tensor *y = ember_model_forward(m, x);
    int64_t n = y ? ember_tensor_numel(y) : 0;
    float *host = n ? malloc((size_t)n * sizeof *host) : NULL;
    if (host && ember_tensor_read(y, host, (size_t)n * sizeof *host) != EMBER_OK) {
        free(host);
        host = NULL;
    }
    return host;
}

static float max_diff(const float *a, const float *b, int64_t n)
{
    float d = 0.0f;
    for (int64_t i = 0; i < n; i++)
        d = fmaxf(d, fabsf(a[i] - b[i]));
    return d;
}

static float scalar(ember_params *p, const char *name)
{
    float v = NAN;
    ember_tensor *t = ember_params_find(p, name);
    if (!t || ember_tensor_read(t, &v, sizeof v) != EMBER_OK)
        return NAN;
    return v;
}

/* BatchNorm and Dropout act differently in the two modes; a model of
 * neither does not. The batch count survives a checkpoint. */
static void test_modes(ember_ctx *ctx, const char *dir)
{
    bool was = ember_set_grad_enabled(ctx, false);
    ember_tensor *x = random_batch(ctx, 8, mnist, 5);
    const char *models[] = {"resnet8", "vgg8", "simplecnn"};
    for (int k = 0; k < COUNT(models); k++) {
        ember_model *m = ember_model_build(ctx, models[k], 3, mnist, 10, 1);
        if (!m || !x) {
            CHECK(false, "%s: %s", models[k], ember_last_error(ctx));
            ember_model_free(m);
            continue;
        }
        CHECK(ember_model_training(m), "%s starts in training mode", models[k]);
        float *train1 = logits_of(m, x), *train2 = logits_of(m, x);
        CHECK(ember_model_set_training(NULL, false) == EMBER_ERR_ARG, "a NULL model's status");
        CHECK_OK(ctx, ember_model_set_training(m, false));
        float *eval1 = logits_of(m, x), *eval2 = logits_of(m, x);
        CHECK(train1 && train2 && eval1 && eval2, "%s forward: %s", models[k], ember_last_error(ctx));
        if (train1 && train2 && eval1 && eval2) {
            bool batch_norm = strcmp(models[k], "simplecnn") != 0, dropout = strcmp(models[k], "vgg8") == 0;
            float modes = max_diff(train1, eval1, 80), evals = max_diff(eval1, eval2, 80);
            float trains = max_diff(train1, train2, 80);
            CHECK(batch_norm ? modes > 1e-3f : modes == 0.0f, "%s: training and evaluation differ by %g",
                  models[k], modes);
            CHECK(evals == 0.0f, "%s: two evaluations differ by %g", models[k], evals);
            /* two training forwards: dropout draws a new mask; BatchNorm's
             * batch statistics are the same batch's */
            CHECK(dropout ? trains > 1e-3f : trains == 0.0f, "%s: two training forwards differ by %g",
                  models[k], trains);
        }
        if (strcmp(models[k], "resnet8") == 0) {
            ember_params *p = ember_model_params(m);
            CHECK(scalar(p, "bn1.num_batches_tracked") == 2.0f &&
                      scalar(p, "layer2.0.downsample.1.num_batches_tracked") == 2.0f,
                  "after two training forwards num_batches_tracked is %g",
                  scalar(p, "bn1.num_batches_tracked"));
            char path[4096];
            snprintf(path, sizeof path, "%s/resnet8.safetensors", dir);
            CHECK_OK(ctx, ember_model_save(m, path, NULL));
            ember_model *again = ember_model_build(ctx, "resnet8", 3, mnist, 10, 99);
            CHECK_OK(ctx, ember_model_load(again, path));
            ember_model_set_training(again, false);
            float *loaded = again ? logits_of(again, x) : NULL;
            CHECK(loaded && eval1 && max_diff(loaded, eval1, 80) == 0.0f,
                  "the reloaded model evaluates differently");
            /* from the checkpoint alone: the model, its input and classes from the metadata */
            ember_model *opened = ember_model_from_checkpoint(ctx, path);
            ember_model_set_training(opened, false);
            float *reopened = opened ? logits_of(opened, x) : NULL;
            CHECK(reopened && eval1 && max_diff(reopened, eval1, 80) == 0.0f &&
                      strcmp(ember_model_name(opened), "resnet8") == 0,
                  "ember_model_from_checkpoint: %s", ember_last_error(ctx));
            ember_checkpoint *ck = ember_checkpoint_open(ctx, path);
            CHECK(ck && strcmp(ember_checkpoint_meta(ck, "ember.input"), "1x28x28") == 0 &&
                      strcmp(ember_checkpoint_meta(ck, "ember.classes"), "10") == 0 &&
                      strstr(ember_checkpoint_meta(ck, "ember.model_text"), "layer3.0: residual") &&
                      !ember_checkpoint_meta(ck, "ember.nothing"),
                  "the checkpoint's metadata");
            ember_checkpoint_close(ck);
            free(reopened);
            ember_model_free(opened);
            /* parameters saved bare say nothing of their model */
            snprintf(path, sizeof path, "%s/bare.safetensors", dir);
            CHECK_OK(ctx, ember_params_save(ember_model_params(m), path, NULL));
            CHECK(!ember_model_from_checkpoint(ctx, path) && ember_last_status(ctx) == EMBER_ERR_FORMAT &&
                      strstr(ember_last_error(ctx), "does not say which model"),
                  "a bare checkpoint: %s", ember_last_error(ctx));
            ember_model_set_training(again, true);
            free(logits_of(again, x)); /* the count goes on from the file's */
            ember_model_set_training(again, false);
            CHECK(scalar(ember_model_params(again), "bn1.num_batches_tracked") == 3.0f,
                  "num_batches_tracked went from 2 to %g",
                  scalar(ember_model_params(again), "bn1.num_batches_tracked"));
            free(loaded);
            ember_model_free(again);
        }
        free(train1), free(train2), free(eval1), free(eval2);
        ember_model_free(m);
    }
    ember_tensor_free(x);
    ember_set_grad_enabled(ctx, was);
}

/* -------------------------------------------- checkpoints as hostile files */

/* peak resident memory of this process, in MiB */
static double peak_rss_mib(void) { return (double)ember_peak_memory_bytes() / (1024.0 * 1024.0); }

/* A checkpoint of `params` claiming the model in `meta` (key, value, ..., NULL). */
static const char *claiming(ember_ctx *ctx, const char *dir, const char *name, ember_params *params,
                            const char *const *meta)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_OK(ctx, ember_params_save(params, path, meta));
    return path;
}

static void test_hostile_checkpoints(ember_ctx *ctx, const char *dir)
{
    ember_params *small = ember_params_new(ctx);
    ember_rng rng = ember_rng_seed(1);
    ember_tensor *w, *b;
    CHECK_OK(ctx, ember_layer_linear(small, "0", 4, 2, &rng, &w, &b));

    /* a tiny file whose metadata describes a network of a billion parameters:
     * refused by its first tensor, before the network is allocated */
    const char *huge[] = {
        "ember.model", "huge.model", "ember.model_text", "0: linear 40000\n1: linear classes\n",
        "ember.input", "25000",      "ember.classes",    "10",
        NULL};
    const char *path = claiming(ctx, dir, "huge.safetensors", small, huge);
    double before = peak_rss_mib();
    ember_model *m = ember_model_from_checkpoint(ctx, path);
    const char *msg = ember_last_error(ctx);
    CHECK(!m && ember_last_status(ctx) == EMBER_ERR_FORMAT && strstr(msg, "huge.safetensors") &&
              strstr(msg, "\"0.weight\"") && strstr(msg, "(40000, 25000)"),
          "a checkpoint describing a huge network: %s: %s", ember_status_str(ember_last_status(ctx)), msg);
    CHECK(peak_rss_mib() - before < 64, "building from it took %.0f MiB", peak_rss_mib() - before);
    ember_model_free(m);

    /* an error in the model text a checkpoint stores names the checkpoint */
    /* clang-format off */
    const char *bad_text[] = {"ember.model", "models/mine.model", "ember.model_text", "flatten\nlinear classes\nconv3d\n",
                              "ember.input", "4", "ember.classes", "2", NULL};
    /* clang-format on */
    path = claiming(ctx, dir, "bad-text.safetensors", small, bad_text);
    m = ember_model_from_checkpoint(ctx, path);
    msg = ember_last_error(ctx);
    CHECK(!m && ember_last_status(ctx) == EMBER_ERR_FORMAT && strstr(msg, "bad-text.safetensors") &&
              strstr(msg, "models/mine.model") && strstr(msg, "stored") && strstr(msg, ":3:1: unknown layer"),
          "an error in the stored model text: %s", msg);
    ember_model_free(m);

    /* counts that are not counts */
    const char *bad_count[] = {"ember.model", "linear",         "ember.input", "4", "ember.classes",
                               "2",           "ember.forwards", "12abc",       NULL};
    ember_params *lin = ember_params_new(ctx);
    ember_rng rng2 = ember_rng_seed(2);
    CHECK_OK(ctx, ember_layer_linear(lin, "self", 4, 2, &rng2, &w, &b));
    ember_params_free(lin);
    ember_model *linear = ember_model_build(ctx, "linear", 1, (const int64_t[]){4}, 2, 0);
    path = claiming(ctx, dir, "bad-count.safetensors", ember_model_params(linear), bad_count);
    m = ember_model_from_checkpoint(ctx, path);
    CHECK(!m && ember_last_status(ctx) == EMBER_ERR_FORMAT && strstr(ember_last_error(ctx), "ember.forwards"),
          "ember.forwards 12abc: %s", ember_last_error(ctx));
    ember_model_free(m);
    ember_model_free(linear);
    ember_params_free(small);

    /* a model file is stored as it is: comments, tabs, CRLF line ends come back byte for byte */
    const char *text =
        "# a comment\twith a tab, \"quotes\" and a \\\r\nflatten  \t# and\r\n\tlinear classes\r\n";
    ember_model *stored = ember_model_parse(ctx, "kept.model", text, 1, (const int64_t[]){4}, 2, 0);
    char kept_path[4096];
    snprintf(kept_path, sizeof kept_path, "%s/kept.safetensors", dir);
    CHECK(stored && ember_model_save(stored, kept_path, NULL) == EMBER_OK, "a model with comments: %s",
          ember_last_error(ctx));
    ember_model *back = ember_model_from_checkpoint(ctx, kept_path);
    CHECK(back && strcmp(ember_model_text(back), text) == 0, "the stored text came back as %s",
          back ? ember_model_text(back) : ember_last_error(ctx));
    ember_model_free(back);
    ember_model_free(stored);

    /* BatchNorm's running variance cannot be negative: refused on load, the model unchanged */
    ember_model *net = ember_model_parse(ctx, "bn", "flatten\nbn: batch_norm1d\nlinear classes\n", 1,
                                         (const int64_t[]){4}, 2, 0);
    ember_tensor *var = net ? ember_params_find(ember_model_params(net), "bn.running_var") : NULL;
    CHECK(var, "a BatchNorm model: %s", ember_last_error(ctx));
    if (var) {
        char good[4096];
        snprintf(good, sizeof good, "%s/bn-good.safetensors", dir);
        CHECK_OK(ctx, ember_model_save(net, good, NULL));
        const float negative[4] = {1.0f, 0.5f, -0.25f, 2.0f};
        CHECK_OK(ctx, ember_tensor_write(var, negative, sizeof negative));
        char bad[4096];
        snprintf(bad, sizeof bad, "%s/bn-negative.safetensors", dir);
        CHECK_OK(ctx, ember_model_save(net, bad, NULL));
        CHECK_OK(ctx, ember_model_load(net, good));
        CHECK(ember_model_load(net, bad) == EMBER_ERR_FORMAT &&
                  strstr(ember_last_error(ctx), "bn.running_var") &&
                  strstr(ember_last_error(ctx), "index 2") && strstr(ember_last_error(ctx), "negative"),
              "a negative running variance: %s", ember_last_error(ctx));
        float kept[4] = {0};
        CHECK_OK(ctx, ember_tensor_read(var, kept, sizeof kept));
        CHECK(kept[0] == 1.0f && kept[2] == 1.0f, "a refused load changed the variance to %g", kept[2]);
        m = ember_model_from_checkpoint(ctx, bad);
        CHECK(!m && ember_last_status(ctx) == EMBER_ERR_FORMAT, "from the checkpoint: %s",
              ember_last_error(ctx));
        ember_model_free(m);
    }
    ember_model_free(net);
    ember_clear_error(ctx);
}

/* --------------------------------------------------- a network in C */

struct tiny {
    ember_tensor *w, *b;
    int calls;
    bool last_training;
};

/* logits = flatten(x) @ w^T + b */
static ember_tensor *tiny_forward(void *user, ember_params *params, ember_tensor *x, bool training)
{
    struct tiny *t = user;
    t->calls++;
    t->last_training = training;
    return ember_linear(ember_flatten(x), t->w, t->b);
}

static void test_wrap(ember_ctx *ctx, const char *dir)
{
    struct tiny t = {0};
    ember_rng rng = ember_rng_seed(3);
    ember_params *p = ember_params_new(ctx);
    CHECK_OK(ctx, ember_layer_linear(p, "head", 784, 10, &rng, &t.w, &t.b));
    ember_model *m = ember_model_wrap(ctx, "tiny", p, 3, mnist, 10, tiny_forward, &t);
    CHECK(m && strcmp(ember_model_name(m), "tiny") == 0 && !ember_model_text(m) &&
              ember_model_layer_count(m) == 0,
          "wrapping: %s", ember_last_error(ctx));
    if (!m)
        return;
    ember_data_options data = {.kind = "random", .sample_ndim = 3, .sample_shape = {1, 28, 28}, .count = 200};
    ember_dataset *ds = ember_dataset_open(ctx, &data, EMBER_TEST);
    double acc = -1, loss = -1;
    CHECK_OK(ctx, ember_model_evaluate(m, ds, 64, &acc, &loss));
    CHECK(t.calls == 4 && !t.last_training && ember_model_training(m) && acc >= 0 && acc <= 1 && loss > 0,
          "evaluate: %d calls, training %d, accuracy %g, loss %g", t.calls, t.last_training, acc, loss);

    char path[4096];
    snprintf(path, sizeof path, "%s/tiny.safetensors", dir);
    CHECK_OK(ctx, ember_model_save(m, path, NULL));
    struct tiny u = {0};
    ember_params *q = ember_params_new(ctx);
    ember_rng other = ember_rng_seed(4);
    CHECK_OK(ctx, ember_layer_linear(q, "head", 784, 10, &other, &u.w, &u.b));
    ember_model *n = ember_model_wrap(ctx, "tiny", q, 3, mnist, 10, tiny_forward, &u);
    CHECK_OK(ctx, ember_model_load(n, path));
    double acc2 = -1, loss2 = -1;
    CHECK_OK(ctx, ember_model_evaluate(n, ds, 64, &acc2, &loss2));
    CHECK(acc2 == acc && loss2 == loss, "the reloaded network: accuracy %g, loss %g (saved: %g, %g)", acc2,
          loss2, acc, loss);
    ember_model_free(n);
    ember_model_free(m);
    ember_dataset_free(ds);
}

/* ------------------------------------------- ReLU, then max-pool, reordered */

/* x.grad and the linear layer's weight gradient after sum(logits).backward() */
struct relu_pool_run {
    float logits[2 * 3], dx[2 * 2 * 6 * 6], dw[3 * 2 * 3 * 3];
};

static void relu_pool_read(ember_tensor *logits, ember_tensor *x, ember_tensor *w, struct relu_pool_run *r)
{
    ember_tensor *loss = logits ? ember_sum(logits, EMBER_ALL_AXES, false) : NULL;
    CHECK(loss && ember_backward(loss) == EMBER_OK &&
              ember_tensor_read(logits, r->logits, sizeof r->logits) == EMBER_OK &&
              ember_tensor_read(ember_tensor_grad(x), r->dx, sizeof r->dx) == EMBER_OK &&
              ember_tensor_read(ember_tensor_grad(w), r->dw, sizeof r->dw) == EMBER_OK,
          "a pass through relu and max_pool2d: %s", ember_last_error(ember_tensor_ctx(x)));
}

/* The model runs a ReLU followed by a max-pool as pool, then ReLU
 * (models/model.c): the logits and both gradients must be bit for bit the
 * ones of the file's order, on values with ties, zeros and windows with
 * nothing positive. */
static void test_relu_pool_order(ember_ctx *ctx)
{
    static const int64_t shape[3] = {2, 6, 6};
    ember_model *m = ember_model_parse(ctx, "relu-pool", "relu\nmax_pool2d 2\nflatten\nfc: linear classes\n",
                                       3, shape, 3, 7);
    CHECK(m, "a model of relu, max_pool2d: %s", ember_last_error(ctx));
    if (!m)
        return;
    static const float values[] = {-2.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 2.0f};
    float host[2 * 2 * 6 * 6];
    ember_rng rng = ember_rng_seed(11);
    for (int i = 0; i < COUNT(host); i++)
        host[i] = values[(int)ember_rng_uniform(&rng, 0.0f, 6.999f)];
    for (int i = 0; i < 4; i++) /* the first window of plane 0: nothing positive */
        host[(i / 2) * 6 + i % 2] = -1.0f;
    int64_t full[4] = {2, 2, 6, 6};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 4, full),
                 *x2 = ember_tensor_new(ctx, EMBER_F32, 4, full);
    ember_params *p = ember_model_params(m);
    ember_tensor *w = ember_params_find(p, "fc.weight"), *b = ember_params_find(p, "fc.bias");
    bool ready = x && x2 && w && b;
    for (int k = 0; ready && k < 2; k++)
        ready = ember_tensor_write(k ? x2 : x, host, sizeof host) == EMBER_OK &&
                ember_tensor_set_requires_grad(k ? x2 : x, true) == EMBER_OK;
    CHECK(ready, "the relu-pool input: %s", ember_last_error(ctx));
    struct relu_pool_run model = {0}, file_order = {0};
    if (ready) {
        relu_pool_read(ember_model_forward(m, x), x, w, &model);
        CHECK_OK(ctx, ember_params_zero_grad(p));
        ember_tape_clear(ctx);
        relu_pool_read(ember_linear(ember_flatten(ember_max_pool2d(ember_relu(x2), 2, 2)), w, b), x2, w,
                       &file_order);
    }
    CHECK(memcmp(&model, &file_order, sizeof model) == 0,
          "pool then ReLU equals ReLU then pool, bit for bit: logits %g apart, dx %g, dw %g",
          max_diff(model.logits, file_order.logits, COUNT(model.logits)),
          max_diff(model.dx, file_order.dx, COUNT(model.dx)),
          max_diff(model.dw, file_order.dw, COUNT(model.dw)));
    float zero[4] = {0};
    CHECK(memcmp(model.dx, zero, sizeof zero) == 0 && memcmp(model.dx + 6, zero, 2 * sizeof *zero) == 0,
          "no gradient into a window with nothing positive");
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    ember_tensor_free(x2);
    ember_model_free(m);
}

/* silu: each value x / (1 + e^-x), its gradient s (1 + x (1 - s)), and its row as PyTorch names it */
static void test_silu_layer(ember_ctx *ctx)
{
    static const int64_t shape[1] = {5};
    ember_model *m = ember_model_parse(ctx, "silu", "act: silu\n", 1, shape, 5, 7);
    CHECK(m, "a model of one silu layer: %s", ember_last_error(ctx));
    if (!m)
        return;
    static const float host[10] = {-6.0f, -2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f, 8.0f, -30.0f, 30.0f};
    int64_t batch[2] = {2, 5};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 2, batch);
    bool ready = x && ember_tensor_write(x, host, sizeof host) == EMBER_OK &&
                 ember_tensor_set_requires_grad(x, true) == EMBER_OK;
    ember_tensor *y = ready ? ember_model_forward(m, x) : NULL;
    float out[10] = {0}, dx[10] = {0};
    bool ran = y && ember_tensor_read(y, out, sizeof out) == EMBER_OK &&
               ember_backward(ember_sum(y, EMBER_ALL_AXES, false)) == EMBER_OK &&
               ember_tensor_read(ember_tensor_grad(x), dx, sizeof dx) == EMBER_OK;
    CHECK(ran, "silu forward and backward: %s", ember_last_error(ctx));
    for (int i = 0; ran && i < 10; i++) {
        double v = host[i], s = 1.0 / (1.0 + exp(-v));
        CHECK(fabs(out[i] - v * s) <= 1e-6 * (1 + fabs(v)) && fabs(dx[i] - s * (1 + v * (1 - s))) <= 1e-6,
              "silu(%g) = %g, d/dx %g; expected %g, %g", v, out[i], dx[i], v * s, s * (1 + v * (1 - s)));
    }
    ember_layer_info info;
    CHECK(ember_model_layer_info(m, 0, &info) == EMBER_OK && strcmp(info.describe, "SiLU()") == 0 &&
              strcmp(info.type, "silu") == 0,
          "the silu row: %s %s", info.type, info.describe);
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    ember_model_free(m);
}

/* Random values into every parameter and buffer of a batch norm layer `name`
 * (weight, bias, running_mean, running_var), so that folding has something to fold. */
static void randomise_batch_norm(ember_params *p, const char *name, uint64_t seed)
{
    static const char *const parts[4] = {"weight", "bias", "running_mean", "running_var"};
    ember_rng rng = ember_rng_seed(seed);
    for (int k = 0; k < 4; k++) {
        char full[64];
        snprintf(full, sizeof full, "%s.%s", name, parts[k]);
        ember_tensor *t = ember_params_find(p, full);
        float v[8];
        int64_t n = t ? ember_tensor_numel(t) : 0;
        for (int64_t i = 0; i < n && i < 8; i++)
            v[i] = k == 3 ? ember_rng_uniform(&rng, 0.3f, 3.0f) : ember_rng_uniform(&rng, -1.0f, 1.0f);
        CHECK(t && n <= 8 && ember_tensor_write(t, v, (size_t)n * sizeof *v) == EMBER_OK, "setting %s", full);
    }
}

/* In evaluation a model folds each batch norm into the conv2d or linear
 * layer before it (models/model.c): the logits and the gradients must be
 * those of the layers one by one, and no batch norm runs. */
static void test_batch_norm_folding(ember_ctx *ctx)
{
    static const int64_t shape[3] = {2, 5, 5};
    ember_model *m = ember_model_parse(ctx, "folding",
                                       "conv: conv2d 4 kernel=3 padding=1\nbn: batch_norm2d\nrelu\nflatten\n"
                                       "fc: linear 6 bias=false\nbn1: batch_norm1d\nout: linear classes\n",
                                       3, shape, 3, 7);
    CHECK(m, "a model of conv2d, batch_norm2d, linear, batch_norm1d: %s", ember_last_error(ctx));
    if (!m)
        return;
    ember_params *p = ember_model_params(m);
    randomise_batch_norm(p, "bn", 21);
    randomise_batch_norm(p, "bn1", 22);
    ember_model_set_training(m, false);
    ember_tensor *x = random_batch(ctx, 3, shape, 23);
    ember_tensor *cw = ember_params_find(p, "conv.weight"), *bw = ember_params_find(p, "bn.weight");
    CHECK_OK(ctx, ember_tensor_set_requires_grad(x, true));
    /* the model, profiled */
    CHECK_OK(ctx, ember_profile_start(ctx, false));
    ember_tensor *y = ember_model_forward(m, x);
    CHECK_OK(ctx, ember_profile_stop(ctx));
    char *table = ember_profile_table(ctx);
    CHECK(table && strstr(table, "conv2d forward") && !strstr(table, "batch_norm forward") &&
              !strstr(table, "batch_norm_relu forward"),
          "a batch norm ran in evaluation, where it is folded:\n%s", table ? table : "(no profile)");
    ember_free(table);
    ember_profile_clear(ctx);
    float got[9], got_dx[150], got_dw[72], got_dbw[4];
    bool ran = y && ember_tensor_read(y, got, sizeof got) == EMBER_OK &&
               ember_backward(ember_sum(y, EMBER_ALL_AXES, false)) == EMBER_OK &&
               ember_tensor_read(ember_tensor_grad(x), got_dx, sizeof got_dx) == EMBER_OK &&
               ember_tensor_read(ember_tensor_grad(cw), got_dw, sizeof got_dw) == EMBER_OK &&
               ember_tensor_read(ember_tensor_grad(bw), got_dbw, sizeof got_dbw) == EMBER_OK;
    CHECK(ran, "the folded model forward and backward: %s", ember_last_error(ctx));
    /* the same layers one by one */
    CHECK_OK(ctx, ember_params_zero_grad(p));
    ember_tape_clear(ctx);
    ember_tensor *x2 = ember_tensor_copy(x);
    CHECK_OK(ctx, ember_tensor_set_requires_grad(x2, true));
#define P(name) ember_params_find(p, name)
    ember_tensor *h = ember_batch_norm(ember_conv2d(x2, cw, P("conv.bias"), 1, 1), bw, P("bn.bias"),
                                       P("bn.running_mean"), P("bn.running_var"), false, 0.1f, 1e-5f);
    h = ember_batch_norm(ember_linear(ember_flatten(ember_relu(h)), P("fc.weight"), NULL), P("bn1.weight"),
                         P("bn1.bias"), P("bn1.running_mean"), P("bn1.running_var"), false, 0.1f, 1e-5f);
    ember_tensor *want_y = ember_linear(h, P("out.weight"), P("out.bias"));
#undef P
    float want[9], want_dx[150], want_dw[72], want_dbw[4];
    ran = want_y && ember_tensor_read(want_y, want, sizeof want) == EMBER_OK &&
          ember_backward(ember_sum(want_y, EMBER_ALL_AXES, false)) == EMBER_OK &&
          ember_tensor_read(ember_tensor_grad(x2), want_dx, sizeof want_dx) == EMBER_OK &&
          ember_tensor_read(ember_tensor_grad(cw), want_dw, sizeof want_dw) == EMBER_OK &&
          ember_tensor_read(ember_tensor_grad(bw), want_dbw, sizeof want_dbw) == EMBER_OK;
    CHECK(ran, "the layers one by one: %s", ember_last_error(ctx));
    CHECK(max_diff(got, want, 9) <= 1e-5f && max_diff(got_dx, want_dx, 150) <= 1e-5f &&
              max_diff(got_dw, want_dw, 72) <= 1e-4f && max_diff(got_dbw, want_dbw, 4) <= 1e-4f,
          "folded and one by one differ: logits by %g, dx %g, dconv.weight %g, dbn.weight %g",
          max_diff(got, want, 9), max_diff(got_dx, want_dx, 150), max_diff(got_dw, want_dw, 72),
          max_diff(got_dbw, want_dbw, 4));
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    ember_tensor_free(x2);
    ember_model_free(m);
}

/* the folding model's logits computed layer by layer from its parameters, nothing kept */
static bool unfolded_logits(ember_ctx *ctx, ember_params *p, ember_tensor *x, float *out, size_t bytes)
{
#define P(name) ember_params_find(p, name)
    ember_tensor *h =
        ember_batch_norm(ember_conv2d(x, P("conv.weight"), P("conv.bias"), 1, 1), P("bn.weight"),
                         P("bn.bias"), P("bn.running_mean"), P("bn.running_var"), false, 0.1f, 1e-5f);
    h = ember_batch_norm(ember_linear(ember_flatten(ember_relu(h)), P("fc.weight"), NULL), P("bn1.weight"),
                         P("bn1.bias"), P("bn1.running_mean"), P("bn1.running_var"), false, 0.1f, 1e-5f);
    h = ember_linear(h, P("out.weight"), P("out.bias"));
#undef P
    bool ok = h && ember_tensor_read(h, out, bytes) == EMBER_OK;
    ember_tape_clear(ctx);
    return ok;
}

/* Prediction keeps each fold from one call to the next, and makes it again
 * after anything writes what it was made from: a weight written, an
 * optimizer's step, running statistics moved by a training forward, a
 * checkpoint loaded. Each time the logits are the unfolded layers'. */
static void test_kept_fold(ember_ctx *ctx, const char *dir)
{
    static const int64_t shape[3] = {2, 5, 5};
    ember_model *m = ember_model_parse(ctx, "kept-fold",
                                       "conv: conv2d 4 kernel=3 padding=1\nbn: batch_norm2d\nrelu\nflatten\n"
                                       "fc: linear 6 bias=false\nbn1: batch_norm1d\nout: linear classes\n",
                                       3, shape, 3, 7);
    ember_params *p = m ? ember_model_params(m) : NULL;
    ember_tensor *x = random_batch(ctx, 3, shape, 23);
    ember_tensor *y = ember_tensor_new(ctx, EMBER_I32, 1, (const int64_t[]){3});
    ember_optim *opt = p ? ember_sgd_new(p, ember_sgd_defaults(0.5f)) : NULL;
    float in[3 * 2 * 5 * 5], got[9], want[9], weights[4 * 2 * 3 * 3];
    char path[2200];
    snprintf(path, sizeof path, "%s/kept-fold.safetensors", dir);
    bool ready = m && x && y && opt && ember_tensor_read(x, in, sizeof in) == EMBER_OK &&
                 ember_tensor_write(y, (const int32_t[]){0, 1, 2}, 3 * sizeof(int32_t)) == EMBER_OK &&
                 ember_model_save(m, path, NULL) == EMBER_OK;
    CHECK(ready, "the kept-fold model: %s", ember_last_error(ctx));
    if (ready)
        randomise_batch_norm(p, "bn", 21);
    static const char *const after[] = {"the first prediction", "the same again",     "conv.weight written",
                                        "an optimizer's step",  "a training forward", "a checkpoint loaded"};
    for (int k = 0; ready && k < 6; k++) {
        if (k == 2) { /* each weight doubled */
            ember_tensor *w = ember_params_find(p, "conv.weight");
            ready = ember_tensor_read(w, weights, sizeof weights) == EMBER_OK;
            for (int i = 0; i < (int)(sizeof weights / sizeof *weights); i++)
                weights[i] *= 2.0f;
            ready = ready && ember_tensor_write(w, weights, sizeof weights) == EMBER_OK;
        } else if (k == 3 ||
                   k == 4) { /* a step (its forward moves the statistics too), then a forward alone */
            ready = ember_model_set_training(m, true) == EMBER_OK && ember_optim_zero_grad(opt) == EMBER_OK;
            ember_tensor *loss = ready ? ember_cross_entropy(ember_model_forward(m, x), y) : NULL;
            ready =
                loss && (k == 4 || (ember_backward(loss) == EMBER_OK && ember_optim_step(opt) == EMBER_OK));
            ember_tape_clear(ctx);
        } else if (k == 5) {
            ready = ember_model_load(m, path) == EMBER_OK;
        }
        ready = ready && ember_model_set_training(m, false) == EMBER_OK &&
                ember_model_predict(m, in, 3, got) == EMBER_OK;
        bool was = ember_set_grad_enabled(ctx, false);
        ready = ready && unfolded_logits(ctx, p, x, want, sizeof want);
        ember_set_grad_enabled(ctx, was);
        CHECK(ready && max_diff(got, want, 9) <= 1e-5f,
              "after %s, the kept fold's logits are %g from the layers'", after[k],
              ready ? max_diff(got, want, 9) : -1.0f);
    }
    CHECK(!ready || ember_last_status(ctx) == EMBER_OK, "kept fold: %s", ember_last_error(ctx));
    ember_optim_free(opt);
    ember_tensor_free(x);
    ember_tensor_free(y);
    ember_model_free(m);
}

/* rms_norm: each position's vector over its root mean square, times the weight "n.weight" (1 at first) */
static void test_rms_norm_layer(ember_ctx *ctx)
{
    static const int64_t shape[2] = {3, 4};
    ember_model *m = ember_model_parse(ctx, "rms", "n: rms_norm eps=1e-6\n", 2, shape, 4, 7);
    CHECK(m, "a model of one rms_norm layer: %s", ember_last_error(ctx));
    if (!m)
        return;
    ember_tensor *w = ember_params_find(ember_model_params(m), "n.weight");
    static const float scale[4] = {1.0f, 2.0f, 0.5f, -1.0f};
    static const float host[12] = {1.0f, -2.0f, 3.0f,  0.5f,  0.0f,   0.0f,
                                   0.0f, 1e-3f, 10.0f, 10.0f, -10.0f, 10.0f};
    int64_t batch[3] = {1, 3, 4};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 3, batch);
    float out[12] = {0};
    bool ran = w && ember_tensor_numel(w) == 4 && ember_tensor_write(w, scale, sizeof scale) == EMBER_OK &&
               x && ember_tensor_write(x, host, sizeof host) == EMBER_OK &&
               ember_tensor_read(ember_model_forward(m, x), out, sizeof out) == EMBER_OK;
    CHECK(ran, "rms_norm forward, with a weight n.weight of 4: %s", ember_last_error(ctx));
    for (int row = 0; ran && row < 3; row++) {
        double ms = 0;
        for (int i = 0; i < 4; i++)
            ms += host[row * 4 + i] * host[row * 4 + i] / 4.0;
        for (int i = 0; i < 4; i++) {
            double want = host[row * 4 + i] / sqrt(ms + 1e-6) * scale[i];
            CHECK(fabs(out[row * 4 + i] - want) <= 1e-5 * (1 + fabs(want)),
                  "rms_norm row %d, %d: %g, expected %g", row, i, out[row * 4 + i], want);
        }
    }
    ember_layer_info info;
    CHECK(ember_model_layer_info(m, 0, &info) == EMBER_OK &&
              strcmp(info.describe, "RMSNorm(4, eps=1e-06)") == 0 && info.params == 4,
          "the rms_norm row: %s, %lld parameters", info.describe, (long long)info.params);
    ember_tape_clear(ctx);
    ember_tensor_free(x);
    ember_model_free(m);
}

/* ---------------------------------------------------------- summary rows */

static void test_layer_info(ember_ctx *ctx)
{
    ember_model *m = ember_model_build(ctx, "resnet8", 3, mnist, 10, 0);
    if (!m) {
        CHECK(false, "%s", ember_last_error(ctx));
        return;
    }
    int rows = ember_model_layer_count(m);
    int64_t params = 0;
    double forward = 0;
    bool found_block = false;
    for (int i = 0; i < rows; i++) {
        ember_layer_info info;
        CHECK_OK(ctx, ember_model_layer_info(m, i, &info));
        if (info.depth == 0)
            params += info.params;
        forward += info.forward_flops;
        if (strcmp(info.name, "layer2.0") == 0) {
            found_block = true;
            CHECK(strcmp(info.type, "residual") == 0 && info.out_ndim == 3 && info.out_shape[0] == 32 &&
                      info.out_shape[1] == 14 && info.params == 4608 + 64 + 9216 + 64 + 512 + 64,
                  "layer2.0: %s %lldx%lldx%lld, %lld parameters", info.type, (long long)info.out_shape[0],
                  (long long)info.out_shape[1], (long long)info.out_shape[2], (long long)info.params);
        }
        if (strcmp(info.name, "layer1.0.conv1") == 0)
            CHECK(info.depth == 1 && info.forward_flops == 2.0 * 16 * 9 * 16 * 28 * 28 &&
                      info.backward_flops == 2.0 * info.forward_flops &&
                      strcmp(info.describe, "Conv2d(16, 16, 3, padding=1, bias=False)") == 0,
                  "layer1.0.conv1: depth %d, %g FLOPs forward, %g backward, %s", info.depth,
                  info.forward_flops, info.backward_flops, info.describe);
        if (strcmp(info.name, "conv1") == 0) /* nothing before it needs a gradient */
            CHECK(info.backward_flops == info.forward_flops, "conv1's backward: %g", info.backward_flops);
    }
    CHECK(found_block && params == ember_params_numel(ember_model_params(m)),
          "rows add up to %lld parameters", (long long)params);
    CHECK(forward > 18e6 && forward < 20e6, "resnet8's forward pass: %g FLOPs", forward);
    ember_layer_info info;
    CHECK(ember_model_layer_info(m, rows, &info) == EMBER_ERR_ARG, "a row past the end");
    ember_model_free(m);
}

/* A frozen layer (its parameters' requires_grad off) between two that train
 * stays bit for bit under every optimizer, weight decay and momentum
 * included, while the others move: the step's runs skip it on every device. */
static void test_frozen_layer(ember_ctx *ctx)
{
    static const int64_t shape[1] = {5};
    const char *text = "a: linear 6\nrelu\nb: linear 4\nrelu\nc: linear classes\n";
    float xs[8 * 5];
    int32_t ys[8];
    ember_rng rng = ember_rng_seed(5);
    for (int i = 0; i < COUNT(xs); i++)
        xs[i] = ember_rng_uniform(&rng, -1.0f, 1.0f);
    for (int i = 0; i < COUNT(ys); i++)
        ys[i] = i % 3;
    for (int kind = 0; kind < 3; kind++) { /* sgd with momentum, adamw, adam: each with weight decay */
        ember_model *m = ember_model_parse(ctx, "frozen", text, 1, shape, 3, 9);
        ember_params *p = m ? ember_model_params(m) : NULL;
        ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 2, (const int64_t[]){8, 5});
        ember_tensor *y = ember_tensor_new(ctx, EMBER_I32, 1, (const int64_t[]){8});
        ember_sgd_options so = ember_sgd_defaults(0.1f);
        ember_adam_options ao = ember_adam_defaults(0.01f);
        so.momentum = 0.9f, so.weight_decay = ao.weight_decay = 0.1f;
        ember_optim *opt = !p          ? NULL
                           : kind == 0 ? ember_sgd_new(p, so)
                           : kind == 1 ? ember_adamw_new(p, ao)
                                       : ember_adam_new(p, ao);
        float before[3][4 * 6], after[3][4 * 6];
        const char *names[3] = {"a.weight", "b.weight", "c.weight"};
        bool ready = opt && x && y && ember_tensor_write(x, xs, sizeof xs) == EMBER_OK &&
                     ember_tensor_write(y, ys, sizeof ys) == EMBER_OK &&
                     ember_tensor_set_requires_grad(ember_params_find(p, "b.weight"), false) == EMBER_OK &&
                     ember_tensor_set_requires_grad(ember_params_find(p, "b.bias"), false) == EMBER_OK;
        for (int k = 0; ready && k < 3; k++) {
            ember_tensor *w = ember_params_find(p, names[k]);
            ready = ember_tensor_read(w, before[k], ember_tensor_bytes(w)) == EMBER_OK;
        }
        for (int step = 0; ready && step < 2; step++) {
            ready = ember_optim_zero_grad(opt) == EMBER_OK &&
                    ember_backward(ember_cross_entropy(ember_model_forward(m, x), y)) == EMBER_OK &&
                    ember_optim_step(opt) == EMBER_OK;
            ember_tape_clear(ctx);
        }
        for (int k = 0; ready && k < 3; k++) {
            ember_tensor *w = ember_params_find(p, names[k]);
            ready = ember_tensor_read(w, after[k], ember_tensor_bytes(w)) == EMBER_OK;
        }
        CHECK(ready, "optimizer %d with a frozen layer: %s", kind, ember_last_error(ctx));
        if (ready)
            CHECK(memcmp(before[1], after[1], 4 * 6 * sizeof(float)) == 0 &&
                      memcmp(before[0], after[0], 6 * 5 * sizeof(float)) != 0 &&
                      memcmp(before[2], after[2], 3 * 4 * sizeof(float)) != 0,
                  "optimizer %d: the frozen layer b stays, a and c train", kind);
        ember_optim_free(opt);
        ember_tensor_free(x);
        ember_tensor_free(y);
        ember_model_free(m);
    }
}

int main(void)
{
    ember_ctx *ctx = test_ctx(NULL);
    const char *tmp = ctx ? test_tmpdir() : NULL;
    if (!ctx || !tmp) {
        ember_ctx_free(ctx);
        return TEST_SKIP;
    }
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", tmp);
    test_mistakes(ctx);
    test_zoo(ctx);
    test_gpt_tiny(ctx);
    test_modes(ctx, dir);
    test_wrap(ctx, dir);
    test_hostile_checkpoints(ctx, dir);
    test_relu_pool_order(ctx);
    test_silu_layer(ctx);
    test_rms_norm_layer(ctx);
    test_batch_norm_folding(ctx);
    test_kept_fold(ctx, dir);
    test_layer_info(ctx);
    test_frozen_layer(ctx);
    test_cleanup_dir(dir);
    ember_ctx_free(ctx);
    return test_finish("test_models");
}
