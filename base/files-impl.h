/* SPDX-License-Identifier: MIT */
/*
 * base/files-impl.h — opening a file ember is asked to read, and the cache
 * folder (files.c). The engine's wrappers that record a failure in a
 * context are io/read-file.c's.
 */
#ifndef EMBER_FILES_IMPL_H
#define EMBER_FILES_IMPL_H
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Opens a file to read only if it is a regular file: a FIFO, a device or
 * a folder is refused before anything could block on it. A descriptor,
 * with *info filled; or -1 with the reason in why ("cannot open PATH:
 * ...", "PATH is a FIFO, not a regular file: ..."). */
int ember_open_regular_file(const char *path, struct stat *info, char *why, size_t why_len);

/* The cache folder of `kind` ("cuda", "opencl", "datasets"), created if
 * need be: <ember_set_cache_dir's folder>/<kind>, else
 * $EMBER_CACHE_DIR/<kind>, else $XDG_CACHE_HOME/ember/<kind>, else
 * ~/.cache/ember/<kind> when the home folder exists. False, with the reason
 * in why, when there is none. */
bool ember_cache_folder(const char *kind, char *out, size_t len, char *why, size_t why_len);
/* Writes `size` bytes to path whole or not at all: into a temporary file
 * beside it (path.tmp.XXXXXX), flushed to disk and renamed over it. 0, or
 * the errno of what failed; with EBUSY (Windows replaces no file another
 * program has open) the new contents are whole in the file named in
 * kept[len], which the message should name. */
int ember_write_file_whole(const char *path, const void *data, size_t size, char *kept, size_t len);

#endif /* EMBER_FILES_IMPL_H */
