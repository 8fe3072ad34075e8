/* SPDX-License-Identifier: MIT */
/*
 * base/platform-windows.c — the operating system's services ember uses,
 * on Windows (platform.h says what each one promises; platform-posix.c is
 * the other half).
 *
 * Paths: ember speaks UTF-8 everywhere, Windows' own calls take UTF-16, so
 * every path is converted here and the wide-character call made (_wopen,
 * _wfopen, _wstat64, LoadLibraryW, FindFirstFileW): a data folder named in
 * Cyrillic or Chinese opens on any Windows, whatever its code page.
 * Results go back as UTF-8 with '/' between folders, which Windows accepts
 * and the rest of ember splits on.
 *
 * Failures set errno, as on POSIX, so that messages read the same; a
 * Windows error code is mapped to the errno closest to what it means.
 */
/* windows.h first, on its own: the other Windows headers need its types */
#include <windows.h>

#include <shellapi.h> /* CommandLineToArgvW */

#include <direct.h>
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <psapi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

#include "platform.h"
#include "text-impl.h"

#define CAPTURE_KEEP ((size_t)4 << 20) /* of a program's output, for ember_run_capture */

#define WIDE_PATH_MAX 32768 /* what the wide-character calls take */

/* ------------------------------------------------------------ UTF-8 paths */

/* path (UTF-8) as UTF-16, in memory to free; NULL with errno */
static wchar_t *wide(const char *path)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
    if (n <= 0 || n > WIDE_PATH_MAX) {
        errno = n <= 0 ? EINVAL : ENAMETOOLONG;
        return NULL;
    }
    wchar_t *w = malloc((size_t)n * sizeof *w);
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    MultiByteToWideChar(CP_UTF8, 0, path, -1, w, n);
    return w;
}

/* w (UTF-16) into out as UTF-8 with '/' between folders; false when it
 * does not fit */
static bool narrow(const wchar_t *w, char *out, size_t len)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, len > INT_MAX ? INT_MAX : (int)len, NULL, NULL);
    if (n <= 0) {
        if (len)
            out[0] = '\0';
        errno = ENAMETOOLONG;
        return false;
    }
    for (char *p = out; *p; p++)
        if (*p == '\\')
            *p = '/';
    return true;
}

/* the errno closest to GetLastError()'s meaning */
static void set_errno_from_windows(void)
{
    switch (GetLastError()) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_MOD_NOT_FOUND: errno = ENOENT; break;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION: errno = EACCES; break;
    case ERROR_ALREADY_EXISTS:
    case ERROR_FILE_EXISTS: errno = EEXIST; break;
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY: errno = ENOMEM; break;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL: errno = ENOSPC; break;
    case ERROR_FILENAME_EXCED_RANGE: errno = ENAMETOOLONG; break;
    default: errno = EIO; break;
    }
}

/* ------------------------------------------------------------- libraries */

/* Puts the folder of the library at w (a path, backslashes) at the front of
 * this process's PATH, once: a DLL that loads its neighbours by name while it
 * runs, as NVRTC loads its nvrtc-builtins64_*.dll when it first compiles,
 * finds them there. (LOAD_WITH_ALTERED_SEARCH_PATH covers only what the DLL
 * links, at load time.) */
static void search_beside(const wchar_t *w)
{
    const wchar_t *slash = wcsrchr(w, L'\\');
    if (!slash || slash == w)
        return;
    size_t folder_len = (size_t)(slash - w);
    DWORD old_len = GetEnvironmentVariableW(L"PATH", NULL, 0);
    wchar_t *path = malloc((folder_len + 1 + old_len + 1) * sizeof *path);
    if (!path)
        return;
    memcpy(path, w, folder_len * sizeof *path);
    path[folder_len] = L'\0';
    DWORD got = old_len ? GetEnvironmentVariableW(L"PATH", path + folder_len + 1, old_len) : 0;
    /* already there, as the first entry or after a ';' */
    const wchar_t *old = path + folder_len + 1;
    bool there = false;
    for (const wchar_t *p = old; got && p && *p && !there; p = wcschr(p, L';') ? wcschr(p, L';') + 1 : NULL)
        there = _wcsnicmp(p, path, folder_len) == 0 && (p[folder_len] == L';' || p[folder_len] == L'\0');
    if (!there) {
        if (got)
            path[folder_len] = L';';
        SetEnvironmentVariableW(L"PATH", path);
    }
    free(path);
}

void *ember_library_open(const char *name, char *why, size_t why_len)
{
    wchar_t *w = wide(name);
    HMODULE library = NULL;
    if (w) {
        /* a bare name searches the program's folder, System32 and PATH (as
         * nvcuda.dll, nvrtc64_120_0.dll and OpenCL.dll are installed); a
         * path loads that file, with its own folder searched for the DLLs
         * it needs, as NVRTC needs its nvrtc-builtins DLL beside it */
        bool is_path = strchr(name, '/') || strchr(name, '\\');
        if (is_path)
            for (wchar_t *p = w; *p; p++)
                if (*p == L'/')
                    *p = L'\\';
        library = is_path ? LoadLibraryExW(w, NULL, LOAD_WITH_ALTERED_SEARCH_PATH) : LoadLibraryW(w);
        if (library && is_path)
            search_beside(w);
        free(w);
    }
    if (!library && why_len) {
        DWORD code = GetLastError();
        char message[256] = "";
        if (!FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0,
                            message, sizeof message, NULL))
            message[0] = '\0';
        size_t n = strlen(message);
        while (n && (message[n - 1] == '\n' || message[n - 1] == '\r' || message[n - 1] == '.'))
            message[--n] = '\0';
        snprintf(why, why_len, "%s: %s (Windows error %lu)", name, message[0] ? message : "cannot be loaded",
                 (unsigned long)code);
    }
    return library;
}

void *ember_library_symbol(void *library, const char *name)
{
    return library ? (void *)GetProcAddress((HMODULE)library, name) : NULL;
}

void ember_library_close(void *library)
{
    if (library)
        FreeLibrary((HMODULE)library);
}

void ember_library_file(const void *symbol, char *out, size_t len)
{
    HMODULE module = NULL;
    wchar_t path[WIDE_PATH_MAX];
    if (symbol &&
        GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                               GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                           (LPCWSTR)symbol, &module) &&
        GetModuleFileNameW(module, path, WIDE_PATH_MAX) > 0 && narrow(path, out, len))
        return;
    snprintf(out, len, "?");
}

/* ----------------------------------------------------------------- files */

/* Whether another handle holds `path` open without letting it be deleted,
 * which is what stops a replace: an open asking for DELETE access, sharing
 * everything, is then a sharing violation (under Wine too, where the
 * replace itself says only "access denied"). */
static bool held_open_elsewhere(const wchar_t *path)
{
    HANDLE probe = CreateFileW(path, DELETE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                               OPEN_EXISTING, 0, NULL);
    if (probe != INVALID_HANDLE_VALUE) {
        CloseHandle(probe);
        return false;
    }
    return GetLastError() == ERROR_SHARING_VIOLATION;
}

bool ember_replace_file(const char *from, const char *to)
{
    wchar_t *a = wide(from), *b = wide(to);
    /* rename() on Windows refuses an existing target; MoveFileEx replaces
     * it in one step, and WRITE_THROUGH returns only once that is on disk */
    bool ok = a && b && MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH);
    if (a && b && !ok) {
        DWORD code = GetLastError();
        bool refused = code == ERROR_ACCESS_DENIED || code == ERROR_SHARING_VIOLATION;
        if (refused && held_open_elsewhere(b))
            errno = EBUSY;
        else {
            SetLastError(code);
            set_errno_from_windows();
        }
    }
    free(a);
    free(b);
    return ok;
}

bool ember_flush_to_disk(int fd)
{
    HANDLE h = fd < 0 ? INVALID_HANDLE_VALUE : (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE) {
        errno = EBADF;
        return false;
    }
    if (!FlushFileBuffers(h)) {
        errno = EIO;
        return false;
    }
    return true;
}

void ember_flush_folder_of(const char *path)
{
    (void)path; /* NTFS makes a rename durable with the MoveFileEx above */
}

bool ember_make_folder(const char *path)
{
    wchar_t *w = wide(path);
    bool ok = w && (_wmkdir(w) == 0 || errno == EEXIST);
    free(w);
    return ok;
}

/* Six characters from the process id, a counter and the clock, tried until
 * one names nothing yet: what mkdtemp and mkstemp do on POSIX. */
static bool fill_template(char *template_path, unsigned attempt)
{
    size_t n = strlen(template_path);
    if (n < 6 || strcmp(template_path + n - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        return false;
    }
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    unsigned long long v =
        GetTickCount64() * 2654435761ull + GetCurrentProcessId() * 40503ull + attempt * 7919ull;
    for (int i = 0; i < 6; i++, v /= 36)
        template_path[n - 6 + i] = letters[v % 36];
    return true;
}

char *ember_make_temporary_folder(char *template_path)
{
    char *keep = strdup(template_path);
    if (!keep) {
        errno = ENOMEM;
        return NULL;
    }
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        strcpy(template_path, keep);
        if (!fill_template(template_path, attempt))
            break;
        wchar_t *w = wide(template_path);
        bool made = w && _wmkdir(w) == 0;
        free(w);
        if (made) {
            free(keep);
            return template_path;
        }
        if (errno != EEXIST)
            break;
    }
    free(keep);
    return NULL;
}

int ember_open_file(const char *path, int flags, int mode)
{
    wchar_t *w = wide(path);
    int fd = w ? _wopen(w, flags | _O_BINARY | _O_NOINHERIT, mode) : -1;
    free(w);
    return fd;
}

/* Windows has no FIFOs in its file system; named pipes live apart, under
 * \\.\pipe\, and opening one does not wait. */
int ember_open_no_wait(const char *path, int flags) { return ember_open_file(path, flags, 0); }

bool ember_wait_on_reads(int fd)
{
    (void)fd;
    return true;
}

FILE *ember_fopen(const char *path, const char *mode)
{
    wchar_t *w = wide(path), wmode[16];
    size_t n = 0;
    for (; mode[n] && n < 12; n++)
        wmode[n] = (wchar_t)mode[n];
    /* binary unless the mode says (the C runtime refuses a 'b' twice), and
     * never inherited ('N') */
    if (!strchr(mode, 'b') && !strchr(mode, 't'))
        wmode[n++] = L'b';
    wmode[n++] = L'N';
    wmode[n] = L'\0';
    FILE *f = w ? _wfopen(w, wmode) : NULL;
    free(w);
    return f;
}

int ember_stat(const char *path, struct stat *info)
{
    wchar_t *w = wide(path);
    struct _stat64 s;
    int rc = w ? _wstat64(w, &s) : -1;
    free(w);
    if (rc == 0) {
        memset(info, 0, sizeof *info);
        info->st_mode = s.st_mode;
        info->st_size = s.st_size; /* 64 bits: cmake/windows.cmake sets _FILE_OFFSET_BITS */
        info->st_mtime = (time_t)s.st_mtime;
        info->st_dev = s.st_dev;
        info->st_ino = s.st_ino;
    }
    return rc;
}

int64_t ember_file_changed_ns(const struct stat *info) { return (int64_t)info->st_mtime * 1000000000; }

char *ember_absolute_path(const char *path, char *out, size_t len)
{
    wchar_t *w = wide(path), full[WIDE_PATH_MAX];
    DWORD n = w ? GetFullPathNameW(w, WIDE_PATH_MAX, full, NULL) : 0;
    free(w);
    if (n == 0 || n >= WIDE_PATH_MAX || GetFileAttributesW(full) == INVALID_FILE_ATTRIBUTES) {
        errno = ENOENT;
        return NULL;
    }
    return narrow(full, out, len) ? out : NULL;
}

/* A file open in a process cannot be deleted (the C runtime opens without
 * FILE_SHARE_DELETE), so the open file itself is the hold. */
int ember_make_temporary_file(char *template_path)
{
    char *keep = strdup(template_path);
    if (!keep) {
        errno = ENOMEM;
        return -1;
    }
    int fd = -1;
    for (unsigned attempt = 0; attempt < 100 && fd < 0; attempt++) {
        strcpy(template_path, keep);
        if (!fill_template(template_path, attempt))
            break;
        fd = ember_open_file(template_path, O_RDWR | O_CREAT | O_EXCL, _S_IREAD | _S_IWRITE);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    free(keep);
    return fd;
}

void ember_remove_if_abandoned(const char *folder, const char *name)
{
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s", folder, name);
    wchar_t *w = n > 0 && (size_t)n < sizeof path ? wide(path) : NULL;
    DWORD attributes = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    /* a regular file, not a link (a reparse point) or a folder; DeleteFile
     * fails on one a live writer holds open */
    if (attributes != INVALID_FILE_ATTRIBUTES &&
        !(attributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT)))
        DeleteFileW(w);
    free(w);
}

void *ember_aligned_alloc(size_t align, size_t bytes) { return _aligned_malloc(bytes ? bytes : 1, align); }

void ember_aligned_free(void *p) { _aligned_free(p); }

/* a view of a file mapping; the view keeps the mapping object alive after
 * its handle is closed, as the file's handle may be too */
const void *ember_map_file(int fd, size_t bytes)
{
    HANDLE file = (HANDLE)_get_osfhandle(fd);
    if (bytes == 0 || file == INVALID_HANDLE_VALUE) {
        errno = EINVAL;
        return NULL;
    }
    HANDLE mapping = CreateFileMappingW(file, NULL, PAGE_READONLY, 0, 0, NULL);
    if (!mapping) {
        errno = EIO;
        return NULL;
    }
    const void *view = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, bytes);
    CloseHandle(mapping);
    if (!view)
        errno = ENOMEM;
    return view;
}

void ember_unmap_file(const void *data, size_t bytes)
{
    (void)bytes;
    if (data)
        UnmapViewOfFile(data);
}

/* Windows trims a mapping's pages from the working set as it needs: no advice to give */
void ember_map_done(const void *data, size_t bytes)
{
    (void)data;
    (void)bytes;
}

/* a new file in %TEMP% that Windows deletes when it is closed */
static FILE *temporary_stream(void)
{
    char path[4096];
    ember_temporary_folder(path, sizeof path - 32);
    strcat(path, "/ember-stream-XXXXXX");
    char *keep = strdup(path);
    int fd = -1;
    for (unsigned attempt = 0; keep && attempt < 100 && fd < 0; attempt++) {
        strcpy(path, keep);
        if (!fill_template(path, attempt))
            break;
        fd = ember_open_file(path, O_RDWR | O_CREAT | O_EXCL | _O_TEMPORARY | _O_SHORT_LIVED,
                             _S_IREAD | _S_IWRITE);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    free(keep);
    FILE *f = fd >= 0 ? _fdopen(fd, "w+b") : NULL;
    if (fd >= 0 && !f)
        _close(fd);
    return f;
}

FILE *ember_memory_reader(void *data, size_t size)
{
    FILE *f = temporary_stream();
    if (f && (fwrite(data, 1, size, f) != size || fseek(f, 0, SEEK_SET) != 0)) {
        fclose(f);
        return NULL;
    }
    return f;
}

FILE *ember_memory_writer(char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    return temporary_stream();
}

bool ember_memory_writer_close(FILE *f, char **buf, size_t *len)
{
    bool ok = fflush(f) == 0 && _fseeki64(f, 0, SEEK_END) == 0;
    long long size = ok ? _ftelli64(f) : -1;
    ok = ok && size >= 0 && (size_t)size == (unsigned long long)size && fseek(f, 0, SEEK_SET) == 0;
    char *data = ok ? malloc((size_t)size + 1) : NULL;
    ok = data && fread(data, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok) {
        free(data);
        return false;
    }
    data[size] = '\0'; /* as open_memstream leaves it */
    *buf = data;
    *len = (size_t)size;
    return true;
}

void ember_set_file_mode(int fd, int mode)
{
    (void)fd, (void)mode; /* Windows keeps access in ACLs, which the new file inherits from its folder */
}

/* ------------------------------------------------------- finding things */

void ember_each_match(const char *pattern, void (*fn)(const char *path, void *arg), void *arg)
{
    const char *slash = strrchr(pattern, '/'), *backslash = strrchr(pattern, '\\');
    if (backslash > slash)
        slash = backslash;
    size_t folder_len = slash ? (size_t)(slash - pattern) : 0;
    wchar_t *w = wide(pattern);
    if (!w)
        return;
    WIN32_FIND_DATAW found;
    HANDLE h = FindFirstFileExW(w, FindExInfoBasic, &found, FindExSearchNameMatch, NULL, 0);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return;
    /* FindFirstFile gives names in the file system's order; sorted, as glob does */
    char **names = NULL;
    size_t count = 0, cap = 0;
    do {
        if (wcscmp(found.cFileName, L".") == 0 || wcscmp(found.cFileName, L"..") == 0)
            continue;
        char name[MAX_PATH * 4], path[4096];
        if (!narrow(found.cFileName, name, sizeof name))
            continue;
        int n = snprintf(path, sizeof path, "%.*s%s%s", (int)folder_len, pattern, slash ? "/" : "", name);
        if (n < 0 || (size_t)n >= sizeof path)
            continue;
        if (count == cap) {
            size_t grown = cap ? cap * 2 : 16;
            char **bigger = realloc(names, grown * sizeof *names);
            if (!bigger)
                break;
            names = bigger;
            cap = grown;
        }
        if ((names[count] = strdup(path)))
            count++;
    } while (FindNextFileW(h, &found));
    FindClose(h);
    for (size_t i = 1; i < count; i++) /* a few toolkit folders: insertion sort */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < count; i++) {
        fn(names[i], arg);
        free(names[i]);
    }
    free(names);
}

bool ember_is_program(const char *path)
{
    struct stat info;
    return ember_stat(path, &info) == 0 && (info.st_mode & _S_IFREG);
}

void ember_temporary_folder(char *out, size_t len)
{
    wchar_t w[MAX_PATH + 2];
    DWORD n = GetTempPathW(MAX_PATH + 2, w);
    if (n == 0 || n > MAX_PATH + 1 || !narrow(w, out, len)) {
        snprintf(out, len, ".");
        return;
    }
    size_t end = strlen(out);
    if (end > 1 && out[end - 1] == '/')
        out[end - 1] = '\0';
}

bool ember_program_file(char *out, size_t len)
{
    wchar_t w[WIDE_PATH_MAX];
    DWORD n = GetModuleFileNameW(NULL, w, WIDE_PATH_MAX);
    return n > 0 && n < WIDE_PATH_MAX && narrow(w, out, len);
}

/* ------------------------------------------------------------- programs */

/* argv as one command line, each argument quoted as the C runtime's own
 * parser reads it back (backslashes doubled only before a quote) */
static wchar_t *command_line(char *const argv[])
{
    size_t cap = 1;
    for (int i = 0; argv[i]; i++)
        cap += 2 * strlen(argv[i]) + 3;
    char *line = malloc(cap), *p = line;
    if (!line)
        return NULL;
    for (int i = 0; argv[i]; i++) {
        if (i)
            *p++ = ' ';
        *p++ = '"';
        size_t slashes = 0;
        for (const char *c = argv[i]; *c; c++) {
            if (*c == '\\') {
                slashes++;
            } else {
                if (*c == '"')
                    for (slashes = slashes * 2 + 1; slashes; slashes--)
                        *p++ = '\\';
                slashes = 0;
            }
            *p++ = *c;
        }
        for (; slashes; slashes--)
            *p++ = '\\';
        *p++ = '"';
    }
    *p = '\0';
    wchar_t *w = wide(line);
    free(line);
    return w;
}

int ember_run_capture(char *const argv[], char **out)
{
    *out = NULL;
    SECURITY_ATTRIBUTES inherit = {sizeof inherit, NULL, TRUE};
    HANDLE read_end, write_end;
    if (!CreatePipe(&read_end, &write_end, &inherit, 0))
        return 127;
    SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
    HANDLE nul = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit,
                             OPEN_EXISTING, 0, NULL);
    STARTUPINFOW start = {.cb = sizeof start, .dwFlags = STARTF_USESTDHANDLES};
    start.hStdInput = nul;
    start.hStdOutput = write_end;
    start.hStdError = write_end;
    PROCESS_INFORMATION child;
    wchar_t *program = wide(argv[0]), *line = command_line(argv);
    BOOL started =
        program && line &&
        CreateProcessW(program, line, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, &start, &child);
    free(program);
    free(line);
    CloseHandle(write_end);
    if (nul != INVALID_HANDLE_VALUE)
        CloseHandle(nul);
    if (!started) {
        CloseHandle(read_end);
        return 127;
    }
    /* read to the end whatever the size, so that the child never blocks;
     * keep the first 4 MiB */
    struct ember_text text = {0};
    char chunk[4096];
    DWORD got;
    while (ReadFile(read_end, chunk, sizeof chunk, &got, NULL) && got > 0)
        if (text.len < CAPTURE_KEEP)
            ember_text_add(&text, chunk, text.len + got > CAPTURE_KEEP ? CAPTURE_KEEP - text.len : got);
    CloseHandle(read_end);
    WaitForSingleObject(child.hProcess, INFINITE);
    DWORD status = 127;
    GetExitCodeProcess(child.hProcess, &status);
    CloseHandle(child.hProcess);
    CloseHandle(child.hThread);
    *out = ember_text_take(&text);
    return (int)status;
}

char **ember_program_arguments(int argc, char **argv)
{
    int n = 0;
    wchar_t **wargv = CommandLineToArgvW(GetCommandLineW(), &n);
    if (!wargv || n != argc)
        return argv; /* what the C runtime parsed is the better guess */
    char **utf8 = calloc((size_t)n + 1, sizeof *utf8);
    for (int i = 0; utf8 && i < n; i++) {
        int len = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL, NULL);
        if (len <= 0 || !(utf8[i] = malloc((size_t)len))) {
            LocalFree(wargv);
            return argv;
        }
        WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, utf8[i], len, NULL, NULL);
    }
    LocalFree(wargv);
    if (!utf8)
        return argv;
    SetConsoleOutputCP(CP_UTF8); /* what ember prints is UTF-8 */
    return utf8;
}

bool ember_set_env(const char *name, const char *value)
{
    return _putenv_s(name, value ? value : "") == 0; /* "" removes it */
}

void ember_run_again(char **argv)
{
    (void)
        argv; /* nothing calls for it: Windows has no address-space limit (ulimit -v) to start again under */
}

/* ------------------------------------------------------------ stopping */

static void (*stop_handler)(int sig);

/* on a thread the console starts for the event: the handler sets its flag
 * and ember finishes the step; TRUE tells Windows not to end the process.
 * Closing the window gives the program 5 seconds before Windows ends it. */
static BOOL WINAPI on_console_event(DWORD event)
{
    if (!stop_handler)
        return FALSE;
    stop_handler(event == CTRL_C_EVENT ? SIGINT : SIGTERM);
    return TRUE;
}

bool ember_on_stop_request(void (*handler)(int sig))
{
    stop_handler = handler;
    return SetConsoleCtrlHandler(on_console_event, TRUE) != 0;
}

/* Windows keeps its own list of handlers: taking one off that is not on it
 * only returns FALSE, so there is nothing to remember here */
void ember_stop_requests_default(void) { SetConsoleCtrlHandler(on_console_event, FALSE); }

/* --------------------------------------------------------------- machine */

int ember_cpu_count(void)
{
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
    return n > 0 ? (int)(n < INT_MAX ? n : INT_MAX) : 1;
}

/* SetThreadDescription is Windows 10's; older systems have no thread names
 * a debugger reads without an exception handler, so the name is dropped */
void ember_name_this_thread(const char *name) { (void)name; }

uint64_t ember_peak_memory_bytes(void)
{
    PROCESS_MEMORY_COUNTERS counters;
    if (!GetProcessMemoryInfo(GetCurrentProcess(), &counters, sizeof counters))
        return 0;
    return (uint64_t)counters.PeakWorkingSetSize;
}

uint64_t ember_address_space_used(void)
{
    /* every region reserved or committed, as Linux's VmSize counts them */
    uint64_t used = 0;
    MEMORY_BASIC_INFORMATION region;
    for (const char *at = NULL; VirtualQuery(at, &region, sizeof region) == sizeof region;) {
        if (region.State != MEM_FREE)
            used += region.RegionSize;
        const char *next = (const char *)region.BaseAddress + region.RegionSize;
        if (next <= at)
            break;
        at = next;
    }
    return used;
}

uint64_t ember_address_space_limit(void)
{
    return UINT64_MAX; /* no ulimit -v; a job object's limit shows as failed allocations */
}

/* %LOCALAPPDATA%\ember: the per-user, per-machine folder Windows programs
 * keep caches in (not roamed between machines, as compiled kernels must not
 * be). */
bool ember_default_cache_folder(char *out, size_t len, size_t *made_from, char *why, size_t why_len)
{
    const wchar_t *local = _wgetenv(L"LOCALAPPDATA");
    char folder[4096];
    *made_from = 0;
    if (!local || !*local || !narrow(local, folder, sizeof folder)) {
        snprintf(why, why_len, "no cache folder: set EMBER_CACHE_DIR or LOCALAPPDATA");
        return false;
    }
    struct stat info;
    if (ember_stat(folder, &info) != 0 || !(info.st_mode & _S_IFDIR)) {
        snprintf(why, why_len,
                 "no cache folder: %%LOCALAPPDATA%% (%s) does not exist (EMBER_CACHE_DIR or "
                 "ember_set_cache_dir names another)",
                 folder);
        return false;
    }
    int n = snprintf(out, len, "%s/ember", folder);
    if (n < 0 || (size_t)n >= len) {
        snprintf(why, why_len, "the cache folder's path is too long");
        return false;
    }
    *made_from = strlen(folder);
    return true;
}
