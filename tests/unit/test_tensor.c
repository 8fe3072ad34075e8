/* SPDX-License-Identifier: MIT */
/* tests/unit/test_tensor.c — tensors: shapes, views, strides, transfers, ownership. */
#include <string.h>

#include "test-util.h"

int main(void)
{
    ember_ctx *ctx = test_ctx(NULL);
    if (!ctx)
        return 1;
    int64_t shape[2] = {2, 3};
    ember_tensor *t = ember_tensor_new(ctx, EMBER_F32, 2, shape);
    CHECK(t && ember_tensor_numel(t) == 6, "numel");
    float v[6] = {1, 2, 3, 4, 5, 6}, back[6];
    CHECK_OK(ctx, ember_tensor_write(t, v, sizeof v));
    ember_tensor *tt = ember_transpose(t, 0, 1);
    CHECK(tt && ember_tensor_dim(tt, 0) == 3, "transpose shape");
    CHECK_OK(ctx, ember_tensor_read(tt, back, sizeof back));
    float want[6] = {1, 4, 2, 5, 3, 6};
    CHECK(memcmp(back, want, sizeof want) == 0, "transposed read %g %g %g", back[0], back[1], back[2]);
    ember_tape_clear(ctx);
    ember_tensor_free(t);
    ember_ctx_free(ctx);
    return test_finish("test_tensor");
}
