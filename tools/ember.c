/* SPDX-License-Identifier: MIT */
/*
 * tools/ember.c — the `ember` program: subcommands over the library.
 *
 *   ember train --model simplecnn --data fashion-mnist --epochs 1
 *   ember eval --load model.safetensors
 *   ember predict --load model.safetensors shoe.png
 *   ember generate --load gpt.safetensors --prompt "Q: " --tokens 200
 *   ember chat --load SmolLM2-135M-Instruct.Q4_1.gguf
 *   ember summary --model resnet8
 *   ember plot metrics.jsonl -o curves.png
 *   ember devices
 *   ember ptx sgemm --arch sm_35
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"
#include "platform.h"
#include "text-impl.h"

static const char usage[] =
    "usage: ember <command> [options]\n"
    "\n"
    "ember trains small neural networks on the CPU, OpenCL devices and NVIDIA GPUs.\n"
    "\n"
    "commands:\n"
    "  train      train a model and report its test accuracy\n"
    "  eval       evaluate a saved model\n"
    "  predict    classify images with a saved model\n"
    "  generate   continue a prompt with text from a model trained on text, or a\n"
    "             pretrained language model (GGUF)\n"
    "  chat       talk with a pretrained language model (GGUF: SmolLM2, Llama 3.2, Qwen 2)\n"
    "  tokenize   show how a language model's tokenizer cuts a text\n"
    "  summary    print a model's layers, output shapes, parameters and FLOPs\n"
    "  export     write a trained model as an ONNX file\n"
    "  import     read an ONNX model into a checkpoint\n"
    "  plot       draw the loss and accuracy curves of runs from their metrics files\n"
    "  devices    list the devices ember can use, and why others cannot be used\n"
    "  ptx        print the PTX an NVIDIA GPU gets for one of ember's kernels, or with\n"
    "             --resources the registers and shared memory ptxas gives it\n"
    "\n"
    "  ember <command> --help   describes a command's options\n"
    "  ember --version          prints the version\n"
    "\n"
    "exit status: 0 success, 1 training diverged or another failure, 2 bad usage,\n"
    "3 data or checkpoint missing or malformed, 4 device missing or failed.\n";

static const char *const commands[] = {"train",   "eval",   "predict", "generate", "chat",    "tokenize",
                                       "summary", "export", "import",  "plot",     "devices", "ptx"};

/* Where the documents the help cites are: beside this program as the
 * install put them (EMBER_DOC_FROM_BIN, from bin/ to share/doc/ember), in
 * whatever prefix it was installed in; else this is the build tree's
 * program, and the source tree has them. */
static void print_doc_dir(FILE *out)
{
    char program[4096] = "", docs[4096 + 64], readme[4096 + 80], absolute[4096];
    char *slash = ember_program_file(program, sizeof program) ? strrchr(program, '/') : NULL;
    char *backslash = strrchr(program, '\\'); /* Windows */
    if (backslash && (!slash || backslash > slash))
        slash = backslash;
    if (slash) {
        *slash = '\0';
        snprintf(docs, sizeof docs, "%s/%s", program, EMBER_DOC_FROM_BIN);
        snprintf(readme, sizeof readme, "%s/README.md", docs);
        if (access(readme, R_OK) == 0) {
            fprintf(out, "\nThe documents the help cites (docs/models.md, ...) are installed in %s.\n",
                    ember_absolute_path(docs, absolute, sizeof absolute) ? absolute : docs);
            return;
        }
    }
    fputs("\nThe documents the help cites (docs/models.md, ...) are in the source tree, and\n"
          "cmake --install puts them in " EMBER_DOC_DIR ".\n",
          out);
}

static void print_usage(FILE *out)
{
    fputs(usage, out);
    print_doc_dir(out);
}

/* OpenBLAS starts a pool of threads of its own when it is loaded, before
 * main, sized to the machine. ember never uses it (its own pool runs
 * OpenBLAS one thread per task). Idle, the pool costs little; under an
 * address-space limit (ulimit -v) its threads fail to start or OpenBLAS
 * waits for them forever at exit. The only way to keep OpenBLAS from
 * starting them is OPENBLAS_NUM_THREADS=1 in the environment it loads in,
 * so under such a limit the program sets it and starts itself once more,
 * unless the variable is already set (a user's choice is theirs). Without
 * a limit it runs as it was started, so that a debugger or valgrind keeps
 * hold of it. */
static void restart_without_blas_threads(char **argv)
{
    if (getenv("OPENBLAS_NUM_THREADS") || ember_address_space_limit() == UINT64_MAX)
        return;
    if (ember_set_env("OPENBLAS_NUM_THREADS", "1"))
        ember_run_again(argv); /* returns when it cannot: run on, with OpenBLAS's threads */
}

int main(int argc, char **argv)
{
#ifdef __GLIBC__
    /* Blocks of a MiB and more straight from the system and back to it when freed. glibc's own
     * threshold rises to the largest block freed (up to 32 MiB), after which the CPU device's
     * buffers of tens of MiB come from the heap and stay there: a chat's fine-tuning, whose set-up
     * freed such a block, peaked at 2.6 GB where its step needs 0.8 (docs/models.md, "Memory"). */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    argv = ember_program_arguments(argc, argv); /* UTF-8, on Windows too */
    restart_without_blas_threads(argv);
    cli_start_time = cli_now();
    cli_argv = argv;
    if (argc < 2) {
        print_usage(stderr);
        return EXIT_USAGE;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 || strcmp(command, "help") == 0) {
        print_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(command, "--version") == 0 || strcmp(command, "version") == 0) {
        printf("ember %s\n", ember_version());
        return EXIT_OK;
    }
    /* each subcommand parses its own options, argv[0] being its name */
    if (strcmp(command, "train") == 0)
        return cmd_train(argc - 1, argv + 1);
    if (strcmp(command, "eval") == 0)
        return cmd_eval(argc - 1, argv + 1);
    if (strcmp(command, "predict") == 0)
        return cmd_predict(argc - 1, argv + 1);
    if (strcmp(command, "generate") == 0)
        return cmd_generate(argc - 1, argv + 1);
    if (strcmp(command, "chat") == 0)
        return cmd_chat(argc - 1, argv + 1);
    if (strcmp(command, "tokenize") == 0)
        return cmd_tokenize(argc - 1, argv + 1);
    if (strcmp(command, "summary") == 0)
        return cmd_summary(argc - 1, argv + 1);
    if (strcmp(command, "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    if (strcmp(command, "import") == 0)
        return cmd_import(argc - 1, argv + 1);
    if (strcmp(command, "plot") == 0)
        return cmd_plot(argc - 1, argv + 1);
    if (strcmp(command, "devices") == 0)
        return cmd_devices(argc - 1, argv + 1);
    if (strcmp(command, "ptx") == 0)
        return cmd_ptx(argc - 1, argv + 1);
    char hint[96];
    ember_suggest(command, commands, (int)(sizeof commands / sizeof *commands), hint, sizeof hint);
    fprintf(stderr, "ember: error: unknown command \"%s\"%s\n\n", command, hint);
    print_usage(stderr);
    return EXIT_USAGE;
}
