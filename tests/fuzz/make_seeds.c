/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/make_seeds.c — the fuzzers' starting corpora, made from real
 * files: the first images of Debian's Fashion-MNIST as IDX (plain and
 * gzipped), as CIFAR-10 records, as PNG, JPEG (baseline and progressive,
 * gray and colour) and BMP; a checkpoint of the safetensors harness's
 * model; the trace of two profiled training steps of that model; the model
 * files given on the command line; checkpoints of the built-in models; a
 * checkpoint and training state as `ember train` saves them (its own
 * code, tools/train-state.c); metrics lines as it writes them; the images
 * again, each behind the byte that chooses predict's model; a CSV table of
 * the images' block means (with quoted class names, and with CRLF lines);
 * NumPy's .npy files of the images and labels, and .npz archives of them,
 * stored and deflated; a text of words and one of every byte, the
 * vocabulary ember train stores for the words with bytes to print, and the
 * output helper's ten cases of what can be in a file's way; a tiny GGUF
 * language model's file; lines of a chat's conversations.
 *
 *   make_seeds OUT [FASHION-MNIST-DIR] [MODEL-FILE...]
 * writes OUT/<harness>/<seed> for idx, cifar, safetensors, onnx, png, jpeg,
 * bmp, trace, model_file, model_checkpoint, resume, plot, predict, csv,
 * npy, text, vocab, output, gguf and chat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include <jpeglib.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb_image_write.h>
#pragma GCC diagnostic pop

#include "ember.h"
#include "train.h"

#define SIDE   28
#define IMAGES 3

static char out[1024];

static void put_prefixed(const char *harness, const char *name, const void *prefix, size_t prefix_size,
                         const void *data, size_t size)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", out, harness);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", out, harness, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(prefix, 1, prefix_size, f) != prefix_size || fwrite(data, 1, size, f) != size) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static void put(const char *harness, const char *name, const void *data, size_t size)
{
    put_prefixed(harness, name, "", 0, data, size);
    /* every image is also predict's, behind the byte choosing its model and --resize */
    if (strcmp(harness, "png") == 0 || strcmp(harness, "jpeg") == 0 || strcmp(harness, "bmp") == 0) {
        uint8_t mode = (uint8_t)(strlen(name) % 4);
        put_prefixed("predict", name, &mode, 1, data, size);
    }
}

static uint8_t *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    long len = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (len >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)len + 1)) &&
        fread(data, 1, (size_t)len, f) == (size_t)len) {
        *size = (size_t)len;
    } else {
        perror(path);
        exit(1);
    }
    fclose(f);
    return data;
}

static size_t gzip(const uint8_t *in, size_t len, uint8_t *dst, size_t cap)
{
    z_stream z = {0};
    if (deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) /* 31: a gzip wrapper */
        exit(1);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = dst;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        exit(1);
    size_t n = z.total_out;
    deflateEnd(&z);
    return n;
}

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void idx_seeds(const uint8_t *pixels, const uint8_t *labels)
{
    static uint8_t file[1 + 16 + IMAGES * SIDE * SIDE], packed[8192];
    /* images: flag 0 plain, 2 gzipped */
    file[0] = 0;
    uint8_t *h = file + 1;
    memset(h, 0, 16);
    h[2] = 8, h[3] = 3;
    be32(h + 4, IMAGES), be32(h + 8, SIDE), be32(h + 12, SIDE);
    memcpy(h + 16, pixels, IMAGES * SIDE * SIDE);
    size_t len = 1 + 16 + IMAGES * SIDE * SIDE;
    put("idx", "images", file, len);
    packed[0] = 2;
    put("idx", "images.gz", packed, 1 + gzip(file + 1, len - 1, packed + 1, sizeof packed - 1));
    /* labels: flag 1 plain, 3 gzipped */
    uint8_t lab[1 + 8 + IMAGES] = {1, 0, 0, 8, 1};
    be32(lab + 5, IMAGES);
    memcpy(lab + 9, labels, IMAGES);
    put("idx", "labels", lab, sizeof lab);
    packed[0] = 3;
    put("idx", "labels.gz", packed, 1 + gzip(lab + 1, sizeof lab - 1, packed + 1, sizeof packed - 1));
}

static void cifar_seeds(const uint8_t *pixels, const uint8_t *labels)
{
    static uint8_t records[IMAGES * (1 + 3 * 32 * 32)];
    for (int i = 0; i < IMAGES; i++) {
        uint8_t *r = records + i * (1 + 3 * 32 * 32);
        r[0] = labels[i];
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < 32; y++)
                for (int x = 0; x < 32; x++) {
                    int sy = y - 2, sx = x - 2; /* 28 x 28 in the middle of 32 x 32 */
                    bool in = sy >= 0 && sy < SIDE && sx >= 0 && sx < SIDE;
                    r[1 + (c * 32 + y) * 32 + x] = in ? pixels[i * SIDE * SIDE + sy * SIDE + sx] : 0;
                }
    }
    put("cifar", "three-records", records, sizeof records);
    put("cifar", "one-record", records, 1 + 3 * 32 * 32);
    /* CIFAR-100: a coarse and a fine label before each image */
    static uint8_t records100[IMAGES * (2 + 3 * 32 * 32)];
    for (int i = 0; i < IMAGES; i++) {
        uint8_t *r = records100 + i * (2 + 3 * 32 * 32);
        r[0] = labels[i] * 2;
        r[1] = labels[i] * 10 + 3;
        memcpy(r + 2, records + i * (1 + 3 * 32 * 32) + 1, 3 * 32 * 32);
    }
    put("cifar", "three-records-cifar100", records100, sizeof records100);
    /* and its class names, one a line */
    static char names[100 * 16];
    for (int i = 0; i < 100; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "class_%d\n", i);
    put("cifar", "cifar100-names", names, strlen(names));
}

struct buffer {
    uint8_t *data;
    size_t len, cap;
};

static void append(void *context, void *data, int size)
{
    struct buffer *b = context;
    if (b->len + (size_t)size > b->cap) {
        b->cap = (b->len + (size_t)size) * 2;
        b->data = realloc(b->data, b->cap);
        if (!b->data)
            exit(1);
    }
    memcpy(b->data + b->len, data, (size_t)size);
    b->len += (size_t)size;
}

static void jpeg_seed(const char *name, const uint8_t *pixels, int channels, bool progressive)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    unsigned char *mem = NULL;
    unsigned long size = 0;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &mem, &size);
    c.image_width = SIDE;
    c.image_height = SIDE;
    c.input_components = channels;
    c.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + c.next_scanline * SIDE * channels);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    put("jpeg", name, mem, size);
    free(mem);
}

static void image_seeds(const uint8_t *gray)
{
    uint8_t rgb[SIDE * SIDE * 3];
    for (int i = 0; i < SIDE * SIDE; i++) /* a colour version: the image in red, its negative in blue */
        rgb[3 * i] = gray[i], rgb[3 * i + 1] = (uint8_t)(gray[i] / 2),
                rgb[3 * i + 2] = (uint8_t)(255 - gray[i]);
    struct buffer b = {0};
    stbi_write_png_to_func(append, &b, SIDE, SIDE, 1, gray, SIDE);
    put("png", "gray.png", b.data, b.len);
    b.len = 0;
    stbi_write_png_to_func(append, &b, SIDE, SIDE, 3, rgb, SIDE * 3);
    put("png", "rgb.png", b.data, b.len);
    b.len = 0;
    stbi_write_bmp_to_func(append, &b, SIDE, SIDE, 3, rgb);
    put("bmp", "rgb.bmp", b.data, b.len);
    b.len = 0;
    stbi_write_bmp_to_func(append, &b, SIDE, SIDE, 1, gray);
    put("bmp", "gray.bmp", b.data, b.len);
    free(b.data);
    jpeg_seed("gray.jpg", gray, 1, false);
    jpeg_seed("rgb.jpg", rgb, 3, false);
    jpeg_seed("progressive.jpg", rgb, 3, true);
}

static void safetensors_seeds(void)
{
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    if (ember_ctx_use_device(ctx, "cpu") != EMBER_OK)
        exit(1);
    const int64_t shape[1] = {6};
    /* the harness's own model (fuzz_safetensors.c), so that the seed loads */
    ember_model *m = ember_model_parse(ctx, "fuzz", "fc: linear 4\nbn: batch_norm1d\nout: linear classes\n",
                                       1, shape, 3, 1);
    void *data = NULL;
    size_t size = 0;
    const char *meta[] = {"note", "a seed", NULL};
    if (!m || ember_model_save_memory(m, meta, &data, &size) != EMBER_OK)
        exit(1);
    put("safetensors", "model.safetensors", data, size);
    free(data);
    /* the same model and a small residual network as ONNX files, for the onnx harness */
    char onnx_dir[1100], onnx_path[1200];
    snprintf(onnx_dir, sizeof onnx_dir, "%s/onnx", out);
    mkdir(onnx_dir, 0755);
    snprintf(onnx_path, sizeof onnx_path, "%s/features.onnx", onnx_dir);
    const int64_t image[3] = {1, 6, 6};
    ember_model *res = ember_model_parse(ctx, "fuzz-res",
                                         "c: conv2d 4 kernel=3 padding=1 bias=false\nb: batch_norm2d\ngelu\n"
                                         "r: residual\n  c: conv2d 4 kernel=3 padding=1\n  leaky_relu\nend\n"
                                         "avg_pool2d 2 stride=1\nsigmoid\nmax_pool2d 2\nglobal_avg_pool2d\n"
                                         "fc: linear classes\n",
                                         3, image, 3, 1);
    if (!res || ember_model_export_onnx(m, onnx_path, meta) != EMBER_OK)
        exit(1);
    snprintf(onnx_path, sizeof onnx_path, "%s/residual.onnx", onnx_dir);
    if (ember_model_export_onnx(res, onnx_path, meta) != EMBER_OK)
        exit(1);
    ember_model_free(res);

    /* two training steps of it, traced, for `ember plot`'s trace reader */
    char trace_dir[1100], trace_path[1200];
    snprintf(trace_dir, sizeof trace_dir, "%s/trace", out);
    mkdir(trace_dir, 0755);
    snprintf(trace_path, sizeof trace_path, "%s/two-steps.json", trace_dir);
    const int64_t x_shape[2] = {8, 6}, y_shape[1] = {8};
    ember_tensor *x = ember_tensor_new(ctx, EMBER_F32, 2, x_shape),
                 *y = ember_tensor_new(ctx, EMBER_I32, 1, y_shape);
    ember_optim *opt = ember_adam_new(ember_model_params(m), ember_adam_defaults(0.001f));
    float inputs[8 * 6];
    for (int i = 0; i < 8 * 6; i++)
        inputs[i] = (float)(i % 7) * 0.25f;
    if (!x || !y || !opt || ember_tensor_write(x, inputs, sizeof inputs) != EMBER_OK ||
        ember_profile_start(ctx, true) != EMBER_OK)
        exit(1);
    for (int step = 0; step < 2; step++) {
        ember_optim_zero_grad(opt);
        if (ember_backward(ember_cross_entropy(ember_model_forward(m, x), y)) != EMBER_OK ||
            ember_optim_step(opt) != EMBER_OK)
            exit(1);
        ember_tape_clear(ctx);
    }
    ember_profile_stop(ctx);
    if (ember_profile_write_trace(ctx, trace_path) != EMBER_OK)
        exit(1);
    ember_optim_free(opt);
    ember_tensor_free(x);
    ember_tensor_free(y);
    ember_model_free(m);
    ember_ctx_free(ctx);
}

/* Each image's mean ink in its 7x7 grid of 4x4 blocks, a row per image,
 * the label's name last; `crlf` ends lines the Windows way. */
static void csv_seeds(const uint8_t *pixels, const uint8_t *labels)
{
    static const char *const names[] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                        "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    for (int crlf = 0; crlf < 2; crlf++) {
        char table[8192];
        size_t n = 0;
        const char *end = crlf ? "\r\n" : "\n";
        for (int b = 0; b < 49; b++)
            n += (size_t)snprintf(table + n, sizeof table - n, "b%d,", b);
        n += (size_t)snprintf(table + n, sizeof table - n, "class%s", end);
        for (int i = 0; i < IMAGES * 2; i++) { /* each image twice: every class can hold one out */
            const uint8_t *im = pixels + (i % IMAGES) * SIDE * SIDE;
            for (int b = 0; b < 49; b++) {
                int sum = 0;
                for (int y = 0; y < 4; y++)
                    for (int x = 0; x < 4; x++)
                        sum += im[(b / 7 * 4 + y) * SIDE + b % 7 * 4 + x];
                n += (size_t)snprintf(table + n, sizeof table - n, "%.2f,", sum / 16.0);
            }
            n += (size_t)snprintf(table + n, sizeof table - n, "\"%s\"%s", names[labels[i % IMAGES] % 10],
                                  end);
        }
        put("csv", crlf ? "blocks-crlf.csv" : "blocks.csv", table, n);
    }
}

/* A .npy file of that dtype and shape, holding `data`, in memory: its length. */
static size_t npy_file(uint8_t *dst, const char *descr, const char *shape, const void *data, size_t bytes)
{
    char header[128];
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr,
                       shape);
    while ((10 + len + 1) % 64)
        header[len++] = ' ';
    header[len++] = '\n';
    memcpy(dst, "\x93NUMPY\x01\x00", 8);
    dst[8] = (uint8_t)len, dst[9] = (uint8_t)(len >> 8);
    memcpy(dst + 10, header, (size_t)len);
    memcpy(dst + 10 + len, data, bytes);
    return 10 + (size_t)len + bytes;
}

static void le16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void le32(uint8_t *p, uint32_t v) { le16(p, v), le16(p + 2, v >> 16); }

/* A zip of the entries, stored or raw-deflated as numpy.savez and
 * savez_compressed write them (without their zip64 extras); its length. */
static size_t zip(uint8_t *dst, size_t cap, const char *const *names, uint8_t *const *files,
                  const size_t *sizes, int n, bool deflated)
{
    size_t at = 0, offsets[8];
    uint32_t crcs[8], packed[8];
    for (int i = 0; i < n; i++) {
        size_t name = strlen(names[i]);
        offsets[i] = at;
        crcs[i] = (uint32_t)crc32(0, files[i], (uInt)sizes[i]);
        uint8_t *h = dst + at, *body = h + 30 + name;
        if (deflated) {
            z_stream z = {0};
            if (deflateInit2(&z, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                exit(1);
            z.next_in = files[i];
            z.avail_in = (uInt)sizes[i];
            z.next_out = body;
            z.avail_out = (uInt)(cap - (size_t)(body - dst));
            if (deflate(&z, Z_FINISH) != Z_STREAM_END)
                exit(1);
            packed[i] = (uint32_t)z.total_out;
            deflateEnd(&z);
        } else {
            memcpy(body, files[i], sizes[i]);
            packed[i] = (uint32_t)sizes[i];
        }
        memset(h, 0, 30);
        memcpy(h, "PK\3\4", 4);
        le16(h + 4, 20), le16(h + 8, deflated ? 8 : 0), le32(h + 14, crcs[i]), le32(h + 18, packed[i]);
        le32(h + 22, (uint32_t)sizes[i]), le16(h + 26, (uint32_t)name);
        memcpy(h + 30, names[i], name);
        at += 30 + name + packed[i];
    }
    size_t dir = at;
    for (int i = 0; i < n; i++) {
        size_t name = strlen(names[i]);
        uint8_t *e = dst + at;
        memset(e, 0, 46);
        memcpy(e, "PK\1\2", 4);
        le16(e + 4, 20), le16(e + 6, 20), le16(e + 10, deflated ? 8 : 0), le32(e + 16, crcs[i]);
        le32(e + 20, packed[i]), le32(e + 24, (uint32_t)sizes[i]), le16(e + 28, (uint32_t)name);
        le32(e + 42, (uint32_t)offsets[i]);
        memcpy(e + 46, names[i], name);
        at += 46 + name;
    }
    uint8_t *end = dst + at;
    memset(end, 0, 22);
    memcpy(end, "PK\5\6", 4);
    le16(end + 8, (uint32_t)n), le16(end + 10, (uint32_t)n), le32(end + 12, (uint32_t)(at - dir));
    le32(end + 16, (uint32_t)dir);
    return at + 22;
}

static void npy_seeds(const uint8_t *pixels, const uint8_t *labels)
{
    static uint8_t files[4][IMAGES * SIDE * SIDE + 256], archive[4 * (IMAGES * SIDE * SIDE + 512)];
    int64_t wide[IMAGES];
    for (int i = 0; i < IMAGES; i++)
        wide[i] = labels[i] % 10;
    size_t sizes[4];
    sizes[0] = npy_file(files[0], "|u1", "(3, 1, 28, 28)", pixels, IMAGES * SIDE * SIDE);
    sizes[1] = npy_file(files[1], "<i8", "(3,)", wide, sizeof wide);
    sizes[2] = npy_file(files[2], "|u1", "(2, 784)", pixels, 2 * SIDE * SIDE);
    sizes[3] = npy_file(files[3], "<i8", "(2,)", wide, 2 * sizeof *wide);
    put("npy", "x_train.npy", files[0], sizes[0]);
    put("npy", "y_train.npy", files[1], sizes[1]);
    static const char *const names[] = {"x_train.npy", "y_train.npy", "x_test.npy", "y_test.npy"};
    uint8_t *const entries[] = {files[0], files[1], files[0], files[1]};
    size_t entry_sizes[] = {sizes[0], sizes[1], sizes[0], sizes[1]};
    put("npy", "stored.npz", archive, zip(archive, sizeof archive, names, entries, entry_sizes, 4, false));
    put("npy", "deflated.npz", archive, zip(archive, sizeof archive, names, entries, entry_sizes, 4, true));
    uint8_t *const rows[] = {files[2], files[3], files[2], files[3]};
    size_t row_sizes[] = {sizes[2], sizes[3], sizes[2], sizes[3]};
    put("npy", "rows.npz", archive, zip(archive, sizeof archive, names, rows, row_sizes, 4, true));
}

/* Checkpoints as ember_model_from_checkpoint reads them: each built-in
 * model small enough for 1x8x8 or 3x8x8 samples and 3 classes (a seed of
 * hundreds of KB would slow every input made from it), and a small model
 * of every layer type, residual blocks and their shortcuts included. */
static void model_checkpoint_seeds(ember_ctx *ctx)
{
    static const char every_layer[] = "input 3x8x8\n"
                                      "conv1: conv2d 4 kernel=3 padding=same bias=false\n"
                                      "bn1: batch_norm2d\n"
                                      "relu\n"
                                      "layer1.0: residual\n"
                                      "    conv2d 4 kernel=3 stride=2 padding=1\n"
                                      "    batch_norm2d momentum=0.2 affine=false\n"
                                      "    leaky_relu 0.1\n"
                                      "shortcut\n"
                                      "    downsample.0: conv2d 4 kernel=1 stride=2 bias=false\n"
                                      "end\n"
                                      "max_pool2d 2 stride=1\n"
                                      "avg_pool2d 2\n"
                                      "sigmoid\n"
                                      "flatten\n"
                                      "dropout 0.25\n"
                                      "linear 6\n"
                                      "batch_norm1d eps=0.001\n"
                                      "tanh\n"
                                      "gelu\n"
                                      "fc: linear classes\n";
    for (const char *const *name = ember_model_names(); *name; name++) {
        for (int64_t c = 1; c <= 3; c += 2) {
            const int64_t shape[3] = {c, 8, 8};
            ember_model *m = ember_model_build(ctx, *name, 3, shape, 3, 1);
            void *data = NULL;
            size_t size = 0;
            char seed[160];
            snprintf(seed, sizeof seed, "%s-%lldx8x8.safetensors", *name, (long long)c);
            if (m && ember_model_save_memory(m, NULL, &data, &size) == EMBER_OK && size <= 32768)
                put("model_checkpoint", seed, data, size);
            free(data);
            ember_model_free(m);
            ember_clear_error(ctx);
        }
    }
    const int64_t shape[3] = {3, 8, 8};
    ember_model *m = ember_model_parse(ctx, "every-layer.model", every_layer, 3, shape, 3, 1);
    void *data = NULL;
    size_t size = 0;
    if (!m || ember_model_save_memory(m, NULL, &data, &size) != EMBER_OK)
        exit(1);
    put("model_checkpoint", "every-layer.safetensors", data, size);
    free(data);
    ember_model_free(m);
}

/* A checkpoint and its training state as ember train saves them (with
 * tools/train-state.c's train_save), one seed each for adam and sgd:
 * a 4-byte length, the checkpoint, the state (fuzz_resume.c). */
static void resume_seeds(ember_ctx *ctx)
{
    const int64_t shape[1] = {6};
    ember_data_options data = {
        .kind = "random", .sample_ndim = 1, .sample_shape = {6}, .count = 64, .classes = 3, .seed = 5};
    ember_dataset *train = ember_dataset_open(ctx, &data, EMBER_TRAIN);
    char dir[1100], path[1200], state[1300];
    snprintf(dir, sizeof dir, "%s/resume-files", out);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/run.safetensors", dir);
    snprintf(state, sizeof state, "%s/run.state.safetensors", dir);
    for (int sgd = 0; sgd <= 1; sgd++) {
        /* clang-format off */
        ember_model *m = ember_model_parse(ctx, "fuzz", "fc: linear 4\nbn: batch_norm1d\nout: linear classes\n", 1,
                                           shape, 3, 1);
        struct train_options o = {.model = "fuzz", .optim = sgd ? "sgd" : "adam", .epochs = 3, .batch = 8,
                                  .lr = 0.01, .momentum = sgd ? 0.9 : 0.0, .schedule = sgd ? "step" : "cosine",
                                  .warmup = 0.5, .gamma = 0.1, .augment = "none", .run_id = "seed", .eval = true,
                                  /* clang-format on */
                                  .data = data};
        ember_optim *opt = sgd ? ember_sgd_new(ember_model_params(m), ember_sgd_defaults(0.01f))
                               : ember_adam_new(ember_model_params(m), ember_adam_defaults(0.01f));
        ember_batcher *b = train ? ember_batcher_new(train, 8, true, 5) : NULL;
        ember_tensor *x, *y;
        if (!m || !opt || !b || (ember_batcher_next(b, &x, &y) != EMBER_OK || !x))
            exit(1);
        ember_optim_zero_grad(opt); /* a step, so that the optimizer's state is not all zeros */
        if (ember_backward(ember_cross_entropy(ember_model_forward(m, x), y)) != EMBER_OK ||
            ember_optim_step(opt) != EMBER_OK)
            exit(1);
        ember_tape_clear(ctx);
        /* clang-format off */
        struct train_position pos = {.epochs_done = 1, .step_in_epoch = 3, .total_steps = 11, .loss_sum = 3.3,
                                     .correct = 10, .seen = 24, .best_acc = 0.5, .best_epoch = 1};
        /* clang-format on */
        if (train_save(&o, ctx, m, opt, train, &pos, path) != EXIT_OK)
            exit(1);
        size_t model_size = 0, state_size = 0;
        uint8_t *model_bytes = slurp(path, &model_size), *state_bytes = slurp(state, &state_size);
        uint8_t *both = malloc(4 + model_size + state_size);
        if (!both)
            exit(1);
        for (int i = 0; i < 4; i++)
            both[i] = (uint8_t)(model_size >> (8 * i));
        memcpy(both + 4, model_bytes, model_size);
        memcpy(both + 4 + model_size, state_bytes, state_size);
        put("resume", sgd ? "sgd-step" : "adam-cosine", both, 4 + model_size + state_size);
        free(both);
        free(model_bytes);
        free(state_bytes);
        ember_batcher_free(b);
        ember_optim_free(opt);
        ember_model_free(m);
        train_options_free(&o);
    }
    ember_dataset_free(train);
}

/* Metrics lines as ember train writes them: two runs, epochs and
 * --log-every windows, a null where a value was not finite. */
static void plot_seeds(void)
{
    static const char metrics[] =
        "{\"run\": \"a\", \"epoch\": 1, \"step\": 50, \"train_loss\": 0.9, \"train_acc\": 0.7, \"lr\": "
        "0.001, "
        "\"images_per_s\": 900.0}\n"
        "{\"run\": \"a\", \"epoch\": 1, \"train_loss\": 0.8, \"train_acc\": 0.71, \"test_loss\": 0.6, "
        "\"test_acc\": 0.78, \"images_per_s\": 950.1, \"seconds\": 1.2, \"eval_seconds\": 0.1, \"steps\": "
        "94, "
        "\"total_steps\": 94, \"device\": \"cpu\", \"model\": \"simplecnn\", \"data\": \"fashion-mnist\", "
        "\"batch\": 64, \"lr\": 0.001, \"lr_last\": 0.001, \"schedule\": \"constant\", \"optim\": \"adam\", "
        "\"seed\": 0, \"first_step_s\": 0.1, \"peak_rss_mib\": 50.0}\n"
        "{\"run\": \"a\", \"epoch\": 2, \"train_loss\": 0.5, \"train_acc\": 0.81, \"test_loss\": null, "
        "\"test_acc\": 0.8, \"steps\": 94, \"total_steps\": 188, \"model\": \"simplecnn\"}\n"
        "{\"run\": \"b\", \"epoch\": 1, \"train_loss\": 1.1, \"train_acc\": 0.6, \"test_loss\": 0.9, "
        "\"test_acc\": 0.7, \"steps\": 90, \"model\": \"kerascnn\"}\n";
    put("plot", "two-runs.jsonl", metrics, sizeof metrics - 1);
}

/* Text (tests/fuzz/fuzz_text.c: a context byte, then the file), the
 * vocabulary ember train stores for it and bytes a model of it could print
 * (fuzz_vocab.c), and the output helper's cases (fuzz_output.c: what is in
 * the way, how it is written, a name, the bytes). */
static void text_seeds(void)
{
    static const char words[] = "the cat sat on the mat. a dog ran far; ";
    char text[1 + 40 * (sizeof words - 1)];
    text[0] = 31; /* a context of 32 */
    for (int i = 0; i < 40; i++)
        memcpy(text + 1 + i * (sizeof words - 1), words, sizeof words - 1);
    put("text", "words.txt", text, sizeof text);
    uint8_t all[1 + 4 * 256];
    all[0] = 7;
    for (int i = 0; i < 4 * 256; i++)
        all[1 + i] = (uint8_t)(i * 37);
    put("text", "every-byte.bin", all, sizeof all);
    /* the distinct bytes of words, ascending, in hex; then text with escapes and UTF-8 */
    bool seen[256] = {false};
    for (size_t i = 0; i < sizeof words - 1; i++)
        seen[(uint8_t)words[i]] = true;
    char vocab[600] = "";
    for (int b = 0; b < 256; b++)
        if (seen[b])
            snprintf(vocab + strlen(vocab), sizeof vocab - strlen(vocab), "%02x", b);
    static const char shown[] = "\nthe cat \x1b[31m sat\x00 on \xc3\xa9 \xe2\x82\xac \xc2\x9b \xff";
    char vocab_seed[1200];
    int n = snprintf(vocab_seed, sizeof vocab_seed, "%s", vocab);
    memcpy(vocab_seed + n, shown, sizeof shown - 1);
    put("vocab", "words-and-escapes", vocab_seed, (size_t)n + sizeof shown - 1);
    for (int kind = 0; kind < 10; kind++) {
        char name[32];
        uint8_t scenario[64] = {(uint8_t)kind, (uint8_t)(kind % 4)};
        int len = snprintf((char *)scenario + 2, sizeof scenario - 2,
                           "run.onnx\xff"
                           "0123456789");
        snprintf(name, sizeof name, "kind-%d", kind);
        put("output", name, scenario, 2 + (size_t)len);
    }
}

/* a tiny GGUF language model's file: llama metadata of every value type,
 * a byte-level vocabulary (the 256 byte tokens, two merges, two special
 * tokens), and a Q4_1 and an F32 tensor, aligned as GGUF wants */
struct gguf_buf {
    uint8_t b[1 << 16];
    size_t n;
};
static void g_bytes(struct gguf_buf *g, const void *p, size_t n) { memcpy(g->b + g->n, p, n), g->n += n; }
static void g_u32(struct gguf_buf *g, uint32_t v) { le32(g->b + g->n, v), g->n += 4; }
static void g_u64(struct gguf_buf *g, uint64_t v) { g_u32(g, (uint32_t)v), g_u32(g, (uint32_t)(v >> 32)); }
static void g_str(struct gguf_buf *g, const char *s) { g_u64(g, strlen(s)), g_bytes(g, s, strlen(s)); }
static void g_key(struct gguf_buf *g, const char *key, uint32_t type) { g_str(g, key), g_u32(g, type); }

/* Lines of a chat's JSON Lines (fuzz_chat.c): one turn and many, a system
 * message, escapes and surrogate pairs, keys passed over, nesting */
static void chat_seeds(void)
{
    static const char *const lines[] = {
        "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", "
        "\"content\": \"Hello!\"}]}",
        "{\"id\": 7, \"meta\": {\"tags\": [\"a\", -1.5e-3, null, true, false, {\"x\": [[]]}]}, \"messages\": "
        "[{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"name\": \"ann\", "
        "\"content\": \"caf\\u00e9 \\ud83d\\ude00 \\\"q\\\" \\\\ \\n\\t\"}, {\"role\": \"assistant\", "
        "\"content\": \"\u65e5\u672c <|im_end|>\"}]}",
        "{\"messages\": []}",
    };
    char name[32];
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        snprintf(name, sizeof name, "line%zu.json", i);
        put("chat", name, lines[i], strlen(lines[i]));
    }
}

static void gguf_seeds(void)
{
    static struct gguf_buf g;
    g_bytes(&g, "GGUF", 4);
    g_u32(&g, 3);
    g_u64(&g, 2);  /* tensors */
    g_u64(&g, 13); /* keys */
    g_key(&g, "general.architecture", 8), g_str(&g, "llama");
    g_key(&g, "llama.block_count", 4), g_u32(&g, 1);
    g_key(&g, "llama.embedding_length", 4), g_u32(&g, 32);
    g_key(&g, "llama.rope.freq_base", 6), g_u32(&g, 0x47c35000); /* 100000.0f */
    g_key(&g, "llama.context_length", 10), g_u64(&g, 256);
    g_key(&g, "tokenizer.ggml.model", 8), g_str(&g, "gpt2");
    g_key(&g, "tokenizer.ggml.pre", 8), g_str(&g, "smollm");
    g_key(&g, "tokenizer.ggml.add_bos_token", 7), g_bytes(&g, "\0", 1);
    g_key(&g, "tokenizer.ggml.eos_token_id", 4), g_u32(&g, 258);
    /* the byte tokens as GPT-2's byte map writes them, then merges' results and the specials */
    g_key(&g, "tokenizer.ggml.tokens", 9), g_u32(&g, 8), g_u64(&g, 261);
    int next = 256;
    for (int b = 0; b < 256; b++) {
        int c = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE ? b : next++;
        char s[3] = {(char)c, 0, 0};
        if (c >= 0x80)
            s[0] = (char)(0xC0 | c >> 6), s[1] = (char)(0x80 | (c & 0x3F));
        g_str(&g, s);
    }
    g_str(&g, "He"), g_str(&g, "ll"), g_str(&g, "<|im_start|>"), g_str(&g, "<|im_end|>"), g_str(&g, "Hell");
    g_key(&g, "tokenizer.ggml.token_type", 9), g_u32(&g, 5), g_u64(&g, 261);
    for (int i = 0; i < 261; i++)
        g_u32(&g, i == 258 || i == 259 ? 3 : 1);
    g_key(&g, "tokenizer.ggml.merges", 9), g_u32(&g, 8), g_u64(&g, 3);
    g_str(&g, "H e"), g_str(&g, "l l"), g_str(&g, "He ll");
    g_key(&g, "test.nested", 9), g_u32(&g, 9), g_u64(&g, 1), g_u32(&g, 4), g_u64(&g, 2), g_u32(&g, 7),
        g_u32(&g, 8);
    /* tensors: a Q4_1 (2, 32) and an F32 (32) */
    g_str(&g, "blk.0.attn_q.weight"), g_u32(&g, 2), g_u64(&g, 32), g_u64(&g, 2), g_u32(&g, 3), g_u64(&g, 0);
    g_str(&g, "output_norm.weight"), g_u32(&g, 1), g_u64(&g, 32), g_u32(&g, 0), g_u64(&g, 64);
    while (g.n % 32)
        g.b[g.n++] = 0;
    for (int i = 0; i < 40; i++) /* two Q4_1 blocks: d 0.01, m -0.05, nibbles */
        g.b[g.n++] = i % 20 == 0   ? 0x1f
                     : i % 20 == 1 ? 0x21
                     : i % 20 == 2 ? 0x66
                     : i % 20 == 3 ? 0xaa
                                   : (uint8_t)(i * 37);
    while (g.n % 32)
        g.b[g.n++] = 0;
    for (int i = 0; i < 32; i++)
        g_u32(&g, 0x3f800000); /* 1.0f */
    put("gguf", "tiny-llama.gguf", g.b, g.n);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: make_seeds OUT [FASHION-MNIST-DIR] [MODEL-FILE...]\n");
        return 2;
    }
    snprintf(out, sizeof out, "%s", argv[1]);
    mkdir(out, 0755);
    const char *data = argc > 2 ? argv[2] : "/usr/share/datasets/fashion-mnist";
    char path[1024];
    uint8_t header[16], pixels[IMAGES * SIDE * SIDE], labels[IMAGES] = {9, 2, 1};
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte.gz", data);
    gzFile gz = gzopen(path, "rb");
    if (!gz || gzread(gz, header, 16) != 16 || gzread(gz, pixels, sizeof pixels) != (int)sizeof pixels) {
        fprintf(stderr, "make_seeds: cannot read %s\n", path);
        return 1;
    }
    gzclose(gz);
    snprintf(path, sizeof path, "%s/t10k-labels-idx1-ubyte.gz", data);
    if ((gz = gzopen(path, "rb")) && gzread(gz, header, 8) == 8)
        gzread(gz, labels, sizeof labels);
    if (gz)
        gzclose(gz);
    idx_seeds(pixels, labels);
    cifar_seeds(pixels, labels);
    image_seeds(pixels);
    safetensors_seeds();
    csv_seeds(pixels, labels);
    npy_seeds(pixels, labels);
    text_seeds();
    gguf_seeds();
    chat_seeds();
    char trace[1200];
    snprintf(trace, sizeof trace, "%s/trace/two-steps.json", out);
    size_t trace_size = 0;
    uint8_t *trace_bytes = slurp(trace, &trace_size); /* plot draws traces too */
    put("plot", "two-steps.json", trace_bytes, trace_size);
    free(trace_bytes);
    ember_ctx *ctx = ember_ctx_new();
    ember_ctx_set_log(ctx, NULL, NULL, EMBER_LOG_ERROR);
    if (!ctx || ember_ctx_use_device(ctx, "cpu") != EMBER_OK)
        return 1;
    model_checkpoint_seeds(ctx);
    resume_seeds(ctx);
    ember_ctx_free(ctx);
    plot_seeds();
    for (int i = 3; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        static char text[1 << 16];
        size_t n = f ? fread(text, 1, sizeof text, f) : 0;
        if (f)
            fclose(f);
        const char *base = strrchr(argv[i], '/');
        put("model_file", base ? base + 1 : argv[i], text, n);
    }
    return 0;
}
