/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-predict.c — `ember predict`: a trained model classifies images.
 *
 * The checkpoint says everything: the model (its file's text), the input
 * size, the class names, whether training resized images, and what the
 * training images looked like. Each image is loaded as training loaded it
 * (ember_image_load), a batch goes through the model in evaluation mode,
 * and a softmax turns the logits into probabilities.
 *
 * What the user should know is said on stderr, image by image: what was
 * done to it (converted from colour to gray, resized), and when it looks
 * unlike the training images (a light background where theirs was dark,
 * pixels far brighter or darker on the whole), since the model then
 * answers confidently and wrongly. An image that cannot be read is said
 * and skipped; the rest are classified, and the exit status is 3.
 */
#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "predict.h"

/* a resize that changes the width:height ratio by more than this is said */
static const double ASPECT_TOLERANCE = 0.1;

static const char usage[] =
    "usage: ember predict --load FILE [options] IMAGE|FOLDER|IDX|NPY...\n"
    "\n"
    "Classifies images with a model saved by `ember train --save`: one line per image,\n"
    "the file and then the likeliest classes by name with their probabilities.\n"
    "\n"
    "  IMAGE               a PNG, JPEG or BMP file\n"
    "  FOLDER              every such image in it, in name order\n"
    "  FILE-idx3-ubyte[.gz] every image of an IDX file (as Fashion-MNIST's), named FILE#index\n"
    "  FILE.npy            every sample of a NumPy array (N, sample shape...): uint8 scaled to\n"
    "                      [0, 1] as in training, floats as they are (a table's rows, for a\n"
    "                      model trained with --data csv: standardised as in training); named\n"
    "                      FILE#index\n"
    "  FILE.csv            every row of a table with a header (a model trained with --data csv):\n"
    "                      its feature columns standardised as in training; named FILE#index\n"
    "  --load FILE         the checkpoint, or an ONNX model (.onnx)\n"
    "  --model NAME|FILE   for a state_dict that names no model (PyTorch's, saved by\n"
    "                      safetensors): the model its weights belong to; --shape S and\n"
    "                      --classes N where they are not its input line (or 1x28x28) and 10\n"
    "  --output FILE       also write every result: FILE.npy the probabilities (N, classes),\n"
    "                      FILE.csv a row per input: its name, class and each class's probability\n"
    "  --logits            --output writes the logits rather than the probabilities\n"
    "  --top K             how many classes to show (default 3)\n"
    "  --resize            resize images of another size (default: as in training)\n"
    "  --invert            invert the images (dark on light becomes light on dark, as\n"
    "                      Fashion-MNIST's and MNIST's are)\n"
    "  --json              one JSON object per image: {\"input\", \"top\": [{\"class\", \"index\",\n"
    "                      \"probability\"}, ...]}\n"
    "  --batch N           images per forward pass (default 64)\n"
    "  --device DEV        auto (default, or $EMBER_DEVICE), cpu, cuda, cuda:N, opencl, opencl:N\n"
    "  --fallback DEV      when --device cannot work, use DEV (e.g. cpu) with a warning\n"
    "  --threads N         cpu threads (default: every core)\n"
    "  -h, --help          this text\n"
    "\n"
    "On stderr, for each image: what was done to it (converted to gray or colour, resized,\n"
    "stretched to another aspect ratio, inverted) and a warning when it looks unlike the\n"
    "training images (background, brightness) or is blank.\n"
    "An input that cannot be read is reported and the others classified (its --output row\n"
    "is NaN); the exit status is then 3.\n";

/* What to classify: image files by path, or images of an IDX file already
 * in memory. */
struct input {
    char *name; /* the path, or "file#index" */
    const float
        *pixels; /* an IDX image's (h, w) pixels, or a sample of an array (h and w 0); NULL: the file */
    int height, width;
};

struct inputs {
    struct input *items;
    int64_t count, cap;
    float **arrays; /* the IDX files' images, to free */
    int n_arrays;
};

static bool inputs_add(struct inputs *in, const char *name, const float *pixels, int height, int width)
{
    if (in->count == in->cap) {
        int64_t cap = in->cap ? 2 * in->cap : 64;
        struct input *items = realloc(in->items, (size_t)cap * sizeof *items);
        if (!items)
            return false;
        in->items = items;
        in->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return false;
    in->items[in->count++] = (struct input){copy, pixels, height, width};
    return true;
}

static void inputs_free(struct inputs *in)
{
    for (int64_t i = 0; i < in->count; i++)
        free(in->items[i].name);
    for (int i = 0; i < in->n_arrays; i++)
        free(in->arrays[i]);
    free(in->items);
    free(in->arrays);
}

static bool is_idx_name(const char *name)
{
    size_t n = strlen(name);
    return (n >= 10 && strcmp(name + n - 10, "idx3-ubyte") == 0) ||
           (n >= 13 && strcmp(name + n - 13, "idx3-ubyte.gz") == 0);
}

static bool is_image_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot)
        return false;
    static const char *const kinds[] = {".png", ".jpg", ".jpeg", ".bmp"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcasecmp(dot, kinds[i]) == 0)
            return true;
    return false;
}

static int compare_inputs(const void *a, const void *b)
{
    return strcmp(((const struct input *)a)->name, ((const struct input *)b)->name);
}

/* An image, a folder's images in name order, or an IDX file's images. */
static int gather(ember_ctx *ctx, struct inputs *in, const char *arg, const int64_t *shape, int ndim,
                  const ember_checkpoint *ck)
{
    struct stat info;
    if (stat(arg, &info) != 0) {
        cli_error("cannot open %s: no such file or folder", arg);
        return EXIT_DATA;
    }
    if (!S_ISDIR(info.st_mode) && predict_is_array_name(arg)) {
        int64_t count;
        float *samples = predict_array_samples(ctx, arg, shape, ndim, ck, &count);
        float **arrays = samples ? realloc(in->arrays, (size_t)(in->n_arrays + 1) * sizeof *arrays) : NULL;
        if (!arrays) {
            free(samples);
            return samples ? EXIT_FAILURE_OTHER : EXIT_DATA;
        }
        in->arrays = arrays;
        in->arrays[in->n_arrays++] = samples;
        int64_t per_sample = 1;
        for (int d = 0; d < ndim; d++)
            per_sample *= shape[d];
        char name[4200];
        for (int64_t i = 0; i < count; i++) {
            snprintf(name, sizeof name, "%s#%lld", arg, (long long)i);
            if (!inputs_add(in, name, samples + i * per_sample, 0, 0))
                return EXIT_FAILURE_OTHER;
        }
        return EXIT_OK;
    }
    if (!S_ISDIR(info.st_mode) && is_idx_name(arg)) {
        int64_t count;
        int h, w;
        float *images = ember_idx_images(ctx, arg, &count, &h, &w);
        float **arrays = images ? realloc(in->arrays, (size_t)(in->n_arrays + 1) * sizeof *arrays) : NULL;
        if (!arrays) {
            free(images);
            return images ? EXIT_FAILURE_OTHER : cli_fail(ctx, "cannot read the IDX file");
        }
        in->arrays = arrays;
        in->arrays[in->n_arrays++] = images;
        char name[4200];
        for (int64_t i = 0; i < count; i++) {
            snprintf(name, sizeof name, "%s#%lld", arg, (long long)i);
            if (!inputs_add(in, name, images + i * h * w, h, w))
                return EXIT_FAILURE_OTHER;
        }
        return EXIT_OK;
    }
    if (!S_ISDIR(info.st_mode))
        return inputs_add(in, arg, NULL, 0, 0) ? EXIT_OK : EXIT_FAILURE_OTHER;
    DIR *dir = opendir(arg);
    if (!dir) {
        cli_error("cannot read the folder %s", arg);
        return EXIT_DATA;
    }
    int64_t first = in->count;
    char path[4096];
    struct dirent *e;
    bool ok = true;
    while (ok && (e = readdir(dir)))
        if (e->d_name[0] != '.' && is_image_name(e->d_name)) {
            snprintf(path, sizeof path, "%s%s%s", arg, arg[strlen(arg) - 1] == '/' ? "" : "/", e->d_name);
            ok = inputs_add(in, path, NULL, 0, 0);
        }
    closedir(dir);
    if (!ok)
        return EXIT_FAILURE_OTHER;
    if (in->count == first) {
        cli_error("%s holds no .png, .jpg, .jpeg or .bmp images", arg);
        return EXIT_DATA;
    }
    qsort(in->items + first, (size_t)(in->count - first), sizeof *in->items, compare_inputs);
    return EXIT_OK;
}

static void print_result(const char *path, const float *prob, int classes, int top, char **names, bool json)
{
    int best[64];
    for (int k = 0; k < top; k++) { /* top is at most 64: a selection, not a sort */
        int at = -1;
        for (int j = 0; j < classes; j++) {
            bool taken = false;
            for (int t = 0; t < k && !taken; t++)
                taken = best[t] == j;
            if (!taken && (at < 0 || prob[j] > prob[at]))
                at = j;
        }
        best[k] = at;
    }
    if (json) {
        fputs("{\"input\": ", stdout);
        cli_json_string(stdout, path);
        fputs(", \"top\": [", stdout);
        for (int k = 0; k < top; k++) {
            fputs(k ? ", {\"class\": " : "{\"class\": ", stdout);
            cli_json_string(stdout, names[best[k]]);
            printf(", \"index\": %d, \"probability\": ", best[k]);
            cli_json_number(stdout, prob[best[k]], 6);
            fputs("}", stdout);
        }
        fputs("]}\n", stdout);
        return;
    }
    char shown[1024]; /* a file's or a class's name, escapes escaped: no terminal obeys them */
    printf("%s:", cli_printable(path, shown, sizeof shown));
    for (int k = 0; k < top; k++)
        printf("%s %s %.3f", k ? "," : "", cli_printable(names[best[k]], shown, sizeof shown), prob[best[k]]);
    putchar('\n');
}

/* What the model was trained on, from its checkpoint: the shape, and what
 * the images looked like (ember.image_*; absent in older checkpoints). */
struct expected {
    bool known;
    ember_image_stats stats;
    char describe[256]; /* "1x28x28 gray images like fashion-mnist's: light things on a dark background" */
};

static void expected_from(const ember_checkpoint *ck, const int64_t shape[3], struct expected *e)
{
    const char *mean = ember_checkpoint_meta(ck, "ember.image_mean"),
               *mean_spread = ember_checkpoint_meta(ck, "ember.image_mean_spread"),
               *border = ember_checkpoint_meta(ck, "ember.image_border"),
               *border_spread = ember_checkpoint_meta(ck, "ember.image_border_spread"),
               *data = ember_checkpoint_meta(ck, "ember.data");
    *e = (struct expected){.known = mean && mean_spread && border && border_spread};
    if (e->known)
        e->stats = (ember_image_stats){.mean = atof(mean),
                                       .mean_spread = atof(mean_spread),
                                       .border = atof(border),
                                       .border_spread = atof(border_spread)};
    const char *look = !e->known                ? ""
                       : e->stats.border < 0.25 ? ": light things on a dark background"
                       : e->stats.border > 0.75 ? ": dark things on a light background"
                                                : "";
    snprintf(e->describe, sizeof e->describe, "%lldx%lldx%lld %s images%s%s%s%s", (long long)shape[0],
             (long long)shape[1], (long long)shape[2], shape[0] == 1 ? "gray" : "colour",
             data ? " like " : "", data ? data : "", data ? "'s" : "", look);
}

/* Loads one input as the model takes it into x, saying in `did` what that
 * took ("converted from colour to gray, resized from 300x400"); false,
 * after saying why, when it cannot. */
static bool load_input(ember_ctx *ctx, const struct input *item, const int64_t shape[3], bool resize,
                       float *x, char *did, size_t did_len)
{
    int64_t per_image = shape[0] * shape[1] * shape[2];
    if (item->pixels &&
        !item->height) { /* a sample of an array or a table's row, already the model's shape */
        memcpy(x, item->pixels, (size_t)per_image * sizeof *x);
        return true;
    }
    if (item->pixels) {
        if (shape[0] != 1 || item->height != shape[1] || item->width != shape[2]) {
            cli_error("%s is a %dx%d gray image; the model takes %lldx%lldx%lld", item->name, item->width,
                      item->height, (long long)shape[0], (long long)shape[1], (long long)shape[2]);
            return false;
        }
        memcpy(x, item->pixels, (size_t)per_image * sizeof *x);
        return true;
    }
    int width, height, channels;
    if (ember_image_file_info(ctx, item->name, &width, &height, &channels) != EMBER_OK ||
        ember_image_load(ctx, item->name, (int)shape[0], (int)shape[1], (int)shape[2], resize, x) !=
            EMBER_OK) {
        cli_fail(ctx, "cannot classify an image");
        ember_clear_error(ctx);
        return false;
    }
    bool colour = channels >= 3;
    if (colour != (shape[0] == 3))
        snprintf(did, did_len, "converted from %s to %s", colour ? "colour" : "gray",
                 colour ? "gray" : "colour");
    if (width != shape[2] || height != shape[1]) {
        size_t used = strlen(did);
        snprintf(did + used, did_len - used, "%sresized from %dx%d to %lldx%lld", used ? ", " : "", width,
                 height, (long long)shape[2], (long long)shape[1]);
        /* a resize stretches: a shape the model knows may no longer look like itself */
        double from = (double)width / height, to = (double)shape[2] / (double)shape[1];
        if (fabs(from / to - 1.0) > ASPECT_TOLERANCE) {
            used = strlen(did);
            snprintf(did + used, did_len - used,
                     ", which stretches it from an aspect ratio of %.2f to %.2f (crop it to the model's "
                     "shape first to keep its proportions)",
                     from, to);
        }
    }
    return true;
}

/* --invert: x -> 1 - x, for pixels in [0, 1] */
static void invert_image(float *x, int64_t n, char *did, size_t did_len)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = 1.0f - x[i];
    size_t used = strlen(did);
    snprintf(did + used, did_len - used, "%sinverted", used ? ", " : "");
}

/* An image of one colour (within a step of 8-bit pixels): nothing to classify */
static bool is_blank(const float *x, int64_t n, float *value)
{
    float lo = x[0], hi = x[0];
    for (int64_t i = 1; i < n; i++) {
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
    }
    *value = lo;
    return hi - lo <= 1.0f / 255.0f;
}

/* What was done to an image, and whether it looks like the training
 * images: a background of another brightness (Fashion-MNIST's things are
 * light on black: a photo on white is not what the model knows), or
 * pixels far brighter or darker on the whole. */
static void say_unlike(const char *name, const float *x, const int64_t shape[3], const char *did,
                       const struct expected *e)
{
    if (did[0])
        fprintf(stderr, "ember: note: %s: %s (the model takes %s)\n", name, did, e->describe);
    float value;
    if (is_blank(x, shape[0] * shape[1] * shape[2], &value)) {
        fprintf(stderr,
                "ember: warning: %s is blank (every pixel %.2f): there is nothing in it to classify, and "
                "the model's answer means nothing\n",
                name, value);
        return;
    }
    if (!e->known)
        return;
    ember_image_stats s;
    ember_image_stats_of(x, 1, (int)shape[0], (int)shape[1], (int)shape[2], &s);
    const ember_image_stats *t = &e->stats;
    if (fabs(s.border - t->border) > fmax(0.25, 4.0 * t->border_spread)) {
        const char *mine = s.border >= 0.5 ? "light" : "dark", *theirs = t->border >= 0.5 ? "light" : "dark";
        if (strcmp(mine, theirs) != 0)
            fprintf(stderr,
                    "ember: warning: %s: its background is %s (%.2f) where the training images' is %s "
                    "(%.2f): the model has not seen such images, so its answer means little (%s)\n",
                    name, mine, s.border, theirs, t->border,
                    s.border > t->border ? "--invert inverts it; or train on such images"
                                         : "train on such images");
        else
            fprintf(stderr,
                    "ember: warning: %s: its background (%.2f) is much %s than the training images' "
                    "(%.2f): the model's answer may mean little\n",
                    name, s.border, s.border > t->border ? "lighter" : "darker", t->border);
    } else if (fabs(s.mean - t->mean) > 4.0 * t->mean_spread + 0.02) {
        fprintf(stderr,
                "ember: warning: %s: its pixels are on the whole much %s (mean %.2f) than the training "
                "images' (%.2f, most within %.2f of it): the model's answer may mean little\n",
                name, s.mean > t->mean ? "brighter" : "darker", s.mean, t->mean, 2.0 * t->mean_spread);
    }
}

int cmd_predict(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"load", required_argument, NULL, 'L'},
        {"top", required_argument, NULL, 'k'},
        {"resize", no_argument, NULL, 'R'},
        {"invert", no_argument, NULL, 'I'},
        {"json", no_argument, NULL, 'J'},
        {"batch", required_argument, NULL, 'b'},
        {"device", required_argument, NULL, 'D'},
        {"fallback", required_argument, NULL, 'F'},
        {"threads", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"output", required_argument, NULL, 'o'},
        {"logits", no_argument, NULL, 'G'},
        {"model", required_argument, NULL, 'm'},
        {"shape", required_argument, NULL, 'S'},
        {"classes", required_argument, NULL, 'C'},
        {NULL, 0, NULL, 0},
    };
    struct cli_bare_model bare = {0};
    const char *load = NULL, *fallback = NULL, *output = NULL;
    const char *device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto";
    int64_t top = 3, batch = 64, threads = 0;
    bool json = false, verbose = false, resize_given = false, logits = false, invert = false, ok = true;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'L': load = optarg; break;
        case 'k': ok = cli_parse_int("top", optarg, 1, 64, &top); break;
        case 'R': resize_given = true; break;
        case 'I': invert = true; break;
        case 'J': json = true; break;
        case 'b': ok = cli_parse_int("batch", optarg, 1, 1 << 16, &batch); break;
        case 'D': device = optarg; break;
        case 'F': fallback = optarg; break;
        case 't': ok = cli_parse_int("threads", optarg, 0, 4096, &threads); break;
        case 'v': verbose = true; break;
        case 'o': output = optarg; break;
        case 'G': logits = true; break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: ok = cli_bare_model_option(c, optarg, &bare); break;
        }
    }
    ok = ok && cli_bare_model_check(&bare);
    if (ok && !load) {
        cli_error("ember predict needs --load FILE (a checkpoint from ember train --save, or an ONNX model)");
        ok = false;
    }
    if (ok && optind == argc) {
        cli_error("ember predict needs images or folders of images to classify");
        ok = false;
    }
    if (ok && output && !predict_output_kind(output)) {
        cli_error("--output writes .npy or .csv, not \"%s\"", output);
        ok = false;
    }
    if (!ok) {
        fputs("try: ember predict --help\n", stderr);
        return EXIT_USAGE;
    }
    if (output) { /* before the work: never one of the inputs, never a FIFO, a folder that exists */
        const char **inputs = calloc((size_t)(argc - optind) + 2, sizeof *inputs);
        if (!inputs)
            return EXIT_FAILURE_OTHER;
        inputs[0] = load;
        memcpy(inputs + 1, argv + optind, (size_t)(argc - optind) * sizeof *inputs);
        int rc = cli_output_check(output, "--output", inputs);
        free(inputs);
        if (rc != EXIT_OK)
            return rc;
    }

    struct inputs in = {0};
    int rc = EXIT_OK, classes = 0;
    ember_checkpoint *ck = NULL;
    ember_model *model = NULL;
    char **names = NULL;
    float *x_host = NULL, *prob = NULL, *results = NULL;
    void *onnx_checkpoint = NULL; /* an ONNX model, imported as a checkpoint in memory */
    size_t onnx_size = 0;
    ember_ctx *ctx = cli_ctx_new(verbose, (int)threads);
    if (!ctx)
        return EXIT_FAILURE_OTHER;
    if ((rc = cli_open_device(ctx, device, fallback)) != EXIT_OK)
        goto done;
    if ((rc = cli_open_checkpoint(ctx, load, &ck, &onnx_checkpoint, &onnx_size)) != EXIT_OK)
        goto done;
    if (!(model = cli_load_model_as(ctx, load, ck, onnx_checkpoint, onnx_size, &bare, &rc)))
        goto done;
    int64_t shape[3] = {1, 1, 1};
    classes = ember_model_classes(model);
    int ndim = ember_model_sample_shape(model, shape);
    bool images = ndim == 3 && (shape[0] == 1 || shape[0] == 3);
    const char *resize_meta = ember_checkpoint_meta(ck, "ember.resize");
    bool resize = resize_given || (resize_meta && strcmp(resize_meta, "true") == 0);
    if (!(names = cli_class_names(ck, classes))) {
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    if (top > classes)
        top = classes;
    for (int i = optind; i < argc && rc == EXIT_OK; i++) {
        if (!images && !predict_is_array_name(argv[i])) {
            cli_error("%s holds a model of %s samples, not of images: give .npy or .csv files", load,
                      ember_model_name(model));
            rc = EXIT_DATA;
        } else {
            rc = gather(ctx, &in, argv[i], shape, ndim, ck);
        }
    }
    if (rc != EXIT_OK)
        goto done;

    int64_t per_image = shape[0] * shape[1] * shape[2];
    if (batch > in.count)
        batch = in.count;
    x_host = malloc((size_t)(batch * per_image) * sizeof *x_host);
    prob = malloc((size_t)(batch * classes) * sizeof *prob);
    int64_t *members = malloc((size_t)batch * sizeof *members); /* the inputs in this batch */
    results = output ? malloc((size_t)(in.count * classes) * sizeof *results) : NULL;
    float *batch_logits = output && logits ? malloc((size_t)(batch * classes) * sizeof *batch_logits) : NULL;
    if (!x_host || !prob || !members || (output && !results) || (output && logits && !batch_logits)) {
        free(members);
        free(batch_logits);
        cli_error("out of memory for a batch of %lld images", (long long)batch);
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    for (int64_t i = 0; results && i < in.count * classes; i++)
        results[i] = NAN; /* an input that cannot be read: a row of NaN in --output */
    struct expected expect;
    expected_from(ck, shape, &expect);
    int64_t failed = 0;
    for (int64_t next = 0; next < in.count && rc == EXIT_OK;) {
        int n = 0;
        for (; next < in.count && n < batch; next++) { /* a batch of the inputs that load */
            const struct input *item = &in.items[next];
            float *x = x_host + n * per_image;
            char did[256] = "";
            if (!load_input(ctx, item, shape, resize, x, did, sizeof did)) {
                failed++;
                continue;
            }
            bool image = !item->pixels || item->height; /* a row of an array or table is not one */
            if (image && invert)
                invert_image(x, per_image, did, sizeof did);
            if (image)
                say_unlike(item->name, x, shape, did, &expect);
            members[n++] = next;
        }
        if (n == 0)
            break;
        if (ember_model_predict_probs(model, x_host, n, prob) != EMBER_OK)
            rc = cli_fail(ctx, "classifying failed");
        if (batch_logits && rc == EXIT_OK && ember_model_predict(model, x_host, n, batch_logits) != EMBER_OK)
            rc = cli_fail(ctx, "classifying failed");
        for (int i = 0; results && i < n && rc == EXIT_OK; i++)
            memcpy(results + members[i] * classes,
                   (batch_logits ? batch_logits : prob) + (size_t)i * (size_t)classes,
                   (size_t)classes * sizeof *results);
        for (int i = 0; i < n && rc == EXIT_OK; i++)
            print_result(in.items[members[i]].name, prob + (size_t)i * (size_t)classes, classes, (int)top,
                         names, json);
    }
    free(members);
    free(batch_logits);
    if (rc == EXIT_OK && output) {
        const char **input_names = malloc((size_t)in.count * sizeof *input_names + 1);
        for (int64_t i = 0; input_names && i < in.count; i++)
            input_names[i] = in.items[i].name;
        rc = input_names ? predict_write_output(ctx, output, results, in.count, classes,
                                                (const char *const *)names, input_names, logits)
                         : EXIT_FAILURE_OTHER;
        free(input_names);
    }
    if (rc == EXIT_OK && failed) {
        fprintf(stderr, "ember: %lld of %lld images could not be classified (said above); the others were\n",
                (long long)failed, (long long)in.count);
        rc = EXIT_DATA;
    }
done:
    free(results);
    free(onnx_checkpoint);
    for (int i = 0; names && i < classes; i++)
        free(names[i]);
    free(names);
    inputs_free(&in);
    free(x_host);
    free(prob);
    ember_model_free(model);
    ember_checkpoint_close(ck);
    ember_ctx_free(ctx);
    return rc;
}
