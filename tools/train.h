/* SPDX-License-Identifier: MIT */
/*
 * tools/train.h — what `ember train` is asked to do, and the checkpoints
 * that let it stop and go on.
 *
 * A run writes two files: the model checkpoint (FILE: parameters and
 * buffers under PyTorch's names, loadable into PyTorch with strict=True,
 * and the run's settings as metadata) and beside it the training state
 * (FILE's stem + ".state.safetensors": the optimizer's moments, where in
 * the data the run stands, the loss so far of the epoch under way, the best
 * test accuracy). Both carry one save id; while a save is under way the
 * state that pairs with the model on disk waits beside them as
 * FILE's stem + ".state.previous.safetensors", so that a kill between the
 * two files leaves a pair to resume. `--resume FILE` reads both and goes
 * on as if never stopped; the settings come from the checkpoint, each
 * held to its option's range, and one given anyway must agree with it
 * (except --epochs, which may extend the run, as Keras's initial_epoch
 * lets it).
 */
#ifndef EMBER_TRAIN_H
#define EMBER_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

struct train_options {
    const char *model, *device, *fallback, *save, *metrics, *optim, *schedule, *resume, *run_id;
    const char *augment; /* "none", "flip", "crop:4", "crop:4,flip" */
    const char *trace;   /* --trace FILE, or NULL */
    bool profile;        /* --profile */
    ember_data_options data;
    int64_t epochs, steps, batch, threads;
    int64_t save_every; /* 0: only at the end; steps, or epochs when save_every_epochs */
    int64_t log_every;  /* 0: metrics per epoch only; else also every N steps */
    int64_t early_stop; /* 0: never; else stop after N epochs without a better test accuracy */
    bool save_every_epochs;
    double lr, momentum, weight_decay, warmup, step_epochs, gamma, min_lr;
    double clip; /* --clip: the gradients' largest global norm; 0: no clipping */
    uint64_t seed;
    bool eval, quiet, verbose, shape_given;
    bool keep_devices;     /* --keep-devices: data parallel never leaves a device out */
    bool keep_activations; /* --keep-activations: a language model's training recomputes nothing */
    ember_matmul_precision matmul_precision; /* --matmul-precision (ember.matmul_precision on --resume) */
    bool matmul_precision_given;
    bool recompute_all;               /* --recompute-all: ... recomputes its products too (not kept) */
    bool stop_if_diverging;           /* --stop-if-diverging (tools/train-watch.c) */
    bool threads_given, device_given; /* --threads, --device on the command line (--resume) */
    const char *init, *init_skip;     /* --init FILE, --init-skip NAME,NAME (tools/train-init.c) */
    const char *freeze;               /* --freeze NAME,NAME, except:NAME,NAME or backbone; "none" */
    const char *base; /* --init MODEL.gguf: a language model to fine-tune (tools/train-lm.c) */
    const char *lora; /* --lora r=8,alpha=16,...: its adapters; NULL: the defaults */
    bool model_given;
    /* --epochs on the command line (otherwise text data's are chosen) */
    bool epochs_given;
    uint32_t given;  /* bit i: train_settings[i] was on the command line */
    char *owned[24]; /* strings taken from a checkpoint, freed by train_options_free */
    int n_owned;
};

/* --epochs' largest value, and so a checkpoint's largest epoch */
#define TRAIN_MAX_EPOCHS 1000000

void train_options_free(struct train_options *o);
/* whether `option` (a setting's, as "batch") was on the command line */
bool train_given(const struct train_options *o, const char *option);

/* The command line (tools/train-options.c): EXIT_OK, EXIT_USAGE after
 * saying what is wrong, or -1 after printing --help. */
int train_parse_options(int argc, char **argv, struct train_options *o);

/* Sets a numeric setting (lr, epochs, ...) from the command line's text, in
 * the range a checkpoint's is held to; false after saying what is wrong. */
bool train_parse_setting(struct train_options *o, const char *option, const char *text);
/* --augment's "none", or "crop:P" and "flip" joined by commas; false when
 * `spec` is neither (nothing said). */
bool train_parse_augment(const char *spec, ember_augment *a, uint64_t seed);

/* Marks the setting that command-line option `option` sets as given. */
void train_mark_given(struct train_options *o, const char *option);

/* The rate of every step, from the options and the run's length
 * (`per_epoch` steps an epoch). */
ember_lr_schedule train_schedule(const struct train_options *o, int64_t per_epoch);

/* Where a run stands. */
struct train_position {
    int64_t epochs_done;   /* whole epochs trained */
    int64_t step_in_epoch; /* steps into the next one */
    int64_t total_steps;
    double loss_sum;       /* of the epoch under way's steps so far */
    int64_t correct, seen; /* the epoch under way's training predictions so far */
    double best_acc;       /* the best test accuracy of an epoch's end, -1 if none */
    int64_t best_epoch;
};

/* "run.safetensors" -> "run.state.safetensors" (or "run.best.safetensors") */
const char *train_sibling_path(const char *path, const char *what, char *buf, size_t len);

/* Writes the model checkpoint (with the settings, the class names and the
 * position) and its training state; returns an exit status. */
int train_save(const struct train_options *o, ember_ctx *ctx, ember_model *model, const ember_optim *opt,
               const ember_dataset *train, const struct train_position *pos, const char *path);
/* Writes the model alone, with its metadata, to `path` (no state beside it). */
int train_save_model(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                     const ember_dataset *train, const struct train_position *pos, const char *path);
/* Writes the model alone to FILE's ".best" sibling. */
int train_save_best(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                    const ember_dataset *train, const struct train_position *pos);

/* A folder of images for --init's model is loaded at the model's input
 * (its ember.input), as --resume's is, unless --shape says otherwise: a
 * network imported for 3x224x224 trains on the photos at that size, not at
 * the first photo's. An exit status. */
int train_init_shape(ember_ctx *ctx, struct train_options *o);
/* --init: the model FILE holds (built for this data's shape and classes)
 * unless --model is given or FILE holds no model file, with FILE's weights
 * but for --init-skip's layers. NULL after saying what is wrong (*rc). */
ember_model *train_init_model(ember_ctx *ctx, const struct train_options *o, const ember_dataset *train,
                              int *rc);

/* --freeze: the parameters of the layers it names (or, with except:, of
 * every other layer; backbone: every layer but --init-skip's, written back
 * into o->freeze as except:NAMES for the checkpoint) get requires_grad
 * off, so the optimizer leaves them; says what is frozen. EXIT_OK, or
 * EXIT_USAGE after naming a name that is no layer's. */
int train_freeze(struct train_options *o, ember_model *model, bool say);

/* --resume: the settings from o->resume's metadata where not given, and a
 * clear error (exit 3) where given and different; returns an exit status.
 * The CPU threads the run had (ember.threads) come back too unless
 * --threads is given, since the CPU's sums, and so a bit-exact resume,
 * depend on them; a --threads that differs is a warning, not an error. */
int train_resume_settings(ember_ctx *ctx, struct train_options *o);
/* --resume: the optimizer's state and the position, from the state saved
 * with o->resume (the file beside it, or the one a save left aside), the
 * position checked against the data's `per_epoch` steps an epoch. */
int train_resume_state(ember_ctx *ctx, const struct train_options *o, ember_optim *opt, int64_t per_epoch,
                       struct train_position *pos);

/* Training that is not learning (tools/train-watch.c): a loss that grows
 * over several intervals of steps, or chance accuracy after an epoch, is
 * said once with its likely causes; with --stop-if-diverging the run
 * stops, and the model of the lowest loss is what is saved. */
struct train_watch {
    int64_t every; /* steps per interval */
    double sum;    /* this interval's losses so far */
    int64_t count;
    double last, lowest; /* the last interval's mean, and the lowest */
    double guess;        /* a uniform guess's loss: ln(classes) */
    int64_t intervals;
    int growing; /* intervals in a row whose mean grew */
    struct train_position lowest_position;
    void *good; /* --stop-if-diverging: the model at the lowest interval (a checkpoint in memory) */
    size_t good_size;
    bool warned;
    bool speak; /* under mpirun, rank 0 alone says it (every rank sees the same losses, and stops with it) */
};
void train_watch_begin(struct train_watch *w, const struct train_options *o, int64_t per_epoch, int classes,
                       bool speak);
void train_watch_free(struct train_watch *w);
/* After each step (pos already counts it); true: stop the run now. */
bool train_watch_step(struct train_watch *w, const struct train_options *o, ember_model *model,
                      const struct train_position *pos, double loss);
/* After each epoch, with its accuracy (the test set's, else the training
 * set's) over `samples` predictions; true: stop the run now. */
bool train_watch_epoch(struct train_watch *w, const struct train_options *o, int64_t epoch, double accuracy,
                       int64_t samples, int classes);
/* The stop: saves the model of the lowest loss to --save, says so, and
 * returns the exit status of a diverged run. */
int train_watch_stop(struct train_watch *w, const struct train_options *o, ember_ctx *ctx, ember_model *model,
                     const ember_dataset *train);

/* Before the first step: every file the run will write can be written
 * (the checkpoint and its siblings, --metrics, --trace), and the
 * checkpoint's metadata can be stored; returns an exit status. */
int train_check_outputs(const struct train_options *o, ember_ctx *ctx, ember_model *model,
                        const ember_dataset *train);

/* A pretrained language model fine-tuned with LoRA (tools/train-lm.c). */
/* --lora's r=8,alpha=16,dropout=0.05,targets=q,k,v,o (targets' names into
 * targets[len]); false after saying what is wrong */
bool train_parse_lora(const char *spec, ember_lora_options *lo, char *targets, size_t len);
/* The model (o->base, with --lora's adapters, or --resume's), its data
 * (--data text FILE through its tokenizer) and the model train's loop
 * trains; a context of 256 unless --context. Returns an exit status. */
int train_lm_setup(struct train_options *o, ember_ctx *ctx, ember_lm **lm, ember_dataset **train,
                   ember_dataset **test, ember_model **model);
/* the adapters' alpha as the checkpoint's "lora_alpha" says it */
void train_lm_meta(const struct train_options *o, char *alpha, size_t len);
/* PEFT's adapter_config.json beside the adapters of `model` saved at
 * `path` (its path: train_lm_config_path); an exit status */
int train_lm_write_config(const struct train_options *o, ember_model *model, const char *path);
const char *train_lm_config_path(const char *path, char *out, size_t len);

#endif /* EMBER_TRAIN_H */
