/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_cifar.c — the CIFAR-10 loader: the input is the test batch. */
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write("test_batch.bin", data, size);
    ember_data_options options = {.kind = "cifar10", .dir = fuzz_dir()};
    ember_dataset_free(ember_dataset_open(fuzz_ctx(), &options, EMBER_TEST));
    return 0;
}
