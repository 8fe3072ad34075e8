/* SPDX-License-Identifier: MIT */
/*
 * tools/cmd-lm.c — pretrained language models from GGUF files:
 * `ember chat`, `ember generate --load model.gguf` and `ember tokenize`.
 *
 * Replies stream a token at a time. A conversation keeps its key/value
 * cache between turns: each turn renders the whole conversation with the
 * model's chat template, tokenizes it, and feeds only what follows the
 * tokens the cache already holds (a reply sampled a token at a time may
 * tokenize otherwise as text: the cache then goes back to where they part).
 * When the conversation outgrows the context, its oldest turns are dropped.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "platform.h"

/* the options the three commands share */
struct lm_args {
    const char *load, *adapter, *weights, *device, *fallback, *prompt, *system;
    int64_t tokens, threads, context, top_k;
    double temperature, top_p;
    uint64_t seed;
    ember_matmul_precision precision;
    bool verbose, chat, ids, profile;
};

static const char common_usage[] =
    "  --load FILE         the model: a GGUF file (llama, qwen2; scripts/fetch-model.sh fetches\n"
    "                      SmolLM2-135M-Instruct into build/models) (required)\n"
    "  --adapter FILE      LoRA adapters on the model: ember train --lora's --save, or PEFT's\n"
    "                      adapter_model.safetensors (its adapter_config.json beside it)\n"
    "  --weights FILE      the weights of a full fine-tuning in place of the file's: ember train\n"
    "                      --init MODEL.gguf's --save without --lora\n"
    "  --context N         positions the model keeps (default 2048, or the model's own if fewer)\n"
    "  --device DEV        auto (default, or $EMBER_DEVICE), cpu, cuda, cuda:N, opencl, opencl:N\n"
    "  --fallback DEV      when --device cannot work, use DEV (e.g. cpu) with a warning\n"
    "  --threads N         cpu threads (default: every core)\n"
    "  --matmul-precision P  highest (default): float products; medium: on a CPU, generation's\n"
    "                      quantised products round the activations to 8 bits, as llama.cpp's\n"
    "                      (faster; the scores about 1% off), and with AMX a prompt's products are\n"
    "                      bfloat16; high: with AMX, a prompt's products bfloat16 x 3\n"
    "  --verbose           say more: the model, and how fast the tokens came\n"
    "  --profile           after the run, a table of where the time went, op by op (stderr)\n"
    "  -h, --help          this text\n";

static const char sampling_usage[] =
    "  --temperature T     0: the most likely token each time; 1: the model's own odds (default %s)\n"
    "  --top-k K           draw among the K most likely tokens only (default 40; 0: all)\n"
    "  --top-p P           and among the most likely whose odds add up to P (default 0.95)\n"
    "  --seed N            seeds the draws (default 0)\n";

static void print_usage(const char *head, const char *temperature)
{
    fputs(head, stdout);
    if (temperature)
        printf(sampling_usage, temperature);
    fputs(common_usage, stdout);
}

static bool parse(int argc, char **argv, struct lm_args *a, const char *head, const char *temperature,
                  int *rc)
{
    static const struct option longopts[] = {
        {"load", required_argument, NULL, 'l'},
        {"adapter", required_argument, NULL, 'A'},
        {"weights", required_argument, NULL, 'W'},
        {"prompt", required_argument, NULL, 'p'},
        {"system", required_argument, NULL, 'S'},
        {"tokens", required_argument, NULL, 'n'},
        {"temperature", required_argument, NULL, 'T'},
        {"top-k", required_argument, NULL, 'k'},
        {"top-p", required_argument, NULL, 'P'},
        {"seed", required_argument, NULL, 's'},
        {"context", required_argument, NULL, 'c'},
        {"device", required_argument, NULL, 'D'},
        {"fallback", required_argument, NULL, 'F'},
        {"threads", required_argument, NULL, 't'},
        {"chat", no_argument, NULL, 'C'},
        {"ids", no_argument, NULL, 'i'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"profile", no_argument, NULL, 'r'},
        {"matmul-precision", required_argument, NULL, 'M'},
        {NULL, 0, NULL, 0},
    };
    bool ok = true;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': a->load = optarg; break;
        case 'A': a->adapter = optarg; break;
        case 'W': a->weights = optarg; break;
        case 'p': a->prompt = optarg; break;
        case 'S': a->system = optarg; break;
        case 'n': ok = cli_parse_int("tokens", optarg, 0, 1 << 24, &a->tokens); break;
        case 'T': ok = cli_parse_float("temperature", optarg, 0.0, 100.0, &a->temperature); break;
        case 'k': ok = cli_parse_int("top-k", optarg, 0, 1 << 24, &a->top_k); break;
        case 'P': ok = cli_parse_float("top-p", optarg, 0.0, 1.0, &a->top_p); break;
        case 's': ok = cli_parse_u64("seed", optarg, &a->seed); break;
        case 'c': ok = cli_parse_int("context", optarg, 16, 1 << 24, &a->context); break;
        case 'D': a->device = optarg; break;
        case 'F': a->fallback = optarg; break;
        case 't': ok = cli_parse_int("threads", optarg, 0, 4096, &a->threads); break;
        case 'C': a->chat = true; break;
        case 'i': a->ids = true; break;
        case 'v': a->verbose = true; break;
        case 'r': a->profile = true; break;
        case 'M': ok = cli_parse_matmul_precision(optarg, &a->precision); break;
        case 'h':
            print_usage(head, temperature);
            *rc = EXIT_OK;
            return false;
        default: ok = false; break;
        }
    }
    if (ok && !a->load) {
        cli_error(
            "--load FILE is required: a language model's GGUF file (scripts/fetch-model.sh fetches one)");
        ok = false;
    }
    if (ok && a->adapter && a->weights) {
        cli_error(
            "--adapter adds LoRA's adapters, --weights puts a full fine-tuning's weights in place: give one");
        ok = false;
    }
    *rc = ok ? EXIT_OK : EXIT_USAGE;
    return ok;
}

/* ------------------------------------------------------------- printing */

/* A token's bytes to stdout as they come. To a terminal, control bytes
 * (but newline and tab) are written as \xNN, so that no escape sequence a
 * model writes reaches it. */
static void put_token(ember_lm *lm, int32_t token, bool terminal)
{
    char piece[256];
    size_t n = ember_lm_token_bytes(lm, token, piece, sizeof piece);
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)piece[i];
        if (terminal && (b < 0x20 || b == 0x7f) && b != '\n' && b != '\t')
            printf("\\x%02x", b);
        else
            putchar(b);
    }
    fflush(stdout);
}

/* --------------------------------------------------------------- running */

struct session {
    ember_ctx *ctx;
    ember_lm *lm;
    float *logits;
    int32_t *fed; /* the tokens the cache holds, in order */
    int64_t fed_count;
    ember_sample_options sampling;
    ember_rng rng;
    bool terminal, profile;
    double prompt_seconds, reply_seconds;
    int64_t prompt_tokens, reply_tokens;
};

static volatile sig_atomic_t stop_reply, replying;

static void on_interrupt(int sig)
{
    (void)sig;
    if (replying)
        stop_reply = 1; /* the reply ends at its next token; the chat goes on */
    else
        _exit(130); /* at the prompt: the chat ends, as a shell's does */
}

static int open_session(struct session *s, const struct lm_args *a)
{
    s->ctx = cli_ctx_new(a->verbose, (int)a->threads);
    if (!s->ctx)
        return EXIT_FAILURE_OTHER;
    int rc = cli_open_device(s->ctx, a->device, a->fallback);
    if (rc != EXIT_OK)
        return rc;
    ember_ctx_set_matmul_precision(s->ctx, a->precision);
    if (a->precision != EMBER_MATMUL_HIGHEST && !ember_ctx_matmul_precision_matters(s->ctx, a->precision))
        fprintf(stderr, "ember: --matmul-precision %s changes nothing on %s: its products stay float32\n",
                cli_matmul_precision_name(a->precision), ember_ctx_device_name(s->ctx));
    ember_lm_options o = {.context = a->context};
    if (!(s->lm = ember_lm_load(s->ctx, a->load, &o)))
        return cli_fail(s->ctx, "cannot load the model");
    if (a->adapter && ember_lm_load_adapter(s->lm, a->adapter) != EMBER_OK)
        return cli_fail(s->ctx, "cannot load the adapters");
    if (a->weights && ember_lm_load_weights(s->lm, a->weights) != EMBER_OK)
        return cli_fail(s->ctx, "cannot load the fine-tuned weights");
    char lora[256];
    if (a->verbose)
        fprintf(stderr, "ember: %s%s%s%s\n", ember_lm_describe(s->lm), a->adapter ? "; " : "",
                a->adapter ? ember_lm_lora_describe(s->lm, lora, sizeof lora) : "",
                a->weights ? "; the weights fine-tuned, in F32" : "");
    s->logits = malloc((size_t)ember_lm_vocab(s->lm) * sizeof *s->logits);
    s->fed = malloc((size_t)ember_lm_context(s->lm) * sizeof *s->fed);
    if (!s->logits || !s->fed) {
        cli_error("out of memory");
        return EXIT_FAILURE_OTHER;
    }
    if (a->profile && ember_profile_start(s->ctx, false) != EMBER_OK)
        return cli_fail(s->ctx, "cannot profile");
    s->profile = a->profile;
    s->sampling = (ember_sample_options){(float)a->temperature, (int)a->top_k, (float)a->top_p};
    s->rng = ember_rng_seed(a->seed);
    s->terminal = isatty(STDOUT_FILENO);
    return EXIT_OK;
}

static void close_session(struct session *s)
{
    if (s->profile && ember_profile_stop(s->ctx) == EMBER_OK)
        cli_profile_report(s->ctx, stderr, NULL, "model's runs");
    free(s->logits);
    free(s->fed);
    ember_lm_free(s->lm);
    ember_ctx_free(s->ctx);
}

/* Brings the cache to hold exactly `tokens`: back to where it parts from
 * them, then the rest fed at once. */
static int feed_to(struct session *s, const int32_t *tokens, int64_t n)
{
    int64_t same = 0;
    while (same < s->fed_count && same < n && s->fed[same] == tokens[same])
        same++;
    if (same == n && same > 0) /* nothing new: the last token again, for its scores */
        same--;
    double start = cli_now();
    if (ember_lm_rewind(s->lm, same) != EMBER_OK ||
        ember_lm_feed(s->lm, tokens + same, n - same, s->logits) != EMBER_OK)
        return cli_fail(s->ctx, "the model failed");
    memcpy(s->fed + same, tokens + same, (size_t)(n - same) * sizeof *tokens);
    s->fed_count = n;
    s->prompt_seconds += cli_now() - start;
    s->prompt_tokens += n - same;
    return EXIT_OK;
}

/* Samples up to `limit` tokens after what the cache holds, printing each,
 * until an end token or Ctrl-C; the reply's bytes go into *reply (to free). */
static int reply(struct session *s, int64_t limit, char **text)
{
    size_t len = 0, cap = 1024;
    char *out = malloc(cap);
    if (!out) {
        cli_error("out of memory");
        return EXIT_FAILURE_OTHER;
    }
    double start = cli_now();
    stop_reply = 0;
    replying = 1;
    int rc = EXIT_OK;
    for (int64_t i = 0; i < limit && !stop_reply; i++) {
        int32_t token = ember_lm_sample(s->lm, s->logits, &s->sampling, &s->rng);
        if (token < 0) {
            rc = cli_fail(s->ctx, "sampling failed");
            break;
        }
        if (ember_lm_is_end(s->lm, token))
            break;
        put_token(s->lm, token, s->terminal);
        char piece[256];
        size_t n = ember_lm_token_bytes(s->lm, token, piece, sizeof piece);
        if (len + n + 1 > cap) {
            char *grown = realloc(out, cap = 2 * (len + n + 1));
            if (!grown) {
                rc = EXIT_FAILURE_OTHER;
                break;
            }
            out = grown;
        }
        memcpy(out + len, piece, n);
        len += n;
        s->reply_tokens++;
        if (s->fed_count >= ember_lm_context(s->lm)) {
            fprintf(stderr, "\nember: the reply filled the model's context of %lld positions\n",
                    (long long)ember_lm_context(s->lm));
            break;
        }
        if (ember_lm_feed(s->lm, &token, 1, s->logits) != EMBER_OK) {
            rc = cli_fail(s->ctx, "the model failed");
            break;
        }
        s->fed[s->fed_count++] = token;
    }
    replying = 0;
    s->reply_seconds += cli_now() - start;
    out[len] = 0;
    *text = out;
    return rc;
}

static void say_speed(const struct session *s)
{
    /* the reply's last line first: where stdout and stderr share a file (a log), stdout's
     * buffered newline would otherwise land after this line, gluing it to the reply's end */
    fflush(stdout);
    fprintf(stderr,
            "ember: prompt %lld tokens in %.2f s (%.1f tokens/s), reply %lld tokens in %.2f s (%.1f "
            "tokens/s) on %s\n",
            (long long)s->prompt_tokens, s->prompt_seconds,
            s->prompt_seconds > 0 ? (double)s->prompt_tokens / s->prompt_seconds : 0.0,
            (long long)s->reply_tokens, s->reply_seconds,
            s->reply_seconds > 0 ? (double)s->reply_tokens / s->reply_seconds : 0.0,
            ember_ctx_device_name(s->ctx));
}

/* text (with special tokens) as tokens, in *tokens (to free) */
static int tokenize(struct session *s, const char *text, bool specials, int32_t **tokens, int64_t *n)
{
    size_t len = strlen(text);
    *n = ember_lm_tokenize(s->lm, text, len, specials, NULL, 0);
    *tokens = *n >= 0 ? malloc((size_t)(*n + 1) * sizeof **tokens) : NULL;
    if (!*tokens || ember_lm_tokenize(s->lm, text, len, specials, *tokens, *n) != *n)
        return cli_fail(s->ctx, "cannot tokenize");
    return EXIT_OK;
}

/* ------------------------------------------------------------------ chat */

static const char chat_head[] =
    "usage: ember chat --load MODEL.gguf [options]\n"
    "\n"
    "Talks with a pretrained language model: each line you type is a message, and the\n"
    "model's reply follows as it is written, with the model's own chat template (ChatML,\n"
    "Llama 3). Ctrl-C ends a reply; Ctrl-C at the prompt, Ctrl-D or /quit ends the chat;\n"
    "/reset starts the conversation afresh.\n"
    "\n"
    "  --system TEXT       the system message (default: the template's own, if it has one)\n"
    "  --tokens N          the longest reply, in tokens (default 512)\n";

struct conversation {
    ember_chat_message *messages;
    char **owned; /* the messages' texts, to free */
    int count, cap;
};

static bool add_message(struct conversation *c, const char *role, char *text)
{
    if (c->count == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        ember_chat_message *m = realloc(c->messages, (size_t)cap * sizeof *m);
        char **o = m ? realloc(c->owned, (size_t)cap * sizeof *o) : NULL;
        if (m)
            c->messages = m;
        if (o)
            c->owned = o;
        if (!m || !o)
            return false;
        c->cap = cap;
    }
    c->messages[c->count] = (ember_chat_message){role, text};
    c->owned[c->count++] = text;
    return true;
}

static void drop_messages(struct conversation *c, int first, int count)
{
    for (int i = first; i < first + count; i++)
        free(c->owned[i]);
    memmove(c->messages + first, c->messages + first + count,
            (size_t)(c->count - first - count) * sizeof *c->messages);
    memmove(c->owned + first, c->owned + first + count,
            (size_t)(c->count - first - count) * sizeof *c->owned);
    c->count -= count;
}

/* the conversation, rendered and tokenized, fitting the context with room
 * for a reply: the oldest exchanges dropped as needed */
static int render(struct session *s, struct conversation *c, int64_t room, int32_t **tokens, int64_t *n)
{
    int first = c->count > 0 && strcmp(c->messages[0].role, "system") == 0 ? 1 : 0;
    for (;;) {
        char *text = ember_lm_chat_prompt(s->lm, c->messages, c->count, true);
        if (!text)
            return cli_fail(s->ctx, "cannot render the conversation");
        int rc = tokenize(s, text, true, tokens, n);
        ember_free(text);
        if (rc != EXIT_OK)
            return rc;
        if (*n + room <= ember_lm_context(s->lm) || c->count - first <= 1)
            break;
        free(*tokens);
        drop_messages(c, first, c->count - first >= 3 ? 2 : 1);
        fprintf(stderr,
                "ember: the conversation outgrew the model's context; its oldest exchange is forgotten\n");
    }
    if (*n >= ember_lm_context(s->lm)) {
        free(*tokens);
        cli_error("the message is longer than the model's context of %lld tokens (--context)",
                  (long long)ember_lm_context(s->lm));
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int cmd_chat(int argc, char **argv)
{
    struct lm_args a = {.device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto",
                        .tokens = 512,
                        .temperature = 0.7,
                        .top_k = 40,
                        .top_p = 0.95};
    int rc;
    if (!parse(argc, argv, &a, chat_head, "0.7", &rc))
        return rc == EXIT_USAGE ? (fputs("try: ember chat --help\n", stderr), rc) : rc;
    if (optind < argc) {
        cli_error("unexpected argument \"%s\": type messages once the chat starts", argv[optind]);
        fputs("try: ember chat --help\n", stderr);
        return EXIT_USAGE;
    }
    struct session s = {0};
    struct conversation c = {0};
    if ((rc = open_session(&s, &a)) != EXIT_OK)
        goto done;
    if (a.system && !add_message(&c, "system", strdup(a.system))) {
        rc = EXIT_FAILURE_OTHER;
        goto done;
    }
    ember_on_stop_request(on_interrupt);
    bool interactive = isatty(STDIN_FILENO);
    char line[65536];
    for (;;) {
        if (interactive) {
            fputs("> ", stdout);
            fflush(stdout);
        }
        if (!fgets(line, sizeof line, stdin))
            break;
        line[strcspn(line, "\r\n")] = 0;
        if (!*line)
            continue;
        if (strcmp(line, "/quit") == 0 || strcmp(line, "/exit") == 0)
            break;
        if (strcmp(line, "/reset") == 0) {
            drop_messages(&c, a.system ? 1 : 0, c.count - (a.system ? 1 : 0));
            continue;
        }
        char *text = strdup(line);
        if (!text || !add_message(&c, "user", text)) {
            rc = EXIT_FAILURE_OTHER;
            break;
        }
        int32_t *tokens;
        int64_t n;
        int64_t room = a.tokens < ember_lm_context(s.lm) / 2 ? a.tokens : ember_lm_context(s.lm) / 2;
        if ((rc = render(&s, &c, room, &tokens, &n)) != EXIT_OK)
            break;
        rc = feed_to(&s, tokens, n);
        free(tokens);
        char *answer = NULL;
        if (rc == EXIT_OK)
            rc = reply(&s, a.tokens, &answer);
        if (stop_reply)
            fputs(" [stopped]", stdout);
        putchar('\n');
        if (answer && !add_message(&c, "assistant", answer))
            rc = EXIT_FAILURE_OTHER;
        if (rc != EXIT_OK)
            break;
        if (a.verbose)
            say_speed(&s);
    }
done:
    for (int i = 0; i < c.count; i++)
        free(c.owned[i]);
    free(c.messages);
    free(c.owned);
    close_session(&s);
    return rc;
}

/* -------------------------------------------------------------- generate */

static const char generate_head[] =
    "usage: ember generate --load MODEL.gguf [options]\n"
    "\n"
    "Continues a prompt with a pretrained language model, printing the prompt and the\n"
    "tokens as they come. (A checkpoint of ember train --data text takes the options of\n"
    "`ember generate --help` without a GGUF file.)\n"
    "\n"
    "  --prompt TEXT       the text to continue (required)\n"
    "  --chat              the prompt is a message to a chat model: wrapped in its chat\n"
    "                      template, and the reply printed alone\n"
    "  --system TEXT       with --chat, the system message\n"
    "  --tokens N          tokens to generate at most (default 128)\n";

int cmd_generate_lm(int argc, char **argv)
{
    struct lm_args a = {.device = getenv("EMBER_DEVICE") ? getenv("EMBER_DEVICE") : "auto",
                        .tokens = 128,
                        .temperature = 0.8,
                        .top_k = 40,
                        .top_p = 0.95};
    int rc;
    if (!parse(argc, argv, &a, generate_head, "0.8", &rc))
        return rc == EXIT_USAGE ? (fputs("try: ember generate --help\n", stderr), rc) : rc;
    if (optind < argc || !a.prompt || !*a.prompt) {
        if (optind < argc)
            cli_error("unexpected argument \"%s\"", argv[optind]);
        else
            cli_error("--prompt TEXT is required, and not empty");
        fputs("try: ember generate --help\n", stderr);
        return EXIT_USAGE;
    }
    struct session s = {0};
    int32_t *tokens = NULL;
    int64_t n = 0;
    char *text = NULL, *answer = NULL;
    if ((rc = open_session(&s, &a)) != EXIT_OK)
        goto done;
    if (a.chat) {
        ember_chat_message m[2] = {{"system", a.system ? a.system : ""}, {"user", a.prompt}};
        if (!(text = ember_lm_chat_prompt(s.lm, a.system ? m : m + 1, a.system ? 2 : 1, true))) {
            rc = cli_fail(s.ctx, "cannot render the prompt");
            goto done;
        }
    }
    if ((rc = tokenize(&s, text ? text : a.prompt, a.chat, &tokens, &n)) != EXIT_OK)
        goto done;
    if (n == 0 || n >= ember_lm_context(s.lm)) {
        cli_error("the prompt is %lld tokens; the model keeps %lld (--context)", (long long)n,
                  (long long)ember_lm_context(s.lm));
        rc = EXIT_USAGE;
        goto done;
    }
    if (!a.chat) {
        fputs(a.prompt, stdout);
        fflush(stdout);
    }
    ember_on_stop_request(on_interrupt);
    if ((rc = feed_to(&s, tokens, n)) == EXIT_OK)
        rc = reply(&s, a.tokens, &answer);
    putchar('\n');
    if (a.verbose)
        say_speed(&s);
done:
    ember_free(text);
    free(answer);
    free(tokens);
    close_session(&s);
    return rc;
}

/* -------------------------------------------------------------- tokenize */

static const char tokenize_head[] =
    "usage: ember tokenize --load MODEL.gguf [--ids] TEXT\n"
    "\n"
    "Shows how a language model's tokenizer cuts TEXT: each token's id and bytes, one a\n"
    "line; with --ids, the ids alone on one line. Special tokens (<|im_start|>) in the\n"
    "text are recognised.\n"
    "\n"
    "  --ids               the ids alone\n";

int cmd_tokenize(int argc, char **argv)
{
    struct lm_args a = {.device = "cpu"};
    int rc;
    if (!parse(argc, argv, &a, tokenize_head, NULL, &rc))
        return rc == EXIT_USAGE ? (fputs("try: ember tokenize --help\n", stderr), rc) : rc;
    if (optind != argc - 1) {
        cli_error(optind < argc ? "one TEXT, not %d" : "TEXT is required", argc - optind);
        fputs("try: ember tokenize --help\n", stderr);
        return EXIT_USAGE;
    }
    struct session s = {0};
    int32_t *tokens = NULL;
    int64_t n = 0;
    if ((rc = open_session(&s, &a)) == EXIT_OK &&
        (rc = tokenize(&s, argv[optind], true, &tokens, &n)) == EXIT_OK) {
        for (int64_t i = 0; i < n; i++) {
            if (a.ids) {
                printf(i ? " %d" : "%d", tokens[i]);
                continue;
            }
            char piece[256], shown[1100];
            size_t len = ember_lm_token_bytes(s.lm, tokens[i], piece, sizeof piece - 1);
            piece[len] = 0;
            printf("%6d  '%s'\n", tokens[i], cli_printable(piece, shown, sizeof shown));
        }
        if (a.ids)
            putchar('\n');
    }
    free(tokens);
    close_session(&s);
    return rc;
}

bool cli_is_gguf(const char *path)
{
    size_t len = path ? strlen(path) : 0;
    if (len > 5 && (strcmp(path + len - 5, ".gguf") == 0 || strcmp(path + len - 5, ".GGUF") == 0))
        return true;
    char magic[4] = {0};
    FILE *f = path ? cli_open_input(path, INT64_MAX, NULL, false) : NULL; /* never waits on a FIFO */
    bool gguf = f && fread(magic, 1, 4, f) == 4 && memcmp(magic, "GGUF", 4) == 0;
    if (f)
        fclose(f);
    return gguf;
}

/* whether --load names a GGUF file */
bool cli_loads_gguf(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *path = strcmp(argv[i], "--load") == 0 && i + 1 < argc ? argv[i + 1]
                           : strncmp(argv[i], "--load=", 7) == 0          ? argv[i] + 7
                                                                          : NULL;
        if (path)
            return cli_is_gguf(path);
    }
    return false;
}

static const char export_usage[] =
    "usage: ember export --load MODEL.gguf --adapter ADAPTER.safetensors -o MERGED.gguf [--type Q8_0]\n"
    "       ember export --load MODEL.gguf --weights WEIGHTS.safetensors -o TUNED.gguf [--type Q8_0]\n"
    "\n"
    "Writes a language model with its LoRA adapters merged into its weights, W + (alpha / r) B A,\n"
    "as a GGUF file llama.cpp and ollama run: the model's own file with each adapted projection\n"
    "in --type, and its metadata, tokenizer and other tensors as they were. With --weights, a\n"
    "full fine-tuning's: every weight its trained value (its norms and biases in F32).\n"
    "\n"
    "  --load FILE         the model the adapters were trained on (a GGUF file)\n"
    "  --adapter FILE      the adapters: ember train --lora's --save, or PEFT's\n"
    "                      adapter_model.safetensors (its adapter_config.json beside it)\n"
    "  --weights FILE      or the weights: ember train --init MODEL.gguf's --save without --lora\n"
    "  --type TYPE         the merged projections' type: F32, F16, Q8_0 (default) or Q4_0\n"
    "  --format gguf       the format written (the only one for a language model)\n"
    "  -o, --output FILE   the GGUF file to write\n"
    "  -h, --help          this text\n";

int cmd_lm_export(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"load", required_argument, NULL, 'l'},    {"adapter", required_argument, NULL, 'A'},
        {"weights", required_argument, NULL, 'W'}, {"type", required_argument, NULL, 'T'},
        {"output", required_argument, NULL, 'o'},  {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    const char *load = NULL, *adapter = NULL, *weights = NULL, *type = "Q8_0", *output = NULL;
    bool ok = true;
    int c;
    optind = 1;
    while (ok && (c = cli_getopt(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': load = optarg; break;
        case 'A': adapter = optarg; break;
        case 'W': weights = optarg; break;
        case 'T': type = optarg; break;
        case 'f': /* said, not needed: a GGUF model is written as GGUF */
            if (strcmp(optarg, "gguf") != 0) {
                cli_error("--format %s: a language model is written as GGUF (--format gguf)", optarg);
                ok = false;
            }
            break;
        case 'o': output = optarg; break;
        case 'h': fputs(export_usage, stdout); return EXIT_OK;
        default: ok = false; break;
        }
    }
    if (ok && (!load || !adapter == !weights || !output || optind < argc)) {
        cli_error(
            "ember export --load MODEL.gguf needs --adapter FILE or --weights FILE (one of them) and -o "
            "MERGED.gguf, and nothing else");
        ok = false;
    }
    if (!ok) {
        fputs("try: ember export --load MODEL.gguf --help\n", stderr);
        return EXIT_USAGE;
    }
    const char *inputs[] = {load, adapter ? adapter : weights, NULL};
    int rc = cli_output_check(output, "-o", inputs);
    if (rc != EXIT_OK)
        return rc;
    ember_ctx *ctx = cli_ctx_new(false, 0);
    if (!ctx)
        return EXIT_FAILURE_OTHER;
    ember_lm *lm = NULL;
    rc = cli_open_device(ctx, "cpu", NULL);
    if (rc == EXIT_OK && !(lm = ember_lm_load(ctx, load, &(ember_lm_options){.context = 16})))
        rc = cli_fail(ctx, "cannot load the model");
    if (rc == EXIT_OK && adapter && ember_lm_load_adapter(lm, adapter) != EMBER_OK)
        rc = cli_fail(ctx, "cannot load the adapters");
    if (rc == EXIT_OK && weights && ember_lm_load_weights(lm, weights) != EMBER_OK)
        rc = cli_fail(ctx, "cannot load the fine-tuned weights");
    if (rc == EXIT_OK && ember_lm_save_merged(lm, output, type) != EMBER_OK)
        rc = cli_fail(ctx, "cannot write the merged model");
    char lora[256];
    if (rc == EXIT_OK && adapter)
        fprintf(stderr, "ember: wrote %s: %s, merged into its %s projections\n", output,
                ember_lm_lora_describe(lm, lora, sizeof lora), type);
    else if (rc == EXIT_OK)
        fprintf(stderr, "ember: wrote %s: every weight as fine-tuned, in %s (norms and biases in F32)\n",
                output, type);
    ember_lm_free(lm);
    ember_ctx_free(ctx);
    return rc;
}
