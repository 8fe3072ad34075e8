/* SPDX-License-Identifier: MIT */
/*
 * io/image-jpeg.c — JPEG through libjpeg-turbo.
 *
 * libjpeg reports a fatal error by calling error_exit, which must not
 * return; ours longjmps back to the one setjmp below, so that a hostile
 * file ends as a status and a message, with everything libjpeg allocated
 * freed by jpeg_destroy_decompress. Warnings (corrupt data libjpeg could
 * step over, a truncated file it would fill with gray) are errors here
 * too: a training image silently half gray is worse than a clear refusal.
 * A progressive file may hold any number of scans, each costing a pass
 * over the whole image; more than MAX_SCANS is refused as hostile.
 *
 * Everything a longjmp may skip over is either set before the setjmp or
 * volatile, as C requires for locals changed between setjmp and longjmp.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "image-impl.h"

#define MAX_SCANS 256 /* real progressive files have about ten */

struct jpeg_failure {
    struct jpeg_error_mgr pub; /* first: libjpeg sees only this */
    jmp_buf back;
    char message[JMSG_LENGTH_MAX + 64];
};

static void fail_exit(j_common_ptr c)
{
    struct jpeg_failure *f = (struct jpeg_failure *)c->err;
    c->err->format_message(c, f->message);
    longjmp(f->back, 1);
}

/* level -1 is a warning about corrupt data; other levels are trace output */
static void fail_on_warning(j_common_ptr c, int level)
{
    if (level < 0)
        fail_exit(c);
}

static void limit_scans(j_common_ptr c)
{
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (d->input_scan_number > MAX_SCANS) {
        struct jpeg_failure *f = (struct jpeg_failure *)c->err;
        snprintf(f->message, sizeof f->message, "more than %d progressive scans", MAX_SCANS);
        longjmp(f->back, 1);
    }
}

/* Reads the header, and with `want` set decodes into *pixels. */
static ember_status jpeg_read(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int want,
                              int *width, int *height, int *channels, uint8_t **pixels)
{
    struct jpeg_decompress_struct d;
    struct jpeg_failure failure;
    struct jpeg_progress_mgr progress = {.progress_monitor = limit_scans};
    uint8_t *volatile out = NULL;
    uint8_t *volatile row = NULL;
    d.err = jpeg_std_error(&failure.pub);
    failure.pub.error_exit = fail_exit;
    failure.pub.emit_message = fail_on_warning;
    failure.message[0] = '\0';
    if (setjmp(failure.back)) {
        jpeg_destroy_decompress(&d);
        free(out);
        free(row);
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: not a JPEG image ember can read (libjpeg: %s)", name,
                          failure.message);
    }
    jpeg_create_decompress(&d);
    d.progress = &progress;
    jpeg_mem_src(&d, bytes, (unsigned long)len);
    jpeg_read_header(&d, TRUE);
    if (d.image_width < 1 || d.image_height < 1 || d.image_width > EMBER_IMAGE_MAX_SIDE ||
        d.image_height > EMBER_IMAGE_MAX_SIDE ||
        (d.num_components != 1 && d.num_components != 3 && d.num_components != 4)) {
        ember_status st =
            ember_fail(ctx, EMBER_ERR_FORMAT,
                       "%s: a JPEG of %ux%u pixels and %d components; ember "
                       "reads sides of 1 to %d and 1, 3 or 4 components",
                       name, d.image_width, d.image_height, d.num_components, EMBER_IMAGE_MAX_SIDE);
        jpeg_destroy_decompress(&d);
        return st;
    }
    *width = (int)d.image_width;
    *height = (int)d.image_height;
    *channels = d.num_components == 1 ? 1 : 3;
    if (!want) {
        jpeg_destroy_decompress(&d);
        return EMBER_OK;
    }
    /* gray: libjpeg's luma channel (a colour file's Y); CMYK: converted below */
    bool cmyk = d.num_components == 4;
    d.out_color_space = cmyk ? JCS_CMYK : want == 1 || d.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&d);
    int per_pixel = d.output_components;
    size_t stride = (size_t)d.output_width * (size_t)per_pixel;
    int keep = cmyk ? 3 : per_pixel;
    if (!(out = ember_host_alloc(ctx, (size_t)d.output_width * d.output_height * (size_t)keep)) ||
        !(row = ember_host_alloc(ctx, stride))) {
        jpeg_destroy_decompress(&d);
        free(out);
        free(row);
        return EMBER_ERR_NOMEM;
    }
    while (d.output_scanline < d.output_height) {
        uint8_t *line = row;
        JSAMPROW rows[1] = {line};
        size_t y = d.output_scanline;
        jpeg_read_scanlines(&d, rows, 1);
        uint8_t *dst = out + y * d.output_width * (size_t)keep;
        if (!cmyk) {
            memcpy(dst, line, stride);
            continue;
        }
        /* Adobe's CMYK is stored inverted: each of C, M, Y times K over 255 */
        for (size_t x = 0; x < d.output_width; x++)
            for (int k = 0; k < 3; k++)
                dst[3 * x + k] = (uint8_t)((line[4 * x + k] * line[4 * x + 3] + 127) / 255);
    }
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    free(row);
    *channels = keep;
    *pixels = out;
    return EMBER_OK;
}

ember_status ember_jpeg_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                             int *height, int *channels)
{
    uint8_t *none = NULL;
    return jpeg_read(ctx, name, bytes, len, 0, width, height, channels, &none);
}

ember_status ember_jpeg_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int want,
                               int *width, int *height, int *channels, uint8_t **pixels)
{
    *pixels = NULL;
    return jpeg_read(ctx, name, bytes, len, want, width, height, channels, pixels);
}
