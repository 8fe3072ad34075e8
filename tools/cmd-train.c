/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-train.c — `ember train`: the documents' training loop.
 *
 * The loop below is the one every framework's tutorial shows:
 * zero_grad, forward, loss, backward, step. Around it: the learning-rate
 * schedule, checkpoints every N steps or epochs (and of the best epoch),
 * Ctrl-C that finishes the step and saves, and --resume, which goes on from
 * a checkpoint as if the run had never stopped (tools/train.h).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"
#include "progress.h"
#include "train.h"

static const char usage[] =
    "usage: ember train [options]\n"
    "\n"
    "Trains a model and reports test accuracy after every epoch.\n"
    "\n"
    "  --model NAME|FILE   a built-in model (simplecnn, the default; ember summary --list\n"
    "                      names them all) or a model file (docs/models.md)\n"
    "  --data KIND         fashion-mnist (default), mnist, cifar10, folder, random, npy, csv, text\n"
    "  --data-dir DIR      where the data set's files are (fashion-mnist defaults to\n"
#ifdef _WIN32
    "                      the folder fashion-mnist in the current folder);\n"
#else
    "                      /usr/share/datasets/fashion-mnist, from Debian's dataset-fashion-mnist);\n"
#endif
    "                      text: the file, every byte a token, its last tenth held out\n"
    "  --context T         text: tokens per window (default 128)\n"
    "  --data npy PATH     NumPy arrays: a folder of x_train.npy, y_train.npy, x_test.npy,\n"
    "                      y_test.npy, or one .npz holding them (docs/interop.md)\n"
    "  --data csv PATH     a CSV table with a header row (a tenth of each class held out for\n"
    "                      testing, chosen by --seed), or a folder of train.csv and test.csv;\n"
    "                      features are standardised with the training split's statistics\n"
    "  --label COLUMN      csv: the column of the classes (default: the last)\n"
    "  --shape CxHxW       random: one sample's shape (default 1x28x28; 100 for linear);\n"
    "                      folder: the size to load images at (default: the first image's)\n"
    "  --resize            folder: resize images of another size instead of rejecting them\n"
    "  --epochs N          passes over the training set (default 1)\n"
    "  --steps N           stop after N steps in all, for benchmarks (default: whole epochs)\n"
    "  --batch N           images per step (default 64)\n"
    "  --optim NAME        adam (default), adamw (decay on weights, not biases or norms) or sgd\n"
    "  --lr X              learning rate (default 0.001)\n"
    "  --schedule NAME     the rate over the run, set each step: constant (default), step\n"
    "                      (times --gamma, default 0.1, every --step-epochs, default a third\n"
    "                      of the epochs), cosine (down to --min-lr, default 0, at the end)\n"
    "  --warmup E          first rise linearly to --lr over E epochs (default 0)\n"
    "  --momentum X        sgd momentum (default 0)\n"
    "  --weight-decay X    L2 penalty added to the gradient (default 0); adamw's decoupled decay\n"
    "  --clip X            scale the gradients down to a global norm of X when above it\n"
    "  --seed N            seeds initialisation, shuffling and random data (default 0)\n"
    "  --device DEV        auto (default, or $EMBER_DEVICE), cpu, cuda, cuda:N, opencl, opencl:N;\n"
    "                      several at once, each training its share of every batch:\n"
    "                      cuda:0,cuda:1 or cpu,opencl:0 (the first keeps the model), or all\n"
    "                      (docs/parallel.md; under mpirun, each rank its part of the batch)\n"
    "  --keep-devices      with several devices, never leave out one the step is faster\n"
    "                      without\n"
    "  --fallback DEV      when --device cannot work, use DEV (e.g. cpu) with a warning\n"
    "                      instead of failing\n"
    "  --threads N         cpu threads (default: every core)\n"
    "  --save FILE         write the model as safetensors (PyTorch's names), and beside it\n"
    "                      FILE.state.safetensors (the optimizer's state, for --resume) and\n"
    "                      FILE.best.safetensors (the epoch of the best test accuracy)\n"
    "  --save-every N      also save every N steps, or every N epochs written as Ne (2e)\n"
    "  --init FILE         start from the weights of a checkpoint or an ONNX model (and its\n"
    "                      model, unless --model is given), with a fresh optimizer and schedule\n"
    "  --init-skip NAMES   layers to leave freshly initialised (a new head): fc or fc,layer4\n"
    "  --resume FILE       go on from a checkpoint of ember train: its settings, optimizer and\n"
    "                      place in the data; --epochs counts from the run's start\n"
    "  --metrics FILE      append one JSON object per epoch (and per --log-every steps), each\n"
    "                      with the run's id, so that appended runs stay apart\n"
    "  --log-every N       also a metrics object every N steps\n"
    "  --run-id NAME       the run's id in the metrics (default: the start time and process id)\n"
    "  --early-stop N      stop after N epochs without a better test accuracy\n"
    "  --stop-if-diverging stop a run that is not learning (its loss growing for three\n"
    "                      intervals of --log-every, or a tenth of an epoch, or chance\n"
    "                      accuracy after an epoch: said as a warning without it) and save\n"
    "                      the model of its lowest loss to --save; exit status 1\n"
    "  --augment SPEC      training images shifted (crop:P, up to P pixels each way, zeros\n"
    "                      coming in) and mirrored (flip): crop:4,flip; seeded by --seed\n"
    "  --no-eval           skip the test-set evaluation\n"
    "  --profile           after the run, a table of where the training steps' time went:\n"
    "                      each op, the primitives and kernels it ran, GFLOP/s and GB/s\n"
    "  --trace FILE        the same, every call, as a Chrome trace (open it in ui.perfetto.dev)\n"
    "  --quiet             no progress line\n"
    "  --verbose           say more (the device chosen and why)\n"
    "  -h, --help          this text\n";

enum { OPT_DATA_DIR = 256, OPT_NO_EVAL, OPT_WEIGHT_DECAY, OPT_FALLBACK, OPT_SCHEDULE, OPT_WARMUP, OPT_STEP_EPOCHS,
       OPT_GAMMA, OPT_MIN_LR, OPT_SAVE_EVERY, OPT_RESUME, OPT_LOG_EVERY, OPT_RUN_ID, OPT_EARLY_STOP,
       OPT_AUGMENT, OPT_PROFILE, OPT_TRACE, OPT_KEEP_DEVICES, OPT_INIT, OPT_INIT_SKIP, OPT_LABEL, OPT_STOP_DIVERGING,
       OPT_CONTEXT, OPT_CLIP };

/* "500" steps or "2e" epochs */
static bool parse_every(const char *text, struct train_options *o)
{
    char *end;
    long long n = strtoll(text, &end, 10);
    o->save_every_epochs = *end == 'e' && end[1] == '\0';
    if (end == text || n < 1 || (*end && !o->save_every_epochs)) {
        cli_error("--save-every wants a number of steps (500) or of epochs (2e), not \"%s\"", text);
        return false;
    }
    o->save_every = n;
    return true;
}

static int parse_options(int argc, char **argv, struct train_options *o)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},    {"data", required_argument, NULL, 'd'},
        {"data-dir", required_argument, NULL, OPT_DATA_DIR}, {"label", required_argument, NULL, OPT_LABEL},
        {"shape", required_argument, NULL, 'S'},    {"resize", no_argument, NULL, 'R'},
        {"epochs", required_argument, NULL, 'e'},   {"steps", required_argument, NULL, 'n'},
        {"batch", required_argument, NULL, 'b'},    {"optim", required_argument, NULL, 'O'},
        {"lr", required_argument, NULL, 'l'},       {"momentum", required_argument, NULL, 'M'},
        {"weight-decay", required_argument, NULL, OPT_WEIGHT_DECAY},
        {"schedule", required_argument, NULL, OPT_SCHEDULE}, {"warmup", required_argument, NULL, OPT_WARMUP},
        {"step-epochs", required_argument, NULL, OPT_STEP_EPOCHS}, {"gamma", required_argument, NULL, OPT_GAMMA},
        {"min-lr", required_argument, NULL, OPT_MIN_LR},
        {"save-every", required_argument, NULL, OPT_SAVE_EVERY}, {"resume", required_argument, NULL, OPT_RESUME},
        {"init", required_argument, NULL, OPT_INIT}, {"init-skip", required_argument, NULL, OPT_INIT_SKIP},
        {"log-every", required_argument, NULL, OPT_LOG_EVERY}, {"run-id", required_argument, NULL, OPT_RUN_ID},
        {"early-stop", required_argument, NULL, OPT_EARLY_STOP}, {"augment", required_argument, NULL, OPT_AUGMENT},
        {"stop-if-diverging", no_argument, NULL, OPT_STOP_DIVERGING},
        {"profile", no_argument, NULL, OPT_PROFILE}, {"trace", required_argument, NULL, OPT_TRACE},
        {"context", required_argument, NULL, OPT_CONTEXT}, {"clip", required_argument, NULL, OPT_CLIP},
        {"seed", required_argument, NULL, 's'},     {"device", required_argument, NULL, 'D'},
        {"fallback", required_argument, NULL, OPT_FALLBACK}, {"keep-devices", no_argument, NULL, OPT_KEEP_DEVICES},
        {"threads", required_argument, NULL, 't'},  {"save", required_argument, NULL, 'o'},
        {"metrics", required_argument, NULL, 'j'},  {"no-eval", no_argument, NULL, OPT_NO_EVAL},
        {"quiet", no_argument, NULL, 'q'},          {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    *o = (struct train_options){
        .model = "simplecnn", .optim = "adam", .epochs = 1, .batch = 64, .lr = 0.001, .eval = true,
        .schedule = "constant", .gamma = 0.1, .augment = "none",
        .device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto", .data = {.kind = "fashion-mnist"}};
    int c, index = 0;
    bool ok = true;
    optind = 1;
    while (ok && (c = getopt_long(argc, argv, "h", longopts, &index)) != -1) {
        if (c != '?' && c != 'h') /* for --resume: which settings the command line gave */
            train_mark_given(o, longopts[index].name);
        index = 0;
        switch (c) {
        case 'm': o->model = optarg, o->model_given = true; break;
        case OPT_INIT: o->init = optarg; break;
        case OPT_INIT_SKIP: o->init_skip = optarg; break;
        case 'd': o->data.kind = optarg; break;
        case OPT_DATA_DIR: o->data.dir = optarg; break;
        case OPT_LABEL: o->data.label = optarg; break;
        case 'S': ok = o->shape_given = cli_parse_shape("shape", optarg, &o->data.sample_ndim, o->data.sample_shape); break;
        case 'R': o->data.resize = true; break;
        case 'e': ok = train_parse_setting(o, "epochs", optarg); break;
        case 'n': ok = cli_parse_int("steps", optarg, 1, INT64_MAX / 2, &o->steps); break;
        case 'b': ok = train_parse_setting(o, "batch", optarg); break;
        case 'O': o->optim = optarg; break;
        case 'l': ok = train_parse_setting(o, "lr", optarg); break;
        case 'M': ok = train_parse_setting(o, "momentum", optarg); break;
        case OPT_WEIGHT_DECAY: ok = train_parse_setting(o, "weight-decay", optarg); break;
        case 's': ok = cli_parse_u64("seed", optarg, &o->seed); break;
        case 'D': o->device = optarg; o->device_given = true; break;
        case OPT_FALLBACK: o->fallback = optarg; break;
        case OPT_KEEP_DEVICES: o->keep_devices = true; break;
        case OPT_SCHEDULE: o->schedule = optarg; break;
        case OPT_WARMUP: ok = train_parse_setting(o, "warmup", optarg); break;
        case OPT_STEP_EPOCHS: ok = train_parse_setting(o, "step-epochs", optarg); break;
        case OPT_GAMMA: ok = train_parse_setting(o, "gamma", optarg); break;
        case OPT_MIN_LR: ok = train_parse_setting(o, "min-lr", optarg); break;
        case OPT_SAVE_EVERY: ok = parse_every(optarg, o); break;
        case OPT_RESUME: o->resume = optarg; break;
        case OPT_LOG_EVERY: ok = cli_parse_int("log-every", optarg, 1, INT64_MAX / 2, &o->log_every); break;
        case OPT_RUN_ID: o->run_id = optarg; break;
        case OPT_EARLY_STOP: ok = cli_parse_int("early-stop", optarg, 1, 1000000, &o->early_stop); break;
        case OPT_AUGMENT: o->augment = optarg; break;
        case OPT_STOP_DIVERGING: o->stop_if_diverging = true; break;
        case OPT_PROFILE: o->profile = true; break;
        case OPT_TRACE: o->trace = optarg; break;
        case OPT_CONTEXT:
            ok = o->shape_given = cli_parse_int("context", optarg, 1, 1 << 20, &o->data.sample_shape[0]);
            o->data.sample_ndim = 1;
            break;
        case OPT_CLIP: ok = cli_parse_float("clip", optarg, 1e-12, 1e12, &o->clip); break;
        case 't': ok = cli_parse_int("threads", optarg, 0, 4096, &o->threads); o->threads_given = true; break;
        case 'o': o->save = optarg; break;
        case 'j': o->metrics = optarg; break;
        case OPT_NO_EVAL: o->eval = false; break;
        case 'q': o->quiet = true; break;
        case 'v': o->verbose = true; break;
        case 'h': fputs(usage, stdout); return -1;
        default: ok = false; break;
        }
    }
    /* --data npy PATH, --data csv PATH: the data's path follows its kind */
    if (ok && optind + 1 == argc && !o->data.dir && cli_data_takes_path(o->data.kind))
        o->data.dir = argv[optind++];
    if (ok && optind < argc) {
        cli_error("unexpected argument \"%s\"", argv[optind]);
        ok = false;
    }
    if (ok && o->data.label && strcmp(o->data.kind, "csv") != 0) {
        cli_error("--label names the column of a CSV table's classes: it goes with --data csv");
        ok = false;
    }
    if (ok && strcmp(o->optim, "adam") != 0 && strcmp(o->optim, "adamw") != 0 && strcmp(o->optim, "sgd") != 0) {
        cli_error("--optim is adam, adamw or sgd, not \"%s\"", o->optim);
        ok = false;
    }
    if (ok && strcmp(o->schedule, "constant") != 0 && strcmp(o->schedule, "step") != 0 &&
        strcmp(o->schedule, "cosine") != 0) {
        cli_error("--schedule is constant, step or cosine, not \"%s\"", o->schedule);
        ok = false;
    }
    if (ok && o->momentum != 0.0 && strcmp(o->optim, "sgd") != 0) {
        cli_error("--momentum applies to --optim sgd");
        ok = false;
    }
    if (ok && o->early_stop && !o->eval) {
        cli_error("--early-stop watches the test accuracy, which --no-eval turns off");
        ok = false;
    }
    if (ok && o->init && o->resume) {
        cli_error("--init starts a new run from weights; --resume goes on with a run: give one of them");
        ok = false;
    }
    if (ok && o->init_skip && !o->init) {
        cli_error("--init-skip names layers --init leaves out: give --init FILE");
        ok = false;
    }
    if (ok && o->save_every && !o->save && !o->resume) {
        cli_error("--save-every needs --save FILE: where to write");
        ok = false;
    }
    if (!ok) {
        fputs("try: ember train --help\n", stderr);
        return EXIT_USAGE;
    }
    o->data.seed = o->seed;
    return EXIT_OK;
}

struct epoch_result {
    int epoch;
    int64_t steps, images;
    int64_t total_steps; /* the run's steps so far, resumed ones included */
    double train_loss, train_acc, test_loss, test_acc, seconds, eval_seconds, first_step_s;
    float lr; /* the rate of the epoch's last step */
    bool text; /* losses also in bits per byte */
};

/* The --log-every window: steps since the last line. */
struct window {
    int64_t steps, correct, seen;
    double loss_sum, start, cpu_start;
};

/* the process's CPU seconds so far: on a machine shared with other work,
 * the time a run's steps really took of the CPU */
static double cpu_seconds(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec * 1e-9 : 0.0;
}

/* One --log-every line: the window's loss and accuracy, at a step. */
static bool write_window(const struct train_options *o, int64_t epoch, int64_t step, float lr, const struct window *w)
{
    FILE *f = fopen(o->metrics, "a");
    if (!f) {
        cli_error("cannot open --metrics file %s: %s", o->metrics, strerror(errno));
        return false;
    }
    double seconds = cli_now() - w->start;
    fprintf(f, "{\"run\": ");
    cli_json_string(f, o->run_id);
    fprintf(f, ", \"epoch\": %lld, \"step\": %lld, \"train_loss\": ", (long long)epoch, (long long)step);
    cli_json_number(f, w->loss_sum / (double)w->steps, 6);
    fprintf(f, ", \"train_acc\": %.6f, \"lr\": %g, \"images_per_s\": %.1f, \"cpu_seconds\": %.4f}\n",
            w->seen ? (double)w->correct / (double)w->seen : 0.0, lr, seconds > 0 ? (double)w->seen / seconds : 0.0,
            cpu_seconds() - w->cpu_start);
    bool ok = fclose(f) == 0;
    if (!ok)
        cli_error("writing --metrics file %s failed: %s", o->metrics, strerror(errno));
    return ok;
}

/* How many of a batch's predictions are right: logits (n, classes) against
 * y (n), or a sequence's (n, T, classes) against (n, T), every position */
static ember_status count_correct(ember_tensor *logits, ember_tensor *y, float *scratch, int32_t *labels,
                                  int64_t *correct)
{
    int64_t n = ember_tensor_numel(y), classes = ember_tensor_dim(logits, -1);
    ember_status st = ember_tensor_read(logits, scratch, (size_t)(n * classes) * sizeof *scratch);
    if (st == EMBER_OK)
        st = ember_tensor_read(y, labels, (size_t)n * sizeof *labels);
    for (int64_t i = 0; st == EMBER_OK && i < n; i++) {
        const float *row = scratch + i * classes;
        int64_t best = 0;
        for (int64_t k = 1; k < classes; k++)
            if (row[k] > row[best])
                best = k;
        *correct += best == labels[i];
    }
    return st;
}

static bool write_metrics(const struct train_options *o, ember_ctx *ctx, const struct epoch_result *r)
{
    FILE *f = fopen(o->metrics, "a");
    if (!f) {
        cli_error("cannot open --metrics file %s: %s", o->metrics, strerror(errno));
        return false;
    }
    fprintf(f, "{\"run\": ");
    cli_json_string(f, o->run_id);
    fprintf(f, ", \"epoch\": %d, \"train_loss\": ", r->epoch);
    cli_json_number(f, r->train_loss, 6);
    fprintf(f, ", \"train_acc\": %.6f, \"test_loss\": ", r->train_acc);
    cli_json_number(f, o->eval ? r->test_loss : NAN, 6);
    fprintf(f, ", \"test_acc\": ");
    cli_json_number(f, o->eval ? r->test_acc : NAN, 6);
    fprintf(f, ", ");
    fprintf(f, "\"images_per_s\": %.1f, \"seconds\": %.3f, \"eval_seconds\": %.3f, \"steps\": %lld, "
               "\"total_steps\": %lld, ",
            r->seconds > 0 ? (double)r->images / r->seconds : 0.0, r->seconds, r->eval_seconds,
            (long long)r->steps, (long long)r->total_steps);
    fprintf(f, "\"device\": ");
    cli_json_string(f, ember_ctx_device_name(ctx));
    fprintf(f, ", \"model\": ");
    cli_json_string(f, o->model);
    fprintf(f, ", \"data\": ");
    cli_json_string(f, o->data.kind);
    fprintf(f, ", \"batch\": %lld, \"lr\": %g, \"lr_last\": %g, \"schedule\": \"%s\", \"optim\": ", (long long)o->batch,
            o->lr, r->lr, o->schedule);
    cli_json_string(f, o->optim);
    if (r->text) { /* a loss in nats per byte over ln 2 */
        fprintf(f, ", \"train_bits_per_byte\": ");
        cli_json_number(f, r->train_loss / M_LN2, 6);
        fprintf(f, ", \"test_bits_per_byte\": ");
        cli_json_number(f, o->eval ? r->test_loss / M_LN2 : NAN, 6);
    }
    fprintf(f, ", \"seed\": %llu, \"first_step_s\": %.4f, \"peak_rss_mib\": %.1f}\n", (unsigned long long)o->seed,
            r->first_step_s, cli_peak_rss_mib());
    bool ok = fclose(f) == 0;
    if (!ok)
        cli_error("writing --metrics file %s failed: %s", o->metrics, strerror(errno));
    return ok;
}

/* SIGINT and SIGTERM: the step under way finishes, a checkpoint is
 * written, and the run stops; a second signal stops it at once. */
static volatile sig_atomic_t stop_signal;

static void on_stop_request(int sig)
{
    if (stop_signal)
        _exit(128 + sig);
    stop_signal = sig;
}

/* The optimizer the options ask for, over the model's parameters. */
static ember_optim *make_optimizer(const struct train_options *o, ember_model *model)
{
    if (strncmp(o->optim, "adam", 4) == 0) {
        ember_adam_options a = ember_adam_defaults((float)o->lr);
        a.weight_decay = (float)o->weight_decay;
        return strcmp(o->optim, "adamw") == 0 ? ember_adamw_new(ember_model_params(model), a)
                                              : ember_adam_new(ember_model_params(model), a);
    }
    ember_sgd_options s = ember_sgd_defaults((float)o->lr);
    s.momentum = (float)o->momentum;
    s.weight_decay = (float)o->weight_decay;
    return ember_sgd_new(ember_model_params(model), s);
}

/* Saves the run (model and state) and says so. */
static int save_run(const struct train_options *o, ember_ctx *ctx, ember_model *model, ember_optim *opt,
                    const ember_dataset *train, const struct train_position *pos, const char *why)
{
    int rc = train_save(o, ctx, model, opt, train, pos, o->save);
    if (rc == EXIT_OK)
        fprintf(stderr, "ember: saved %s (%s)\n", o->save, why);
    return rc;
}

/* what failed, when it was the checkpoint itself */
static const char checkpoint_lost[] = "the checkpoint";

/* A write failed mid-run (the message said which and why): the run stops,
 * and what it has learnt is saved all the same, unless the checkpoint is
 * what failed; then the last one written stays whole (saves are atomic). */
static void save_after_failure(struct train_options *o, ember_ctx *ctx, ember_model *model, ember_optim *opt,
                               const ember_dataset *train, const struct train_position *pos, const char *lost)
{
    if (lost == checkpoint_lost) {
        fprintf(stderr, "ember: stopped at step %lld: the checkpoint could not be written; the last one saved to %s, "
                "if any, is whole\n", (long long)pos->total_steps, o->save);
        return;
    }
    if (!o->save)
        o->save = "ember-interrupted.safetensors";
    if (save_run(o, ctx, model, opt, train, pos, "stopped: a file could not be written") == EXIT_OK)
        fprintf(stderr, "ember: stopped at step %lld because %s could not be written; the run is saved: once "
                "that is fixed, go on with ember train --resume %s\n", (long long)pos->total_steps, lost, o->save);
}

/* --device's list: "cpu,opencl:0" split, or "all": every usable device,
 * the one auto would choose first (it keeps the model). Returns
 * how many, or 0 after saying what is wrong. */
enum { MAX_DEVICES = 16 };
static int device_list(const char *spec, int64_t threads, char names[MAX_DEVICES][32])
{
    int n = 0;
    if (strcmp(spec, "all") == 0) {
        ember_device_info found[MAX_DEVICES];
        int count = ember_devices(found, MAX_DEVICES, (int)threads);
        /* auto's choice first: it keeps the model and always trains */
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < count && i < MAX_DEVICES; i++)
                if (found[i].usable && found[i].preferred == (pass == 0)) {
                    memcpy(names[n], found[i].name, sizeof names[0]);
                    names[n++][sizeof names[0] - 1] = '\0';
                }
        if (n == 0)
            cli_error("--device all: no device can train here (ember devices says why)");
        return n;
    }
    for (const char *at = spec; *at; n++) {
        size_t len = strcspn(at, ",");
        if (len == 0 || len >= sizeof names[0] || n == MAX_DEVICES) {
            cli_error("--device takes up to %d devices, joined by commas (cpu,opencl:0), not \"%s\"", MAX_DEVICES,
                      spec);
            return 0;
        }
        snprintf(names[n], sizeof names[0], "%.*s", (int)len, at);
        at += len + (at[len] == ',');
    }
    return n;
}

/* With several devices, or as one of several ranks: the data-parallel
 * trainer over the model (docs/parallel.md); NULL when neither. */
static int start_parallel(const struct train_options *o, ember_ctx *ctx, ember_model *model, ember_optim *opt,
                          char names[MAX_DEVICES][32], int devices, ember_parallel **par)
{
    *par = NULL;
    if (devices < 2 && !cli_mpi_collective())
        return EXIT_OK;
    if (o->clip > 0) {
        cli_error("--clip works on one device in one process; train without it, or on one device");
        return EXIT_USAGE;
    }
    const char *others[MAX_DEVICES];
    for (int i = 1; i < devices; i++)
        others[i - 1] = names[i];
    ember_parallel_options po = {.devices = others, .device_count = devices - 1, .threads = (int)o->threads,
                                 .keep_all = o->keep_devices, .collective = cli_mpi_collective()};
    if (!(*par = ember_parallel_new(model, opt, &po)))
        return cli_fail(ctx, "cannot train on several devices");
    return EXIT_OK;
}

int cmd_train(int argc, char **argv)
{
    struct train_options o;
    int rc = cli_mpi_start(&argc, &argv);
    if (rc != EXIT_OK)
        return rc;
    if ((rc = parse_options(argc, argv, &o)) != EXIT_OK)
        return cli_mpi_end(rc < 0 ? EXIT_OK : rc);
    /* under mpirun, rank 0 alone speaks and writes: progress, metrics, checkpoints */
    bool lead = cli_mpi_rank() == 0;
    if (!lead) {
        o.quiet = true;
        o.metrics = NULL;
        o.save = NULL;
        o.save_every = 0;
        o.profile = false;
        o.trace = NULL;
    }
    char devices[MAX_DEVICES][32];
    int device_count = device_list(o.device, o.threads, devices);
    if (device_count == 0) {
        train_options_free(&o);
        return cli_mpi_end(EXIT_USAGE);
    }

    ember_dataset *train = NULL, *test = NULL;
    ember_model *model = NULL;
    ember_optim *opt = NULL;
    ember_batcher *batches = NULL;
    ember_parallel *par = NULL;
    struct train_position pos = {.best_acc = -1.0};
    ember_ctx *ctx = cli_ctx_new(o.verbose, (int)o.threads);
    if (!ctx)
        return cli_mpi_end(EXIT_FAILURE_OTHER);
    if ((rc = cli_open_device(ctx, devices[0], o.fallback)) != EXIT_OK)
        goto done;
    if (o.resume && (rc = train_resume_settings(ctx, &o)) != EXIT_OK)
        goto done;
    if (o.resume) /* the threads the run had, on the device already open */
        ember_ctx_set_threads(ctx, (int)o.threads);
    char run_id[64];
    if (!o.run_id) { /* "20261122T235501-4242": when, and which process */
        time_t now = time(NULL);
        struct tm utc;
        gmtime_r(&now, &utc);
        size_t at = strftime(run_id, sizeof run_id, "%Y%m%dT%H%M%S", &utc);
        snprintf(run_id + at, sizeof run_id - at, "-%ld", (long)getpid());
        o.run_id = run_id;
    }
    if (!(train = ember_dataset_open(ctx, &o.data, EMBER_TRAIN)) ||
        (o.eval && !(test = ember_dataset_open(ctx, &o.data, EMBER_TEST)))) {
        rc = cli_fail(ctx, "cannot load the data");
        if (rc == EXIT_USAGE && o.resume) /* the kind or shape came from the checkpoint */
            rc = EXIT_DATA;
        goto done;
    }
    /* found now, not after the first epoch's training, which would be lost */
    if (test && ember_dataset_count(test) == 0) {
        bool table = strcmp(o.data.kind, "csv") == 0;
        cli_error("%s has no %s to test on (a %s needs at least two %s in some class to hold one out, or a %s): "
                  "add %s, or train without evaluating (--no-eval)", ember_dataset_describe(test),
                  table ? "rows" : "images", table ? "table" : "folder", table ? "rows" : "images",
                  table ? "folder of train.csv and test.csv" : "test/ folder", table ? "rows" : "images");
        rc = EXIT_DATA;
        goto done;
    }
    /* a resumed model is the checkpoint's: its text, parameters, seed and dropout count */
    if (o.init && !(model = train_init_model(ctx, &o, train, &rc)))
        goto done;
    if (!model && !(model = o.resume ? ember_model_from_checkpoint(ctx, o.resume) : ember_model_new(ctx, o.model, train, o.seed))) {
        rc = cli_fail(ctx, o.resume ? "cannot load the model to resume" : "cannot build the model");
        goto done;
    }
    /* found now, not after the training, which would be lost */
    if ((rc = train_check_outputs(&o, ctx, model, train)) != EXIT_OK)
        goto done;
    /* the shuffle's stream differs from the initialisation's */
    if (!(opt = make_optimizer(&o, model)) ||
        !(batches = ember_batcher_new(train, o.batch, true, o.seed ^ 0x5eed5eed5eedull))) {
        rc = cli_fail(ctx, "cannot set up training");
        goto done;
    }
    ember_augment augment;
    if (!train_parse_augment(o.augment, &augment, o.seed)) {
        cli_error("--augment takes crop:P (P pixels) and flip, joined by a comma, or none; not \"%s\"", o.augment);
        rc = EXIT_USAGE;
        goto done;
    }
    if (ember_batcher_set_augment(batches, &augment) != EMBER_OK) {
        rc = cli_fail(ctx, "cannot augment this data");
        goto done;
    }
    if (o.resume) {
        if ((rc = train_resume_state(ctx, &o, opt, ember_batcher_steps(batches), &pos)) != EXIT_OK)
            goto done;
        if (ember_batcher_seek(batches, pos.epochs_done, pos.step_in_epoch) != EMBER_OK) {
            rc = cli_fail(ctx, "cannot resume: the checkpoint's place is not in this data");
            goto done;
        }
        if (lead)
            fprintf(stderr, "ember: resuming %s at epoch %lld, step %lld of %lld\n", o.resume,
                    (long long)pos.epochs_done + 1, (long long)pos.step_in_epoch,
                    (long long)ember_batcher_steps(batches));
    }
    /* after the resume: every replica and rank starts from the master's state */
    if ((rc = start_parallel(&o, ctx, model, opt, devices, device_count, &par)) != EXIT_OK)
        goto done;
    if (lead)
        fprintf(stderr, "ember: %s\nember: %s on %s, %s lr %g%s%s, batch %lld\n", ember_model_describe(model),
                ember_dataset_describe(train), par ? ember_parallel_describe(par) : ember_ctx_device_name(ctx),
                o.optim, o.lr, strcmp(o.schedule, "constant") ? " " : "",
                strcmp(o.schedule, "constant") ? o.schedule : "", (long long)o.batch);

    int64_t per_full_epoch = ember_batcher_steps(batches), classes = ember_dataset_classes(train);
    /* text: every position of a window is scored, and its loss in bits per byte too */
    bool text = ember_dataset_vocab(train, NULL) > 0;
    int64_t positions = text ? ember_dataset_sample_shape(train)[0] : 1;
    float *scratch = malloc((size_t)(o.batch * positions * classes) * sizeof *scratch);
    int32_t *labels = malloc((size_t)(o.batch * positions) * sizeof *labels);
    if (!scratch || !labels) {
        free(scratch);
        free(labels);
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    struct window window = {.start = cli_now(), .cpu_start = cpu_seconds()};
    ember_lr_schedule schedule = train_schedule(&o, per_full_epoch);
    if (o.steps > schedule.total_steps) /* --epochs ends the run first: say so rather than stop short quietly */
        fprintf(stderr, "ember: note: --steps %lld is more than --epochs %lld allow (%lld steps of batch %lld); "
                "training stops after %lld\n", (long long)o.steps, (long long)o.epochs,
                (long long)schedule.total_steps, (long long)o.batch, (long long)schedule.total_steps);
    if (pos.total_steps >= schedule.total_steps)
        fprintf(stderr, "ember: note: %s already trained %lld steps; --epochs %lld asks for no more\n", o.resume,
                (long long)pos.total_steps, (long long)o.epochs);

    ember_on_stop_request(on_stop_request);

    double first_step_s = 0.0;
    const char *lost_output = NULL; /* a file that could not be written stopped the run */
    bool stopping = false; /* a signal here, or under mpirun on any rank: stop after this step */
    bool diverging = false; /* not learning, and --stop-if-diverging: stop now */
    struct train_watch watch;
    train_watch_begin(&watch, &o, per_full_epoch, (int)classes, lead);
    for (int64_t epoch = pos.epochs_done + 1; epoch <= o.epochs && rc == EXIT_OK; epoch++) {
        if (o.steps && pos.total_steps >= o.steps)
            break;
        /* this epoch's steps: the rest of it, unless --steps ends the run sooner */
        int64_t first = pos.step_in_epoch, limit = per_full_epoch - first;
        if (o.steps && o.steps - pos.total_steps < limit)
            limit = o.steps - pos.total_steps;
        struct epoch_result r = {.epoch = (int)epoch, .text = text};
        struct progress bar;
        progress_begin(&bar, (int)epoch, (int)o.epochs, limit, o.quiet); /* --steps ends it sooner: the ETA says so */
        double start = cli_now();
        /* the profile covers the training steps, not the test pass */
        if ((o.profile || o.trace) && ember_profile_start(ctx, o.trace != NULL) != EMBER_OK) {
            rc = cli_fail(ctx, "cannot profile");
            break;
        }
        bool turned = false; /* the batcher said no more: the epoch's end, or a device error */
        ember_tensor *x, *y;
        for (;;) {
            if (!ember_batcher_next(batches, &x, &y)) {
                turned = true;
                break;
            }
            r.lr = ember_lr_at(&schedule, pos.total_steps);
            ember_optim_set_lr(opt, r.lr);
            float value = NAN;
            int64_t correct = 0;
            if (par) { /* the same step, shared between devices or ranks */
                if (stop_signal) /* every rank learns it with this step's sums, and all stop after it */
                    ember_parallel_request_stop(par);
                if (ember_parallel_step(par, x, y, &value, &correct) != EMBER_OK) {
                    rc = cli_fail(ctx, "training failed");
                    break;
                }
            } else {
                ember_optim_zero_grad(opt);
                ember_tensor *logits = ember_model_forward(model, x); /* (B, classes) or (B, T, classes) */
                ember_tensor *loss = ember_cross_entropy(logits, y);  /* scalar */
                if (ember_backward(loss) != EMBER_OK ||
                    (o.clip > 0 && ember_clip_grad_norm(ember_model_params(model), (float)o.clip, NULL) != EMBER_OK) ||
                    ember_optim_step(opt) != EMBER_OK ||
                    ember_tensor_item(loss, &value) != EMBER_OK ||
                    count_correct(logits, y, scratch, labels, &correct) != EMBER_OK) {
                    rc = cli_fail(ctx, "training failed");
                    break;
                }
            }
            ember_tape_clear(ctx);
            if (!isfinite(value)) {
                cli_error("training diverged: the loss is %s at step %lld; try a lower --lr",
                          isnan(value) ? "NaN" : "infinite", (long long)(pos.total_steps + 1));
                rc = EXIT_FAILURE_OTHER;
                if (o.stop_if_diverging && lead)
                    train_watch_stop(&watch, &o, ctx, model, train);
                break;
            }
            if (pos.total_steps == 0)
                first_step_s = cli_now() - cli_start_time;
            r.steps++;
            r.images += ember_tensor_dim(x, 0);
            pos.total_steps++;
            pos.step_in_epoch++;
            pos.loss_sum += value;
            pos.correct += correct;
            pos.seen += ember_tensor_numel(y); /* images, or text's tokens */
            window.steps++;
            window.loss_sum += value;
            window.correct += correct;
            window.seen += ember_tensor_numel(y);
            if (o.log_every && o.metrics && pos.total_steps % o.log_every == 0) {
                if (!write_window(&o, epoch, pos.total_steps, r.lr, &window)) {
                    rc = EXIT_DATA;
                    lost_output = "--metrics";
                    break;
                }
                window = (struct window){.start = cli_now(), .cpu_start = cpu_seconds()};
            }
            progress_update(&bar, r.steps, value);
            if ((diverging = train_watch_step(&watch, &o, model, &pos, value)))
                break;
            stopping = par ? ember_parallel_stopping(par) : stop_signal != 0;
            if (stopping || r.steps == limit)
                break; /* interrupted, or --steps ran out, or the epoch's last batch */
            if (o.save_every && !o.save_every_epochs && pos.total_steps % o.save_every == 0 &&
                (rc = save_run(&o, ctx, model, opt, train, &pos, "--save-every")) != EXIT_OK) {
                lost_output = checkpoint_lost;
                break;
            }
        }
        progress_end(&bar);
        ember_profile_stop(ctx);
        if (rc != EXIT_OK || diverging)
            break;
        if (turned && pos.step_in_epoch < per_full_epoch) { /* the batcher stopped early */
            rc = cli_fail(ctx, "training failed");
            break;
        }
        r.seconds = cli_now() - start;
        r.total_steps = pos.total_steps;
        r.train_loss = pos.step_in_epoch ? pos.loss_sum / (double)pos.step_in_epoch : 0.0;
        r.train_acc = pos.seen ? (double)pos.correct / (double)pos.seen : 0.0;
        r.first_step_s = first_step_s;
        if (stopping) {
            /* the step is done: save where the run stands (after an epoch's
             * last batch too: resuming then ends that epoch, test pass included).
             * Under mpirun every rank stops after the same step; rank 0 saves. */
            int sig = stop_signal ? stop_signal : SIGTERM;
            if (!lead) {
                rc = 128 + sig;
                break;
            }
            if (!o.save)
                o.save = "ember-interrupted.safetensors";
            rc = save_run(&o, ctx, model, opt, train, &pos, "interrupted");
            /* the settings and threads come back from the checkpoint; the device is the one option to
             * repeat; the program as it was typed (build/ember), so that the line can be pasted */
            fprintf(stderr, "ember: %s at epoch %lld, step %lld of %lld; to go on: %s train --resume %s%s%s\n",
                    stop_signal == SIGINT    ? "interrupted (Ctrl-C)"
                    : stop_signal == SIGTERM ? "stopped (SIGTERM)"
                                             : "stopped (another rank was interrupted)",
                    (long long)epoch, (long long)pos.step_in_epoch, (long long)per_full_epoch,
                    cli_argv && cli_argv[0] ? cli_argv[0] : "ember", o.save, o.device_given ? " --device " : "",
                    o.device_given ? o.device : "");
            rc = rc == EXIT_OK ? 128 + sig : rc;
            break;
        }
        /* --steps may end the run inside the epoch: it is reported as far as it went */
        bool whole = pos.step_in_epoch == per_full_epoch;
        if (whole) {
            if (!turned && ember_batcher_next(batches, &x, &y)) { /* turn the batcher to the next epoch */
                rc = cli_fail(ctx, "training failed: the batcher went past the epoch's end");
                break;
            }
            pos.epochs_done = epoch;
            pos.step_in_epoch = 0;
            pos.loss_sum = 0.0;
            pos.correct = pos.seen = 0;
        }

        if (par) { /* every rank still holds rank 0's parameters; the shares the step settled on */
            bool drifted = false;
            if (ember_parallel_check(par, &drifted) != EMBER_OK) {
                rc = cli_fail(ctx, "training failed");
                break;
            }
            if (drifted && lead)
                fprintf(stderr, "ember: warning: the ranks' parameters had drifted apart; rank 0's went to all\n");
            if (lead)
                fprintf(stderr, "ember: devices: %s\n", ember_parallel_describe(par));
        }
        /* every rank evaluates (the same figure), so none waits on rank 0 past the time limit */
        if (o.eval) {
            double t0 = cli_now();
            if (ember_model_evaluate(model, test, o.batch, &r.test_acc, &r.test_loss) != EMBER_OK) {
                rc = cli_fail(ctx, "evaluation failed");
                break;
            }
            r.eval_seconds = cli_now() - t0;
            if (lead && text)
                fprintf(stderr, "epoch %lld/%lld: train loss %.4f (%.3f bits per byte), validation loss %.4f (%.3f bits "
                    "per byte), next-byte accuracy %.4f, %.0f tokens/s, %.1f s\n", (long long)epoch,
                    (long long)o.epochs, r.train_loss, r.train_loss / M_LN2, r.test_loss, r.test_loss / M_LN2,
                    r.test_acc, (double)(r.images * positions) / r.seconds, r.seconds);
            else if (lead)
                fprintf(stderr, "epoch %lld/%lld: train loss %.4f, train accuracy %.4f, test loss %.4f, test accuracy "
                    "%.4f, %.0f images/s, %.1f s\n", (long long)epoch, (long long)o.epochs, r.train_loss, r.train_acc,
                    r.test_loss, r.test_acc, (double)r.images / r.seconds, r.seconds);
        } else if (lead && text) {
            fprintf(stderr, "epoch %lld/%lld: train loss %.4f (%.3f bits per byte), %.0f tokens/s, %.1f s\n",
                    (long long)epoch, (long long)o.epochs, r.train_loss, r.train_loss / M_LN2,
                    (double)(r.images * positions) / r.seconds, r.seconds);
        } else if (lead) {
            fprintf(stderr, "epoch %lld/%lld: train loss %.4f, train accuracy %.4f, %.0f images/s, %.1f s\n",
                    (long long)epoch, (long long)o.epochs, r.train_loss, r.train_acc, (double)r.images / r.seconds,
                    r.seconds);
        }
        if (o.metrics && !write_metrics(&o, ctx, &r)) {
            rc = EXIT_DATA;
            lost_output = "--metrics";
            break;
        }
        if (o.eval && r.test_acc > pos.best_acc) {
            pos.best_acc = r.test_acc;
            pos.best_epoch = epoch;
            if (o.save && (rc = train_save_best(&o, ctx, model, train, &pos)) != EXIT_OK) {
                lost_output = "the best epoch's checkpoint";
                break;
            }
        }
        if ((diverging = train_watch_epoch(&watch, &o, epoch, o.eval ? r.test_acc : r.train_acc, (int)classes)))
            break;
        if (o.early_stop && epoch - pos.best_epoch >= o.early_stop && epoch < o.epochs) {
            if (lead)
                fprintf(stderr, "ember: stopping early: no better test accuracy for %lld epochs (the best, %.4f, was "
                    "epoch %lld%s%s)\n", (long long)o.early_stop, pos.best_acc, (long long)pos.best_epoch,
                    o.save ? "; its model is in " : "", o.save ? "the .best checkpoint" : "");
            break;
        }
        if (!whole)
            break;
        if (o.save && o.save_every && epoch < o.epochs &&
            (o.save_every_epochs ? epoch % o.save_every == 0 : pos.total_steps % o.save_every == 0) &&
            (rc = save_run(&o, ctx, model, opt, train, &pos, "every --save-every")) != EXIT_OK) {
            lost_output = checkpoint_lost;
            break;
        }
    }
    ember_stop_requests_default();
    free(scratch);
    free(labels);
    if (diverging && rc == EXIT_OK)
        rc = lead ? train_watch_stop(&watch, &o, ctx, model, train) : EXIT_FAILURE_OTHER;
    train_watch_free(&watch);
    if (rc == EXIT_OK && o.save)
        rc = save_run(&o, ctx, model, opt, train, &pos, "the end of the run");
    else if (lost_output && lead)
        save_after_failure(&o, ctx, model, opt, train, &pos, lost_output);
    if (rc == EXIT_OK && (o.profile || o.trace))
        rc = cli_profile_report(ctx, o.profile ? stdout : NULL, o.trace, "training steps");
done:
    ember_parallel_free(par);
    ember_batcher_free(batches);
    ember_optim_free(opt);
    ember_model_free(model);
    ember_dataset_free(train);
    ember_dataset_free(test);
    ember_ctx_free(ctx);
    train_options_free(&o);
    return cli_mpi_end(rc);
}
