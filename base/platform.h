/* SPDX-License-Identifier: MIT */
/*
 * base/platform.h — what ember asks of the operating system, in one place:
 * libraries, files by UTF-8 path, replacing a file atomically, flushing to
 * disk, folders and temporary files, streams over memory, aligned memory,
 * running a program, the program's own file and arguments, the
 * environment, Ctrl-C, the CPU count, memory, and where a cache folder goes
 * by default.
 *
 * base/platform-posix.c is the POSIX half (Linux, the BSDs, macOS) and
 * base/platform-windows.c the Windows half, side by side with the same
 * functions (docs/extending.md, "A new platform"; docs/windows.md). Nothing
 * else in ember calls dlopen, fsync, rename, mkdir, mkdtemp, flock,
 * sigaction, sysconf or getrusage.
 *
 * Failures set errno (on Windows too) and return false or NULL (or -1), so
 * a caller words the message as it did before: "cannot rename X: ...".
 */
#ifndef EMBER_PLATFORM_H
#define EMBER_PLATFORM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* A shared library opened with its symbols private to it (RTLD_LOCAL), or
 * NULL with the loader's reason in why. */
void *ember_library_open(const char *name, char *why, size_t why_len);
/* A symbol of an opened library, NULL when it has none. */
void *ember_library_symbol(void *library, const char *name);
void ember_library_close(void *library);
/* The file the library holding `symbol` was loaded from, with links
 * resolved: the same library opened by two names gives one path. "?" when
 * the loader cannot tell. */
void ember_library_file(const void *symbol, char *out, size_t len);

/* Puts `from` in the place of `to` in one step: a reader sees the old file
 * or the new one, never half of either. Both in one folder. false with
 * errno EBUSY when `to` is open in another program and the system will
 * not replace an open file (Windows; POSIX replaces it all the same). */
bool ember_replace_file(const char *from, const char *to);
/* Waits until what was written through fd is on disk. */
bool ember_flush_to_disk(int fd);
/* The same for the folder holding path, so that a replace survives a
 * crash; a folder that cannot be opened is passed over quietly. */
void ember_flush_folder_of(const char *path);
/* Makes one folder (mode 0755 where modes exist): true when it was made
 * or already exists. */
bool ember_make_folder(const char *path);
/* Makes a new private folder from a template ending in XXXXXX, which it
 * fills in: the template, or NULL. */
char *ember_make_temporary_folder(char *template_path);

/* Files by their UTF-8 paths (wide-character calls underneath on
 * Windows), never inherited by a program ember starts, and binary on
 * Windows, where a text-mode read would turn a gzip file's CR LF into LF.
 * ember_open_file takes open()'s flags and mode; -1 and errno on failure.
 * ember_open_no_wait opens (O_RDONLY, or O_WRONLY | O_APPEND) without
 * waiting: a FIFO opens at once instead of waiting for the other end, so
 * that the caller can fstat what it got and refuse anything but a regular
 * file; ember_wait_on_reads then gives the descriptor ordinary reads that
 * wait. */
int ember_open_file(const char *path, int flags, int mode);
int ember_open_no_wait(const char *path, int flags);
bool ember_wait_on_reads(int fd);
FILE *ember_fopen(const char *path, const char *mode);
int ember_stat(const char *path, struct stat *info);
/* A file's last change, in nanoseconds since 1970 (whole seconds where
 * the system keeps no more). */
int64_t ember_file_changed_ns(const struct stat *info);
/* The absolute path of an existing file, links resolved: out, or NULL
 * and errno. */
char *ember_absolute_path(const char *path, char *out, size_t len);

/* A new file from a template ending in XXXXXX (filled in), open to write
 * and held: while this process keeps it open, ember_remove_if_abandoned
 * in another process leaves it alone. -1 and errno. */
int ember_make_temporary_file(char *template_path);
/* Removes folder/name if no running process holds it, as a writer that
 * crashed no longer does; a regular file only, never through a link. */
void ember_remove_if_abandoned(const char *folder, const char *name);

/* Calls handler(SIGINT) when the user presses Ctrl-C and handler(SIGTERM)
 * when the system asks the program to stop (SIGTERM; on Windows Ctrl-Break
 * or the console window closing). It runs in a signal handler, or on
 * Windows on a thread of the console's: it may set a flag and _exit, no
 * more. ember_stop_requests_default puts back what was there before. */
bool ember_on_stop_request(void (*handler)(int sig));
void ember_stop_requests_default(void);

/* Streams over memory: a reader of size bytes at data (which must outlive
 * it; fmemopen on POSIX), and a writer into a buffer that grows, which
 * ember_memory_writer_close hands over as *buf (to free) and *len
 * (open_memstream on POSIX). Windows has neither, so there both go through
 * a temporary file that is deleted when it is closed. */
FILE *ember_memory_reader(void *data, size_t size);
FILE *ember_memory_writer(char **buf, size_t *len);
bool ember_memory_writer_close(FILE *f, char **buf, size_t *len);

/* Memory aligned to `align` bytes (a power of two), freed with
 * ember_aligned_free: Windows' C runtime has no aligned_alloc, and its
 * _aligned_malloc's blocks cannot go to free(). */
void *ember_aligned_alloc(size_t align, size_t bytes);
void ember_aligned_free(void *p);

/* A whole open file mapped read-only into memory (mmap; on Windows a
 * file mapping), for files too large to copy such as a language model's
 * weights: pages are read from disk as they are touched, and the system
 * may drop them again under memory pressure. NULL and errno when the
 * file cannot be mapped (an empty file, a system without mappings); the
 * caller then reads it instead. The mapping outlives fd, which may be
 * closed at once; ember_unmap_file gives it back. */
const void *ember_map_file(int fd, size_t bytes);
void ember_unmap_file(const void *data, size_t bytes);
/* Tells the system that bytes [data, data + bytes) of a mapping will not
 * be read again soon, so that their pages need not stay in memory (they
 * are read from the file again if they are); the whole pages inside the
 * range only. Nothing where the system has no such advice. */
void ember_map_done(const void *data, size_t bytes);

/* Gives the file the permission bits `mode` (where the system has them). */
void ember_set_file_mode(int fd, int mode);

/* Calls fn on each existing path that `pattern` matches, in sorted order;
 * '*' may stand anywhere in the last component and, on POSIX, in any. */
void ember_each_match(const char *pattern, void (*fn)(const char *path, void *arg), void *arg);
/* The separator of a list of folders in PATH-like variables: ':', or ';'
 * on Windows, where ':' follows a drive letter. */
#ifdef _WIN32
/* what POSIX's sys/stat.h has and Windows' lacks: no FIFOs, sockets or
 * block devices in its file system */
#ifndef S_ISFIFO
#define S_ISFIFO(mode) 0
#endif
#ifndef S_ISSOCK
#define S_ISSOCK(mode) 0
#endif
#ifndef S_ISBLK
#define S_ISBLK(mode) 0
#endif
/* getc without taking the stream's lock each time, as POSIX's getc_unlocked */
#define getc_unlocked             _getc_nolock
#define EMBER_PATH_LIST_SEPARATOR ";"
#define EMBER_PROGRAM_SUFFIX      ".exe"
#else
#define EMBER_PATH_LIST_SEPARATOR ":"
#define EMBER_PROGRAM_SUFFIX      ""
#endif
/* True when path is a file this user may run. */
bool ember_is_program(const char *path);
/* The folder for temporary files ($TMPDIR or /tmp; on Windows %TEMP%),
 * with '/' between its parts and none at its end. */
void ember_temporary_folder(char *out, size_t len);
/* The running program's own file (for what was installed beside it), or
 * false. */
bool ember_program_file(char *out, size_t len);
/* Runs argv (argv[0] a path) with no input and its output and errors
 * captured into *out (a string to free; the first 4 MiB). Its exit
 * status, or 127 when it could not start. */
int ember_run_capture(char *const argv[], char **out);
/* The program's arguments in UTF-8, as ember reads every string: on
 * POSIX argv itself; on Windows, where main's argv is in the ANSI code
 * page and cannot hold most names, the wide-character command line
 * converted (and the console set to show UTF-8). Kept for the program's
 * life. */
char **ember_program_arguments(int argc, char **argv);
/* Sets an environment variable for this process and those it starts;
 * value NULL removes it. */
bool ember_set_env(const char *name, const char *value);
/* Replaces this process with a new run of the same program and argv, so
 * that what the environment now says applies from the start; returns
 * only when that cannot be done. */
void ember_run_again(char **argv);

/* The CPUs online now, at least 1. */
int ember_cpu_count(void);
/* Names the calling thread (at most 15 bytes are kept) so that `top -H`,
 * gdb and /proc/self/task/N/comm show whose it is; a no-op where the
 * system has no such name. */
void ember_name_this_thread(const char *name);
/* The most memory this process has held resident so far, in bytes; 0
 * when the system cannot tell. */
uint64_t ember_peak_memory_bytes(void);
/* The address space this process maps now, in bytes (0 if unknown), and
 * the limit on it (UINT64_MAX for none). */
uint64_t ember_address_space_used(void);
uint64_t ember_address_space_limit(void);

/* The folder ember's caches go under when the program and EMBER_CACHE_DIR
 * say nothing: $XDG_CACHE_HOME/ember, else ~/.cache/ember when the home
 * folder exists. False with the reason in why when there is none. *made_from
 * is where making the folders may start: never the home folder itself. */
bool ember_default_cache_folder(char *out, size_t len, size_t *made_from, char *why, size_t why_len);
#endif /* EMBER_PLATFORM_H */
