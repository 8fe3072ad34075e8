/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-onnx.c — `ember export` and `ember import`: ONNX out and in
 * (docs/interop.md). The .onnx files that --load and --init take are
 * tools/cli-checkpoint.c's.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char export_usage[] =
    "usage: ember export --load CHECKPOINT -o MODEL.onnx\n"
    "\n"
    "Writes a trained model as an ONNX file (opset 13) for ONNX Runtime, OpenCV's DNN\n"
    "module and the like: input \"input\" (batch, sample shape...), output \"logits\"\n"
    "(batch, classes), the batch dynamic; the class names and how inputs were scaled\n"
    "go in its metadata_props; a model of text takes int64 tokens (batch, T) and gives\n"
    "(batch, T, classes). Dropout is left out (the file is for inference). A model\n"
    "ONNX cannot express is refused, saying why: exit status 3, nothing written.\n"
    "\n"
    "  --load FILE         the checkpoint (from ember train --save)\n"
    "  -o, --output FILE   the ONNX file to write\n"
    "  --model NAME|FILE   for a state_dict that names no model (PyTorch's, saved by\n"
    "                      safetensors): the model its weights belong to\n"
    "  --shape S           with --model: one sample's shape (default: the model file's\n"
    "                      input line, or 1x28x28)\n"
    "  --classes N         with --model: the class count (default 10)\n"
    "  --format onnx       the format written (ONNX; a language model's is GGUF)\n"
    "  -h, --help          this text\n"
    "\n"
    "With --load MODEL.gguf and --adapter or --weights, a fine-tuned language model as a\n"
    "GGUF file instead: see `ember export --load MODEL.gguf --help`.\n";

/* what a deployed model needs to know besides its layers */
static const char *const carried[] = {"ember.class_names",  "ember.normalize",  "ember.data",
                                      "ember.resize",       "ember.features",   "ember.label",
                                      "ember.feature_mean", "ember.feature_std"};
enum { CARRIED = sizeof carried / sizeof carried[0] };

int cmd_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"load", required_argument, NULL, 'L'},    {"output", required_argument, NULL, 'o'},
        {"model", required_argument, NULL, 'm'},   {"shape", required_argument, NULL, 'S'},
        {"classes", required_argument, NULL, 'C'}, {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    if (cli_loads_gguf(argc, argv)) /* a language model and its adapters: tools/cmd-lm.c */
        return cmd_lm_export(argc, argv);
    const char *load = NULL, *output = NULL;
    struct cli_bare_model bare = {0};
    bool ok = true;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'L': load = optarg; break;
        case 'o': output = optarg; break;
        case 'f': /* said, not needed: a checkpoint becomes ONNX, a GGUF model GGUF */
            if (strcmp(optarg, "onnx") != 0) {
                cli_error(
                    "--format %s: a checkpoint is written as ONNX; a GGUF file is written from a language "
                    "model, --load MODEL.gguf with --adapter or --weights",
                    optarg);
                ok = false;
            }
            break;
        case 'h': fputs(export_usage, stdout); return EXIT_OK;
        default: ok = cli_bare_model_option(c, optarg, &bare); break;
        }
    }
    if (ok && (!load || !output || optind < argc)) {
        cli_error("ember export needs --load CHECKPOINT and -o MODEL.onnx, and nothing else");
        ok = false;
    }
    ok = ok && cli_bare_model_check(&bare);
    if (!ok) {
        fputs("try: ember export --help\n", stderr);
        return EXIT_USAGE;
    }
    const char *inputs[] = {load, NULL};
    int rc = cli_output_check(output, "-o", inputs);
    ember_ctx *ctx = cli_file_ctx(&rc);
    if (!ctx)
        return rc;
    ember_checkpoint *ck = NULL;
    ember_model *model = NULL;
    void *data = NULL;
    size_t size = 0;
    rc = cli_open_checkpoint(ctx, load, &ck, &data, &size);
    if (rc == EXIT_OK)
        model = cli_load_model_as(ctx, load, ck, data, size, &bare, &rc);
    if (rc == EXIT_OK) {
        const char *meta[2 * CARRIED + 1];
        int k = 0;
        for (int i = 0; i < CARRIED; i++)
            if (ember_checkpoint_meta(ck, carried[i]))
                meta[k++] = carried[i], meta[k++] = ember_checkpoint_meta(ck, carried[i]);
        meta[k] = NULL;
        /* the library writes beside the file and renames it over: whole or
         * not at all (not through cli_output_open, whose open temporary
         * file would stop that rename on Windows) */
        if (ember_model_export_onnx(model, output, meta) != EMBER_OK) {
            bool no_form = ember_last_status(ctx) == EMBER_ERR_UNSUPPORTED;
            rc = cli_fail(ctx, "cannot export the model");
            if (no_form) /* a layer with no ONNX form: the checkpoint's model, not a device, is why */
                rc = EXIT_DATA;
        }
        if (rc == EXIT_OK)
            fprintf(stderr, "ember: wrote %s (%s)\n", output, ember_model_describe(model));
    }
    ember_model_free(model);
    ember_checkpoint_close(ck);
    free(data);
    ember_ctx_free(ctx);
    return rc;
}

static const char import_usage[] =
    "usage: ember import MODEL.onnx -o CHECKPOINT [--model-out FILE.model]\n"
    "\n"
    "Reads an ONNX model (as torch.onnx.export writes it) into an ember checkpoint: the\n"
    "graph as a model file, its weights under the layers' names. eval, predict and train\n"
    "--init then take the checkpoint; they also take the .onnx file itself, which they\n"
    "import the same way each time. `ember summary --model FILE.model` shows the layers.\n"
    "\n"
    "  -o, --output FILE   the checkpoint to write (safetensors)\n"
    "  --model-out FILE    also write the model file, to read or edit\n"
    "  -h, --help          this text\n";

int cmd_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"model-out", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *model_out = NULL;
    int c;
    optind = 1;
    while ((c = cli_getopt(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'M': model_out = optarg; break;
        case 'h': fputs(import_usage, stdout); return EXIT_OK;
        default: fputs("try: ember import --help\n", stderr); return EXIT_USAGE;
        }
    }
    if (!output || optind != argc - 1) {
        cli_error("ember import needs one MODEL.onnx and -o CHECKPOINT");
        return EXIT_USAGE;
    }
    const char *input = argv[optind];
    /* both outputs before the work: neither the input, nor each other */
    const char *inputs[] = {input, output, NULL}, *just_input[] = {input, NULL};
    int rc = cli_output_check(output, "-o", just_input);
    if (rc == EXIT_OK && model_out && strcmp(model_out, output) == 0) {
        cli_error("-o and --model-out are both %s: give the model file a name of its own", output);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && model_out)
        rc = cli_output_check(model_out, "--model-out", inputs);
    ember_ctx *ctx = cli_file_ctx(&rc);
    if (!ctx)
        return rc;
    void *data = NULL;
    size_t size = 0;
    ember_model *model = NULL;
    if (ember_onnx_to_checkpoint(ctx, input, &data, &size) != EMBER_OK)
        rc = cli_import_failed(ctx, "cannot import the ONNX model");
    if (rc == EXIT_OK && !(model = ember_model_from_checkpoint_memory(ctx, data, size)))
        rc = cli_import_failed(ctx, "cannot load the imported model");
    if (rc == EXIT_OK)
        rc = cli_output_write(output, "-o", data, size);
    if (rc == EXIT_OK && model_out)
        rc = cli_output_write(model_out, "--model-out", ember_model_text(model),
                              strlen(ember_model_text(model)));
    if (rc == EXIT_OK)
        fprintf(stderr, "ember: wrote %s (%s)\n", output, ember_model_describe(model));
    ember_model_free(model);
    free(data);
    ember_ctx_free(ctx);
    return rc;
}
