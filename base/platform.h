/* SPDX-License-Identifier: MIT */
/*
 * base/platform.h — what ember asks of the operating system, in one place:
 * loading a library and telling which file was loaded, replacing a file
 * atomically, flushing to disk, making folders, the CPU count, the peak
 * memory and where a cache folder goes by default.
 *
 * base/platform-posix.c is the POSIX half (Linux, the BSDs, macOS); a
 * Windows port adds base/platform-windows.c beside it with the same
 * functions (docs/extending.md, "A new platform"). Nothing else in ember
 * calls dlopen, fsync, rename, mkdir, mkdtemp, sysconf or getrusage.
 *
 * Failures set errno (POSIX) and return false or NULL, so a caller words
 * the message as it did before: "cannot rename X: <strerror>".
 */
#ifndef EMBER_PLATFORM_H
#define EMBER_PLATFORM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * or the new one, never half of either. Both in one folder. */
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

/* The CPUs online now, at least 1. */
int ember_cpu_count(void);
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
