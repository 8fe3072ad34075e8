/* SPDX-License-Identifier: MIT */
/* tools/ptxas.c — finding ptxas and reading `ptxas -v` (see ptxas.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "ptxas.h"

#define PTXAS "ptxas" EMBER_PROGRAM_SUFFIX

/* ------------------------------------------------------------- running it */

/* the first line of `text` (NULL: none), at most 300 characters, for messages */
static void first_line(const char *text, char *s, size_t len)
{
    while (text && (*text == '\n' || *text == ' '))
        text++;
    size_t n = text ? strcspn(text, "\r\n") : 0;
    snprintf(s, len, "%.*s", (int)(n > 300 ? 300 : n), text ? text : "");
}

/* ------------------------------------------------------------ what it is */

/* "Cuda compilation tools, release 11.8, V11.8.89" to "11.8 (V11.8.89)" */
static bool read_version(struct ptxas *a)
{
    char *argv[] = {a->path, "--version", NULL}, *out;
    int status = ember_run_capture(argv, &out);
    const char *release = out ? strstr(out, "release ") : NULL;
    if (status != 0 || !release) {
        char line[320];
        first_line(out, line, sizeof line);
        if (status == 127 && !line[0])
            snprintf(a->why, sizeof a->why, "cannot be started");
        else
            snprintf(a->why, sizeof a->why, "--version failed (exit status %d%s%s)", status,
                     line[0] ? ": " : "", line);
        free(out);
        return false;
    }
    release += strlen("release ");
    size_t n = strcspn(release, ", \r\n");
    const char *build = strstr(release, ", V");
    size_t m = build ? strcspn(build + 2, " \r\n") : 0;
    if (build && m > 0)
        snprintf(a->version, sizeof a->version, "%.*s (%.*s)", (int)n, release, (int)m, build + 2);
    else
        snprintf(a->version, sizeof a->version, "%.*s", (int)n, release);
    free(out);
    return true;
}

static int ascending(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

/* The plain 'sm_NN' values --help lists for --gpu-name (not sm_90a, not
 * compute_NN): the archs it assembles for. */
static void read_archs(struct ptxas *a)
{
    char *argv[] = {a->path, "--help", NULL}, *out;
    ember_run_capture(argv, &out);
    const char *p = out ? strstr(out, "--gpu-name") : NULL;
    const char *end = p ? strstr(p, "Default value") : NULL;
    for (; p && end && (p = strstr(p, "'sm_")) && p < end && a->arch_count < PTXAS_ARCHS; p += 4) {
        int sm = 0, n = 0;
        for (; p[4 + n] >= '0' && p[4 + n] <= '9' && n < 4; n++)
            sm = sm * 10 + (p[4 + n] - '0');
        if (n > 0 && p[4 + n] == '\'')
            a->archs[a->arch_count++] = sm;
    }
    qsort(a->archs, (size_t)a->arch_count, sizeof *a->archs, ascending);
    free(out);
}

bool ptxas_knows(const struct ptxas *a, int sm)
{
    if (!a->version[0])
        return false;
    for (int i = 0; i < a->arch_count; i++)
        if (a->archs[i] == sm)
            return true;
    return a->arch_count == 0;
}

void ptxas_arch_range(const struct ptxas *a, char *s, size_t len)
{
    if (a->arch_count == 0)
        snprintf(s, len, "archs it does not list");
    else if (a->arch_count == 1)
        snprintf(s, len, "sm_%d only", a->archs[0]);
    else
        snprintf(s, len, "sm_%d to sm_%d", a->archs[0], a->archs[a->arch_count - 1]);
}

/* ------------------------------------------------------- where it may be */

struct search {
    struct ptxas *found;
    int count, max;
};

/* Adds `path` unless it is not there (an error only when `explicit`) or
 * is a ptxas already found under another name. */
static void consider(struct search *s, const char *path, const char *source, bool explicit)
{
    if (s->count >= s->max)
        return;
    char real[PATH_MAX];
    struct stat st;
    bool there =
        ember_absolute_path(path, real, sizeof real) && ember_stat(real, &st) == 0 && S_ISREG(st.st_mode);
    if (!there && !explicit)
        return;
    for (int i = 0; there && i < s->count; i++)
        if (strcmp(s->found[i].path, real) == 0)
            return;
    struct ptxas *a = &s->found[s->count++];
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", there ? real : path);
    a->source = source;
    if (!there)
        snprintf(a->why, sizeof a->why, "not found");
    else if (!ember_is_program(real))
        snprintf(a->why, sizeof a->why, "not executable");
    else if (read_version(a))
        read_archs(a);
}

struct glob_source {
    struct search *s;
    const char *source;
};

static void consider_match(const char *path, void *arg)
{
    struct glob_source *g = arg;
    consider(g->s, path, g->source, false);
}

/* every match of a glob pattern, in order */
static void consider_glob(struct search *s, const char *pattern, const char *source)
{
    struct glob_source g = {s, source};
    ember_each_match(pattern, consider_match, &g);
}

static bool is_file(const char *path)
{
    struct stat st;
    return ember_stat(path, &st) == 0;
}

static bool is_folder(const char *path)
{
    struct stat st;
    return ember_stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A copy of $name without "only:", or NULL when unset or "none" */
static char *env_list(const char *name, bool *only, bool *none)
{
    const char *v = getenv(name);
    *only = v && strncmp(v, "only:", 5) == 0;
    *none = v && strcmp(v, "none") == 0;
    if (!v || *none)
        return NULL;
    return strdup(*only ? v + 5 : v);
}

/* $EMBER_PTXAS: programs, or folders with ptxas or bin/ptxas in them */
static bool consider_env(struct search *s)
{
    bool only, none;
    char *list = env_list("EMBER_PTXAS", &only, &none), *save = NULL, path[PATH_MAX];
    for (char *item = list ? strtok_r(list, EMBER_PATH_LIST_SEPARATOR, &save) : NULL; item;
         item = strtok_r(NULL, EMBER_PATH_LIST_SEPARATOR, &save)) {
        snprintf(path, sizeof path, "%s/" PTXAS, item);
        if (is_folder(item) && !is_file(path))
            snprintf(path, sizeof path, "%s/bin/" PTXAS, item);
        consider(s, is_folder(item) ? path : item, "EMBER_PTXAS", true);
    }
    free(list);
    return !(only || none);
}

/* the first ptxas on PATH, as a shell would run it */
static void consider_path(struct search *s)
{
    const char *v = getenv("PATH");
    char *list = v ? strdup(v) : NULL, *save = NULL, path[PATH_MAX];
    for (char *dir = list ? strtok_r(list, EMBER_PATH_LIST_SEPARATOR, &save) : NULL; dir;
         dir = strtok_r(NULL, EMBER_PATH_LIST_SEPARATOR, &save)) {
        snprintf(path, sizeof path, "%s/" PTXAS, dir);
        if (ember_is_program(path) && !is_folder(path)) {
            consider(s, path, "PATH", false);
            break;
        }
    }
    free(list);
}

/* NVRTC's neighbours: each EMBER_NVRTC entry (a library or its folder) is
 * a toolkit's lib64, with ptxas in ../bin, or a wheel's
 * nvidia/cuda_nvrtc/lib, with the nvcc wheel's in ../../cuda_nvcc/bin */
static void consider_beside_nvrtc(struct search *s)
{
    bool only, none;
    char *list = env_list("EMBER_NVRTC", &only, &none), *save = NULL, path[PATH_MAX];
    for (char *item = list ? strtok_r(list, EMBER_PATH_LIST_SEPARATOR, &save) : NULL; item;
         item = strtok_r(NULL, EMBER_PATH_LIST_SEPARATOR, &save)) {
        char *slash = strrchr(item, '/');
        if (!is_folder(item) && slash)
            *slash = '\0';
        else if (!is_folder(item))
            continue;
        snprintf(path, sizeof path, "%s/../bin/" PTXAS, item);
        consider(s, path, "beside EMBER_NVRTC", false);
        snprintf(path, sizeof path, "%s/../../cuda_nvcc/bin/" PTXAS, item);
        consider(s, path, "beside EMBER_NVRTC", false);
    }
    free(list);
}

int ptxas_find(struct ptxas *found, int max)
{
    struct search s = {found, 0, max};
    if (consider_env(&s)) {
        char path[PATH_MAX];
        consider_path(&s);
        consider_glob(&s, "/usr/local/cuda*/bin/ptxas", "a CUDA toolkit");
        consider(&s, "/opt/cuda/bin/ptxas", "a CUDA toolkit", false);
        consider_beside_nvrtc(&s);
        /* build/cu11, where scripts/setup.sh --tests puts the wheels, beside build/ember */
        char *slash = ember_program_file(path, sizeof path) ? strrchr(path, '/') : NULL;
        if (slash && (size_t)(slash - path) + 40 < sizeof path) {
            strcpy(slash, "/cu11/nvidia/cuda_nvcc/bin/" PTXAS);
            consider(&s, path, "build/cu11", false);
        }
        /* pip install nvidia-cuda-nvcc-cu11, into a virtual environment or --user */
        const char *home[] = {getenv("VIRTUAL_ENV"), getenv("HOME")};
        const char *below[] = {"lib", ".local/lib"};
        for (int i = 0; i < 2; i++) {
            if (!home[i] || !*home[i])
                continue;
            snprintf(path, sizeof path, "%s/%s/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas", home[i],
                     below[i]);
            consider_glob(&s, path, "a pip wheel");
        }
    }
    return s.count;
}

/* ------------------------------------------------------ what -v reports */

/* a temporary file, its name in `path`; -1 when none could be made */
static int temp_file(char *path, size_t len, const char *what)
{
    char dir[PATH_MAX];
    ember_temporary_folder(dir, sizeof dir);
    int n = snprintf(path, len, "%s/ember-%s-XXXXXX", dir, what);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return ember_make_temporary_file(path);
}

static bool write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        s += w;
        n -= (size_t)w;
    }
    return true;
}

/* the entry named `name`, added when new */
static struct ptxas_usage *entry(struct ptxas_usage **list, int *count, const char *name)
{
    for (int i = 0; i < *count; i++)
        if (strcmp((*list)[i].kernel, name) == 0)
            return &(*list)[i];
    struct ptxas_usage *bigger = realloc(*list, (size_t)(*count + 1) * sizeof **list);
    if (!bigger)
        return NULL;
    *list = bigger;
    struct ptxas_usage *u = &bigger[(*count)++];
    snprintf(u->kernel, sizeof u->kernel, "%s", name);
    u->registers = u->smem = u->cmem = u->stack = u->spill_stores = u->spill_loads = -1;
    return u;
}

/* "Used 64 registers, used 1 barriers, 8192 bytes smem, 416 bytes cmem[0], 4 bytes cmem[2]";
 * no smem said is none (ptxas leaves it out when it is zero) */
static void read_used(struct ptxas_usage *u, const char *line)
{
    u->smem = 0;
    for (const char *p = line; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        char *rest;
        long v = strtol(p, &rest, 10);
        while (*rest == ' ')
            rest++;
        if (strncmp(rest, "registers", 9) == 0)
            u->registers = v;
        else if (strncmp(rest, "bytes smem", 10) == 0)
            u->smem = v;
        else if (strncmp(rest, "bytes cmem[", 11) == 0) /* every bank: parameters, constants */
            u->cmem = (u->cmem < 0 ? 0 : u->cmem) + v;
    }
}

/* "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" */
static void read_frame(struct ptxas_usage *u, const char *line)
{
    for (const char *p = line; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        char *rest;
        long v = strtol(p, &rest, 10);
        while (*rest == ' ')
            rest++;
        if (strncmp(rest, "bytes stack frame", 17) == 0)
            u->stack = v;
        else if (strncmp(rest, "bytes spill stores", 18) == 0)
            u->spill_stores = v;
        else if (strncmp(rest, "bytes spill loads", 17) == 0)
            u->spill_loads = v;
    }
}

/* ptxas -v's lines, per function:
 *   ptxas info    : Compiling entry function 'sgemm' for 'sm_35'
 *   ptxas info    : Function properties for sgemm
 *       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 64 registers, 8192 bytes smem, 416 bytes cmem[0]
 * A .func called from kernels has properties but no "Compiling entry"
 * line: it is left out. */
static int read_report(const char *report, struct ptxas_usage **usage)
{
    struct ptxas_usage *list = NULL;
    int count = 0;
    char line[1024], entry_name[128] = "", props[128] = "";
    for (const char *at = report; at && *at; at += strcspn(at, "\n") + (at[strcspn(at, "\n")] != '\0')) {
        /* the line without its end: "\n", or "\r\n" from Windows' ptxas.exe */
        snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\r\n"), at);
        const char *p;
        if ((p = strstr(line, "Compiling entry function '"))) {
            p += strlen("Compiling entry function '");
            snprintf(entry_name, sizeof entry_name, "%.*s", (int)strcspn(p, "'"), p);
            if (!entry(&list, &count, entry_name))
                goto oom;
        } else if ((p = strstr(line, "Function properties for "))) {
            p += strlen("Function properties for ");
            snprintf(props, sizeof props, "%.*s", (int)strcspn(p, " "), p);
        } else if (strstr(line, "bytes stack frame") && props[0]) {
            for (int i = 0; i < count; i++)
                if (strcmp(list[i].kernel, props) == 0)
                    read_frame(&list[i], line);
        } else if ((p = strstr(line, ": Used ")) && entry_name[0]) {
            struct ptxas_usage *u = entry(&list, &count, entry_name);
            if (!u)
                goto oom;
            read_used(u, p + strlen(": Used "));
        }
    }
    *usage = list;
    return count;
oom:
    free(list);
    return -1;
}

int ptxas_resources(const struct ptxas *a, const char *ptx, int sm, struct ptxas_usage **usage, char *why,
                    size_t why_len)
{
    *usage = NULL;
    char in[PATH_MAX], out[PATH_MAX], arch[32], *report = NULL;
    int count = -1;
    int in_fd = temp_file(in, sizeof in, "ptx"), out_fd = temp_file(out, sizeof out, "cubin");
    if (in_fd < 0 || out_fd < 0) {
        snprintf(why, why_len, "cannot make a temporary file %s: %s", in_fd < 0 ? in : out, strerror(errno));
        goto done;
    }
    if (!write_all(in_fd, ptx, strlen(ptx))) {
        snprintf(why, why_len, "cannot write %s: %s", in, strerror(errno));
        goto done;
    }
    snprintf(arch, sizeof arch, "-arch=sm_%d", sm);
    char *argv[] = {(char *)a->path, "-v", arch, in, "-o", out, NULL};
    int status = ember_run_capture(argv, &report);
    if (status != 0) {
        /* its first complaint, "ptxas /tmp/ember-ptx-..., line 5; fatal : ...",
         * without the temporary file's name */
        const char *complaint = report;
        for (const char *at = report; at && *at; at += strcspn(at, "\n") + (at[strcspn(at, "\n")] != '\0')) {
            size_t n = strcspn(at, "\n");
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)n, at);
            if (strstr(line, "error") || strstr(line, "fatal")) {
                const char *name = strstr(at, in);
                complaint = name && name < at + n ? name + strlen(in) + strspn(name + strlen(in), ", ") : at;
                break;
            }
        }
        char line[320];
        first_line(complaint, line, sizeof line);
        snprintf(why, why_len, "exit status %d: %s", status, line[0] ? line : "no message");
        goto done;
    }
    count = read_report(report, usage);
    if (count < 0)
        snprintf(why, why_len, "out of memory");
    else if (count == 0) {
        snprintf(why, why_len, "it assembled the PTX but reported no kernels");
        count = -1;
    }
done:
    if (in_fd >= 0) {
        close(in_fd);
        remove(in);
    }
    if (out_fd >= 0) {
        close(out_fd);
        remove(out);
    }
    free(report);
    return count;
}
