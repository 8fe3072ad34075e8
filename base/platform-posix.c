/* SPDX-License-Identifier: MIT */
/*
 * base/platform-posix.c — the operating system's services ember uses, on
 * POSIX systems (platform.h says what each one promises).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"

void *ember_library_open(const char *name, char *why, size_t why_len)
{
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library && why_len) {
        const char *reason = dlerror();
        snprintf(why, why_len, "%s", reason ? reason : "the loader gave no reason");
    }
    return library;
}

void *ember_library_symbol(void *library, const char *name)
{
    return dlsym(library, name);
}

void ember_library_close(void *library)
{
    if (library)
        dlclose(library);
}

void ember_library_file(const void *symbol, char *out, size_t len)
{
    Dl_info info;
    char real[PATH_MAX];
    if (symbol && dladdr(symbol, &info) && info.dli_fname) {
        snprintf(out, len, "%.*s", (int)len - 1, realpath(info.dli_fname, real) ? real : info.dli_fname);
        return;
    }
    snprintf(out, len, "?");
}

bool ember_replace_file(const char *from, const char *to)
{
    return rename(from, to) == 0;
}

bool ember_flush_to_disk(int fd)
{
    return fsync(fd) == 0;
}

void ember_flush_folder_of(const char *path)
{
    char folder[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= sizeof folder)
        return;
    if (!slash)
        strcpy(folder, ".");
    else if (n == 0)
        strcpy(folder, "/");
    else
        memcpy(folder, path, n), folder[n] = '\0';
    int fd = open(folder, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

bool ember_make_folder(const char *path)
{
    return mkdir(path, 0755) == 0 || errno == EEXIST;
}

char *ember_make_temporary_folder(char *template_path)
{
    return mkdtemp(template_path);
}

int ember_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < INT_MAX ? n : INT_MAX) : 1;
}

uint64_t ember_peak_memory_bytes(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0 || ru.ru_maxrss < 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024; /* ru_maxrss is in KiB on Linux */
}

/* the first field of /proc/self/statm, in pages */
uint64_t ember_address_space_used(void)
{
    unsigned long long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%llu", &pages) != 1)
        pages = 0;
    if (f)
        fclose(f);
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t ember_address_space_limit(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return UINT64_MAX;
    return (uint64_t)limit.rlim_cur;
}

bool ember_default_cache_folder(char *out, size_t len, size_t *made_from, char *why, size_t why_len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    *made_from = 0;
    if (xdg && *xdg) {
        n = snprintf(out, len, "%s/ember", xdg);
    } else if (home && *home) {
        struct stat info;
        if (stat(home, &info) != 0 || !S_ISDIR(info.st_mode)) {
            snprintf(why, why_len, "no cache folder: the home folder %s does not exist (ember never creates "
                     "one; EMBER_CACHE_DIR or ember_set_cache_dir names another)", home);
            return false;
        }
        n = snprintf(out, len, "%s/.cache/ember", home);
        *made_from = strlen(home);
    } else {
        snprintf(why, why_len, "no cache folder: set EMBER_CACHE_DIR, XDG_CACHE_HOME or HOME");
        return false;
    }
    if (n < 0 || (size_t)n >= len) {
        snprintf(why, why_len, "the cache folder's path is too long");
        return false;
    }
    return true;
}
