/* SPDX-License-Identifier: MIT */
/*
 * tests/fuzz/fuzz_predict.c — `ember predict`'s path for one image file
 * (tools/cmd-predict.c): the file loaded as the model's input
 * (ember_image_load: decoded, converted to gray or RGB, resized when asked),
 * classified, and its name printed as predict prints it (cli_printable).
 * The input's first byte chooses the model (1x28x28 or 3x32x32) and
 * --resize; the rest is the file, its format found by its magic bytes. A
 * loaded image is [0, 1] everywhere, its probabilities sum to one, and a
 * printed name holds no control character.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fuzz-util.h"

static ember_model *models[2];
static const int64_t shapes[2][3] = {{1, 28, 28}, {3, 32, 32}};

static void setup(ember_ctx *ctx)
{
    models[0] = ember_model_parse(ctx, "gray", "flatten\nlinear classes\n", 3, shapes[0], 10, 1);
    models[1] =
        ember_model_parse(ctx, "rgb", "conv2d 4 kernel=3 stride=2\nrelu\nglobal_avg_pool2d\nlinear classes\n",
                          3, shapes[1], 10, 1);
    if (!models[0] || !models[1])
        abort();
    ember_model_set_training(models[0], false);
    ember_model_set_training(models[1], false);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_ctx *ctx = fuzz_ctx();
    if (!models[0])
        setup(ctx);
    if (size < 1)
        return 0;
    int which = data[0] & 1;
    bool resize = data[0] & 2;
    const char *path = fuzz_write("image", data + 1, size - 1);
    static float x[3 * 32 * 32];
    float probs[10], sum = 0;
    const int64_t *s = shapes[which];
    if (path && ember_image_load(ctx, path, (int)s[0], (int)s[1], (int)s[2], resize, x) == EMBER_OK) {
        for (int64_t i = 0; i < s[0] * s[1] * s[2]; i++)
            if (!(x[i] >= 0.0f && x[i] <= 1.0f))
                abort();
        if (ember_model_predict_probs(models[which], x, 1, probs) != EMBER_OK)
            abort();
        for (int k = 0; k < 10; k++)
            sum += probs[k];
        if (!(fabsf(sum - 1.0f) < 1e-3f))
            abort();
    }
    /* the bytes as a file name or class name on predict's terminal */
    char name[256], shown[1024];
    size_t n = size - 1 < sizeof name - 1 ? size - 1 : sizeof name - 1;
    memcpy(name, data + 1, n);
    name[n] = '\0';
    cli_printable(name, shown, sizeof shown);
    for (const unsigned char *c = (const unsigned char *)shown; *c; c++)
        if (*c < 0x20 || *c == 0x7f || (c[0] == 0xc2 && c[1] >= 0x80 && c[1] < 0xa0))
            abort();
    return 0;
}
