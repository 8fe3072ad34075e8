/* SPDX-License-Identifier: MIT */
/*
 * backends/opencl/opencl-auto.c — what "auto" remembers of OpenCL, so that
 * it never starts a driver it will pass over.
 *
 * Asking OpenCL what devices there are loads every installed driver: on a
 * machine with PoCL, that is LLVM, about 90 MiB resident and threads that
 * live as long as the process. When the only devices are CPUs, "auto"
 * then passes them all over (ember's cpu backend is faster there), so a
 * program embedding ember would pay all that for nothing, every run.
 *
 * So the answer is remembered in the cache folder (gpu-cache.c's, kind
 * "opencl-auto"), under a key made of everything that could change it
 * without ember noticing: the ICD loader's settings (OCL_ICD_VENDORS,
 * OCL_ICD_FILENAMES, POCL_DEVICES), every driver's .icd file (its name,
 * size, time and contents: a package upgrade rewrites it) and the GPU
 * device nodes present (/dev/dri/renderD*, /dev/nvidia*: a card added). A
 * run that enumerates the devices writes the answer; the next "auto" that
 * finds an answer of "no device auto would take" passes OpenCL over
 * without loading it, and says so. `ember devices` always asks afresh.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../kernels/gpu.h"
#include "opencl-impl.h"
#include "platform.h"
#include "text-impl.h"

#define AUTO_KIND "opencl-auto"

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Adds "name size mtime contents" of every *.icd file in `dir`, sorted. */
static void add_icd_files(struct ember_text *t, const char *dir)
{
    DIR *d = opendir(dir);
    char *names[64];
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 64;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".icd") == 0 && (names[n] = strdup(e->d_name)))
            n++;
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_string);
    for (int i = 0; i < n; i++) {
        char path[4096], contents[512] = "";
        struct stat st = {0};
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        stat(path, &st);
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(contents, 1, sizeof contents - 1, f) : 0;
        contents[got] = '\0';
        if (f)
            fclose(f);
        int64_t changed = ember_file_changed_ns(&st);
        ember_text_printf(t, "icd %s %lld %lld.%09lld %s\n", names[i], (long long)st.st_size,
                          (long long)(changed / 1000000000), (long long)(changed % 1000000000), contents);
        free(names[i]);
    }
}

/* Adds the names in `dir` that start with `prefix`, sorted. */
static void add_device_nodes(struct ember_text *t, const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    char *names[64];
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 64;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && (names[n] = strdup(e->d_name)))
            n++;
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_string);
    for (int i = 0; i < n; i++) {
        ember_text_printf(t, "node %s/%s\n", dir, names[i]);
        free(names[i]);
    }
}

/* The key for this machine's OpenCL as it is now; false when there is
 * nothing to remember by (a library named by EMBER_OPENCL_LIBRARY). */
static bool auto_key(struct ember_gpu_cache_key *key)
{
    const char *override = getenv("EMBER_OPENCL_LIBRARY");
    if (override && *override)
        return false;
    struct ember_text t = {0};
    const char *vendors = getenv("OCL_ICD_VENDORS"), *filenames = getenv("OCL_ICD_FILENAMES");
    const char *pocl = getenv("POCL_DEVICES");
    ember_text_printf(&t, "opencl-auto 1\nvendors %s\nfilenames %s\npocl %s\n", vendors ? vendors : "",
                      filenames ? filenames : "", pocl ? pocl : "");
    add_icd_files(&t, vendors && *vendors ? vendors : "/etc/OpenCL/vendors");
    add_device_nodes(&t, "/dev/dri", "renderD");
    add_device_nodes(&t, "/dev", "nvidia");
    const char *parts[1] = {t.s ? t.s : ""};
    ember_gpu_cache_key_make(parts, 1, key);
    free(t.s);
    return true;
}

bool opencl_auto_skip(char *why, size_t why_len)
{
    struct ember_gpu_cache_key key;
    if (!auto_key(&key))
        return false;
    char reason[1024];
    size_t size = 0;
    unsigned char *answer = ember_gpu_cache_get(AUTO_KIND, &key, &size, reason, sizeof reason);
    if (!answer)
        return false;
    bool skip = size == sizeof "preferred 0" - 1 && memcmp(answer, "preferred 0", size) == 0;
    free(answer);
    if (skip)
        snprintf(why, why_len,
                 "no OpenCL device auto would take on this machine (remembered from an earlier "
                 "run: OpenCL was not loaded; ember_devices_report asks afresh)");
    return skip;
}

void opencl_auto_remember(const struct opencl_runtime *rt, int count)
{
    struct ember_gpu_cache_key key;
    if (!auto_key(&key))
        return;
    int preferred = 0;
    for (int i = 0; rt && i < count; i++)
        preferred += !(rt->devices[i].type & CL_DEVICE_TYPE_CPU);
    char answer[32], why[1100];
    int n = snprintf(answer, sizeof answer, "preferred %d", preferred);
    /* a cache that cannot be written only costs the next run the driver's start */
    ember_gpu_cache_put(AUTO_KIND, &key, (const unsigned char *)answer, (size_t)n, why, sizeof why);
}
