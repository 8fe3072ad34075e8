/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-train.c — `ember train`: the documents' training loop.
 *
 * A run is its setup (train_setup), its epochs (train_epoch) and each
 * epoch's steps (train_step), over one struct train_run. A step is the one
 * every framework's tutorial shows: zero_grad, forward, loss, backward,
 * step. Around it: the learning-rate schedule, checkpoints every N steps
 * or epochs (and of the best epoch), Ctrl-C that finishes the step and
 * saves, and --resume, which goes on from a checkpoint as if the run had
 * never stopped (tools/train.h). Its options: tools/train-options.c.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
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

struct epoch_result {
    int epoch;
    int64_t steps, images;
    int64_t total_steps; /* the run's steps so far, resumed ones included */
    double train_loss, train_acc, test_loss, test_acc, seconds, eval_seconds, first_step_s;
    float lr;  /* the rate of the epoch's last step */
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
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec * 1e-9
                                                            : 0.0;
}

/* One --log-every line: the window's loss and accuracy, at a step. */
static bool write_window(const struct train_options *o, int64_t epoch, int64_t step, float lr,
                         const struct window *w)
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
            w->seen ? (double)w->correct / (double)w->seen : 0.0, lr,
            seconds > 0 ? (double)w->seen / seconds : 0.0, cpu_seconds() - w->cpu_start);
    bool ok = fclose(f) == 0;
    if (!ok)
        cli_error("writing --metrics file %s failed: %s", o->metrics, strerror(errno));
    return ok;
}

/* How many of a batch's predictions are right: logits (n, classes) against
 * y (n), or a sequence's (n, T, classes) against (n, T), every position */
/* the predictions that hit their target, out of *scored targets (a chat's
 * ignored ones, EMBER_IGNORE_INDEX, are neither) */
static ember_status count_correct(ember_tensor *logits, ember_tensor *y, float *scratch, int32_t *labels,
                                  int64_t *correct, int64_t *scored)
{
    int64_t n = ember_tensor_numel(y), classes = ember_tensor_dim(logits, -1);
    ember_status st = ember_tensor_read(logits, scratch, (size_t)(n * classes) * sizeof *scratch);
    if (st == EMBER_OK)
        st = ember_tensor_read(y, labels, (size_t)n * sizeof *labels);
    for (int64_t i = 0; st == EMBER_OK && i < n; i++) {
        if (labels[i] == EMBER_IGNORE_INDEX)
            continue;
        const float *row = scratch + i * classes;
        int64_t best = 0;
        for (int64_t k = 1; k < classes; k++)
            if (row[k] > row[best])
                best = k;
        *correct += best == labels[i];
        ++*scored;
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
    fprintf(f,
            "\"images_per_s\": %.1f, \"seconds\": %.3f, \"eval_seconds\": %.3f, \"steps\": %lld, "
            "\"total_steps\": %lld, ",
            r->seconds > 0 ? (double)r->images / r->seconds : 0.0, r->seconds, r->eval_seconds,
            (long long)r->steps, (long long)r->total_steps);
    fprintf(f, "\"device\": ");
    cli_json_string(f, ember_ctx_device_name(ctx));
    fprintf(f, ", \"model\": ");
    cli_json_string(f, o->model);
    fprintf(f, ", \"data\": ");
    cli_json_string(f, o->data.kind);
    fprintf(f, ", \"batch\": %lld, \"lr\": %g, \"lr_last\": %g, \"schedule\": \"%s\", \"optim\": ",
            (long long)o->batch, o->lr, r->lr, o->schedule);
    cli_json_string(f, o->optim);
    if (r->text) { /* a loss in nats per byte over ln 2 */
        fprintf(f, ", \"train_bits_per_byte\": ");
        cli_json_number(f, r->train_loss / M_LN2, 6);
        fprintf(f, ", \"test_bits_per_byte\": ");
        cli_json_number(f, o->eval ? r->test_loss / M_LN2 : NAN, 6);
    }
    uint64_t in_use, held;
    ember_ctx_memory_peak(ctx, &in_use, &held);
    fprintf(f,
            ", \"seed\": %llu, \"first_step_s\": %.4f, \"peak_device_mib\": %.1f, \"peak_device_held_mib\": "
            "%.1f, \"peak_rss_mib\": %.1f}\n",
            (unsigned long long)o->seed, r->first_step_s, (double)in_use / (1024.0 * 1024.0),
            (double)held / (1024.0 * 1024.0), cli_peak_rss_mib());
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
        fprintf(stderr,
                "ember: stopped at step %lld: the checkpoint could not be written; the last one saved to %s, "
                "if any, is whole\n",
                (long long)pos->total_steps, o->save);
        return;
    }
    if (!o->save)
        o->save = "ember-interrupted.safetensors";
    if (save_run(o, ctx, model, opt, train, pos, "stopped: a file could not be written") == EXIT_OK)
        fprintf(stderr,
                "ember: stopped at step %lld because %s could not be written; the run is saved: once "
                "that is fixed, go on with ember train --resume %s\n",
                (long long)pos->total_steps, lost, o->save);
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
            cli_error("--device takes up to %d devices, joined by commas (cpu,opencl:0), not \"%s\"",
                      MAX_DEVICES, spec);
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
                          char names[MAX_DEVICES][32], int devices, const ember_dataset *train,
                          ember_parallel **par)
{
    *par = NULL;
    if (devices < 2 && !cli_mpi_collective())
        return EXIT_OK;
    if (ember_dataset_ignores(train)) {
        cli_error("a chat's loss on the replies alone works on one device in one process; train on one");
        return EXIT_USAGE;
    }
    if (o->clip > 0) {
        cli_error("--clip works on one device in one process; train without it, or on one device");
        return EXIT_USAGE;
    }
    const char *others[MAX_DEVICES];
    for (int i = 1; i < devices; i++)
        others[i - 1] = names[i];
    ember_parallel_options po = {.devices = others,
                                 .device_count = devices - 1,
                                 .threads = (int)o->threads,
                                 .keep_all = o->keep_devices,
                                 .collective = cli_mpi_collective()};
    if (!(*par = ember_parallel_new(model, opt, &po)))
        return cli_fail(ctx, "cannot train on several devices");
    return EXIT_OK;
}

/* A run of `ember train`, from its setup to its last epoch: what the
 * setup makes, what the steps count, and how the run is ending. */
struct train_run {
    struct train_options o;
    bool lead; /* rank 0 under mpirun, or the only process: it speaks and writes */
    char devices[MAX_DEVICES][32];
    int device_count;
    char run_id[64];
    ember_ctx *ctx;
    ember_dataset *train, *test;
    ember_model *model;
    ember_lm *lm; /* --init MODEL.gguf: the language model, which owns the model (tools/train-lm.c) */
    ember_optim *opt;
    ember_batcher *batches;
    ember_parallel *par;
    struct train_position pos;
    int64_t per_full_epoch, classes;
    /* text: every position of a window is scored, and its loss in bits per byte too (bytes' text; a
     * language model's tokens are scored per token) */
    bool text, bytes;
    int64_t positions;
    float *scratch; /* count_correct's */
    int32_t *labels;
    struct window window;
    ember_lr_schedule schedule;
    struct train_watch watch;
    struct progress_run progress; /* the run as this process trains it, for the progress line's ETA */
    double first_step_s;
    const char *lost_output; /* a file that could not be written stopped the run */
    bool stopping;           /* a signal here, or under mpirun on any rank: stop after this step */
    bool diverging;          /* not learning, and --stop-if-diverging: stop now */
};

/* A model of text writes text shaped like its file's (its words, its
 * layout) after about this many bytes seen, whatever the file's size:
 * gpt-tiny on the 2.6 MB of the fortunes after three epochs of 566 steps
 * of 32 windows of 128 (English-shaped words, a fortune's layout and
 * attribution; after one, at 2.4 million, mostly word-shaped noise:
 * README.md), on a small book by learning it nearly by heart. */
static const double TEXT_BYTES_TO_WRITE_LIKE_IT = 7e6;

/* Text without --epochs or --steps: the epochs that show it that many
 * bytes (a 35 KB book is 4 steps of batch 64 an epoch, and one epoch
 * writes noise), said with how to choose otherwise. */
static void choose_text_epochs(struct train_run *run)
{
    double per_step = (double)(run->o.batch * run->positions);
    int64_t steps = (int64_t)ceil(TEXT_BYTES_TO_WRITE_LIKE_IT / per_step);
    int64_t epochs = (steps + run->per_full_epoch - 1) / run->per_full_epoch;
    if (epochs <= run->o.epochs)
        return;
    run->o.epochs = epochs < TRAIN_MAX_EPOCHS ? epochs : TRAIN_MAX_EPOCHS;
    if (run->lead)
        fprintf(stderr,
                "ember: note: an epoch of this text is %lld steps of %lld windows of %lld bytes; a model of "
                "text writes like its file after about %.1f million bytes seen, so this run trains %lld "
                "epochs (%lld steps; --epochs or --steps chooses otherwise), for as long as the progress "
                "line's ETA says\n",
                (long long)run->per_full_epoch, (long long)run->o.batch, (long long)run->positions,
                TEXT_BYTES_TO_WRITE_LIKE_IT / 1e6, (long long)run->o.epochs,
                (long long)(run->o.epochs * run->per_full_epoch));
}

/* Everything before the first step: the device, the data, the model, the
 * optimizer and the batcher, a resumed run's state, the parallel replicas,
 * and the buffers the steps count with. EXIT_OK, or the exit status with
 * the reason said. */
static int train_setup(struct train_run *run)
{
    int rc = EXIT_OK;
    if ((rc = cli_open_device(run->ctx, run->devices[0], run->o.fallback)) != EXIT_OK)
        return rc;
    if (run->o.resume && (rc = train_resume_settings(run->ctx, &run->o)) != EXIT_OK)
        return rc;
    if ((rc = train_init_shape(run->ctx, &run->o)) != EXIT_OK)
        return rc;
    if (run->o.resume) /* the threads the run had, on the device already open */
        ember_ctx_set_threads(run->ctx, (int)run->o.threads);
    ember_ctx_set_matmul_precision(run->ctx, run->o.matmul_precision);
    /* training's products are float ones (a quantised model's are
     * dequantised for a batch's rows), which HIGH and MEDIUM change alike */
    if (run->o.matmul_precision != EMBER_MATMUL_HIGHEST &&
        !ember_ctx_matmul_precision_matters(run->ctx, EMBER_MATMUL_HIGH) && !run->o.quiet)
        fprintf(stderr,
                "ember: --matmul-precision %s changes nothing on %s (only a CPU with AMX has a faster way): "
                "its products stay float32\n",
                cli_matmul_precision_name(run->o.matmul_precision), ember_ctx_device_name(run->ctx));
    if (!run->o.run_id) { /* "20261122T235501-4242": when, and which process */
        time_t now = time(NULL);
        struct tm utc;
        gmtime_r(&now, &utc);
        size_t at = strftime(run->run_id, sizeof run->run_id, "%Y%m%dT%H%M%S", &utc);
        snprintf(run->run_id + at, sizeof run->run_id - at, "-%ld", (long)getpid());
        run->o.run_id = run->run_id;
    }
    if (run->o.base && run->device_count > 1) {
        cli_error("a language model fine-tunes on one device in one process; give one --device");
        return EXIT_USAGE;
    }
    if (run->o.base &&
        (rc = train_lm_setup(&run->o, run->ctx, &run->lm, &run->train, &run->test, &run->model)) != EXIT_OK)
        return rc;
    if (run->lm) /* the metrics' "model" */
        run->o.model = ember_model_name(run->model);
    if (!run->lm &&
        (!(run->train = ember_dataset_open(run->ctx, &run->o.data, EMBER_TRAIN)) ||
         (run->o.eval && !(run->test = ember_dataset_open(run->ctx, &run->o.data, EMBER_TEST))))) {
        rc = cli_fail(run->ctx, "cannot load the data");
        if (rc == EXIT_USAGE && run->o.resume) /* the kind or shape came from the checkpoint */
            rc = EXIT_DATA;
        return rc;
    }
    /* found now, not after the first epoch's training, which would be lost */
    if (run->test && ember_dataset_count(run->test) == 0) {
        bool table = strcmp(run->o.data.kind, "csv") == 0;
        cli_error(
            "%s has no %s to test on (a %s needs at least two %s in some class to hold one out, or a %s): "
            "add %s, or train without evaluating (--no-eval)",
            ember_dataset_describe(run->test), table ? "rows" : "images", table ? "table" : "folder",
            table ? "rows" : "images", table ? "folder of train.csv and test.csv" : "test/ folder",
            table ? "rows" : "images");
        rc = EXIT_DATA;
        return rc;
    }
    /* a resumed model is the checkpoint's: its text, parameters, seed and dropout count */
    if (run->o.init && !(run->model = train_init_model(run->ctx, &run->o, run->train, &rc)))
        return rc;
    if (!run->model && !run->lm &&
        !(run->model = run->o.resume ? ember_model_from_checkpoint(run->ctx, run->o.resume)
                                     : ember_model_new(run->ctx, run->o.model, run->train, run->o.seed))) {
        rc = cli_fail(run->ctx, run->o.resume ? "cannot load the model to resume" : "cannot build the model");
        return rc;
    }
    if (!run->lm && (rc = train_freeze(&run->o, run->model, run->lead)) != EXIT_OK)
        return rc;
    /* found now, not after the training, which would be lost */
    if ((rc = train_check_outputs(&run->o, run->ctx, run->model, run->train)) != EXIT_OK)
        return rc;
    /* the shuffle's stream differs from the initialisation's */
    if (!(run->opt = make_optimizer(&run->o, run->model)) ||
        !(run->batches =
              ember_batcher_new(run->train, run->o.batch, true, run->o.seed ^ 0x5eed5eed5eedull))) {
        rc = cli_fail(run->ctx, "cannot set up training");
        return rc;
    }
    ember_augment augment;
    if (!train_parse_augment(run->o.augment, &augment, run->o.seed)) {
        cli_error("--augment takes crop:P (P pixels) and flip, joined by a comma, or none; not \"%s\"",
                  run->o.augment);
        rc = EXIT_USAGE;
        return rc;
    }
    if (ember_batcher_set_augment(run->batches, &augment) != EMBER_OK) {
        rc = cli_fail(run->ctx, "cannot augment this data");
        return rc;
    }
    if (run->o.resume) {
        if ((rc = train_resume_state(run->ctx, &run->o, run->opt, ember_batcher_steps(run->batches),
                                     &run->pos)) != EXIT_OK)
            return rc;
        if (ember_batcher_seek(run->batches, run->pos.epochs_done, run->pos.step_in_epoch) != EMBER_OK) {
            rc = cli_fail(run->ctx, "cannot resume: the checkpoint's place is not in this data");
            return rc;
        }
        if (run->lead)
            fprintf(stderr, "ember: resuming %s at epoch %lld, step %lld of %lld\n", run->o.resume,
                    (long long)run->pos.epochs_done + 1, (long long)run->pos.step_in_epoch,
                    (long long)ember_batcher_steps(run->batches));
    }
    /* after the resume: every replica and rank starts from the master's state */
    if ((rc = start_parallel(&run->o, run->ctx, run->model, run->opt, run->devices, run->device_count,
                             run->train, &run->par)) != EXIT_OK)
        return rc;
    if (run->lead)
        fprintf(stderr, "ember: %s\nember: %s on %s, %s lr %g%s%s, batch %lld\n",
                ember_model_describe(run->model), ember_dataset_describe(run->train),
                run->par ? ember_parallel_describe(run->par) : ember_ctx_device_name(run->ctx), run->o.optim,
                run->o.lr, strcmp(run->o.schedule, "constant") ? " " : "",
                strcmp(run->o.schedule, "constant") ? run->o.schedule : "", (long long)run->o.batch);

    run->per_full_epoch = ember_batcher_steps(run->batches);
    run->classes = ember_dataset_classes(run->train);
    /* text: every position of a window is scored, and its loss in bits per byte too */
    run->bytes = ember_dataset_vocab(run->train, NULL) > 0;
    run->text = run->bytes || run->lm;
    run->positions = run->text ? ember_dataset_sample_shape(run->train)[0] : 1;
    run->scratch = malloc((size_t)(run->o.batch * run->positions * run->classes) * sizeof *run->scratch);
    run->labels = malloc((size_t)(run->o.batch * run->positions) * sizeof *run->labels);
    if (!run->scratch || !run->labels) {
        free(run->scratch);
        free(run->labels);
        run->scratch = NULL;
        run->labels = NULL;
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
        return rc;
    }
    if (run->bytes && !run->o.resume && !run->o.epochs_given && !run->o.steps)
        choose_text_epochs(run);
    /* where fine-tuning starts from, to hold the end against */
    if (run->lm && run->o.eval && !run->o.resume) {
        double acc = 0.0, loss = 0.0;
        if (ember_model_evaluate(run->model, run->test, run->o.batch, &acc, &loss) != EMBER_OK)
            return cli_fail(run->ctx, "evaluation failed");
        fprintf(
            stderr,
            "ember: before fine-tuning: validation loss %.4f (perplexity %.2f), next-token accuracy %.4f\n",
            loss, exp(loss), acc);
    }
    run->window = (struct window){.start = cli_now(), .cpu_start = cpu_seconds()};
    run->schedule = train_schedule(&run->o, run->per_full_epoch);
    if (run->o.steps >
        run->schedule.total_steps) /* --epochs ends the run first: say so rather than stop short quietly */
        fprintf(stderr,
                "ember: note: --steps %lld is more than --epochs %lld allow (%lld steps of batch %lld); "
                "training stops after %lld\n",
                (long long)run->o.steps, (long long)run->o.epochs, (long long)run->schedule.total_steps,
                (long long)run->o.batch, (long long)run->schedule.total_steps);
    if (run->pos.total_steps >= run->schedule.total_steps) { /* said by the limit that ends it */
        bool by_steps = run->o.steps > 0 && run->o.steps <= run->schedule.total_steps;
        fprintf(stderr, "ember: note: %s already trained %lld steps; %s %lld asks for no more\n",
                run->o.resume, (long long)run->pos.total_steps, by_steps ? "--steps" : "--epochs",
                (long long)(by_steps ? run->o.steps : run->o.epochs));
    }
    return rc;
}

/* One step of an epoch on the batch x, y: the learning rate, forward,
 * backward and update (on one device, or shared by the replicas), then the
 * counts, the --log-every line, the progress bar and the watch. *end_epoch
 * is set when the epoch's steps end here: interrupted, --steps ran out, the
 * epoch's last batch, a failure (the exit status returned) or a watch that
 * stops the run. */
static int train_step(struct train_run *run, int64_t epoch, ember_tensor *x, ember_tensor *y,
                      struct epoch_result *r, struct progress *bar, int64_t limit, bool *end_epoch)
{
    int rc = EXIT_OK;
    float value = NAN;
    int64_t correct = 0, scored = 0;
    r->lr = ember_lr_at(&run->schedule, run->pos.total_steps);
    if (ember_optim_set_lr(run->opt, r->lr) != EMBER_OK) {
        rc = cli_fail(run->ctx, "training failed");
        goto end;
    }
    if (run->par) {      /* the same step, shared between devices or ranks */
        if (stop_signal) /* every rank learns it with this step's sums, and all stop after it */
            ember_parallel_request_stop(run->par);
        if (ember_parallel_step(run->par, x, y, &value, &correct) != EMBER_OK) {
            rc = cli_fail(run->ctx, "training failed");
            goto end;
        }
        scored = ember_tensor_numel(y);
    } else {
        ember_status zeroed = ember_optim_zero_grad(run->opt);
        ember_tensor *logits = ember_model_forward(run->model, x);       /* (B, classes) or (B, T, classes) */
        ember_tensor *loss = ember_dataset_ignores(run->train)           /* scalar */
                                 ? ember_cross_entropy_ignore(logits, y) /* a chat's replies alone */
                                 : ember_cross_entropy(logits, y);
        if (zeroed != EMBER_OK || ember_backward(loss) != EMBER_OK ||
            (run->o.clip > 0 &&
             ember_clip_grad_norm(ember_model_params(run->model), (float)run->o.clip, NULL) != EMBER_OK) ||
            ember_optim_step(run->opt) != EMBER_OK || ember_tensor_item(loss, &value) != EMBER_OK ||
            count_correct(logits, y, run->scratch, run->labels, &correct, &scored) != EMBER_OK) {
            rc = cli_fail(run->ctx, "training failed");
            goto end;
        }
    }
    ember_tape_clear(run->ctx);
    if (!isfinite(value)) {
        cli_error("training diverged: the loss is %s at step %lld; try a lower --lr",
                  isnan(value) ? "NaN" : "infinite", (long long)(run->pos.total_steps + 1));
        rc = EXIT_FAILURE_OTHER;
        if (run->o.stop_if_diverging && run->lead)
            train_watch_stop(&run->watch, &run->o, run->ctx, run->model, run->train);
        goto end;
    }
    if (run->pos.total_steps == 0)
        run->first_step_s = cli_now() - cli_start_time;
    r->steps++;
    r->images += ember_tensor_dim(x, 0);
    run->pos.total_steps++;
    run->pos.step_in_epoch++;
    run->pos.loss_sum += value;
    run->pos.correct += correct;
    run->pos.seen += scored; /* images, or text's tokens */
    run->window.steps++;
    run->window.loss_sum += value;
    run->window.correct += correct;
    run->window.seen += scored;
    if (run->o.log_every && run->o.metrics && run->pos.total_steps % run->o.log_every == 0) {
        if (!write_window(&run->o, epoch, run->pos.total_steps, r->lr, &run->window)) {
            rc = EXIT_DATA;
            run->lost_output = "--metrics";
            goto end;
        }
        run->window = (struct window){.start = cli_now(), .cpu_start = cpu_seconds()};
    }
    progress_update(bar, r->steps, value);
    if ((run->diverging = train_watch_step(&run->watch, &run->o, run->model, &run->pos, value)))
        goto end;
    run->stopping = run->par ? ember_parallel_stopping(run->par) : stop_signal != 0;
    if (run->stopping || r->steps == limit)
        goto end; /* interrupted, or --steps ran out, or the epoch's last batch */
    if (run->o.save_every && !run->o.save_every_epochs && run->pos.total_steps % run->o.save_every == 0 &&
        (rc = save_run(&run->o, run->ctx, run->model, run->opt, run->train, &run->pos, "--save-every")) !=
            EXIT_OK) {
        run->lost_output = checkpoint_lost;
        goto end;
    }
    return EXIT_OK;
end:
    *end_epoch = true;
    return rc;
}

/* One epoch, or what is left of it: its steps, then its report, the test
 * pass, the metrics, the best model, the watch and the checkpoints due.
 * *end_run is set when the run ends with it: --steps or --epochs ran out,
 * interrupted, stopped early, or a failure (the exit status returned). */
static int train_epoch(struct train_run *run, int64_t epoch, bool *end_run)
{
    int rc = EXIT_OK;
    if (run->o.steps && run->pos.total_steps >= run->o.steps)
        goto end;
    /* this epoch's steps: the rest of it, unless --steps ends the run sooner */
    int64_t first = run->pos.step_in_epoch, limit = run->per_full_epoch - first;
    if (run->o.steps && run->o.steps - run->pos.total_steps < limit)
        limit = run->o.steps - run->pos.total_steps;
    struct epoch_result r = {.epoch = (int)epoch, .text = run->bytes};
    struct progress bar;
    /* numbered as the epoch's steps (a resumed run's too); --steps ends it sooner: the ETA says so */
    progress_begin(&bar, &run->progress, (int)epoch, (int)run->o.epochs, first, first + limit,
                   run->pos.total_steps, run->o.quiet);
    double start = cli_now();
    /* the profile covers the training steps, not the test pass */
    if ((run->o.profile || run->o.trace) && ember_profile_start(run->ctx, run->o.trace != NULL) != EMBER_OK) {
        rc = cli_fail(run->ctx, "cannot profile");
        goto end;
    }
    bool turned = false; /* the batcher said no more: the epoch's end, or a device error */
    ember_tensor *x, *y;
    for (;;) {
        if (ember_batcher_next(run->batches, &x, &y) != EMBER_OK || !x) {
            turned = true;
            break;
        }
        bool end_epoch = false;
        if ((rc = train_step(run, epoch, x, y, &r, &bar, limit, &end_epoch)) != EXIT_OK || end_epoch)
            break;
    }
    progress_end(&bar);
    if (ember_profile_stop(run->ctx) != EMBER_OK && rc == EXIT_OK)
        rc = cli_fail(run->ctx, "training failed");
    if (rc != EXIT_OK || run->diverging)
        goto end;
    if (turned && run->pos.step_in_epoch < run->per_full_epoch) { /* the batcher stopped early */
        rc = cli_fail(run->ctx, "training failed");
        goto end;
    }
    r.seconds = cli_now() - start;
    r.total_steps = run->pos.total_steps;
    r.train_loss = run->pos.step_in_epoch ? run->pos.loss_sum / (double)run->pos.step_in_epoch : 0.0;
    r.train_acc = run->pos.seen ? (double)run->pos.correct / (double)run->pos.seen : 0.0;
    r.first_step_s = run->first_step_s;
    if (run->stopping) {
        /* the step is done: save where the run stands (after an epoch's
         * last batch too: resuming then ends that epoch, test pass included).
         * Under mpirun every rank stops after the same step; rank 0 saves. */
        int sig = stop_signal ? stop_signal : SIGTERM;
        if (!run->lead) {
            rc = 128 + sig;
            goto end;
        }
        if (!run->o.save)
            run->o.save = "ember-interrupted.safetensors";
        rc = save_run(&run->o, run->ctx, run->model, run->opt, run->train, &run->pos, "interrupted");
        /* the settings and threads come back from the checkpoint; the device is the one option to
         * repeat; the program as it was typed (build/ember), so that the line can be pasted */
        fprintf(stderr, "ember: %s at epoch %lld, step %lld of %lld; to go on: %s train --resume %s%s%s\n",
                stop_signal == SIGINT    ? "interrupted (Ctrl-C)"
                : stop_signal == SIGTERM ? "stopped (SIGTERM)"
                                         : "stopped (another rank was interrupted)",
                (long long)epoch, (long long)run->pos.step_in_epoch, (long long)run->per_full_epoch,
                cli_argv && cli_argv[0] ? cli_argv[0] : "ember", run->o.save,
                run->o.device_given ? " --device " : "", run->o.device_given ? run->o.device : "");
        rc = rc == EXIT_OK ? 128 + sig : rc;
        goto end;
    }
    /* --steps may end the run inside the epoch: it is reported as far as it went */
    bool whole = run->pos.step_in_epoch == run->per_full_epoch;
    if (whole) {
        if (!turned && (ember_batcher_next(run->batches, &x, &y) == EMBER_OK &&
                        x)) { /* turn the batcher to the next epoch */
            rc = cli_fail(run->ctx, "training failed: the batcher went past the epoch's end");
            goto end;
        }
        run->pos.epochs_done = epoch;
        run->pos.step_in_epoch = 0;
        run->pos.loss_sum = 0.0;
        run->pos.correct = run->pos.seen = 0;
    }

    if (run->par) { /* every rank still holds rank 0's parameters; the shares the step settled on */
        bool drifted = false;
        if (ember_parallel_check(run->par, &drifted) != EMBER_OK) {
            rc = cli_fail(run->ctx, "training failed");
            goto end;
        }
        if (drifted && run->lead)
            fprintf(stderr,
                    "ember: warning: the ranks' parameters had drifted apart; rank 0's went to all\n");
        if (run->lead)
            fprintf(stderr, "ember: devices: %s\n", ember_parallel_describe(run->par));
    }
    /* every rank evaluates (the same figure), so none waits on rank 0 past the time limit */
    if (run->o.eval) {
        double t0 = cli_now();
        if (ember_model_evaluate(run->model, run->test, run->o.batch, &r.test_acc, &r.test_loss) !=
            EMBER_OK) {
            rc = cli_fail(run->ctx, "evaluation failed");
            goto end;
        }
        r.eval_seconds = cli_now() - t0;
        if (run->lead && run->lm)
            fprintf(stderr,
                    "epoch %lld/%lld: train loss %.4f, validation loss %.4f (perplexity %.2f), next-token "
                    "accuracy %.4f, %.0f tokens/s, %.1f s\n",
                    (long long)epoch, (long long)run->o.epochs, r.train_loss, r.test_loss, exp(r.test_loss),
                    r.test_acc, (double)(r.images * run->positions) / r.seconds, r.seconds);
        else if (run->lead && run->text)
            fprintf(stderr,
                    "epoch %lld/%lld: train loss %.4f (%.3f bits per byte), validation loss %.4f (%.3f bits "
                    "per byte), next-byte accuracy %.4f, %.0f tokens/s, %.1f s\n",
                    (long long)epoch, (long long)run->o.epochs, r.train_loss, r.train_loss / M_LN2,
                    r.test_loss, r.test_loss / M_LN2, r.test_acc,
                    (double)(r.images * run->positions) / r.seconds, r.seconds);
        else if (run->lead)
            fprintf(stderr,
                    "epoch %lld/%lld: train loss %.4f, train accuracy %.4f, test loss %.4f, test accuracy "
                    "%.4f, %.0f images/s, %.1f s\n",
                    (long long)epoch, (long long)run->o.epochs, r.train_loss, r.train_acc, r.test_loss,
                    r.test_acc, (double)r.images / r.seconds, r.seconds);
    } else if (run->lead && run->lm) {
        fprintf(stderr, "epoch %lld/%lld: train loss %.4f, %.0f tokens/s, %.1f s\n", (long long)epoch,
                (long long)run->o.epochs, r.train_loss, (double)(r.images * run->positions) / r.seconds,
                r.seconds);
    } else if (run->lead && run->text) {
        fprintf(stderr, "epoch %lld/%lld: train loss %.4f (%.3f bits per byte), %.0f tokens/s, %.1f s\n",
                (long long)epoch, (long long)run->o.epochs, r.train_loss, r.train_loss / M_LN2,
                (double)(r.images * run->positions) / r.seconds, r.seconds);
    } else if (run->lead) {
        fprintf(stderr, "epoch %lld/%lld: train loss %.4f, train accuracy %.4f, %.0f images/s, %.1f s\n",
                (long long)epoch, (long long)run->o.epochs, r.train_loss, r.train_acc,
                (double)r.images / r.seconds, r.seconds);
    }
    if (run->o.metrics && !write_metrics(&run->o, run->ctx, &r)) {
        rc = EXIT_DATA;
        run->lost_output = "--metrics";
        goto end;
    }
    if (run->o.eval && r.test_acc > run->pos.best_acc) {
        run->pos.best_acc = r.test_acc;
        run->pos.best_epoch = epoch;
        if (run->o.save &&
            (rc = train_save_best(&run->o, run->ctx, run->model, run->train, &run->pos)) != EXIT_OK) {
            run->lost_output = "the best epoch's checkpoint";
            goto end;
        }
    }
    int64_t judged = ember_dataset_count(run->o.eval ? run->test : run->train) * run->positions;
    if ((run->diverging = train_watch_epoch(
             &run->watch, &run->o, epoch, run->o.eval ? r.test_acc : r.train_acc, judged, (int)run->classes)))
        goto end;
    if (run->o.early_stop && epoch - run->pos.best_epoch >= run->o.early_stop && epoch < run->o.epochs) {
        if (run->lead)
            fprintf(stderr,
                    "ember: stopping early: no better test accuracy for %lld epochs (the best, %.4f, was "
                    "epoch %lld%s%s)\n",
                    (long long)run->o.early_stop, run->pos.best_acc, (long long)run->pos.best_epoch,
                    run->o.save ? "; its model is in " : "", run->o.save ? "the .best checkpoint" : "");
        goto end;
    }
    if (!whole)
        goto end;
    if (run->o.save && run->o.save_every && epoch < run->o.epochs &&
        (run->o.save_every_epochs ? epoch % run->o.save_every == 0
                                  : run->pos.total_steps % run->o.save_every == 0) &&
        (rc = save_run(&run->o, run->ctx, run->model, run->opt, run->train, &run->pos,
                       "every --save-every")) != EXIT_OK) {
        run->lost_output = checkpoint_lost;
        goto end;
    }
    return rc;
end:
    *end_run = true;
    return rc;
}

int cmd_train(int argc, char **argv)
{
    static struct train_run zero;
    struct train_run *run = malloc(sizeof *run);
    if (!run) {
        cli_error("out of memory");
        return EXIT_FAILURE_OTHER;
    }
    *run = zero;
    run->pos.best_acc = -1.0;
    int rc = cli_mpi_start(&argc, &argv);
    if (rc != EXIT_OK) {
        free(run);
        return rc;
    }
    if ((rc = train_parse_options(argc, argv, &run->o)) != EXIT_OK) {
        free(run);
        return cli_mpi_end(rc < 0 ? EXIT_OK : rc);
    }
    /* under mpirun, rank 0 alone speaks and writes: progress, metrics, checkpoints */
    run->lead = cli_mpi_rank() == 0;
    if (!run->lead) {
        run->o.quiet = true;
        run->o.metrics = NULL;
        run->o.save = NULL;
        run->o.save_every = 0;
        run->o.profile = false;
        run->o.trace = NULL;
    }
    run->device_count = device_list(run->o.device, run->o.threads, run->devices);
    if (run->device_count == 0) {
        train_options_free(&run->o);
        free(run);
        return cli_mpi_end(EXIT_USAGE);
    }
    if (!(run->ctx = cli_ctx_new(run->o.verbose, (int)run->o.threads))) {
        free(run);
        return cli_mpi_end(EXIT_FAILURE_OTHER);
    }
    if ((rc = train_setup(run)) != EXIT_OK)
        goto done;

    ember_on_stop_request(on_stop_request);
    train_watch_begin(&run->watch, &run->o, run->per_full_epoch, (int)run->classes, run->lead);
    run->progress = (struct progress_run){
        .start = cli_now(), .first_step = run->pos.total_steps, .last_step = run->schedule.total_steps};
    bool end_run = false;
    for (int64_t epoch = run->pos.epochs_done + 1; epoch <= run->o.epochs && rc == EXIT_OK && !end_run;
         epoch++)
        rc = train_epoch(run, epoch, &end_run);
    ember_stop_requests_default();
    if (run->diverging && rc == EXIT_OK)
        rc = run->lead ? train_watch_stop(&run->watch, &run->o, run->ctx, run->model, run->train)
                       : EXIT_FAILURE_OTHER;
    train_watch_free(&run->watch);
    if (rc == EXIT_OK && run->o.save)
        rc = save_run(&run->o, run->ctx, run->model, run->opt, run->train, &run->pos, "the end of the run");
    else if (run->lost_output && run->lead)
        save_after_failure(&run->o, run->ctx, run->model, run->opt, run->train, &run->pos, run->lost_output);
    if (rc == EXIT_OK && (run->o.profile || run->o.trace))
        rc = cli_profile_report(run->ctx, run->o.profile ? stdout : NULL, run->o.trace, "training steps");
done:
    free(run->scratch);
    free(run->labels);
    ember_parallel_free(run->par);
    ember_batcher_free(run->batches);
    ember_optim_free(run->opt);
    if (run->lm)
        ember_lm_free(run->lm); /* and its model */
    else
        ember_model_free(run->model);
    ember_dataset_free(run->train);
    ember_dataset_free(run->test);
    ember_ctx_free(run->ctx);
    train_options_free(&run->o);
    free(run);
    return cli_mpi_end(rc);
}
