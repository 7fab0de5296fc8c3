/* Check macros for the tests that build without cmocka (backend tests that
 * must also build on GPU machines with only a vendor toolkit): a failed
 * check is printed and counted, and the test goes on. */
#ifndef TIMERLOG_TEST_CHECK_H
#define TIMERLOG_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <timerlog/timerlog.h>

#define SKIP 77

static int check_failures;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                \
        }                                                                    \
    } while (0)

#define CHECK_NEAR(value, expected, tol)                                     \
    do {                                                                     \
        int64_t v_ = (int64_t)(value), e_ = (int64_t)(expected);             \
        if (v_ < e_ - (int64_t)(tol) || v_ > e_ + (int64_t)(tol)) {          \
            fprintf(stderr, "%s:%d: %s = %lld, expected %lld +- %lld\n",      \
                    __FILE__, __LINE__, #value, (long long)v_, (long long)e_, \
                    (long long)(tol));                                       \
            check_failures++;                                                \
        }                                                                    \
    } while (0)

/* What a log's error callback was told: give check_collect as on_error and
 * a check_errors as error_user. */
typedef struct check_errors {
    int count;
    int last_code;
    char last[256];   /* the last message */
} check_errors;

static inline void check_collect(void *user, const tlog_error *e)
{
    check_errors *errs = user;
    errs->count++;
    errs->last_code = e->code;
    snprintf(errs->last, sizeof errs->last, "%s", e->message);
}

/* A log that ignores the environment and reports to `errs`; a forced sync
 * gives up after sync_timeout_ns (0: the default). */
static inline tlog_log *check_make_log(check_errors *errs, uint64_t sync_timeout_ns)
{
    tlog_config c = {.size = sizeof c, .flags = TLOG_CONFIG_IGNORE_ENV,
                     .sync_timeout_ns = sync_timeout_ns, .on_error = check_collect,
                     .error_user = errs};
    tlog_log *log = NULL;
    CHECK(tlog_create(&c, &log) == TLOG_OK);
    return log;
}

/* The process's resident memory in KiB (0 where /proc cannot tell). */
static inline long check_rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    if (f)
        fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

#endif
