/* SPDX-License-Identifier: MIT */
/*
 * backends/cuda/cuda-ptx.c — `ember ptx`: the PTX a GPU gets, to read.
 *
 * For an arch it picks the kernel source the way cuda-path.c does (the
 * newest NVRTC that targets it or an arch below it; else the built-in
 * sm_30 PTX), compiles to PTX (even where the backend would load a cubin:
 * PTX is what a person can read) and cuts one kernel out of the module:
 * the header, the module-scope declarations the kernel uses, its .entry.
 * The list of kernels it takes names from is backends/kernels/catalogue.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda-impl.h"
#include "text-impl.h"

/* A line of `text` starting at `line`: its length, newline excluded. */
static size_t line_length(const char *line)
{
    const char *end = strchr(line, '\n');
    return end ? (size_t)(end - line) : strlen(line);
}

static bool starts_with(const char *line, const char *prefix)
{
    return strncmp(line, prefix, strlen(prefix)) == 0;
}

/* a line and its newline */
static void add_line(struct ember_text *t, const char *line, size_t n)
{
    ember_text_add(t, line, n);
    ember_text_add(t, "\n", 1);
}

/* The .entry of `kernel` with what it needs from the module around it. */
static char *extract(const char *ptx, const char *kernel, char *why, size_t why_len)
{
    char entry[160];
    snprintf(entry, sizeof entry, ".entry %s(", kernel);
    const char *start = strstr(ptx, entry);
    if (!start) {
        snprintf(why, why_len, "the module has no kernel %s", kernel);
        return NULL;
    }
    while (start > ptx && start[-1] != '\n') /* back to the line's start: ".visible .entry" */
        start--;
    const char *end = strstr(start, "\n}");
    end = end ? end + 2 : start + strlen(start);

    struct ember_text out = {0};
    /* the header, and module-scope declarations the body names */
    char *body = malloc((size_t)(end - start) + 1);
    if (body)
        memcpy(body, start, (size_t)(end - start)), body[end - start] = '\0';
    for (const char *line = ptx; body && line < start && *line; line += line_length(line) + 1) {
        size_t n = line_length(line);
        if (starts_with(line, ".version") || starts_with(line, ".target") ||
            starts_with(line, ".address_size")) {
            add_line(&out, line, n);
        } else if (starts_with(line, ".shared") || starts_with(line, ".global") ||
                   starts_with(line, ".const")) {
            /* the declared name is the last word before [, = or ; */
            char name[128] = "";
            const char *p = line + n;
            while (p > line &&
                   (p[-1] == ';' || p[-1] == ']' || (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '['))
                p--;
            const char *q = p;
            while (q > line && q[-1] != ' ' && q[-1] != '\t')
                q--;
            snprintf(name, sizeof name, "%.*s", (int)(p - q), q);
            if (name[0] && strstr(body, name))
                add_line(&out, line, n);
        }
        if (!line[n])
            break;
    }
    add_line(&out, "", 0);
    add_line(&out, start, (size_t)(end - start));
    char *one = body ? ember_text_take(&out) : NULL;
    free(body);
    free(out.s);
    if (!one)
        snprintf(why, why_len, "out of memory");
    return one;
}

/* "sm_86" or "compute_86" to 86; 0 for anything else. Digits only, two
 * or three of them (sscanf's %d would take sm_4294967326 and overflow). */
static int parse_arch(const char *arch)
{
    const char *digits = !arch                               ? NULL
                         : strncmp(arch, "sm_", 3) == 0      ? arch + 3
                         : strncmp(arch, "compute_", 8) == 0 ? arch + 8
                                                             : NULL;
    int cc = 0, n = 0;
    for (; digits && digits[n] >= '0' && digits[n] <= '9' && n < 4; n++)
        cc = cc * 10 + (digits[n] - '0');
    return digits && (n == 2 || n == 3) && digits[n] == '\0' && cc >= 10 ? cc : 0;
}

char *ember_ptx(const char *kernel, const char *arch, bool baseline, char *how, size_t how_len, char *why,
                size_t why_len)
{
    char ignored[8];
    if (!how) {
        how = ignored;
        how_len = sizeof ignored;
    }
    const struct cuda_probe *p = cuda_probe();
    int cc = parse_arch(arch);
    if (arch && cc == 0) {
        snprintf(why, why_len, "\"%s\" is not an arch: write it as sm_86 or compute_86", arch);
        return NULL;
    }
    if (!arch && !baseline) {
        if (!p->driver_ok || p->gpu_count == 0) {
            snprintf(why, why_len, "no GPU to ask (%s): name an arch, as in sm_86, or ask for the baseline",
                     p->driver_ok ? "the driver reports none" : p->why);
            return NULL;
        }
        cc = p->gpus[0].cc;
    }
    if (kernel) {
        int k = 0;
        while (k < EMBER_KERNEL_COUNT && strcmp(ember_kernel_name(k), kernel) != 0)
            k++;
        if (k == EMBER_KERNEL_COUNT) {
            snprintf(why, why_len, "there is no kernel \"%s\": ember_kernel_name_at lists them", kernel);
            return NULL;
        }
    }

    char *module = NULL;
    if (!baseline) {
        /* the rules of cuda-path.c, with a driver that takes any PTX when
         * there is no driver to ask */
        struct cuda_choice c;
        int driver = p->driver_ok ? p->path_driver : 99000, driver_isa = p->driver_ok ? p->path_ptx_isa : 999;
        cuda_choose_path(cc, driver, driver_isa, p->nvrtc, p->nvrtc_count, p->baseline_ptx_isa, NULL, &c);
        if (c.count == 0) {
            snprintf(why, why_len, "sm_%d: %s", cc, c.reason);
            return NULL;
        }
        const struct cuda_option *o = &c.options[0];
        if (o->nvrtc >= 0) {
            const struct cuda_nvrtc *n = &p->nvrtc[o->nvrtc];
            struct ember_kernel_tuning t = cuda_nvrtc_tuning();
            size_t size;
            char fail[2048];
            module = (char *)cuda_nvrtc_compile(n, o->arch, false, &t, &size, fail, sizeof fail);
            if (!module) {
                snprintf(why, why_len, "%s", fail);
                return NULL;
            }
            snprintf(how, how_len, "NVRTC %d.%d (%s), PTX for compute_%d", n->major, n->minor, n->path,
                     o->arch);
        } else {
            snprintf(how, how_len, "the built-in sm_30 PTX (no NVRTC for sm_%d: %s)", cc, c.rejected);
        }
    } else {
        snprintf(how, how_len, "the built-in sm_30 PTX");
    }
    if (!module && !(module = strdup(cuda_baseline_ptx()))) {
        snprintf(why, why_len, "out of memory");
        return NULL;
    }
    if (!kernel)
        return module;
    char *one = extract(module, kernel, why, why_len);
    free(module);
    return one;
}
