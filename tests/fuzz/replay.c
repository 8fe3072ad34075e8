/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/replay.c — a harness without libFuzzer: runs each file named
 * on the command line (or each file in each folder named) through
 * LLVMFuzzerTestOneInput once. The test suite runs the regression inputs
 * (tests/fuzz/regressions/<harness>/) and the seed corpora this way, in
 * every build; a crash or a sanitizer report fails the test.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz-util.h"

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(len > 0 ? (size_t)len : 1);
    size_t got = data && len > 0 ? fread(data, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!data || got != (size_t)(len > 0 ? len : 0)) {
        fprintf(stderr, "%s: cannot read it\n", path);
        free(data);
        return 1;
    }
    LLVMFuzzerTestOneInput(data, got);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    int failures = 0, runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            failures++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            failures += replay_file(argv[i]);
            runs++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            failures += replay_file(path);
            runs++;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs%s\n", runs, failures ? ", some unreadable" : "");
    return failures ? 1 : 0;
}
