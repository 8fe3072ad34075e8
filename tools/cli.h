/* SPDX-License-Identifier: MIT */
/*
 * tools/cli.h — what the `ember` subcommands share: exit statuses, messages,
 * option values.
 *
 * Only this program decides exit statuses; the library returns statuses
 * and messages and never exits.
 */
#ifndef EMBER_CLI_H
#define EMBER_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ember.h"

/* Exit statuses, documented in `ember --help` and the README. */
enum {
    EXIT_OK = 0,
    EXIT_FAILURE_OTHER = 1, /* training diverged, or anything not below */
    EXIT_USAGE = 2,         /* bad command line, or a model that does not fit the data */
    EXIT_DATA = 3,          /* a data set or checkpoint is missing, unreadable or malformed */
    EXIT_DEVICE = 4,        /* the device is missing, failed, or ran out of memory */
};

/* The exit status for a library failure. */
int cli_exit_status(ember_status status);

/* "ember: error: ..." on stderr */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* prints the context's last error and returns its exit status */
int cli_fail(ember_ctx *ctx, const char *doing);

/* Under mpirun (tools/cli-mpi.c): joins the other ranks when the launcher
 * started several (or says this build cannot); the collective for
 * ember_parallel (NULL when alone); this rank and the number of ranks; and
 * the end, which on a failure stops every rank (MPI_Abort) rather than
 * leave them waiting. Returns exit statuses. */
int cli_mpi_start(int *argc, char ***argv);
const ember_collective *cli_mpi_collective(void);
int cli_mpi_rank(void);
int cli_mpi_size(void);
int cli_mpi_end(int rc);

/* The library's message in this program's words: the API it names
 * ("ember_data_options.dir") said as the option that sets it ("--data-dir").
 * Returns out. */
const char *cli_words(const char *message, char *out, size_t len);

/* A context logging to stderr: warnings, or info too when verbose; and
 * saying what it makes the user wait for (compiling kernels), with the
 * seconds so far. */
ember_ctx *cli_ctx_new(bool verbose, int threads);

/* Opens `device`; when it cannot work, opens `fallback` (NULL: none) with a
 * warning that says why, else fails with the reason. Prints what "auto"
 * chose and passed over. Returns an exit status. */
int cli_open_device(ember_ctx *ctx, const char *device, const char *fallback);
/* A context on the CPU with one thread, for a command that only reads and
 * writes files (export, import, summary), made when *rc, the command's
 * checks so far, is EXIT_OK: the context to free, or NULL with *rc the
 * exit status (the checks' own, or why no context could be had). */
ember_ctx *cli_file_ctx(int *rc);

/* getopt_long, saying itself what it refuses (returning '?' as getopt_long
 * does): an unknown option with the closest known one ("did you mean
 * \"--steps\"?"), an option without its value, an abbreviation that
 * begins several. */
struct option;
int cli_getopt(int argc, char *const *argv, const char *shortopts, const struct option *longopts, int *index);

/* Option values; each prints the problem and returns false when `text` is
 * not a valid value for option `name`. */
bool cli_parse_int(const char *name, const char *text, int64_t low, int64_t high, int64_t *value);
bool cli_parse_float(const char *name, const char *text, double low, double high, double *value);
bool cli_parse_u64(const char *name, const char *text, uint64_t *value);
/* --matmul-precision: "highest", "high" or "medium"; and back */
bool cli_parse_matmul_precision(const char *text, ember_matmul_precision *value);
const char *cli_matmul_precision_name(ember_matmul_precision precision);
/* The same without a message: false when `text` is not such a value. */
bool cli_int_value(const char *text, int64_t low, int64_t high, int64_t *value);
bool cli_float_value(const char *text, double low, double high, double *value);
bool cli_matmul_precision_value(const char *text, ember_matmul_precision *value);
bool cli_u64_value(const char *text, uint64_t *value);
/* "1x28x28" or "100": 1 to 3 positive dimensions */
bool cli_parse_shape(const char *name, const char *text, int *ndim, int64_t *shape);
/* the same without a message */
bool cli_parse_shape_quiet(const char *text, int *ndim, int64_t *shape);

/* Whether a data kind's files are named by a path after it: --data csv
 * table.csv, --data npy arrays.npz, --data text book.txt, --data chat
 * talk.jsonl (else --data-dir). */
bool cli_data_takes_path(const char *kind);
/* Whether it is a text's: windows of tokens, a target at every position
 * (text, and chat: a pretrained model's conversations) */
bool cli_data_is_text(const char *kind);
/* Files the subcommands read and write themselves (tools/cli-files.c).
 * An input: opened only when it is a regular file of at most `limit`
 * bytes (*size set when not NULL), else NULL, after saying why when `say`;
 * never waits on a FIFO. An output (`option` names it in the message): whether
 * it can be written, checked before the work: for a file that is
 * `replaced` (written beside and renamed over, as checkpoints are) a
 * regular file or none, in a folder that takes new files; else (appended
 * to, or written in place) one that opens for writing now, or a folder
 * that takes it. Returns an exit status, EXIT_DATA after saying why. A
 * replaced file is held to cli_output_check's rules below. */
FILE *cli_open_input(const char *path, int64_t limit, int64_t *size, bool say);
int cli_check_output(const char *path, const char *option, bool replaced);

/* Every file a command makes (--save's checkpoints aside, which the
 * library writes the same way): checked before the work, then written to
 * a temporary file beside it, flushed to disk and renamed over it, so that
 * the target is the old file or the new one, never half of either.
 *
 *     if ((rc = cli_output_check(out, "-o", inputs)) != EXIT_OK) // before the work
 *         return rc;
 *     ... the work ...
 *     struct cli_output o;
 *     if ((rc = cli_output_open(&o, out, "-o")) == EXIT_OK)
 *         rc = cli_output_close(&o, write_it(o.f));           // or a library call given o.tmp
 *
 * cli_output_check: the path is a regular file or none (not a folder,
 * FIFO, device, socket or symbolic link), is none of `inputs` (a
 * NULL-terminated list of the command's input files, or NULL; compared by
 * device and inode), and its folder takes new files (so a missing folder,
 * a read-only file system or a full inode table is found now). Returns
 * EXIT_OK, or EXIT_DATA after saying why, naming `option`.
 * cli_output_open checks again and opens the temporary file (o->f, named
 * o->tmp); cli_output_close(o, ok) flushes it to disk and renames it into
 * place when ok (a write that failed on o->f is found here), else removes
 * it quietly (the caller said why); both return exit statuses, after
 * saying what failed. cli_output_write is the three for bytes in memory. */
struct cli_output {
    const char *path, *option;
    char tmp[4096 + 16];
    FILE *f;
};
int cli_output_check(const char *path, const char *option, const char *const *inputs);
int cli_output_open(struct cli_output *o, const char *path, const char *option);
int cli_output_close(struct cli_output *o, bool ok);
int cli_output_write(const char *path, const char *option, const void *data, size_t size);

/* What eval and predict run with: the options given, completed from the
 * checkpoint's metadata (tools/cli-checkpoint.c). */
struct cli_settings {
    const char *model; /* --model, or NULL */
    ember_data_options data;
    bool kind_given, seed_given, shape_given, resize_given;
    bool from_checkpoint; /* the checkpoint names its model: build it from there */
    /* csv: the checkpoint's standardisation and class names, which
     * data.scaling and data.class_names point at (cli_settings_free) */
    ember_feature_scaling *scaling;
    char **class_names;
};
void cli_settings_free(struct cli_settings *s);
/* Fills what was not given from the checkpoint and checks that what was
 * given agrees with it; returns an exit status (3, with the difference
 * named, when an option disagrees or the checkpoint names no model and
 * none was given). */
int cli_settings_from_checkpoint(ember_ctx *ctx, const ember_checkpoint *ck, const char *path,
                                 struct cli_settings *s);
/* The class names a checkpoint records (ember_checkpoint_class_name), or
 * their indices where it lacks a name for any class; `classes` strings to
 * free, in an array to free; NULL when out of memory. */
char **cli_class_names(const ember_checkpoint *ck, int classes);

/* Opens what --load names: a checkpoint, or an ONNX model imported into a
 * checkpoint in memory (*data, *size, to free(); NULL for a file). Returns
 * an exit status after saying what is wrong (3 for an ONNX file ember
 * cannot read). cli_load_model then builds and loads its model. */
int cli_open_checkpoint(ember_ctx *ctx, const char *path, ember_checkpoint **ck, void **data, size_t *size);
ember_model *cli_load_model(ember_ctx *ctx, const char *path, const void *data, size_t size);
/* A failed import said: a file ember cannot read is the file's fault (3),
 * even when what it lacks is an operator. An exit status. */
int cli_import_failed(ember_ctx *ctx, const char *doing);

/* predict's and export's --model, --shape and --classes, for a state_dict
 * that names no model (PyTorch's model.state_dict() saved by safetensors,
 * without ember's metadata): the network its weights are read into. */
struct cli_bare_model {
    const char *model; /* NULL: none given */
    int ndim;          /* --shape; 0: the model file's input line, or 1x28x28 */
    int64_t shape[3];
    int64_t classes; /* --classes; 0: 10 */
};
/* An option of theirs ('m' --model, 'S' --shape, 'C' --classes) into bare;
 * false, after saying why, for a bad value or any other option. */
bool cli_bare_model_option(int option, const char *value, struct cli_bare_model *bare);
/* After the options: false, after saying why, for --shape or --classes
 * without --model. */
bool cli_bare_model_check(const struct cli_bare_model *bare);
/* The model --load holds: the checkpoint's own (cli_load_model; a --model
 * given must name it), or for a state_dict that names none, bare's built
 * and loaded from it (tools/cli-checkpoint.c). NULL after saying why, the
 * exit status in *rc. */
ember_model *cli_load_model_as(ember_ctx *ctx, const char *path, const ember_checkpoint *ck, const void *data,
                               size_t size, const struct cli_bare_model *bare, int *rc);

/* Text from a file (a checkpoint's class names, a folder's file names) as
 * it may go to a terminal: control characters (C0, DEL, C1) and bytes that
 * are not UTF-8 written as \xNN or \uNNNN, so that no escape sequence or
 * fake line passes through; cut with "..." to fit `len`. Returns buf. */
const char *cli_printable(const char *s, char *buf, size_t len);
/* writes s as a JSON string, quotes and escapes included; NULL as null */
void cli_json_string(FILE *f, const char *s);
/* writes v with that many decimals, or null for a NaN or an infinity, which
 * JSON has no spelling for (a bare nan would make the whole line invalid) */
void cli_json_number(FILE *f, double v, int decimals);

/* After a run profiled with --profile and --trace: prints the table to
 * `table` (NULL: none; `what` says what was profiled: "training steps"),
 * writes the trace (NULL: none); returns an exit status. */
int cli_profile_report(ember_ctx *ctx, FILE *table, const char *trace, const char *what);

/* seconds since an arbitrary fixed point (CLOCK_MONOTONIC) */
double cli_now(void);
/* peak resident memory of this process, in MiB */
double cli_peak_rss_mib(void);

/* subcommands */
int cmd_train(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_ptx(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_generate(int argc, char **argv);
/* pretrained language models (cmd-lm.c): `ember chat`, `ember tokenize`, and
 * `ember generate` when --load names a GGUF file (cli_loads_gguf) */
int cmd_chat(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_generate_lm(int argc, char **argv);
bool cli_loads_gguf(int argc, char **argv);
/* whether a file is a GGUF file: by its name (.gguf), or its first four bytes */
bool cli_is_gguf(const char *path);
/* `ember export --load MODEL.gguf --adapter FILE`: the adapters merged into a GGUF file */
int cmd_lm_export(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
/* `ember plot` of a trace (cmd-plot-trace.c): the window from, to in ms, NULL when not given */
int cmd_plot_trace(const char *path, const char *output, bool png, int width, int height, const double *from,
                   const double *to);

/* the time main() started, for "time to first step" */
extern double cli_start_time;
/* main()'s own arguments, for running ember-mpi in this program's place */
extern char **cli_argv;

#endif /* EMBER_CLI_H */
