/* SPDX-License-Identifier: MIT */
/*
 * tests/unit/test_text_memory.c — a text data set holds its own split's
 * bytes and no more (io/data-text.c): both splits of a 64 MB file open in
 * about 64 MB, where each split held the whole file before (128 MB). The
 * peak is measured in a child of its own.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-util.h"

static long peak_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(void)
{
    const size_t bytes = 64u << 20;
    const char *dir = test_tmpdir();
    char *text = malloc(bytes);
    if (!text)
        return TEST_SKIP;
    for (size_t i = 0; i < bytes; i++)
        text[i] = "the cat sat on the mat. "[i % 24];
    const char *path = test_write_file(dir, "words.txt", text, bytes);
    free(text);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) {
        ember_ctx *ctx = test_ctx("cpu");
        long before = peak_kib();
        ember_data_options o = {.kind = "text", .dir = path, .sample_ndim = 1, .sample_shape = {128}};
        ember_dataset *train = ctx ? ember_dataset_open(ctx, &o, EMBER_TRAIN) : NULL;
        ember_dataset *test = ctx ? ember_dataset_open(ctx, &o, EMBER_TEST) : NULL;
        long grew = peak_kib() - before;
        int ok = train && test && grew < (long)(bytes / 1024 * 5 / 4);
        if (!ok)
            fprintf(stderr, "both splits of a %zu KiB text: the peak grew by %ld KiB (%s)\n", bytes / 1024,
                    grew, ctx ? ember_last_error(ctx) : "no context");
        ember_dataset_free(train);
        ember_dataset_free(test);
        ember_ctx_free(ctx);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a text data set held more than its bytes");
    test_cleanup_dir(dir);
    return test_finish("test_text_memory");
}
