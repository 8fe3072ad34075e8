/* SPDX-License-Identifier: MIT */
/*
 * io/image-impl.h — the image decoders behind ember_image_info and
 * ember_image_decode (image.c), one file per library.
 *
 * Image files are untrusted (docs/design.md, decision 7): each format is
 * decoded by the library that is fuzzed hardest for it, with its error
 * path kept inside its own file, so that a hostile file is a status and a
 * message and never takes the process down:
 *
 *     image-png.c    PNG through libpng's simplified API (its own setjmp)
 *     image-jpeg.c   JPEG through libjpeg-turbo, an error manager that
 *                    longjmps back, a limit on progressive scans
 *     image-wic.c    both on Windows, through the system's own decoders
 *                    (Windows Imaging Component), in place of the two above
 *     image.c        the format by its magic bytes; BMP through stb_image,
 *                    held to ember's own checks of what it returns
 *
 * Every decoder gives 8-bit pixels interleaved as (H, W, channels) in
 * malloc'd memory, with channels as the file has them (1 gray, 2 gray and
 * alpha, 3 RGB, 4 RGBA), or as asked where the library converts better
 * (JPEG's gray is its luma channel); image.c converts to what was asked.
 */
#ifndef EMBER_IMAGE_IMPL_H
#define EMBER_IMAGE_IMPL_H

#include <string.h>

#include "data-impl.h"

/* No image ember reads may be wider or taller: 8192 x 8192 x 4 bytes is
 * 256 MiB, the most one image may ask for. */
#define EMBER_IMAGE_MAX_SIDE 8192

/* True when a PNG file holds its IEND chunk (length 0, type, fixed CRC):
 * a decoder stops reading once it has the pixels, so a file cut just after
 * them would pass for whole; a download that stopped early should not.
 * (For image-png.c and image-wic.c alike; here, so that neither calls the
 * other nor image.c, which calls them.) */
static inline bool ember_png_has_end(const uint8_t *bytes, size_t len)
{
    static const uint8_t iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    for (size_t at = len >= sizeof iend ? len - sizeof iend + 1 : 0; at-- > 8;)
        if (bytes[at] == 0 && memcmp(bytes + at, iend, sizeof iend) == 0)
            return true;
    return false;
}

ember_status ember_png_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                            int *height, int *channels);
ember_status ember_png_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                              int *height, int *channels, uint8_t **pixels);

/* `want` 1 decodes gray (a colour file's luma), 3 RGB. */
ember_status ember_jpeg_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                             int *height, int *channels);
ember_status ember_jpeg_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int want,
                               int *width, int *height, int *channels, uint8_t **pixels);

#endif /* EMBER_IMAGE_IMPL_H */
