/* SPDX-License-Identifier: MIT */
/*
 * io/checkpoint-init.c — a parameter set started from another's weights,
 * for fine-tuning (ember_params_init_from; `ember train --init`).
 *
 * Unlike ember_params_load, some layers may be left as they are (a new
 * head for another class count): every name under a skipped prefix is
 * ignored on both sides. Everything else must match by name and shape, and
 * the error lists each difference, as PyTorch's strict load_state_dict
 * does. All is checked, then all is read into host memory, and only then
 * is anything written: a failure changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "safetensors-impl.h"

/* `name` is `prefix` or under it ("fc" covers fc.weight, not fc2.weight) */
static bool under(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 && (name[n] == '\0' || name[n] == '.');
}

static bool skipped(const char *name, const char *const *skip)
{
    for (int i = 0; skip && skip[i]; i++)
        if (under(name, skip[i]))
            return true;
    return false;
}

static ember_status init_from(ember_params *p, struct ember_safetensors *st, const char *what,
                              const char *const *skip)
{
    ember_ctx *ctx = ember_params_ctx(p);
    struct ember_mismatch m = {.len = 0};
    char want[160], have[160];
    for (int i = 0; skip && skip[i]; i++) { /* a skip that names nothing is a typo */
        bool found = false;
        for (int k = 0; k < ember_params_count(p) && !found; k++)
            found = under(ember_params_name(p, k), skip[i]);
        if (!found)
            return ember_fail(ctx, EMBER_ERR_ARG,
                              "%s: no layer of the model is named \"%s\" (to leave freshly "
                              "initialised); its parameters are named like %s",
                              what, skip[i],
                              ember_params_count(p) ? ember_params_name(p, ember_params_count(p) - 1)
                                                    : "nothing");
    }
    for (int i = 0; i < ember_params_count(p); i++) {
        const char *name = ember_params_name(p, i);
        if (skipped(name, skip))
            continue;
        const struct ember_safetensors_entry *e = ember_safetensors_find(st, name);
        ember_shape_str(ember_params_at(p, i), want, sizeof want);
        if (!e)
            ember_mismatch_note(&m, "missing %s %s", name, want);
        else if (!ember_entry_fits(ember_params_at(p, i), e))
            ember_mismatch_note(&m, "%s is %s in the file but %s in the model", name,
                                ember_safetensors_shape_str(e, have, sizeof have), want);
        else if (!ember_safetensors_convertible(e->dtype))
            ember_mismatch_note(&m, "%s is %s, which ember does not read", name, e->dtype);
    }
    for (int i = 0, named = 0; i < st->count; i++) {
        const struct ember_safetensors_entry *e = &st->entries[i];
        if (skipped(e->name, skip) || ember_params_find(p, e->name))
            continue;
        if (named++ < 8)
            ember_mismatch_note(&m, "unexpected %.200s %s", e->name,
                                ember_safetensors_shape_str(e, have, sizeof have));
    }
    if (m.count)
        return ember_fail(ctx, EMBER_ERR_ARG,
                          "%s does not fit the model (%d difference%s): %s%s; leave a layer "
                          "freshly initialised by naming it in ember_params_init_from's skip",
                          what, m.count, m.count == 1 ? "" : "s", m.text, ember_mismatch_hint(st));
    /* everything checked: read all, then write all */
    float **values = ember_host_calloc(ctx, (size_t)ember_params_count(p) + 1, sizeof *values);
    ember_status status = values ? EMBER_OK : EMBER_ERR_NOMEM;
    for (int i = 0; status == EMBER_OK && i < ember_params_count(p); i++) {
        if (skipped(ember_params_name(p, i), skip))
            continue;
        int64_t n = ember_tensor_numel(ember_params_at(p, i));
        if (!(values[i] = ember_host_alloc(ctx, (size_t)n * sizeof(float) + 1)))
            status = EMBER_ERR_NOMEM;
        else
            status = ember_safetensors_read_as_f32(
                ctx, st, ember_safetensors_find(st, ember_params_name(p, i)), values[i]);
    }
    for (int i = 0; status == EMBER_OK && i < ember_params_count(p); i++)
        if (values[i])
            status = ember_tensor_write(ember_params_at(p, i), values[i],
                                        (size_t)ember_tensor_numel(ember_params_at(p, i)) * sizeof(float));
    for (int i = 0; values && i < ember_params_count(p); i++)
        free(values[i]);
    free(values);
    return status;
}

ember_status ember_params_init_from(ember_params *p, const char *path, const void *data, size_t size,
                                    const char *const *skip)
{
    if (!p)
        return EMBER_ERR_ARG;
    if (!path)
        return ember_fail(ember_params_ctx(p), EMBER_ERR_ARG, "ember_params_init_from: NULL path");
    struct ember_safetensors st;
    ember_status status = data ? ember_safetensors_open_memory(ember_params_ctx(p), path, data, size, &st)
                               : ember_safetensors_open(ember_params_ctx(p), path, &st);
    if (status != EMBER_OK)
        return status;
    status = init_from(p, &st, path, skip);
    ember_safetensors_close(&st);
    return status;
}
