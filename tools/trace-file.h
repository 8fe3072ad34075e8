/* SPDX-License-Identifier: MIT */
/*
 * tools/trace-file.h — a Chrome trace that `ember train --trace` (or eval)
 * wrote, read back for `ember plot`: its tracks, each a list of spans.
 *
 * The reader knows ember's layout of the JSON Trace Event Format, not all
 * of JSON: the document opens on the first line, a line `"traceEvents": [`
 * follows, then one event object a line (a comma after all but the last),
 * and `]}` closes it. Each event is read by tools/json-line.h. "M" events
 * name the tracks (process_name, thread_name), "X" events are the spans;
 * other kinds are counted and left out. A line that breaks the layout is
 * an error naming the file and line, and every count and size is bounded,
 * so that a hostile file costs at most TRACE_MAX_EVENTS spans of memory:
 *
 *   struct trace t;
 *   if (trace_read("step.json", &t) != EXIT_OK)
 *       return ...;          // the error is printed
 *   for (int k = 0; k < t.n_tracks; k++)
 *       for (int i = 0; i < t.tracks[k].count; i++)
 *           ... t.tracks[k].events[i].start ...
 *   trace_free(&t);
 */
#ifndef EMBER_TRACE_FILE_H
#define EMBER_TRACE_FILE_H

#include <stdbool.h>
#include <stdint.h>

#define TRACE_MAX_TRACKS 16      /* pid and tid pairs */
#define TRACE_MAX_EVENTS 4000000 /* ember writes at most a million */
#define TRACE_MAX_LINE   16384   /* bytes; ember's lines are a few hundred */
#define TRACE_MAX_NAMES  65536   /* different names; ember's traces have a hundred or so */
#define TRACE_MAX_DEPTH  64      /* spans inside spans counted; deeper ones are placed at this depth */
#define TRACE_MAX_BYTES  ((int64_t)1 << 30) /* the file: ember's million events take a few hundred MB */

struct trace_event {
    double start, end; /* microseconds, as in the file */
    const char *name;  /* "conv2d forward", "im2col", "write" */
    const char *op;    /* the op it belongs to: an op's span its own name, a call its args.op */
    int op_id;         /* op's number among the trace's names, 0 to n_names - 1 */
    int depth;         /* how many spans of its track enclose it */
};

struct trace_track {
    int pid, tid;
    const char *process, *thread; /* as "M" events name them; NULL: unnamed */
    struct trace_event *events;   /* by start, a span before those it encloses */
    int count, cap;
};

struct name_table; /* the strings events point to, each kept once (tools/name-table.h) */

struct trace {
    struct trace_track tracks[TRACE_MAX_TRACKS]; /* by pid, then tid */
    int n_tracks;
    long n_events;
    double start, end; /* the first span's start, the last one's end */
    long left_out;     /* events that are neither spans nor names */
    int n_names;       /* different names */
    struct name_table *names;
};

/* Whether `path` starts as a trace does: "traceEvents" in its first
 * 64 KiB, a key no metrics line has. False when it cannot be read (the
 * metrics reader then says why). */
bool trace_file_is_trace(const char *path);

/* Reads the trace at `path` into *t (trace_free it either way). Returns an
 * exit status: EXIT_OK, EXIT_DATA (3) with the file and line named on
 * stderr when it cannot be read or is not laid out as ember writes it, or
 * EXIT_FAILURE_OTHER when out of memory. */
int trace_read(const char *path, struct trace *t);

void trace_free(struct trace *t);

#endif /* EMBER_TRACE_FILE_H */
