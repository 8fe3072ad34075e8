/* SPDX-License-Identifier: MIT */
/*
 * tools/trace-file.c — a trace that ember wrote, read back line by line
 * (tools/trace-file.h): the lines before `"traceEvents": [` open the
 * document, each line after it is one event, and `]}` ends it.
 *
 * Names repeat (a step runs the same ops every time), so each is kept once,
 * numbered, in a hash table, and events point to it. Spans are sorted per track
 * after reading, whatever order the file gave them in, and each one's
 * depth is the number of spans on its track that enclose it: a stack of
 * the enclosing spans' ends, as the format's viewers nest them.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json-line.h"
#include "name-table.h"
#include "text-impl.h"
#include "trace-file.h"

/* a name longer than this is cut: it has to fit in a bar of a picture */
#define TRACE_NAME_BYTES 127

/* ---- names, each kept once ---- */

/* The number of `s` (its first TRACE_NAME_BYTES bytes) among the names,
 * kept when new; -1 when out of memory, or when it is new and
 * TRACE_MAX_NAMES are kept (*full). */
static int names_keep(struct name_table *t, const char *s, bool *full)
{
    size_t n = strnlen(s, TRACE_NAME_BYTES);
    int id = name_table_find(t, s, n);
    *full = id < 0 && t->count == TRACE_MAX_NAMES;
    return id >= 0 || *full ? id : name_table_add(t, s, n);
}

static void names_free(struct name_table *t)
{
    if (!t)
        return;
    name_table_free(t);
    free(t);
}

/* ---- lines ---- */

enum line_read { LINE_OK, LINE_END, LINE_TOO_LONG, LINE_NUL };

/* The next line into buf (cap bytes), without its newline and the spaces
 * and one comma at its end: an event line's separator. */
static enum line_read line_read(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == '\0')
            return LINE_NUL;
        if (n + 1 == cap)
            return LINE_TOO_LONG;
        buf[n++] = (char)c;
    }
    if (c == EOF && n == 0)
        return LINE_END;
    while (n > 0 && strchr(" \t\r", buf[n - 1]))
        n--;
    if (n > 0 && buf[n - 1] == ',')
        n--;
    buf[n] = '\0';
    return LINE_OK;
}

/* the line without its leading spaces */
static const char *line_text(const char *line) { return line + strspn(line, " \t"); }

/* ---- tracks and events ---- */

/* the track of (pid, tid), added when new; NULL when there are too many */
static struct trace_track *track_find(struct trace *t, int pid, int tid)
{
    for (int k = 0; k < t->n_tracks; k++)
        if (t->tracks[k].pid == pid && t->tracks[k].tid == tid)
            return &t->tracks[k];
    if (t->n_tracks == TRACE_MAX_TRACKS)
        return NULL;
    t->tracks[t->n_tracks] = (struct trace_track){.pid = pid, .tid = tid};
    return &t->tracks[t->n_tracks++];
}

/* a whole number field in int's range, like pid and tid */
static bool field_int(const struct json_field *f, int *value)
{
    if (!f || f->kind != JSON_NUMBER || !(fabs(f->number) < 2147483648.0) || f->number != floor(f->number))
        return false;
    *value = (int)f->number;
    return true;
}

/* a time in microseconds; bounded so that sums of them stay exact enough */
static bool field_time(const struct json_field *f, double *value)
{
    if (!f || f->kind != JSON_NUMBER || !(fabs(f->number) <= 1e15))
        return false;
    *value = f->number;
    return true;
}

static const char *field_string(const struct json_field *f)
{
    return f && f->kind == JSON_STRING ? f->string : NULL;
}

/* What went wrong with a line, for the caller to print with its place. */
struct reading {
    long line;
    char why[256];
    int status; /* EXIT_DATA or EXIT_FAILURE_OTHER once something went wrong */
};

static bool reading_fail(struct reading *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool reading_fail(struct reading *r, int status, const char *fmt, ...)
{
    EMBER_FORMAT_ARGS(r->why, fmt);
    r->status = status;
    return false;
}

/* a name kept, and its number, or false with the reason in *r */
static bool keep_name(struct trace *t, struct reading *r, const char *s, const char **kept, int *id)
{
    bool full;
    int number = names_keep(t->names, s, &full);
    if (number >= 0) {
        *kept = t->names->by_id[number];
        if (id)
            *id = number;
        t->n_names = t->names->count;
        return true;
    }
    if (full)
        return reading_fail(r, EXIT_DATA, "more different names than ember plot reads (%d)", TRACE_MAX_NAMES);
    return reading_fail(r, EXIT_FAILURE_OTHER, "out of memory");
}

/* "M" events: a process's or thread's name; other metadata says nothing to draw */
static bool add_name(struct trace *t, struct reading *r, const struct json_field *fields, int n)
{
    const char *kind = field_string(json_field_find(fields, n, "name"));
    const char *name = field_string(json_member_find(fields, n, "args", "name"));
    bool process = kind && strcmp(kind, "process_name") == 0,
         thread = kind && strcmp(kind, "thread_name") == 0;
    if (!process && !thread)
        return true;
    int pid, tid = 0;
    if (!name || !field_int(json_field_find(fields, n, "pid"), &pid))
        return reading_fail(r, EXIT_DATA, "a process_name or thread_name event without a pid and args.name");
    if (json_field_find(fields, n, "tid") && !field_int(json_field_find(fields, n, "tid"), &tid))
        return reading_fail(r, EXIT_DATA, "a tid that is not a whole number");
    struct trace_track *track = track_find(t, pid, tid);
    if (!track)
        return reading_fail(r, EXIT_DATA, "more tracks (pid and tid pairs) than ember plot draws (%d)",
                            TRACE_MAX_TRACKS);
    return keep_name(t, r, name, process ? &track->process : &track->thread, NULL);
}

/* "X" events: a span of time on its track */
static bool add_span(struct trace *t, struct reading *r, const struct json_field *fields, int n)
{
    const char *name = field_string(json_field_find(fields, n, "name"));
    const char *category = field_string(json_field_find(fields, n, "cat"));
    const char *op = field_string(json_member_find(fields, n, "args", "op"));
    double start, duration;
    int pid, tid = 0;
    if (!name)
        return reading_fail(r, EXIT_DATA, "an \"X\" event without a \"name\"");
    if (!field_time(json_field_find(fields, n, "ts"), &start) ||
        !field_time(json_field_find(fields, n, "dur"), &duration) || duration < 0.0)
        return reading_fail(r, EXIT_DATA,
                            "an \"X\" event without a time: \"ts\" and \"dur\" in microseconds, "
                            "dur not negative");
    if (!field_int(json_field_find(fields, n, "pid"), &pid) ||
        (json_field_find(fields, n, "tid") && !field_int(json_field_find(fields, n, "tid"), &tid)))
        return reading_fail(r, EXIT_DATA, "an \"X\" event without a whole-number \"pid\" (and \"tid\")");
    if (t->n_events == TRACE_MAX_EVENTS)
        return reading_fail(r, EXIT_DATA, "more events than ember plot reads (%d)", TRACE_MAX_EVENTS);
    struct trace_track *track = track_find(t, pid, tid);
    if (!track)
        return reading_fail(r, EXIT_DATA, "more tracks (pid and tid pairs) than ember plot draws (%d)",
                            TRACE_MAX_TRACKS);
    if (track->count == track->cap) {
        int cap = track->cap ? 2 * track->cap : 256;
        struct trace_event *events = realloc(track->events, (size_t)cap * sizeof *events);
        if (!events)
            return reading_fail(r, EXIT_FAILURE_OTHER, "out of memory");
        track->events = events;
        track->cap = cap;
    }
    struct trace_event *e = &track->events[track->count];
    *e = (struct trace_event){.start = start, .end = start + duration};
    /* an op's span belongs to itself; a call to the op it names */
    bool is_op = category && strcmp(category, "op") == 0;
    if (!keep_name(t, r, name, &e->name, NULL) ||
        !keep_name(t, r, is_op || !op ? name : op, &e->op, &e->op_id))
        return false;
    track->count++;
    t->n_events++;
    return true;
}

static bool add_event(struct trace *t, struct reading *r, char *line)
{
    struct json_field fields[32];
    const char *why;
    int n = json_line_parse(line, fields, (int)(sizeof fields / sizeof fields[0]), &why);
    if (n < 0)
        return reading_fail(r, EXIT_DATA, "%s, where ember writes one event (a JSON object) a line", why);
    const char *phase = field_string(json_field_find(fields, n, "ph"));
    if (!phase)
        return reading_fail(r, EXIT_DATA, "an event without a \"ph\" (its kind)");
    if (strcmp(phase, "X") == 0)
        return add_span(t, r, fields, n);
    if (strcmp(phase, "M") == 0)
        return add_name(t, r, fields, n);
    t->left_out++;
    return true;
}

/* ---- after reading ---- */

/* by start, and an enclosing span before what it encloses */
static int event_order(const void *a, const void *b)
{
    const struct trace_event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end);
}

static int track_order(const void *a, const void *b)
{
    const struct trace_track *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Each span's depth: the spans still open when it starts that also hold
 * its end. Times are printed to the nanosecond, so a call may seem to end
 * a nanosecond after its op: a little slack. */
static void track_nest(struct trace_track *track)
{
    const double slack = 0.002; /* microseconds */
    double ends[TRACE_MAX_DEPTH];
    int open = 0;
    if (track->count == 0) /* named by an "M" event, but nothing ran on it */
        return;
    qsort(track->events, (size_t)track->count, sizeof *track->events, event_order);
    for (int i = 0; i < track->count; i++) {
        struct trace_event *e = &track->events[i];
        while (open > 0 && (ends[open - 1] <= e->start + slack || e->end > ends[open - 1] + slack))
            open--;
        e->depth = open;
        if (open < TRACE_MAX_DEPTH)
            ends[open++] = e->end;
    }
}

static void trace_finish(struct trace *t)
{
    qsort(t->tracks, (size_t)t->n_tracks, sizeof *t->tracks, track_order);
    t->start = INFINITY;
    t->end = -INFINITY;
    for (int k = 0; k < t->n_tracks; k++) {
        struct trace_track *track = &t->tracks[k];
        track_nest(track);
        for (int i = 0; i < track->count; i++) {
            t->start = fmin(t->start, track->events[i].start);
            t->end = fmax(t->end, track->events[i].end);
        }
        /* a process named once names all its threads */
        for (int j = 0; !track->process && j < t->n_tracks; j++)
            if (t->tracks[j].pid == track->pid)
                track->process = t->tracks[j].process;
    }
}

/* ---- the file ---- */

/* lines that may open the document before `"traceEvents": [` */
#define HEAD_LINES 8

bool trace_file_is_trace(const char *path)
{
    FILE *f = cli_open_input(path, TRACE_MAX_BYTES, NULL, false);
    if (!f)
        return false;
    static char head[65536 + 1];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    /* NULs in the head would hide the key from strstr: look past them */
    for (size_t at = 0; at < n; at += strlen(head + at) + 1)
        if (strstr(head + at, "\"traceEvents\""))
            return true;
    return false;
}

/* Reads the lines of f into t; false with *r saying why at r->line. */
static bool read_lines(FILE *f, struct trace *t, struct reading *r)
{
    static char line[TRACE_MAX_LINE];
    enum { HEAD, EVENTS, CLOSED } part = HEAD;
    bool opened = false; /* the document's '{' seen */
    enum line_read got;
    while ((got = line_read(f, line, sizeof line)) != LINE_END) {
        r->line++;
        if (got == LINE_TOO_LONG)
            return reading_fail(r, EXIT_DATA,
                                "a line longer than ember plot reads (%d bytes), where ember writes one "
                                "event a line",
                                TRACE_MAX_LINE);
        if (got == LINE_NUL)
            return reading_fail(r, EXIT_DATA, "a NUL byte: not a text file");
        const char *text = line_text(line);
        size_t len = strlen(text);
        if (len == 0)
            continue;
        if (part == HEAD) {
            if (!opened && text[0] != '{')
                return reading_fail(r, EXIT_DATA, "not a JSON object: a trace starts with '{'");
            opened = true;
            static const char opening[] = "\"traceEvents\": [";
            if (len >= strlen(opening) && strcmp(text + len - strlen(opening), opening) == 0)
                part = EVENTS;
            else if (r->line >= HEAD_LINES)
                return reading_fail(r, EXIT_DATA,
                                    "no line ending in `\"traceEvents\": [` in the first lines: "
                                    "ember plot reads traces laid out as ember writes them, one "
                                    "event a line after that line");
        } else if (part == EVENTS) {
            if (text[0] == ']') {
                if (strcmp(line_text(text + 1), "}") != 0)
                    return reading_fail(r, EXIT_DATA,
                                        "`]}` expected: the end of the events and the document");
                part = CLOSED;
            } else if (!add_event(t, r, line)) {
                return false;
            }
        } else {
            return reading_fail(r, EXIT_DATA, "more after the trace's closing `]}`");
        }
    }
    if (ferror(f))
        return reading_fail(r, EXIT_DATA, "%s", strerror(errno));
    if (part != CLOSED)
        return reading_fail(r, EXIT_DATA,
                            part == HEAD ? "the file ends before a line ending in `\"traceEvents\": [`: "
                                           "ember plot reads traces laid out as ember writes them, "
                                           "one event a line after that line"
                                         : "the file ends before the trace's closing `]}`: "
                                           "cut short?");
    if (t->n_events == 0)
        return reading_fail(r, EXIT_DATA, "no spans (\"X\" events) to draw");
    return true;
}

int trace_read(const char *path, struct trace *t)
{
    *t = (struct trace){0};
    if (!(t->names = calloc(1, sizeof *t->names))) {
        cli_error("out of memory");
        return EXIT_FAILURE_OTHER;
    }
    FILE *f = cli_open_input(path, TRACE_MAX_BYTES, NULL, true);
    if (!f)
        return EXIT_DATA;
    struct reading r = {.status = EXIT_OK};
    errno = 0;
    bool read = read_lines(f, t, &r);
    fclose(f);
    if (!read && r.status == EXIT_FAILURE_OTHER)
        cli_error("%s", r.why);
    else if (!read)
        cli_error("%s:%ld: %s", path, r.line, r.why);
    if (!read)
        return r.status;
    trace_finish(t);
    return EXIT_OK;
}

void trace_free(struct trace *t)
{
    for (int k = 0; k < t->n_tracks; k++)
        free(t->tracks[k].events);
    names_free(t->names);
    *t = (struct trace){0};
}
