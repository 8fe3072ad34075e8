/* SPDX-License-Identifier: MIT */
/* tools/cmd-eval.c — `ember eval`: the test accuracy of a saved model. */
#define _XOPEN_SOURCE 700 /* M_LN2 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: ember eval --load FILE [options]\n"
    "\n"
    "Loads a checkpoint written by `ember train --save` and prints its test accuracy,\n"
    "each class's accuracy and the confusion matrix.\n"
    "The checkpoint says which model and data it was trained with; the options below\n"
    "are for checkpoints that do not, and must agree with those that do.\n"
    "\n"
    "  --load FILE         the safetensors checkpoint (required), or an ONNX model\n"
    "  --model NAME|FILE   the model it was trained as\n"
    "  --data KIND         fashion-mnist (default), mnist, cifar10, cifar100, folder, random,\n"
    "                      npy, csv, text\n"
    "  --data-dir DIR      where the data set's files are (npy and csv: or the path after\n"
    "                      --data: --data csv table.csv; text: the file)\n"
    "  --shape CxHxW       random or folder data: one sample's shape, as in training\n"
    "  --resize            folder: resize images of another size\n"
    "  --seed N            random data and the folder's held-out split, as in training (default 0)\n"
    "  --batch N           images per forward pass (default 256)\n"
    "  --device DEV        auto (default, or $EMBER_DEVICE), cpu, cuda, cuda:N, opencl, opencl:N\n"
    "  --fallback DEV      when --device cannot work, use DEV (e.g. cpu) with a warning\n"
    "  --threads N         cpu threads (default: every core)\n"
    "  --json              print {\"test_acc\", \"test_loss\", \"classes\": [{\"class\", \"accuracy\",\n"
    "                      \"images\"}, ...], \"confusion\": [[...], ...], ...} instead of text\n"
    "  --profile           after the answer, a table of where the evaluation's time went\n"
    "                      (on stderr with --json)\n"
    "  --trace FILE        the same, every call, as a Chrome trace (open it in ui.perfetto.dev)\n"
    "  -h, --help          this text\n";

static int classes_of(const ember_dataset *ds) { return ember_dataset_classes(ds); }

/* true class k's samples, and how many of them were predicted right */
static int64_t class_total(const int64_t *confusion, int classes, int k)
{
    int64_t n = 0;
    for (int j = 0; j < classes; j++)
        n += confusion[k * classes + j];
    return n;
}

/* class k's name as a terminal may show it (a folder's name: escapes escaped) */
static const char *shown_name(const ember_dataset *ds, int k, char *buf, size_t len)
{
    return cli_printable(ember_dataset_class_name(ds, k), buf, len);
}

/* Per-class accuracy, then the confusion matrix: rows the true class,
 * columns the predicted one, headed by the names' first letters. */
static void print_classes(const ember_dataset *ds, const int64_t *confusion)
{
    int classes = classes_of(ds), width = 5;
    char name[128];
    for (int k = 0; k < classes; k++) {
        int len = (int)strlen(shown_name(ds, k, name, sizeof name));
        width = len > width ? len : width;
    }
    width = width > 24 ? 24 : width;
    printf("\n%-*s  accuracy  images\n", width, "class");
    for (int k = 0; k < classes; k++) {
        int64_t n = class_total(confusion, classes, k);
        printf("%-*.*s  %8.4f  %6lld\n", width, width, shown_name(ds, k, name, sizeof name),
               n ? (double)confusion[k * classes + k] / (double)n : 0.0, (long long)n);
    }
    if (classes > 32) /* a matrix that does not fit a terminal: --json has it */
        return;
    printf("\nconfusion matrix (rows: the true class; columns: the class predicted)\n%-*s", width, "");
    for (int j = 0; j < classes; j++)
        printf(" %5.5s", shown_name(ds, j, name, sizeof name));
    putchar('\n');
    for (int k = 0; k < classes; k++) {
        printf("%-*.*s", width, width, shown_name(ds, k, name, sizeof name));
        for (int j = 0; j < classes; j++)
            printf(" %5lld", (long long)confusion[k * classes + j]);
        putchar('\n');
    }
}

static void print_classes_json(const ember_dataset *ds, const int64_t *confusion)
{
    int classes = classes_of(ds);
    printf(", \"classes\": [");
    for (int k = 0; k < classes; k++) {
        int64_t n = class_total(confusion, classes, k);
        printf("%s{\"class\": ", k ? ", " : "");
        cli_json_string(stdout, ember_dataset_class_name(ds, k));
        printf(", \"accuracy\": %.6f, \"images\": %lld}",
               n ? (double)confusion[k * classes + k] / (double)n : 0.0, (long long)n);
    }
    printf("], \"confusion\": [");
    for (int k = 0; k < classes; k++) {
        printf("%s[", k ? ", " : "");
        for (int j = 0; j < classes; j++)
            printf("%s%lld", j ? ", " : "", (long long)confusion[k * classes + j]);
        printf("]");
    }
    printf("]");
}

int cmd_eval(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"load", required_argument, NULL, 'L'},
        {"model", required_argument, NULL, 'm'},
        {"data", required_argument, NULL, 'd'},
        {"data-dir", required_argument, NULL, 'r'},
        {"shape", required_argument, NULL, 'S'},
        {"resize", no_argument, NULL, 'R'},
        {"seed", required_argument, NULL, 's'},
        {"batch", required_argument, NULL, 'b'},
        {"device", required_argument, NULL, 'D'},
        {"threads", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'J'},
        {"verbose", no_argument, NULL, 'v'},
        {"fallback", required_argument, NULL, 'F'},
        {"profile", no_argument, NULL, 'P'},
        {"trace", required_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *load = NULL, *fallback = NULL, *trace = NULL;
    const char *device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto";
    struct cli_settings set = {.data = {.kind = "fashion-mnist"}};
    int64_t batch = 256, threads = 0;
    bool json = false, verbose = false, profile = false, ok = true;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'L': load = optarg; break;
        case 'm': set.model = optarg; break;
        case 'd': set.data.kind = optarg, set.kind_given = true; break;
        case 'r': set.data.dir = optarg; break;
        case 'S':
            ok = set.shape_given =
                cli_parse_shape("shape", optarg, &set.data.sample_ndim, set.data.sample_shape);
            break;
        case 'R': set.data.resize = set.resize_given = true; break;
        case 's': ok = set.seed_given = cli_parse_u64("seed", optarg, &set.data.seed); break;
        case 'b': ok = cli_parse_int("batch", optarg, 1, 1 << 20, &batch); break;
        case 'D': device = optarg; break;
        case 'F': fallback = optarg; break;
        case 't': ok = cli_parse_int("threads", optarg, 0, 4096, &threads); break;
        case 'J': json = true; break;
        case 'P': profile = true; break;
        case 'T': trace = optarg; break;
        case 'v': verbose = true; break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: ok = false; break;
        }
    }
    if (ok && optind + 1 == argc && !set.data.dir && cli_data_takes_path(set.data.kind))
        set.data.dir = argv[optind++];
    if (ok && optind < argc) {
        cli_error("unexpected argument \"%s\"", argv[optind]);
        ok = false;
    }
    if (ok && !load) {
        cli_error("ember eval needs --load FILE");
        ok = false;
    }
    if (!ok) {
        fputs("try: ember eval --help\n", stderr);
        return EXIT_USAGE;
    }

    int rc = trace ? cli_output_check(trace, "--trace", (const char *const[]){load, NULL}) : EXIT_OK;
    if (rc != EXIT_OK) /* before the work, as every output */
        return rc;
    ember_checkpoint *ck = NULL;
    void *onnx = NULL; /* an ONNX model imported into a checkpoint in memory */
    size_t onnx_size = 0;
    ember_dataset *test = NULL;
    ember_model *model = NULL;
    double acc = 0.0, loss = 0.0;
    int64_t *confusion = NULL;
    ember_ctx *ctx = cli_ctx_new(verbose, (int)threads);
    if (!ctx)
        return EXIT_FAILURE_OTHER;
    if ((rc = cli_open_device(ctx, device, fallback)) != EXIT_OK)
        ;
    else if ((rc = cli_open_checkpoint(ctx, load, &ck, &onnx, &onnx_size)) != EXIT_OK)
        ;
    else if ((rc = cli_settings_from_checkpoint(ctx, ck, load, &set)) != EXIT_OK)
        ;
    else if (!(test = ember_dataset_open(ctx, &set.data, EMBER_TEST)))
        rc = cli_fail(ctx, "cannot load the data");
    else if (set.from_checkpoint ? !(model = cli_load_model(ctx, load, onnx, onnx_size))
                                 : (!(model = ember_model_new(ctx, set.model, test, 0)) ||
                                    ember_model_load(model, load) != EMBER_OK)) {
        rc = cli_fail(ctx, "cannot load the model");
        if (rc == EXIT_USAGE) /* a checkpoint of another network: the file does not fit */
            rc = EXIT_DATA;
    } else if (!(confusion =
                     calloc((size_t)classes_of(test) * (size_t)classes_of(test), sizeof *confusion))) {
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
    } else if ((profile || trace) && ember_profile_start(ctx, trace != NULL) != EMBER_OK) {
        rc = cli_fail(ctx, "cannot profile");
    } else if (ember_model_evaluate_confusion(model, test, batch, &acc, &loss, confusion) != EMBER_OK) {
        rc = cli_fail(ctx, "evaluation failed");
    }
    if (ember_profile_stop(ctx) != EMBER_OK && rc == EXIT_OK)
        rc = cli_fail(ctx, "evaluation failed");
    if (rc == EXIT_OK && json) {
        printf("{\"test_acc\": %.6f, \"test_loss\": ", acc);
        cli_json_number(stdout, loss, 6);
        printf(", \"images\": %lld, \"model\": ", (long long)ember_dataset_count(test));
        cli_json_string(stdout, ember_model_name(model));
        if (ember_dataset_vocab(test, NULL)) { /* text: a loss in nats per byte, over ln 2 */
            printf(", \"bits_per_byte\": ");
            cli_json_number(stdout, loss / M_LN2, 6);
        }
        print_classes_json(test, confusion);
        printf("}\n");
    } else if (rc == EXIT_OK && ember_dataset_vocab(test, NULL)) {
        printf("validation loss %.4f nats per byte (%.3f bits per byte), next-byte accuracy %.4f (%s, %s)\n",
               loss, loss / M_LN2, acc, ember_dataset_describe(test), ember_ctx_device_name(ctx));
        print_classes(test, confusion);
    } else if (rc == EXIT_OK) {
        printf("test accuracy %.4f, loss %.4f (%s, %s)\n", acc, loss, ember_dataset_describe(test),
               ember_ctx_device_name(ctx));
        print_classes(test, confusion);
    }
    /* after the answer; beside --json's object, on stderr */
    if (rc == EXIT_OK && (profile || trace))
        rc = cli_profile_report(ctx, profile ? (json ? stderr : stdout) : NULL, trace, "evaluation");
    free(confusion);
    ember_model_free(model);
    ember_dataset_free(test);
    ember_checkpoint_close(ck);
    cli_settings_free(&set);
    free(onnx);
    ember_ctx_free(ctx);
    return rc;
}
