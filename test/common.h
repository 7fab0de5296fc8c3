/* Helpers shared by the tests: a deterministic clock, scopes by name on an
 * explicit log, error collection and tree lookups. */
#ifndef TIMERLOG_TEST_COMMON_H
#define TIMERLOG_TEST_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <locale.h>
#include <string.h>

#include <cmocka.h>

#include <timerlog/timerlog.h>

/* Each thread has its own simulated time, in nanoseconds, so tests decide
 * exactly when every scope begins and ends. One thread may also publish its
 * time (test_clock_shared), for a simulated device to run on. */
static _Thread_local uint64_t test_now;
static _Thread_local int test_clock_shared;
static uint64_t shared_test_now;

static inline tlog_ticks test_clock(void *user)
{
    (void)user;
    return test_now;
}

/* The publishing thread's time, from any thread. */
static inline uint64_t shared_test_clock(void *user)
{
    (void)user;
    return __atomic_load_n(&shared_test_now, __ATOMIC_ACQUIRE);
}

static inline void at_ms(double ms)
{
    test_now = (uint64_t)(ms * 1e6 + 0.5);
    if (test_clock_shared)
        __atomic_store_n(&shared_test_now, test_now, __ATOMIC_RELEASE);
}

typedef struct collected_errors {
    int count;
    int codes[256];
    char last[256];  /* the last message */
} collected_errors;

/* Reports may come from several threads at once (device polls, writers). */
static pthread_mutex_t collect_lock = PTHREAD_MUTEX_INITIALIZER;

static inline void collect_error(void *user, const tlog_error *e)
{
    collected_errors *c = user;
    pthread_mutex_lock(&collect_lock);
    if (c->count < 256)
        c->codes[c->count] = e->code;
    c->count++;
    snprintf(c->last, sizeof c->last, "%s", e->message);
    pthread_mutex_unlock(&collect_lock);
}

static inline int count_code(const collected_errors *c, int code)
{
    int n = 0;
    for (int i = 0; i < c->count && i < 256; i++)
        n += c->codes[i] == code;
    return n;
}

static inline tlog_config test_config(collected_errors *errors)
{
    tlog_config c = {.size = sizeof c, .clock = test_clock,
                     .flags = TLOG_CONFIG_IGNORE_ENV};
    if (errors) {
        c.on_error = collect_error;
        c.error_user = errors;
    }
    return c;
}

static inline tlog_log *make_log(const tlog_config *c)
{
    tlog_log *log = NULL;
    assert_int_equal(tlog_create(c, &log), TLOG_OK);
    assert_non_null(log);
    return log;
}

static inline const tlog_site *site_named(const char *name)
{
    return tlog_site_intern(name, "test.c", "test", 1, TLOG_LEVEL_COARSE);
}

/* Scope boundaries by name at a given simulated time. */
static inline void begin_at(tlog_log *log, const char *name, double ms)
{
    at_ms(ms);
    tlog_log_begin(log, site_named(name));
}

static inline void end_at(tlog_log *log, const char *name, double ms)
{
    at_ms(ms);
    tlog_log_end(log, site_named(name));
}

static inline tlog_node_info info_of(const tlog_node *n)
{
    tlog_node_info info = {.size = sizeof info};
    assert_int_equal(tlog_node_get_info(n, &info), TLOG_OK);
    return info;
}

static inline const tlog_node *child_named(const tlog_node *n, const char *name)
{
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c))
        if (strcmp(info_of(c).name, name) == 0)
            return c;
    return NULL;
}

static inline size_t child_count(const tlog_node *n)
{
    size_t k = 0;
    for (const tlog_node *c = tlog_node_first_child(n); c; c = tlog_node_next_sibling(c))
        k++;
    return k;
}

static inline tlog_stats stats_of(tlog_log *log)
{
    tlog_stats s = {.size = sizeof s};
    assert_int_equal(tlog_get_stats(log, &s), TLOG_OK);
    return s;
}

/* What was written to fp, as one malloc'd string; closes fp. */
static inline char *read_back(FILE *fp)
{
    long n = ftell(fp);
    char *s = calloc(1, (size_t)n + 1);
    rewind(fp);
    assert_int_equal(fread(s, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    return s;
}

/* The bytes of the file at `path`, as one malloc'd string; *n: how many. */
static inline char *file_bytes(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    *n = (size_t)ftell(fp);
    return read_back(fp);
}

/* Fails unless the file at `path` holds the n bytes `was`; frees them. */
static inline void assert_file_holds(const char *path, char *was, size_t n)
{
    size_t now_n;
    char *now = file_bytes(path, &now_n);
    assert_int_equal(now_n, n);
    assert_memory_equal(now, was, n);
    free(now);
    free(was);
}

/* The dump of a frame as one malloc'd string. */
static inline char *dump_string(const tlog_frame *f, const tlog_dump_options *o)
{
    FILE *fp = tmpfile();
    assert_non_null(fp);
    assert_int_equal(tlog_dump_frame(f, fp, o), TLOG_OK);
    return read_back(fp);
}

#define NS_PER_MS 1000000ull

/* A frame of distinct rows, 16 children a row, four levels below the root:
 * 69,905 rows, whose node array (about 8.5 MiB) and resolver scratch
 * (about 24 MiB) are over the 8 MiB a log always keeps for resolving. */
#define LARGE_ROWS (1 + 16 + 256 + 4096 + 65536)

static inline void record_subtree(tlog_log *log, int depth, double *t)
{
    static const char *const names[16] = {"a", "b", "c", "d", "e", "f", "g", "h",
                                          "i", "j", "k", "l", "m", "n", "o", "p"};
    for (int k = 0; k < 16; k++) {
        begin_at(log, names[k], *t += 0.001);
        if (depth > 1)
            record_subtree(log, depth - 1, t);
        end_at(log, names[k], *t += 0.001);
    }
}

static inline void record_large_frame(tlog_log *log, double at)
{
    begin_at(log, "Frame", at);
    record_subtree(log, 4, &at);
    end_at(log, "Frame", at + 1);
}

/* Rows of two kinds with one title, each with a child of one title:
 * under "Frame", a host scope "W" with work "X" it inserted, and a worker
 * thread named "W" whose adoption holds work "X" it inserted. Their paths
 * differ only in the kinds of their titles:
 *   Frame / W / (E) X        host_ms of X, from `at` + 1
 *   Frame / (E) W / (E) X    worker_ms of X, from `at` + 1
 */
typedef struct twin_work {
    tlog_token token;
    double at, ms;
} twin_work;

static inline void *twin_worker(void *p)
{
    const twin_work *w = p;
    tlog_thread_name("W");
    at_ms(w->at);
    tlog_adopt_begin(&w->token);
    at_ms(w->at + 1);
    tlog_ticks start = tlog_now(w->token.log);
    at_ms(w->at + 1 + w->ms);
    tlog_insert(w->token.log, site_named("X"), TLOG_KIND_EXECUTION, start,
                tlog_now(w->token.log));
    at_ms(w->at + 2 + w->ms);
    tlog_adopt_end(&w->token);
    return NULL;
}

/* One such frame from `at`; where it ends. */
static inline double record_twin_titles(tlog_log *log, double at, double host_ms,
                                        double worker_ms)
{
    begin_at(log, "Frame", at);
    begin_at(log, "W", at);
    at_ms(at + 1);
    tlog_ticks start = tlog_now(log);
    at_ms(at + 1 + host_ms);
    tlog_insert(log, site_named("X"), TLOG_KIND_EXECUTION, start, tlog_now(log));
    end_at(log, "W", at + 2 + host_ms);
    twin_work w = {tlog_handoff(log), at, worker_ms};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, twin_worker, &w), 0);
    pthread_join(th, NULL);
    double end = at + 3 + (host_ms > worker_ms ? host_ms : worker_ms);
    end_at(log, "Frame", end);
    return end;
}

/* Bytes of thread_budget (and of record memory) a scope's record takes in
 * its compact form (doc/guide.md, "Memory"): what the tests' budgets and
 * memory bounds count in. */
#define SCOPE_RECORD_BYTES 16

/* A log on the simulated clock that collects its errors, for cmocka's
 * setup and teardown. */
typedef struct fixture {
    tlog_log *log;
    collected_errors errors;
} fixture;

static inline int fixture_setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    tlog_config c = test_config(&fx->errors);
    fx->log = make_log(&c);
    *state = fx;
    return 0;
}

static inline int fixture_teardown(void **state)
{
    fixture *fx = *state;
    tlog_destroy(fx->log);
    free(fx);
    return 0;
}

/* Makes LC_NUMERIC a locale whose decimal separator is a comma (de_DE,
 * compiled with localedef into a directory of the test's own, found through
 * LOCPATH). False, with the locale unchanged, where the system cannot make
 * one (no localedef or no locale sources: Debian's `locales`). */
static char comma_locale_dir[] = "/tmp/tlog-locale-XXXXXX";

static inline void remove_comma_locale(void)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", comma_locale_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", comma_locale_dir);
}

static inline bool use_comma_locale(void)
{
    char *dir = comma_locale_dir;
    static bool made;
    if (!made) {
        if (!mkdtemp(dir))
            return false;
        atexit(remove_comma_locale);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1",
                 dir);
        int rc = system(cmd);
        if (rc != 0 && rc != 1 << 8)   /* 1: made, with warnings */
            return false;
        setenv("LOCPATH", dir, 1);
        made = true;
    }
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8"))
        return false;
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    if (strcmp(probe, "0,5") != 0) {
        setlocale(LC_NUMERIC, "C");
        return false;
    }
    return true;
}

#endif
