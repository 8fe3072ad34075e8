/* core/report.c — a tree of facts, printed as text or JSON (see report-impl.h). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-impl.h"

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

void ember_report_string(struct ember_report *parent, const char *key, const char *label, const char *fmt, ...)
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

struct out {
    char *text;
    size_t len, cap;
    bool failed;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (o->failed || n < 0)
        return;
    if (o->len + (size_t)n + 1 > o->cap) {
        size_t cap = (o->len + (size_t)n + 1) * 2;
        char *p = realloc(o->text, cap);
        if (!p) {
            o->failed = true;
            return;
        }
        o->text = p;
        o->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(o->text + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    o->len += (size_t)n;
}

static char *finish(struct out *o)
{
    if (o->failed || !o->text) {
        free(o->text);
        return o->failed ? NULL : strdup("");
    }
    return o->text;
}

static bool scalar(const struct ember_report *n)
{
    return n->kind != NODE_OBJECT && n->kind != NODE_ARRAY;
}

static void text_node(struct out *o, const struct ember_report *n, int indent);

/* an object in an array: its first scalar is the heading line */
static void text_element(struct out *o, const struct ember_report *e, int indent)
{
    if (scalar(e)) {
        put(o, "%*s%s\n", indent, "", e->value ? e->value : "");
        return;
    }
    const struct ember_report *head = e->first;
    while (head && !scalar(head))
        head = head->next;
    put(o, "%*s%s\n", indent, "", head && head->value ? head->value : "-");
    for (const struct ember_report *c = e->first; c; c = c->next)
        if (c != head)
            text_node(o, c, indent + 4);
}

static void text_node(struct out *o, const struct ember_report *n, int indent)
{
    switch (n->kind) {
    case NODE_OBJECT:
        if (n->label)
            put(o, "%*s%s\n", indent, "", n->label);
        for (const struct ember_report *c = n->first; c; c = c->next)
            text_node(o, c, n->label ? indent + 2 : indent);
        return;
    case NODE_ARRAY:
        if (!n->label)
            return;
        put(o, "%*s%s:%s\n", indent, "", n->label, n->first ? "" : " none");
        for (const struct ember_report *c = n->first; c; c = c->next)
            text_element(o, c, indent + 2);
        return;
    default:
        if (n->label)
            put(o, "%*s%s: %s\n", indent, "", n->label, n->value ? n->value : "");
        return;
    }
}

char *ember_report_text(const struct ember_report *root)
{
    struct out o = {0};
    if (root)
        text_node(&o, root, 0);
    return finish(&o);
}

static void json_string(struct out *o, const char *s)
{
    put(o, "\"");
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            put(o, "\\%c", *p);
        else if (*p == '\n')
            put(o, "\\n");
        else if (*p < 0x20)
            put(o, "\\u%04x", *p);
        else
            put(o, "%c", *p);
    }
    put(o, "\"");
}

static void json_node(struct out *o, const struct ember_report *n, int indent)
{
    switch (n->kind) {
    case NODE_OBJECT:
    case NODE_ARRAY: {
        bool object = n->kind == NODE_OBJECT;
        put(o, "%c", object ? '{' : '[');
        for (const struct ember_report *c = n->first; c; c = c->next) {
            put(o, "\n%*s", indent + 2, "");
            if (object) {
                json_string(o, c->key);
                put(o, ": ");
            }
            json_node(o, c, indent + 2);
            if (c->next)
                put(o, ",");
        }
        put(o, n->first ? "\n%*s%c" : "%*s%c", n->first ? indent : 0, "", object ? '}' : ']');
        return;
    }
    case NODE_STRING: json_string(o, n->value); return;
    default: put(o, "%s", n->value ? n->value : "null"); return;
    }
}

char *ember_report_json(const struct ember_report *root)
{
    struct out o = {0};
    if (root) {
        json_node(&o, root, 0);
        put(&o, "\n");
    }
    return finish(&o);
}
