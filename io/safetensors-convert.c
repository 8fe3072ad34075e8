/* SPDX-License-Identifier: MIT */
/*
 * io/safetensors-convert.c — safetensors entries as PyTorch writes them
 * (F16, BF16, F64, I64 as well as F32) read as float32.
 *
 * A state_dict that PyTorch saved holds BatchNorm's num_batches_tracked as
 * I64, and a model kept in half precision or double holds F16, BF16 or
 * F64. Each is read in slices of a few thousand elements and converted
 * through io/convert.c, which refuses what float32 cannot hold (an
 * integer past 2^24, a double past float32's range, NaN and infinities).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "convert-impl.h"
#include "safetensors-impl.h"

bool ember_safetensors_convertible(const char *dtype)
{
    return ember_convert_kind_of_safetensors(dtype) >= 0;
}

ember_status ember_safetensors_read_as_f32(ember_ctx *ctx, const struct ember_safetensors *st,
                                           const struct ember_safetensors_entry *e, float *values)
{
    int kind = ember_convert_kind_of_safetensors(e->dtype);
    if (kind < 0)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: tensor \"%.200s\" is %s; ember reads F32, F16, BF16, F64, I64 "
                          "and I32 (as float32)",
                          st->path, e->name, e->dtype);
    if (kind == EMBER_NUM_F32)
        return ember_safetensors_read_f32(ctx, st, e, values);
    size_t width = ember_convert_width((enum ember_num_kind)kind);
    uint64_t count = (e->end - e->begin) / width;
    if (count == 0)
        return EMBER_OK;
    if (fseeko(st->file, (off_t)(st->data_start + e->begin), SEEK_SET) != 0)
        return ember_fail(ctx, EMBER_ERR_IO, "cannot seek in %s: %s", st->path, strerror(errno));
    enum { SLICE = 4096 };
    unsigned char bytes[SLICE * 8];
    for (uint64_t done = 0; done < count;) {
        size_t n = count - done < SLICE ? (size_t)(count - done) : SLICE, bad;
        if (fread(bytes, width, n, st->file) != n)
            return ember_fail(ctx, EMBER_ERR_IO, "cannot read %s: %s", st->path,
                              ferror(st->file) ? strerror(errno)
                                               : "it ended early (did it change while being read?)");
        if (!ember_convert_to_f32((enum ember_num_kind)kind, bytes, n, values + done, &bad))
            return ember_fail(
                ctx, EMBER_ERR_FORMAT,
                "%s: tensor \"%.200s\" (%s) holds at index %llu a value that float32 cannot hold%s; "
                "refusing to load it",
                st->path, e->name, e->dtype, (unsigned long long)(done + bad),
                kind == EMBER_NUM_I64 || kind == EMBER_NUM_I32
                    ? " exactly (integers are loaded only from -2^24 to 2^24)"
                    : " (NaN, an infinity, or beyond float32's range)");
        done += n;
    }
    return EMBER_OK;
}
