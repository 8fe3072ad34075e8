/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_cifar.c — the CIFAR loaders: the input as CIFAR-10's test
 * batch, as CIFAR-100's, and as CIFAR-100's class names beside a batch of
 * one good record (so that the names are read).
 */
#include <stdio.h>

#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_data_options options = {.kind = "cifar10", .dir = fuzz_dir()};
    fuzz_write("test_batch.bin", data, size);
    ember_dataset_free(ember_dataset_open(fuzz_ctx(), &options, EMBER_TEST));

    options.kind = "cifar100";
    char names[1024];
    snprintf(names, sizeof names, "%s/fine_label_names.txt", fuzz_dir());
    remove(names); /* no names: the batch alone */
    fuzz_write("test.bin", data, size);
    ember_dataset_free(ember_dataset_open(fuzz_ctx(), &options, EMBER_TEST));

    static uint8_t record[2 + 3 * 32 * 32] = {3, 42};
    fuzz_write("test.bin", record, sizeof record);
    fuzz_write("fine_label_names.txt", data, size);
    ember_dataset_free(ember_dataset_open(fuzz_ctx(), &options, EMBER_TEST));
    return 0;
}
