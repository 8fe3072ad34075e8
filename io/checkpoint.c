/* SPDX-License-Identifier: MIT */
/*
 * io/checkpoint.c — parameter sets as safetensors files.
 *
 * A checkpoint holds each parameter under its name ("conv1.weight") as an
 * F32 tensor of its shape, which is what PyTorch's state_dict holds, so
 * load_state_dict(strict=True) takes the file as it is. The other way, a
 * state_dict PyTorch saved loads too: its I64 num_batches_tracked, and
 * F16, BF16 or F64 tensors, become float32 with every value checked. Either way all the
 * values cross between host and device once: save reads the flat tensor and
 * points each entry into that copy; load checks the whole file against the
 * set first, then fills a host copy of the flat tensor (padding zero) and
 * writes it back in one go, so a file that does not fit changes nothing.
 * Buffers (BatchNorm's running statistics) travel the same way in their own
 * flat tensor, under their own names, as in PyTorch's state_dict.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "json-impl.h"
#include "safetensors-impl.h"

/* Host copies of a set's two flat tensors, parameters and buffers. */
struct host_banks {
    float *flat, *buffers;
};

static ember_status banks_alloc(ember_ctx *ctx, const struct ember_params *p, struct host_banks *h)
{
    h->flat = ember_host_calloc(ctx, (size_t)ember_params_flat_used(p, false) + 1, sizeof *h->flat);
    h->buffers = ember_host_calloc(ctx, (size_t)ember_params_flat_used(p, true) + 1, sizeof *h->buffers);
    return h->flat && h->buffers ? EMBER_OK : EMBER_ERR_NOMEM;
}

static void banks_free(struct host_banks *h)
{
    free(h->flat);
    free(h->buffers);
}

/* where item i's values are in the host copies */
static float *host_values(const struct ember_params *p, const struct host_banks *h, int i)
{
    return (ember_params_is_buffer(p, i) ? h->buffers : h->flat) + ember_params_flat_index(p, i);
}

/* The caller's metadata with {"format": "pt"} in front, unless the caller
 * sets "format" itself: transformers and other PyTorch tooling look for it.
 * A list of odd length stays odd, for the writer to refuse. */
static const char **metadata_with_format(ember_ctx *ctx, const char *const *metadata)
{
    size_t n = 0, k = 0;
    bool has_format = false;
    for (; metadata && metadata[n]; n++)
        has_format |= n % 2 == 0 && strcmp(metadata[n], "format") == 0;
    const char **all = ember_host_alloc(ctx, (n + 3) * sizeof *all);
    if (!all)
        return NULL;
    if (!has_format)
        all[k++] = "format", all[k++] = "pt";
    for (size_t i = 0; i < n; i++)
        all[k++] = metadata[i];
    all[k] = NULL;
    return all;
}

/* Saves to `path`, or into a new buffer (*data, *size) when path is NULL. */
static ember_status params_save_to(const ember_params *p, const char *path, void **data, size_t *size,
                                   const char *const *metadata)
{
    ember_ctx *ctx = ember_params_ctx(p);
    struct ember_safetensors_tensor *tensors = NULL;
    const char **meta = NULL;
    struct host_banks host;
    ember_status status = banks_alloc(ctx, p, &host);
    if (status != EMBER_OK)
        goto done;
    status = EMBER_ERR_NOMEM;
    if (!(tensors = ember_host_alloc(ctx, (size_t)ember_params_count(p) * sizeof *tensors + 1)) ||
        !(meta = metadata_with_format(ctx, metadata)))
        goto done;
    status = EMBER_OK;
    if (ember_params_flat(p, false))
        status = ember_tensor_read(ember_params_flat(p, false), host.flat,
                                   (size_t)ember_params_flat_used(p, false) * sizeof *host.flat);
    if (status == EMBER_OK && ember_params_flat(p, true))
        status = ember_tensor_read(ember_params_flat(p, true), host.buffers,
                                   (size_t)ember_params_flat_used(p, true) * sizeof *host.buffers);
    if (status != EMBER_OK)
        goto done;
    for (int i = 0; i < ember_params_count(p); i++) {
        const struct ember_tensor *value = ember_params_at(p, i);
        tensors[i] = (struct ember_safetensors_tensor){.name = ember_params_name(p, i),
                                                       .ndim = ember_tensor_ndim(value),
                                                       .shape = ember_tensor_shape(value),
                                                       .values = host_values(p, &host, i)};
    }
    status = path ? ember_safetensors_save(ctx, path, tensors, ember_params_count(p), meta)
                  : ember_safetensors_save_memory(ctx, tensors, ember_params_count(p), meta, data, size);
done:
    free(meta);
    free(tensors);
    banks_free(&host);
    return status;
}

ember_status ember_params_save(const ember_params *p, const char *path, const char *const *metadata)
{
    if (!p)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_fail(ember_params_ctx(p), EMBER_ERR_ARG, "ember_params_save: NULL path");
    return params_save_to(p, path, NULL, NULL, metadata);
}

ember_status ember_params_save_memory(const ember_params *p, const char *const *metadata, void **data,
                                      size_t *size)
{
    if (!p)
        return EMBER_ERR_ARG;
    if (!data || !size)
        return ember_fail(ember_params_ctx(p), EMBER_ERR_ARG,
                          "saving a checkpoint to memory: NULL data or size");
    return params_save_to(p, NULL, data, size, metadata);
}

void ember_mismatch_note(struct ember_mismatch *m, const char *fmt, ...)
{
    va_list ap;
    if (m->count++ && m->len < sizeof m->text)
        m->len += (size_t)snprintf(m->text + m->len, sizeof m->text - m->len, "; ");
    if (m->len < sizeof m->text) {
        va_start(ap, fmt);
        m->len += (size_t)vsnprintf(m->text + m->len, sizeof m->text - m->len, fmt, ap);
        va_end(ap);
    }
}

const char *ember_mismatch_hint(const struct ember_safetensors *st)
{
    for (int i = 0; i < st->count; i++)
        if (strncmp(st->entries[i].name, "module.", 7) != 0)
            return "";
    return st->count
               ? "; every name in the file begins with \"module.\", as nn.DataParallel saves them: save "
                 "model.module.state_dict() instead"
               : "";
}

bool ember_entry_fits(const struct ember_tensor *t, const struct ember_safetensors_entry *e)
{
    if (ember_tensor_ndim(t) != e->ndim)
        return false;
    for (int d = 0; d < ember_tensor_ndim(t); d++)
        if ((uint64_t)ember_tensor_dim(t, d) != e->shape[d])
            return false;
    return true;
}

/* Every tensor of the file is one ember reads as float32: F32, or what
 * PyTorch's own state_dicts hold (I64 num_batches_tracked, F16, BF16, F64),
 * converted on loading with each value checked. Anything else (U8, BOOL,
 * 8-bit floats) is a format error rather than a mismatch. */
static ember_status check_dtypes(ember_ctx *ctx, const char *path, const struct ember_safetensors *st)
{
    for (int i = 0; i < st->count; i++)
        if (!ember_safetensors_convertible(st->entries[i].dtype))
            return ember_fail(ctx, EMBER_ERR_FORMAT,
                              "%s: tensor \"%.200s\" is %s; ember loads F32, F16, BF16, F64, I64 and I32 "
                              "(convert it to float32 before saving)",
                              path, st->entries[i].name, st->entries[i].dtype);
    return EMBER_OK;
}

/* The file holds exactly the set's names, each with the parameter's shape. */
static ember_status check_match(ember_ctx *ctx, const char *path, const struct ember_params *p,
                                const struct ember_safetensors *st)
{
    enum { NAMED_UNEXPECTED = 8 };
    struct ember_mismatch m = {.len = 0};
    char want[160], have[160];
    int found = 0;
    for (int i = 0; i < ember_params_count(p); i++) {
        const struct ember_tensor *value = ember_params_at(p, i);
        const struct ember_safetensors_entry *e = ember_safetensors_find(st, ember_params_name(p, i));
        ember_shape_str(value, want, sizeof want);
        if (!e) {
            ember_mismatch_note(&m, "missing %s %s", ember_params_name(p, i), want);
            continue;
        }
        found++;
        if (!ember_entry_fits(value, e))
            ember_mismatch_note(&m, "size mismatch for %s: the file has %s, the parameter is %s",
                                ember_params_name(p, i), ember_safetensors_shape_str(e, have, sizeof have),
                                want);
    }
    /* Every name of the set that the file has is found; the rest of the
     * file is unexpected. Name a few: a hostile file may hold millions. */
    int unexpected = st->count - found, named = 0;
    for (int i = 0; i < st->count && named < unexpected && named < NAMED_UNEXPECTED; i++) {
        const struct ember_safetensors_entry *e = &st->entries[i];
        if (!ember_params_find(p, e->name)) {
            ember_mismatch_note(&m, "unexpected %.200s %s", e->name,
                                ember_safetensors_shape_str(e, have, sizeof have));
            named++;
        }
    }
    if (unexpected > named)
        ember_mismatch_note(&m, "and %d more unexpected", unexpected - named);
    if (!m.count)
        return EMBER_OK;
    return ember_fail(ctx, EMBER_ERR_ARG, "%s does not match the parameter set (%d problem%s): %s%s", path,
                      m.count, m.count == 1 ? "" : "s", m.text, ember_mismatch_hint(st));
}

/* Statistics that cannot be: a BatchNorm's running variance (PyTorch's
 * name for it, "running_var", which ember's layers use too) below zero
 * would make every answer NaN. */
static ember_status check_statistics(ember_ctx *ctx, const char *path, const struct ember_params *p,
                                     const struct host_banks *h)
{
    static const char suffix[] = "running_var";
    for (int i = 0; i < ember_params_count(p); i++) {
        const char *name = ember_params_name(p, i);
        size_t n = strlen(name), k = sizeof suffix - 1;
        if (!ember_params_is_buffer(p, i) || n < k || strcmp(name + n - k, suffix) != 0 ||
            (n > k && name[n - k - 1] != '.'))
            continue;
        const float *v = host_values(p, h, i);
        int64_t count = ember_tensor_numel(ember_params_at(p, i));
        for (int64_t j = 0; j < count; j++)
            if (v[j] < 0.0f)
                return ember_fail(
                    ctx, EMBER_ERR_FORMAT,
                    "%s: tensor \"%s\" holds %g at index %lld: a running variance cannot be negative", path,
                    name, (double)v[j], (long long)j);
    }
    return EMBER_OK;
}

/* Loads an open file into the set, and closes it. */
static ember_status params_load_from(ember_params *p, struct ember_safetensors st)
{
    ember_ctx *ctx = ember_params_ctx(p);
    const char *path = st.path;
    struct host_banks host = {NULL, NULL};
    ember_status status;
    if ((status = check_dtypes(ctx, path, &st)) != EMBER_OK ||
        (status = check_match(ctx, path, p, &st)) != EMBER_OK)
        goto close;
    /* everything checked: only now is anything read, and the set written */
    if ((status = banks_alloc(ctx, p, &host)) != EMBER_OK)
        goto close;
    for (int i = 0; i < ember_params_count(p) && status == EMBER_OK; i++)
        status = ember_safetensors_read_as_f32(ctx, &st, ember_safetensors_find(&st, ember_params_name(p, i)),
                                               host_values(p, &host, i));
    if (status == EMBER_OK)
        status = check_statistics(ctx, path, p, &host);
    if (status == EMBER_OK && ember_params_flat(p, false))
        status = ember_tensor_write(ember_params_flat(p, false), host.flat,
                                    (size_t)ember_params_flat_used(p, false) * sizeof *host.flat);
    if (status == EMBER_OK && ember_params_flat(p, true))
        status = ember_tensor_write(ember_params_flat(p, true), host.buffers,
                                    (size_t)ember_params_flat_used(p, true) * sizeof *host.buffers);
close:
    banks_free(&host);
    ember_safetensors_close(&st);
    return status;
}

ember_status ember_params_load(ember_params *p, const char *path)
{
    if (!p)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_fail(ember_params_ctx(p), EMBER_ERR_ARG, "ember_params_load: NULL path");
    struct ember_safetensors st;
    ember_status status = ember_safetensors_open(ember_params_ctx(p), path, &st);
    return status == EMBER_OK ? params_load_from(p, st) : status;
}

ember_status ember_params_load_memory(ember_params *p, const void *data, size_t size)
{
    if (!p)
        return EMBER_ERR_ARG;
    struct ember_safetensors st;
    ember_status status =
        ember_safetensors_open_memory(ember_params_ctx(p), "the checkpoint in memory", data, size, &st);
    return status == EMBER_OK ? params_load_from(p, st) : status;
}

/* -------------------------------------------------------- reading metadata */

struct ember_checkpoint {
    struct ember_safetensors st;
    char **class_names; /* ember.class_names, parsed; NULL when absent or malformed */
    int class_count;
};

/* The names ember train records, read once at open. A value that is not a
 * JSON array of strings is as good as none: the caller falls back to the
 * class's index, and the context keeps whatever error it had before. */
static void read_class_names(ember_ctx *ctx, struct ember_checkpoint *ck)
{
    const char *json = ember_safetensors_meta_get(&ck->st, "ember.class_names");
    if (!json)
        return;
    ember_status kept = ember_last_status(ctx);
    char message[4096];
    snprintf(message, sizeof message, "%s", ember_last_error(ctx));
    if (ember_json_strings(ctx, json, &ck->class_names, &ck->class_count) != EMBER_OK)
        ember_error_restore(ctx, kept, message);
}

static void free_class_names(struct ember_checkpoint *ck)
{
    for (int i = 0; i < ck->class_count; i++)
        free(ck->class_names[i]);
    free(ck->class_names);
}

const char *ember_checkpoint_class_name(const ember_checkpoint *ck, int index)
{
    return ck && index >= 0 && index < ck->class_count ? ck->class_names[index] : NULL;
}

ember_checkpoint *ember_checkpoint_open(ember_ctx *ctx, const char *path)
{
    if (!ctx)
        return NULL;
    if (!path) {
        ember_fail(ctx, EMBER_ERR_ARG, "ember_checkpoint_open: NULL path");
        return NULL;
    }
    struct ember_checkpoint *ck = ember_host_calloc(ctx, 1, sizeof *ck);
    if (ck && ember_safetensors_open(ctx, path, &ck->st) != EMBER_OK) {
        free(ck);
        return NULL;
    }
    if (ck)
        read_class_names(ctx, ck);
    return ck;
}

ember_checkpoint *ember_checkpoint_open_memory(ember_ctx *ctx, const void *data, size_t size)
{
    if (!ctx)
        return NULL;
    struct ember_checkpoint *ck = ember_host_calloc(ctx, 1, sizeof *ck);
    if (ck &&
        ember_safetensors_open_memory(ctx, "the checkpoint in memory", data, size, &ck->st) != EMBER_OK) {
        free(ck);
        return NULL;
    }
    if (ck)
        read_class_names(ctx, ck);
    return ck;
}

void ember_checkpoint_close(ember_checkpoint *ck)
{
    if (!ck)
        return;
    ember_safetensors_close(&ck->st);
    free_class_names(ck);
    free(ck);
}

const char *ember_checkpoint_meta(const ember_checkpoint *ck, const char *key)
{
    return ck ? ember_safetensors_meta_get(&ck->st, key) : NULL;
}

int ember_checkpoint_meta_count(const ember_checkpoint *ck) { return ck ? ck->st.meta_count : 0; }

int ember_checkpoint_tensor_count(const ember_checkpoint *ck) { return ck ? ck->st.count : 0; }

int ember_checkpoint_tensor_shape(const ember_checkpoint *ck, const char *name, int64_t shape[EMBER_MAX_DIMS])
{
    const struct ember_safetensors_entry *e = ck && name ? ember_safetensors_find(&ck->st, name) : NULL;
    if (!e || e->ndim > EMBER_MAX_DIMS)
        return -1;
    for (int d = 0; d < e->ndim; d++) /* each size fits the file's bytes, so int64_t */
        shape[d] = (int64_t)e->shape[d];
    return e->ndim;
}

const char *ember_checkpoint_meta_at(const ember_checkpoint *ck, int index, const char **value)
{
    if (!ck || index < 0 || index >= ck->st.meta_count)
        return NULL;
    if (value)
        *value = ck->st.meta[index].value;
    return ck->st.meta[index].key;
}
