/* SPDX-License-Identifier: MIT */
/* tools/cli.c — helpers for the subcommands (see cli.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "platform.h"
#include "text-impl.h"

double cli_start_time;
char **cli_argv;

int cli_exit_status(ember_status status)
{
    switch (status) {
    case EMBER_OK: return EXIT_OK;
    case EMBER_ERR_ARG: return EXIT_USAGE;
    case EMBER_ERR_IO:
    case EMBER_ERR_FORMAT: return EXIT_DATA;
    case EMBER_ERR_DEVICE:
    case EMBER_ERR_NOMEM:
    case EMBER_ERR_UNSUPPORTED: return EXIT_DEVICE;
    }
    return EXIT_FAILURE_OTHER;
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ember: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_fail(ember_ctx *ctx, const char *doing)
{
    ember_status st = ember_last_status(ctx);
    if (st == EMBER_OK)
        st = EMBER_ERR_DEVICE; /* a failure with no recorded reason: treat it as the device's */
    char said[4096];
    cli_error("%s: %s", doing,
              ember_last_error(ctx)[0] ? cli_words(ember_last_error(ctx), said, sizeof said)
                                       : ember_status_str(st));
    return cli_exit_status(st);
}

/* The library's messages name its API, where a user of this program knows
 * the options that set the same thing: each phrase on the left is said as
 * the one on the right. */
static const struct {
    const char *api, *cli;
} cli_phrases[] = {
    {"ember_data_options.sample_shape[0]", "--context"}, /* text's one dimension */
    {"ember_data_options.sample_shape", "--shape"},
    {"ember_data_options.label", "--label"},
    {"ember_params_init_from's skip", "--init-skip NAME"},
    {"build the model and load it with ember_model_load", "give --model"},
    {"ember_data_options.resize", "--resize"},
    {"ember_data_options.dir", "--data-dir"},
    {"ember_parallel_options.keep_all", "--keep-devices"},
    {"the device \"cpu\"", "--device cpu"},
    {"ember_devices_report", "`ember devices`"},
    {"ember_kernel_name_at", "`ember ptx --list`"},
    {"ember_model_layer_info", "`ember summary`"},
    {"EMBER_CACHE_DIR or ember_set_cache_dir", "EMBER_CACHE_DIR"},
};

const char *cli_words(const char *message, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (const char *at = message; *at && used + 1 < len;) {
        size_t i = 0, n = sizeof cli_phrases / sizeof cli_phrases[0];
        while (i < n && strncmp(at, cli_phrases[i].api, strlen(cli_phrases[i].api)) != 0)
            i++;
        const char *put = i < n ? cli_phrases[i].cli : at;
        size_t put_len = i < n ? strlen(put) : 1;
        if (used + put_len >= len)
            break;
        memcpy(out + used, put, put_len);
        used += put_len;
        at += i < n ? strlen(cli_phrases[i].api) : 1;
    }
    out[used] = '\0';
    return out;
}

static void log_stderr(void *user, ember_log_level level, const char *message)
{
    static const char *const prefix[] = {"error: ", "warning: ", "", "debug: "};
    char said[4096];
    (void)user;
    fprintf(stderr, "ember: %s%s\n", prefix[level], cli_words(message, said, sizeof said));
}

/* Work the library makes us wait for (compiling kernels): a line saying
 * what, why and where it is kept as it starts; on a terminal, a line under
 * it counting the seconds; at the end, the total. The short form,
 * "compiling kernels for opencl:0", is `what` up to its details. */
static void progress_stderr(void *user, const char *what, double seconds, bool done)
{
    bool tty = isatty(STDERR_FILENO);
    int brief = (int)strcspn(what, "(");
    while (brief > 0 && what[brief - 1] == ' ')
        brief--;
    (void)user;
    if (!done && seconds == 0.0)
        fprintf(stderr, "ember: %s\n", what);
    else if (!done && tty)
        fprintf(stderr, "\r\033[Kember: %.*s: %.0f s", brief, what, seconds);
    else if (done)
        fprintf(stderr, "%sember: %.*s: done in %.1f s\n", tty && seconds >= 1.0 ? "\r\033[K" : "", brief,
                what, seconds);
    fflush(stderr);
}

/* --verbose, as the context was made with it */
static bool verbose_run;

ember_ctx *cli_ctx_new(bool verbose, int threads)
{
    verbose_run = verbose;
    ember_ctx *ctx = ember_ctx_new();
    if (!ctx) {
        cli_error("out of memory");
        return NULL;
    }
    ember_ctx_set_log(ctx, log_stderr, NULL, verbose ? EMBER_LOG_INFO : EMBER_LOG_WARN);
    ember_ctx_set_progress(ctx, progress_stderr, NULL);
    ember_ctx_set_threads(ctx, threads);
    return ctx;
}

/* What "auto" chose is news when it is a GPU, or when it passed over a GPU
 * that is there but failed; that it took the CPU of a machine without one
 * is said only with --verbose. */
static bool worth_saying(const char *choice, bool verbose)
{
    if (!choice[0])
        return false;
    if (verbose || strncmp(choice, "auto chose cpu", 14) != 0 || strstr(choice, "cuda:"))
        return true;
    for (const char *at = strstr(choice, "opencl:"); at; at = strstr(at + 1, "opencl:")) {
        const char *why = strchr(at, '(');
        if (why && strncmp(why, "(a CPU device", 13) != 0)
            return true;
    }
    return false;
}

int cli_open_device(ember_ctx *ctx, const char *device, const char *fallback)
{
    if (ember_ctx_use_device(ctx, device) != EMBER_OK) {
        if (!fallback)
            return cli_fail(ctx, "cannot use the device");
        char said[4096];
        fprintf(stderr, "ember: warning: cannot use %s: %s; falling back to %s, as --fallback asks\n", device,
                cli_words(ember_last_error(ctx), said, sizeof said), fallback);
        ember_clear_error(ctx);
        if (ember_ctx_use_device(ctx, fallback) != EMBER_OK)
            return cli_fail(ctx, "cannot use the fallback device either");
    }
    char said[4096];
    if (worth_saying(ember_ctx_device_choice(ctx), verbose_run))
        fprintf(stderr, "ember: %s\n", cli_words(ember_ctx_device_choice(ctx), said, sizeof said));
    return EXIT_OK;
}

ember_ctx *cli_file_ctx(int *rc)
{
    ember_ctx *ctx = *rc == EXIT_OK ? cli_ctx_new(false, 1) : NULL;
    if (*rc == EXIT_OK && !ctx)
        *rc = EXIT_FAILURE_OTHER;
    if (ctx && (*rc = cli_open_device(ctx, "cpu", NULL)) != EXIT_OK) {
        ember_ctx_free(ctx);
        ctx = NULL;
    }
    return ctx;
}

bool cli_int_value(const char *text, int64_t low, int64_t high, int64_t *value)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < low || v > high)
        return false;
    *value = v;
    return true;
}

bool cli_u64_value(const char *text, uint64_t *value)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        return false;
    *value = v;
    return true;
}

bool cli_float_value(const char *text, double low, double high, double *value)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v) || v < low || v > high)
        return false;
    *value = v;
    return true;
}

bool cli_parse_int(const char *name, const char *text, int64_t low, int64_t high, int64_t *value)
{
    if (cli_int_value(text, low, high, value))
        return true;
    cli_error("--%s wants a whole number from %lld to %lld, not \"%s\"", name, (long long)low,
              (long long)high, text);
    return false;
}

/* --matmul-precision's words, by ember_matmul_precision */
static const char *const matmul_precisions[] = {"highest", "high", "medium"};
enum { MATMUL_PRECISIONS = sizeof matmul_precisions / sizeof matmul_precisions[0] };

bool cli_matmul_precision_value(const char *text, ember_matmul_precision *value)
{
    for (int p = 0; p < MATMUL_PRECISIONS; p++)
        if (strcmp(text, matmul_precisions[p]) == 0) {
            *value = (ember_matmul_precision)p;
            return true;
        }
    return false;
}

bool cli_parse_matmul_precision(const char *text, ember_matmul_precision *value)
{
    if (cli_matmul_precision_value(text, value))
        return true;
    cli_error(
        "--matmul-precision wants highest (float32), high (bfloat16 x 3 where the CPU has AMX) or medium "
        "(bfloat16 where it has AMX, and 8-bit activations for a quantised model's generation), not \"%s\"",
        text);
    return false;
}

const char *cli_matmul_precision_name(ember_matmul_precision precision)
{
    return (unsigned)precision < MATMUL_PRECISIONS ? matmul_precisions[precision] : "?";
}

bool cli_parse_u64(const char *name, const char *text, uint64_t *value)
{
    if (cli_u64_value(text, value))
        return true;
    cli_error("--%s wants a non-negative whole number, not \"%s\"", name, text);
    return false;
}

bool cli_parse_float(const char *name, const char *text, double low, double high, double *value)
{
    if (cli_float_value(text, low, high, value))
        return true;
    cli_error("--%s wants a number from %g to %g, not \"%s\"", name, low, high, text);
    return false;
}

bool cli_parse_shape_quiet(const char *text, int *ndim, int64_t *shape)
{
    return ember_parse_shape(text, ndim, shape); /* as model files and checkpoints write it */
}

bool cli_parse_shape(const char *name, const char *text, int *ndim, int64_t *shape)
{
    if (cli_parse_shape_quiet(text, ndim, shape))
        return true;
    cli_error("--%s wants 1 to 3 sizes from 1 to %d joined by 'x', such as 1x28x28 or 100, not \"%s\"", name,
              EMBER_MAX_SAMPLE_SIDE, text);
    return false;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double cli_peak_rss_mib(void) { return (double)ember_peak_memory_bytes() / (1024.0 * 1024.0); }

void cli_json_number(FILE *f, double v, int decimals)
{
    if (isfinite(v))
        fprintf(f, "%.*f", decimals, v);
    else
        fputs("null", f);
}

void cli_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* The length of the UTF-8 sequence at s and its code point, or 0 when the
 * bytes there are not one (a stray byte, a sequence cut short, overlong). */
static int utf8_at(const unsigned char *s, uint32_t *cp)
{
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xe0) == 0xc0 ? 2
            : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4
                                    : 0;
    uint32_t v = n == 1 ? s[0] : n == 2 ? s[0] & 0x1fu : n == 3 ? s[0] & 0x0fu : s[0] & 0x07u;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3fu);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (n == 0 || v < least[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

const char *cli_printable(const char *s, char *buf, size_t len)
{
    size_t at = 0;
    const unsigned char *p = (const unsigned char *)(s ? s : "(null)");
    while (*p && at + 8 < len) { /* room for the longest piece, "\u0080" or 4 bytes, and the end */
        uint32_t cp = 0;
        int n = utf8_at(p, &cp);
        if (n == 0) { /* not UTF-8: the byte's value */
            at += (size_t)snprintf(buf + at, len - at, "\\x%02x", *p);
            n = 1;
        } else if (cp < 0x20 || cp == 0x7f) { /* C0 controls and DEL: a terminal obeys them */
            at += (size_t)snprintf(buf + at, len - at, "\\x%02x", (unsigned)cp);
        } else if (cp >= 0x80 && cp < 0xa0) { /* C1 controls, CSI among them */
            at += (size_t)snprintf(buf + at, len - at, "\\u%04x", (unsigned)cp);
        } else {
            memcpy(buf + at, p, (size_t)n);
            at += (size_t)n;
        }
        p += n;
    }
    if (*p && len >= 4) { /* cut short: say so */
        at = at < len - 4 ? at : len - 4;
        memcpy(buf + at, "...", 3);
        at += 3;
    }
    if (len)
        buf[at < len ? at : len - 1] = '\0';
    return buf;
}

/* What getopt_long refused, said in this program's words (opterr is off):
 * the option as typed is argv[optind - 1]. */
static void say_refused(char *const *argv, const char *shortopts, const struct option *longopts)
{
    const char *typed = argv[optind - 1];
    if (strncmp(typed, "--", 2) != 0) { /* a short option */
        if (optopt && strchr(shortopts, optopt))
            cli_error("option -%c needs a value", optopt);
        else
            cli_error("unrecognized option '-%c'", optopt ? optopt : '?');
        return;
    }
    const char *name = typed + 2, *equals = strchr(name, '=');
    size_t len = equals ? (size_t)(equals - name) : strlen(name);
    const char *names[128], *exact = NULL;
    char list[512] = "";
    int count = 0, prefixed = 0;
    for (const struct option *o = longopts; o->name && count < 128; o++) {
        names[count++] = o->name;
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            exact = o->name;
        if (strncmp(o->name, name, len) == 0 && strlen(list) + strlen(o->name) + 4 < sizeof list) {
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s", prefixed ? ", " : "",
                     o->name);
            prefixed++;
        }
    }
    if (prefixed == 1 || exact) { /* known: a value missing, or one given where none is taken */
        const char *known = exact ? exact : list + 2;
        if (equals)
            cli_error("option --%s takes no value (\"%s\")", known, typed);
        else
            cli_error("option --%s needs a value", known);
    } else if (prefixed > 1) {
        cli_error("option '%s' is ambiguous: it begins %s", typed, list);
    } else {
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)(len < 63 ? len : 63), name);
        int at = ember_closest_name(word, names, count);
        if (at >= 0)
            cli_error("unrecognized option '%s' (did you mean \"--%s\"?)", typed, names[at]);
        else
            cli_error("unrecognized option '%s'", typed);
    }
}

int cli_getopt(int argc, char *const *argv, const char *shortopts, const struct option *longopts, int *index)
{
    opterr = 0;
    int c = getopt_long(argc, argv, shortopts, longopts, index);
    if (c == '?')
        say_refused(argv, shortopts, longopts);
    return c;
}

bool cli_data_takes_path(const char *kind)
{
    return kind && (strcmp(kind, "csv") == 0 || strcmp(kind, "npy") == 0 || cli_data_is_text(kind));
}

bool cli_data_is_text(const char *kind)
{
    return kind && (strcmp(kind, "text") == 0 || strcmp(kind, "chat") == 0);
}
