/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-summary.c — `ember summary`: a model's layers as a table, as
 * Keras's model.summary() prints them: each layer's output shape and
 * parameters, the totals, and the floating-point operations of a forward
 * pass and of a training step per image.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: ember summary --model NAME|FILE [options]\n"
    "\n"
    "Prints a model's layers, output shapes, parameters and FLOPs.\n"
    "\n"
    "  --model NAME|FILE   a built-in model or a model file (docs/models.md)\n"
    "  --shape CxHxW       one sample's shape (default: the file's input line, else 1x28x28)\n"
    "  --classes N         outputs of \"linear classes\" (default 10)\n"
    "  --list              list the built-in models and the layer types instead\n"
    "  -h, --help          this text\n";

/* 1234567 -> "1,234,567" */
static const char *thousands(int64_t n, char *buf, size_t len)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", (long long)n);
    size_t nd = strlen(digits), at = 0;
    for (size_t i = 0; i < nd && at + 2 < len; i++) {
        if (i && (nd - i) % 3 == 0)
            buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
    return buf;
}

/* 19100000 -> "19.1 M" */
static const char *flops_str(double f, char *buf, size_t len)
{
    if (f >= 1e9)
        snprintf(buf, len, "%.2f G", f / 1e9);
    else if (f >= 1e6)
        snprintf(buf, len, "%.2f M", f / 1e6);
    else if (f >= 1e3)
        snprintf(buf, len, "%.1f k", f / 1e3);
    else
        snprintf(buf, len, "%.0f", f);
    return buf;
}

static const char *shape_str(int ndim, const int64_t *shape, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < ndim && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "x" : "", (long long)shape[i]);
    return buf;
}

static int list_models(void)
{
    printf("built-in models (ember summary --model NAME shows one):\n");
    for (const char *const *n = ember_model_names(); *n; n++)
        printf("  %-12s %s\n", *n, ember_model_summary(*n));
    printf("\nlayer types of a model file (docs/models.md):\n");
    for (int i = 0; i < ember_model_layer_type_count(); i++) {
        const char *about;
        const char *name = ember_model_layer_type_at(i, &about);
        printf("  %-18s %s\n", name, about);
    }
    printf("  %-18s %s\n", "residual", "a block added to its input: residual ... [shortcut ...] end");
    return EXIT_OK;
}

static void rule(int width, char c)
{
    for (int i = 0; i < width; i++)
        putchar(c);
    putchar('\n');
}

static int print_summary(ember_model *model)
{
    int rows = ember_model_layer_count(model);
    ember_layer_info *info = calloc((size_t)(rows ? rows : 1), sizeof *info);
    if (!info) {
        cli_error("out of memory");
        return EXIT_FAILURE_OTHER;
    }
    /* the widths the rows need */
    int w_layer = (int)strlen("Layer (type)"), w_shape = (int)strlen("Output shape");
    char label[256], text[64], num[32], f1[32];
    for (int i = 0; i < rows; i++) {
        ember_model_layer_info(model, i, &info[i]);
        int len = snprintf(label, sizeof label, "%*s%s (%s)", 2 * info[i].depth, "",
                           *info[i].name ? info[i].name : "self", info[i].describe);
        if (len > w_layer)
            w_layer = len;
        int slen = (int)strlen(shape_str(info[i].out_ndim, info[i].out_shape, text, sizeof text));
        if (slen > w_shape)
            w_shape = slen;
    }
    int width = w_layer + 2 + w_shape + 2 + 11 + 2 + 13;
    int64_t in_shape[3];
    int in_ndim = ember_model_sample_shape(model, in_shape);
    printf("Model: %s (input %s, %d classes)\n", ember_model_name(model),
           shape_str(in_ndim, in_shape, text, sizeof text), ember_model_classes(model));
    rule(width, '_');
    printf("%-*s  %-*s  %11s  %13s\n", w_layer, "Layer (type)", w_shape, "Output shape", "Param #",
           "Forward FLOPs");
    rule(width, '=');
    double forward = 0.0, backward = 0.0;
    for (int i = 0; i < rows; i++) {
        snprintf(label, sizeof label, "%*s%s (%s)", 2 * info[i].depth, "",
                 *info[i].name ? info[i].name : "self", info[i].describe);
        bool block = strcmp(info[i].type, "residual") == 0;
        printf("%-*s  %-*s  %11s  %13s\n", w_layer, label, w_shape,
               shape_str(info[i].out_ndim, info[i].out_shape, text, sizeof text),
               block ? "" : thousands(info[i].params, num, sizeof num),
               flops_str(info[i].forward_flops, f1, sizeof f1));
        forward += info[i].forward_flops;
        backward += info[i].backward_flops;
    }
    rule(width, '=');
    ember_params *params = ember_model_params(model);
    int64_t buffers = 0;
    for (int i = 0; i < ember_params_count(params); i++)
        if (ember_params_is_buffer(params, i))
            buffers += ember_tensor_numel(ember_params_at(params, i));
    int64_t total = ember_params_numel(params);
    printf("Total params: %s (%.1f KiB as F32)\n", thousands(total, num, sizeof num),
           (double)total * 4.0 / 1024.0);
    if (buffers)
        printf("Buffers: %s (BatchNorm's running statistics; saved, not trained)\n",
               thousands(buffers, num, sizeof num));
    printf("FLOPs per image: forward %s, training step %s (forward and backward)\n",
           flops_str(forward, f1, sizeof f1), flops_str(forward + backward, text, sizeof text));
    rule(width, '_');
    free(info);
    return EXIT_OK;
}

int cmd_summary(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},   {"shape", required_argument, NULL, 'S'},
        {"classes", required_argument, NULL, 'c'}, {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *model_name = NULL;
    int ndim = 0;
    int64_t shape[3] = {0}, classes = 10;
    bool ok = true, list = false;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': model_name = optarg; break;
        case 'S': ok = cli_parse_shape("shape", optarg, &ndim, shape); break;
        case 'c': ok = cli_parse_int("classes", optarg, 1, 1 << 20, &classes); break;
        case 'l': list = true; break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: ok = false; break;
        }
    }
    if (ok && optind < argc) {
        cli_error("unexpected argument \"%s\"", argv[optind]);
        ok = false;
    }
    if (ok && list)
        return list_models();
    if (ok && !model_name) {
        cli_error("ember summary needs --model NAME|FILE (ember summary --list names the built-in models)");
        ok = false;
    }
    if (!ok) {
        fputs("try: ember summary --help\n", stderr);
        return EXIT_USAGE;
    }
    /* building needs a context; the CPU's, since nothing runs */
    int rc = EXIT_OK;
    ember_ctx *ctx = cli_file_ctx(&rc);
    if (!ctx)
        return rc;
    ember_model *model = NULL;
    if (!(model = ember_model_build(ctx, model_name, ndim, shape, (int)classes, 0)))
        rc = cli_fail(ctx, "cannot build the model");
    if (rc == EXIT_OK)
        rc = print_summary(model);
    ember_model_free(model);
    ember_ctx_free(ctx);
    return rc;
}
