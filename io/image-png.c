/* SPDX-License-Identifier: MIT */
/*
 * io/image-png.c — PNG through libpng's simplified API.
 *
 * png_image_begin_read_from_memory and png_image_finish_read keep libpng's
 * setjmp/longjmp error handling inside libpng: a malformed file comes back
 * as a zero return with the reason in image.message, and nothing of it
 * crosses into ember's stack frames. The size is checked between the two
 * calls, before any memory is asked for the pixels.
 *
 * Pixels come out as 8-bit gray+alpha or RGBA (alpha kept, never
 * composited, so that image.c drops it exactly as for the other formats);
 * 16-bit files are reduced to 8 bits and palette files expanded by libpng.
 */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "image-impl.h"

static ember_status png_begin(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len,
                              png_image *image)
{
    memset(image, 0, sizeof *image);
    image->version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(image, bytes, len)) {
        ember_status st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: not a PNG image ember can read (libpng: %s)",
                                     name, image->message);
        png_image_free(image);
        return st;
    }
    if (image->width < 1 || image->height < 1 || image->width > EMBER_IMAGE_MAX_SIDE ||
        image->height > EMBER_IMAGE_MAX_SIDE) {
        ember_status st =
            ember_fail(ctx, EMBER_ERR_FORMAT, "%s: a PNG of %ux%u pixels; ember reads sides of 1 to %d", name,
                       image->width, image->height, EMBER_IMAGE_MAX_SIDE);
        png_image_free(image);
        return st;
    }
    return EMBER_OK;
}

ember_status ember_png_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                            int *height, int *channels)
{
    png_image image;
    ember_status st = png_begin(ctx, name, bytes, len, &image);
    if (st != EMBER_OK)
        return st;
    *width = (int)image.width;
    *height = (int)image.height;
    *channels = (int)PNG_IMAGE_SAMPLE_CHANNELS(image.format);
    png_image_free(&image);
    return EMBER_OK;
}

ember_status ember_png_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                              int *height, int *channels, uint8_t **pixels)
{
    *pixels = NULL;
    if (!ember_png_has_end(bytes, len))
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated: the PNG has no IEND chunk, its last", name);
    png_image image;
    ember_status st = png_begin(ctx, name, bytes, len, &image);
    if (st != EMBER_OK)
        return st;
    image.format = image.format & PNG_FORMAT_FLAG_COLOR ? PNG_FORMAT_RGBA : PNG_FORMAT_GA;
    uint8_t *out = ember_host_alloc(ctx, PNG_IMAGE_SIZE(image)); /* at most 8192 x 8192 x 4 */
    if (!out) {
        png_image_free(&image);
        return EMBER_ERR_NOMEM;
    }
    if (!png_image_finish_read(&image, NULL, out, 0, NULL)) {
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: cannot decode the PNG image (libpng: %s)", name,
                        image.message);
        png_image_free(&image);
        free(out);
        return st;
    }
    *width = (int)image.width;
    *height = (int)image.height;
    *channels = (int)PNG_IMAGE_SAMPLE_CHANNELS(image.format);
    *pixels = out;
    png_image_free(&image);
    return EMBER_OK;
}
