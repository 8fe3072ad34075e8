/* SPDX-License-Identifier: MIT */
/*
 * io/data-image.c — an image file as one sample: read, decoded
 * (image.c), converted to the channels wanted, resized or refused, laid out
 * planar (C, H, W). The folder loader fills its data sets this way, and
 * ember_image_load gives programs (and `ember predict`) the same pixels
 * training saw.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image-impl.h"

/* No image file ember reads is larger (a 8192 x 8192 BMP is 256 MiB). */
#define IMAGE_MAX_FILE_BYTES ((int64_t)256 << 20)

ember_status ember_file_read(ember_ctx *ctx, const char *path, uint8_t **buf, int64_t *cap, size_t *len)
{
    struct stat info;
    FILE *file = ember_fopen_regular(ctx, path, &info);
    if (!file)
        return ember_last_status(ctx);
    ember_status st = EMBER_OK;
    if ((int64_t)info.st_size > IMAGE_MAX_FILE_BYTES) {
        st = ember_fail(ctx, EMBER_ERR_FORMAT, "%s: %lld bytes is too large for an image (limit %lld)", path,
                        (long long)info.st_size, (long long)IMAGE_MAX_FILE_BYTES);
        goto close;
    }
    *len = (size_t)info.st_size;
    if ((st = ember_host_grow(ctx, (void **)buf, cap, (int64_t)*len, 1)) != EMBER_OK)
        goto close;
    if (fread(*buf, 1, *len, file) != *len)
        st = ember_fail(ctx, EMBER_ERR_IO, "%s: cannot read its %zu bytes: %s", path, *len,
                        ferror(file) ? strerror(errno) : "it shrank");
close:
    fclose(file);
    return st;
}

/* One channel value at (x, y) of an interleaved (H, W, C) image. */
#define AT(src, w, c, x, y, ch) ((float)(src)[((int64_t)(y) * (w) + (x)) * (c) + (ch)])

/* src (sh, sw, c) interleaved -> dst (c, dh, dw) planar, bilinear with
 * half-pixel centres; equal sizes reduce to a transpose. */
static void image_to_chw(const uint8_t *src, int sw, int sh, int c, uint8_t *dst, int dw, int dh)
{
    for (int y = 0; y < dh; y++) {
        float fy = ((float)y + 0.5f) * (float)sh / (float)dh - 0.5f;
        fy = fy < 0 ? 0 : fy > (float)(sh - 1) ? (float)(sh - 1) : fy;
        int y0 = (int)fy, y1 = y0 + 1 < sh ? y0 + 1 : y0;
        float wy = fy - (float)y0;
        for (int x = 0; x < dw; x++) {
            float fx = ((float)x + 0.5f) * (float)sw / (float)dw - 0.5f;
            fx = fx < 0 ? 0 : fx > (float)(sw - 1) ? (float)(sw - 1) : fx;
            int x0 = (int)fx, x1 = x0 + 1 < sw ? x0 + 1 : x0;
            float wx = fx - (float)x0;
            for (int ch = 0; ch < c; ch++) {
                float top = AT(src, sw, c, x0, y0, ch) * (1 - wx) + AT(src, sw, c, x1, y0, ch) * wx;
                float bottom = AT(src, sw, c, x0, y1, ch) * (1 - wx) + AT(src, sw, c, x1, y1, ch) * wx;
                float v = top * (1 - wy) + bottom * wy;
                dst[((int64_t)ch * dh + y) * dw + x] = (uint8_t)(v + 0.5f);
            }
        }
    }
}

ember_status ember_image_sample(ember_ctx *ctx, const char *path, const uint8_t *bytes, size_t len, int c,
                                int h, int w, bool resize, const char *size_from, uint8_t *dst)
{
    uint8_t *pixels;
    int width, height;
    ember_status st = ember_image_decode(ctx, path, bytes, len, c, &width, &height, &pixels);
    if (st != EMBER_OK)
        return st;
    if ((width != w || height != h) && !resize)
        st = ember_fail(ctx, EMBER_ERR_FORMAT,
                        "%s: the image is %dx%d (width x height) but the images are %dx%d here (set by %s); "
                        "resize such images (ember_data_options.resize) or give them at that size",
                        path, width, height, w, h, size_from);
    else
        image_to_chw(pixels, width, height, c, dst, w, h);
    ember_image_free(pixels);
    return st;
}

ember_status ember_image_file_info(ember_ctx *ctx, const char *path, int *width, int *height, int *channels)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!path || !width || !height || !channels)
        return ember_fail(ctx, EMBER_ERR_ARG, "ember_image_file_info: a path and three outputs");
    uint8_t *bytes = NULL;
    int64_t cap = 0;
    size_t len = 0;
    ember_status st = ember_file_read(ctx, path, &bytes, &cap, &len);
    if (st == EMBER_OK)
        st = ember_image_info(ctx, path, bytes, len, width, height, channels);
    free(bytes);
    return st;
}

/* ------------------------------------------------------------ statistics */

/* Sums for ember_image_stats: each image's mean and edge mean. */
struct stats_sums {
    double sum, sum_sq, border, border_sq;
    int64_t images;
};

static void stats_add(struct stats_sums *s, double mean, double border)
{
    s->sum += mean;
    s->sum_sq += mean * mean;
    s->border += border;
    s->border_sq += border * border;
    s->images++;
}

static void stats_finish(const struct stats_sums *s, ember_image_stats *out)
{
    double n = s->images ? (double)s->images : 1.0;
    double mean = s->sum / n, border = s->border / n;
    *out = (ember_image_stats){.mean = mean,
                               .mean_spread = sqrt(fmax(s->sum_sq / n - mean * mean, 0.0)),
                               .border = border,
                               .border_spread = sqrt(fmax(s->border_sq / n - border * border, 0.0))};
}

/* One image's mean and its edge's mean, its (c, h, w) pixels either bytes
 * (scaled to [0, 1] as the batches are) or floats. */
static void image_means(const void *pixels, bool bytes, int c, int h, int w, double *mean, double *edge)
{
    double all = 0.0, on_edge = 0.0;
    int64_t edge_pixels = 0;
    for (int ch = 0; ch < c; ch++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int64_t i = ((int64_t)ch * h + y) * w + x;
                double v = bytes ? ((const uint8_t *)pixels)[i] / 255.0 : (double)((const float *)pixels)[i];
                all += v;
                if (y == 0 || x == 0 || y == h - 1 || x == w - 1) {
                    on_edge += v;
                    edge_pixels++;
                }
            }
    *mean = all / ((double)c * h * w);
    *edge = on_edge / (double)(edge_pixels ? edge_pixels : 1);
}

/* The statistics of n images at `pixels`, bytes or floats. */
static void images_stats(const void *pixels, bool bytes, int64_t n, int c, int h, int w,
                         ember_image_stats *stats)
{
    struct stats_sums s = {0};
    int64_t per = (int64_t)c * h * w;
    for (int64_t i = 0; pixels && i < n && per > 0; i++) {
        double mean, edge;
        image_means(bytes ? (const void *)((const uint8_t *)pixels + i * per)
                          : (const void *)((const float *)pixels + i * per),
                    bytes, c, h, w, &mean, &edge);
        stats_add(&s, mean, edge);
    }
    stats_finish(&s, stats);
}

void ember_image_stats_of(const float *images, int64_t n, int channels, int height, int width,
                          ember_image_stats *stats)
{
    if (stats)
        images_stats(images, false, n, channels, height, width, stats);
}

ember_status ember_dataset_image_stats(const ember_dataset *ds, ember_image_stats *stats)
{
    if (!ds || !stats)
        return EMBER_ERR_ARG;
    if (ds->sample_ndim != 3)
        return ember_fail(ds->ctx, EMBER_ERR_ARG, "%s: its samples are not images (C, H, W)", ds->describe);
    int c = (int)ds->sample_shape[0], h = (int)ds->sample_shape[1], w = (int)ds->sample_shape[2];
    images_stats(ds->floats ? (const void *)ds->floats : (const void *)ds->pixels, !ds->floats, ds->count, c,
                 h, w, stats);
    return EMBER_OK;
}

ember_status ember_image_load(ember_ctx *ctx, const char *path, int channels, int height, int width,
                              bool resize, float *out)
{
    if (!ctx)
        return EMBER_ERR_ARG;
    if (!path || !out || (channels != 1 && channels != 3) || height < 1 || height > EMBER_IMAGE_MAX_SIDE ||
        width < 1 || width > EMBER_IMAGE_MAX_SIDE)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "ember_image_load: a path, an output, 1 or 3 channels and sides of "
                          "1 to %d",
                          EMBER_IMAGE_MAX_SIDE);
    uint8_t *bytes = NULL, *planes = NULL;
    int64_t cap = 0;
    size_t len = 0, n = (size_t)channels * (size_t)height * (size_t)width;
    char size_from[64];
    snprintf(size_from, sizeof size_from, "the model's input, %dx%dx%d", channels, height, width);
    ember_status st = ember_file_read(ctx, path, &bytes, &cap, &len);
    if (st == EMBER_OK && !(planes = ember_host_alloc(ctx, n)))
        st = EMBER_ERR_NOMEM;
    if (st == EMBER_OK)
        st = ember_image_sample(ctx, path, bytes, len, channels, height, width, resize, size_from, planes);
    for (size_t i = 0; st == EMBER_OK && i < n; i++)
        out[i] = (float)planes[i] / 255.0f; /* as the batcher scales */
    free(planes);
    free(bytes);
    return st;
}
