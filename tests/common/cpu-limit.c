/* SPDX-License-Identifier: MIT */
/*
 * tests/common/cpu-limit.c — runs a test under a limit on the CPU time it
 * uses rather than on the clock (tests/CMakeLists.txt puts every test under
 * it):
 *
 *   cpu-limit NAME COMMAND [ARG...]
 *
 * with EMBER_TEST_CPU_LIMIT=SECONDS in the environment (none: no limit).
 * A test's wall-clock time depends on what else the machine runs (beside
 * a browser, or two other builds, it can take three times as long); the
 * CPU time its processes use depends on the test alone. So the limit a
 * test is held to is CPU seconds, and CTest's own TIMEOUT is only a
 * backstop for a test that waits without using the CPU.
 *
 * Counted is the command and every process it starts, threads included:
 * this program makes itself their subreaper (an orphan comes back to it
 * rather than to init), and four times a second sums the user and system
 * time of each live one (Linux's /proc/PID/stat: its own and that of the
 * children it has reaped) and of the ones it reaped itself (its own
 * RUSAGE_CHILDREN). Past the limit it kills them all and exits 124, as
 * timeout(1) does, after saying so.
 *
 * A test that has used under a second of CPU time in the last
 * EMBER_TEST_IDLE_LIMIT seconds (default 300) of the clock is waiting on
 * something that will not come: it is killed too, and the exit is 125.
 * Stopped itself (SIGTERM, SIGINT, SIGHUP), this program stops the test's
 * processes with it, leaving none behind.
 *
 * With EMBER_TEST_CPU_LOG=FILE, one line per test is appended to FILE:
 * "NAME CPU-SECONDS WALL-SECONDS EXIT" (scripts/test.sh lists the
 * heaviest from it). The command's own exit status is passed on (77, a
 * skip, included); killed by a signal, 128 + its number.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_PROCESSES = 65536 };

struct process {
    pid_t pid, parent;
    double cpu; /* seconds: its own and its reaped children's */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The parent and CPU seconds of one process from /proc/PID/stat; false
 * when it is gone. Fields after the name, which may hold anything but
 * ends at the last ')': state ppid ... utime (14) stime cutime cstime. */
static bool read_process(pid_t pid, struct process *p)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *after_name = strrchr(line, ')');
    if (!after_name)
        return false;
    char state;
    int parent;
    unsigned long long times[4];
    if (sscanf(after_name + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &state,
               &parent, &times[0], &times[1], &times[2], &times[3]) != 6)
        return false;
    double tick = (double)sysconf(_SC_CLK_TCK);
    *p = (struct process){
        .pid = pid, .parent = parent, .cpu = (double)(times[0] + times[1] + times[2] + times[3]) / tick};
    return true;
}

/* Every process on the machine, into `all`; returns how many. */
static int list_processes(struct process *all)
{
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    int n = 0;
    struct dirent *e;
    while (n < MAX_PROCESSES && (e = readdir(proc))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end == '\0' && pid > 0 && read_process((pid_t)pid, &all[n]))
            n++;
    }
    closedir(proc);
    return n;
}

/* Whether `p` descends from `root`, following parents through `all`. */
static bool descends(const struct process *all, int n, const struct process *p, pid_t root)
{
    for (int depth = 0; depth < 64 && p; depth++) {
        if (p->parent == root)
            return true;
        const struct process *up = NULL;
        for (int i = 0; i < n && !up; i++)
            if (all[i].pid == p->parent)
                up = &all[i];
        p = up;
    }
    return false;
}

/* The CPU seconds of this program's descendants, live and reaped; with
 * `kill_them`, each live one is sent SIGKILL. */
static double tree_cpu(struct process *all, bool kill_them)
{
    struct rusage reaped;
    getrusage(RUSAGE_CHILDREN, &reaped);
    double cpu = (double)reaped.ru_utime.tv_sec + (double)reaped.ru_utime.tv_usec * 1e-6 +
                 (double)reaped.ru_stime.tv_sec + (double)reaped.ru_stime.tv_usec * 1e-6;
    int n = list_processes(all);
    pid_t self = getpid();
    for (int i = 0; i < n; i++)
        if (descends(all, n, &all[i], self)) {
            cpu += all[i].cpu;
            if (kill_them)
                kill(all[i].pid, SIGKILL);
        }
    return cpu;
}

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

static double env_seconds(const char *name, double otherwise)
{
    const char *v = getenv(name);
    char *end;
    double s = v && *v ? strtod(v, &end) : otherwise;
    return v && *v && (*end || s <= 0) ? otherwise : s;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: cpu-limit NAME COMMAND [ARG...] (EMBER_TEST_CPU_LIMIT=SECONDS)\n");
        return 2;
    }
    const char *name = argv[1];
    double limit = env_seconds("EMBER_TEST_CPU_LIMIT", 0.0);
    double idle_limit = env_seconds("EMBER_TEST_IDLE_LIMIT", 300.0);
    static struct process all[MAX_PROCESSES];
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sigaction stop = {.sa_handler = on_stop};
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGHUP, &stop, NULL);
    double start = now();
    pid_t child = fork();
    if (child < 0) {
        perror("cpu-limit: fork");
        return 2;
    }
    if (child == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        execvp(argv[2], argv + 2);
        fprintf(stderr, "cpu-limit: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status = 0, rc = -1;
    double cpu = 0.0, busy_cpu = 0.0, busy_at = start;
    while (rc < 0) {
        /* the command's own end, and any orphan that came back to be reaped */
        pid_t done;
        while ((done = waitpid(-1, &status, WNOHANG)) > 0)
            if (done == child)
                rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (rc >= 0)
            break;
        cpu = tree_cpu(all, false);
        if (cpu > busy_cpu + 1.0) {
            busy_cpu = cpu;
            busy_at = now();
        }
        if (stop_signal) {
            tree_cpu(all, true);
            fprintf(stderr, "cpu-limit: %s stopped by signal %d, and its processes with it\n", name,
                    (int)stop_signal);
            rc = 128 + stop_signal;
        } else if (limit > 0 && cpu > limit) {
            tree_cpu(all, true);
            fprintf(stderr,
                    "cpu-limit: %s used %.1f s of CPU time, more than its limit of %.0f s "
                    "(EMBER_TEST_CPU_LIMIT, from the test's TIMEOUT): stopped\n",
                    name, cpu, limit);
            rc = 124;
        } else if (now() - busy_at > idle_limit) {
            tree_cpu(all, true);
            fprintf(stderr,
                    "cpu-limit: %s used no CPU time for %.0f s (EMBER_TEST_IDLE_LIMIT): it is waiting on "
                    "something that will not come: stopped\n",
                    name, idle_limit);
            rc = 125;
        } else {
            usleep(250 * 1000);
        }
    }
    /* whatever the command left running is this test's too: its time counts, then it goes */
    cpu = tree_cpu(all, true);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    const char *log = getenv("EMBER_TEST_CPU_LOG");
    FILE *f = log && *log ? fopen(log, "a") : NULL;
    if (f) {
        fprintf(f, "%s %.1f %.1f %d\n", name, cpu, now() - start, rc);
        fclose(f);
    }
    return rc;
}
