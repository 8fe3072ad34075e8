/* SPDX-License-Identifier: MIT */
/*
 * io/image.c — an image file's bytes to pixels: the format by its magic
 * bytes, PNG and JPEG through their libraries (image-png.c,
 * image-jpeg.c), BMP through stb_image (Debian's libstb-dev), and the
 * conversion to the channels asked for.
 *
 * stb_image's own documentation says it is not meant for untrusted files,
 * and a fuzzing campaign found crashes in its PNG and JPEG decoders, so it
 * decodes BMP alone here, a simple format, and what it returns is checked
 * as if it were a file: a size of at least 1 and at most
 * EMBER_IMAGE_MAX_SIDE each way, a known channel count. Its functions are
 * static: the library exports no stbi_ symbols to clash with a caller's
 * own copy of stb_image.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "image-impl.h"

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ONLY_BMP
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#define STBI_MAX_DIMENSIONS EMBER_IMAGE_MAX_SIDE
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

enum image_format { FORMAT_UNKNOWN, FORMAT_PNG, FORMAT_JPEG, FORMAT_BMP };

static enum image_format sniff(const uint8_t *bytes, size_t len)
{
    if (len >= 8 && memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0)
        return FORMAT_PNG;
    if (len >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff)
        return FORMAT_JPEG;
    if (len >= 2 && bytes[0] == 'B' && bytes[1] == 'M')
        return FORMAT_BMP;
    return FORMAT_UNKNOWN;
}

static ember_status unknown_format(ember_ctx *ctx, const char *name)
{
    return ember_fail(ctx, EMBER_ERR_FORMAT,
                      "%s: not a PNG, JPEG or BMP image (its first bytes are none of "
                      "theirs)",
                      name);
}

/* What stb_image says of a BMP, held to ember's limits. A top-down BMP
 * declares a negative height, which stbi_info passes on as it is. */
static ember_status bmp_checked(ember_ctx *ctx, const char *name, int width, int height, int channels)
{
    if (width < 1 || height < 1 || width > EMBER_IMAGE_MAX_SIDE || height > EMBER_IMAGE_MAX_SIDE ||
        channels < 1 || channels > 4)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: a BMP of %dx%d pixels and %d channels; ember reads sides of "
                          "1 to %d",
                          name, width, height, channels, EMBER_IMAGE_MAX_SIDE);
    return EMBER_OK;
}

static uint32_t le(const uint8_t *p, int bytes)
{
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static ember_status bmp_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                             int *height, int *channels)
{
    if (len > INT_MAX) /* stb_image counts bytes in an int */
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %zu bytes is too large for a BMP", name, len);
    if (!stbi_info_from_memory(bytes, (int)len, width, height, channels))
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: not a BMP image ember can read (%s)", name,
                          stbi_failure_reason());
    if (*height < 0 && *height != INT_MIN)
        *height = -*height; /* top-down rows */
    ember_status st = bmp_checked(ctx, name, *width, *height, *channels);
    if (st != EMBER_OK)
        return st;
    /* stb_image reads uncompressed BMPs alone, whose pixels are all in the
     * file: one that declares more rows than it holds would have stb_image
     * allocate (up to 256 MiB) and fill an image from a few bytes. The
     * pixel data start (offset 10) and bits per pixel (28) are the file's. */
    uint64_t bits = len >= 30 ? le(bytes + 28, 2) : 0, start = len >= 14 ? le(bytes + 10, 4) : 0;
    uint64_t row = ((uint64_t)*width * bits + 31) / 32 * 4, need = start + row * (uint64_t)*height;
    if (bits == 0 || need > len)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: truncated: a %dx%d BMP of %llu bits per pixel needs %llu "
                          "bytes, the file has %zu",
                          name, *width, *height, (unsigned long long)bits, (unsigned long long)need, len);
    return EMBER_OK;
}

static ember_status bmp_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                               int *height, int *channels, uint8_t **pixels)
{
    ember_status st = bmp_info(ctx, name, bytes, len, width, height, channels);
    if (st != EMBER_OK)
        return st;
    int w = 0, h = 0, c = 0;
    uint8_t *decoded = stbi_load_from_memory(bytes, (int)len, &w, &h, &c, 0);
    if (!decoded)
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: cannot decode the BMP image (%s)", name,
                          stbi_failure_reason());
    /* the decode must agree with the header it was checked by */
    if (w != *width || h != *height || c != *channels || bmp_checked(ctx, name, w, h, c) != EMBER_OK) {
        stbi_image_free(decoded);
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: the BMP decodes to %dx%dx%d, not the %dx%dx%d its header says", name, w, h, c,
                          *width, *height, *channels);
    }
    /* into memory of our own, so that every decoder's pixels free alike */
    size_t bytes_out = (size_t)w * (size_t)h * (size_t)c;
    *pixels = ember_host_alloc(ctx, bytes_out);
    if (*pixels)
        memcpy(*pixels, decoded, bytes_out);
    stbi_image_free(decoded);
    return *pixels ? EMBER_OK : EMBER_ERR_NOMEM;
}

ember_status ember_image_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                              int *height, int *channels)
{
    switch (sniff(bytes, len)) {
    case FORMAT_PNG: return ember_png_info(ctx, name, bytes, len, width, height, channels);
    case FORMAT_JPEG: return ember_jpeg_info(ctx, name, bytes, len, width, height, channels);
    case FORMAT_BMP: return bmp_info(ctx, name, bytes, len, width, height, channels);
    default: return unknown_format(ctx, name);
    }
}

/* (n, from) interleaved -> (n, to), in place when to <= from: gray to RGB by
 * copying, RGB to gray by stb_image's luma (77 R + 150 G + 29 B) / 256, as
 * ember always has, alpha dropped. */
static void convert(const uint8_t *src, int from, uint8_t *dst, int to, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = src + i * (size_t)from;
        uint8_t *q = dst + i * (size_t)to;
        if (from <= 2) { /* gray, or gray and alpha */
            uint8_t g = p[0];
            for (int k = 0; k < to; k++)
                q[k] = g;
        } else if (to == 1) {
            q[0] = (uint8_t)((p[0] * 77 + p[1] * 150 + p[2] * 29) >> 8);
        } else {
            uint8_t r = p[0], g = p[1], b = p[2];
            q[0] = r, q[1] = g, q[2] = b;
        }
    }
}

ember_status ember_image_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len,
                                int channels, int *width, int *height, uint8_t **pixels)
{
    *pixels = NULL;
    if (channels != 1 && channels != 3)
        return ember_fail(ctx, EMBER_ERR_ARG, "%s: images load with 1 or 3 channels, not %d", name, channels);
    int have = 0;
    uint8_t *decoded = NULL;
    ember_status st;
    switch (sniff(bytes, len)) {
    case FORMAT_PNG: st = ember_png_decode(ctx, name, bytes, len, width, height, &have, &decoded); break;
    case FORMAT_JPEG:
        st = ember_jpeg_decode(ctx, name, bytes, len, channels, width, height, &have, &decoded);
        break;
    case FORMAT_BMP: st = bmp_decode(ctx, name, bytes, len, width, height, &have, &decoded); break;
    default: return unknown_format(ctx, name);
    }
    if (st != EMBER_OK)
        return st;
    size_t n = (size_t)*width * (size_t)*height;
    if (have != channels) {
        uint8_t *out = channels < have ? decoded : ember_host_alloc(ctx, n * (size_t)channels);
        if (!out) {
            free(decoded);
            return EMBER_ERR_NOMEM;
        }
        convert(decoded, have, out, channels, n);
        if (out != decoded)
            free(decoded);
        decoded = out;
    }
    *pixels = decoded;
    return EMBER_OK;
}

void ember_image_free(uint8_t *pixels) { free(pixels); }
