/* SPDX-License-Identifier: MIT */
/*
 * tests/common/test-util.h — the little the tests share: checks that count
 * failures, a quiet context, a scratch folder.
 *
 * A test program runs all its checks, prints each failure with file and
 * line, and exits non-zero if any failed (77 when it skipped: CTest's code).
 */
#ifndef EMBER_TEST_UTIL_H
#define EMBER_TEST_UTIL_H

#include <stdio.h>

#include "ember.h"

extern int test_failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            test_failures++;                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                         \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fputc('\n', stderr);                                                                             \
        }                                                                                                    \
    } while (0)

/* the status is EMBER_OK, else the failure and the context's message */
#define CHECK_OK(ctx, expr)                                                                                  \
    do {                                                                                                     \
        ember_status st_ = (expr);                                                                           \
        CHECK(st_ == EMBER_OK, "%s: %s", ember_status_str(st_), ember_last_error(ctx));                      \
    } while (0)

#define TEST_SKIP 77

/* "name: N failures" or "name: ok"; the exit status for main */
int test_finish(const char *name);

/* A context on `device` ("cpu" unless EMBER_TEST_DEVICE says otherwise when
 * device is NULL), logging only errors; NULL (and a message) if it cannot
 * open. */
ember_ctx *test_ctx(const char *device);

/* A fresh folder under $TMPDIR (or /tmp), removed by test_cleanup_dir. */
const char *test_tmpdir(void);
void test_cleanup_dir(const char *dir);

/* Writes `len` bytes to dir/name; returns the path (static buffer rotation). */
const char *test_write_file(const char *dir, const char *name, const void *data, size_t len);

#endif /* EMBER_TEST_UTIL_H */
