/*
 * core/image.c — PNG, JPEG and BMP decoding: the one translation unit that
 * compiles stb_image (Debian's libstb-dev).
 *
 * Image files are untrusted (DESIGN.md decision 7), so stb_image is held to
 * what ember needs: only its PNG, JPEG and BMP decoders are compiled in (GIF,
 * with its history of decoder bugs, explicitly not); dimensions are capped
 * so that no header can ask for more than 8192 x 8192 x 4 bytes; and stdio
 * is compiled out, so that ember opens, sizes and reads every file with its
 * own messages. The functions are static: the library exports no stbi_
 * symbols to clash with a caller's own copy of stb_image.
 */
#include <limits.h>
#include <stdlib.h>

#include "data-impl.h"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_NO_GIF
#define STBI_NO_LINEAR
#define STBI_MAX_DIMENSIONS 8192
#define STBI_FAILURE_USERMSG
/* stb_image is third-party code: its warnings are not ours to fix. Unused
 * static functions are reported at the end of the file, after any pop, so
 * that one stays off for this whole (short) file. */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#include <stb_image.h>
#pragma GCC diagnostic pop

static ember_status check_length(ember_ctx *ctx, const char *name, size_t len)
{
    if (len > INT_MAX) /* stb_image counts bytes in an int */
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %zu bytes is too large for an image", name, len);
    return EMBER_OK;
}

ember_status ember_image_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                              int *height, int *channels)
{
    ember_status st = check_length(ctx, name, len);
    if (st != EMBER_OK)
        return st;
    if (!stbi_info_from_memory(bytes, (int)len, width, height, channels))
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: not a PNG, JPEG or BMP image ember can read (%s)", name,
                          stbi_failure_reason());
    return EMBER_OK;
}

ember_status ember_image_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len,
                                int channels, int *width, int *height, uint8_t **pixels)
{
    *pixels = NULL;
    ember_status st = check_length(ctx, name, len);
    if (st != EMBER_OK)
        return st;
    if (channels != 1 && channels != 3)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: images load with 1 or 3 channels, not %d", name, channels);
    int in_file;
    *pixels = stbi_load_from_memory(bytes, (int)len, width, height, &in_file, channels);
    if (!*pixels)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: cannot decode the image (%s)", name,
                          stbi_failure_reason());
    return EMBER_OK;
}

void ember_image_free(uint8_t *pixels) { stbi_image_free(pixels); }
