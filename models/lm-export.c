/* SPDX-License-Identifier: MIT */
/*
 * models/lm-export.c — a fine-tuned language model back out as a GGUF file
 * llama.cpp runs: each adapted projection's weight becomes
 *
 *     W' = W + (alpha / r) B A
 *
 * (after full fine-tuning, lm-full.c, every weight is its trained value)
 * in the type asked for (F32, F16, Q8_0 or Q4_0; a fully trained norm or
 * bias in F32, as llama.cpp wants them), and everything else, the
 * metadata (tokenizer, chat template, shapes) and every other tensor, is
 * the file the model was loaded from, byte for byte. The file is built in
 * memory, then written beside its path and renamed over it.
 *
 * The quantisers are ggml's reference ones, as the `gguf` Python package
 * writes them (tests/interop/test_lora_vs_torch.py holds them to it):
 * Q8_0 stores d = max|x| / 127 in half precision and round(x / d) rounded
 * half away from zero; Q4_0 d = m / -8, m the value of largest magnitude,
 * and min(15, trunc(x / d + 8.5)), two to a byte (weight i in the low half
 * of byte i, weight i + 16 in its high half).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files-impl.h"
#include "lm-impl.h"

enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q4_0 = 2, GGML_Q8_0 = 8 };

/* float to IEEE half, rounded to nearest even (NumPy's astype(float16)) */
static uint16_t half_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) /* infinity, NaN */
        return (uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0u));
    if (mag >= 0x477ff000u) /* 65520 and up round to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (mag < 0x38800000u) { /* below 2^-14: a subnormal half, in steps of 2^-24 (exact scaling) */
        float v;
        memcpy(&v, &mag, sizeof v);
        return (uint16_t)(sign | (uint32_t)lrintf(v * 16777216.0f));
    }
    uint32_t h = ((mag >> 23) - 112u) << 10 | (mag & 0x7fffffu) >> 13, rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry into the exponent is the right rounding too */
    return (uint16_t)(sign | h);
}

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }

/* n floats (a whole number of 32-blocks for the quantised types) as `type` into out */
static void encode(uint32_t type, const float *x, int64_t n, uint8_t *out)
{
    if (type == GGML_F32) {
        memcpy(out, x, (size_t)n * sizeof *x);
        return;
    }
    if (type == GGML_F16) {
        for (int64_t i = 0; i < n; i++)
            put_u16(out + 2 * i, half_of(x[i]));
        return;
    }
    for (int64_t b = 0; b < n / 32; b++, x += 32) {
        if (type == GGML_Q8_0) {
            float amax = 0.0f;
            for (int i = 0; i < 32; i++)
                amax = fmaxf(amax, fabsf(x[i]));
            float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            put_u16(out, half_of(d));
            for (int i = 0; i < 32; i++)
                out[2 + i] = (uint8_t)(int8_t)roundf(x[i] * id);
            out += 34;
        } else { /* Q4_0 */
            float m = 0.0f;
            for (int i = 0; i < 32; i++)
                if (fabsf(x[i]) > fabsf(m))
                    m = x[i];
            float d = m / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            put_u16(out, half_of(d));
            for (int i = 0; i < 16; i++) {
                int lo = (int)(x[i] * id + 8.5f), hi = (int)(x[i + 16] * id + 8.5f);
                out[2 + i] = (uint8_t)((lo > 15 ? 15 : lo) | (hi > 15 ? 15 : hi) << 4);
            }
            out += 18;
        }
    }
}

static int64_t encoded_bytes(uint32_t type, int64_t n)
{
    return type == GGML_F32    ? 4 * n
           : type == GGML_F16  ? 2 * n
           : type == GGML_Q8_0 ? n / 32 * 34
                               : n / 32 * 18;
}

/* which adapted projection tensor `name` is: its block and projection, or
 * false; after full fine-tuning, whether it is trained (*block -1) */
static bool adapted(const ember_lm *lm, const struct gguf_string *name, int64_t *block, int *proj)
{
    static const char *const gguf_name[LM_PROJS] = {"attn_q",   "attn_k", "attn_v",  "attn_output",
                                                    "ffn_gate", "ffn_up", "ffn_down"};
    char text[GGUF_MAX_NAME + 1];
    snprintf(text, sizeof text, "%.*s", (int)name->len, name->data);
    if (lm->full) {
        *block = -1, *proj = -1;
        return ember_params_find(lm->full, text) != NULL;
    }
    for (int64_t i = 0; i < lm->blocks; i++)
        for (int p = 0; p < LM_PROJS; p++) {
            char want[64];
            snprintf(want, sizeof want, "blk.%lld.%s.weight", (long long)i, gguf_name[p]);
            if (lm->block[i].lora_a[p] && strcmp(text, want) == 0) {
                *block = i, *proj = p;
                return true;
            }
        }
    return false;
}

/* W + scale B A into w (rows, cols), the adapters read from the device,
 * B's rows (PEFT's order) taken in the file's (lm_hf_row) */
static ember_status merge(ember_lm *lm, int64_t block, int p, float *w, int64_t rows, int64_t cols)
{
    int64_t r = lm->lora_rank;
    float *a = malloc((size_t)(r * cols) * sizeof *a), *b = malloc((size_t)(rows * r) * sizeof *b);
    ember_status st = !a || !b
                          ? ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory merging adapters")
                          : ember_tensor_read(lm->block[block].lora_a[p], a, (size_t)(r * cols) * sizeof *a);
    if (st == EMBER_OK)
        st = ember_tensor_read(lm->block[block].lora_b[p], b, (size_t)(rows * r) * sizeof *b);
    for (int64_t o = 0; st == EMBER_OK && o < rows; o++)
        for (int64_t k = 0; k < r; k++) {
            float s = lm->lora_scale * b[lm_hf_row(lm, p, o) * r + k];
            const float *ak = a + k * cols;
            float *wo = w + o * cols;
            for (int64_t i = 0; i < cols; i++)
                wo[i] += s * ak[i];
        }
    free(a);
    free(b);
    return st;
}

static void put_bytes(uint8_t **at, const void *p, size_t n)
{
    memcpy(*at, p, n);
    *at += n;
}

ember_status ember_lm_save_merged(ember_lm *lm, const char *path, const char *type_name)
{
    if (!lm)
        return EMBER_ERR_ARG;
    static const struct {
        const char *name;
        uint32_t type;
    } types[] = {{"F32", GGML_F32}, {"F16", GGML_F16}, {"Q8_0", GGML_Q8_0}, {"Q4_0", GGML_Q4_0}};
    char upper[8] = ""; /* q8_0 as Q8_0 */
    for (size_t i = 0; type_name && type_name[i] && i < sizeof upper - 1; i++)
        upper[i] = (char)toupper((unsigned char)type_name[i]), upper[i + 1] = 0;
    int t = -1;
    for (int i = 0; i < 4 && type_name && strlen(type_name) < sizeof upper; i++)
        if (strcmp(upper, types[i].name) == 0)
            t = i;
    if (!path || t < 0)
        return ember_set_error(lm->ctx, EMBER_ERR_ARG,
                               "ember_lm_save_merged takes a path and a type, F32, F16, Q8_0 or Q4_0; not %s",
                               type_name ? type_name : "none");
    uint32_t type = types[t].type;
    struct gguf_file f;
    if (gguf_open(lm->ctx, lm->path, &f) != EMBER_OK)
        return ember_last_status(lm->ctx);
    ember_status st = EMBER_OK;
    /* the layout: the header and metadata as they are, the tensors' table anew, then their data */
    /* the table starts where the metadata ends: at its first name's length (f.tensors is sorted by name) */
    size_t head = f.size, table = 0;
    for (int64_t i = 0; i < f.tensor_count; i++) {
        size_t at = (size_t)((const uint8_t *)f.tensors[i].name.data - 8 - f.data);
        head = at < head ? at : head;
    }
    uint64_t *bytes = calloc((size_t)f.tensor_count + 1, sizeof *bytes), data_bytes = 0;
    uint32_t *new_type = calloc((size_t)f.tensor_count + 1, sizeof *new_type);
    if (!bytes || !new_type || !f.tensor_count)
        st = ember_set_error(lm->ctx, !f.tensor_count ? EMBER_ERR_FORMAT : EMBER_ERR_NOMEM,
                             !f.tensor_count ? "%s has no tensors" : "out of host memory for %s's table",
                             lm->path);
    for (int64_t i = 0; st == EMBER_OK && i < f.tensor_count; i++) {
        const struct gguf_tensor *x = &f.tensors[i];
        int64_t block;
        int p;
        new_type[i] = x->type;
        bytes[i] = x->bytes;
        if (adapted(lm, &x->name, &block, &p)) {
            new_type[i] = x->ndim == 2 ? type : GGML_F32; /* a norm or a bias stays F32 */
            if (new_type[i] != GGML_F32 && new_type[i] != GGML_F16 && x->shape[x->ndim - 1] % 32 != 0)
                st = ember_set_error(lm->ctx, EMBER_ERR_UNSUPPORTED,
                                     "%.*s's rows are not whole blocks of 32 for %s", (int)x->name.len,
                                     x->name.data, types[t].name);
            bytes[i] = (uint64_t)encoded_bytes(new_type[i], x->numel);
        }
        table += 8 + x->name.len + 4 + 8 * (size_t)x->ndim + 4 + 8;
        data_bytes = (data_bytes + f.alignment - 1) / f.alignment * f.alignment + bytes[i];
    }
    size_t start = (head + table + f.alignment - 1) / f.alignment * f.alignment, size = start + data_bytes;
    uint8_t *out = st == EMBER_OK ? calloc(1, size) : NULL;
    if (st == EMBER_OK && !out)
        st = ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory for the %zu bytes of %s", size,
                             path);
    float *w = NULL;
    if (st == EMBER_OK) {
        uint8_t *at = out;
        put_bytes(&at, f.data, head);
        uint64_t offset = 0;
        for (int64_t i = 0; i < f.tensor_count; i++) {
            const struct gguf_tensor *x = &f.tensors[i];
            uint32_t ndim = (uint32_t)x->ndim;
            put_bytes(&at, &x->name.len, 8);
            put_bytes(&at, x->name.data, x->name.len);
            put_bytes(&at, &ndim, 4);
            for (int d = x->ndim - 1; d >= 0; d--) /* ggml's order: a row's length first */
                put_bytes(&at, &x->shape[d], 8);
            put_bytes(&at, &new_type[i], 4);
            offset = (offset + f.alignment - 1) / f.alignment * f.alignment;
            put_bytes(&at, &offset, 8);
            offset += bytes[i];
        }
    }
    for (int64_t i = 0, offset = 0; st == EMBER_OK && i < f.tensor_count; i++) {
        const struct gguf_tensor *x = &f.tensors[i];
        offset = (offset + (int64_t)f.alignment - 1) / (int64_t)f.alignment * (int64_t)f.alignment;
        int64_t block;
        int p;
        if (!adapted(lm, &x->name, &block, &p)) {
            memcpy(out + start + offset, x->data, x->bytes);
        } else {
            free(w);
            if (!(w = malloc((size_t)x->numel * sizeof *w)))
                st = ember_set_error(lm->ctx, EMBER_ERR_NOMEM, "out of host memory merging %.*s",
                                     (int)x->name.len, x->name.data);
            if (st == EMBER_OK && block < 0) { /* fully trained: its value as trained */
                char text[GGUF_MAX_NAME + 1];
                snprintf(text, sizeof text, "%.*s", (int)x->name.len, x->name.data);
                if ((st = ember_tensor_read(ember_params_find(lm->full, text), w,
                                            (size_t)x->numel * sizeof *w)) == EMBER_OK)
                    encode(new_type[i], w, x->numel, out + start + offset);
            } else if (st == EMBER_OK && (st = gguf_tensor_to_f32(lm->ctx, x, w)) == EMBER_OK &&
                       (st = merge(lm, block, p, w, x->shape[0], x->shape[1])) == EMBER_OK)
                encode(new_type[i], w, x->numel, out + start + offset);
        }
        offset += (int64_t)bytes[i];
    }
    free(w);
    free(bytes);
    free(new_type);
    gguf_close(&f);
    if (st == EMBER_OK) {
        char kept[4200];
        int err = ember_write_file_whole(path, out, size, kept, sizeof kept);
        if (err == EBUSY)
            st = ember_set_error(
                lm->ctx, EMBER_ERR_IO,
                "cannot replace %s: another program has it open, and Windows replaces no file "
                "that is open; it is unchanged, and the merged model is %s",
                path, kept);
        else if (err)
            st = ember_set_error(lm->ctx, EMBER_ERR_IO, "cannot write %s: %s", path, strerror(err));
    }
    free(out);
    return st;
}
