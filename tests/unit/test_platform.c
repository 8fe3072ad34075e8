/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_platform.c — base/platform.h on this system: a library opened
 * and named by the file it came from, a file replaced in one step, folders
 * made, the CPU count, the peak memory, and where the cache goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files-impl.h"
#include "platform.h"
#include "test-util.h"

static bool is_folder(const char *path)
{
    struct stat info;
    return stat(path, &info) == 0 && S_ISDIR(info.st_mode);
}

static void read_back(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(out, 1, len - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
}

/* a library every such system has, and one of its functions: zlib, which
 * ember links on Linux; on Windows, where zlib is linked in, kernel32 */
#ifdef _WIN32
#define LIBRARY      "kernel32.dll"
#define LIBRARY_FILE "kernel32"
#define FUNCTION     "GetTickCount64"
#define MISSING      "ember-no-such-library.dll"
#else
#define LIBRARY      "libz.so.1"
#define LIBRARY_FILE "libz"
#define FUNCTION     "zlibVersion"
#define MISSING      "libember-no-such-library.so"
#endif

static bool is_absolute(const char *path)
{
    return path[0] == '/' || (path[0] && path[1] == ':' && path[2] == '/'); /* C:/ on Windows */
}

static void check_library(void)
{
    char why[512] = "", file[4096], again[4096];
    void *lib = ember_library_open(LIBRARY, why, sizeof why);
    CHECK(lib, LIBRARY " would not open: %s", why);
    if (!lib)
        return;
    void *function = ember_library_symbol(lib, FUNCTION);
    CHECK(function, LIBRARY " has no " FUNCTION);
    CHECK(!ember_library_symbol(lib, "ember_no_such_function"), "a symbol no library has was found");
    ember_library_file(function, file, sizeof file);
    char lower[4096];
    size_t n = 0;
    for (; file[n] && n + 1 < sizeof lower; n++)
        lower[n] = (char)(file[n] >= 'A' && file[n] <= 'Z' ? file[n] - 'A' + 'a' : file[n]);
    lower[n] = '\0';
    FILE *readable = fopen(file, "rb");
    CHECK(is_absolute(file) && strstr(lower, LIBRARY_FILE) && readable,
          FUNCTION "'s library is said to be %s, not a readable " LIBRARY_FILE " file", file);
    if (readable)
        fclose(readable);
    /* the same file under its own name: one path, so a second name is known as a copy */
    void *by_path = ember_library_open(file, why, sizeof why);
    CHECK(by_path, "%s would not open by its path: %s", file, why);
    ember_library_file(by_path ? ember_library_symbol(by_path, FUNCTION) : NULL, again, sizeof again);
    CHECK(strcmp(file, again) == 0, "one library named by two files: %s and %s", file, again);
    ember_library_close(by_path);
    ember_library_close(lib);
    ember_library_file(NULL, file, sizeof file);
    CHECK(strcmp(file, "?") == 0, "no symbol gives %s, not ?", file);

    why[0] = '\0';
    CHECK(!ember_library_open(MISSING, why, sizeof why), "a missing library opened");
    CHECK(strstr(why, MISSING), "the loader's reason does not name the library: %s", why);
}

static void check_files(const char *dir)
{
    char old_path[4096], new_path[4096], text[64];
    snprintf(old_path, sizeof old_path, "%s", test_write_file(dir, "kept", "old", 3));
    snprintf(new_path, sizeof new_path, "%s", test_write_file(dir, "kept.tmp", "new", 3));
    CHECK(ember_replace_file(new_path, old_path), "replacing %s: %s", old_path, strerror(errno));
    read_back(old_path, text, sizeof text);
    CHECK(strcmp(text, "new") == 0, "after the replace %s holds \"%s\", not \"new\"", old_path, text);
    FILE *gone = fopen(new_path, "rb");
    CHECK(!gone, "the replacing file %s is still there", new_path);
    if (gone)
        fclose(gone);
    errno = 0;
    CHECK(!ember_replace_file(new_path, old_path) && errno == ENOENT,
          "replacing with a file that is gone did not fail with ENOENT (errno %d)", errno);

    FILE *f = fopen(old_path, "ab");
    CHECK(f && fputs("er", f) >= 0 && fflush(f) == 0 && ember_flush_to_disk(fileno(f)), "flushing %s: %s",
          old_path, strerror(errno));
    if (f)
        fclose(f);
    errno = 0;
    CHECK(!ember_flush_to_disk(-1) && errno == EBADF, "flushing no file did not fail with EBADF");
    ember_flush_folder_of(old_path); /* best effort: it must simply return */
    ember_flush_folder_of("no-slash-here");

    /* a target another program holds open (an fopen shares reading and
     * writing, not deleting): Windows replaces no such file, which the
     * replace says with EBUSY and leaves unchanged; POSIX replaces it */
    snprintf(new_path, sizeof new_path, "%s", test_write_file(dir, "kept.tmp", "held", 4));
    FILE *held = fopen(old_path, "rb");
    CHECK(held, "%s cannot be opened: %s", old_path, strerror(errno));
    errno = 0;
    bool replaced = ember_replace_file(new_path, old_path);
#ifdef _WIN32
    CHECK(!replaced && errno == EBUSY, "replacing %s while it is open: %s, errno %d, not EBUSY", old_path,
          replaced ? "replaced" : "refused", errno);
    read_back(old_path, text, sizeof text);
    CHECK(strcmp(text, "newer") == 0, "the refused replace left %s holding \"%s\"", old_path, text);
#else
    CHECK(replaced, "replacing %s while it is open: %s", old_path, strerror(errno));
#endif
    if (held)
        fclose(held);

    char folder[4200], deeper[4200];
    snprintf(folder, sizeof folder, "%s/made", dir);
    CHECK(ember_make_folder(folder) && is_folder(folder), "%s was not made", folder);
    CHECK(ember_make_folder(folder), "a folder that exists is not accepted as made");
    snprintf(deeper, sizeof deeper, "%s/missing/below", dir);
    errno = 0;
    CHECK(!ember_make_folder(deeper) && errno == ENOENT, "a folder under a missing one was made (errno %d)",
          errno);

    char first[4200], second[4200];
    snprintf(first, sizeof first, "%s/temp-XXXXXX", dir);
    snprintf(second, sizeof second, "%s/temp-XXXXXX", dir);
    CHECK(ember_make_temporary_folder(first) && ember_make_temporary_folder(second), "no temporary folder");
    CHECK(is_folder(first) && is_folder(second) && strcmp(first, second) != 0,
          "two temporary folders are not two folders: %s and %s", first, second);
}

static void check_machine(void)
{
    int cpus = ember_cpu_count();
    CHECK(cpus >= 1 && cpus <= 1 << 16, "%d CPUs", cpus);

    uint64_t before = ember_peak_memory_bytes(), mapped_before = ember_address_space_used();
    size_t bytes = 64u << 20;
    char *block = malloc(bytes);
    CHECK(block, "no 64 MiB");
    if (block) {
        memset(block, 1, bytes); /* resident only once touched */
        uint64_t after = ember_peak_memory_bytes(), mapped = ember_address_space_used();
        CHECK(after >= before && after >= bytes, "the peak memory is %llu bytes after touching 64 MiB",
              (unsigned long long)after);
        CHECK(mapped >= mapped_before + bytes,
              "the address space in use went from %llu to %llu bytes over 64 MiB",
              (unsigned long long)mapped_before, (unsigned long long)mapped);
        free(block);
    }
    uint64_t used = ember_address_space_used(), limit = ember_address_space_limit();
    CHECK(limit == UINT64_MAX || limit >= used, "a limit of %llu under the %llu bytes in use",
          (unsigned long long)limit, (unsigned long long)used);
}

#ifdef _WIN32
/* %LOCALAPPDATA%\ember, made from below %LOCALAPPDATA% */
static void check_cache(const char *dir)
{
    char out[4200], why[512], home[4200];
    size_t made_from = 99;
    ember_set_env("LOCALAPPDATA", dir);
    snprintf(home, sizeof home, "%s/ember", dir);
    CHECK(ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strcmp(out, home) == 0 && made_from == strlen(dir),
          "LOCALAPPDATA=%s gives %s from %zu (%s)", dir, out, made_from, why);
    ember_set_env("LOCALAPPDATA", "C:/no/such/folder");
    CHECK(!ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strstr(why, "does not exist"),
          "a missing %%LOCALAPPDATA%% gives: %s", why);
    ember_set_env("LOCALAPPDATA", NULL);
    CHECK(!ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strstr(why, "set EMBER_CACHE_DIR or LOCALAPPDATA"),
          "no LOCALAPPDATA gives: %s", why);
    ember_set_env("LOCALAPPDATA", dir);
    ember_set_env("EMBER_CACHE_DIR", NULL);
    CHECK(ember_cache_folder("datasets", out, sizeof out, why, sizeof why), "no cache folder: %s", why);
    snprintf(home, sizeof home, "%s/ember/datasets", dir);
    CHECK(strcmp(out, home) == 0 && is_folder(home), "the datasets cache is %s, not a folder %s", out, home);
}
#else
static void check_cache(const char *dir)
{
    char out[4200], why[512], home[4200];
    size_t made_from = 99;
    ember_set_env("XDG_CACHE_HOME", "/xdg");
    CHECK(ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strcmp(out, "/xdg/ember") == 0 && made_from == 0,
          "XDG_CACHE_HOME=/xdg gives %s", out);
    ember_set_env("XDG_CACHE_HOME", NULL);
    ember_set_env("HOME", dir);
    snprintf(home, sizeof home, "%s/.cache/ember", dir);
    CHECK(ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strcmp(out, home) == 0 && made_from == strlen(dir),
          "HOME=%s gives %s from %zu", dir, out, made_from);
    ember_set_env("HOME", "/no/such/home");
    CHECK(!ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strstr(why, "the home folder /no/such/home does not exist"),
          "a missing home folder gives: %s", why);
    ember_set_env("HOME", NULL);
    CHECK(!ember_default_cache_folder(out, sizeof out, &made_from, why, sizeof why) &&
              strstr(why, "set EMBER_CACHE_DIR, XDG_CACHE_HOME or HOME"),
          "no home at all gives: %s", why);
    ember_set_env("XDG_CACHE_HOME", "/a/long/enough/path");
    CHECK(!ember_default_cache_folder(out, 8, &made_from, why, sizeof why) && strstr(why, "too long"),
          "an 8-byte buffer held a cache folder: %s", why);
    ember_set_env("XDG_CACHE_HOME", NULL);

    /* the cache folder of a kind, made under HOME's .cache, never the home folder itself */
    ember_set_env("HOME", dir);
    ember_set_env("EMBER_CACHE_DIR", NULL);
    CHECK(ember_cache_folder("datasets", out, sizeof out, why, sizeof why), "no cache folder: %s", why);
    snprintf(home, sizeof home, "%s/.cache/ember/datasets", dir);
    CHECK(strcmp(out, home) == 0 && is_folder(home), "the datasets cache is %s, not a folder %s", out, home);
}
#endif

int main(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", test_tmpdir());
    check_library();
    check_files(dir);
    check_machine();
    check_cache(dir);
    test_cleanup_dir(dir);
    return test_finish("test_platform");
}
