/* The allocation-failure hook of a -Dalloc_fail=true build: the N-th
 * allocation after tlog_test_fail_alloc(N) fails, once. Exported for the
 * test suite only; a normal build has neither the hook nor its cost.
 * TIMERLOG_ALLOC_FAIL_TRACE=1 in the environment prints where each fails. */
#include <execinfo.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "alloc.h"
#include "timerlog/timerlog.h"

TLOG_API void tlog_test_fail_alloc(uint64_t n);
TLOG_API uint64_t tlog_test_alloc_count(void);
TLOG_API bool tlog_test_alloc_failed(void);

static _Atomic uint64_t made;       /* allocations asked for since the last arming */
static _Atomic uint64_t fail_at;    /* 0: none fails */
static atomic_bool failed;

bool tlog_alloc_fails_(void)
{
    uint64_t n = atomic_fetch_add_explicit(&made, 1, memory_order_relaxed) + 1;
    if (n != atomic_load_explicit(&fail_at, memory_order_relaxed))
        return false;
    atomic_store(&failed, true);
    if (getenv("TIMERLOG_ALLOC_FAIL_TRACE")) {   /* where it failed, for the one debugging */
        void *frames[32];
        fprintf(stderr, "timerlog: allocation %llu fails here:\n", (unsigned long long)n);
        backtrace_symbols_fd(frames, backtrace(frames, 32), STDERR_FILENO);
    }
    return true;
}

void tlog_test_fail_alloc(uint64_t n)
{
    atomic_store(&fail_at, 0);
    atomic_store(&made, 0);
    atomic_store(&failed, false);
    atomic_store(&fail_at, n);
}

uint64_t tlog_test_alloc_count(void)
{
    return atomic_load(&made);
}

bool tlog_test_alloc_failed(void)
{
    return atomic_load(&failed);
}
