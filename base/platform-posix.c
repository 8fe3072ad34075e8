/* SPDX-License-Identifier: MIT */
/*
 * base/platform-posix.c — the operating system's services ember uses, on
 * POSIX systems (platform.h says what each one promises).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform.h"
#include "text-impl.h"

#define CAPTURE_KEEP ((size_t)4 << 20) /* of a program's output, for ember_run_capture */

void *ember_library_open(const char *name, char *why, size_t why_len)
{
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library && why_len) {
        const char *reason = dlerror();
        snprintf(why, why_len, "%s", reason ? reason : "the loader gave no reason");
    }
    return library;
}

void *ember_library_symbol(void *library, const char *name) { return dlsym(library, name); }

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

bool ember_replace_file(const char *from, const char *to) { return rename(from, to) == 0; }

bool ember_flush_to_disk(int fd) { return fsync(fd) == 0; }

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

bool ember_make_folder(const char *path) { return mkdir(path, 0755) == 0 || errno == EEXIST; }

char *ember_make_temporary_folder(char *template_path) { return mkdtemp(template_path); }

int ember_open_file(const char *path, int flags, int mode) { return open(path, flags | O_CLOEXEC, mode); }

int ember_open_no_wait(const char *path, int flags) { return open(path, flags | O_NONBLOCK | O_CLOEXEC); }

bool ember_wait_on_reads(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags != -1 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != -1;
}

FILE *ember_fopen(const char *path, const char *mode) { return fopen(path, mode); }

int ember_stat(const char *path, struct stat *info) { return stat(path, info); }

int64_t ember_file_changed_ns(const struct stat *info)
{
    return (int64_t)info->st_mtim.tv_sec * 1000000000 + (int64_t)info->st_mtim.tv_nsec;
}

char *ember_absolute_path(const char *path, char *out, size_t len)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return NULL;
    if (strlen(real) >= len) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    return strcpy(out, real);
}

/* The lock is advisory and only ember_remove_if_abandoned asks for it;
 * the kernel drops it when its holder exits, however it exits. */
int ember_make_temporary_file(char *template_path)
{
    int fd = mkstemp(template_path);
    if (fd >= 0) {
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        (void)flock(fd, LOCK_EX | LOCK_NB);
    }
    return fd;
}

void ember_remove_if_abandoned(const char *folder, const char *name)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", folder, name);
    if (n < 0 || (size_t)n >= sizeof path)
        return;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    struct stat info;
    if (fd >= 0 && fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
        unlink(path);
    if (fd >= 0)
        close(fd); /* drops the lock, after the unlink */
}

static void (*stop_handler)(int sig);
static struct sigaction before_int, before_term;
static bool stop_installed;

static void on_signal(int sig)
{
    if (stop_handler)
        stop_handler(sig);
}

bool ember_on_stop_request(void (*handler)(int sig))
{
    struct sigaction stop = {.sa_handler = on_signal};
    sigemptyset(&stop.sa_mask);
    stop_handler = handler;
    if (sigaction(SIGINT, &stop, &before_int) != 0)
        return false;
    if (sigaction(SIGTERM, &stop, &before_term) != 0) {
        sigaction(SIGINT, &before_int, NULL);
        return false;
    }
    stop_installed = true;
    return true;
}

void ember_stop_requests_default(void)
{
    if (!stop_installed)
        return;
    sigaction(SIGINT, &before_int, NULL);
    sigaction(SIGTERM, &before_term, NULL);
    stop_installed = false;
}

void *ember_aligned_alloc(size_t align, size_t bytes)
{
    return aligned_alloc(align, (bytes + align - 1) / align * align); /* C11 wants a multiple */
}

void ember_aligned_free(void *p) { free(p); }

const void *ember_map_file(int fd, size_t bytes)
{
    if (bytes == 0) {
        errno = EINVAL;
        return NULL;
    }
    void *p = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

void ember_unmap_file(const void *data, size_t bytes)
{
    if (data)
        munmap((void *)data, bytes);
}

void ember_map_done(const void *data, size_t bytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), first = ((uintptr_t)data + page - 1) / page * page,
              end = ((uintptr_t)data + bytes) / page * page;
    if (end > first)
        madvise((void *)first, end - first, MADV_DONTNEED);
}

FILE *ember_memory_reader(void *data, size_t size) { return fmemopen(data, size, "rb"); }

FILE *ember_memory_writer(char **buf, size_t *len) { return open_memstream(buf, len); }

bool ember_memory_writer_close(FILE *f, char **buf, size_t *len)
{
    (void)buf, (void)len; /* open_memstream publishes them on fclose */
    return fclose(f) == 0;
}

void ember_set_file_mode(int fd, int mode) { (void)fchmod(fd, (mode_t)mode); }

void ember_each_match(const char *pattern, void (*fn)(const char *path, void *arg), void *arg)
{
    glob_t found;
    if (glob(pattern, 0, NULL, &found) != 0)
        return;
    for (size_t i = 0; i < found.gl_pathc; i++)
        fn(found.gl_pathv[i], arg);
    globfree(&found);
}

bool ember_is_program(const char *path) { return access(path, X_OK) == 0; }

void ember_temporary_folder(char *out, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(out, len, "%s", dir && *dir ? dir : "/tmp");
}

bool ember_program_file(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    out[n > 0 ? n : 0] = '\0';
    return n > 0 && (size_t)n < len - 1;
}

int ember_run_capture(char *const argv[], char **out)
{
    *out = NULL;
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0)
        return 127;
    pid_t pid = fork();
    if (pid < 0) {
        close(pipe_fd[0]);
        close(pipe_fd[1]);
        return 127;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        if (in >= 0)
            dup2(in, STDIN_FILENO);
        dup2(pipe_fd[1], STDOUT_FILENO);
        dup2(pipe_fd[1], STDERR_FILENO);
        close(pipe_fd[0]);
        close(pipe_fd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(pipe_fd[1]);
    /* read to the end whatever the size, so that the child never blocks;
     * keep the first 4 MiB */
    struct ember_text text = {0};
    char chunk[4096];
    for (;;) {
        ssize_t n = read(pipe_fd[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (text.len < CAPTURE_KEEP)
            ember_text_add(&text, chunk,
                           text.len + (size_t)n > CAPTURE_KEEP ? CAPTURE_KEEP - text.len : (size_t)n);
    }
    close(pipe_fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            free(ember_text_take(&text));
            return 127;
        }
    *out = ember_text_take(&text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

char **ember_program_arguments(int argc, char **argv)
{
    (void)argc;
    return argv;
}

bool ember_set_env(const char *name, const char *value)
{
    return value ? setenv(name, value, 1) == 0 : unsetenv(name) == 0;
}

void ember_run_again(char **argv)
{
    execv("/proc/self/exe", argv); /* no /proc, or exec refused: the caller runs on */
}

int ember_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n < INT_MAX ? n : INT_MAX) : 1;
}

void ember_name_this_thread(const char *name)
{
#ifdef __linux__
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); /* the kernel keeps 15 bytes and a NUL */
#else
    (void)name;
#endif
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
            snprintf(why, why_len,
                     "no cache folder: the home folder %s does not exist (ember never creates "
                     "one; EMBER_CACHE_DIR or ember_set_cache_dir names another)",
                     home);
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
