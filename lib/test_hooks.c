/* The hooks of a -Dtest_hooks=true build, for the test suite only; a normal
 * build has neither them nor their cost.
 *
 * Allocation failure: the N-th allocation after tlog_test_fail_alloc(N)
 * fails, once; after tlog_test_fail_allocs_from(N), it and every later one
 * fail, as when memory has run out. TIMERLOG_ALLOC_FAIL_TRACE=1 in the
 * environment prints where.
 *
 * Reports under a lock: the locks each thread holds are counted, and a
 * report made while one is held is printed; the process then ends with
 * status 1 at exit, failing the test that made it. */
#include <execinfo.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "timerlog/timerlog.h"
#include "alloc.h"
#include "internal.h"
#include "subscribe.h"
#include "record.h"
#include "site.h"

TLOG_API void tlog_test_fail_alloc(uint64_t n);
TLOG_API void tlog_test_fail_allocs_from(uint64_t n);
TLOG_API uint64_t tlog_test_alloc_count(void);
TLOG_API bool tlog_test_alloc_failed(void);

static _Atomic uint64_t made;       /* allocations asked for since the last arming */
static _Atomic uint64_t fail_at;    /* 0: none fails */
static atomic_bool failed;
static atomic_bool fail_after;      /* every allocation past fail_at fails too */

bool tlog_alloc_fails_(void)
{
    uint64_t n = atomic_fetch_add_explicit(&made, 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (!at || (n != at && !(n > at && atomic_load_explicit(&fail_after, memory_order_relaxed))))
        return false;
    atomic_store(&failed, true);
    if (getenv("TIMERLOG_ALLOC_FAIL_TRACE")) {   /* where it failed, for the one debugging */
        void *frames[32];
        fprintf(stderr, "timerlog: allocation %llu fails here:\n", (unsigned long long)n);
        backtrace_symbols_fd(frames, backtrace(frames, 32), STDERR_FILENO);
    }
    return true;
}

static void arm(uint64_t n, bool after)
{
    atomic_store(&fail_at, 0);
    atomic_store(&made, 0);
    atomic_store(&failed, false);
    atomic_store(&fail_after, after);
    atomic_store(&fail_at, n);
}

void tlog_test_fail_alloc(uint64_t n)
{
    arm(n, false);
}

void tlog_test_fail_allocs_from(uint64_t n)
{
    arm(n, true);
}

uint64_t tlog_test_alloc_count(void)
{
    return atomic_load(&made);
}

bool tlog_test_alloc_failed(void)
{
    return atomic_load(&failed);
}

static _Thread_local int locks_held;
static atomic_uint reports_under_lock;

void tlog_locks_held_(int change)
{
    locks_held += change;
}

void tlog_check_no_lock_(const char *report)
{
    if (locks_held == 0)
        return;
    atomic_fetch_add(&reports_under_lock, 1);
    fprintf(stderr, "timerlog: a report was made with %d library lock(s) held: %s\n",
            locks_held, report);
}

__attribute__((destructor)) static void fail_if_reported_under_lock(void)
{
    unsigned n = atomic_load(&reports_under_lock);
    if (n) {
        fprintf(stderr, "timerlog: %u report(s) made with a library lock held\n", n);
        _exit(1);
    }
}

/* A lower limit on the stream's block payload than a reader's
 * (stream/encode.h): a test sees a frame too large for a reader refused
 * without making one of hundreds of MiB. 0 puts the reader's back. */
TLOG_API void tlog_test_stream_block_limit(size_t bytes);
size_t tlog_test_block_limit_(void);

static _Atomic size_t block_limit;

size_t tlog_test_block_limit_(void)
{
    return atomic_load_explicit(&block_limit, memory_order_relaxed);
}

void tlog_test_stream_block_limit(size_t bytes)
{
    atomic_store(&block_limit, bytes);
}

/* Ends that took the slow path (record.c: end_slow), on the calling thread:
 * a test checks which ends the short ways take. */
TLOG_API uint64_t tlog_test_slow_ends(void);

static _Thread_local uint64_t slow_ends;

void tlog_test_slow_end_(void)
{
    slow_ends++;
}

uint64_t tlog_test_slow_ends(void)
{
    return slow_ends;
}

/* Site entries looked up (site.c: tlog_site_entry_, which takes the site
 * table's lock), on the calling thread. */
TLOG_API uint64_t tlog_test_site_lookups(void);

static _Thread_local uint64_t site_lookups;

void tlog_test_site_lookup_(void)
{
    site_lookups++;
}

uint64_t tlog_test_site_lookups(void)
{
    return site_lookups;
}

/* Whether scopes take the way of a process with subscribers (subscribe.h:
 * tlog_any_subscriber_): a forked child does not for its parent's. */
TLOG_API bool tlog_test_any_subscriber(void);

bool tlog_test_any_subscriber(void)
{
    return tlog_any_subscriber_();
}
