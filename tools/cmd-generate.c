/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-generate.c — `ember generate`: text from a model trained on
 * text, printed a token at a time as the model makes it.
 *
 * Three steps, each a seam for another kind of model: the vocabulary
 * (tools/text-vocab.h: ember's bytes today), the prompt as tokens, and the
 * loop of ember_generator_next, each token's bytes printed (escaped on a
 * terminal) as it comes.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "text-vocab.h"

static const char usage[] =
    "usage: ember generate --load FILE [options]\n"
    "\n"
    "Continues a prompt with text from a model trained on text (ember train --data text,\n"
    "such as gpt-tiny), a byte at a time, and prints the prompt and what follows.\n"
    "With --load MODEL.gguf, a pretrained language model continues it instead: see\n"
    "`ember generate --load MODEL.gguf --help`.\n"
    "\n"
    "  --load FILE         the checkpoint of `ember train --save` (required)\n"
    "  --prompt TEXT       the text to continue (default: a newline); every byte of it\n"
    "                      must be in the training text\n"
    "  --tokens N          bytes to generate (default 200)\n"
    "  --temperature T     0: the most likely byte each time; 1: the model's own odds;\n"
    "                      between: bolder or safer (default 0.8)\n"
    "  --top-k K           draw among the K most likely bytes only (default 0: all)\n"
    "  --seed N            seeds the draws (default 0)\n"
    "  --no-cache          run the whole context for every byte instead of keeping each\n"
    "                      layer's keys and values: slower, the same bytes (for checking)\n"
    "  --device DEV        auto (default, or $EMBER_DEVICE), cpu, cuda, cuda:N, opencl, opencl:N\n"
    "  --fallback DEV      when --device cannot work, use DEV (e.g. cpu) with a warning\n"
    "  --threads N         cpu threads (default: every core)\n"
    "  --verbose           say more, and how fast the bytes came\n"
    "  -h, --help          this text\n";

int cmd_generate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"load", required_argument, NULL, 'l'},
        {"prompt", required_argument, NULL, 'p'},
        {"tokens", required_argument, NULL, 'n'},
        {"temperature", required_argument, NULL, 'T'},
        {"top-k", required_argument, NULL, 'k'},
        {"seed", required_argument, NULL, 's'},
        {"no-cache", no_argument, NULL, 'C'},
        {"device", required_argument, NULL, 'D'},
        {"fallback", required_argument, NULL, 'F'},
        {"threads", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    if (cli_loads_gguf(argc, argv)) /* a pretrained language model: tools/cmd-lm.c */
        return cmd_generate_lm(argc, argv);
    const char *load = NULL, *prompt = "\n", *fallback = NULL;
    const char *device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto";
    int64_t tokens = 200, top_k = 0, threads = 0;
    double temperature = 0.8;
    ember_generate_options o = {0};
    bool verbose = false, ok = true;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': load = optarg; break;
        case 'p': prompt = optarg; break;
        case 'n': ok = cli_parse_int("tokens", optarg, 0, 1 << 24, &tokens); break;
        case 'T': ok = cli_parse_float("temperature", optarg, 0.0, 100.0, &temperature); break;
        case 'k': ok = cli_parse_int("top-k", optarg, 0, 1 << 24, &top_k); break;
        case 's': ok = cli_parse_u64("seed", optarg, &o.seed); break;
        case 'C': o.no_cache = true; break;
        case 'D': device = optarg; break;
        case 'F': fallback = optarg; break;
        case 't': ok = cli_parse_int("threads", optarg, 0, 4096, &threads); break;
        case 'v': verbose = true; break;
        case 'h': fputs(usage, stdout); return EXIT_OK;
        default: ok = false; break;
        }
    }
    if (ok && optind < argc) {
        cli_error("unexpected argument \"%s\"", argv[optind]);
        ok = false;
    }
    if (ok && !load) {
        cli_error("--load FILE is required: the checkpoint of a model trained on text");
        ok = false;
    }
    if (ok && !*prompt) {
        cli_error("--prompt is empty: give at least one byte to continue");
        ok = false;
    }
    if (!ok) {
        fputs("try: ember generate --help\n", stderr);
        return EXIT_USAGE;
    }
    o.temperature = (float)temperature;
    o.top_k = (int)top_k;

    int rc = EXIT_OK;
    ember_checkpoint *ck = NULL;
    ember_model *model = NULL;
    int32_t *ids = NULL;
    ember_ctx *ctx = cli_ctx_new(verbose, (int)threads);
    if (!ctx)
        return EXIT_FAILURE_OTHER;
    if ((rc = cli_open_device(ctx, device, fallback)) != EXIT_OK)
        goto done;
    if (!(ck = ember_checkpoint_open(ctx, load))) {
        rc = cli_fail(ctx, "cannot read the checkpoint");
        goto done;
    }
    struct text_vocab vocab;
    char why[256];
    if (!text_vocab_parse(ember_checkpoint_meta(ck, "ember.vocab"), &vocab, why, sizeof why)) {
        cli_error("%s: %s", load, why);
        rc = EXIT_DATA;
        goto done;
    }
    if (!(model = ember_model_from_checkpoint(ctx, load))) {
        rc = cli_fail(ctx, "cannot load the model");
        goto done;
    }
    if (ember_model_classes(model) != vocab.count) {
        cli_error("%s: its model scores %d tokens but its vocabulary has %d", load,
                  ember_model_classes(model), vocab.count);
        rc = EXIT_DATA;
        goto done;
    }
    /* the prompt's bytes as tokens */
    size_t len = strlen(prompt);
    if (!(ids = malloc((len + 1) * sizeof *ids))) {
        cli_error("out of memory");
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    for (size_t i = 0; i < len; i++) {
        int16_t t = vocab.token_of[(uint8_t)prompt[i]];
        if (t < 0) {
            cli_error(
                "the prompt's byte %zu (0x%02x) never occurs in the text %s was trained on, so the model has "
                "no token for it",
                i, (uint8_t)prompt[i], load);
            rc = EXIT_USAGE;
            goto done;
        }
        ids[i] = t;
    }
    /* each token printed as it comes */
    double start = cli_now();
    struct text_printer out = text_printer_for(stdout);
    text_print(&out, (const uint8_t *)prompt, len);
    ember_generator *g = ember_generator_new(model, &o);
    ember_status st = g ? ember_generator_feed(g, ids, (int64_t)len) : ember_last_status(ctx);
    int64_t made = 0;
    for (int32_t token; st == EMBER_OK && made < tokens; made++) {
        if ((st = ember_generator_next(g, &token)) == EMBER_OK)
            text_print(&out, text_vocab_piece(&vocab, token), 1);
    }
    ember_generator_free(g);
    text_print_end(&out);
    putchar('\n');
    if (st != EMBER_OK) {
        rc = cli_fail(ctx, "generation failed");
        goto done;
    }
    double seconds = cli_now() - start;
    if (verbose)
        fprintf(stderr, "ember: %lld bytes in %.2f s, %.0f bytes/s on %s%s\n", (long long)tokens, seconds,
                seconds > 0 ? (double)tokens / seconds : 0.0, ember_ctx_device_name(ctx),
                o.no_cache ? ", without the key/value cache" : "");
done:
    free(ids);
    ember_model_free(model);
    ember_checkpoint_close(ck);
    ember_ctx_free(ctx);
    return rc;
}
