/* SPDX-License-Identifier: MIT */
/*
 * core/device.c — the compiled-in backends and choosing one.
 *
 * Which backends exist, and the order `auto` prefers them in, is the
 * registry's (generated from each backend's ember_add_backend).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile-impl.h"
#include "report-impl.h"
#include "text-impl.h"

/* The backends built, in the order `auto` prefers them, and the simulated
 * GPUs, which open when named but are not listed, nor tried by auto: they
 * stand for a GPU to learn from, not one to train on. Both lists are
 * generated from the backends' ember_add_backend calls (cmake/backends.cmake),
 * so this file names no backend. */
#define backends  ember_backend_registry
#define simulated ember_simulated_registry

static ember_status host_fail(void *ctx, ember_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ember_vfail(ctx, status, fmt, ap);
    va_end(ap);
    return status;
}

static void host_log(void *ctx, ember_log_level level, const char *fmt, ...)
{
    char message[1024];
    EMBER_FORMAT_ARGS(message, fmt);
    ember_log(ctx, level, "%s", message);
}

static void host_wait_begin(void *ctx, const char *what, bool maybe_short)
{
    ember_wait_begin(ctx, what, maybe_short);
}
static void host_wait_end(void *ctx) { ember_wait_end(ctx); }

static const struct ember_backend_ops *find_backend(const char *name, size_t len)
{
    for (int i = 0; backends[i]; i++)
        if (strlen(backends[i]->name) == len && strncmp(backends[i]->name, name, len) == 0)
            return backends[i];
    for (int i = 0; simulated[i]; i++)
        if (strlen(simulated[i]->name) == len && strncmp(simulated[i]->name, name, len) == 0)
            return simulated[i];
    return NULL;
}

static ember_status open_device(ember_ctx *ctx, const struct ember_backend_ops *ops, int index)
{
    ctx->host = (struct ember_host){.ctx = ctx,
                                    .fail = host_fail,
                                    .log = host_log,
                                    .threads = ctx->threads,
                                    .kernel_timed = ember_profile_kernel_timed,
                                    .wait_begin = host_wait_begin,
                                    .wait_end = host_wait_end};
    ember_status st = ops->device_open(&ctx->host, index, &ctx->dev);
    if (st != EMBER_OK)
        return st;
    ctx->ops = ops;
    ops->device_describe(ctx->dev, ctx->device_name, sizeof ctx->device_name);
    ember_log(ctx, EMBER_LOG_INFO, "using %s", ctx->device_name);
    return EMBER_OK;
}

/* adds "name (why)" to the list of devices auto passed over */
static void passed_over(ember_ctx *ctx, const char *name, const char *why)
{
    ember_log(ctx, EMBER_LOG_INFO, "auto: passing over %s: %s", name, why);
    if (!ctx->device_choice[0])
        snprintf(ctx->device_choice, sizeof ctx->device_choice, "passed over: %s (%s)", name, why);
    else
        ember_note_append(ctx->device_choice, sizeof ctx->device_choice, "%s (%s)", name, why);
}

/* "auto": the first device, in the list's order, that the backend prefers
 * and that opens; ctx->device_choice says what it chose and passed over. */
static ember_status open_auto(ember_ctx *ctx)
{
    char why[1024], name[64];
    ctx->device_choice[0] = '\0';
    for (int i = 0; backends[i]; i++) {
        why[0] = '\0';
        if (backends[i]->auto_passes_over && backends[i]->auto_passes_over(why, sizeof why)) {
            passed_over(ctx, backends[i]->name, why);
            continue;
        }
        int count = backends[i]->device_count(why, sizeof why);
        if (count <= 0) {
            passed_over(ctx, backends[i]->name, why[0] ? why : "no devices");
            continue;
        }
        for (int d = 0; d < count; d++) {
            snprintf(name, sizeof name, "%s:%d", backends[i]->name, d);
            if (backends[i]->device_preferred && !backends[i]->device_preferred(d, why, sizeof why)) {
                passed_over(ctx, name, why);
                continue;
            }
            if (open_device(ctx, backends[i], d) == EMBER_OK) {
                /* "auto chose cpu; passed over: ..." */
                char rest[sizeof ctx->device_choice];
                snprintf(rest, sizeof rest, "%s", ctx->device_choice);
                snprintf(ctx->device_choice, sizeof ctx->device_choice, "auto chose %s%s%.1400s",
                         strcmp(backends[i]->name, "cpu") == 0 ? "cpu" : name, rest[0] ? "; " : "", rest);
                return EMBER_OK;
            }
            snprintf(why, sizeof why, "%.1000s", ctx->error);
            ember_clear_error(ctx);
            passed_over(ctx, name, why);
        }
    }
    return ember_fail(ctx, EMBER_ERR_DEVICE, "no usable device found: %s", ctx->device_choice);
}

ember_status ember_ctx_use_device(ember_ctx *ctx, const char *device)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!device || !*device)
        device = "auto";
    if (ctx->ops)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "this context already uses %s; make a new context "
                          "for another device",
                          ctx->device_name);
    ctx->device_choice[0] = '\0';
    if (strcmp(device, "auto") == 0)
        return open_auto(ctx);

    /* "name" or "name:index" */
    const char *colon = strchr(device, ':');
    size_t name_len = colon ? (size_t)(colon - device) : strlen(device);
    int index = 0;
    if (colon) {
        char *end;
        errno = 0;
        long v = strtol(colon + 1, &end, 10);
        if (errno || end == colon + 1 || *end || v < 0 || v > 1000)
            return ember_fail(ctx, EMBER_ERR_ARG,
                              "bad device \"%s\": the index after ':' must be a small number, "
                              "as in opencl:0",
                              device);
        index = (int)v;
    }
    const struct ember_backend_ops *ops = find_backend(device, name_len);
    if (!ops) {
        char known[256] = "auto";
        for (int i = 0; backends[i]; i++) {
            strncat(known, ", ", sizeof known - strlen(known) - 1);
            strncat(known, backends[i]->name, sizeof known - strlen(known) - 1);
        }
        /* a backend left out at build time is not a typo: say which option did it */
        static const char *const optional[][2] = {
            {"cuda", "EMBER_CUDA"}, {"opencl", "EMBER_OPENCL"}, {"ptxsim", "EMBER_CUDA"}};
        for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
            if (strlen(optional[i][0]) == name_len && strncmp(device, optional[i][0], name_len) == 0)
                return ember_fail(ctx, EMBER_ERR_UNSUPPORTED,
                                  "this build has no %s backend (it was built with "
                                  "-D%s=OFF): it knows %s",
                                  optional[i][0], optional[i][1], known);
        return ember_fail(ctx, EMBER_ERR_ARG, "unknown device \"%s\": this build knows %s", device, known);
    }
    char why[512] = "";
    int count = ops->device_count(why, sizeof why);
    if (index >= count) {
        if (count <= 0)
            return ember_fail(ctx, EMBER_ERR_DEVICE, "device %s cannot be used: %s", device,
                              why[0] ? why : "the backend found no devices");
        return ember_fail(ctx, EMBER_ERR_DEVICE, "device %s does not exist: %s has %d device%s (0 to %d)",
                          device, ops->name, count, count == 1 ? "" : "s", count - 1);
    }
    return open_device(ctx, ops, index);
}

/* Opens device `index` of a backend in a context of its own, which is the
 * real test of usable, and fills the entry from what happened. */
static void probe_device(const struct ember_backend_ops *ops, int index, int threads, ember_device_info *info)
{
    char spec[64];
    snprintf(spec, sizeof spec, "%s:%d", ops->name, index);
    ember_ctx *probe = ember_ctx_new();
    if (!probe) {
        snprintf(info->reason, sizeof info->reason, "out of host memory");
        return;
    }
    ember_ctx_set_log(probe, NULL, NULL, EMBER_LOG_ERROR);
    ember_ctx_set_threads(probe, threads);
    info->usable = ember_ctx_use_device(probe, spec) == EMBER_OK;
    snprintf(info->description, sizeof info->description, "%s",
             info->usable ? probe->device_name : info->name);
    if (!info->usable)
        snprintf(info->reason, sizeof info->reason, "%.*s", (int)sizeof info->reason - 1, probe->error);
    ember_ctx_free(probe);
}

int ember_devices(ember_device_info *out, int max, int threads)
{
    int n = 0;
    for (int i = 0; backends[i]; i++) {
        const struct ember_backend_ops *ops = backends[i];
        char why[1024] = "";
        int count = ops->device_count(why, sizeof why);
        for (int d = 0; d < (count > 0 ? count : 1); d++, n++) {
            if (n >= max || !out)
                continue;
            ember_device_info *info = &out[n];
            memset(info, 0, sizeof *info);
            snprintf(info->backend, sizeof info->backend, "%s", ops->name);
            /* "cpu" alone; a GPU backend's devices by index, "opencl:0" */
            bool indexed = count > 0 && strcmp(ops->name, "cpu") != 0;
            snprintf(info->name, sizeof info->name, indexed ? "%s:%d" : "%s", ops->name, d);
            if (count <= 0) {
                snprintf(info->description, sizeof info->description, "%s: no usable device", ops->name);
                snprintf(info->reason, sizeof info->reason, "%s",
                         why[0] ? why : "the backend found no devices");
                continue;
            }
            probe_device(ops, d, threads, info);
            info->preferred = !ops->device_preferred || ops->device_preferred(d, why, sizeof why);
            if (info->usable && !info->preferred)
                snprintf(info->reason, sizeof info->reason, "auto passes it over: %.900s", why);
        }
    }
    return n;
}

#define MAX_LISTED 64

/* The description as the list prints it, after the name in its own column:
 * without the name it starts with, and without parentheses around all the
 * rest ("cpu (2 threads, OpenBLAS)" gives "2 threads, OpenBLAS"). */
static void description_after_name(const ember_device_info *info, char *out, size_t len)
{
    const char *text = info->description;
    size_t name = strlen(info->name);
    if (strncmp(text, info->name, name) == 0 && text[name] == ' ')
        text += name + 1;
    size_t n = strlen(text);
    if (n > 1 && text[0] == '(' && text[n - 1] == ')')
        snprintf(out, len, "%.*s", (int)n - 2, text + 1);
    else
        snprintf(out, len, "%s", text);
}

char *ember_devices_report(bool json, int threads)
{
    ember_device_info info[MAX_LISTED];
    int n = ember_devices(info, MAX_LISTED, threads);
    if (n > MAX_LISTED)
        n = MAX_LISTED;
    struct ember_report *root = ember_report_new();
    ember_report_string(root, "ember", NULL, "%s", ember_version());

    /* every device, in auto's order, and what auto would take */
    struct ember_report *list = ember_report_array(root, "devices", "devices, in the order auto tries them");
    const char *chosen = NULL;
    for (int i = 0; i < n; i++) {
        struct ember_report *e = ember_report_object(list, NULL, NULL);
        char text[256];
        description_after_name(&info[i], text, sizeof text);
        ember_report_string(e, "summary", NULL, "%-9s %s%s", info[i].name,
                            info[i].usable ? text : "unavailable",
                            info[i].usable && !info[i].preferred ? " (opens when named)" : "");
        ember_report_string(e, "name", NULL, "%s", info[i].name);
        ember_report_string(e, "backend", NULL, "%s", info[i].backend);
        ember_report_string(e, "description", NULL, "%s", info[i].description);
        ember_report_bool(e, "usable", NULL, info[i].usable);
        ember_report_bool(e, "preferred", NULL, info[i].preferred);
        ember_report_string(e, "reason", info[i].reason[0] ? (info[i].usable ? "note" : "why") : NULL, "%s",
                            info[i].reason);
        if (!chosen && info[i].usable && info[i].preferred)
            chosen = info[i].name;
    }
    ember_report_string(root, "auto", "\nauto chooses", "%s",
                        chosen ? chosen : "nothing: no device is usable");

    /* each backend's own facts */
    struct ember_report *sections = ember_report_object(root, "backends", NULL);
    for (int i = 0; backends[i]; i++) {
        if (!backends[i]->diagnose)
            continue;
        char label[64];
        snprintf(label, sizeof label, "\n%s", backends[i]->name);
        backends[i]->diagnose(ember_report_object(sections, backends[i]->name, label), threads);
    }
    char *out = json ? ember_report_json(root) : ember_report_text(root);
    ember_report_free(root);
    return out;
}

char *ember_kernel_report(ember_ctx *ctx, const char *kernel, int registers, const char *registers_from,
                          char *why, size_t why_len)
{
    if (!ctx || !ctx->ops) {
        snprintf(why, why_len, "the context has no device");
        return NULL;
    }
    if (!ctx->ops->kernel_report) {
        snprintf(why, why_len,
                 "%s is not a simulated GPU (ptxsim:N): only those record what their kernels do%s",
                 ctx->device_name, ctx->profiler ? " (and not while profiling)" : "");
        return NULL;
    }
    return ctx->ops->kernel_report(ctx->dev, kernel, registers, registers_from ? registers_from : "", why,
                                   why_len);
}
