/* SPDX-License-Identifier: MIT */
/*
 * tools/train-options.c — `ember train`'s command line: its --help, and
 * the options read into a struct train_options and checked against each
 * other (tools/train.h), before anything is opened or built.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

static const char usage[] =
    "usage: ember train [options]\n"
    "\n"
    "Trains a model and reports test accuracy after every epoch.\n"
    "\n"
    "  --model NAME|FILE   a built-in model (simplecnn, the default; ember summary --list\n"
    "                      names them all) or a model file (docs/models.md)\n"
    "  --data KIND         fashion-mnist (default), mnist, cifar10, cifar100, folder, random,\n"
    "                      npy, csv, text, chat (with --init MODEL.gguf)\n"
    "  --data-dir DIR      where the data set's files are (fashion-mnist defaults to\n"
#ifdef _WIN32
    "                      the folder fashion-mnist in the current folder);\n"
#else
    "                      /usr/share/datasets/fashion-mnist, from Debian's dataset-fashion-mnist);\n"
#endif
    "                      text: the file, every byte a token, its last tenth held out\n"
    "  --data text FILE    the same as --data text --data-dir FILE\n"
    "  --data chat FILE    conversations, JSON Lines of {\"messages\": [{\"role\": ..., \"content\":\n"
    "                      ...}, ...]} in the model's chat template, the loss on the\n"
    "                      assistant's replies alone (docs/models.md)\n"
    "  --context T         text: tokens per window (default 128)\n"
    "  --data npy PATH     NumPy arrays: a folder of x_train.npy, y_train.npy, x_test.npy,\n"
    "                      y_test.npy, or one .npz holding them (docs/interop.md)\n"
    "  --data csv PATH     a CSV table with a header row (a tenth of each class held out for\n"
    "                      testing, chosen by --seed), or a folder of train.csv and test.csv;\n"
    "                      features are standardised with the training split's statistics\n"
    "  --label COLUMN      csv: the column of the classes (default: the last)\n"
    "  --shape CxHxW       random: one sample's shape (default 1x28x28; 100 for linear);\n"
    "                      folder: the size to load images at (default: --init's input, else\n"
    "                      the first image's)\n"
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
    "  --matmul-precision P  highest (float32, the default), high or medium: on a CPU with\n"
    "                      AMX the large products as three bfloat16 ones (about 16 bits of\n"
    "                      each operand) or one (8 bits), as PyTorch's; elsewhere no change\n"
    "  --save FILE         write the model as safetensors (PyTorch's names), and beside it\n"
    "                      FILE.state.safetensors (the optimizer's state, for --resume) and\n"
    "                      FILE.best.safetensors (the epoch of the best test accuracy)\n"
    "  --save-every N      also save every N steps, or every N epochs written as Ne (2e)\n"
    "  --init FILE         start from the weights of a checkpoint or an ONNX model (and its\n"
    "                      model, unless --model is given), with a fresh optimizer and schedule;\n"
    "                      or a pretrained language model's GGUF file, fine-tuned on --data text\n"
    "                      FILE or --data chat FILE (cut by its own tokenizer; --context 256 and\n"
    "                      --batch 4 by default): with --lora, its adapters; without, every\n"
    "                      weight in F32 (--save writes them all; generate --weights reads them)\n"
    "  --init-skip NAMES   layers to leave freshly initialised (a new head): fc or fc,layer4\n"
    "  --lora SPEC         with --init MODEL.gguf: PEFT's LoRA adapters, r=8,alpha=16,dropout=0,\n"
    "                      targets=q,k,v,o,gate,up,down (the defaults: --lora \"\"; the model\n"
    "                      stays frozen);\n"
    "                      --save writes them (PEFT's names) and PEFT's adapter_config.json\n"
    "  --keep-activations  with --init MODEL.gguf: keep every block's activations for the\n"
    "                      backward pass; by default its projections' outputs are kept and the\n"
    "                      rest made again there: faster, four times the memory\n"
    "  --recompute-all     with --init MODEL.gguf: keep each block's input alone and make all\n"
    "                      of it again, products too: the least memory, a third more products\n"
    "                      (docs/models.md, \"Memory\")\n"
    "  --freeze NAMES      layers whose weights stay as they are: fc,layer4; except:fc for all\n"
    "                      but fc; backbone for all but --init-skip's (the new head trains)\n"
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

/* clang-format off */
enum { OPT_DATA_DIR = 256, OPT_NO_EVAL, OPT_WEIGHT_DECAY, OPT_FALLBACK, OPT_SCHEDULE, OPT_WARMUP, OPT_STEP_EPOCHS,
       OPT_GAMMA, OPT_MIN_LR, OPT_SAVE_EVERY, OPT_RESUME, OPT_LOG_EVERY, OPT_RUN_ID, OPT_EARLY_STOP,
       OPT_AUGMENT, OPT_PROFILE, OPT_TRACE, OPT_KEEP_DEVICES, OPT_INIT, OPT_INIT_SKIP, OPT_FREEZE, OPT_LABEL, OPT_STOP_DIVERGING,
       OPT_CONTEXT, OPT_CLIP, OPT_LORA, OPT_KEEP_ACTIVATIONS, OPT_RECOMPUTE_ALL,
       OPT_MATMUL_PRECISION };
/* clang-format on */

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

int train_parse_options(int argc, char **argv, struct train_options *o)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"data", required_argument, NULL, 'd'},
        {"data-dir", required_argument, NULL, OPT_DATA_DIR},
        {"label", required_argument, NULL, OPT_LABEL},
        {"shape", required_argument, NULL, 'S'},
        {"resize", no_argument, NULL, 'R'},
        {"epochs", required_argument, NULL, 'e'},
        {"steps", required_argument, NULL, 'n'},
        {"batch", required_argument, NULL, 'b'},
        {"optim", required_argument, NULL, 'O'},
        {"lr", required_argument, NULL, 'l'},
        {"momentum", required_argument, NULL, 'M'},
        {"weight-decay", required_argument, NULL, OPT_WEIGHT_DECAY},
        {"schedule", required_argument, NULL, OPT_SCHEDULE},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"step-epochs", required_argument, NULL, OPT_STEP_EPOCHS},
        {"gamma", required_argument, NULL, OPT_GAMMA},
        {"min-lr", required_argument, NULL, OPT_MIN_LR},
        {"save-every", required_argument, NULL, OPT_SAVE_EVERY},
        {"resume", required_argument, NULL, OPT_RESUME},
        {"init", required_argument, NULL, OPT_INIT},
        {"init-skip", required_argument, NULL, OPT_INIT_SKIP},
        {"freeze", required_argument, NULL, OPT_FREEZE},
        {"log-every", required_argument, NULL, OPT_LOG_EVERY},
        {"run-id", required_argument, NULL, OPT_RUN_ID},
        {"early-stop", required_argument, NULL, OPT_EARLY_STOP},
        {"augment", required_argument, NULL, OPT_AUGMENT},
        {"stop-if-diverging", no_argument, NULL, OPT_STOP_DIVERGING},
        {"profile", no_argument, NULL, OPT_PROFILE},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"context", required_argument, NULL, OPT_CONTEXT},
        {"clip", required_argument, NULL, OPT_CLIP},
        {"lora", required_argument, NULL, OPT_LORA},
        {"keep-activations", no_argument, NULL, OPT_KEEP_ACTIVATIONS},
        {"recompute-all", no_argument, NULL, OPT_RECOMPUTE_ALL},
        {"matmul-precision", required_argument, NULL, OPT_MATMUL_PRECISION},
        {"seed", required_argument, NULL, 's'},
        {"device", required_argument, NULL, 'D'},
        {"fallback", required_argument, NULL, OPT_FALLBACK},
        {"keep-devices", no_argument, NULL, OPT_KEEP_DEVICES},
        {"threads", required_argument, NULL, 't'},
        {"save", required_argument, NULL, 'o'},
        {"metrics", required_argument, NULL, 'j'},
        {"no-eval", no_argument, NULL, OPT_NO_EVAL},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct train_options){.model = "simplecnn",
                                .optim = "adam",
                                .epochs = 1,
                                .batch = 64,
                                .lr = 0.001,
                                .eval = true,
                                .schedule = "constant",
                                .gamma = 0.1,
                                .augment = "none",
                                .freeze = "none",
                                .device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto",
                                .data = {.kind = "fashion-mnist"}};
    int c, index = 0;
    bool ok = true;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "h", longopts, &index)) != -1) {
        if (c != '?' && c != 'h') /* for --resume: which settings the command line gave */
            train_mark_given(o, longopts[index].name);
        index = 0;
        switch (c) {
        case 'm': o->model = optarg, o->model_given = true; break;
        case OPT_INIT: o->init = optarg; break;
        case OPT_INIT_SKIP: o->init_skip = optarg; break;
        case OPT_FREEZE: o->freeze = optarg; break;
        case 'd': o->data.kind = optarg; break;
        case OPT_DATA_DIR: o->data.dir = optarg; break;
        case OPT_LABEL: o->data.label = optarg; break;
        case 'S':
            ok = o->shape_given =
                cli_parse_shape("shape", optarg, &o->data.sample_ndim, o->data.sample_shape);
            break;
        case 'R': o->data.resize = true; break;
        case 'e':
            ok = train_parse_setting(o, "epochs", optarg);
            o->epochs_given = true;
            break;
        case 'n': ok = cli_parse_int("steps", optarg, 1, INT64_MAX / 2, &o->steps); break;
        case 'b': ok = train_parse_setting(o, "batch", optarg); break;
        case 'O': o->optim = optarg; break;
        case 'l': ok = train_parse_setting(o, "lr", optarg); break;
        case 'M': ok = train_parse_setting(o, "momentum", optarg); break;
        case OPT_WEIGHT_DECAY: ok = train_parse_setting(o, "weight-decay", optarg); break;
        case 's': ok = cli_parse_u64("seed", optarg, &o->seed); break;
        case 'D':
            o->device = optarg;
            o->device_given = true;
            break;
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
        case OPT_LORA: o->lora = optarg; break;
        case OPT_KEEP_ACTIVATIONS: o->keep_activations = true; break;
        case OPT_RECOMPUTE_ALL: o->recompute_all = true; break;
        case OPT_MATMUL_PRECISION:
            ok = cli_parse_matmul_precision(optarg, &o->matmul_precision);
            o->matmul_precision_given = true;
            break;
        case 't':
            ok = cli_parse_int("threads", optarg, 0, 4096, &o->threads);
            o->threads_given = true;
            break;
        case 'o': o->save = optarg; break;
        case 'j': o->metrics = optarg; break;
        case OPT_NO_EVAL: o->eval = false; break;
        case 'q': o->quiet = true; break;
        case 'v': o->verbose = true; break;
        case 'h': fputs(usage, stdout); return -1;
        default: ok = false; break;
        }
    }
    /* --data npy PATH, --data csv PATH, --data text FILE, --data chat FILE: the data's path follows its kind
     */
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
    if (ok && strcmp(o->optim, "adam") != 0 && strcmp(o->optim, "adamw") != 0 &&
        strcmp(o->optim, "sgd") != 0) {
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
    if (ok && o->init && cli_is_gguf(o->init)) { /* a pretrained language model (tools/train-lm.c) */
        o->base = o->init;
        o->init = NULL;
        if (!train_given(o, "batch"))
            o->batch = 4; /* windows of 256 tokens, each scored over the whole vocabulary */
    }
    if (ok && strcmp(o->data.kind, "chat") == 0 && !o->base && !o->resume) {
        cli_error("--data chat is conversations for a pretrained language model: give --init MODEL.gguf");
        ok = false;
    }
    if (ok && (o->keep_activations || o->recompute_all) && !o->base && !o->resume) {
        cli_error("%s is for fine-tuning a language model: give --init MODEL.gguf",
                  o->keep_activations ? "--keep-activations" : "--recompute-all");
        ok = false;
    }
    if (ok && o->keep_activations && o->recompute_all) {
        cli_error("--keep-activations keeps what --recompute-all makes again: give one of them");
        ok = false;
    }
    if (ok && o->lora && !o->base && !o->resume) {
        cli_error("--lora adapts a pretrained language model: give --init MODEL.gguf");
        ok = false;
    }
    if (ok && o->lora) { /* said now, not after the model has loaded */
        ember_lora_options lo;
        char targets[128];
        ok = train_parse_lora(o->lora, &lo, targets, sizeof targets);
    }
    if (ok && (o->init || o->base) && o->resume) {
        cli_error("--init starts a new run from weights; --resume goes on with a run: give one of them");
        ok = false;
    }
    if (ok && o->init_skip && !o->init) {
        cli_error("--init-skip names layers --init leaves out: give --init FILE");
        ok = false;
    }
    if (ok && strcmp(o->freeze, "backbone") == 0 && !o->init_skip) {
        cli_error(
            "--freeze backbone freezes every layer but the new head --init-skip names: give --init FILE "
            "and --init-skip NAMES, or name the layers to freeze");
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
