/* SPDX-License-Identifier: MIT */
/*
 * models/model-onnx-names.c — the ONNX import's layers named and written
 * out as a model file (model-onnx-import-impl.h): PyTorch's module names
 * recovered from the weights' names or the nodes' scopes, made unique, and
 * each block (residual, concat, gate) named after the prefix its layers share, so that
 * the generated file's parameters carry the names PyTorch's state_dict
 * has.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-onnx-import-impl.h"

static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= MODEL_NAME_MAX / 2 || s[0] == '.' || s[n - 1] == '.' || strstr(s, "..") ||
        strcmp(s, "self") == 0)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.')
            return false;
    return true;
}

/* "fc.weight" gives "fc"; "/layer2/layer2.0/downsample/downsample.0/Conv"
 * gives "layer2.0.downsample.0" (PyTorch's scopes, each a module, a
 * Sequential's child written as "parent.index") */
void onnx_name_layer(struct imp_layer *l, const char *weight)
{
    size_t n = weight ? strlen(weight) : 0;
    char name[MODEL_NAME_MAX] = "";
    if (n > 7 && n < sizeof name && strcmp(weight + n - 7, ".weight") == 0) {
        snprintf(name, sizeof name, "%.*s", (int)(n - 7), weight);
        if (valid_name(name)) {
            snprintf(l->name, sizeof l->name, "%s", name);
            return;
        }
    }
    const char *scope = l->node ? l->node->name : "";
    if (scope[0] != '/')
        return;
    char last[MODEL_NAME_MAX] = "";
    name[0] = '\0';
    for (const char *at = scope + 1; *at;) {
        size_t len = strcspn(at, "/");
        if (!at[len]) /* the last part is the operator */
            break;
        char part[MODEL_NAME_MAX];
        snprintf(part, sizeof part, "%.*s", (int)len, at);
        size_t lastlen = strlen(last), have = strlen(name);
        if (lastlen && strncmp(part, last, lastlen) == 0 && part[lastlen] == '.')
            snprintf(name + have, sizeof name - have, "%s", part + lastlen);
        else if (snprintf(name + have, sizeof name - have, "%s%s", have ? "." : "", part) >=
                 (int)(sizeof name - have))
            return; /* too long to be a layer's name */
        snprintf(last, sizeof last, "%s", part);
        at += len + 1;
    }
    if (valid_name(name))
        snprintf(l->name, sizeof l->name, "%s", name);
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* the item index of name, or -1; *slot is where it is or would go */
static int names_find(const struct onnx_names *ns, const char *name, int *slot)
{
    if (!ns->slot_count)
        return -1;
    int mask = ns->slot_count - 1;
    for (int at = (int)(name_hash(name) & (uint32_t)mask);; at = (at + 1) & mask) {
        if (!ns->slots[at] || strcmp(ns->items[ns->slots[at] - 1], name) == 0) {
            if (slot)
                *slot = at;
            return ns->slots[at] - 1;
        }
    }
}

static bool names_has(const struct onnx_names *ns, const char *name)
{
    return names_find(ns, name, NULL) >= 0;
}

static bool names_add(struct onnx_names *ns, const char *name)
{
    if (ns->count == ns->cap) {
        int cap = ns->cap ? 2 * ns->cap : 64;
        void *more = realloc(ns->items, (size_t)cap * sizeof *ns->items);
        if (!more)
            return false;
        ns->items = more;
        int *next = realloc(ns->next_suffix, (size_t)cap * sizeof *next);
        if (!next)
            return false;
        ns->next_suffix = next;
        ns->cap = cap;
    }
    if (2 * (ns->count + 1) > ns->slot_count) { /* rehashed into twice the slots */
        int count = ns->slot_count ? 2 * ns->slot_count : 128;
        int *slots = calloc((size_t)count, sizeof *slots);
        if (!slots)
            return false;
        free(ns->slots);
        ns->slots = slots;
        ns->slot_count = count;
        for (int i = 0; i < ns->count; i++) {
            int at = 0;
            names_find(ns, ns->items[i], &at);
            ns->slots[at] = i + 1;
        }
    }
    int at = 0;
    if (names_find(ns, name, &at) >= 0)
        return true;
    snprintf(ns->items[ns->count], sizeof ns->items[0], "%s", name);
    ns->next_suffix[ns->count] = 2;
    ns->slots[at] = ++ns->count;
    return true;
}

void onnx_names_free(struct onnx_names *ns)
{
    free(ns->items);
    free(ns->next_suffix);
    free(ns->slots);
    *ns = (struct onnx_names){0};
}

/* Names taken twice get "_2", "_3"...; every name is then recorded. */
bool onnx_unique_names(struct imp_block *b, struct onnx_names *ns)
{
    for (int i = 0; i < b->count; i++) {
        struct imp_layer *l = &b->items[i];
        if (!onnx_unique_names(&l->body, ns) || !onnx_unique_names(&l->second, ns))
            return false;
        if (!l->name[0])
            continue;
        int taken = names_find(ns, l->name, NULL);
        if (taken >= 0) { /* from the suffix this name reached last time */
            char base[MODEL_NAME_MAX];
            snprintf(base, sizeof base, "%.*s", MODEL_NAME_MAX / 2 - 8, l->name);
            int k = ns->next_suffix[taken];
            do {
                if (snprintf(l->name, sizeof l->name, "%s_%d", base, k++) >= (int)sizeof l->name)
                    return false;
            } while (names_has(ns, l->name));
            ns->next_suffix[taken] = k;
        }
        if (!names_add(ns, l->name))
            return false;
    }
    return true;
}

/* The dotted prefix that every named layer under b shares, short of each
 * one's last part: "layer1.0" for layer1.0.conv1 and layer1.0.bn1. */
static void common_prefix(const struct imp_block *b, char *prefix, bool *first)
{
    for (int i = 0; i < b->count; i++) {
        const struct imp_layer *l = &b->items[i];
        common_prefix(&l->body, prefix, first);
        common_prefix(&l->second, prefix, first);
        if (!l->name[0] || imp_is_block(l))
            continue;
        const char *dot = strrchr(l->name, '.');
        size_t len = dot ? (size_t)(dot - l->name) : 0;
        if (*first) {
            snprintf(prefix, MODEL_NAME_MAX, "%.*s", (int)len, l->name);
            *first = false;
            continue;
        }
        size_t k = 0; /* the longest shared run of whole parts */
        while (k < len && prefix[k] && prefix[k] == l->name[k])
            k++;
        if (!((k == len || l->name[k] == '.') && (!prefix[k] || prefix[k] == '.')))
            while (k > 0 && prefix[k - 1] != '.')
                k--;
        while (k > 0 && prefix[k - 1] == '.')
            k--;
        prefix[k] = '\0';
    }
}

/* A model file being written: its text grows to IMPORT_MAX_TEXT at most. */
void onnx_text_add(struct onnx_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->failed || n < 0 || t->len + (size_t)n + 1 > IMPORT_MAX_TEXT) {
        t->failed = true;
        return;
    }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)n + 1)
            cap *= 2;
        char *more = realloc(t->s, cap);
        if (!more) {
            t->failed = true;
            return;
        }
        t->s = more;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* The block's layers as model-file lines. `prefix` is the block's full
 * name (its layers' names are written relative to it); `second` the word
 * of the list being written when it is a block's second ("shortcut",
 * "branch"), which ember puts before an unnamed layer's index; an unnamed
 * layer, which ember names by its index, gets a name of its own where that
 * index name is taken. */
void onnx_emit(struct onnx_text *t, struct imp_block *b, const char *prefix, const char *second, int indent,
               struct onnx_names *ns)
{
    size_t plen = strlen(prefix);
    for (int i = 0; i < b->count; i++) {
        struct imp_layer *l = &b->items[i];
        char rel[MODEL_NAME_MAX] = "", child[MODEL_NAME_MAX] = "";
        if (imp_is_block(l)) { /* named after the prefix its layers share */
            bool first = true;
            common_prefix(&l->body, child, &first);
            common_prefix(&l->second, child, &first);
            /* the join's own scope where it holds them all: ShuffleNet's "stage2.1"
             * for layers stage2.1.branch2.0, ..., not "stage2.1.branch2" */
            struct imp_layer scope = {.node = l->node};
            onnx_name_layer(&scope, NULL);
            size_t slen = strlen(scope.name);
            if (slen && strncmp(child, scope.name, slen) == 0 && child[slen] == '.')
                child[slen] = '\0';
            bool deeper = child[0] && strlen(child) > plen &&
                          (!plen || (strncmp(child, prefix, plen) == 0 && child[plen] == '.'));
            if (deeper && !names_has(ns, child) && names_add(ns, child))
                snprintf(rel, sizeof rel, "%s", child + (plen ? plen + 1 : 0));
            else
                snprintf(rel, sizeof rel, "self"), child[0] = '\0';
            const char *word = strcmp(l->type, "residual") == 0 ? "shortcut" : "branch";
            onnx_text_add(t, "%*s%s: %s\n", indent, "", rel, l->type);
            onnx_emit(t, &l->body, child, NULL, indent + 4, ns);
            if (l->second.count || strcmp(l->type, "concat") == 0) {
                onnx_text_add(t, "%*s%s\n", indent, "", word);
                onnx_emit(t, &l->second, child, word, indent + 4, ns);
            }
            onnx_text_add(t, "%*send\n", indent, "");
            continue;
        }
        if (l->name[0]) {
            snprintf(rel, sizeof rel, "%s", l->name + (plen ? plen + 1 : 0));
        } else { /* ember names it by its index; by another name where a layer has that one */
            char full[2 * MODEL_NAME_MAX];
            snprintf(full, sizeof full, "%s%s%s%s%d", prefix, plen ? "." : "", second ? second : "",
                     second ? "." : "", i);
            /* from where the last such search ended: n of them cost n tries in all */
            int k = i > ns->next_index_name ? i : ns->next_index_name;
            for (; names_has(ns, full); k++) {
                snprintf(rel, sizeof rel, "%s_%d", l->type, k);
                snprintf(full, sizeof full, "%s%s%s", prefix, plen ? "." : "", rel);
            }
            ns->next_index_name = k;
            names_add(ns, full);
        }
        onnx_text_add(t, "%*s%s%s%s%s%s\n", indent, "", rel, rel[0] ? ": " : "", l->type,
                      l->options[0] ? " " : "", l->options);
    }
}
