/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz-util.h — what the fuzz harnesses share: one quiet CPU
 * context for the whole run, and a scratch folder for loaders that read
 * files by path.
 *
 * Each harness is one LLVMFuzzerTestOneInput. Built with clang's
 * -fsanitize=fuzzer (tests/fuzz/CMakeLists.txt) it is a libFuzzer program;
 * built with replay.c instead it runs the files it is given once each, which
 * is how the ordinary test suite runs every regression input on every
 * build, sanitizers or not.
 */
#ifndef EMBER_FUZZ_UTIL_H
#define EMBER_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"

/* The context every input runs in: cpu, one thread, silent. */
ember_ctx *fuzz_ctx(void);
/* A folder of this process's own, made once. */
const char *fuzz_dir(void);
/* Writes data to fuzz_dir()/name, replacing it; the path, or NULL. */
const char *fuzz_write(const char *name, const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* EMBER_FUZZ_UTIL_H */
