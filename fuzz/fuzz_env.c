/*
 * libFuzzer target: the environment variables the library reads when a log
 * is made (level, sync timeout, stream path and buffer size, clock, NVTX and
 * roctx switches, the MPI rank that a stream path's `%` becomes). The input
 * sets them, then a log is made with the default config (plus an error
 * callback, so that reports are checked rather than printed), records two
 * frames, and is destroyed. Any crash, sanitizer report or leak is a bug; a
 * bad value must only ever be reported.
 *
 * Input: one byte whose low three bits pick the stream path, then the
 * values of the variables below in their order, each ended by a NUL byte
 * and cut at 1000 bytes; a variable the input ends before is unset. The
 * stream path is never taken from the input: it is one of a few fixed
 * choices, in a temporary directory made for the run, so that the fuzzer
 * cannot write files anywhere else. An input whose TIMERLOG_BUFSIZE may ask
 * for more than 16 MiB gets no stream path, so that its size is read and
 * judged but never allocated (a 1 GiB buffer a run would take the fuzzer's
 * time and memory). TIMERLOG_ROCTX_LIBRARY (a library to load) is left
 * alone.
 *
 *   build-fuzz/fuzz/fuzz_env NEW_CORPUS_DIR fuzz/corpus_env
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#include "sink.h"

static const char *const variables[] = {
    "TIMERLOG_LEVEL",       "TIMERLOG_SYNC_TIMEOUT_MS", "TIMERLOG_BUFSIZE",
    "TIMERLOG_CLOCK",       "TIMERLOG_NVTX",            "TIMERLOG_ROCTX",
    "OMPI_COMM_WORLD_RANK", "PMIX_RANK",                "PMI_RANK",
    "SLURM_PROCID",
};
#define NVARIABLES (sizeof variables / sizeof variables[0])

/* Where each variable's NAME=value is kept for putenv: the same buffer each
 * time, so that setting a variable allocates nothing (setenv keeps every
 * value it was ever given, which would look like a leak each run). Longer
 * values are cut. */
#define ENTRY_BYTES 1024
static char entries[NVARIABLES + 1][ENTRY_BYTES];

/* Sets variable k (NVARIABLES: TIMERLOG_OUTPUT) to `value`, or unsets it
 * (NULL); returns the value set. */
static const char *set_variable(size_t k, const char *name, const char *value)
{
    if (!value) {
        unsetenv(name);
        return NULL;
    }
    int n = snprintf(entries[k], sizeof entries[k], "%s=%s", name, value);
    putenv(entries[k]);
    return n < 0 ? "" : entries[k] + strlen(name) + 1;
}

/* The run's directory, and the stream paths to choose from. */
static char dir[64];
static char paths[8][700];

/* Removes the files a stream wrote: with a file per rank, as many as the
 * ranks the inputs made up. */
static void clear_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char p[400];
        if (e->d_name[0] != '.' &&
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name) < (int)sizeof p)
            unlink(p);
    }
    if (d)
        closedir(d);
}

static void remove_dir(void)
{
    clear_dir();
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/timerlog-fuzz-env-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("fuzz_env: mkdtemp");
        exit(1);
    }
    atexit(remove_dir);
    /* 0: unset; 1: empty; then /dev/null, a file, a file per rank, a file
     * in a missing directory, a directory, and a pattern too long once
     * each `%` is expanded. */
    snprintf(paths[2], sizeof paths[2], "/dev/null");
    snprintf(paths[3], sizeof paths[3], "%s/run.tlog", dir);
    snprintf(paths[4], sizeof paths[4], "%s/rank-%%.tlog", dir);
    snprintf(paths[5], sizeof paths[5], "%s/missing/%%.tlog", dir);
    snprintf(paths[6], sizeof paths[6], "%s", dir);
    int n = snprintf(paths[7], sizeof paths[7], "%s/", dir);
    memset(paths[7] + n, '%', sizeof paths[7] - (size_t)n - 1);
    return 0;
}

/* Whether a TIMERLOG_BUFSIZE value may mean more than 16 MiB: digits with
 * any suffix, judged generously (the library reads it more strictly). */
static int big_buffer(const char *v)
{
    if (*v < '0' || *v > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    return errno == ERANGE || n > (16ull << 20) >> shift;
}

/* Reports must be whole strings with a code. */
static void on_error(void *user, const tlog_error *e)
{
    *(size_t *)user += strlen(e->message) + (e->code != 0);
}

static const tlog_site frame_site = {"Frame", "fuzz_env.c", "record", 1, TLOG_LEVEL_COARSE};
static const tlog_site inner_site = {"Inner", "fuzz_env.c", "record", 2, TLOG_LEVEL_FINE};

static void record(tlog_log *log)
{
    tlog_log_begin(log, &frame_site);
    tlog_log_begin(log, &inner_site);
    tlog_log_end(log, &inner_site);
    tlog_log_begin(log, &inner_site);
    tlog_log_end(log, &inner_site);
    tlog_log_end(log, &frame_site);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *out = fuzz_sink();
    if (!out)
        return 0;
    unsigned path = size ? data[0] & 7 : 0;
    /* The values: NUL-ended strings, copied so that each has its NUL. */
    size_t len = size ? size - 1 : 0;
    char *text = malloc(len + 1);
    if (!text)
        return 0;
    if (len)
        memcpy(text, data + 1, len);
    text[len] = '\0';
    size_t at = 0;
    for (size_t k = 0; k < NVARIABLES; k++) {
        const char *value = at < len ? text + at : NULL;
        const char *set = set_variable(k, variables[k], value);
        if (set && strcmp(variables[k], "TIMERLOG_BUFSIZE") == 0 && big_buffer(set))
            path = 0;
        if (value)
            at += strlen(value) + 1;
    }
    free(text);
    set_variable(NVARIABLES, "TIMERLOG_OUTPUT", path ? paths[path] : NULL);

    size_t reported = 0;
    tlog_config config = {.size = sizeof config, .on_error = on_error, .error_user = &reported};
    tlog_log *log = NULL;
    if (tlog_create(&config, &log) == TLOG_OK) {
        record(log);
        record(log);
        tlog_dump(log, out);
        tlog_stream_flush(log);
        tlog_stats stats = {.size = sizeof stats};
        tlog_get_stats(log, &stats);
        fprintf(out, "%s %d %llu\n", tlog_clock_name(log), tlog_get_level(log),
                (unsigned long long)stats.frames_streamed);
        tlog_destroy(log);
    }
    if (path == 4)
        clear_dir();
    return 0;
}
