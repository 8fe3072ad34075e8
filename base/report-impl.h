/* SPDX-License-Identifier: MIT */
/*
 * base/report-impl.h — a small tree of facts that prints as text for people
 * or as JSON for programs, so that `ember devices` and `ember devices
 * --json` say the same things from one description.
 *
 * Every node has a JSON key (NULL inside arrays) and a label for people
 * (NULL: JSON only). Backends describe themselves into it (the optional
 * `diagnose` entry of backends/backend.h):
 *
 *     struct ember_report *driver = ember_report_object(section, "driver", "driver");
 *     ember_report_string(driver, "version", "CUDA version", "%d.%d", major, minor);
 *     ember_report_int(driver, "max_ptx_isa", NULL, 74);
 *
 * Text: an object prints its label as a heading and its children indented
 * under it; a scalar prints "label: value"; an array prints its label and
 * then its elements, each object element as a block whose first scalar is
 * its heading.
 */
#ifndef EMBER_REPORT_IMPL_H
#define EMBER_REPORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>

struct ember_report;

/* the root: an object */
struct ember_report *ember_report_new(void);
void ember_report_free(struct ember_report *root);

/* Children of an object (key given) or an array (key NULL). They return
 * NULL when out of memory; every function accepts a NULL parent and then
 * does nothing, so a description needs no checks of its own. */
struct ember_report *ember_report_object(struct ember_report *parent, const char *key, const char *label);
struct ember_report *ember_report_array(struct ember_report *parent, const char *key, const char *label);
void ember_report_string(struct ember_report *parent, const char *key, const char *label, const char *fmt,
                         ...) __attribute__((format(printf, 4, 5)));
void ember_report_int(struct ember_report *parent, const char *key, const char *label, int64_t value);
void ember_report_bool(struct ember_report *parent, const char *key, const char *label, bool value);

/* The whole tree as text or as JSON: malloc'd, NULL when out of memory. */
char *ember_report_text(const struct ember_report *root);
char *ember_report_json(const struct ember_report *root);

#endif /* EMBER_REPORT_IMPL_H */
