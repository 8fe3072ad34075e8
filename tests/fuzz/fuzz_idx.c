/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_idx.c — the IDX loader (MNIST, Fashion-MNIST), plain and
 * gzipped. The first byte chooses which file the rest of the input becomes
 * (bit 0: the images or the labels) and under which name (bit 1: .gz or
 * plain; zlib reads either); the other file is a small valid one.
 */
#include <stdio.h>
#include <unistd.h>

#include "fuzz-util.h"

static const uint8_t images[] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8};
static const uint8_t labels[] = {0, 0, 8, 1, 0, 0, 0, 2, 3, 9};

static void remove_all(void)
{
    static const char *const names[] = {"train-images-idx3-ubyte", "train-images-idx3-ubyte.gz",
                                        "train-labels-idx1-ubyte", "train-labels-idx1-ubyte.gz"};
    char path[512];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", fuzz_dir(), names[i]);
        unlink(path);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bool fuzz_labels = data[0] & 1, gz = data[0] & 2;
    remove_all();
    char name[64];
    snprintf(name, sizeof name, "train-%s-idx%d-ubyte%s", fuzz_labels ? "labels" : "images",
             fuzz_labels ? 1 : 3, gz ? ".gz" : "");
    fuzz_write(name, data + 1, size - 1);
    if (fuzz_labels)
        fuzz_write("train-images-idx3-ubyte", images, sizeof images);
    else
        fuzz_write("train-labels-idx1-ubyte", labels, sizeof labels);
    ember_data_options options = {.kind = "mnist", .dir = fuzz_dir()};
    ember_dataset_free(ember_dataset_open(fuzz_ctx(), &options, EMBER_TRAIN));
    return 0;
}
