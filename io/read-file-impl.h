/* SPDX-License-Identifier: MIT */
/*
 * io/read-file-impl.h — opening a file to read only if it is a regular file
 * (base/files.c), the failure recorded in ctx ("cannot open PATH: ...",
 * "PATH is a FIFO, not a regular file"): a descriptor or stream with *info
 * filled, or -1 or NULL (read-file.c).
 */
#ifndef EMBER_READ_FILE_IMPL_H
#define EMBER_READ_FILE_IMPL_H
#include <stdio.h>
#include <sys/stat.h>

#include "engine.h"

int ember_open_regular(ember_ctx *ctx, const char *path, struct stat *info);
FILE *ember_fopen_regular(ember_ctx *ctx, const char *path, struct stat *info);
#endif /* EMBER_READ_FILE_IMPL_H */
