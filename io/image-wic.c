/* SPDX-License-Identifier: MIT */
/*
 * io/image-wic.c — PNG and JPEG through Windows Imaging Component, the
 * decoders every Windows since Vista carries (and Wine implements).
 *
 * On Windows this file stands in for image-png.c and image-jpeg.c: it
 * gives the same four functions (image-impl.h) with the same contract, so
 * image.c, the data sets and the tests above it do not know which library
 * decoded a file. Why WIC rather than libpng and libjpeg-turbo built for
 * Windows: Debian packages neither for mingw-w64, building them here would
 * mean carrying their sources, and WIC is the system's own, updated by
 * Windows Update with its security fixes (docs/windows.md).
 *
 * Every call goes through COM from C (COBJMACROS). COM is started on the
 * calling thread if it is not yet; a thread the host already started as a
 * single-threaded apartment keeps its apartment (RPC_E_CHANGED_MODE) and
 * WIC works there too, because every object here is made, used and
 * released on that one thread.
 *
 * The checks ember makes of its own libraries' output are made here too:
 * the container must be the format image.c sniffed (a GIF renamed .png is
 * refused, not decoded), the sides are held to EMBER_IMAGE_MAX_SIDE before
 * any pixel memory is asked for, and a PNG without its IEND chunk is a
 * truncated download, as in image-png.c. What WIC does not let us bound is
 * a progressive JPEG's number of scans (image-jpeg.c refuses more than
 * 256); Windows' decoder is what every Windows program trusts with them.
 *
 * Pixels come out as image-png.c's do (gray, or RGBA with alpha kept) and
 * image-jpeg.c's (gray when asked, else RGB). A gray PNG with an alpha
 * channel comes out of WIC as RGBA, so its file channels read 4, not 2;
 * its pixels convert to the same gray. A JPEG's gray is computed here from
 * its RGB and may differ from libjpeg-turbo's luma channel by one level.
 */
#define COBJMACROS
#include <objbase.h>
#include <wincodec.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image-impl.h"

struct wic_image {
    IWICImagingFactory *factory;
    IWICStream *stream;
    IWICBitmapDecoder *decoder;
    IWICBitmapFrameDecode *frame;
    bool com_started; /* ours to CoUninitialize */
    UINT width, height;
    int channels; /* as the file has them: 1, 3 or 4 (a palette counts as its colours) */
};

static void wic_close(struct wic_image *img)
{
    if (img->frame)
        IWICBitmapFrameDecode_Release(img->frame);
    if (img->decoder)
        IWICBitmapDecoder_Release(img->decoder);
    if (img->stream)
        IWICStream_Release(img->stream);
    if (img->factory)
        IWICImagingFactory_Release(img->factory);
    if (img->com_started)
        CoUninitialize();
    memset(img, 0, sizeof *img);
}

/* How many channels the frame's own pixel format holds: gray formats 1,
 * others 3, and 4 where the format (or a palette) carries transparency. */
static int file_channels(struct wic_image *img)
{
    WICPixelFormatGUID format;
    if (FAILED(IWICBitmapFrameDecode_GetPixelFormat(img->frame, &format)))
        return 3;
    if (IsEqualGUID(&format, &GUID_WICPixelFormatBlackWhite) ||
        IsEqualGUID(&format, &GUID_WICPixelFormat2bppGray) ||
        IsEqualGUID(&format, &GUID_WICPixelFormat4bppGray) ||
        IsEqualGUID(&format, &GUID_WICPixelFormat8bppGray) ||
        IsEqualGUID(&format, &GUID_WICPixelFormat16bppGray))
        return 1;
    int channels = 3;
    IWICComponentInfo *info = NULL;
    if (SUCCEEDED(IWICImagingFactory_CreateComponentInfo(img->factory, &format, &info))) {
        IWICPixelFormatInfo2 *pixel = NULL;
        if (SUCCEEDED(IWICComponentInfo_QueryInterface(info, &IID_IWICPixelFormatInfo2, (void **)&pixel))) {
            BOOL alpha = FALSE;
            if (SUCCEEDED(IWICPixelFormatInfo2_SupportsTransparency(pixel, &alpha)) && alpha)
                channels = 4;
            IWICPixelFormatInfo2_Release(pixel);
        }
        IWICComponentInfo_Release(info);
    }
    return channels;
}

/* Opens the first frame of a `container` file held in memory. */
static ember_status wic_open(ember_ctx *ctx, const char *name, const char *kind, const GUID *container,
                             const uint8_t *bytes, size_t len, struct wic_image *img)
{
    memset(img, 0, sizeof *img);
    if (len > 0xffffffffu)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: a %s file of %zu bytes; Windows' decoders read at most 4 GiB", name, kind,
                          len);
    HRESULT hr = CoInitializeEx(NULL, COINIT_MULTITHREADED);
    if (SUCCEEDED(hr))
        img->com_started = true; /* S_FALSE too: every successful call is matched */
    else if (hr != RPC_E_CHANGED_MODE)
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: cannot start COM for Windows Imaging Component (0x%08lx)", name,
                          (unsigned long)hr);
    const char *step = "start Windows Imaging Component";
    hr = CoCreateInstance(&CLSID_WICImagingFactory, NULL, CLSCTX_INPROC_SERVER, &IID_IWICImagingFactory,
                          (void **)&img->factory);
    if (SUCCEEDED(hr)) {
        step = "read the bytes";
        hr = IWICImagingFactory_CreateStream(img->factory, &img->stream);
    }
    if (SUCCEEDED(hr)) /* WIC reads the caller's buffer and never writes it */
        hr = IWICStream_InitializeFromMemory(img->stream, (BYTE *)bytes, (DWORD)len);
    if (SUCCEEDED(hr)) {
        step = "decode the header";
        hr = IWICImagingFactory_CreateDecoderFromStream(img->factory, (IStream *)img->stream, NULL,
                                                        WICDecodeMetadataCacheOnDemand, &img->decoder);
    }
    GUID found;
    if (SUCCEEDED(hr))
        hr = IWICBitmapDecoder_GetContainerFormat(img->decoder, &found);
    if (SUCCEEDED(hr) && !IsEqualGUID(&found, container)) {
        wic_close(img);
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: starts like a %s file but Windows decodes it as another format", name, kind);
    }
    if (SUCCEEDED(hr)) {
        step = "decode the first image";
        hr = IWICBitmapDecoder_GetFrame(img->decoder, 0, &img->frame);
    }
    if (SUCCEEDED(hr))
        hr = IWICBitmapFrameDecode_GetSize(img->frame, &img->width, &img->height);
    if (FAILED(hr)) {
        wic_close(img);
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: not a %s image ember can read (Windows Imaging Component could "
                          "not %s: 0x%08lx)",
                          name, kind, step, (unsigned long)hr);
    }
    if (img->width < 1 || img->height < 1 || img->width > EMBER_IMAGE_MAX_SIDE ||
        img->height > EMBER_IMAGE_MAX_SIDE) {
        ember_status st =
            ember_fail(ctx, EMBER_ERR_FORMAT, "%s: a %s of %ux%u pixels; ember reads sides of 1 to %d", name,
                       kind, img->width, img->height, EMBER_IMAGE_MAX_SIDE);
        wic_close(img);
        return st;
    }
    img->channels = file_channels(img);
    return EMBER_OK;
}

/* The frame's pixels converted to 8-bit gray (1), RGB (3) or RGBA (4).
 * WIC is asked for BGR and BGRA, the orders every version of its
 * converter takes from every format (Wine 8's turns a gray JPEG into
 * neither RGB nor RGBA: WINCODEC_ERR_UNSUPPORTEDOPERATION), and red and
 * blue are swapped here. */
static ember_status wic_pixels(ember_ctx *ctx, const char *name, const char *kind, struct wic_image *img,
                               int channels, uint8_t **pixels)
{
    const GUID *target = channels == 1   ? &GUID_WICPixelFormat8bppGray
                         : channels == 3 ? &GUID_WICPixelFormat24bppBGR
                                         : &GUID_WICPixelFormat32bppBGRA;
    UINT stride = img->width * (UINT)channels; /* at most 8192 * 4 */
    size_t size = (size_t)stride * img->height;
    uint8_t *out = ember_host_alloc(ctx, size);
    if (!out)
        return EMBER_ERR_NOMEM;
    IWICFormatConverter *converter = NULL;
    HRESULT hr = IWICImagingFactory_CreateFormatConverter(img->factory, &converter);
    if (SUCCEEDED(hr))
        hr = IWICFormatConverter_Initialize(converter, (IWICBitmapSource *)img->frame, target,
                                            WICBitmapDitherTypeNone, NULL, 0.0, WICBitmapPaletteTypeCustom);
    if (SUCCEEDED(hr))
        hr = IWICFormatConverter_CopyPixels(converter, NULL, stride, (UINT)size, out);
    if (converter)
        IWICFormatConverter_Release(converter);
    if (FAILED(hr)) {
        free(out);
        return ember_fail(ctx, EMBER_ERR_FORMAT,
                          "%s: cannot decode the %s image (Windows Imaging Component: 0x%08lx)", name, kind,
                          (unsigned long)hr);
    }
    if (channels > 1)
        for (size_t i = 0; i < size; i += (size_t)channels) {
            uint8_t blue = out[i];
            out[i] = out[i + 2];
            out[i + 2] = blue;
        }
    *pixels = out;
    return EMBER_OK;
}

static ember_status wic_info(ember_ctx *ctx, const char *name, const char *kind, const GUID *container,
                             const uint8_t *bytes, size_t len, int *width, int *height, int *channels)
{
    struct wic_image img;
    ember_status st = wic_open(ctx, name, kind, container, bytes, len, &img);
    if (st != EMBER_OK)
        return st;
    *width = (int)img.width;
    *height = (int)img.height;
    *channels = img.channels;
    wic_close(&img);
    return EMBER_OK;
}

/* In place, RGB to gray with JPEG's own weights (ITU-R BT.601: 0.299 R +
 * 0.587 G + 0.114 B, in 16-bit fixed point, rounded), so that a gray JPEG
 * data set reads within a level of libjpeg-turbo's luma on Linux. */
static void rgb_to_luma(uint8_t *px, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = px + 3 * i;
        px[i] = (uint8_t)((19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 32768u) >> 16);
    }
}

/* `want` 0 gives the file's own channels, as image-png.c does. */
static ember_status wic_decode(ember_ctx *ctx, const char *name, const char *kind, const GUID *container,
                               const uint8_t *bytes, size_t len, int want, int *width, int *height,
                               int *channels, uint8_t **pixels)
{
    *pixels = NULL;
    struct wic_image img;
    ember_status st = wic_open(ctx, name, kind, container, bytes, len, &img);
    if (st != EMBER_OK)
        return st;
    int have = want ? want : img.channels == 1 ? 1 : 4;
    size_t n = (size_t)img.width * img.height;
    /* A gray file is decoded as gray and copied out to RGB here (Wine 8's
     * converter turns a gray JPEG into no colour format); a colour JPEG's
     * gray is its luma, as libjpeg gives it, weighted here from RGB,
     * because WIC's own 8bppGray of a colour JPEG was 50 levels off
     * libjpeg's on average under Wine 8. */
    bool gray_file = img.channels == 1, luma = have == 1 && !gray_file;
    st = wic_pixels(ctx, name, kind, &img, gray_file ? 1 : luma ? 3 : have, pixels);
    if (st == EMBER_OK && luma)
        rgb_to_luma(*pixels, n);
    if (st == EMBER_OK && gray_file && have > 1) {
        uint8_t *wide = ember_host_alloc(ctx, n * (size_t)have);
        if (!wide) {
            free(*pixels);
            *pixels = NULL;
            st = EMBER_ERR_NOMEM;
        } else {
            for (size_t i = 0; i < n; i++)
                for (int k = 0; k < have; k++)
                    wide[i * (size_t)have + (size_t)k] = k < 3 ? (*pixels)[i] : 255;
            free(*pixels);
            *pixels = wide;
        }
    }
    if (st == EMBER_OK) {
        *width = (int)img.width;
        *height = (int)img.height;
        *channels = have;
    }
    wic_close(&img);
    return st;
}

ember_status ember_png_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                            int *height, int *channels)
{
    return wic_info(ctx, name, "PNG", &GUID_ContainerFormatPng, bytes, len, width, height, channels);
}

ember_status ember_png_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                              int *height, int *channels, uint8_t **pixels)
{
    *pixels = NULL;
    if (!ember_png_has_end(bytes, len))
        return ember_fail(ctx, EMBER_ERR_FORMAT, "%s: truncated: the PNG has no IEND chunk, its last", name);
    return wic_decode(ctx, name, "PNG", &GUID_ContainerFormatPng, bytes, len, 0, width, height, channels,
                      pixels);
}

ember_status ember_jpeg_info(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int *width,
                             int *height, int *channels)
{
    ember_status st =
        wic_info(ctx, name, "JPEG", &GUID_ContainerFormatJpeg, bytes, len, width, height, channels);
    if (st == EMBER_OK && *channels == 4) /* CMYK: ember reads it as RGB, as libjpeg-turbo converts */
        *channels = 3;
    return st;
}

ember_status ember_jpeg_decode(ember_ctx *ctx, const char *name, const uint8_t *bytes, size_t len, int want,
                               int *width, int *height, int *channels, uint8_t **pixels)
{
    return wic_decode(ctx, name, "JPEG", &GUID_ContainerFormatJpeg, bytes, len, want == 1 ? 1 : 3, width,
                      height, channels, pixels);
}
