/* SPDX-License-Identifier: MIT */
/* base/report.c — a tree of facts, printed as text or JSON (see report-impl.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-impl.h"
#include "text-impl.h"

enum node_kind { NODE_OBJECT, NODE_ARRAY, NODE_STRING, NODE_INT, NODE_BOOL };

struct ember_report {
    enum node_kind kind;
    char *key, *label, *value; /* value: the scalar as text */
    struct ember_report *first, *last, *next;
};

static struct ember_report *node_add(struct ember_report *parent, enum node_kind kind, const char *key,
                                     const char *label)
{
    if (!parent)
        return NULL;
    struct ember_report *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = kind;
    n->key = key && parent->kind == NODE_OBJECT ? strdup(key) : NULL;
    n->label = label ? strdup(label) : NULL;
    if (parent->last)
        parent->last->next = n;
    else
        parent->first = n;
    parent->last = n;
    return n;
}

struct ember_report *ember_report_new(void)
{
    struct ember_report *root = calloc(1, sizeof *root);
    if (root)
        root->kind = NODE_OBJECT;
    return root;
}

void ember_report_free(struct ember_report *n)
{
    while (n) {
        struct ember_report *next = n->next;
        ember_report_free(n->first);
        free(n->key);
        free(n->label);
        free(n->value);
        free(n);
        n = next;
    }
}

struct ember_report *ember_report_object(struct ember_report *parent, const char *key, const char *label)
{
    return node_add(parent, NODE_OBJECT, key, label);
}

struct ember_report *ember_report_array(struct ember_report *parent, const char *key, const char *label)
{
    return node_add(parent, NODE_ARRAY, key, label);
}

void ember_report_string(struct ember_report *parent, const char *key, const char *label, const char *fmt,
                         ...)
{
    struct ember_report *n = node_add(parent, NODE_STRING, key, label);
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&n->value, fmt, ap) < 0)
        n->value = NULL;
    va_end(ap);
}

void ember_report_int(struct ember_report *parent, const char *key, const char *label, int64_t value)
{
    struct ember_report *n = node_add(parent, NODE_INT, key, label);
    if (n && asprintf(&n->value, "%" PRId64, value) < 0)
        n->value = NULL;
}

void ember_report_bool(struct ember_report *parent, const char *key, const char *label, bool value)
{
    struct ember_report *n = node_add(parent, NODE_BOOL, key, label);
    if (n)
        n->value = strdup(value ? "true" : "false");
}

/* ------------------------------------------------------------ printing */

static bool scalar(const struct ember_report *n) { return n->kind != NODE_OBJECT && n->kind != NODE_ARRAY; }

static void text_node(struct ember_text *o, const struct ember_report *n, int indent);

/* an object in an array: its first scalar is the heading line */
static void text_element(struct ember_text *o, const struct ember_report *e, int indent)
{
    if (scalar(e)) {
        ember_text_printf(o, "%*s%s\n", indent, "", e->value ? e->value : "");
        return;
    }
    const struct ember_report *head = e->first;
    while (head && !scalar(head))
        head = head->next;
    ember_text_printf(o, "%*s%s\n", indent, "", head && head->value ? head->value : "-");
    for (const struct ember_report *c = e->first; c; c = c->next)
        if (c != head)
            text_node(o, c, indent + 4);
}

static void text_node(struct ember_text *o, const struct ember_report *n, int indent)
{
    switch (n->kind) {
    case NODE_OBJECT:
        if (n->label)
            ember_text_printf(o, "%*s%s\n", indent, "", n->label);
        for (const struct ember_report *c = n->first; c; c = c->next)
            text_node(o, c, n->label ? indent + 2 : indent);
        return;
    case NODE_ARRAY:
        if (!n->label)
            return;
        ember_text_printf(o, "%*s%s:%s\n", indent, "", n->label, n->first ? "" : " none");
        for (const struct ember_report *c = n->first; c; c = c->next)
            text_element(o, c, indent + 2);
        return;
    default:
        if (n->label)
            ember_text_printf(o, "%*s%s: %s\n", indent, "", n->label, n->value ? n->value : "");
        return;
    }
}

char *ember_report_text(const struct ember_report *root)
{
    struct ember_text o = {0};
    if (root)
        text_node(&o, root, 0);
    return ember_text_take(&o);
}

static void json_node(struct ember_text *o, const struct ember_report *n, int indent)
{
    switch (n->kind) {
    case NODE_OBJECT:
    case NODE_ARRAY: {
        bool object = n->kind == NODE_OBJECT;
        ember_text_printf(o, "%c", object ? '{' : '[');
        for (const struct ember_report *c = n->first; c; c = c->next) {
            ember_text_printf(o, "\n%*s", indent + 2, "");
            if (object) {
                ember_text_json_string(o, c->key);
                ember_text_printf(o, ": ");
            }
            json_node(o, c, indent + 2);
            if (c->next)
                ember_text_printf(o, ",");
        }
        ember_text_printf(o, n->first ? "\n%*s%c" : "%*s%c", n->first ? indent : 0, "", object ? '}' : ']');
        return;
    }
    case NODE_STRING: ember_text_json_string(o, n->value); return;
    default: ember_text_printf(o, "%s", n->value ? n->value : "null"); return;
    }
}

char *ember_report_json(const struct ember_report *root)
{
    struct ember_text o = {0};
    if (root) {
        json_node(&o, root, 0);
        ember_text_add(&o, "\n", 1);
    }
    return ember_text_take(&o);
}
